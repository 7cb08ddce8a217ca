//! `serve [--http ADDR] [--stateless] [--log PATH]`: the registry over the
//! Model Context Protocol ([`toolprism_mcp`]), for Claude Code, Claude Desktop,
//! Cursor or any MCP client.

use std::path::{Path, PathBuf};

use super::{Failure, Status};
use toolprism_core::Registry;
use toolprism_core::log::SessionLog;
use toolprism_mcp::{McpServer, StreamableHttpServerConfig};

/// Options of `serve`.
#[derive(Debug, clap::Args)]
pub(crate) struct ServeArgs {
    /// Serve Streamable HTTP at http://ADDR/mcp instead of stdio (for
    /// example 127.0.0.1:8765; port 0 picks a free one, printed on stderr)
    #[arg(long, value_name = "ADDR")]
    http: Option<String>,
    /// With --http: keep no session between requests, so several processes
    /// behind a load balancer can serve the same tools
    #[arg(long, requires = "http")]
    stateless: bool,
    /// Append every call and its result to the session log at PATH (created
    /// if missing; `replay` reads it)
    #[arg(long, value_name = "PATH")]
    log: Option<PathBuf>,
}

/// Serves until the client disconnects (stdio) or the process is stopped
/// (HTTP). Over stdio, stdout carries protocol messages only: what this
/// says goes to stderr.
pub(crate) fn run(
    registry: &Registry,
    args: &ServeArgs,
    runtime: &tokio::runtime::Runtime,
    name: &str,
    root: Option<&Path>,
) -> Result<Status, Failure> {
    let tools = registry.definitions().len();
    let mut server =
        McpServer::new(registry.clone()).with_server_info(name, env!("CARGO_PKG_VERSION"));
    if let Some(root) = root {
        server = server.with_instructions(format!(
            "The tools work inside {}; paths are relative to it.",
            root.display()
        ));
    }
    if let Some(path) = &args.log {
        let log = SessionLog::create(path)
            .map_err(|e| Failure::Usage(format!("--log {}: {e}", path.display())))?;
        server = server.with_log(log);
    }
    let place = root.map_or_else(String::new, |r| format!(" from {}", r.display()));
    let served = runtime.block_on(async {
        match &args.http {
            None => {
                eprintln!("{name}: serving {tools} tools{place} over stdio");
                server.serve_stdio().await
            }
            Some(addr) => {
                let listener = tokio::net::TcpListener::bind(addr)
                    .await
                    .map_err(|e| std::io::Error::new(e.kind(), format!("--http {addr}: {e}")))?;
                eprintln!(
                    "{name}: serving {tools} tools{place} at http://{}/mcp{}",
                    listener.local_addr()?,
                    if args.stateless { " (stateless)" } else { "" }
                );
                let config =
                    StreamableHttpServerConfig::default().with_legacy_session_mode(!args.stateless);
                server.serve_http(listener, config).await
            }
        }
    });
    match served {
        Ok(()) => Ok(Status::Ok),
        Err(e) => Err(Failure::Failed(format!("serve: {e}"))),
    }
}
