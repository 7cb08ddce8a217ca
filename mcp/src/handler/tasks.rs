//! Calls run as MCP tasks: the tasks extension (`io.modelcontextprotocol/tasks`,
//! SEP-2663) of protocol `2026-07-28`; W10 in `docs/contract.md`.
//!
//! A tool opts in ([`TaskSupport`], `#[tool(task = "optional")]`). A
//! `tools/call` of it from a `2026-07-28` request that declares the
//! extension is answered at once with a `CreateTaskResult`; the registry
//! call runs on in a tokio task of its own, with its own cancellation
//! token, exactly as an inline call would (same pipeline, same session log
//! entry, once). What the call sends its client goes to the task instead of
//! the request, which has been answered:
//!
//! - a progress report becomes the task's `statusMessage`;
//! - a request (sampling, elicitation, an approval) becomes an entry of the
//!   task's `inputRequests` (status `input_required`), answered with
//!   `tasks/update`;
//! - log messages go nowhere (the extension carries none).
//!
//! When the call ends, its `CallToolResult` (built exactly as the inline
//! call's) is the task's `result`. The store is bounded ([`MAX_TASKS`]) and
//! every entry expires ([`DEFAULT_TASK_TTL`], [`McpServer::with_task_ttl`]).

use std::collections::HashMap;
use std::sync::atomic::AtomicU8;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ClientCapabilities, CreateMessageRequest,
    CreateTaskResult, DetailedTask, ElicitRequest, GetTaskResult, InputRequest, InputRequests,
    InputResponses, JsonObject, Task, TaskPayload, TaskStatus,
};
use rmcp::service::RequestContext;
use rmcp::task_manager::current_timestamp;
use rmcp::{ErrorData, RoleServer};
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use super::{McpServer, progress_sink};
use crate::client::{AskRequest, CallClient, Event, Level, Reach};
use crate::input::CallTask;
use toolprism_core::client::ClientError;
use toolprism_core::{CallOptions, ErrorCode, Progress, TaskSupport, ToolCall, ToolOutcome};

/// The most tasks one server holds at once, running and ended together.
/// When it is full, the task that ended longest ago is dropped to make
/// room; when every one is still running, a call of an `optional` tool is
/// answered inline and one of a `required` tool gets an error.
pub const MAX_TASKS: usize = 1024;

/// How long a task may run, and how long its result is kept once it ended,
/// unless set with [`McpServer::with_task_ttl`]: 30 minutes.
pub const DEFAULT_TASK_TTL: Duration = Duration::from_secs(30 * 60);

/// The `pollIntervalMs` suggested to clients.
const POLL_INTERVAL_MS: u64 = 500;

impl McpServer {
    /// How long a task may run, and how long it is kept once it ended
    /// (W10 in `docs/contract.md`). A task still running that long after
    /// it was created is cancelled like a `tasks/cancel` (its call ends as
    /// `ABORTED` in the session log) and ends `failed`; an ended task is
    /// forgotten that long after it ended, and `tasks/get` for it is then
    /// an unknown task (`-32602`). The task's `ttlMs` says when: from its
    /// creation, the running bound at first, then the time it ended plus
    /// this. Default [`DEFAULT_TASK_TTL`]; at most [`MAX_TASKS`] are held
    /// at once whatever their age.
    ///
    /// ```
    /// # let registry = toolprism::Registry::builder().build().unwrap();
    /// use std::time::Duration;
    /// let server = toolprism::mcp::McpServer::new(registry).with_task_ttl(Duration::from_secs(600));
    /// assert_eq!(server.task_ttl(), Duration::from_secs(600));
    /// ```
    pub fn with_task_ttl(mut self, ttl: Duration) -> Self {
        self.task_ttl = ttl.max(Duration::from_millis(1));
        self
    }

    /// How long a task may run, and is kept once it ended.
    pub fn task_ttl(&self) -> Duration {
        self.task_ttl
    }

    /// Whether a call of a tool with `support` runs as a task, inline, or
    /// not at all (an error).
    pub(super) fn task_decision(
        &self,
        support: TaskSupport,
        context: &RequestContext<RoleServer>,
        modern: bool,
    ) -> Result<Decision, ErrorData> {
        // The extension belongs to 2026-07-28: a legacy session cannot
        // parse a `CreateTaskResult` (rmcp writes it no `resultType`).
        let declared = modern
            && context
                .client_capabilities()
                .is_some_and(|capabilities| capabilities.supports_tasks());
        let room = declared && self.shared.tasks.has_room();
        match support {
            TaskSupport::Forbidden => Ok(Decision::Inline),
            _ if room => Ok(Decision::Task),
            TaskSupport::Optional => Ok(Decision::Inline),
            TaskSupport::Required if !declared => Err(missing_tasks()),
            TaskSupport::Required => Err(full()),
        }
    }

    /// Starts `call` as a task and answers its `CreateTaskResult`.
    pub(super) async fn start_task(
        &self,
        call: ToolCall,
        options: CallOptions,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let (events, received) = mpsc::unbounded_channel();
        let mut options = options;
        // What the request's client can answer, asked through the task;
        // no log level: a task carries no log messages.
        let reach = Reach {
            level: 0,
            ..Reach::of(&context, true, &self.log_level)
        };
        if reach.can_ask() {
            let client = CallClient::new(
                events.clone(),
                Level::Request(AtomicU8::new(0)),
                reach,
                self.client_timeout,
            );
            options = options.with_client(Arc::new(client));
        }
        let cancel = CancellationToken::new();
        let options = options
            .with_cancel(cancel.clone())
            .with_progress(progress_sink(events));
        let Some(task) = self
            .shared
            .tasks
            .create(owner(&context), self.task_ttl, cancel.clone())
        else {
            return Err(full());
        };
        let finish = Finish {
            server: self.clone(),
            name: request.name.clone().into_owned(),
            version: context.protocol_version(),
            cards: self.cards.wanted(&context),
            app: crate::app::declared(&context),
        };
        let registry = self.registry();
        let running =
            tokio::spawn(async move { registry.call_with(call, &options).await }.in_current_span());
        let driver = Driver {
            tasks: Arc::clone(&self.shared.tasks),
            id: task.task_id.clone(),
            cancel,
            ttl: self.task_ttl,
            asked: 0,
        };
        tokio::spawn(
            driver
                .run(CallTask(running), received, finish)
                .in_current_span(),
        );
        Ok(CallToolResponse::Task(CreateTaskResult::new(task)))
    }
}

/// How a call of a tool that opted in is answered.
pub(super) enum Decision {
    /// As a task.
    Task,
    /// Inline, as every call of a tool that did not opt in.
    Inline,
}

/// The subject of the caller the HTTP transport verified, if any: a task
/// is visible only to the caller that started it.
pub(super) fn owner(context: &RequestContext<RoleServer>) -> Option<String> {
    context
        .extensions
        .get::<http::request::Parts>()
        .and_then(|parts| parts.extensions.get::<toolprism_core::Caller>())
        .map(|caller| caller.subject().to_owned())
}

/// `-32021`, naming the extension: a `required` tool called by a client
/// that cannot take a task.
fn missing_tasks() -> ErrorData {
    let mut error = ErrorData::missing_required_client_capability(
        ClientCapabilities::builder().enable_tasks().build(),
    );
    error.message = "this tool runs only as a task: declare the tasks extension \
        (io.modelcontextprotocol/tasks) in the request's capabilities, at protocol 2026-07-28"
        .into();
    error
}

fn full() -> ErrorData {
    ErrorData::internal_error(
        format!("this server already runs {MAX_TASKS} tasks; try again later"),
        None,
    )
}

/// What turns the call's outcome into the `CallToolResult` the inline call
/// would have answered.
struct Finish {
    server: McpServer,
    name: String,
    version: Option<rmcp::model::ProtocolVersion>,
    cards: bool,
    app: bool,
}

/// Serves one task's call: its events to the store, its end to the task.
struct Driver {
    tasks: Arc<Tasks>,
    id: String,
    cancel: CancellationToken,
    ttl: Duration,
    /// Numbers the keys of `inputRequests`.
    asked: u32,
}

impl Driver {
    async fn run(
        mut self,
        mut call: CallTask,
        mut events: mpsc::UnboundedReceiver<Event>,
        finish: Finish,
    ) {
        let deadline = tokio::time::sleep(self.ttl);
        tokio::pin!(deadline);
        let mut expired = false;
        let outcome = loop {
            tokio::select! {
                biased;
                Some(event) = events.recv() => self.serve(event),
                outcome = &mut call => break outcome,
                () = &mut deadline, if !expired => {
                    expired = true;
                    self.cancel.cancel();
                }
            }
        };
        // What the call sent just before it ended.
        events.close();
        while let Ok(event) = events.try_recv() {
            match event {
                Event::Ask(ask) => {
                    let _ = ask
                        .reply
                        .send(Err(ClientError::Failed("the call is over".to_owned())));
                }
                event => self.serve(event),
            }
        }
        let payload = match outcome {
            None => failed(&ErrorData::internal_error("the call's task failed", None)),
            Some(_) if expired => failed(&ErrorData::internal_error(
                format!(
                    "the task ran longer than its ttl ({} s) and was cancelled",
                    self.ttl.as_secs()
                ),
                None,
            )),
            Some(outcome) if self.cancel.is_cancelled() && was_cancelled(&outcome) => {
                TaskPayload::Cancelled
            }
            Some(outcome) => match finish.server.result_of(
                outcome,
                &finish.name,
                finish.version.as_ref(),
                finish.cards,
                finish.app,
            ) {
                Ok(result) => TaskPayload::Completed {
                    result: to_object(&result),
                },
                Err(error) => failed(&error),
            },
        };
        self.tasks.finish(&self.id, payload, self.ttl);
    }

    fn serve(&mut self, event: Event) {
        match event {
            // A task carries no log messages (its level is none).
            Event::Log(_) => {}
            Event::Progress(report) => self.tasks.progress(&self.id, &report),
            Event::Ask(ask) => {
                self.asked += 1;
                let key = format!("{}-{}", ask.request.kind(), self.asked);
                let request = match ask.request {
                    AskRequest::Sample(params) => {
                        InputRequest::CreateMessage(CreateMessageRequest::new(params))
                    }
                    AskRequest::Elicit(params) => {
                        InputRequest::Elicitation(ElicitRequest::new(params))
                    }
                };
                self.tasks.ask(&self.id, key, request, ask.reply);
            }
        }
    }
}

/// Whether `outcome` is a call that a cancellation ended.
fn was_cancelled(outcome: &ToolOutcome) -> bool {
    matches!(
        outcome.code(),
        Some(ErrorCode::Aborted | ErrorCode::AbortedBeforeDispatch)
    )
}

fn failed(error: &ErrorData) -> TaskPayload {
    TaskPayload::Failed {
        error: to_object(error),
    }
}

fn to_object(value: &impl serde::Serialize) -> JsonObject {
    match serde_json::to_value(value) {
        Ok(Value::Object(map)) => map,
        _ => JsonObject::new(),
    }
}

/// The message of `statusMessage` for a progress report: `done/total:
/// message`, each part when there.
fn status_message(report: &Progress) -> String {
    let count = match report.total {
        Some(total) => format!("{}/{total}", report.done),
        None => report.done.to_string(),
    };
    match &report.message {
        Some(message) if message.len() > MAX_STATUS_MESSAGE_BYTES => {
            let cut = message.floor_char_boundary(MAX_STATUS_MESSAGE_BYTES);
            format!("{count}: {}…", &message[..cut])
        }
        Some(message) => format!("{count}: {message}"),
        None => count,
    }
}

/// The most of a progress message a task's `statusMessage` holds: every
/// `tasks/get` answers it, and a tool's message is meant to be a few words.
const MAX_STATUS_MESSAGE_BYTES: usize = 1024;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_status_message_is_bounded_on_a_char_boundary() {
        let report = |message: &str| {
            Progress::new(3)
                .with_total(10)
                .with_message(message.to_owned())
        };
        assert_eq!(status_message(&report("indexing")), "3/10: indexing");
        let huge = "é".repeat(5 * 1024 * 1024);
        let shown = status_message(&report(&huge));
        assert!(
            shown.len() <= MAX_STATUS_MESSAGE_BYTES + 16,
            "{}",
            shown.len()
        );
        assert!(shown.starts_with("3/10: é") && shown.ends_with('…'));
    }
}

/// The answer a request of the call waits for.
type Reply = oneshot::Sender<Result<Value, ClientError>>;

/// One task.
struct Entry {
    /// What the wire shows of it, but its status.
    task: Task,
    /// The caller that started it (HTTP with authentication), else none.
    owner: Option<String>,
    state: State,
}

enum State {
    Running {
        created: Instant,
        cancel: CancellationToken,
        /// Requests of the call waiting for `tasks/update`, by key.
        pending: Vec<(String, InputRequest, Reply)>,
    },
    Ended {
        /// When it is forgotten: the task ttl after it ended.
        until: Instant,
        payload: TaskPayload,
    },
}

/// The tasks of one server (every session's).
#[derive(Default)]
pub(crate) struct Tasks {
    entries: Mutex<HashMap<String, Entry>>,
}

impl Tasks {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Entry>> {
        self.entries.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Forgets the ended tasks past their time; with `room`, also the one
    /// that ended first while the store is full. Whether there is room.
    fn sweep(entries: &mut HashMap<String, Entry>, room: bool) -> bool {
        let now = Instant::now();
        entries.retain(|_, entry| match &entry.state {
            State::Running { .. } => true,
            State::Ended { until, .. } => now < *until,
        });
        if room && entries.len() >= MAX_TASKS {
            let oldest = entries
                .iter()
                .filter_map(|(id, entry)| match &entry.state {
                    State::Ended { until, .. } => Some((*until, id.clone())),
                    State::Running { .. } => None,
                })
                .min();
            if let Some((_, id)) = oldest {
                entries.remove(&id);
            }
        }
        entries.len() < MAX_TASKS
    }

    /// Whether a task can be created now.
    fn has_room(&self) -> bool {
        Self::sweep(&mut self.lock(), true)
    }

    /// A new task, running, for `owner`: its seed state, or `None` when
    /// every place is taken by a running task.
    fn create(
        &self,
        owner: Option<String>,
        ttl: Duration,
        cancel: CancellationToken,
    ) -> Option<Task> {
        let now = current_timestamp();
        let task = Task::new(
            uuid::Uuid::new_v4().to_string(),
            TaskStatus::Working,
            now.clone(),
            now,
        )
        .with_ttl_ms(millis(ttl))
        .with_poll_interval_ms(POLL_INTERVAL_MS);
        let mut entries = self.lock();
        if !Self::sweep(&mut entries, true) {
            return None;
        }
        entries.insert(
            task.task_id.clone(),
            Entry {
                task: task.clone(),
                owner,
                state: State::Running {
                    created: Instant::now(),
                    cancel,
                    pending: Vec::new(),
                },
            },
        );
        Some(task)
    }

    fn with_running(
        &self,
        id: &str,
        f: impl FnOnce(&mut Task, &mut Vec<(String, InputRequest, Reply)>),
    ) {
        if let Some(entry) = self.lock().get_mut(id)
            && let State::Running { pending, .. } = &mut entry.state
        {
            f(&mut entry.task, pending);
            entry.task.last_updated_at = current_timestamp();
        }
    }

    fn progress(&self, id: &str, report: &Progress) {
        self.with_running(id, |task, _| {
            task.status_message = Some(status_message(report));
        });
    }

    fn ask(&self, id: &str, key: String, request: InputRequest, reply: Reply) {
        self.with_running(id, |_, pending| pending.push((key, request, reply)));
    }

    /// The task ends with `payload`; it is kept `ttl` from now.
    fn finish(&self, id: &str, payload: TaskPayload, ttl: Duration) {
        let mut entries = self.lock();
        let Some(entry) = entries.get_mut(id) else {
            return;
        };
        let State::Running { created, .. } = &entry.state else {
            return;
        };
        let now = Instant::now();
        entry.task.ttl_ms = Some(millis(now.duration_since(*created) + ttl));
        entry.task.last_updated_at = current_timestamp();
        entry.state = State::Ended {
            until: now + ttl,
            payload,
        };
    }

    /// The entry `id` of `owner`, or the protocol error for a task this
    /// server does not hold for it.
    fn entry<'a>(
        entries: &'a mut HashMap<String, Entry>,
        id: &str,
        owner: Option<&str>,
    ) -> Result<&'a mut Entry, ErrorData> {
        match entries.get_mut(id) {
            Some(entry) if entry.owner.as_deref() == owner => Ok(entry),
            _ => Err(ErrorData::invalid_params(
                format!(
                    "unknown task \"{}\": this server holds no such task (an ended task is kept for the server's task ttl, and at most {MAX_TASKS} tasks are kept)",
                    super::truncated(id).escape_debug()
                ),
                None,
            )),
        }
    }

    /// `tasks/get`.
    pub(super) fn get(&self, id: &str, owner: Option<&str>) -> Result<GetTaskResult, ErrorData> {
        let mut entries = self.lock();
        Self::sweep(&mut entries, false);
        let entry = Self::entry(&mut entries, id, owner)?;
        let payload = match &mut entry.state {
            State::Ended { payload, .. } => payload.clone(),
            State::Running { pending, .. } => {
                // A request the tool stopped waiting for (its client
                // timeout) is no longer asked.
                pending.retain(|(_, _, reply)| !reply.is_closed());
                if pending.is_empty() {
                    TaskPayload::Working
                } else {
                    TaskPayload::InputRequired {
                        input_requests: pending
                            .iter()
                            .map(|(key, request, _)| (key.clone(), request.clone()))
                            .collect::<InputRequests>(),
                    }
                }
            }
        };
        Ok(GetTaskResult::new(DetailedTask::new(
            entry.task.clone(),
            payload,
        )))
    }

    /// `tasks/update`: the answers to the call's requests; those for keys
    /// not asked (or answered already) are ignored, as the extension says.
    pub(super) fn update(
        &self,
        id: &str,
        owner: Option<&str>,
        responses: InputResponses,
    ) -> Result<(), ErrorData> {
        let mut entries = self.lock();
        let entry = Self::entry(&mut entries, id, owner)?;
        if let State::Running { pending, .. } = &mut entry.state {
            for (key, response) in responses {
                if let Some(i) = pending.iter().position(|(k, _, _)| *k == key) {
                    let (_, _, reply) = pending.remove(i);
                    let _ = reply.send(Ok(response));
                }
            }
            entry.task.last_updated_at = current_timestamp();
        }
        Ok(())
    }

    /// `tasks/cancel`: the call's cancellation token is cancelled, as
    /// `notifications/cancelled` cancels an inline call's; the task ends
    /// `cancelled` once the call has ended (as `ABORTED`). An ended task
    /// stays as it is.
    pub(super) fn cancel(&self, id: &str, owner: Option<&str>) -> Result<(), ErrorData> {
        let mut entries = self.lock();
        let entry = Self::entry(&mut entries, id, owner)?;
        if let State::Running {
            cancel, pending, ..
        } = &mut entry.state
        {
            cancel.cancel();
            // Requests it waits for are answered by the cancellation.
            pending.clear();
            entry.task.last_updated_at = current_timestamp();
        }
        Ok(())
    }
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}
