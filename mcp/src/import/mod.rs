//! Tools of other MCP servers, imported into a [`Registry`](toolprism_core::Registry) as tools like
//! any other (P7 in `docs/contract.md`).
//!
//! Behind the cargo feature `import` of `toolprism` (`client` and
//! `client-http` of this crate; a server-only build compiles no client).
//! Connect to a server over stdio (a command) or Streamable HTTP (a URL),
//! list its tools (every page), and register them: each is a
//! [`DynamicTool`](toolprism_core::DynamicTool), so the registry's pipeline
//! runs it rule for rule: arguments checked against the server's input
//! schema **before anything is sent**, the value checked against its output
//! schema, policies, timeouts, cancellation, progress, the session log
//! (never the value) and replay.
//!
//! ```no_run
//! use toolprism::mcp::import::Import;
//! use toolprism::{Registry, ToolCall};
//!
//! #[tokio::main]
//! async fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     let fs = Import::stdio("npx", ["-y", "@modelcontextprotocol/server-filesystem", "."])
//!         .prefix("fs")
//!         .connect()
//!         .await?;
//!     let registry = fs.register_in(Registry::builder()).build()?;
//!     let out = registry
//!         .call(ToolCall::new("c1", "fs__read_text_file", r#"{"path":"README.md"}"#))
//!         .await;
//!     println!("{}", toolprism::content_text(out.content()));
//!     Ok(())
//! }
//! ```
//!
//! A command line built with `toolprism::cli` takes `--import 'CMD ARGS…'`,
//! `--import https://…/mcp` and `--mcp-config PATH` (the `mcpServers` file of
//! MCP clients, read by [`McpConfig`]); `serve` then serves the imported
//! tools next to the program's own: a hub.
//!
//! # The mapping
//!
//! | MCP (`tools/list`, `tools/call`) | toolprism |
//! |---|---|
//! | tool `name` | the name, after [`Import::rename`] and `<prefix>__` ([`Import::prefix`]); a name outside `[A-Za-z0-9_-]{1,64}` fails [`Import::connect`], naming the tool and the remedies |
//! | `title` (or `annotations.title`), `description`, `inputSchema` | the same in the [`DynamicDefinition`](toolprism_core::DynamicDefinition) |
//! | `outputSchema` | the output schema; a toolprism server's wrapped schema (`_meta["toolprism/wrapped"]`) is unwrapped, so the value is the tool's own; none → [`content_value_schema`](toolprism_core::content_value_schema), the schema of the value below (so Code Mode types it, `{ content: ToolContent[] }`), re-served with no `outputSchema` and no `structuredContent` |
//! | `annotations` hints | [`ToolAnnotations`](toolprism_core::ToolAnnotations) with MCP's defaults for the missing ones (`destructiveHint` and `openWorldHint` default to true, and toolprism re-serves all four explicitly) |
//! | | the [kind](#kinds) |
//! | `_meta` | [`ImportedTool::meta`]; see [Meta](#meta) |
//! | arguments | sent as the pipeline read and checked them: a call whose arguments break the input schema is `INVALID_ARGS` and never reaches the server |
//! | result `content` | what the model reads: every block kind (text, image, audio, embedded resource, resource link) as the same [`ContentBlock`](toolprism_core::ContentBlock); a block's `annotations` and `_meta` are dropped |
//! | `structuredContent`, when the tool declares an output schema | the value, checked against that schema (`INVALID_TOOL_OUTPUT` when it breaks it, or is missing) |
//! | no output schema declared | the value is `{"content": [<the content blocks as JSON>]}` ([`content_value`](toolprism_core::content_value)); a `structuredContent` the server sends anyway is not part of it |
//! | `isError: true` | an error result: the code is `_meta["toolprism/errorCode"]` when the server sends one (a toolprism server does), else [`TOOL_ERROR`]; the message is the content's text |
//! | a JSON-RPC error answer | [`SERVER_ERROR`] |
//! | the server dies or closes the connection mid-call | [`SERVER_GONE`]; the next call starts it again (a new process, or a new HTTP session) |
//! | the server cannot be started again | [`SERVER_UNAVAILABLE`], at once; attempts follow a backoff from 250 ms doubling to 30 s, the first one at the next call after a death |
//! | the call's timeout (the tool's, from [`Import::timeout`], else the registry's default) or its cancellation | `TIMEOUT` / `ABORTED` from the pipeline; the server is sent `notifications/cancelled` for the request |
//! | `notifications/progress` for the request | [`ToolContext::report_progress`](toolprism_core::ToolContext::report_progress), in order: whole numbers as they are; a call counting in fractions of its total (or to a total of 1) in percent, from its first such report to its end |
//! | cards | the generic cards (title, kind, raw input, content), unless a [`Presenter`] is attached by name ([`Import::present`]) |
//! | `notifications/tools/list_changed`, or the server started again | its tools listed again, named as when connecting ([`Imported::tools`]), and [`ImportEvent::ToolsChanged`]; a list toolprism refuses keeps the tools there were ([`ImportEvent::RefreshFailed`]) |
//! | `notifications/message` | to the client of the one call waiting on the server, logger `<server>/<its logger>` ([`ToolContext::log_as`](toolprism_core::ToolContext::log_as)), else [`ImportEvent::Log`] |
//! | `sampling/createMessage`, `elicitation/create` (form) | asked of the client of the one call waiting on the server ([`ToolContext::sample`](toolprism_core::ToolContext::sample), [`elicit`](toolprism_core::ToolContext::elicit)), its answer sent back; refused with an error saying why when no call or several wait, or when that client cannot answer (URL elicitation is refused) |
//! | `roots/list` | refused: the client declares no roots |
//!
//! The client declares `sampling` and `elicitation` (form), which it
//! forwards, and no roots; it negotiates `2025-11-25` through
//! `initialize`, and asks a server that logs for every level
//! (`logging/setLevel debug`): the hub's clients filter by their own.
//!
//! # A hub
//!
//! A registry holds the tools it was built with. To follow a server that
//! changes its tools, build the registry again on
//! [`ImportEvent::ToolsChanged`] ([`Imports::events`]) and hand it to the
//! MCP server ([`McpServer::replace_registry`](crate::McpServer::replace_registry),
//! which tells every session); forward [`ImportEvent::Log`] with
//! [`McpServer::broadcast_log`](crate::McpServer::broadcast_log). A
//! `toolprism::cli` program's `serve` does both (W15 in
//! `docs/contract.md`).
//!
//! # Authorization
//!
//! Over HTTP, an import speaks HTTPS (rustls on ring: the platform's roots,
//! webpki's where the platform has none, and [`Import::ca`]), or plain
//! `http://` on this machine only unless [`Import::allow_insecure_http`].
//! A static token goes in a header ([`Import::bearer`]). A server that
//! answers `401` with `WWW-Authenticate: Bearer resource_metadata=…` is
//! authorized with OAuth 2.1 as the MCP authorization specification
//! (2025-11-25) says, when the import has an [`OAuth`] ([`Import::oauth`];
//! every HTTP import of a `toolprism::cli` command line does): metadata
//! discovery from the challenge (RFC 9728, then RFC 8414 or OpenID
//! discovery), the client's identity (pre-registered, a client ID metadata
//! document, or a dynamic registration), PKCE (S256), the `resource`
//! parameter (RFC 8707), scopes from the challenge or the resource's
//! metadata, a login in a browser back to a listener on `127.0.0.1`
//! ([`Browser`]) or the client credentials grant for a machine; then
//! refresh, and a wider authorization on `403 insufficient_scope`
//! ([`OAuth::max_step_ups`] per request). The flows are rmcp's (the
//! `oauth2` crate). Tokens are kept in one file per server that only its
//! owner can read ([`OAuth::token_dir`]), and never reach a log, a spill
//! file, an error or a `Debug`. A call the server refuses when no new
//! token can be had without a person is [`SERVER_UNAUTHORIZED`], its
//! message saying how to log in ([`Import::login`], `import login URL`).
//! W14 in `docs/contract.md`.
//!
//! # Kinds
//!
//! From the hints the server **set** (MCP's defaults say nothing about the
//! tool): read-only and open-world → `fetch`; read-only → `read`;
//! destructive → `edit` (MCP's `destructiveHint` covers overwriting as
//! well as deleting, and `delete` would claim more than the hint says);
//! open-world → `fetch`; none of these → `other`. A toolprism server's own
//! kind (`_meta["toolprism/kind"]`) wins, and [`Import::kind`] over both.
//!
//! # Meta
//!
//! The `_meta` of a server's `tools/list` entry is kept on the
//! [`ImportedTool`] ([`ImportedTool::meta`]), for code that knows that
//! server's keys. It is **not** re-served by a hub: its keys point at the
//! server's own world (an MCP App's `ui/resourceUri` names a resource only
//! that server serves), and re-serving them would promise what the hub
//! cannot keep. [`ToolDefinition`](toolprism_core::ToolDefinition) has no
//! `_meta` of its own for that reason.
//!
//! # Known limits
//!
//! - rmcp parses the server's messages with serde_json before this module
//!   sees them: a key the server writes twice keeps its last value, and an
//!   integer beyond 64 bits becomes a float. The lossless rules (C3) hold
//!   from there on.
//! - A request of the server (sampling, elicitation) or a log message while
//!   several calls wait on it cannot be told apart by call over stdio:
//!   the request is refused, the message goes to the events.
//! - A registry's tools are fixed when it is built: following a server's
//!   changes is building it again (see [A hub](#a-hub)).
//! - OAuth's `private_key_jwt` client authentication and enterprise-managed
//!   authorization (ID-JAG) are not offered.

mod config;
mod connection;
#[cfg(feature = "client-http")]
mod http;
#[cfg(feature = "client-http")]
mod oauth;
mod presenter;
mod relay;
mod source;
mod tool;

use std::collections::BTreeSet;
use std::fmt;
use std::sync::{Arc, PoisonError, RwLock};

use toolprism_core::RegistryBuilder;

pub use config::{McpConfig, split_command_line};
pub use connection::MAX_BACKOFF;
#[cfg(feature = "client-http")]
pub use oauth::{Browser, DEFAULT_LOGIN_TIMEOUT, DEFAULT_MAX_STEP_UPS, OAuth, SystemBrowser};
pub use presenter::Presenter;
pub use source::{DEFAULT_CONNECT_TIMEOUT, INHERITED_ENV, Import, PREFIX_SEPARATOR, Stderr};
pub use tool::{
    ImportedTool, META_ERROR_CODE, SERVER_ERROR, SERVER_GONE, SERVER_UNAUTHORIZED,
    SERVER_UNAVAILABLE, TOOL_ERROR,
};

/// Why an import failed: which server, and what went wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportError {
    server: String,
    message: String,
}

impl ImportError {
    fn new(server: impl Into<String>, message: impl Into<String>) -> Self {
        ImportError {
            server: server.into(),
            message: message.into(),
        }
    }

    /// The server, as [`Import::source`] shows it (or a configuration
    /// file's path).
    pub fn server(&self) -> &str {
        &self.server
    }

    /// What went wrong.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for ImportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "importing from {}: {}", self.server, self.message)
    }
}

impl std::error::Error for ImportError {}

/// The tools of one connected server, ready to be registered. Cheap to
/// clone; the connection (a child process, an HTTP session) lives as long
/// as a clone or a registered tool does.
///
/// The server may change its tools while connected
/// (`notifications/tools/list_changed`): [`tools`](Self::tools) and
/// [`register_in`](Self::register_in) then give the new ones, and
/// [`events`](Self::events) says so ([`ImportEvent::ToolsChanged`]). A
/// registry holds the tools it was built with: build it again to serve the
/// new ones (a `toolprism::cli` hub does, and [`McpServer::replace_registry`](crate::McpServer::replace_registry)
/// swaps it in under the server's clients).
#[derive(Debug, Clone)]
pub struct Imported {
    listing: Arc<Listing>,
    server: Arc<str>,
    server_name: Option<Arc<str>>,
    connection: Arc<connection::Connection>,
}

/// The tools of a server as last listed, shared by an [`Imported`] and
/// its clones (and replaced by the connection when they change).
#[derive(Debug)]
pub(crate) struct Listing {
    tools: RwLock<Arc<[ImportedTool]>>,
}

impl Listing {
    pub(crate) fn set(&self, tools: Vec<ImportedTool>) {
        *self.tools.write().unwrap_or_else(PoisonError::into_inner) = tools.into();
    }

    fn get(&self) -> Arc<[ImportedTool]> {
        self.tools
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

/// What an imported server did that is not the answer to a call: see
/// [`Imported::events`] and [`Imports::events`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ImportEvent {
    /// The server changed its tools, and the import holds the new ones:
    /// build the registry again.
    ToolsChanged {
        /// The server, as log messages name it (the import's name, or the
        /// server's own).
        server: String,
    },
    /// The server said its tools changed, and the new list could not be
    /// used (a name toolprism refuses, a failed `tools/list`): the tools
    /// there were stay.
    RefreshFailed {
        /// The server.
        server: String,
        /// Why.
        message: String,
    },
    /// A log message of the server that no single call was waiting for
    /// (one that came during a call went to that call's client, as
    /// [`ToolContext::log_as`](toolprism_core::ToolContext::log_as) with
    /// the logger below).
    Log {
        /// The server.
        server: String,
        /// Its level.
        level: toolprism_core::client::LogLevel,
        /// `<server>/<the server's logger>`, or `<server>`.
        logger: Option<String>,
        /// What it said.
        data: serde_json::Value,
    },
}

impl Import {
    /// Starts the server (or opens the HTTP session), runs `initialize`
    /// and lists every tool, within the [connect
    /// timeout](Self::connect_timeout) (and, with [`OAuth`] and a browser,
    /// the time a person may take to log in); then names the tools
    /// (rename, prefix), keeps the allowed ones and checks their names.
    pub async fn connect(self) -> Result<Imported, ImportError> {
        let source = self.source();
        let opened = connection::Connection::open(self)
            .await
            .map_err(|e| ImportError::new(&source, e))?;
        let connection = opened.connection;
        let tools = name_tools(
            &connection.import_options(),
            &connection,
            opened.tools,
            true,
        )
        .map_err(|e| ImportError::new(&source, e))?;
        let listing = Arc::new(Listing {
            tools: RwLock::new(tools.into()),
        });
        connection.set_listing(&listing);
        Ok(Imported {
            listing,
            server: connection.server.clone().into(),
            server_name: opened.server_name.map(Into::into),
            connection,
        })
    }
}

/// The tools `listed` by `connection`'s server, named as `import` says
/// (rename, prefix), the allowed ones only, their names checked. When
/// `connecting`, every tool the options name must be listed (later, a tool
/// the server dropped is just gone).
pub(crate) fn name_tools(
    import: &Import,
    connection: &Arc<connection::Connection>,
    listed: Vec<rmcp::model::Tool>,
    connecting: bool,
) -> Result<Vec<ImportedTool>, String> {
    let server = &connection.server;
    let names: BTreeSet<&str> = listed.iter().map(|t| t.name.as_ref()).collect();
    // Every name the options mention must be a tool of the server.
    let mentioned = import
        .allow
        .iter()
        .flatten()
        .map(|n| ("allow", n))
        .chain(import.rename.keys().map(|n| ("rename", n)))
        .chain(import.kinds.keys().map(|n| ("kind", n)))
        .chain(import.presenters.keys().map(|n| ("present", n)));
    for (option, name) in mentioned {
        if connecting && !names.contains(name.as_str()) {
            return Err(format!(
                "{option} names \"{}\", which {server} does not have; its tools are: {}",
                name.escape_debug(),
                names.iter().copied().collect::<Vec<_>>().join(", ")
            ));
        }
    }
    let mut tools = Vec::new();
    let mut seen = BTreeSet::new();
    for tool in listed {
        let remote = tool.name.to_string();
        if let Some(allow) = &import.allow
            && !allow.contains(&remote)
        {
            continue;
        }
        if !seen.insert(remote.clone()) {
            return Err(format!(
                "{server} lists the tool \"{}\" twice",
                remote.escape_debug()
            ));
        }
        let own = import
            .rename
            .get(&remote)
            .cloned()
            .unwrap_or_else(|| remote.clone());
        let name = match &import.prefix {
            Some(prefix) => format!("{prefix}{PREFIX_SEPARATOR}{own}"),
            None => own,
        };
        if !valid_name(&name) {
            return Err(format!(
                "the tool \"{}\" of {server} would be named \"{}\", and toolprism's names are 1 to 64 characters from A-Z, a-z, 0-9, `_` and `-`: rename it (Import::rename), use a shorter prefix, or leave it out (Import::allow)",
                remote.escape_debug(),
                name.escape_debug()
            ));
        }
        tools.push(ImportedTool::new(
            tool,
            name,
            import.kinds.get(&remote).copied(),
            import.timeout,
            import.presenters.get(&remote).cloned(),
            connection.clone(),
        ));
    }
    Ok(tools)
}

#[cfg(feature = "client-http")]
impl Import {
    /// Logs in to this HTTP server now, whatever tokens are saved: asks
    /// the server for its challenge, then authorizes as its
    /// [`OAuth`](Import::oauth) says (a browser, or client credentials),
    /// and saves the tokens. Returns the token file. What `import login
    /// URL` runs on a `toolprism::cli` command line.
    pub async fn login(&self) -> Result<std::path::PathBuf, ImportError> {
        let source = self.source();
        let error = |message: String| ImportError::new(&source, message);
        let source::Transport::Http {
            url,
            options,
            oauth,
            ..
        } = &self.transport
        else {
            return Err(error(
                "a server over stdio has no login: OAuth is for HTTP servers".to_owned(),
            ));
        };
        let Some(oauth) = oauth else {
            return Err(error(
                "this import has no OAuth to log in with (Import::oauth)".to_owned(),
            ));
        };
        http::check_url(url, options.allow_http).map_err(error)?;
        let auth = oauth::Authorization::new(url, oauth.clone(), options).map_err(error)?;
        let client = http::client(options).map_err(error)?;
        auth.login(&client).await.map_err(error)?;
        Ok(auth.token_file().to_path_buf())
    }

    /// Forgets the tokens saved for this HTTP server: removes its token
    /// file, and returns it (`None` when there was none).
    pub fn logout(&self) -> Result<Option<std::path::PathBuf>, ImportError> {
        let source = self.source();
        let error = |message: String| ImportError::new(&source, message);
        let source::Transport::Http {
            url,
            options,
            oauth,
            ..
        } = &self.transport
        else {
            return Err(error(
                "a server over stdio has no login: OAuth is for HTTP servers".to_owned(),
            ));
        };
        let oauth = oauth.clone().unwrap_or_default();
        let auth = oauth::Authorization::new(url, oauth, options).map_err(error)?;
        let file = auth.token_file().to_path_buf();
        match std::fs::remove_file(&file) {
            Ok(()) => Ok(Some(file)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(error(format!("cannot remove {}: {e}", file.display()))),
        }
    }
}

/// `[A-Za-z0-9_-]{1,64}`, toolprism's tool names.
fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

impl Imported {
    /// The imported tools, in the server's order, as last listed.
    pub fn tools(&self) -> Arc<[ImportedTool]> {
        self.listing.get()
    }

    /// What the server does besides answering calls, from now on: its
    /// tool changes and the log messages no call took. Each receiver
    /// gets every event; one that falls more than 256 behind loses the
    /// oldest.
    pub fn events(&self) -> tokio::sync::broadcast::Receiver<ImportEvent> {
        self.connection.relay.subscribe()
    }

    /// The server: `the MCP server "fs" (npx …)`.
    pub fn server(&self) -> &str {
        &self.server
    }

    /// The name the server gave itself in `initialize`, if any.
    pub fn server_name(&self) -> Option<&str> {
        self.server_name.as_deref()
    }

    /// Registers every tool in `builder`. A name the builder already holds
    /// is a problem of the registry's build that names both tools' sources
    /// (this server's tool, and the tool registered before it).
    pub fn register_in(&self, mut builder: RegistryBuilder) -> RegistryBuilder {
        for tool in self.tools().iter() {
            builder = builder.dynamic_tool(tool.clone());
        }
        builder
    }
}

/// Several imports, connected together: what `--import` and
/// `--mcp-config` give a `toolprism::cli` program
/// (`Globals::imports`).
#[derive(Debug, Clone, Default)]
pub struct Imports {
    imported: Vec<Imported>,
}

impl Imports {
    /// Connects to every server at once; the first failure is the error
    /// (the others' connections are dropped).
    pub async fn connect(imports: Vec<Import>) -> Result<Imports, ImportError> {
        let mut tasks = tokio::task::JoinSet::new();
        for (i, import) in imports.into_iter().enumerate() {
            tasks.spawn(async move { (i, import.connect().await) });
        }
        let mut imported = Vec::new();
        while let Some(joined) = tasks.join_next().await {
            match joined {
                Ok((i, Ok(one))) => imported.push((i, one)),
                Ok((_, Err(e))) => return Err(e),
                Err(e) => {
                    return Err(ImportError::new(
                        "a server",
                        format!("connecting panicked: {e}"),
                    ));
                }
            }
        }
        imported.sort_by_key(|(i, _)| *i);
        Ok(Imports {
            imported: imported.into_iter().map(|(_, one)| one).collect(),
        })
    }

    /// Each server's tools, in the order the imports were given.
    pub fn servers(&self) -> &[Imported] {
        &self.imported
    }

    /// Whether there is no import.
    pub fn is_empty(&self) -> bool {
        self.imported.is_empty()
    }

    /// Every imported tool, server by server, as last listed.
    pub fn tools(&self) -> Vec<ImportedTool> {
        self.imported
            .iter()
            .flat_map(|i| i.tools().iter().cloned().collect::<Vec<_>>())
            .collect()
    }

    /// Every server's events ([`Imported::events`]), merged, from now on.
    /// Call it inside a tokio runtime: a task per server forwards them
    /// while the receiver lives.
    pub fn events(&self) -> tokio::sync::mpsc::UnboundedReceiver<ImportEvent> {
        let (send, receive) = tokio::sync::mpsc::unbounded_channel();
        for one in &self.imported {
            let mut events = one.events();
            let send = send.clone();
            tokio::spawn(async move {
                loop {
                    match events.recv().await {
                        Ok(event) => {
                            if send.send(event).is_err() {
                                break;
                            }
                        }
                        Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                        Err(tokio::sync::broadcast::error::RecvError::Closed) => break,
                    }
                }
            });
        }
        receive
    }

    /// Registers every server's tools in `builder` ([`Imported::register_in`]).
    pub fn register_in(&self, builder: RegistryBuilder) -> RegistryBuilder {
        self.imported
            .iter()
            .fold(builder, |builder, one| one.register_in(builder))
    }
}
