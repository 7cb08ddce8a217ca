//! [`McpServer`]: the rmcp `ServerHandler` that serves a [`Registry`].

#![allow(deprecated)] // Logging, sampling: deprecated by SEP-2577, still in the protocol.

use std::borrow::Cow;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, Ordering};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CreateMessageRequest, CustomRequest, CustomResult,
    ElicitRequest, ErrorCode, Implementation, InputRequest, InputRequests, InputRequiredResult,
    JsonObject, ListToolsResult, PaginatedRequestParams, ProtocolVersion, ServerCapabilities,
    ServerConfig, SetLevelRequestParams, TASKS_EXTENSION_ID, Tool as McpTool,
};
use rmcp::model::{
    InitializeRequestParams, InitializeResult, ListResourcesResult, ReadResourceRequestParams,
    ReadResourceResponse,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::json;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use super::call_result;
use super::cards::{CARDS_KEY, Cards};
use crate::client::{AskRequest, CallClient, Event, Level, Reach, Threshold, encode};
use crate::drive::{Round, Step, To, drive};
use crate::input::{CallTask, Suspended, Waiting, full};
use crate::replica::{DEFAULT_LEASE, Replica};
use crate::sent::Sent;
use crate::served::{Current, Served, Sessions};
use crate::store::{RoundEnd, StateRecord, Store, Wants};
use toolprism_core::client::ClientError;
use toolprism_core::log::SessionLog;
use toolprism_core::{CallOptions, Progress, Registry, ToolCall, ToolOutcome};
use toolprism_provider::dialect::mcp as dialect;

mod relay;
pub(crate) mod tasks;

/// The default limit on one incoming message: 4 MiB, the limit rmcp's
/// Streamable HTTP server applies to a request body.
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 4 * 1024 * 1024;

/// How long a call waits for its client's answer to a request (sampling,
/// elicitation) unless set: 5 minutes, a person's time to read a form.
/// An approval is bounded by the registry's own, shorter, approval timeout
/// ([`RegistryBuilder::approval_timeout`](toolprism_core::RegistryBuilder::approval_timeout)).
pub const DEFAULT_CLIENT_TIMEOUT: Duration = Duration::from_secs(300);

/// Serves a [`Registry`] over MCP: the rmcp
/// [`ServerHandler`](rmcp::ServerHandler) behind [`serve_stdio`] and
/// [`serve_http`], for any transport rmcp can run.
///
/// Cheap to clone (an `Arc` inside). Each clone handed to a new connection
/// by this module's transports gets its own session tag, which prefixes the
/// call ids it gives the registry (see the [module docs](super)).
///
/// ```
/// # use toolprism::{ContentBlock, NoMeta, Tool, ToolContext, ToolError, ToolInfo};
/// # #[derive(Clone, serde::Deserialize, schemars::JsonSchema)] struct A { n: i64 }
/// # struct Double;
/// # impl Tool for Double {
/// #     type Args = A; type Value = i64; type Meta = NoMeta;
/// #     const INFO: ToolInfo = ToolInfo::new("double", "Double n.");
/// #     async fn execute(&self, a: A, _: &ToolContext<'_>) -> Result<i64, ToolError> { Ok(a.n * 2) }
/// #     fn render(_: &A, v: &i64) -> Vec<ContentBlock> { vec![ContentBlock::text(v.to_string())] }
/// # }
/// use toolprism::mcp::McpServer;
/// let registry = toolprism::Registry::builder().tool(Double).build().unwrap();
/// let server = McpServer::new(registry)
///     .with_server_info("doubler", "1.0.0")
///     .with_instructions("Call `double` to double a number.");
/// assert_eq!(server.max_message_bytes(), toolprism::mcp::DEFAULT_MAX_MESSAGE_BYTES);
/// // server.serve_stdio().await  — serves until the client disconnects.
/// ```
///
/// [`serve_stdio`]: McpServer::serve_stdio
/// [`serve_http`]: McpServer::serve_http
#[derive(Clone)]
pub struct McpServer {
    shared: Arc<Shared>,
    info: ServerConfig,
    max_message_bytes: usize,
    cards: Cards,
    /// The session log of [`McpServer::with_log`].
    log: Option<SessionLog>,
    /// Prefixes the call ids of requests that carry no `Mcp-Session-Id`.
    session: Arc<str>,
    /// The session's `logging/setLevel` (none until the client sets one).
    log_level: Arc<Threshold>,
    /// How long a call waits for its client's answer.
    client_timeout: Duration,
    /// How long a call that needs approval waits for it, when set here
    /// rather than by the registry.
    approval_timeout: Option<Duration>,
    /// How long a task runs, and is kept once it ended.
    task_ttl: Duration,
    /// This process in the store (W16).
    pub(crate) replica: Arc<Replica>,
    /// Who may connect over HTTP, and the limits there (W3).
    pub(crate) http: crate::limits::HttpSettings,
}

impl std::fmt::Debug for McpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpServer")
            .field("tools", &self.shared.current.get().modern.len())
            .field("server_info", &self.info.server_info)
            .field("max_message_bytes", &self.max_message_bytes)
            .field("cards", &self.cards)
            .field("log", &self.log.as_ref().map(SessionLog::path))
            .field("session", &self.session)
            .field("store", &self.replica.store)
            .finish_non_exhaustive()
    }
}

/// What every clone shares: the registry, its two `tools/list` shapes and
/// the calls waiting for their client's input.
pub(crate) struct Shared {
    /// The registry and its `tools/list` shapes (see `served.rs`).
    current: Current,
    /// The sessions to tell when the registry is replaced.
    sessions: Sessions,
    waiting: Arc<Waiting>,
    /// Whether a call's warning (a session log that could not be written)
    /// has been reported on stderr: once per server, not per call.
    warned: AtomicBool,
    /// Whether a failure of the store has been reported on stderr.
    store_warned: AtomicBool,
}

/// The protocol versions of the two `tools/list` shapes (see `served.rs`).
pub(crate) fn listing_versions() -> (&'static str, &'static str) {
    (LEGACY, MODERN)
}

/// A protocol version whose output roots must be objects, and the first
/// whose roots may be anything: the two shapes the dialect makes.
const LEGACY: &str = dialect::DEFAULT_PROTOCOL_VERSION;
const MODERN: &str = dialect::ANY_OUTPUT_ROOT;

/// Whether a client on `version` gets the 2026-07-28 shapes. A request that
/// names no version (a session that never said) gets the older shapes, which
/// every client accepts.
pub(super) fn is_modern(version: Option<&ProtocolVersion>) -> bool {
    version.is_some_and(|v| dialect::allows_any_root(v.as_str()))
}

/// The dialect's version string for `version`.
pub(super) fn dialect_version(version: Option<&ProtocolVersion>) -> &'static str {
    if is_modern(version) { MODERN } else { LEGACY }
}

static SESSIONS: AtomicU64 = AtomicU64::new(0);

/// A new session tag, unique in this process: `s1`, `s2`, …
fn next_session() -> Arc<str> {
    let n = SESSIONS.fetch_add(1, Ordering::Relaxed) + 1;
    Arc::from(format!("s{n}"))
}

impl McpServer {
    /// A server for `registry`, introducing itself as `toolprism` at this
    /// crate's version, with the [default message
    /// limit](DEFAULT_MAX_MESSAGE_BYTES).
    pub fn new(registry: Registry) -> Self {
        let mut capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            .build();
        // `notifications/message` from tools, at the level the client sets
        // (W8).
        #[allow(deprecated)]
        {
            capabilities.logging = Some(JsonObject::new());
        }
        // The tasks extension, only when a tool's calls may be tasks (W10).
        if registry.definitions().any(|def| !def.task.is_forbidden()) {
            capabilities
                .extensions
                .get_or_insert_with(Default::default)
                .insert(TASKS_EXTENSION_ID.to_owned(), JsonObject::new());
        }
        let info = ServerConfig::new(capabilities)
            .with_server_info(Implementation::new("toolprism", env!("CARGO_PKG_VERSION")));
        let server = McpServer {
            shared: Arc::new(Shared {
                current: Current::new(Served::new(registry, LEGACY, MODERN)),
                sessions: Sessions::default(),
                waiting: Arc::default(),
                warned: AtomicBool::new(false),
                store_warned: AtomicBool::new(false),
            }),
            info,
            max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
            cards: Cards::Never,
            log: None,
            session: next_session(),
            log_level: Arc::default(),
            client_timeout: DEFAULT_CLIENT_TIMEOUT,
            approval_timeout: None,
            task_ttl: tasks::DEFAULT_TASK_TTL,
            replica: Arc::new(Replica::new(Store::memory(), DEFAULT_LEASE)),
            http: Default::default(),
        };
        server.with_cards(Cards::default())
    }

    /// The name and version the server introduces itself with
    /// (`serverInfo`).
    pub fn with_server_info(mut self, name: impl Into<String>, version: impl Into<String>) -> Self {
        self.info.server_info = Implementation::new(name, version);
        self
    }

    /// Instructions a client may show the model (`instructions`).
    pub fn with_instructions(mut self, instructions: impl Into<String>) -> Self {
        self.info.instructions = Some(instructions.into());
        self
    }

    /// The largest message accepted, in bytes, on every transport; larger
    /// ones get a protocol error (see the [module docs](super)).
    pub fn with_max_message_bytes(mut self, bytes: usize) -> Self {
        self.max_message_bytes = bytes.max(1);
        self
    }

    /// Which results carry the call and result cards: [`Cards::OnRequest`]
    /// unless set, so only the clients that ask get them (see [`Cards`] for
    /// how a client asks, and why). Unless [`Cards::Never`], the server
    /// announces the experimental capability `"toolprism/cards"` in its
    /// `initialize` answer.
    pub fn with_cards(mut self, cards: Cards) -> Self {
        self.cards = cards;
        let experimental = &mut self.info.capabilities.experimental;
        if cards == Cards::Never {
            if let Some(map) = experimental {
                map.remove(CARDS_KEY);
            }
            if experimental.as_ref().is_some_and(|map| map.is_empty()) {
                *experimental = None;
            }
        } else {
            experimental
                .get_or_insert_with(Default::default)
                .insert(CARDS_KEY.to_owned(), Default::default());
        }
        self
    }

    /// Writes every `tools/call` this server answers to `log`, with the
    /// calls those tools make in turn (W1 in `docs/contract.md`: the
    /// registry's pipeline writes it, never the server): `tool/call` before
    /// the call runs, `tool/result` after (content, error code and meta;
    /// never the value), under the call id `<session>:<request id>` (see
    /// the [module docs](super)), nested calls as `tool/nested-call` and
    /// `tool/nested-result`, and a call to a tool the registry does not
    /// hold as an `UNKNOWN_TOOL` result (the client gets a protocol error).
    /// The log replaces the registry's own for these calls
    /// ([`CallOptions::with_log`]), so nothing is written twice.
    /// `toolprism serve --log PATH` uses it.
    ///
    /// A failed write does not fail the call: the call is answered, and
    /// the outcome carries the warning.
    ///
    /// ```
    /// # use toolprism::{ContentBlock, NoMeta, Tool, ToolContext, ToolError, ToolInfo};
    /// # #[derive(Clone, serde::Deserialize, schemars::JsonSchema)] struct A { n: i64 }
    /// # struct Double;
    /// # impl Tool for Double {
    /// #     type Args = A; type Value = i64; type Meta = NoMeta;
    /// #     const INFO: ToolInfo = ToolInfo::new("double", "Double n.");
    /// #     async fn execute(&self, a: A, _: &ToolContext<'_>) -> Result<i64, ToolError> { Ok(a.n * 2) }
    /// #     fn render(_: &A, v: &i64) -> Vec<ContentBlock> { vec![ContentBlock::text(v.to_string())] }
    /// # }
    /// use toolprism::log::SessionLog;
    /// use toolprism::mcp::McpServer;
    ///
    /// let dir = tempfile::tempdir().unwrap();
    /// let log = SessionLog::create(dir.path().join("session.jsonl")).unwrap();
    /// let registry = toolprism::Registry::builder().tool(Double).build().unwrap();
    /// let server = McpServer::new(registry).with_log(log);
    /// // server.serve_stdio().await  — every call lands in session.jsonl.
    /// # let _ = server;
    /// ```
    pub fn with_log(mut self, log: SessionLog) -> Self {
        self.log = Some(log);
        self
    }

    /// How long a call waits for its client's answer to a request it made
    /// ([`ToolContext::sample`](toolprism_core::ToolContext::sample),
    /// [`elicit`](toolprism_core::ToolContext::elicit)): past it the tool
    /// gets [`ClientError::TimedOut`] (over `2025-11-25` the client is sent
    /// `notifications/cancelled` for the request), and a `2026-07-28` call
    /// whose retry has not come twice that long after it asked is
    /// cancelled. Default
    /// [`DEFAULT_CLIENT_TIMEOUT`]. The tool's own timeout, and the
    /// approval timeout for approvals
    /// ([`with_approval_timeout`](Self::with_approval_timeout)), still
    /// apply.
    ///
    /// ```
    /// # let registry = toolprism::Registry::builder().build().unwrap();
    /// use std::time::Duration;
    /// let server = toolprism::mcp::McpServer::new(registry).with_client_timeout(Duration::from_secs(30));
    /// assert_eq!(server.client_timeout(), Duration::from_secs(30));
    /// ```
    pub fn with_client_timeout(mut self, timeout: Duration) -> Self {
        self.client_timeout = timeout;
        self
    }

    /// How long a call waits for its client's answer.
    pub fn client_timeout(&self) -> Duration {
        self.client_timeout
    }

    /// How long a call that needs the user's approval (W9 in
    /// `docs/contract.md`) waits for the answer before it ends as
    /// `NOT_APPROVED`, unanswered: every call this server runs waits this
    /// long ([`CallOptions::with_approval_timeout`]), instead of the
    /// registry's
    /// ([`RegistryBuilder::approval_timeout`](toolprism_core::RegistryBuilder::approval_timeout),
    /// 2 minutes unless set). The client timeout
    /// ([`with_client_timeout`](Self::with_client_timeout)) still bounds
    /// the wait for the client's answer. `serve --approval-timeout SECS`
    /// sets it.
    ///
    /// ```
    /// # let registry = toolprism::Registry::builder().build().unwrap();
    /// use std::time::Duration;
    /// let server = toolprism::mcp::McpServer::new(registry).with_approval_timeout(Duration::from_secs(30));
    /// assert_eq!(server.approval_timeout(), Some(Duration::from_secs(30)));
    /// ```
    pub fn with_approval_timeout(mut self, timeout: Duration) -> Self {
        self.approval_timeout = Some(timeout);
        self
    }

    /// The approval timeout of
    /// [`with_approval_timeout`](Self::with_approval_timeout), when set.
    pub fn approval_timeout(&self) -> Option<Duration> {
        self.approval_timeout
    }

    /// The largest message accepted, in bytes.
    pub fn max_message_bytes(&self) -> usize {
        self.max_message_bytes
    }

    /// The registry served now (see [`McpServer::replace_registry`]).
    pub fn registry(&self) -> Registry {
        self.shared.current.get().registry.clone()
    }

    pub(crate) fn shared_current(&self) -> &Current {
        &self.shared.current
    }

    pub(crate) fn sessions(&self) -> &Sessions {
        &self.shared.sessions
    }

    /// Keeps this server's tasks, the calls waiting for their client's
    /// input, and its legacy sessions in `store` (W16 in
    /// `docs/contract.md`): with [`Store::redis`](crate::Store), several
    /// processes serving the same registry behind one load balancer
    /// (replicas) answer one another's `tasks/get`, `tasks/update` and
    /// `tasks/cancel`, take the answers to one another's input requests,
    /// and serve one another's sessions; see [Many replicas behind one
    /// URL](crate#many-replicas-behind-one-url). [`Store::memory`] unless
    /// set. `serve --store URL` uses it.
    ///
    /// ```
    /// use toolprism::mcp::{McpServer, Store};
    /// # let registry = toolprism::Registry::builder().build().unwrap();
    /// let server = McpServer::new(registry).with_store(Store::memory());
    /// assert_eq!(server.store().to_string(), "memory");
    /// ```
    pub fn with_store(mut self, store: Store) -> Self {
        self.replica = Arc::new(Replica::new(store, self.replica.lease));
        self
    }

    /// The store of [`with_store`](Self::with_store).
    pub fn store(&self) -> &Store {
        &self.replica.store
    }

    /// How long this process's tasks outlive it (W16): with a shared
    /// [store](Self::with_store), the process renews a lease there three
    /// times per `lease`; a task whose process has not renewed it for
    /// `lease` is seen `failed` (the server stopped) by the first
    /// `tasks/get` after one more `lease` (so within two leases and a
    /// poll of the process stopping), whichever replica answers it.
    /// Default [`DEFAULT_LEASE`](crate::DEFAULT_LEASE), 10 s; at least
    /// 100 ms. Longer rides out longer pauses of a process or of the
    /// network to the store; shorter tells clients sooner.
    ///
    /// ```
    /// use std::time::Duration;
    /// # let registry = toolprism::Registry::builder().build().unwrap();
    /// let server = toolprism::mcp::McpServer::new(registry).with_lease(Duration::from_secs(3));
    /// assert_eq!(server.lease(), Duration::from_secs(3));
    /// ```
    pub fn with_lease(mut self, lease: Duration) -> Self {
        self.replica = Arc::new(Replica::new(self.replica.store.clone(), lease));
        self
    }

    /// The lease of [`with_lease`](Self::with_lease).
    pub fn lease(&self) -> Duration {
        self.replica.lease
    }

    /// Starts this replica's lease and inbox, once (from a request).
    fn start_replica(&self) {
        let shared = Arc::downgrade(&self.shared);
        let replica = Arc::downgrade(&self.replica);
        let client_timeout = self.client_timeout;
        self.replica.start(move |message| {
            if let (Some(shared), Some(replica)) = (shared.upgrade(), replica.upgrade()) {
                tokio::spawn(relay::serve_resume(
                    shared,
                    replica,
                    client_timeout,
                    message,
                ));
            }
        });
    }

    /// The same server under a new session tag, for a new connection.
    pub(super) fn for_new_session(&self) -> Self {
        McpServer {
            session: next_session(),
            // A session's level is its own: a new session has set none.
            log_level: Arc::default(),
            ..self.clone()
        }
    }

    /// The toolprism call id of MCP request `id`: `<session>:<id>`, where the
    /// session is the request's `Mcp-Session-Id` when it has one.
    fn call_id(&self, context: &RequestContext<RoleServer>) -> String {
        let session = context
            .extensions
            .get::<http::request::Parts>()
            .and_then(|parts| parts.headers.get("mcp-session-id"))
            .and_then(|v| v.to_str().ok());
        match session {
            Some(session) => format!("{session}:{}", context.id),
            // Replicas sharing a store each tag their sessions the same
            // way: the replica's id keeps the call ids of their logs apart.
            None if self.replica.shared() => {
                format!("{}.{}:{}", self.replica.id, self.session, context.id)
            }
            None => format!("{}:{}", self.session, context.id),
        }
    }

    fn tools(&self, version: Option<&ProtocolVersion>) -> Arc<[McpTool]> {
        let served = self.shared.current.get();
        if is_modern(version) {
            served.modern.clone()
        } else {
            served.legacy.clone()
        }
    }
}

impl McpServer {
    /// A `tools/call`: the first (or only) round of a call, or the retry
    /// of one that asked its client for input (`2026-07-28`).
    async fn answer_call(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
        span: tracing::Span,
    ) -> Result<CallToolResponse, ErrorData> {
        if request.request_state.is_some() || request.input_responses.is_some() {
            return self.resume(request, context).await;
        }
        let registry = &self.registry();
        let version = context.protocol_version();
        let modern = version.as_ref().is_some_and(|v| !v.has_initialize());
        let call = ToolCall::new(
            self.call_id(&context),
            request.name.as_ref(),
            arguments_as_sent(&request, &context)?,
        );
        // W3: the caller the HTTP transport verified, for policies and tools;
        // and the request's span (`call_span`), the call's only one.
        let mut options = crate::auth::with_caller(CallOptions::new().with_span(span), &context);
        if let Some(log) = &self.log {
            options = options.with_log(log.clone());
        }
        if let Some(timeout) = self.approval_timeout {
            options = options.with_approval_timeout(timeout);
        }
        // W10: a tool that opted in runs as a task for a client that can
        // take one.
        let (mut call, mut options) = (call, options);
        if let Some(def) = registry.definition(&request.name)
            && !def.task.is_forbidden()
        {
            match self.task_decision(def.task, &context, modern)? {
                tasks::Decision::Task => {
                    match self
                        .start_task(call, options, def.task, &request.name, &context)
                        .await?
                    {
                        tasks::TaskStart::Started(response) => return Ok(response),
                        tasks::TaskStart::Inline(back) => (call, options) = *back,
                    }
                }
                tasks::Decision::Inline => {}
            }
        }
        let reach = Reach::of(&context, modern, &self.log_level);
        if modern && reach.can_ask() {
            return self.start(call, options, request, context, reach).await;
        }
        let options = options.with_cancel(context.ct.clone());
        let token = context.meta.get_progress_token();
        let outcome = if !reach.any() && token.is_none() {
            // The common call: nothing to forward, nothing allocated for it.
            registry.call_with(call, &options).await
        } else {
            let (events, mut received) = mpsc::unbounded_channel();
            let mut options = options;
            if reach.any() {
                let level = if modern {
                    Level::Request(AtomicU8::new(reach.level))
                } else {
                    Level::Session(Arc::clone(&self.log_level))
                };
                let client = CallClient::new(events.clone(), level, reach, self.client_timeout);
                options = options.with_client(Arc::new(client));
            }
            if token.is_some() {
                options = options.with_progress(progress_sink(events));
            } else {
                drop(events);
            }
            let mut call = std::pin::pin!(async { Some(registry.call_with(call, &options).await) });
            let round = Round {
                to: To::Peer(&context.peer),
                progress: token,
                forward_asks: true,
            };
            match drive(&mut call, &mut received, &round).await {
                Step::Done(Some(outcome)) => outcome,
                // Forwarding never stops at a request, and an inline call
                // always ends with an outcome.
                Step::Done(None) | Step::Input(_) => {
                    return Err(ErrorData::internal_error(
                        "the call ended without an outcome",
                        None,
                    ));
                }
            }
        };
        self.complete(outcome, &request.name, &context, version.as_ref())
    }

    /// The first round of a `2026-07-28` call whose client can be asked:
    /// the call runs in a task of its own, which survives this request if
    /// the tool asks for input (see [`crate::input`]).
    async fn start(
        &self,
        call: ToolCall,
        options: CallOptions,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
        reach: Reach,
    ) -> Result<CallToolResponse, ErrorData> {
        let (events, received) = mpsc::unbounded_channel();
        let client = Arc::new(CallClient::new(
            events.clone(),
            Level::Request(AtomicU8::new(reach.level)),
            reach,
            self.client_timeout,
        ));
        let cancel = CancellationToken::new();
        let options = options
            .with_cancel(cancel.clone())
            .with_client(Arc::clone(&client) as _)
            .with_progress(progress_sink(events));
        let registry = self.registry();
        let task =
            tokio::spawn(async move { registry.call_with(call, &options).await }.in_current_span());
        let suspended = Suspended {
            task: CallTask(task),
            events: received,
            cancel,
            client,
            name: request.name.clone().into_owned(),
            arguments: request.arguments.clone(),
            owner: tasks::owner(&context),
            asked: 0,
        };
        self.round(suspended, &context).await
    }

    /// A retry of a call that asked for input: its answers to the call, and
    /// the call on to its end or its next requests. A call another replica
    /// runs is relayed through the store (W16).
    async fn resume(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let Some(state) = request.request_state.clone() else {
            return Err(ErrorData::invalid_params(
                "inputResponses without requestState: send the requestState of the InputRequiredResult they answer",
                None,
            ));
        };
        let state = state.as_str();
        let owner = tasks::owner(&context);
        let taken = self
            .shared
            .waiting
            .take_if(state, |call| call.owner == owner);
        let Some((suspended, replies)) = taken else {
            if self.replica.shared() {
                return self.relay(state, request, &context, owner).await;
            }
            return Err(not_issued(state));
        };
        if self.replica.shared() {
            // Good for one retry: no other replica takes it now.
            let backend = self.replica.store.clone();
            let state = state.to_owned();
            tokio::spawn(async move {
                let _ = backend.backend().take_state(&state).await;
            });
        }
        if !suspended.same_call(&request.name, request.arguments.as_ref()) {
            suspended.cancel.cancel();
            return Err(other_call());
        }
        let responses = request.input_responses.unwrap_or_default();
        for (key, reply) in replies {
            let answer = responses.get(&key).cloned().ok_or_else(|| {
                ClientError::Failed(format!("the client's retry carried no answer for {key:?}"))
            });
            let _ = reply.send(answer);
        }
        self.round(suspended, &context).await
    }

    /// One round of a `2026-07-28` call that may ask: serves its events to
    /// this request until it ends (the result) or asks (an
    /// `InputRequiredResult`, the call parked until the retry).
    async fn round(
        &self,
        suspended: Suspended,
        context: &RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        suspended
            .client
            .set_request_level(encode(context.meta.log_level()));
        // If this request is dropped (the client closed its connection)
        // while the call runs for it, the call is cancelled.
        let stop = suspended.cancel.clone().drop_guard();
        let round = Round {
            to: To::Peer(&context.peer),
            progress: context.meta.get_progress_token(),
            forward_asks: false,
        };
        let wants = Wants {
            version: context
                .protocol_version()
                .map(|version| version.as_str().to_owned()),
            cards: self.cards.wanted(context),
            app: crate::app::declared(context),
            level: 0,
            progress: false,
        };
        self.start_replica();
        let ended = tokio::select! {
            ended = self.shared.run_round(suspended, &round, &wants, &self.replica, self.client_timeout) => ended,
            () = context.ct.cancelled() => {
                return Err(ErrorData::internal_error("the request was cancelled", None));
            }
        };
        stop.disarm();
        match ended {
            RoundEnd::Result(result) => {
                serde_json::from_value::<rmcp::model::CallToolResult>(result)
                    .map(CallToolResponse::from)
                    .map_err(|e| ErrorData::internal_error(e.to_string(), None))
            }
            RoundEnd::Input(input) => serde_json::from_value::<InputRequiredResult>(input)
                .map(CallToolResponse::from)
                .map_err(|e| ErrorData::internal_error(e.to_string(), None)),
            RoundEnd::Error(error) => Err(serde_json::from_value(error).unwrap_or_else(|e| {
                ErrorData::internal_error(format!("the call failed: {e}"), None)
            })),
        }
    }

    /// The `tools/call` result of `outcome`, a call of tool `name`.
    fn complete(
        &self,
        outcome: ToolOutcome,
        name: &str,
        context: &RequestContext<RoleServer>,
        version: Option<&ProtocolVersion>,
    ) -> Result<CallToolResponse, ErrorData> {
        let (cards, app) = (self.cards.wanted(context), crate::app::declared(context));
        self.shared
            .result_of(outcome, name, version, cards, app)
            .map(CallToolResponse::from)
    }
}

impl Shared {
    /// Drives a call that may ask for input through one round: to its end
    /// (its result, as a client on `wants.version` wanting what `wants`
    /// says gets it), or to its next requests (the call parked under a new
    /// `requestState`, in the store too when it is shared).
    pub(crate) async fn run_round(
        &self,
        mut suspended: Suspended,
        round: &Round<'_>,
        wants: &Wants,
        replica: &Replica,
        client_timeout: Duration,
    ) -> RoundEnd {
        let version = wants
            .version
            .as_ref()
            .and_then(|v| serde_json::from_value::<ProtocolVersion>(json!(v)).ok());
        loop {
            let asks = match drive(&mut suspended.task, &mut suspended.events, round).await {
                Step::Done(Some(outcome)) => {
                    let name = suspended.name.clone();
                    return match self.result_of(
                        outcome,
                        &name,
                        version.as_ref(),
                        wants.cards,
                        wants.app,
                    ) {
                        Ok(result) => RoundEnd::Result(json_of(&result)),
                        Err(error) => RoundEnd::Error(json_of(&error)),
                    };
                }
                Step::Done(None) => {
                    return RoundEnd::Error(json_of(&ErrorData::internal_error(
                        "the call's task failed",
                        None,
                    )));
                }
                Step::Input(asks) => asks,
            };
            let mut requests = InputRequests::new();
            let mut replies = Vec::with_capacity(asks.len());
            for ask in asks {
                suspended.asked += 1;
                let key = format!("{}-{}", ask.request.kind(), suspended.asked);
                let input = match ask.request {
                    AskRequest::Sample(params) => {
                        InputRequest::CreateMessage(CreateMessageRequest::new(params))
                    }
                    AskRequest::Elicit(params) => {
                        InputRequest::Elicitation(ElicitRequest::new(params))
                    }
                };
                requests.insert(key.clone(), input);
                replies.push((key, ask.reply));
            }
            let record = replica.shared().then(|| StateRecord {
                runner: replica.id.clone(),
                owner: suspended.owner.clone(),
                name: suspended.name.clone(),
                arguments: suspended.arguments.clone(),
            });
            // Past the client timeout the tool's own wait ends (and the
            // call with it, as the tool decides); the call is cancelled
            // only if it still waits twice as long after asking.
            let ttl = client_timeout.saturating_mul(2);
            match self.waiting.park(suspended, replies, ttl) {
                Ok(state) => {
                    if let Some(record) = record
                        && let Err(e) = replica.backend().park_state(&state, &record, ttl).await
                    {
                        // Any replica may get the retry: without the store
                        // only this one could take it.
                        if let Some((call, _)) = self.waiting.take_if(&state, |_| true) {
                            call.cancel.cancel();
                        }
                        return RoundEnd::Error(json_of(&ErrorData::internal_error(
                            format!(
                                "this call asks its client for input, and the call must wait in the store so that any replica can take the answer: {e}"
                            ),
                            None,
                        )));
                    }
                    return RoundEnd::Input(json_of(&InputRequiredResult::new(
                        Some(requests),
                        Some(state),
                    )));
                }
                Err(back) => {
                    let (back, replies) = *back;
                    for (_, reply) in replies {
                        let _ = reply.send(Err(full()));
                    }
                    suspended = back;
                }
            }
        }
    }

    /// The `CallToolResult` of `outcome`, a call of tool `name`, for a
    /// client on `version` that wants the cards (`cards`) or the card
    /// app's views (`app`).
    pub(crate) fn result_of(
        &self,
        outcome: ToolOutcome,
        name: &str,
        version: Option<&ProtocolVersion>,
        cards: bool,
        app: bool,
    ) -> Result<rmcp::model::CallToolResult, ErrorData> {
        let registry = &self.current.get().registry;
        if let Some(warning) = outcome.warnings().first()
            && !self.warned.swap(true, Ordering::Relaxed)
        {
            // stdout carries protocol messages only.
            eprintln!(
                "toolprism mcp: {warning} (the calls are still answered; later problems are not reported)"
            );
        }
        // Step 1 ran once, in the registry; an unknown tool is a protocol
        // error for MCP (the registry has logged it as a result).
        let definition = match outcome.code() {
            Some(code) if *code == toolprism_core::ErrorCode::UnknownTool => None,
            _ => registry.definition(outcome.name()),
        };
        let Some(definition) = definition else {
            return Err(unknown_tool(name, registry));
        };
        Ok(call_result::call_tool_result(
            definition,
            outcome,
            dialect_version(version),
            cards,
            app,
        ))
    }
}

/// `value` as JSON (the types here always serialize).
fn json_of(value: &impl serde::Serialize) -> serde_json::Value {
    serde_json::to_value(value).unwrap_or(serde_json::Value::Null)
}

/// `-32602` for a `requestState` this server cannot resume.
pub(crate) fn not_issued(state: &str) -> ErrorData {
    ErrorData::invalid_params(
        "this requestState is not one this server issued, or it expired, or it was used already; call the tool again without it",
        Some(json!({ "requestState": truncated(state) })),
    )
}

/// `-32602` for a retry naming another call than the one it resumes.
pub(crate) fn other_call() -> ErrorData {
    ErrorData::invalid_params(
        "this requestState belongs to a call of another tool or with other arguments; retry with the call's own name and arguments",
        None,
    )
}

/// A progress sink sending each report to the request's task.
fn progress_sink(
    events: mpsc::UnboundedSender<Event>,
) -> impl Fn(&Progress) + Send + Sync + 'static {
    move |p: &Progress| {
        // Fails only once the call is over (a report from work the tool
        // left running): nobody is listening then.
        let _ = events.send(Event::Progress(p.clone()));
    }
}

/// The one tracing span of a `tools/call`: the pipeline's `execute_tool`
/// span (OpenTelemetry GenAI, see `toolprism_core::telemetry`), opened
/// here with MCP's attributes added, and handed to the call
/// ([`CallOptions::with_span`]) so the pipeline records its own fields into
/// it instead of opening a second span (the MCP semantic conventions' rule
/// when a GenAI instrumentation traces the tool). Its kind is `server`, as
/// MCP's conventions have a server's span.
///
/// MCP's fields: `mcp.method.name` (`tools/call`), `mcp.protocol.version`
/// (the negotiated one), `mcp.session.id` (the `Mcp-Session-Id`, over
/// HTTP), `jsonrpc.request.id`, `network.transport` (`tcp` over HTTP,
/// `pipe` over stdio), and the W3C `traceparent` (and `tracestate`) the
/// request's `_meta` carries. With the feature `otel`, that trace context,
/// read by OpenTelemetry's W3C TraceContext propagator, is also made the
/// span's parent, so a tracing-opentelemetry layer exports the span as a
/// child of the client's span, in the client's trace (a malformed
/// `traceparent` gives no parent). Without a subscriber the span costs one
/// interest check.
fn call_span(
    request: &CallToolRequestParams,
    context: &RequestContext<RoleServer>,
) -> tracing::Span {
    use tracing::field::Empty;
    let span = tracing::info_span!(
        "execute_tool",
        otel.name = Empty,
        otel.kind = "server",
        otel.status_code = Empty,
        gen_ai.operation.name = toolprism_core::telemetry::EXECUTE_TOOL,
        gen_ai.tool.name = %request.name,
        gen_ai.tool.call.id = Empty,
        gen_ai.tool.type = toolprism_core::telemetry::TOOL_TYPE_FUNCTION,
        gen_ai.tool.description = Empty,
        gen_ai.tool.call.arguments = Empty,
        gen_ai.tool.call.result = Empty,
        error.type = Empty,
        mcp.method.name = "tools/call",
        mcp.protocol.version = Empty,
        mcp.session.id = Empty,
        jsonrpc.request.id = %context.id,
        network.transport = Empty,
        traceparent = Empty,
        tracestate = Empty,
    );
    if !span.is_disabled() {
        span.record(
            toolprism_core::telemetry::OTEL_NAME,
            format!("execute_tool {}", request.name),
        );
        if let Some(version) = context.protocol_version() {
            span.record("mcp.protocol.version", version.as_str());
        }
        let http = context.extensions.get::<http::request::Parts>();
        span.record(
            "network.transport",
            if http.is_some() { "tcp" } else { "pipe" },
        );
        if let Some(session) = http
            .and_then(|parts| parts.headers.get("mcp-session-id"))
            .and_then(|v| v.to_str().ok())
        {
            span.record("mcp.session.id", session);
        }
        let traceparent = context.meta.get_traceparent();
        let tracestate = context.meta.get_tracestate();
        if let Some(traceparent) = traceparent {
            span.record("traceparent", traceparent);
        }
        if let Some(tracestate) = tracestate {
            span.record("tracestate", tracestate);
        }
        #[cfg(feature = "otel")]
        if let Some(traceparent) = traceparent {
            otel::set_parent(&span, traceparent, tracestate);
        }
    }
    span
}

/// The span's parent from the request's trace context (feature `otel`).
#[cfg(feature = "otel")]
mod otel {
    use opentelemetry::propagation::{Extractor, TextMapPropagator};
    use opentelemetry_sdk::propagation::TraceContextPropagator;
    use tracing_opentelemetry::OpenTelemetrySpanExt;

    /// The two W3C Trace Context fields, as the propagator reads them.
    struct TraceContext<'a> {
        traceparent: &'a str,
        tracestate: Option<&'a str>,
    }

    impl Extractor for TraceContext<'_> {
        fn get(&self, key: &str) -> Option<&str> {
            match key {
                "traceparent" => Some(self.traceparent),
                "tracestate" => self.tracestate,
                _ => None,
            }
        }

        fn keys(&self) -> Vec<&str> {
            let mut keys = vec!["traceparent"];
            if self.tracestate.is_some() {
                keys.push("tracestate");
            }
            keys
        }
    }

    /// Makes the remote span `traceparent` names the parent of `span`,
    /// before `span` is first entered. Without an OpenTelemetry layer in
    /// the subscriber, or for a `traceparent` the propagator refuses, the
    /// span keeps no parent and nothing else changes.
    pub(super) fn set_parent(span: &tracing::Span, traceparent: &str, tracestate: Option<&str>) {
        let parent = TraceContextPropagator::new().extract(&TraceContext {
            traceparent,
            tracestate,
        });
        // Fails only when the span has no OpenTelemetry data (no layer) or
        // has started already; it has not: it is brand new.
        let _ = span.set_parent(parent);
    }
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        self.info.clone()
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        context.peer.set_peer_info(request.clone());
        let mut result = self.negotiate_initialize(&request)?;
        crate::app::answer_initialize(&request, &mut result);
        Ok(result)
    }

    /// A session that finished `initialize` is told when the registry is
    /// replaced, and sent the log messages no call carries (`served.rs`).
    async fn on_initialized(&self, context: rmcp::service::NotificationContext<RoleServer>) {
        self.shared
            .sessions
            .add(context.peer, Arc::clone(&self.log_level));
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let version = context.protocol_version();
        let tools = self.tools(version.as_ref());
        Ok(ListToolsResult::with_all_items(
            if crate::app::declared(&context) {
                crate::app::with_app(&tools)
            } else {
                tools.to_vec()
            },
        ))
    }

    // The card app, for clients that declare MCP Apps (see `app.rs`).
    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        Ok(crate::app::list_resources(crate::app::declared(&context)))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        crate::app::read_resource(&request.uri).map(Into::into)
    }

    fn get_tool(&self, name: &str) -> Option<McpTool> {
        self.shared
            .current
            .get()
            .modern
            .iter()
            .find(|tool| tool.name == name)
            .cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let span = call_span(&request, &context);
        // Boxed: rmcp spawns a task per request whose future is as large as
        // the largest handler's, and a call's (the pipeline, the events, the
        // tasks) is tens of kilobytes, copied at every move of the task.
        Box::pin(
            self.answer_call(request, context, span.clone())
                .instrument(span),
        )
        .await
    }

    // The tasks extension (W10; see `handler/tasks.rs`).
    async fn get_task(
        &self,
        request: rmcp::model::GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::GetTaskResult, ErrorData> {
        Box::pin(self.get_task_from_store(&request.task_id, tasks::owner(&context).as_deref()))
            .await
    }

    async fn update_task(
        &self,
        request: rmcp::model::UpdateTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        Box::pin(self.update_task_in_store(
            &request.task_id,
            tasks::owner(&context).as_deref(),
            request.input_responses,
        ))
        .await
    }

    async fn cancel_task(
        &self,
        request: rmcp::model::CancelTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        Box::pin(self.cancel_task_in_store(&request.task_id, tasks::owner(&context).as_deref()))
            .await
    }

    /// `logging/setLevel`: the least severe level this session's
    /// `notifications/message` carry from now on (W8). A session that
    /// never sets one gets none; from `2026-07-28` each request says its
    /// own level in `_meta`, and this is not needed.
    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.log_level
            .store(encode(Some(request.level)), Ordering::Relaxed);
        Ok(())
    }

    /// rmcp hands a standard method whose params do not parse (`tools/call`
    /// without a string `name`) to this hook as an unknown method; answer
    /// it as what it is, invalid params.
    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        const SHAPES: &[(&str, &str)] = &[
            ("tools/call", "{\"name\": <tool name>, \"arguments\"?: {…}}"),
            ("tools/list", "{\"cursor\"?: <string>}"),
        ];
        match SHAPES.iter().find(|(method, _)| *method == request.method) {
            Some((method, shape)) => Err(ErrorData::invalid_params(
                format!("the params of {method} are not valid; send {shape}"),
                None,
            )),
            None => Err(ErrorData::new(
                ErrorCode::METHOD_NOT_FOUND,
                format!("method not found: {}", truncated(&request.method)),
                None,
            )),
        }
    }
}

/// The arguments' text as the client sent it, which the transport kept
/// ([`Sent`]); for a transport that keeps none (rmcp's own), the parsed
/// arguments written out again, the only text left.
fn arguments_as_sent(
    request: &CallToolRequestParams,
    context: &RequestContext<RoleServer>,
) -> Result<String, ErrorData> {
    let sent = context.extensions.get::<Sent>().or_else(|| {
        context
            .extensions
            .get::<http::request::Parts>()
            .and_then(|parts| parts.extensions.get::<Sent>())
    });
    match (sent, &request.arguments) {
        (Some(sent), _) => Ok(sent.0.to_string()),
        (None, Some(arguments)) => serde_json::to_string(arguments)
            .map_err(|e| ErrorData::invalid_params(e.to_string(), None)),
        (None, None) => Ok(String::new()),
    }
}

/// At most 64 bytes of `text`, cut on a char boundary, with `…` when cut.
fn truncated(text: &str) -> Cow<'_, str> {
    if text.len() > 64 {
        Cow::Owned(format!("{}…", &text[..text.floor_char_boundary(64)]))
    } else {
        Cow::Borrowed(text)
    }
}

/// The protocol error for a tool the registry does not hold: invalid params
/// (-32602), naming the tools there are.
fn unknown_tool(name: &str, registry: &Registry) -> ErrorData {
    let names: Vec<&str> = registry.definitions().map(|d| d.name.as_str()).collect();
    let shown = truncated(name);
    ErrorData::invalid_params(
        format!(
            "unknown tool \"{}\"; the tools are: {}",
            shown.escape_debug(),
            names.join(", ")
        ),
        Some(json!({ "tool": shown })),
    )
}
