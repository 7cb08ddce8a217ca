//! Calls run as MCP tasks: the tasks extension (`io.modelcontextprotocol/tasks`,
//! SEP-2663) of protocol `2026-07-28`; W10 in `docs/contract.md`, and W16
//! for tasks served by several replicas.
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
//! call's) is the task's `result`. The task lives in the server's
//! [`Store`](crate::Store), bounded ([`MAX_TASKS`]) and expiring
//! ([`DEFAULT_TASK_TTL`], [`McpServer::with_task_ttl`]): `tasks/get`,
//! `tasks/update` and `tasks/cancel` read and write it there, on whichever
//! replica they reach; answers and cancellations reach the call through
//! its replica's inbox.

use std::sync::Arc;
use std::sync::atomic::AtomicU8;
use std::time::Duration;

use rmcp::model::{
    CallToolResponse, ClientCapabilities, CreateMessageRequest, CreateTaskResult, DetailedTask,
    ElicitRequest, GetTaskResult, InputRequest, InputRequests, InputResponses, JsonObject,
    ProtocolVersion, Task, TaskPayload, TaskStatus,
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
use crate::store::{Created, Mailbox, Message, StoreError, TaskRecord, TaskSeed, millis};
use toolprism_core::client::ClientError;
use toolprism_core::{CallOptions, ErrorCode, Progress, TaskSupport, ToolCall, ToolOutcome};

/// The most tasks a store holds at once, running and ended together (one
/// server's, or every replica's when the store is shared). When it is
/// full, the task that ended longest ago is dropped to make room; when
/// every one is still running, a call of an `optional` tool is answered
/// inline and one of a `required` tool gets an error.
pub const MAX_TASKS: usize = 1024;

/// How long a task may run, and how long its result is kept once it ended,
/// unless set with [`McpServer::with_task_ttl`]: 30 minutes.
pub const DEFAULT_TASK_TTL: Duration = Duration::from_secs(30 * 60);

/// The `pollIntervalMs` suggested to clients.
const POLL_INTERVAL_MS: u64 = 500;

/// The message of a task whose replica stopped.
pub(crate) const STOPPED: &str = "the server running this task stopped before it ended (its lease in the task store lapsed); call the tool again";

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
        match support {
            TaskSupport::Forbidden => Ok(Decision::Inline),
            _ if declared => Ok(Decision::Task),
            TaskSupport::Optional => Ok(Decision::Inline),
            TaskSupport::Required => Err(missing_tasks()),
        }
    }

    /// Starts `call` as a task and answers its `CreateTaskResult`; or, for
    /// an `optional` tool when the store has no room or cannot be reached,
    /// hands the call back to be answered inline.
    pub(super) async fn start_task(
        &self,
        call: ToolCall,
        options: CallOptions,
        support: TaskSupport,
        name: &str,
        context: &RequestContext<RoleServer>,
    ) -> Result<TaskStart, ErrorData> {
        let now = current_timestamp();
        let task = Task::new(
            uuid::Uuid::new_v4().to_string(),
            TaskStatus::Working,
            now.clone(),
            now,
        )
        .with_ttl_ms(millis(self.task_ttl))
        .with_poll_interval_ms(POLL_INTERVAL_MS);
        let seed = TaskSeed {
            owner: owner(context),
            runner: self.replica.id.clone(),
            task: task.clone(),
            lease: self.replica.lease,
            ttl: self.task_ttl,
        };
        self.start_replica();
        // Open before the task exists anywhere: an answer or a
        // cancellation sent the moment after finds it.
        let mailbox = self
            .replica
            .mailboxes
            .open(format!("task:{}", task.task_id));
        match self.replica.backend().create_task(&seed, MAX_TASKS).await {
            Ok(Created::Yes) => {}
            Ok(Created::Full) if support == TaskSupport::Optional => {
                return Ok(TaskStart::Inline(Box::new((call, options))));
            }
            Ok(Created::Full) => return Err(full()),
            Err(e) if support == TaskSupport::Optional => {
                self.warn_store(&e);
                return Ok(TaskStart::Inline(Box::new((call, options))));
            }
            Err(e) => return Err(store_error(&e)),
        }
        let (events, received) = mpsc::unbounded_channel();
        let mut options = options;
        // What the request's client can answer, asked through the task;
        // no log level: a task carries no log messages.
        let reach = Reach {
            level: 0,
            ..Reach::of(context, true, &self.log_level)
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
        let finish = Finish {
            server: self.clone(),
            name: name.to_owned(),
            version: context.protocol_version(),
            cards: self.cards.wanted(context),
            app: crate::app::declared(context),
        };
        let registry = self.registry();
        let running =
            tokio::spawn(async move { registry.call_with(call, &options).await }.in_current_span());
        let driver = Driver {
            server: self.clone(),
            seed,
            cancel,
            asked: 0,
            pending: Vec::new(),
            deferred: Vec::new(),
            ended_elsewhere: false,
            started: std::time::Instant::now(),
        };
        tokio::spawn(
            driver
                .run(CallTask(running), received, mailbox, finish)
                .in_current_span(),
        );
        Ok(TaskStart::Started(CallToolResponse::Task(
            CreateTaskResult::new(task),
        )))
    }

    /// `tasks/get`, from the store.
    pub(super) async fn get_task_from_store(
        &self,
        id: &str,
        owner: Option<&str>,
    ) -> Result<GetTaskResult, ErrorData> {
        let stopped = to_object(&ErrorData::internal_error(STOPPED, None));
        match self.replica.backend().task(id, owner, &stopped).await {
            Ok(Some(record)) => Ok(GetTaskResult::new(detailed(record))),
            Ok(None) => Err(unknown_task(id)),
            Err(e) => Err(store_error(&e)),
        }
    }

    /// `tasks/update`: the answers to the call's requests; those for keys
    /// not asked (or answered already) are ignored, as the extension says.
    pub(super) async fn update_task_in_store(
        &self,
        id: &str,
        owner: Option<&str>,
        responses: InputResponses,
    ) -> Result<(), ErrorData> {
        let answers: Vec<(String, Value)> = responses.into_iter().collect();
        match self
            .replica
            .backend()
            .update_task(id, owner, &answers)
            .await
        {
            Ok(true) => Ok(()),
            Ok(false) => Err(unknown_task(id)),
            Err(e) => Err(store_error(&e)),
        }
    }

    /// `tasks/cancel`: the call's cancellation token is cancelled, as
    /// `notifications/cancelled` cancels an inline call's (on the replica
    /// running it); the task ends `cancelled` once the call has ended (as
    /// `ABORTED`). An ended task stays as it is.
    pub(super) async fn cancel_task_in_store(
        &self,
        id: &str,
        owner: Option<&str>,
    ) -> Result<(), ErrorData> {
        match self.replica.backend().cancel_task(id, owner).await {
            Ok(true) => Ok(()),
            Ok(false) => Err(unknown_task(id)),
            Err(e) => Err(store_error(&e)),
        }
    }

    /// Says on stderr, once per server, that the store failed and what
    /// was done instead.
    pub(super) fn warn_store(&self, error: &StoreError) {
        if !self
            .shared
            .store_warned
            .swap(true, std::sync::atomic::Ordering::Relaxed)
        {
            eprintln!(
                "toolprism mcp: {error} (a call of a tool that may run as a task was answered inline; later problems are not reported)"
            );
        }
    }
}

/// How a call of a tool that opted in is answered.
pub(super) enum Decision {
    /// As a task.
    Task,
    /// Inline, as every call of a tool that did not opt in.
    Inline,
}

/// What [`McpServer::start_task`] did.
pub(super) enum TaskStart {
    /// The task's handle, to answer.
    Started(CallToolResponse),
    /// No task: the call, to answer inline.
    Inline(Box<(ToolCall, CallOptions)>),
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
        format!("the task store already holds {MAX_TASKS} running tasks; try again later"),
        None,
    )
}

/// `-32603` for what the store could not do.
pub(crate) fn store_error(error: &StoreError) -> ErrorData {
    ErrorData::internal_error(error.to_string(), None)
}

/// `-32602` for a task the store does not hold for this caller.
fn unknown_task(id: &str) -> ErrorData {
    ErrorData::invalid_params(
        format!(
            "unknown task \"{}\": this server holds no such task (an ended task is kept for the server's task ttl, and at most {MAX_TASKS} tasks are kept)",
            super::truncated(id).escape_debug()
        ),
        None,
    )
}

/// What `tasks/get` answers for `record`.
fn detailed(record: TaskRecord) -> DetailedTask {
    let payload = match record.ended {
        Some(payload) => payload,
        None if record.requests.is_empty() => TaskPayload::Working,
        None => TaskPayload::InputRequired {
            input_requests: record
                .requests
                .into_iter()
                .filter_map(|(key, request)| {
                    serde_json::from_value::<InputRequest>(request)
                        .ok()
                        .map(|request| (key, request))
                })
                .collect::<InputRequests>(),
        },
    };
    let mut task = record.task;
    task.status = payload.status();
    DetailedTask::new(task, payload)
}

/// What turns the call's outcome into the `CallToolResult` the inline call
/// would have answered.
struct Finish {
    server: McpServer,
    name: String,
    version: Option<ProtocolVersion>,
    cards: bool,
    app: bool,
}

/// The answer a request of the call waits for.
type Reply = oneshot::Sender<Result<Value, ClientError>>;

/// Serves one task's call: its events to the store, the store's messages
/// to it, its end to the task.
struct Driver {
    server: McpServer,
    seed: TaskSeed,
    cancel: CancellationToken,
    /// Numbers the keys of `inputRequests`.
    asked: u32,
    /// The requests waiting for `tasks/update`, by key.
    pending: Vec<(String, Reply)>,
    /// Events read ahead while merging progress reports.
    deferred: Vec<Event>,
    /// The store ended the task already (its lease lapsed meanwhile).
    ended_elsewhere: bool,
    /// When the task was made.
    started: std::time::Instant,
}

/// How often the driver looks for requests the tool stopped waiting for.
const TICK: Duration = Duration::from_millis(100);

impl Driver {
    async fn run(
        mut self,
        mut call: CallTask,
        mut events: mpsc::UnboundedReceiver<Event>,
        mut mailbox: Mailbox,
        finish: Finish,
    ) {
        let ttl = self.seed.ttl;
        let deadline = tokio::time::sleep(ttl);
        tokio::pin!(deadline);
        let mut tick = tokio::time::interval(TICK);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut expired = false;
        let outcome = loop {
            if let Some(event) = self.deferred.pop() {
                self.serve(event, &mut events).await;
                continue;
            }
            tokio::select! {
                biased;
                Some(event) = events.recv() => self.serve(event, &mut events).await,
                Some(message) = mailbox.recv() => self.on_message(message),
                outcome = &mut call => break outcome,
                () = &mut deadline, if !expired => {
                    expired = true;
                    self.cancel.cancel();
                }
                _ = tick.tick(), if !self.pending.is_empty() => self.forget_closed().await,
            }
        };
        drop(mailbox);
        // What the call sent just before it ended.
        events.close();
        let mut last_status = None;
        while let Ok(event) = events.try_recv() {
            match event {
                Event::Ask(ask) => {
                    let _ = ask
                        .reply
                        .send(Err(ClientError::Failed("the call is over".to_owned())));
                }
                Event::Progress(report) => last_status = Some(report),
                Event::Log(_) => {}
            }
        }
        if let Some(report) = last_status {
            self.write_status(&report).await;
        }
        let payload = match outcome {
            None => failed(&ErrorData::internal_error("the call's task failed", None)),
            Some(_) if expired => failed(&ErrorData::internal_error(
                format!(
                    "the task ran longer than its ttl ({} s) and was cancelled",
                    ttl.as_secs()
                ),
                None,
            )),
            Some(outcome) if self.cancel.is_cancelled() && was_cancelled(&outcome) => {
                TaskPayload::Cancelled
            }
            Some(outcome) => match finish.server.shared.result_of(
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
        self.end(payload).await;
    }

    /// Writes the task's end, again and again while the store cannot be
    /// reached (nothing is silently lost), for at most the task's ttl.
    async fn end(&self, payload: TaskPayload) {
        let ttl_ms = millis(self.started.elapsed()).saturating_add(millis(self.seed.ttl));
        let give_up = tokio::time::Instant::now() + self.seed.ttl;
        let mut pause = Duration::from_millis(50);
        loop {
            match self
                .server
                .replica
                .backend()
                .finish_task(&self.seed, &payload, ttl_ms)
                .await
            {
                Ok(_) => return,
                Err(e) => {
                    if tokio::time::Instant::now() + pause >= give_up {
                        tracing::warn!(task = %self.seed.id(), "the end of the task could not be written: {e}");
                        return;
                    }
                    tokio::time::sleep(pause).await;
                    pause = (pause * 2).min(Duration::from_secs(1));
                }
            }
        }
    }

    async fn serve(&mut self, event: Event, events: &mut mpsc::UnboundedReceiver<Event>) {
        match event {
            // A task carries no log messages (its level is none).
            Event::Log(_) => {}
            Event::Progress(report) => {
                // Only the latest of the reports waiting is written.
                let mut latest = report;
                while let Ok(next) = events.try_recv() {
                    match next {
                        Event::Progress(report) => latest = report,
                        Event::Log(_) => {}
                        other => {
                            self.deferred.push(other);
                            break;
                        }
                    }
                }
                self.write_status(&latest).await;
            }
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
                let request = serde_json::to_value(&request).unwrap_or(Value::Null);
                match self
                    .server
                    .replica
                    .backend()
                    .task_ask(&self.seed, &key, &request)
                    .await
                {
                    Ok(true) => self.pending.push((key, ask.reply)),
                    Ok(false) => self.stop_ended(),
                    Err(e) => {
                        let _ = ask.reply.send(Err(ClientError::Failed(format!(
                            "the request could not be put to the client: {e}"
                        ))));
                    }
                }
            }
        }
    }

    async fn write_status(&mut self, report: &Progress) {
        let message = status_message(report);
        // A status the store missed is replaced by the next one.
        if let Ok(false) = self
            .server
            .replica
            .backend()
            .task_status(&self.seed, &message)
            .await
        {
            self.stop_ended();
        }
    }

    /// The store ended the task (its lease lapsed while the store was
    /// away): nobody waits for the call any more.
    fn stop_ended(&mut self) {
        if !self.ended_elsewhere {
            self.ended_elsewhere = true;
            self.cancel.cancel();
            self.pending.clear();
        }
    }

    fn on_message(&mut self, message: Message) {
        match message {
            Message::Answer { key, value, .. } => {
                if let Some(i) = self.pending.iter().position(|(k, _)| *k == key) {
                    let (_, reply) = self.pending.remove(i);
                    let _ = reply.send(Ok(value));
                }
            }
            Message::Cancel { .. } => {
                self.cancel.cancel();
                // Requests it waits for are answered by the cancellation.
                self.pending.clear();
            }
            _ => {}
        }
    }

    /// A request the tool stopped waiting for (its client timeout) is no
    /// longer asked.
    async fn forget_closed(&mut self) {
        let closed: Vec<String> = self
            .pending
            .iter()
            .filter(|(_, reply)| reply.is_closed())
            .map(|(key, _)| key.clone())
            .collect();
        if closed.is_empty() {
            return;
        }
        self.pending.retain(|(_, reply)| !reply.is_closed());
        let _ = self
            .server
            .replica
            .backend()
            .task_unask(&self.seed, &closed)
            .await;
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

pub(crate) fn to_object(value: &impl serde::Serialize) -> JsonObject {
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
