//! Serve a [`Registry`] to MCP clients (Claude Code, Claude Desktop, Cursor,
//! any Model Context Protocol client) over stdio or Streamable HTTP.
//!
//! Behind the cargo feature `mcp`. [rmcp], the official Rust SDK, is
//! the protocol engine: it negotiates versions, routes requests and
//! cancellations, and serves HTTP sessions; this module maps the registry
//! onto it and adds nothing to the wire that the contract does not need.
//!
//! ```no_run
//! # use toolprism::{ContentBlock, NoMeta, Tool, ToolContext, ToolError, ToolInfo};
//! # #[derive(Clone, serde::Deserialize, schemars::JsonSchema)] struct A { n: i64 }
//! # struct Double;
//! # impl Tool for Double {
//! #     type Args = A; type Value = i64; type Meta = NoMeta;
//! #     const INFO: ToolInfo = ToolInfo::new("double", "Double n.");
//! #     async fn execute(&self, a: A, _: &ToolContext<'_>) -> Result<i64, ToolError> { Ok(a.n * 2) }
//! #     fn render(_: &A, v: &i64) -> Vec<ContentBlock> { vec![ContentBlock::text(v.to_string())] }
//! # }
//! #[tokio::main(flavor = "current_thread")]
//! async fn main() -> std::io::Result<()> {
//!     let registry = toolprism::Registry::builder().tool(Double).build().unwrap();
//!     // Until the client disconnects; only protocol messages go to stdout.
//!     toolprism::mcp::serve_stdio(registry).await
//! }
//! ```
//!
//! Entry points: [`serve_stdio`]; [`serve_http`] on a loopback address;
//! [`McpServer`] for options (server name, instructions, message limit,
//! [which clients get cards](McpServer::with_cards), [a session
//! log](McpServer::with_log), [authentication](McpServer::with_auth), the
//! [limits](#limits)) and for [`McpServer::http_service`], the tower service to mount in an HTTP
//! server of your own; [`McpServer::serve_io`] for any byte stream pair.
//!
//! # Who can reach what
//!
//! A tool server must not be one flag away from remote code execution (W3
//! in `docs/contract.md`). So:
//!
//! | transport | who can call the tools |
//! |---|---|
//! | stdio ([`serve_stdio`]) | the process that started the server, and nobody else |
//! | HTTP on a loopback address (`127.0.0.1`, `::1`, a name that resolves only to those) | every process on this machine; with [`McpServer::with_auth`], only those that present the token |
//! | HTTP on any other address (`0.0.0.0`, a LAN address, a public name) | **refused at start** unless the server has an authenticator ([`McpServer::with_auth`]): then only clients presenting a valid bearer token; or unless [`McpServer::allow_unauthenticated_network`] is called: then everyone who can reach the address, after a warning on stderr at every start |
//! | [`McpServer::http_service`] mounted in your own server | what your server lets through, then the token when the server authenticates; it cannot know its address: call [`McpServer::check_address`] with your listener's |
//!
//! Host names are resolved before deciding: a name that resolves to any
//! address other than loopback counts as that address. rmcp also checks
//! the `Host` header against loopback names by default (a defence against
//! DNS rebinding from a browser, not against a client that sends the
//! header it likes): behind a public name, list it in `allowed_hosts`.
//!
//! ```no_run
//! # async fn run(registry: toolprism::Registry) -> Result<(), Box<dyn std::error::Error>> {
//! use toolprism::mcp::{McpServer, StaticToken, StreamableHttpServerConfig};
//!
//! let token = StaticToken::from_env("TOOLPRISM_TOKEN")?; // 32 bytes or more: `openssl rand -hex 32`
//! let listener = tokio::net::TcpListener::bind("0.0.0.0:8765").await?;
//! let config = StreamableHttpServerConfig::default()
//!     .with_allowed_hosts(["tools.example.com", "tools.example.com:8765"]);
//! McpServer::new(registry).with_auth(token).serve_http(listener, config).await?;
//! # Ok(()) }
//! ```
//!
//! # Authentication
//!
//! Over Streamable HTTP the server is an OAuth 2.1 resource server, as the
//! MCP authorization specification (2025-11-25) describes:
//!
//! - every request to `/mcp` must carry `Authorization: Bearer <token>`;
//!   it is verified before the body is read, so a request without a valid
//!   token runs nothing;
//! - a missing, wrong, expired or malformed token is `401 Unauthorized`
//!   with `WWW-Authenticate: Bearer resource_metadata="<url>"` (RFC 6750,
//!   RFC 9728), `error="invalid_token"` when a token was refused, and a
//!   JSON-RPC error body ([`REFUSED`], reason `"unauthorized"`); a token the
//!   verifier finds short of a scope is `403` with
//!   `error="insufficient_scope"` ([`Refusal::insufficient_scope`]);
//! - a token in the URL (`?access_token=`) is refused with `401`, even next
//!   to a good header, and never accepted: URLs end up in logs;
//! - the protected-resource metadata (RFC 9728) is served without a
//!   credential at `/.well-known/oauth-protected-resource` and
//!   `/.well-known/oauth-protected-resource/mcp`, as JSON: `resource`
//!   ([`BearerAuth::with_resource`], else `http://<Host>/mcp`),
//!   `bearer_methods_supported: ["header"]`, and `authorization_servers`
//!   and `scopes_supported` when configured.
//!
//! Tokens are verified by a [`StaticToken`] (one shared secret, compared in
//! constant time with the `subtle` crate; read it from the environment or a
//! file, at least [`StaticToken::MIN_LEN`] bytes) or by your own
//! [`Authenticator`] (async: check a JWT, ask an introspection endpoint),
//! which returns the verified [`Caller`](toolprism_core::Caller) or a
//! [`Refusal`]. The caller goes to the registry with each of its calls
//! ([`CallOptions::with_caller`](toolprism_core::CallOptions::with_caller)),
//! where pre-execute policies ([`PreExecute::caller`](toolprism_core::PreExecute::caller))
//! and tools ([`ToolContext::caller`](toolprism_core::ToolContext::caller))
//! see it: allow or deny per caller there. A session belongs to the caller
//! that opened it: another caller using its id gets `404`.
//!
//! # Limits
//!
//! Nothing a client sends makes the server hold unbounded memory. Each
//! limit is a setting of [`McpServer`], and each refusal is an HTTP status
//! with a JSON-RPC error body: code [`REFUSED`], a one-line message, and
//! `data.reason` naming the limit (MCP clients surface it as that
//! request's error).
//!
//! | limit | default | past it |
//! |---|---|---|
//! | [body of one request](McpServer::with_max_message_bytes) | 4 MiB ([`DEFAULT_MAX_MESSAGE_BYTES`]) | `413` (a 10 MB body is refused, unread past the limit) |
//! | [requests at once](McpServer::with_max_requests), from the first byte to the end of the response (a running call and an open `GET` stream hold one) | 256 ([`DEFAULT_MAX_REQUESTS`]) | `503`, `Retry-After: 1`, reason `max_requests` |
//! | [sessions](McpServer::with_max_sessions) (clients before `2026-07-28`, unless stateless) | 128 ([`DEFAULT_MAX_SESSIONS`]) | `503` for the `initialize`, reason `max_sessions` |
//! | [`tools/call` in flight in one session](McpServer::with_max_calls_per_session) | 16 ([`DEFAULT_MAX_CALLS_PER_SESSION`]) | `429` with the request's id, reason `max_calls_per_session`; the call never reaches the registry |
//! | [idle session](McpServer::with_session_idle_timeout): no request for that long and no `POST` being answered | 300 s ([`DEFAULT_SESSION_IDLE_TIMEOUT`]) | closed and freed; its id then gets `404` (a client starts a new session) |
//! | request head ([`McpServer::serve_http`] only) | 30 s | the connection is closed |
//!
//! So requests hold at most [`with_max_requests`](McpServer::with_max_requests)
//! times [`with_max_message_bytes`](McpServer::with_max_message_bytes) of
//! bodies (1 GiB with the defaults; lower either to lower it), sessions at
//! most their count times the few kilobytes rmcp keeps for one. Stateless
//! requests (every `2026-07-28` request) belong to no session: the request
//! limit bounds them. Over stdio only the message limit applies: its one
//! client started the server.
//!
//! # The mapping
//!
//! The canonical definition and outcome go through the MCP dialect
//! ([`toolprism_provider::dialect::mcp`]); the keys under `_meta` are namespaced
//! `toolprism/…`.
//!
//! | MCP | toolprism |
//! |---|---|
//! | `tools/list` entry | the dialect's projection of the [`ToolDefinition`](toolprism_core::ToolDefinition): name, title, description, input and output schema (`$schema` and non-standard `format`s removed: JSON Schema 2020-12 is MCP's default dialect, so the schema means the same without it, and a default Ajv instance, the validator of many JavaScript clients, refuses a schema that names 2020-12; `$defs`, `$ref` and `additionalProperties` stay), `annotations` with **all four hints sent explicitly** (MCP defaults `destructiveHint` and `openWorldHint` to true, toolprism to false), `_meta["toolprism/kind"]` = the [`ToolKind`](toolprism_core::ToolKind) |
//! | output schema whose root is not an object | protocol versions before `2026-07-28` require an object root: the schema is wrapped as `{"type":"object","properties":{"value":<schema>},"required":["value"],"additionalProperties":false}` with `_meta["toolprism/wrapped"] = "value"`; from `2026-07-28` on it goes as is |
//! | `tools/call` success | `content` = what `render` produced (text and image blocks), `structuredContent` = the validated value (`{"value": v}` where the schema was wrapped), `isError: false` |
//! | | `_meta["toolprism/meta"]` = the presentation meta when there is one, on every result; `_meta["toolprism/callCard"]` and `_meta["toolprism/resultCard"]` = the cards, **only for a client that asked** (see [Cards](#cards)) |
//! | `tools/call` failure (every toolprism error result: bad arguments, a failing or panicking tool, invalid output, denial, timeout, …) | `isError: true`, `content` = the model-facing message, `_meta["toolprism/errorCode"]` = the code (`INVALID_ARGS`, `TOOL_FAILED`, …) on every error result, the cards when asked for; **never `structuredContent`** (strict clients validate it even on errors) |
//! | `initialize` with `capabilities.experimental["toolprism/cards"]` (any object), or, at `2026-07-28`, the same in a request's `_meta["io.modelcontextprotocol/clientCapabilities"]` | the session's results carry the cards; the server's `initialize` answer declares the same experimental capability (unless [`Cards::Never`]) |
//! | `tools/call` with `_meta["toolprism/cards"]` = `true` / `false` | this call's result carries the cards / does not, whatever the session declared (under [`Cards::Never`], never) |
//! | a tool the registry does not hold | JSON-RPC error `-32602` (invalid params), as the specification says, naming the tools there are |
//! | `notifications/cancelled` for a running call | the call's cancellation token is cancelled; the call ends as `ABORTED` (or `ABORTED_BEFORE_DISPATCH`) in the registry and the session log; rmcp sends no response for a cancelled request, as the specification asks |
//! | `tools/call` whose `_meta` carries a `progressToken` | each [`ToolContext::report_progress`](toolprism_core::ToolContext::report_progress)`(done, total, message)` of the call becomes a `notifications/progress` with that `progressToken`, `progress` = `done`, `total` and `message` when given; in the order reported, and all of them before the call's response (over HTTP on the request's own stream); without a token the reports go nowhere |
//! | `tools/list` order | the registry's order (the order tools were registered), the same on every request |
//! | `capabilities.tools.listChanged` | `true`: [`McpServer::replace_registry`] swaps the registry served (a hub whose imported server changed its tools) and sends every session `notifications/tools/list_changed` |
//! | a tool's [`icon`](toolprism_core::ToolInfo::icon) | `icons: [{src, mimeType?}]` |
//! | a tool's [`task`](toolprism_core::ToolInfo::task) (`#[tool(task = "optional" \| "required")]`) | `_meta["toolprism/taskSupport"]` in `tools/list`, the tasks extension in the server's capabilities; a `2026-07-28` `tools/call` that declares the extension is answered with a task (`tasks/get`, `tasks/update`, `tasks/cancel`); see [Long-running tools and tasks](#long-running-tools-and-tasks) |
//! | `logging/setLevel` | the session's level; a tool's [`ToolContext::log`](toolprism_core::ToolContext::log) is a `notifications/message` (`logger` = the tool's name) at or above it; a session that set none gets none. At `2026-07-28`, the request's `_meta["io.modelcontextprotocol/logLevel"]` instead, per request. See [A call's client](#a-calls-client) |
//! | [`ToolContext::sample`](toolprism_core::ToolContext::sample) | `sampling/createMessage` to a client that declared `sampling`; else `CLIENT_UNAVAILABLE` at once |
//! | [`ToolContext::elicit`](toolprism_core::ToolContext::elicit) | `elicitation/create`, form mode, the schema as the tool wrote it, to a client that declared `elicitation` (form); else `CLIENT_UNAVAILABLE` at once |
//! | a call that needs approval ([`PreDecision::Ask`](toolprism_core::PreDecision::Ask), `#[tool(approval = …)]`) | an `elicitation/create` with the question and one boolean field, `approve`; a client that cannot elicit gets `NOT_APPROVED` at once |
//! | `traceparent`, `tracestate` in a request's `_meta` | fields of the call's `execute_tool` tracing span; with the feature `otel`, also the span's parent for OpenTelemetry (see [Logging](#logging)) |
//! | `initialize` with `capabilities.extensions["io.modelcontextprotocol/ui"]` (MCP Apps; `mimeTypes`, when listed, including `text/html;profile=mcp-app`), or, at `2026-07-28`, the same in a request's `_meta["io.modelcontextprotocol/clientCapabilities"]` | the answer declares the extension and `resources`; every `tools/list` entry carries `_meta.ui.resourceUri = "ui://toolprism/card"`; `resources/list` holds that card app and `resources/read` returns it ([`toolprism_html::card_app`]); every result carries its cards drawn for the app under `_meta["toolprism/view"]` ([`toolprism_html::card_view`]). Other clients get none of it |
//! | JSON-RPC request id | the toolprism call id is `<session>:<id>`, where the session is the HTTP `Mcp-Session-Id` when there is one, else a tag unique in the process (`s1`, `s2`, … one per stdio connection, legacy HTTP session or stateless request; with a shared [store](McpServer::with_store), prefixed with the replica's id, `3f9a0c2e71b4.s7`, so the logs of several replicas never share a call id), so session-log entries tie up with the client's requests |
//!
//! # Cards
//!
//! The call and result cards are for card-aware user interfaces. The
//! clients most people run (Claude Code, Claude Desktop, Cursor, the MCP
//! Inspector) show `content` and never read them, yet every client parses
//! a response's whole `_meta`; rmcp's Rust client parses it once for each
//! untagged result type it tries before `CallToolResult`, so two cards
//! make a small call's stdio round trip markedly slower than without them
//! (`cargo bench --manifest-path benches/Cargo.toml --bench mcp_stdio` measures both
//! against a plain rmcp server; the figures are in the repository's
//! `benches/RESULTS.md`). So by default
//! ([`Cards::OnRequest`]) the cards go only to clients that ask, for their
//! session through the experimental capability or for one call through
//! `_meta` (the table above; details on [`Cards`]);
//! [`McpServer::with_cards`] sends them always, or never. The
//! presentation meta and the error code, small, are on every result, and
//! the session log keeps the meta, from which a replay draws the cards
//! again.
//!
//! Deliberate differences from MCP's suggestions: the text content is what
//! `render` wrote for the model, not the serialized value (the value is in
//! `structuredContent`, which every client of `2025-06-18` or later reads),
//! and the call card carries the raw arguments, as in the session log.
//!
//! # A call's client
//!
//! W8 and W9 in `docs/contract.md`. The server hands every `tools/call`
//! a [`Client`](toolprism_core::client::Client) that speaks for the MCP
//! client: what the tool logs, and what it asks the client's model
//! (sampling) and user (elicitation, approvals), go to the client the way
//! its protocol version wants, and only what the client declared it can
//! answer is ever asked; the rest fails at once with
//! [`ClientError::Unavailable`](toolprism_core::client::ClientError::Unavailable),
//! so an approval becomes a clear `NOT_APPROVED`, never a hang.
//!
//! - **Before `2026-07-28`** (sessions opened with `initialize`), the
//!   requests are server-to-client requests, sent from the `tools/call`'s
//!   own task (over Streamable HTTP they travel on the call's own SSE
//!   stream); a blocking tool's requests cross a channel to that task. If
//!   no answer comes within [`McpServer::with_client_timeout`] (default
//!   [`DEFAULT_CLIENT_TIMEOUT`]) the tool gets
//!   [`ClientError::TimedOut`](toolprism_core::client::ClientError::TimedOut)
//!   and the client `notifications/cancelled`.
//! - **From `2026-07-28`**, where a server may send no requests, a call
//!   that asks answers `InputRequiredResult {inputRequests,
//!   requestState}` and waits, still running, in the server; the client's
//!   retry with `inputResponses` and the same `requestState` resumes it
//!   (`execute` runs once). The `requestState` is an unguessable id of
//!   that waiting call: one the server did not issue, already used or
//!   expired is a `-32602` error, and so is the retry of another caller
//!   than the call's. At most [`MAX_WAITING`] calls wait at once per
//!   process. With the default in-memory store the retry must reach the
//!   process that issued the `requestState`; with a shared
//!   [store](McpServer::with_store) any replica takes it and relays the
//!   round to the one running the call (see [Many replicas behind one
//!   URL](#many-replicas-behind-one-url)).
//! - **Log messages** (`notifications/message`) go only to a client that
//!   asked for them: `logging/setLevel` for the session (a new session
//!   starts with none; in stateless HTTP every request is a new session,
//!   so use the `2026-07-28` per-request level there), or a `2026-07-28`
//!   request's own `_meta` level. Over a legacy HTTP session they travel
//!   on the standalone GET stream, where rmcp puts every notification but
//!   progress.
//! - **Stateless legacy HTTP** cannot carry server-to-client requests (the
//!   client's answer would be a POST of its own, which a stateless server
//!   refuses), and forgets `initialize`: there, a legacy client is one that
//!   declared nothing, and is never asked. `2026-07-28` clients are asked
//!   through `InputRequiredResult` everywhere.
//!
//! A call that makes no request pays nothing for this: with a client that
//! declared no sampling or elicitation and set no level, the call is given
//! no client at all.
//!
//! # Long-running tools and tasks
//!
//! W10 in `docs/contract.md`. MCP's tasks extension
//! (`io.modelcontextprotocol/tasks`, SEP-2663, protocol `2026-07-28`) lets
//! a server answer a `tools/call` with a task handle the client polls. The
//! server decides, per call; the client only says it can take one. The
//! policy here:
//!
//! - **A tool opts in**, never the server for it:
//!   `#[tool(task = "optional")]` or `"required"`
//!   ([`ToolInfo::task`](toolprism_core::ToolInfo::task),
//!   [`TaskSupport`](toolprism_core::TaskSupport)). Every other tool, and
//!   every imported or dynamic tool, is answered inline, as before. A tool
//!   that opts in says so in `tools/list` as `_meta["toolprism/taskSupport"]`
//!   (`"optional"` / `"required"`), not as the `execution.taskSupport` of
//!   the 2025-11-25 tasks, which the extension replaced (rmcp's `Tool` has
//!   no such field, and a 2025-11-25 client reading it would ask for a task
//!   in a way no longer served).
//! - **The server advertises the extension** (`capabilities.extensions
//!   ["io.modelcontextprotocol/tasks"]`, in `server/discover` and
//!   `initialize`) only when a tool opted in; `tasks/*` are otherwise
//!   unknown methods (`-32601`).
//! - **A task, when the request can take one**: a `2026-07-28` request
//!   that declares the extension in its `_meta` capabilities. The call is
//!   answered at once with `CreateTaskResult` (`resultType: "task"`,
//!   `status: "working"`, `ttlMs`, `pollIntervalMs: 500`) and runs on in
//!   the background, through the same pipeline.
//! - **Otherwise inline**, exactly as today, for an `optional` tool (a
//!   client that knows nothing of tasks works unchanged; so does a
//!   `2025-11-25` session, even one that declared the extension at
//!   `initialize`: the extension is `2026-07-28`'s). A `required` tool
//!   refuses such a call with `-32021` (missing required client
//!   capability, naming the extension) and never runs it.
//!
//! | the call's life | the task |
//! |---|---|
//! | running | `working` |
//! | a [`report_progress`](toolprism_core::ToolContext::report_progress)`(done, total, message)` | `statusMessage` = `done/total: message` (the parts given); the extension carries no `notifications/progress` for a task |
//! | waiting for its client ([`sample`](toolprism_core::ToolContext::sample), [`elicit`](toolprism_core::ToolContext::elicit), an approval) | `input_required`, the requests in `inputRequests` (keys `elicitation-1`, `sampling-2`, …, never reused); `tasks/update` with `inputResponses` answers them (unknown or answered keys are ignored) and the task is `working` again. What the request's capabilities did not declare fails at once, as inline |
//! | ended with an outcome, success or error result | `completed`, `result` = the `CallToolResult` the inline call would have answered (same `content`, `structuredContent`, `isError`, `_meta` with the meta, error code and the cards as the request asked) |
//! | `tasks/cancel` | the call's cancellation token is cancelled, as `notifications/cancelled` cancels an inline call; the call ends `ABORTED` (logged as any cancelled call) and the task `cancelled`. A call that ends anyway before it sees the cancellation is `completed`; an ended task stays as it is |
//! | still running [`task_ttl`](McpServer::with_task_ttl) after it started | cancelled the same way (`ABORTED` in the log), and `failed` with a `-32603` error saying so |
//! | its task failed (a panic past the registry: never) | `failed` |
//! | log messages ([`ToolContext::log`](toolprism_core::ToolContext::log)) | none: the extension carries none for a task |
//!
//! The call is written to the session log once, like an inline call,
//! under the call id of its `tools/call`. **Bounds**: a task, running or
//! ended, is held in the server's [store](McpServer::with_store): in the
//! process that answered its `tools/call` by default (a `tasks/get` must
//! reach that process), in Redis with `Store::redis` (any replica
//! answers it, see [Many replicas behind one URL](#many-replicas-behind-one-url)).
//! The store holds at most [`MAX_TASKS`] at once; when full, the task that
//! ended longest ago is forgotten first, and when all of them run, an
//! `optional` tool's call is answered inline and a `required` one's gets a
//! `-32603` error. An ended task is kept for the task ttl after it ended
//! ([`McpServer::with_task_ttl`], default [`DEFAULT_TASK_TTL`], 30
//! minutes; its `ttlMs`, counted from its creation, says until when), then
//! forgotten. A task id the store does not hold (never issued, forgotten,
//! or another caller's: with [authentication](#authentication) a task is
//! only its caller's) is `-32602` for `tasks/get`, `tasks/update` and
//! `tasks/cancel` alike. `tasks/*` from a request that does not declare
//! the extension are `-32021` (rmcp checks).
//!
//! The built-in `bash` does not opt in: its commands are killed after at
//! most two minutes (`timeoutMs`, default 10 s) and it reports no
//! progress, so its call fits in a request, and an agent waits for its
//! output before its next step anyway; a task would add a poll to every
//! command and give nothing a `notifications/cancelled` does not. Tasks
//! are for work that outlasts a request (a build, a test suite, a batch
//! job): such a tool says `task = "optional"`.
//!
//! # Protocol versions
//!
//! rmcp negotiates: `initialize` sessions up to `2025-11-25`, and the
//! per-request `_meta` lifecycle of `2026-07-28`. Each request is answered in
//! the shape of its own version, so one server serves both at once.
//!
//! # Malformed input
//!
//! Every message that is not one gets a protocol error and the server goes
//! on serving. Over stdio: not JSON (nested deeper than serde_json reads
//! counts as not JSON) → `-32700`; JSON that is not a JSON-RPC message →
//! `-32600`, with its id when it has one; a message over the limit
//! ([`DEFAULT_MAX_MESSAGE_BYTES`], 4 MiB, see
//! [`McpServer::with_max_message_bytes`]) → `-32600` with its id (a line over
//! four times the limit is skipped unread, and answered without one); a
//! notification nobody knows → nothing, as JSON-RPC wants. On any
//! transport: a known method whose params do not parse (`tools/call`
//! without a string `name`) → `-32602`; an unknown method → `-32601`. Over
//! HTTP, rmcp answers before the message reaches the server: a body that is
//! not a JSON-RPC message → `415`, one over the limit → `413`, a wrong
//! `Accept` → `406`, another path than `/mcp` → `404`. Arguments that parse
//! but break the tool's input schema (or nest deeper than the registry reads) are
//! no protocol error: they are an `INVALID_ARGS` result the model can act on.
//!
//! # Stateless HTTP, several processes
//!
//! `2026-07-28` is stateless by design: every request carries its version
//! and capabilities, so any server process can answer it. For older clients
//! rmcp keeps a session per `initialize` in the process that answered it,
//! unless the service runs **stateless** (`legacy_session_mode = false` in
//! [`StreamableHttpServerConfig`]): then every POST is served on its own,
//! the protocol version coming from the `MCP-Protocol-Version` header, no
//! `Mcp-Session-Id` is issued, and nothing is kept between requests. Such
//! processes can sit behind any HTTP load balancer (round robin, least
//! connections; no sticky sessions) and serve the same tools:
//!
//! ```text
//!                      ┌─► server A  (same registry, stateless)  ─► its own session log
//! clients ─► balancer ─┤
//!                      └─► server B  (same registry, stateless)  ─► its own session log
//! ```
//!
//! What stateless mode gives up, for legacy clients only: server-to-client
//! requests (sampling, elicitation and approvals: such a client is never
//! asked) and notifications outside a request (log messages), and
//! `notifications/cancelled`, which arrives as a POST of its own that may
//! reach another process (cancellation by closing the request's HTTP
//! connection still works, and is how `2026-07-28` clients cancel).
//! Progress notifications travel on the request's own SSE stream and keep
//! working; sampling and elicitation do not, before `2026-07-28` (see [A
//! call's client](#a-calls-client)). Tools that keep state across calls (a database, files) must
//! share it outside the processes, as behind any balancer; each process
//! writes its own session log, with call ids that stay unique per process.
//! Tasks, calls waiting for input and sessions need a shared store: see
//! [Many replicas behind one URL](#many-replicas-behind-one-url).
//! The `Host` header is checked against loopback names by default; behind a
//! balancer, list the public host names in `allowed_hosts`. Every process
//! needs the same [authenticator](McpServer::with_auth) (a shared
//! [`StaticToken`], or verifiers of the same issuer's tokens).
//!
//! # Many replicas behind one URL
//!
//! W16 in `docs/contract.md`. Stateless processes share plain calls; what
//! lives across requests (a task, a call waiting for its client's answer,
//! a legacy session) needs a [`Store`] they share: `Store::redis` (cargo
//! feature **`redis`**; `serve --store redis://HOST:PORT`) given to every
//! replica with [`McpServer::with_store`]. Then:
//!
//! | what | where it lives | what any replica does |
//! |---|---|---|
//! | a task | the store: status, status message, pending input requests, result, ttl, the verified caller; the call itself runs where its `tools/call` landed | answers `tasks/get`; takes `tasks/update` answers and `tasks/cancel`, which reach the running call through its replica's inbox in the store |
//! | a call waiting for input (`requestState`, `2026-07-28`) | the call in the process that ran its first round; in the store, which process, for whom, and the call the retry must repeat | takes the retry (good once, only from the call's caller) and relays the round: the answers go to the running process, which drives the call on and sends back what the call tells its client (log messages, progress) and the round's end (the result, or the next requests under a new `requestState`); if the retry's request goes away, the call is cancelled |
//! | a legacy session (`initialize`, `Mcp-Session-Id`) | rmcp's session store (the `initialize` params) and its caller, for the session idle timeout after its last request | restores it from the store (rmcp replays the `initialize`) and serves its requests, to its caller only |
//!
//! **A replica that dies.** Each replica renews a lease in the store (every
//! third of [`McpServer::with_lease`], default [`DEFAULT_LEASE`], 10 s). A
//! running task whose replica has not renewed it is first noted by a
//! `tasks/get`, and failed by one a lease later: it ends `failed` (a
//! `-32603` error saying the server running it stopped), within two
//! leases and a poll of the replica's death, never stuck `working`; a
//! relayed retry waiting for it gets the same error. The grace of one
//! lease keeps a replica that only lost the store for a moment (a Redis
//! restart) from seeing its tasks failed.
//!
//! **The store that goes away.** What needs it gets a clear error at once,
//! naming the store: `tasks/*` a JSON-RPC `-32603` error, a `required`
//! task tool `-32603`, a call that asks for input `-32603` (its
//! `requestState` could not be shared; the call is cancelled), a legacy
//! session another replica opened `503`; a call of an `optional` task tool
//! runs inline (it needs no store then). Inline calls are served as
//! usual. Each replica reconnects by itself (the `redis` crate's connection
//! manager) at its next use of the store; a task's end is written again
//! until the store takes it (its replica writes the whole task again if the
//! store lost it: Redis restarted without persistence), and the lease is
//! renewed at once. Run Redis with persistence (`appendonly yes`) to keep
//! the tasks made while a Redis restart lasts.
//!
//! **Set-up**: the same registry, authenticator and store on every replica,
//! `--stateless` or not (a legacy session is restored either way; in
//! stateless mode there is none), any balancer (round robin, no sticky
//! sessions):
//!
//! ```text
//!                      ┌─► replica A ─► a.jsonl ┐
//! clients ─► balancer ─┼─► replica B ─► b.jsonl ├─► Redis: tasks, waiting calls, sessions, leases, inboxes
//!                      └─► replica C ─► c.jsonl ┘
//! ```
//!
//! ```no_run
//! # async fn run(registry: toolprism::Registry) -> Result<(), Box<dyn std::error::Error>> {
//! use toolprism::mcp::{McpServer, Store, StreamableHttpServerConfig};
//!
//! let store = Store::redis("redis://10.0.0.5:6379").await?;
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:8001").await?;
//! let config = StreamableHttpServerConfig::default().with_legacy_session_mode(false);
//! McpServer::new(registry).with_store(store).serve_http(listener, config).await?;
//! # Ok(()) }
//! ```
//!
//! Each replica writes its own session log; call ids carry the replica's
//! id, every event its time, and `replay a.jsonl b.jsonl c.jsonl`
//! ([`replay_logs`](toolprism_core::replay::replay_logs)) draws them as one
//! session. What it does not do: a legacy (`2025-11-25`) session's
//! server-to-client requests (sampling, elicitation, approvals) are
//! answered by a POST that may reach another replica, which does not know
//! the request: route on `Mcp-Session-Id` if your tools ask legacy clients
//! (a `2026-07-28` client needs no routing); a legacy session's
//! `logging/setLevel` is not carried to another replica;
//! `notifications/cancelled` of a legacy stateless request reaches
//! whichever replica the balancer picks (a closed connection still cancels
//! the call, and `tasks/cancel` reaches any task). The Redis store uses
//! Lua scripts on keys they do not declare, so it needs one Redis (with
//! its replicas and Sentinel if you like), not Redis Cluster; and plain TCP
//! (no TLS).
//!
//! # Logging
//!
//! stdout carries only protocol messages. rmcp reports through `tracing`;
//! install a subscriber writing to stderr to see it. Each `tools/call` runs
//! in one span: the pipeline's `execute_tool` span (OpenTelemetry GenAI,
//! [`toolprism_core::telemetry`]), opened by the server with MCP's
//! attributes added, so no second span wraps the tool (the MCP semantic
//! conventions' rule), of kind `server`: `mcp.method.name` (`tools/call`),
//! `mcp.protocol.version`, `mcp.session.id` (over HTTP),
//! `jsonrpc.request.id`, `network.transport` (`tcp` or `pipe`) and, when
//! the request's `_meta` carries them, `traceparent` and `tracestate` (W3C
//! Trace Context, SEP-414), beside the pipeline's `gen_ai.*` fields and
//! `error.type`. That records which trace the client's request belongs
//! to. With the feature **`otel`** (off by default), the trace
//! context they carry, read by OpenTelemetry's W3C TraceContext
//! propagator, is also made the span's parent
//! (`tracing_opentelemetry::OpenTelemetrySpanExt::set_parent`), so a
//! subscriber with a `tracing-opentelemetry` layer exports the call's span
//! in the client's trace, as a child of the client's span (a malformed
//! `traceparent` gives no parent). The feature adds ten crates
//! (`opentelemetry`, `opentelemetry_sdk`, `tracing-opentelemetry`,
//! `tracing-subscriber` and their dependencies, with default features
//! off) and no second `syn`. Without it, the span is not a child of that
//! trace: with no OpenTelemetry layer, `tracing` spans have no trace ids
//! to join. The session log is
//! the registry's own ([`RegistryBuilder::log`](toolprism_core::RegistryBuilder::log)),
//! which sees nested calls too, or one given to [`McpServer::with_log`] for
//! a registry built without. This module prints only two things, both on
//! stderr: that log's first failed write, and the warning of a start
//! without authentication on an address other machines can reach.

mod app;
mod auth;
mod call_result;
mod cards;
mod client;
mod drive;
mod exposure;
mod handler;
mod http;
#[cfg(feature = "client")]
#[cfg_attr(docsrs, doc(cfg(feature = "client")))]
pub mod import;
mod input;
mod limits;
mod replica;
mod sent;
mod served;
mod stdio;
mod store;

use std::io;

use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpListener, ToSocketAddrs};

pub use auth::{
    AuthError, Authenticator, BearerAuth, PROTECTED_RESOURCE_PATH, Refusal, StaticToken,
};
pub use cards::Cards;
pub use exposure::is_loopback;
pub use handler::tasks::{DEFAULT_TASK_TTL, MAX_TASKS};
pub use handler::{DEFAULT_CLIENT_TIMEOUT, DEFAULT_MAX_MESSAGE_BYTES, McpServer};
pub use http::{HttpResponse, HttpService, MCP_PATH};
pub use input::MAX_WAITING;
pub use limits::{
    DEFAULT_MAX_CALLS_PER_SESSION, DEFAULT_MAX_REQUESTS, DEFAULT_MAX_SESSIONS,
    DEFAULT_SESSION_IDLE_TIMEOUT, REFUSED,
};
pub use replica::DEFAULT_LEASE;
/// rmcp's configuration of a Streamable HTTP service (sessions or
/// stateless, allowed hosts and origins, keep-alive): the one rmcp type
/// this crate's API names, re-exported so that a user needs no rmcp
/// dependency of their own. It follows rmcp 3.x, which this crate is built
/// on; a new rmcp major is a new major of this crate.
pub use rmcp::transport::streamable_http_server::StreamableHttpServerConfig;
pub use store::{Store, StoreError};

use toolprism_core::Registry;

/// Serves `registry` over stdio (MCP's framing: one JSON-RPC message per
/// line) until the client closes stdin. Only protocol messages are written
/// to stdout.
pub async fn serve_stdio(registry: Registry) -> io::Result<()> {
    McpServer::new(registry).serve_stdio().await
}

/// Serves `registry` over Streamable HTTP at `http://<addr>/mcp`, with
/// rmcp's default configuration (sessions for clients before `2026-07-28`,
/// only loopback `Host` names accepted) and the default [limits](#limits).
/// Returns only if binding fails, or at once when `addr` is not loopback
/// (a host name is resolved first, and every address it resolves to must
/// be): this server has no authenticator. To serve other machines, build an
/// [`McpServer`] [with one](McpServer::with_auth).
///
/// ```no_run
/// # async fn run(registry: toolprism::Registry) -> std::io::Result<()> {
/// toolprism::mcp::serve_http(registry, "127.0.0.1:8765").await
/// # }
/// ```
pub async fn serve_http(registry: Registry, addr: impl ToSocketAddrs) -> io::Result<()> {
    let server = McpServer::new(registry);
    let addrs: Vec<std::net::SocketAddr> = tokio::net::lookup_host(addr).await?.collect();
    for addr in &addrs {
        server.check_address(*addr)?;
    }
    let listener = TcpListener::bind(addrs.as_slice()).await?;
    server
        .serve_http(listener, StreamableHttpServerConfig::default())
        .await
}

impl McpServer {
    /// Serves this server over stdio until the client closes stdin.
    ///
    /// When stdin and stdout are pipes (how a client starts a stdio
    /// server), they are read and written through the runtime's I/O driver,
    /// set non-blocking, with no thread hop per message; they are set back
    /// to blocking when serving ends. Otherwise (a terminal, a file, or a
    /// runtime without I/O enabled, which tokio reports with a panic
    /// message on stderr as it is found) they go through tokio's `stdin()`
    /// and `stdout()`, which hand every read and write to a blocking
    /// thread.
    pub async fn serve_stdio(self) -> io::Result<()> {
        #[cfg(unix)]
        if let Some((read, write, _blocking_again)) = stdio::pipes() {
            return self.serve_io(read, write).await;
        }
        self.serve_io(tokio::io::stdin(), tokio::io::stdout()).await
    }

    /// Serves one client over a byte stream pair with MCP's stdio framing
    /// (one JSON-RPC message per line), until `read` ends. A client that
    /// leaves before `initialize` is a normal end, not an error.
    pub async fn serve_io<R, W>(self, read: R, write: W) -> io::Result<()>
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        use rmcp::service::ServerInitializeError;
        let transport = stdio::LineTransport::new(read, write, self.max_message_bytes());
        let running = match rmcp::serve_server(self.for_new_session(), transport).await {
            Ok(running) => running,
            Err(ServerInitializeError::ConnectionClosed(_) | ServerInitializeError::Cancelled) => {
                return Ok(());
            }
            Err(e) => return Err(io::Error::other(e)),
        };
        running.waiting().await.map_err(io::Error::other)?;
        Ok(())
    }
}
