//! `serve [--http ADDR] [--stateless] [--store URL [--lease SECS]] [--log
//! PATH] [--approval-timeout SECS] [--token-env NAME | --token-file PATH |
//! --insecure-no-auth] [--allowed-host NAME]… [limits]`:
//! the registry over the Model Context Protocol ([`toolprism_mcp`]), for
//! Claude Code, Claude Desktop, Cursor or any MCP client. Over HTTP it
//! listens on a loopback address unless a token is given or
//! `--insecure-no-auth` says otherwise (W3 in `docs/contract.md`).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use super::{Failure, Status};
use toolprism_core::Registry;
use toolprism_core::log::SessionLog;
use toolprism_mcp::{McpServer, StaticToken, StreamableHttpServerConfig, is_loopback};

/// Options of `serve`.
#[derive(Debug, clap::Args)]
pub(crate) struct ServeArgs {
    /// Serve Streamable HTTP at http://ADDR/mcp instead of stdio (for
    /// example 127.0.0.1:8765; port 0 picks a free one, printed on stderr).
    /// An address other machines can reach (0.0.0.0, a LAN address, a name
    /// that resolves to one) needs --token-env or --token-file, or
    /// --insecure-no-auth
    #[arg(long, value_name = "ADDR")]
    http: Option<String>,
    /// With --http: keep no session between requests, so several processes
    /// behind a load balancer can serve the same tools
    #[arg(long, requires = "http")]
    stateless: bool,
    /// With --http: keep tasks, calls waiting for their client's input and
    /// sessions in the store at URL (redis://HOST:PORT, or redis://HOST:PORT/DB),
    /// shared by every process serving these tools behind one load balancer,
    /// so that any of them answers any request (needs the `redis` feature)
    /// [default: memory, this process only]
    #[arg(long, value_name = "URL", requires = "http")]
    store: Option<String>,
    /// With --store: a process that has not renewed its lease in the store
    /// for SECS seconds is taken for stopped, and its running tasks end failed
    #[arg(long, value_name = "SECS", requires = "store", default_value_t = toolprism_mcp::DEFAULT_LEASE.as_secs(), value_parser = clap::value_parser!(u64).range(1..))]
    lease: u64,
    /// Append every call and its result to the session log at PATH (created
    /// if missing; `replay` reads it)
    #[arg(long, value_name = "PATH")]
    log: Option<PathBuf>,
    /// With --http: every request must carry `Authorization: Bearer TOKEN`,
    /// TOKEN being the value of the environment variable NAME (32 bytes or
    /// more: `openssl rand -hex 32`); others get 401
    #[arg(
        long,
        value_name = "NAME",
        requires = "http",
        conflicts_with = "token_file"
    )]
    token_env: Option<String>,
    /// With --http: as --token-env, the token read from the file at PATH
    /// (blanks and line end around it ignored)
    #[arg(long, value_name = "PATH", requires = "http")]
    token_file: Option<PathBuf>,
    /// With --http: serve an address other machines can reach WITHOUT ANY
    /// CREDENTIAL: whoever reaches it runs every tool (commands and file
    /// writes included). For a network you fully trust, or behind a proxy
    /// that authenticates; a warning is printed at every start
    #[arg(long, requires = "http", conflicts_with_all = ["token_env", "token_file"])]
    insecure_no_auth: bool,
    /// With --http: a host name (or host:port) clients may send in the
    /// `Host` header, besides localhost, 127.0.0.1, ::1 and the address
    /// listened on; repeat for several. Needed to be reached by a name
    #[arg(long, value_name = "NAME", requires = "http")]
    allowed_host: Vec<String>,
    /// How long a call that needs the user's approval waits for the answer
    /// before it ends as NOT_APPROVED, in seconds [default: the program's
    /// own, 120 unless it sets another]
    #[arg(long, value_name = "SECS", value_parser = clap::value_parser!(u64).range(1..))]
    approval_timeout: Option<u64>,
    /// With --http: the most requests read or answered at once (a running
    /// call and an open event stream hold one); one more gets 503
    #[arg(long, value_name = "N", requires = "http", default_value_t = toolprism_mcp::DEFAULT_MAX_REQUESTS)]
    max_requests: usize,
    /// With --http: the most sessions at once; one more `initialize` gets 503
    #[arg(long, value_name = "N", requires = "http", default_value_t = toolprism_mcp::DEFAULT_MAX_SESSIONS)]
    max_sessions: usize,
    /// With --http: the most calls one session runs at once; one more gets 429
    #[arg(long, value_name = "N", requires = "http", default_value_t = toolprism_mcp::DEFAULT_MAX_CALLS_PER_SESSION)]
    max_calls_per_session: usize,
    /// With --http: a session with no request for SECS seconds (and no call
    /// running) is closed
    #[arg(long, value_name = "SECS", requires = "http", default_value_t = toolprism_mcp::DEFAULT_SESSION_IDLE_TIMEOUT.as_secs())]
    session_idle_timeout: u64,
}

/// Serves until the client disconnects (stdio) or the process is stopped
/// (HTTP). Over stdio, stdout carries protocol messages only: what this
/// says goes to stderr.
pub(crate) fn run(
    registry: &Registry,
    args: &ServeArgs,
    runtime: &tokio::runtime::Runtime,
    name: &str,
    built: Option<&crate::Globals>,
    rebuild: Option<crate::command::Rebuild>,
) -> Result<Status, Failure> {
    #[cfg(feature = "import")]
    let follow = match (built, rebuild) {
        (Some(globals), Some(rebuild)) if !globals.imports().is_empty() => {
            Some((globals.imports().clone(), rebuild))
        }
        _ => None,
    };
    #[cfg(not(feature = "import"))]
    let follow: Option<((), crate::command::Rebuild)> = {
        let _ = rebuild;
        None
    };
    let tools = registry.definitions().len();
    let mut server =
        McpServer::new(registry.clone()).with_server_info(name, env!("CARGO_PKG_VERSION"));
    if let Some(globals) = built {
        // What the model is told of the sandbox up front: the mode and the
        // network (a refusal says it again in the result).
        let sandbox = globals.sandbox();
        server = server.with_instructions(format!(
            "The tools work inside {}; paths are relative to it. Commands run in a sandbox ({}): {}.",
            globals.root().display(),
            sandbox.summary(),
            sandbox.mode().writes()
        ));
    }
    if let Some(secs) = args.approval_timeout {
        server = server.with_approval_timeout(Duration::from_secs(secs));
    }
    if let Some(path) = &args.log {
        let log = SessionLog::create(path)
            .map_err(|e| Failure::Usage(format!("--log {}: {e}", path.display())))?;
        server = server.with_log(log);
    }
    let place = match built {
        Some(g) => format!(
            " from {} (sandbox: {})",
            g.root().display(),
            g.sandbox().summary()
        ),
        None => String::new(),
    };
    let Some(addr) = &args.http else {
        let served = runtime.block_on(async {
            eprintln!("{name}: serving {tools} tools{place} over stdio");
            let serving = server.clone().serve_stdio();
            following(&server, serving, follow, name).await
        });
        return match served {
            Ok(()) => Ok(Status::Ok),
            Err(e) => Err(Failure::Failed(format!("serve: {e}"))),
        };
    };
    let token = match (&args.token_env, &args.token_file) {
        (Some(var), _) => Some(
            StaticToken::from_env(var).map_err(|e| Failure::Usage(format!("--token-env: {e}")))?,
        ),
        (None, Some(path)) => Some(
            StaticToken::from_file(path)
                .map_err(|e| Failure::Usage(format!("--token-file: {e}")))?,
        ),
        (None, None) => None,
    };
    server = server
        .with_max_requests(args.max_requests)
        .with_max_sessions(args.max_sessions)
        .with_max_calls_per_session(args.max_calls_per_session)
        .with_session_idle_timeout(Duration::from_secs(args.session_idle_timeout));
    let authenticated = token.is_some();
    if let Some(token) = token {
        server = server.with_auth(token);
    }
    if args.insecure_no_auth {
        server = server.allow_unauthenticated_network();
    }
    let served = runtime.block_on(async {
        let store = match args.store.as_deref() {
            None | Some("memory") => None,
            Some(url) => Some(open_store(url).await?),
        };
        let shown_store = store
            .as_ref()
            .map(|store| format!(", store {store}"))
            .unwrap_or_default();
        if let Some(store) = store {
            server = server
                .with_lease(Duration::from_secs(args.lease))
                .with_store(store);
        }
        let addrs: Vec<SocketAddr> = tokio::net::lookup_host(addr.as_str())
            .await
            .map_err(|e| Failure::Usage(format!("--http {addr}: {e}")))?
            .collect();
        // W3: refused before binding, naming the flags that allow it.
        if let Some(open) = addrs.iter().find(|a| !is_loopback(a))
            && !authenticated
            && !args.insecure_no_auth
        {
            let resolved = if open.to_string() == *addr {
                String::new()
            } else {
                format!(" ({open})")
            };
            return Err(Failure::Usage(format!(
                "--http {addr}{resolved} can be reached from other machines, and nothing would stop them running the tools: \
                 pass --token-env NAME or --token-file PATH to require a bearer token, \
                 listen on 127.0.0.1, or pass --insecure-no-auth to serve anyone who reaches it"
            )));
        }
        let listener = tokio::net::TcpListener::bind(addrs.as_slice())
            .await
            .map_err(|e| Failure::Failed(format!("serve: --http {addr}: {e}")))?;
        let local = listener.local_addr().map_err(Failure::Io)?;
        eprintln!(
            "{name}: serving {tools} tools{place} at http://{local}/mcp{}{shown_store}{}",
            if args.stateless { " (stateless)" } else { "" },
            if authenticated { ", bearer token required" } else { "" }
        );
        let mut hosts: Vec<String> = ["localhost", "127.0.0.1", "::1"].map(String::from).into();
        if !local.ip().is_unspecified() {
            hosts.push(local.ip().to_string());
        }
        hosts.extend(args.allowed_host.iter().cloned());
        let config = StreamableHttpServerConfig::default()
            .with_legacy_session_mode(!args.stateless)
            .with_allowed_hosts(hosts);
        let serving = server.clone().serve_http(listener, config);
        following(&server, serving, follow, name)
            .await
            .map_err(|e| Failure::Failed(format!("serve: {e}")))
    });
    served.map(|()| Status::Ok)
}

/// Runs `serving` while following the imported servers, when there are
/// some: a server that changes its tools has the registry built again and
/// swapped in (every session is told: `notifications/tools/list_changed`),
/// and its log messages that no call took go to every session at the
/// level it set.
#[cfg(feature = "import")]
async fn following(
    server: &McpServer,
    serving: impl std::future::Future<Output = std::io::Result<()>>,
    follow: Option<(toolprism_mcp::import::Imports, crate::command::Rebuild)>,
    name: &str,
) -> std::io::Result<()> {
    use toolprism_mcp::import::ImportEvent;
    let Some((imports, rebuild)) = follow else {
        return serving.await;
    };
    let mut events = imports.events();
    let mut serving = std::pin::pin!(serving);
    loop {
        tokio::select! {
            done = &mut serving => return done,
            Some(event) = events.recv() => match event {
                ImportEvent::ToolsChanged { server: from } => match rebuild() {
                    Ok(registry) => {
                        let tools = registry.definitions().len();
                        server.replace_registry(registry).await;
                        eprintln!("{name}: the tools of {from} changed; serving {tools} tools");
                    }
                    Err(e) => eprintln!(
                        "{name}: the tools of {from} changed, and the tools cannot be built again ({e}); serving them as they were"
                    ),
                },
                ImportEvent::RefreshFailed { server: from, message } => eprintln!(
                    "{name}: the tools of {from} changed, and its new list cannot be used ({message}); serving them as they were"
                ),
                ImportEvent::Log { level, logger, data, .. } => {
                    server.broadcast_log(level, logger.as_deref(), data).await;
                }
                _ => {}
            },
        }
    }
}

#[cfg(not(feature = "import"))]
async fn following(
    _server: &McpServer,
    serving: impl std::future::Future<Output = std::io::Result<()>>,
    _follow: Option<((), crate::command::Rebuild)>,
    _name: &str,
) -> std::io::Result<()> {
    serving.await
}

/// The store at `url` (feature `redis`).
#[cfg(feature = "redis")]
async fn open_store(url: &str) -> Result<toolprism_mcp::Store, Failure> {
    toolprism_mcp::Store::redis(url)
        .await
        .map_err(|e| Failure::Usage(format!("--store: {e}")))
}

/// Without the feature `redis`, only the in-memory store.
#[cfg(not(feature = "redis"))]
async fn open_store(url: &str) -> Result<toolprism_mcp::Store, Failure> {
    Err(Failure::Usage(format!(
        "--store {}: this program was built without Redis support; build it with the `redis` feature of toolprism (cargo build --features redis), or leave --store out to keep everything in this process",
        url.chars().take(200).collect::<String>()
    )))
}
