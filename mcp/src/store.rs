//! Where what outlives a request is kept: the [`Store`] of a server's MCP
//! tasks, of the calls waiting for their client's input, and of legacy
//! sessions, so that several server processes behind one URL (replicas)
//! serve one another's (W16 in `docs/contract.md`).
//!
//! Two stores, one internal trait ([`Backend`]):
//!
//! - **in memory** ([`Store::memory`], the default): the process is the
//!   store, as a single server needs; nothing to install;
//! - **Redis** (`Store::redis`, cargo feature `redis`): every replica
//!   reads and writes the same Redis (or Valkey, or anything speaking its
//!   protocol and Lua scripts), through the `redis` crate.
//!
//! A call keeps running in the process that started it (a future cannot
//! move); the store holds what the other replicas must see of it (a task's
//! status, result, pending requests and owner; the replica running a call
//! waiting for input), and carries what they send it (answers, a
//! cancellation) to the replica running it, through that replica's inbox.
//! Each replica renews a lease in the store while it lives; a task whose
//! replica's lease has lapsed ends `failed`.

mod memory;
#[cfg(feature = "redis")]
mod redis;

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rmcp::model::{JsonObject, Task, TaskPayload};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::sync::mpsc;

/// Where a server keeps its tasks, the calls waiting for their client's
/// input, and its sessions, for [`McpServer::with_store`](crate::McpServer::with_store).
///
/// [`Store::memory`] (the default) keeps them in the server process: one
/// process serves them. `Store::redis` (cargo feature `redis`) keeps them
/// in Redis, so that several server processes behind one load balancer
/// (replicas: same registry, same authenticator, same store) serve one
/// another's tasks, input requests and sessions, whichever of them a
/// request reaches (see [Many replicas behind one URL](crate#many-replicas-behind-one-url)).
///
/// Cheap to clone (an `Arc` inside); its `Display` names it without any
/// password (`memory`, `redis://10.0.0.5:6379/0`).
///
/// ```
/// use toolprism::mcp::{McpServer, Store};
///
/// let registry = toolprism::Registry::builder().build().unwrap();
/// let server = McpServer::new(registry).with_store(Store::memory());
/// assert!(!server.store().is_shared());
/// assert_eq!(server.store().to_string(), "memory");
/// ```
#[derive(Clone)]
pub struct Store {
    backend: Arc<dyn Backend>,
}

impl Store {
    /// The in-memory store: the server process itself, as without a store.
    pub fn memory() -> Store {
        Store {
            backend: Arc::new(memory::Memory::default()),
        }
    }

    /// A Redis store at `url` (`redis://HOST:PORT`, with `/DB` to choose a
    /// database, `redis://:PASSWORD@HOST:PORT` for a password; plain TCP,
    /// Redis 6.2 or later, or Valkey), connected and checked with a `PING`
    /// before this returns, so a wrong address is an error at start, not at
    /// the first task. Every key it writes starts with `toolprism:` and
    /// expires (TTLs, never a sweep).
    ///
    /// Once running, the connection is re-established by itself after
    /// Redis went away; meanwhile what needs the store gets an error
    /// saying so (a `tasks/get` a JSON-RPC error, a call that could be a
    /// task runs inline), and inline calls are served as usual.
    ///
    /// ```no_run
    /// # async fn run(registry: toolprism::Registry) -> Result<(), Box<dyn std::error::Error>> {
    /// use toolprism::mcp::{McpServer, Store};
    ///
    /// let store = Store::redis("redis://127.0.0.1:6379").await?;
    /// let server = McpServer::new(registry).with_store(store);
    /// # let _ = server; Ok(()) }
    /// ```
    #[cfg(feature = "redis")]
    #[cfg_attr(docsrs, doc(cfg(feature = "redis")))]
    pub async fn redis(url: &str) -> Result<Store, StoreError> {
        let backend = redis::Redis::connect(url).await?;
        Ok(Store {
            backend: Arc::new(backend),
        })
    }

    /// Whether other processes see what this store holds: `false` for
    /// [`Store::memory`], `true` for `Store::redis`.
    pub fn is_shared(&self) -> bool {
        self.backend.shared()
    }

    pub(crate) fn backend(&self) -> &dyn Backend {
        &*self.backend
    }
}

impl Default for Store {
    fn default() -> Self {
        Store::memory()
    }
}

impl fmt::Display for Store {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.backend.describe())
    }
}

impl fmt::Debug for Store {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Store")
            .field(&self.backend.describe())
            .finish()
    }
}

/// The store could not be reached or refused a request: what was asked of
/// it did not happen. Its message names the store and says what to do.
///
/// ```
/// # #[cfg(feature = "redis")] {
/// # let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
/// let error = runtime
///     .block_on(toolprism::mcp::Store::redis("http://not-redis"))
///     .unwrap_err();
/// assert!(error.to_string().contains("give redis://HOST:PORT"), "{error}");
/// # }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreError {
    message: String,
}

impl StoreError {
    #[cfg(feature = "redis")]
    pub(crate) fn new(message: impl Into<String>) -> Self {
        StoreError {
            message: message.into(),
        }
    }
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for StoreError {}

/// A boxed future, for the object-safe [`Backend`].
pub(crate) type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// What a store operation gives.
pub(crate) type StoreResult<T> = Result<T, StoreError>;

/// What the replica running a task knows of it, written with each of its
/// writes: a store that lost the task (Redis restarted without
/// persistence) gets it back whole.
#[derive(Debug, Clone)]
pub(crate) struct TaskSeed {
    /// The caller that made it (the verified subject), if any.
    pub(crate) owner: Option<String>,
    /// The replica running it.
    pub(crate) runner: String,
    /// The task as created (`working`, its ttl the running bound).
    pub(crate) task: Task,
    /// The runner's lease: how long its tasks outlive its last renewal.
    pub(crate) lease: Duration,
    /// How long the task may run, and is kept once it ended.
    pub(crate) ttl: Duration,
}

impl TaskSeed {
    pub(crate) fn id(&self) -> &str {
        &self.task.task_id
    }

    /// How long a running task is kept at most: its running bound, then
    /// one ttl to be read after it was cancelled for running too long,
    /// and a few leases for its runner to say so.
    pub(crate) fn running_keep(&self) -> Duration {
        self.ttl.saturating_mul(2) + self.lease.saturating_mul(4)
    }
}

/// Whether a task was made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Created {
    /// It was.
    Yes,
    /// The store holds [`MAX_TASKS`](crate::MAX_TASKS) running tasks.
    Full,
}

/// A task as read from the store.
#[derive(Debug, Clone)]
pub(crate) struct TaskRecord {
    /// Its base fields, status included.
    pub(crate) task: Task,
    /// The requests its call waits for, by key (`InputRequest` JSON).
    pub(crate) requests: BTreeMap<String, Value>,
    /// Its end, once it ended.
    pub(crate) ended: Option<TaskPayload>,
}

/// A call waiting for its client's input, as the other replicas see it:
/// which replica runs it, for whom, and the call a retry must repeat.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct StateRecord {
    /// The replica running the call.
    pub(crate) runner: String,
    /// The caller that made it (the verified subject), if any.
    pub(crate) owner: Option<String>,
    /// The tool called.
    pub(crate) name: String,
    /// Its arguments, as parsed.
    pub(crate) arguments: Option<JsonObject>,
}

/// A legacy session (one `initialize`), as the other replicas see it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct SessionRecord {
    /// rmcp's state of it (the `initialize` params), once saved.
    pub(crate) state: Option<Value>,
    /// The caller that opened it, if any.
    pub(crate) owner: Option<String>,
}

/// A message to a replica, through the store. Answers and cancellations
/// of tasks are written by the store itself (a Lua script, for Redis), in
/// this shape.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub(crate) enum Message {
    /// The answer to a task's request.
    Answer {
        /// `task:<id>`.
        to: String,
        /// The `inputRequests` key.
        key: String,
        /// The client's result.
        value: Value,
    },
    /// `tasks/cancel` for a task.
    Cancel {
        /// `task:<id>`.
        to: String,
    },
    /// The retry of a call waiting for input reached another replica,
    /// which relays the round: the answers, and where the round goes.
    Resume {
        /// The `requestState`.
        state: String,
        /// The round's id.
        round: String,
        /// The replica relaying it.
        reply: String,
        /// The retry's `inputResponses`.
        answers: BTreeMap<String, Value>,
        /// How the relaying request wants the round (its version, cards,
        /// app, log level, progress).
        wants: Wants,
    },
    /// The relayed round's request is gone: cancel the call.
    Stop {
        /// `round:<id>`.
        to: String,
    },
    /// Something the call sent its client during a relayed round.
    Event {
        /// `round:<id>`.
        to: String,
        /// A `notifications/message` param, or a progress report.
        event: Relayed,
    },
    /// How a relayed round ended.
    End {
        /// `round:<id>`.
        to: String,
        /// The response.
        end: RoundEnd,
    },
}

impl Message {
    /// The mailbox it goes to; `None` for a [`Message::Resume`], which the
    /// replica itself serves.
    pub(crate) fn address(&self) -> Option<&str> {
        match self {
            Message::Answer { to, .. }
            | Message::Cancel { to }
            | Message::Stop { to }
            | Message::Event { to, .. }
            | Message::End { to, .. } => Some(to),
            Message::Resume { .. } => None,
        }
    }
}

/// How the request relaying a round wants it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Wants {
    /// Its protocol version.
    pub(crate) version: Option<String>,
    /// Whether it wants the cards.
    pub(crate) cards: bool,
    /// Whether it declared the card app.
    pub(crate) app: bool,
    /// Its log level ([`Threshold`](crate::client::Threshold) encoding).
    pub(crate) level: u8,
    /// Whether it has a progress token.
    pub(crate) progress: bool,
}

/// An event of a relayed round.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) enum Relayed {
    /// A `notifications/message` param.
    Log(Value),
    /// A progress report.
    Progress {
        /// Done so far.
        done: u64,
        /// Out of.
        total: Option<u64>,
        /// What it is doing.
        message: Option<String>,
    },
}

/// How a relayed round ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) enum RoundEnd {
    /// The call ended: its `CallToolResult`.
    Result(Value),
    /// The call asks again: an `InputRequiredResult`.
    Input(Value),
    /// A JSON-RPC error (`ErrorData`).
    Error(Value),
}

/// The store's side of a server: every operation the server needs, for
/// either store. Owners are verified subjects; `None` is no
/// authentication, which only a task made without one matches.
pub(crate) trait Backend: Send + Sync + 'static {
    /// Its name, without secrets.
    fn describe(&self) -> String;

    /// Whether other processes share it.
    fn shared(&self) -> bool;

    /// From now on, messages for `replica` go to `mailboxes`.
    fn attach(&self, replica: &str, mailboxes: &Arc<Mailboxes>);

    /// `replica` lives, for `lease` from now.
    fn heartbeat<'a>(&'a self, replica: &'a str, lease: Duration)
    -> BoxFuture<'a, StoreResult<()>>;

    /// Whether `replica`'s lease runs.
    fn alive<'a>(&'a self, replica: &'a str) -> BoxFuture<'a, StoreResult<bool>>;

    /// A new running task, unless `max` running tasks are held (ended
    /// ones are forgotten first to make room, the one that ended first
    /// first).
    fn create_task<'a>(
        &'a self,
        seed: &'a TaskSeed,
        max: usize,
    ) -> BoxFuture<'a, StoreResult<Created>>;

    /// Task `id` of `owner`. A running task whose runner's lease has lapsed
    /// for a lease ends `failed` with `stopped` (a JSON-RPC error object).
    fn task<'a>(
        &'a self,
        id: &'a str,
        owner: Option<&'a str>,
        stopped: &'a JsonObject,
    ) -> BoxFuture<'a, StoreResult<Option<TaskRecord>>>;

    /// Answers to task `id`'s requests: those it waits for are taken out
    /// and sent to its runner, the others ignored. `false`: no such task
    /// for `owner`.
    fn update_task<'a>(
        &'a self,
        id: &'a str,
        owner: Option<&'a str>,
        answers: &'a [(String, Value)],
    ) -> BoxFuture<'a, StoreResult<bool>>;

    /// `tasks/cancel`: a running task's requests are dropped and its runner
    /// told. `false`: no such task for `owner`.
    fn cancel_task<'a>(
        &'a self,
        id: &'a str,
        owner: Option<&'a str>,
    ) -> BoxFuture<'a, StoreResult<bool>>;

    /// The runner's `statusMessage`. `false`: the task has ended (it was
    /// failed for a lapsed lease): the call can stop.
    fn task_status<'a>(
        &'a self,
        seed: &'a TaskSeed,
        message: &'a str,
    ) -> BoxFuture<'a, StoreResult<bool>>;

    /// The runner asks: request `key` (`InputRequest` JSON).
    fn task_ask<'a>(
        &'a self,
        seed: &'a TaskSeed,
        key: &'a str,
        request: &'a Value,
    ) -> BoxFuture<'a, StoreResult<bool>>;

    /// The runner no longer waits for `keys`.
    fn task_unask<'a>(
        &'a self,
        seed: &'a TaskSeed,
        keys: &'a [String],
    ) -> BoxFuture<'a, StoreResult<bool>>;

    /// The task ended with `payload`; its `ttlMs` becomes `ttl_ms`; it is
    /// kept for its ttl from now. `false`: it had ended already.
    fn finish_task<'a>(
        &'a self,
        seed: &'a TaskSeed,
        payload: &'a TaskPayload,
        ttl_ms: u64,
    ) -> BoxFuture<'a, StoreResult<bool>>;

    /// `message` to `replica`'s inbox.
    fn send<'a>(&'a self, replica: &'a str, message: &'a Message)
    -> BoxFuture<'a, StoreResult<()>>;

    /// A call waiting for input under `state`, for `ttl`.
    fn park_state<'a>(
        &'a self,
        state: &'a str,
        record: &'a StateRecord,
        ttl: Duration,
    ) -> BoxFuture<'a, StoreResult<()>>;

    /// The call waiting under `state`, taken out: good for one retry.
    fn take_state<'a>(&'a self, state: &'a str) -> BoxFuture<'a, StoreResult<Option<StateRecord>>>;

    /// Session `id`, its idle time restarted (`ttl`).
    fn session<'a>(
        &'a self,
        id: &'a str,
        ttl: Duration,
    ) -> BoxFuture<'a, StoreResult<Option<SessionRecord>>>;

    /// Session `id`'s rmcp state (when `Some`) and owner (when `Some`),
    /// kept for `ttl` of idleness.
    fn save_session<'a>(
        &'a self,
        id: &'a str,
        state: Option<&'a Value>,
        owner: Option<Option<&'a str>>,
        ttl: Duration,
    ) -> BoxFuture<'a, StoreResult<()>>;

    /// Session `id` ended.
    fn delete_session<'a>(&'a self, id: &'a str) -> BoxFuture<'a, StoreResult<()>>;
}

/// Where a replica's messages go: a mailbox per address (`task:<id>`,
/// `round:<id>`) while someone waits there, and the replica's own queue
/// for [`Message::Resume`].
pub(crate) struct Mailboxes {
    boxes: Mutex<HashMap<String, mpsc::UnboundedSender<Message>>>,
    resume: mpsc::UnboundedSender<Message>,
}

impl Mailboxes {
    /// Mailboxes, and the queue of resumes.
    pub(crate) fn new() -> (Arc<Self>, mpsc::UnboundedReceiver<Message>) {
        let (resume, resumes) = mpsc::unbounded_channel();
        let boxes = Mailboxes {
            boxes: Mutex::default(),
            resume,
        };
        (Arc::new(boxes), resumes)
    }

    fn boxes(&self) -> std::sync::MutexGuard<'_, HashMap<String, mpsc::UnboundedSender<Message>>> {
        self.boxes.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A mailbox at `address`, until the returned one is dropped.
    pub(crate) fn open(self: &Arc<Self>, address: String) -> Mailbox {
        let (sender, receiver) = mpsc::unbounded_channel();
        self.boxes().insert(address.clone(), sender);
        Mailbox {
            boxes: Arc::clone(self),
            address,
            receiver,
        }
    }

    /// Hands `message` to its mailbox; a message for an address nobody
    /// waits at any more (a task that ended) is dropped.
    pub(crate) fn dispatch(&self, message: Message) {
        match message.address() {
            None => {
                let _ = self.resume.send(message);
            }
            Some(address) => {
                let sender = self.boxes().get(address).cloned();
                if let Some(sender) = sender {
                    let _ = sender.send(message);
                }
            }
        }
    }
}

/// An open mailbox: closed when dropped.
pub(crate) struct Mailbox {
    boxes: Arc<Mailboxes>,
    address: String,
    receiver: mpsc::UnboundedReceiver<Message>,
}

impl Mailbox {
    /// The next message.
    pub(crate) async fn recv(&mut self) -> Option<Message> {
        self.receiver.recv().await
    }
}

impl Drop for Mailbox {
    fn drop(&mut self) {
        self.boxes.boxes().remove(&self.address);
    }
}

/// rmcp's session store (cross-instance session restore) on a shared
/// [`Store`]: a legacy session opened on one replica is restored on
/// another from its `initialize` params. The owner is written by the HTTP
/// service ([`Gate`](crate::limits::Gate)), which checks it.
pub(crate) struct Sessions {
    pub(crate) store: Store,
    /// A session's idle timeout: its record expires that long after its
    /// last request, on any replica.
    pub(crate) ttl: Duration,
}

type SessionError = rmcp::transport::streamable_http_server::session::SessionStoreError;
type SessionState = rmcp::transport::streamable_http_server::session::SessionState;

#[async_trait::async_trait]
impl rmcp::transport::streamable_http_server::session::SessionStore for Sessions {
    async fn load(&self, session_id: &str) -> Result<Option<SessionState>, SessionError> {
        let record = self.store.backend().session(session_id, self.ttl).await?;
        Ok(record
            .and_then(|record| record.state)
            .and_then(|state| serde_json::from_value(state).ok()))
    }

    async fn store(&self, session_id: &str, state: &SessionState) -> Result<(), SessionError> {
        let state = serde_json::to_value(state)?;
        self.store
            .backend()
            .save_session(session_id, Some(&state), None, self.ttl)
            .await?;
        Ok(())
    }

    async fn delete(&self, session_id: &str) -> Result<(), SessionError> {
        self.store.backend().delete_session(session_id).await?;
        Ok(())
    }
}

/// Milliseconds of `duration`, saturated.
pub(crate) fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_written_by_a_script_reads_back() {
        // The shapes the Redis scripts write by hand.
        let answer: Message = serde_json::from_str(
            r#"{"kind":"answer","to":"task:1","key":"elicitation-1","value":{"action":"accept"}}"#,
        )
        .unwrap();
        assert_eq!(
            answer,
            Message::Answer {
                to: "task:1".into(),
                key: "elicitation-1".into(),
                value: serde_json::json!({"action": "accept"}),
            }
        );
        let cancel: Message = serde_json::from_str(r#"{"kind":"cancel","to":"task:1"}"#).unwrap();
        assert_eq!(cancel.address(), Some("task:1"));
        let end = Message::End {
            to: "round:r".into(),
            end: RoundEnd::Result(serde_json::json!({"content": []})),
        };
        let text = serde_json::to_string(&end).unwrap();
        assert_eq!(serde_json::from_str::<Message>(&text).unwrap(), end);
    }

    #[tokio::test]
    async fn a_mailbox_gets_its_messages_until_it_is_dropped() {
        let (boxes, mut resumes) = Mailboxes::new();
        let mut mailbox = boxes.open("task:1".into());
        boxes.dispatch(Message::Cancel {
            to: "task:1".into(),
        });
        boxes.dispatch(Message::Cancel {
            to: "task:2".into(),
        });
        assert_eq!(
            mailbox.recv().await,
            Some(Message::Cancel {
                to: "task:1".into()
            })
        );
        drop(mailbox);
        assert!(boxes.boxes().is_empty());
        let resume = Message::Resume {
            state: "s".into(),
            round: "r".into(),
            reply: "b".into(),
            answers: BTreeMap::new(),
            wants: Wants {
                version: None,
                cards: false,
                app: false,
                level: 0,
                progress: false,
            },
        };
        boxes.dispatch(resume.clone());
        assert_eq!(resumes.recv().await, Some(resume));
    }
}
