//! [`McpServer`]: the rmcp `ServerHandler` that serves a [`Registry`].

use std::borrow::Cow;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CustomRequest, CustomResult, ErrorCode,
    Implementation, ListToolsResult, PaginatedRequestParams, ProtocolVersion, ServerCapabilities,
    ServerConfig, Tool as McpTool,
};
use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::service::{Peer, RequestContext};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::json;
use tokio::sync::mpsc;

use super::call_result;
use super::cards::{CARDS_KEY, Cards};
use crate::sent::Sent;
use toolprism_core::dialect::mcp as dialect;
use toolprism_core::log::SessionLog;
use toolprism_core::{CallOptions, Progress, Registry, ToolCall, ToolOutcome};

/// The default limit on one incoming message: 4 MiB, the limit rmcp's
/// Streamable HTTP server applies to a request body.
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 4 * 1024 * 1024;

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
    /// Who may connect over HTTP, and the limits there (W3).
    pub(crate) http: crate::limits::HttpSettings,
}

impl std::fmt::Debug for McpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpServer")
            .field("tools", &self.shared.modern.len())
            .field("server_info", &self.info.server_info)
            .field("max_message_bytes", &self.max_message_bytes)
            .field("cards", &self.cards)
            .field("log", &self.log.as_ref().map(SessionLog::path))
            .field("session", &self.session)
            .finish_non_exhaustive()
    }
}

/// What every clone shares: the registry and its two `tools/list` shapes.
struct Shared {
    registry: Registry,
    /// Whether a call's warning (a session log that could not be written)
    /// has been reported on stderr: once per server, not per call.
    warned: AtomicBool,
    /// `tools/list` for clients before 2026-07-28 (object-root output schemas).
    legacy: Arc<[McpTool]>,
    /// `tools/list` for 2026-07-28 and later.
    modern: Arc<[McpTool]>,
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
        let listing = |version: &str| -> Arc<[McpTool]> {
            registry
                .definitions()
                .map(|def| {
                    serde_json::from_value(dialect::tool(def, version)).unwrap_or_else(|e| {
                        // The dialect builds every entry from a definition
                        // the registry accepted; a shape rmcp refuses is a
                        // bug in this crate, not in the user's tool.
                        panic!("the MCP entry of tool \"{}\" is malformed: {e}", def.name)
                    })
                })
                .collect()
        };
        let (legacy, modern) = (listing(LEGACY), listing(MODERN));
        let info = ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("toolprism", env!("CARGO_PKG_VERSION")));
        let server = McpServer {
            shared: Arc::new(Shared {
                registry,
                warned: AtomicBool::new(false),
                legacy,
                modern,
            }),
            info,
            max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
            cards: Cards::Never,
            log: None,
            session: next_session(),
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

    /// The largest message accepted, in bytes.
    pub fn max_message_bytes(&self) -> usize {
        self.max_message_bytes
    }

    /// The registry served.
    pub fn registry(&self) -> &Registry {
        &self.shared.registry
    }

    /// The same server under a new session tag, for a new connection.
    pub(super) fn for_new_session(&self) -> Self {
        McpServer {
            session: next_session(),
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
            None => format!("{}:{}", self.session, context.id),
        }
    }

    fn tools(&self, version: Option<&ProtocolVersion>) -> &Arc<[McpTool]> {
        if is_modern(version) {
            &self.shared.modern
        } else {
            &self.shared.legacy
        }
    }
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        self.info.clone()
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let version = context.protocol_version();
        Ok(ListToolsResult::with_all_items(
            self.tools(version.as_ref()).to_vec(),
        ))
    }

    fn get_tool(&self, name: &str) -> Option<McpTool> {
        self.shared
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
        let registry = &self.shared.registry;
        let version = context.protocol_version();
        let call = ToolCall::new(
            self.call_id(&context),
            request.name.as_ref(),
            arguments_as_sent(&request, &context)?,
        );
        let mut options = CallOptions::new().with_cancel(context.ct.clone());
        // W3: the caller the HTTP transport verified, for policies and tools.
        options = crate::auth::with_caller(options, &context);
        if let Some(log) = &self.log {
            options = options.with_log(log.clone());
        }
        let outcome = match context.meta.get_progress_token() {
            None => registry.call_with(call, &options).await,
            Some(token) => {
                let (reports, received) = mpsc::unbounded_channel();
                let options = options.with_progress(move |p: &Progress| {
                    // Fails only once the call is over (a report from work
                    // the tool left running): nobody is listening then.
                    let _ = reports.send(p.clone());
                });
                let call = registry.call_with(call, &options);
                forward_progress(call, received, token, &context.peer).await
            }
        };
        if let Some(warning) = outcome.warnings().first()
            && !self.shared.warned.swap(true, Ordering::Relaxed)
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
            return Err(unknown_tool(&request.name, registry));
        };
        Ok(CallToolResponse::from(call_result::call_tool_result(
            definition,
            outcome,
            dialect_version(version.as_ref()),
            self.cards.wanted(&context),
        )))
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

/// Runs `call` to its end while sending each progress report it makes to
/// `peer` as a `notifications/progress` for `token`, in the order made.
///
/// One task does both, so every report made before the call returned has
/// been handed to the transport before the response is: a client sees all
/// of a call's notifications, then its result (over HTTP they travel on
/// the request's own stream, which the response closes). A report that
/// cannot be sent (the client left) is dropped; the call goes on.
async fn forward_progress(
    call: impl Future<Output = ToolOutcome>,
    mut received: mpsc::UnboundedReceiver<Progress>,
    token: ProgressToken,
    peer: &Peer<RoleServer>,
) -> ToolOutcome {
    let notify = |report: Progress| {
        let mut param = ProgressNotificationParam::new(token.clone(), report.done as f64);
        param.total = report.total.map(|t| t as f64);
        param.message = report.message;
        async move {
            let _ = peer.notify_progress(param).await;
        }
    };
    let mut call = std::pin::pin!(call);
    let outcome = loop {
        tokio::select! {
            biased;
            Some(report) = received.recv() => notify(report).await,
            outcome = &mut call => break outcome,
        }
    };
    // The reports made between the last one sent and the call's end.
    received.close();
    while let Ok(report) = received.try_recv() {
        notify(report).await;
    }
    outcome
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
