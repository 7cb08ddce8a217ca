//! A tool whose state holds I/O handles (a socket, a file) uses them in
//! `execute` only; the projections never see `self`.

use std::fs::File;
use std::io::Write;
use std::net::TcpStream;
use std::sync::Mutex;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolprism::{ContentBlock, Registry, ToolCall, ToolError, tool};

#[derive(Clone, Deserialize, JsonSchema)]
pub struct FetchArgs {
    pub path: String,
}

#[derive(Serialize, Deserialize, JsonSchema)]
pub struct Fetched {
    pub path: String,
    pub connected: bool,
}

pub struct FetchTool {
    conn: Mutex<Option<TcpStream>>,
    audit: Mutex<Option<File>>,
}

/// Fetch a path from the upstream server.
#[tool(kind = fetch, open_world)]
impl FetchTool {
    async fn execute(&self, args: FetchArgs) -> Result<Fetched, ToolError> {
        let connected = match &*self.conn.lock().unwrap() {
            Some(stream) => stream.peer_addr().is_ok(),
            None => false,
        };
        if let Some(file) = &mut *self.audit.lock().unwrap() {
            writeln!(file, "fetch {}", args.path)?;
        }
        Ok(Fetched {
            path: args.path,
            connected,
        })
    }

    fn render(_args: &FetchArgs, value: &Fetched) -> Vec<ContentBlock> {
        vec![ContentBlock::text(format!(
            "{} (connected: {})",
            value.path, value.connected
        ))]
    }
}

fn main() {
    let tool = FetchTool {
        conn: Mutex::new(None),
        audit: Mutex::new(None),
    };
    let registry = Registry::builder().tool(tool).build().unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let out = runtime.block_on(registry.call(ToolCall::new("c1", "fetch", r#"{"path":"/"}"#)));
    assert_eq!(out.content(), [ContentBlock::text("/ (connected: false)")]);
}
