//! The replay benchmark's session log, and the baseline it is measured
//! against.

use std::fs::File;
use std::io::{self, BufRead, BufReader};
use std::path::Path;

use serde_json::Value;
use toolprism::log::SessionLog;
use toolprism::{Registry, ToolCall};

use crate::{ECHO_ARGUMENTS, EchoTool, FindTool};

/// How many calls the log holds; each writes a `tool/call` and a
/// `tool/result` event.
pub const CALLS: usize = 50_000;

/// The registry replay draws cards with: `echo` (generic cards, no meta)
/// and `find` (meta, both presenters).
pub fn registry() -> Registry {
    Registry::builder()
        .tool(EchoTool)
        .tool(FindTool)
        .build()
        .expect("the benchmark tools register")
}

/// Writes a session log of `calls` real calls, alternating `echo` and
/// `find`, to `path`: `2 * calls` events.
pub async fn write_log(path: &Path, calls: usize) -> io::Result<()> {
    let registry = Registry::builder()
        .tool(EchoTool)
        .tool(FindTool)
        .log(SessionLog::create(path)?)
        .build()
        .expect("the benchmark tools register");
    for i in 0..calls {
        let call = if i % 2 == 0 {
            ToolCall::new(format!("call-{i}"), "echo", ECHO_ARGUMENTS)
        } else {
            ToolCall::new(
                format!("call-{i}"),
                "find",
                format!(r#"{{"pattern":"*_{i}.rs"}}"#),
            )
        };
        let outcome = registry.call(call).await;
        if outcome.is_error() || !outcome.warnings().is_empty() {
            return Err(io::Error::other(format!(
                "call {i} failed: {:?} {:?}",
                outcome.error(),
                outcome.warnings()
            )));
        }
    }
    Ok(())
}

/// The baseline: every line of the log parsed into a `serde_json::Value`.
pub fn parse_lines(path: &Path) -> io::Result<Vec<Value>> {
    let mut reader = BufReader::with_capacity(1 << 16, File::open(path)?);
    let mut line = Vec::new();
    let mut events = Vec::new();
    loop {
        line.clear();
        if reader.read_until(b'\n', &mut line)? == 0 {
            return Ok(events);
        }
        let text = line.trim_ascii();
        if !text.is_empty() {
            events.push(serde_json::from_slice(text).map_err(io::Error::other)?);
        }
    }
}
