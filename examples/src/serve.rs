//! `serve`: the built-in tools over MCP, for Claude Code, Claude Desktop or
//! any MCP client.
//!
//! ```text
//! cargo run -- serve                            # stdio, confined to the current directory
//! cargo run -- serve --root ~/project           # stdio, confined to ~/project
//! cargo run -- serve --http 127.0.0.1:8765      # Streamable HTTP at http://127.0.0.1:8765/mcp
//! cargo run -- serve --log /tmp/mcp.jsonl       # keep the session log
//! ```
//!
//! Over stdio, stdout carries protocol messages only; everything else goes
//! to stderr.

use std::io;
use std::path::PathBuf;
use std::process::ExitCode;

use toolprism::Registry;
use toolprism::log::SessionLog;
use toolprism::mcp::{McpServer, StreamableHttpServerConfig};

/// What `serve --help` prints.
pub const HELP: &str = "\
toolprism-examples serve: the built-in tools (read, grep, glob, bash, edit, write,
web_fetch) over the Model Context Protocol.

usage: toolprism-examples serve [--root DIR] [--http ADDR] [--stateless] [--log PATH]

  --root DIR     confine the file tools and bash to DIR (default: the current
                 directory)
  --http ADDR    serve Streamable HTTP at http://ADDR/mcp instead of stdio
                 (e.g. 127.0.0.1:8765; only loopback Host names are accepted)
  --stateless    with --http: keep no session between requests, so several
                 processes behind a load balancer can serve the same tools
  --log PATH     append every call and result to the session log at PATH
  -h, --help     this text

Over stdio, stdout carries only protocol messages; the rest goes to stderr.";

/// The options of `serve`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ServeOptions {
    /// The directory the tools are confined to.
    pub root: Option<PathBuf>,
    /// Serve Streamable HTTP on this address instead of stdio.
    pub http: Option<String>,
    /// No sessions (HTTP only).
    pub stateless: bool,
    /// The session log.
    pub log: Option<PathBuf>,
}

/// Parses the arguments after `serve`; `Ok(None)` asks for the help text.
pub fn parse_args(args: impl IntoIterator<Item = String>) -> Result<Option<ServeOptions>, String> {
    let mut options = ServeOptions::default();
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f.to_owned(), Some(v.to_owned())),
            _ => (arg.clone(), None),
        };
        let mut value = |name: &str| {
            inline
                .clone()
                .or_else(|| args.next())
                .ok_or_else(|| format!("{name} needs a value"))
        };
        match flag.as_str() {
            "-h" | "--help" => return Ok(None),
            "--root" => options.root = Some(PathBuf::from(value("--root")?)),
            "--http" => options.http = Some(value("--http")?),
            "--log" => options.log = Some(PathBuf::from(value("--log")?)),
            "--stateless" => options.stateless = true,
            other => return Err(format!("unknown argument \"{other}\"; see serve --help")),
        }
    }
    if options.stateless && options.http.is_none() {
        return Err("--stateless needs --http".to_owned());
    }
    Ok(Some(options))
}

/// `serve` with the arguments after it: the exit status of the process.
pub fn main(args: impl IntoIterator<Item = String>) -> ExitCode {
    let options = match parse_args(args) {
        Ok(Some(options)) => options,
        Ok(None) => {
            println!("{HELP}");
            return ExitCode::SUCCESS;
        }
        Err(message) => {
            eprintln!("error: {message}");
            return ExitCode::from(2);
        }
    };
    match run(&options) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The registry of built-in tools, confined to `root`.
fn registry(options: &ServeOptions) -> io::Result<Registry> {
    if let Some(root) = &options.root {
        // The built-in tools confine themselves to the current directory.
        std::env::set_current_dir(root)
            .map_err(|e| io::Error::new(e.kind(), format!("--root {}: {e}", root.display())))?;
    }
    let mut builder = Registry::builtin();
    if let Some(path) = &options.log {
        let log = SessionLog::create(path)
            .map_err(|e| io::Error::new(e.kind(), format!("--log {}: {e}", path.display())))?;
        builder = builder.log(log);
    }
    builder.build().map_err(|e| io::Error::other(e.to_string()))
}

fn run(options: &ServeOptions) -> io::Result<()> {
    let registry = registry(options)?;
    let root = std::env::current_dir()?;
    let tools = registry.definitions().len();
    let server = McpServer::new(registry)
        .with_server_info("toolprism-examples", env!("CARGO_PKG_VERSION"))
        .with_instructions(format!(
            "File tools and bash work inside {}; paths are relative to it.",
            root.display()
        ));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let result = runtime.block_on(async {
        match &options.http {
            None => {
                eprintln!(
                    "toolprism: serving {tools} tools from {} over stdio",
                    root.display()
                );
                server.serve_stdio().await
            }
            Some(addr) => {
                let listener = tokio::net::TcpListener::bind(addr).await?;
                eprintln!(
                    "toolprism: serving {tools} tools from {} at http://{}/mcp{}",
                    root.display(),
                    listener.local_addr()?,
                    if options.stateless {
                        " (stateless)"
                    } else {
                        ""
                    }
                );
                let config = StreamableHttpServerConfig::default()
                    .with_legacy_session_mode(!options.stateless);
                server.serve_http(listener, config).await
            }
        }
    });
    // A stdin read may still be blocked on its thread: do not wait for it.
    runtime.shutdown_background();
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Option<ServeOptions>, String> {
        parse_args(args.iter().map(|s| (*s).to_owned()))
    }

    #[test]
    fn arguments() {
        assert_eq!(parse(&[]).unwrap(), Some(ServeOptions::default()));
        let options = parse(&[
            "--root",
            "/tmp",
            "--http=127.0.0.1:0",
            "--stateless",
            "--log",
            "l",
        ])
        .unwrap()
        .unwrap();
        assert_eq!(options.root, Some(PathBuf::from("/tmp")));
        assert_eq!(options.http.as_deref(), Some("127.0.0.1:0"));
        assert!(options.stateless);
        assert_eq!(options.log, Some(PathBuf::from("l")));
        assert_eq!(parse(&["--help"]).unwrap(), None);
        assert!(parse(&["--stateless"]).unwrap_err().contains("--http"));
        assert!(parse(&["--root"]).unwrap_err().contains("needs a value"));
        assert!(parse(&["--bogus"]).unwrap_err().contains("unknown"));
    }
}
