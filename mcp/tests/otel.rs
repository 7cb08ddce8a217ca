//! Feature `otel`: the W3C `traceparent` of a `tools/call`'s `_meta`
//! becomes the parent of the call's `tools/call` span, as an OpenTelemetry
//! exporter sees it. A real tracing-opentelemetry layer over the
//! OpenTelemetry SDK, exporting to memory, while a registry is served over
//! MCP (stdio framing, on an in-process pipe) to a client that sends calls
//! with and without a trace context.
//!
//! Run with `cargo test -p toolprism-mcp --features otel --test otel`.
#![cfg(feature = "otel")]

use std::sync::{Arc, Mutex};

use opentelemetry::trace::{SpanId, TraceId, TracerProvider as _};
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::trace::{SdkTracerProvider, SpanData, SpanExporter};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use toolprism::mcp::McpServer;
use toolprism::{ContentBlock, NoMeta, Registry, Tool, ToolContext, ToolError, ToolInfo};
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

/// An exporter that keeps every span it is given.
#[derive(Clone, Debug, Default)]
struct Kept(Arc<Mutex<Vec<SpanData>>>);

impl SpanExporter for Kept {
    fn export(&self, batch: Vec<SpanData>) -> impl Future<Output = OTelSdkResult> + Send {
        self.0.lock().unwrap().extend(batch);
        std::future::ready(Ok(()))
    }
}

/// The exported `tools/call` span of the request with JSON-RPC id `id`.
fn call_span(spans: &[SpanData], id: &str) -> SpanData {
    spans
        .iter()
        .find(|s| {
            s.name == "tools/call"
                && s.attributes
                    .iter()
                    .any(|kv| kv.key.as_str() == "request_id" && kv.value.as_str() == id)
        })
        .unwrap_or_else(|| {
            let names: Vec<_> = spans.iter().map(|s| (&s.name, &s.attributes)).collect();
            panic!("no tools/call span for request {id}: {names:#?}")
        })
        .clone()
}

#[test]
fn otel_the_requests_traceparent_is_the_parent_of_its_call_span() {
    let kept = Kept::default();
    let provider = SdkTracerProvider::builder()
        .with_simple_exporter(kept.clone())
        .build();
    let subscriber = tracing_subscriber::registry()
        .with(tracing_opentelemetry::layer().with_tracer(provider.tracer("toolprism-test")));
    tracing::subscriber::set_global_default(subscriber).expect("the only subscriber");

    let trace_id = "4bf92f3577b34da6a3ce929d0e0e4736";
    let parent_id = "00f067aa0ba902b7";
    let traceparent = format!("00-{trace_id}-{parent_id}-01");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
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
            json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "ping",
                "_meta": {"traceparent": "00-not-a-trace-01"}}}),
        ] {
            client_write
                .write_all(format!("{message}\n").as_bytes())
                .await
                .unwrap();
        }
        let mut answered = 0;
        while answered < 4 {
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
    provider.force_flush().unwrap();
    let spans = kept.0.lock().unwrap().clone();

    // In the client's trace, a child of the client's span.
    let traced = call_span(&spans, "2");
    assert_eq!(
        traced.span_context.trace_id(),
        TraceId::from_hex(trace_id).unwrap()
    );
    assert_eq!(traced.parent_span_id, SpanId::from_hex(parent_id).unwrap());
    assert!(traced.parent_span_is_remote);
    assert_eq!(traced.span_context.trace_state().header(), "vendor=1");
    assert_ne!(
        traced.span_context.span_id(),
        SpanId::from_hex(parent_id).unwrap()
    );

    // Without a trace context, or with one the propagator refuses: not in
    // the client's trace, and no remote parent (the span stays where the
    // subscriber puts it: under the server's own span, when there is one).
    for id in ["3", "4"] {
        let plain = call_span(&spans, id);
        assert_ne!(
            plain.span_context.trace_id(),
            TraceId::from_hex(trace_id).unwrap(),
            "{id}"
        );
        assert!(!plain.parent_span_is_remote, "{id}");
        assert_ne!(
            plain.parent_span_id,
            SpanId::from_hex(parent_id).unwrap(),
            "{id}"
        );
    }
}
