//! The W3C `traceparent` (and `tracestate`) of a `tools/call`'s `_meta`
//! lands on the call's one tracing span, the pipeline's `execute_tool`
//! span with MCP's attributes added (the tool's name, the request id); a
//! call without them records neither. A subscriber of this file's own
//! keeps every span's fields.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use toolprism::mcp::McpServer;
use toolprism::{ContentBlock, NoMeta, Registry, Tool, ToolContext, ToolError, ToolInfo};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};

#[derive(Clone, serde::Deserialize, schemars::JsonSchema)]
struct NoArgs {}

struct Ping;

impl Tool for Ping {
    type Args = NoArgs;
    type Value = String;
    type Meta = NoMeta;
    const INFO: ToolInfo = ToolInfo::new("ping", "Answers pong.");
    async fn execute(&self, _: NoArgs, _: &ToolContext<'_>) -> Result<String, ToolError> {
        Ok("pong".to_owned())
    }
    fn render(_: &NoArgs, value: &String) -> Vec<ContentBlock> {
        vec![ContentBlock::text(value)]
    }
}

/// The fields of every span named `execute_tool`, by span id.
#[derive(Clone, Default)]
struct Spans {
    next: Arc<AtomicU64>,
    calls: Arc<Mutex<BTreeMap<u64, BTreeMap<String, String>>>>,
}

struct Fields<'a>(&'a mut BTreeMap<String, String>);

impl Visit for Fields<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }
}

impl Subscriber for Spans {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, span: &Attributes<'_>) -> Id {
        let id = self.next.fetch_add(1, Ordering::Relaxed) + 1;
        if span.metadata().name() == "execute_tool" {
            let mut fields = BTreeMap::new();
            span.record(&mut Fields(&mut fields));
            self.calls.lock().unwrap().insert(id, fields);
        }
        Id::from_u64(id)
    }
    fn record(&self, span: &Id, values: &Record<'_>) {
        if let Some(fields) = self.calls.lock().unwrap().get_mut(&span.into_u64()) {
            values.record(&mut Fields(fields));
        }
    }
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, _: &Event<'_>) {}
    fn enter(&self, _: &Id) {}
    fn exit(&self, _: &Id) {}
}

#[test]
fn a_calls_traceparent_is_recorded_on_its_span() {
    let spans = Spans::default();
    tracing::subscriber::set_global_default(spans.clone()).expect("the only subscriber");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    runtime.block_on(async {
        let registry = Registry::builder().tool(Ping).build().unwrap();
        let (client, server) = tokio::io::duplex(64 * 1024);
        let (server_read, server_write) = tokio::io::split(server);
        let serving = tokio::spawn(McpServer::new(registry).serve_io(server_read, server_write));
        let (client_read, mut client_write) = tokio::io::split(client);
        let mut lines = BufReader::new(client_read).lines();
        for message in [
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}),
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "ping",
                "_meta": {"traceparent": traceparent, "tracestate": "vendor=1"}}}),
            json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "ping"}}),
        ] {
            client_write
                .write_all(format!("{message}\n").as_bytes())
                .await
                .unwrap();
        }
        let mut answered = 0;
        while answered < 3 {
            let line = lines.next_line().await.unwrap().expect("an answer");
            let message: Value = serde_json::from_str(&line).unwrap();
            if message.get("id").is_some() {
                answered += 1;
            }
        }
        // End of input: the session ends (dropping one half of a split
        // stream would not close it).
        client_write.shutdown().await.unwrap();
        drop(lines);
        serving.await.unwrap().unwrap();
    });
    let calls: Vec<BTreeMap<String, String>> =
        spans.calls.lock().unwrap().values().cloned().collect();
    // One span per call: the server opens it, the pipeline fills it.
    assert_eq!(calls.len(), 2, "{calls:#?}");
    let traced = calls
        .iter()
        .find(|c| c.get("jsonrpc.request.id").map(String::as_str) == Some("2"));
    let traced = traced.unwrap_or_else(|| panic!("no span for request 2: {calls:#?}"));
    assert_eq!(traced["gen_ai.tool.name"], "ping");
    assert_eq!(traced["mcp.method.name"], "tools/call");
    assert!(traced["gen_ai.tool.call.id"].ends_with(":2"), "{traced:#?}");
    assert_eq!(traced["traceparent"], traceparent);
    assert_eq!(traced["tracestate"], "vendor=1");
    let plain = calls
        .iter()
        .find(|c| c.get("jsonrpc.request.id").map(String::as_str) == Some("3"))
        .expect("a span for request 3");
    assert!(!plain.contains_key("traceparent"), "{plain:#?}");
}
