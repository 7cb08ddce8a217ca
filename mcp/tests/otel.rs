//! Feature `otel`: every pipeline call's `execute_tool` span (OpenTelemetry
//! GenAI) as an OpenTelemetry exporter sees it, and the MCP server's
//! attributes added to that span, whose parent is the W3C `traceparent` of
//! the request's `_meta`. A real tracing-opentelemetry layer over the
//! OpenTelemetry SDK, exporting to memory; calls made on the registry
//! directly (top-level, failing, nested from a tool, from a Code Mode
//! program) and over MCP (stdio framing, on an in-process pipe).
//!
//! Run with `cargo test -p toolprism-mcp --features otel --test otel`.
#![cfg(feature = "otel")]

use std::sync::{Arc, Mutex, OnceLock};

use opentelemetry::trace::{SpanId, SpanKind, Status, TraceId, TracerProvider as _};
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::trace::{SdkTracerProvider, SpanData, SpanExporter};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use toolprism::code::CodeMode;
use toolprism::mcp::McpServer;
use toolprism::{
    ContentBlock, Mode, NoMeta, Registry, Tool, ToolCall, ToolContext, ToolError, ToolInfo,
};
use tracing_subscriber::layer::SubscriberExt;

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

/// Calls `ping` twice from its body: once directly, once from a spawned task.
struct Relay;

impl Tool for Relay {
    type Args = NoArgs;
    type Value = String;
    type Meta = NoMeta;
    const INFO: ToolInfo = ToolInfo::new("relay", "Pings twice.");
    async fn execute(&self, _: NoArgs, cx: &ToolContext<'_>) -> Result<String, ToolError> {
        let a = cx.call_nested("ping", json!({})).await?;
        let nested = cx.nested();
        let b = tokio::spawn(async move { nested.call_nested("ping", json!({})).await })
            .await
            .map_err(|e| ToolError::new(e.to_string()))??;
        Ok(format!("{a} {b}"))
    }
    fn render(_: &NoArgs, value: &String) -> Vec<ContentBlock> {
        vec![ContentBlock::text(value)]
    }
}

/// An exporter that keeps every span it is given.
#[derive(Clone, Debug, Default)]
struct Kept(Arc<Mutex<Vec<SpanData>>>);

impl SpanExporter for Kept {
    fn export(&self, batch: Vec<SpanData>) -> impl Future<Output = OTelSdkResult> + Send {
        self.0.lock().unwrap().extend(batch);
        std::future::ready(Ok(()))
    }
}

/// One subscriber for the whole binary (Code Mode's engine thread and the
/// runtime's workers see the global one only), and its exporter.
fn exported() -> &'static (Kept, SdkTracerProvider) {
    static ONCE: OnceLock<(Kept, SdkTracerProvider)> = OnceLock::new();
    ONCE.get_or_init(|| {
        let kept = Kept::default();
        let provider = SdkTracerProvider::builder()
            .with_simple_exporter(kept.clone())
            .build();
        let subscriber = tracing_subscriber::registry()
            .with(tracing_opentelemetry::layer().with_tracer(provider.tracer("toolprism-test")));
        tracing::subscriber::set_global_default(subscriber).expect("the only subscriber");
        (kept, provider)
    })
}

fn spans() -> Vec<SpanData> {
    let (kept, provider) = exported();
    provider.force_flush().unwrap();
    kept.0.lock().unwrap().clone()
}

fn attribute<'a>(span: &'a SpanData, key: &str) -> Option<String> {
    span.attributes
        .iter()
        .find(|kv| kv.key.as_str() == key)
        .map(|kv| kv.value.as_str().into_owned())
}

/// The exported span of the call with id `id`.
fn by_call_id(spans: &[SpanData], id: &str) -> SpanData {
    spans
        .iter()
        .find(|s| attribute(s, "gen_ai.tool.call.id").as_deref() == Some(id))
        .unwrap_or_else(|| {
            let names: Vec<_> = spans.iter().map(|s| (&s.name, &s.attributes)).collect();
            panic!("no span for call {id}: {names:#?}")
        })
        .clone()
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

#[test]
fn otel_every_pipeline_call_is_an_execute_tool_span_and_nested_calls_are_its_children() {
    exported();
    let registry = Registry::builder()
        .tool(Ping)
        .tool(Relay)
        .code_mode(Mode::Both)
        .trace_content(true)
        .build()
        .unwrap();
    let plain = Registry::builder().tool(Ping).build().unwrap();
    runtime().block_on(async {
        assert!(!registry.call(ToolCall::new("t-ok", "ping", "{}")).await.is_error());
        let bad = registry.call(ToolCall::new("t-bad", "ping", r#"{"x":1,"x":2}"#)).await;
        assert_eq!(bad.code().unwrap(), "INVALID_ARGS");
        let unknown = registry.call(ToolCall::new("t-unknown", "nope", "{}")).await;
        assert_eq!(unknown.code().unwrap(), "UNKNOWN_TOOL");
        assert!(!registry.call(ToolCall::new("t-relay", "relay", "{}")).await.is_error());
        let program = json!({"code": "const a = await tools.ping({}); return a + (await tools.ping({}));",
            "description": "two pings"});
        let out = registry
            .call(ToolCall::new("t-code", "run_code", program.to_string()))
            .await;
        assert!(!out.is_error(), "{out:?}");
        assert!(!plain.call(ToolCall::new("t-plain", "ping", "{}")).await.is_error());
    });
    let spans = spans();

    let ok = by_call_id(&spans, "t-ok");
    assert_eq!(ok.name, "execute_tool ping");
    assert_eq!(ok.span_kind, SpanKind::Internal);
    assert_eq!(
        attribute(&ok, "gen_ai.operation.name").unwrap(),
        "execute_tool"
    );
    assert_eq!(attribute(&ok, "gen_ai.tool.name").unwrap(), "ping");
    assert_eq!(attribute(&ok, "gen_ai.tool.type").unwrap(), "function");
    assert_eq!(
        attribute(&ok, "gen_ai.tool.description").unwrap(),
        "Answers pong."
    );
    assert_eq!(attribute(&ok, "gen_ai.tool.call.arguments").unwrap(), "{}");
    // The content the model read, never the value.
    assert_eq!(
        attribute(&ok, "gen_ai.tool.call.result").unwrap(),
        r#"[{"type":"text","text":"pong"}]"#
    );
    assert_eq!(attribute(&ok, "error.type"), None);
    assert_ne!(ok.status, Status::error(""));

    let bad = by_call_id(&spans, "t-bad");
    assert_eq!(attribute(&bad, "error.type").unwrap(), "INVALID_ARGS");
    assert!(
        matches!(bad.status, Status::Error { .. }),
        "{:?}",
        bad.status
    );
    assert_eq!(
        attribute(&bad, "gen_ai.tool.call.result"),
        None,
        "results on success only"
    );
    let unknown = by_call_id(&spans, "t-unknown");
    assert_eq!(unknown.name, "execute_tool nope");
    assert_eq!(attribute(&unknown, "error.type").unwrap(), "UNKNOWN_TOOL");

    // Nested calls, also from a spawned task, are children of their parent.
    let relay = by_call_id(&spans, "t-relay");
    for id in ["t-relay:nested:1", "t-relay:nested:2"] {
        let child = by_call_id(&spans, id);
        assert_eq!(child.parent_span_id, relay.span_context.span_id(), "{id}");
        assert_eq!(
            child.span_context.trace_id(),
            relay.span_context.trace_id(),
            "{id}"
        );
    }
    // A Code Mode program's calls too, made on the engine's own thread.
    let code = by_call_id(&spans, "t-code");
    let program_calls: Vec<&SpanData> = spans
        .iter()
        .filter(|s| attribute(s, "gen_ai.tool.call.id").is_some_and(|i| i.starts_with("t-code:")))
        .collect();
    assert_eq!(program_calls.len(), 2, "{program_calls:#?}");
    for child in program_calls {
        assert_eq!(child.parent_span_id, code.span_context.span_id());
        assert_eq!(child.name, "execute_tool ping");
    }
    // Off by default: neither arguments nor results.
    let plain = by_call_id(&spans, "t-plain");
    assert_eq!(attribute(&plain, "gen_ai.tool.call.arguments"), None);
    assert_eq!(attribute(&plain, "gen_ai.tool.call.result"), None);
    // No top-level call is a child of another.
    assert_eq!(ok.parent_span_id, SpanId::INVALID);
}

/// The exported span of the MCP request with JSON-RPC id `id`.
fn by_request_id(spans: &[SpanData], id: &str) -> Vec<SpanData> {
    spans
        .iter()
        .filter(|s| attribute(s, "jsonrpc.request.id").as_deref() == Some(id))
        .cloned()
        .collect()
}

#[test]
fn otel_an_mcp_call_is_one_span_with_the_mcp_attributes_under_the_requests_traceparent() {
    exported();
    let trace_id = "4bf92f3577b34da6a3ce929d0e0e4736";
    let parent_id = "00f067aa0ba902b7";
    let traceparent = format!("00-{trace_id}-{parent_id}-01");
    runtime().block_on(async {
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
            json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "ping",
                "_meta": {"traceparent": "00-not-a-trace-01"}}}),
        ] {
            client_write
                .write_all(format!("{message}\n").as_bytes())
                .await
                .unwrap();
        }
        // A key twice: read from the bytes sent, so INVALID_ARGS.
        let twice = r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"ping","arguments":{"x":1,"x":2}}}"#;
        client_write
            .write_all(format!("{twice}\n").as_bytes())
            .await
            .unwrap();
        let mut answered = 0;
        while answered < 5 {
            let line = lines.next_line().await.unwrap().expect("an answer");
            let message: Value = serde_json::from_str(&line).unwrap();
            if message.get("id").is_some() {
                assert!(message.get("error").is_none(), "{message}");
                answered += 1;
            }
        }
        client_write.shutdown().await.unwrap();
        drop(lines);
        serving.await.unwrap().unwrap();
    });
    let spans = spans();

    // One span per call: the pipeline's, with MCP's attributes added.
    let mut traced = by_request_id(&spans, "2");
    assert_eq!(traced.len(), 1, "{traced:#?}");
    let traced = traced.remove(0);
    assert!(
        !spans.iter().any(|s| s.name == "tools/call"),
        "no second span around the tool"
    );
    assert_eq!(traced.name, "execute_tool ping");
    assert_eq!(traced.span_kind, SpanKind::Server);
    assert_eq!(
        attribute(&traced, "gen_ai.operation.name").unwrap(),
        "execute_tool"
    );
    assert_eq!(attribute(&traced, "gen_ai.tool.name").unwrap(), "ping");
    assert_eq!(attribute(&traced, "gen_ai.tool.type").unwrap(), "function");
    assert_eq!(
        attribute(&traced, "gen_ai.tool.description").unwrap(),
        "Answers pong."
    );
    assert!(
        attribute(&traced, "gen_ai.tool.call.id")
            .unwrap()
            .ends_with(":2")
    );
    assert_eq!(attribute(&traced, "mcp.method.name").unwrap(), "tools/call");
    assert_eq!(
        attribute(&traced, "mcp.protocol.version").unwrap(),
        "2025-11-25"
    );
    assert_eq!(attribute(&traced, "network.transport").unwrap(), "pipe");
    assert_eq!(attribute(&traced, "traceparent").unwrap(), traceparent);

    // In the client's trace, a child of the client's span.
    assert_eq!(
        traced.span_context.trace_id(),
        TraceId::from_hex(trace_id).unwrap()
    );
    assert_eq!(traced.parent_span_id, SpanId::from_hex(parent_id).unwrap());
    assert!(traced.parent_span_is_remote);
    assert_eq!(traced.span_context.trace_state().header(), "vendor=1");

    // Without a trace context, or with one the propagator refuses: not in
    // the client's trace, and no remote parent.
    for id in ["3", "4"] {
        let plain = by_request_id(&spans, id).remove(0);
        assert_ne!(
            plain.span_context.trace_id(),
            TraceId::from_hex(trace_id).unwrap(),
            "{id}"
        );
        assert!(!plain.parent_span_is_remote, "{id}");
    }
    // A failed call carries its code.
    let failed = by_request_id(&spans, "5").remove(0);
    assert_eq!(attribute(&failed, "error.type").unwrap(), "INVALID_ARGS");
}
