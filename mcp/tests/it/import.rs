//! Imported tools against real servers, each a process of its own:
//! toolprism's test server (`tests/support/server.rs`, over stdio and
//! Streamable HTTP), the MCP project's reference servers `everything` and
//! `filesystem` (npm, pinned), `mcp-server-time` (PyPI, pinned), and a
//! tiny server written against the wire by hand
//! (`tests/support/import_server.py`) for what no well-behaved server
//! does (a value that breaks its own schema, a name toolprism refuses, a
//! process that dies mid-call). What a server received is read from its
//! own record (toolprism's session log, the tiny server's events, or a
//! copy of its stdin made by `tests/support/wrap.sh`), never assumed.

use crate::import_env;
use crate::support;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use toolprism::card::{NumberedLine, ReadResult};
use toolprism::log::SessionLog;
use toolprism::mcp::import::{Import, Imported, Stderr};
use toolprism::replay::replay_log;
use toolprism::{
    CallOptions, CancellationToken, ContentBlock, DynamicTool, Registry, ResultCard, ToolCall,
    ToolKind, ToolOutcome, ToolResult, content_text,
};

use support::{HttpServer, log_events, server_exe};

// ---------------------------------------------------------------------------
// The servers
// ---------------------------------------------------------------------------

fn npm() -> PathBuf {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| toolprism_testkit::npm_packages("mcp-servers", import_env::NPM_SERVERS))
        .clone()
}

fn python() -> toolprism_testkit::PythonEnv {
    static ENV: std::sync::OnceLock<toolprism_testkit::PythonEnv> = std::sync::OnceLock::new();
    ENV.get_or_init(|| toolprism_testkit::python_env("mcp-import", &import_env::import_python()))
        .clone()
}

fn support(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/support")
        .join(name)
        .to_string_lossy()
        .into_owned()
}

/// A reference server's entry point under `node_modules`.
fn reference(package: &str) -> String {
    npm()
        .join("node_modules/@modelcontextprotocol")
        .join(package)
        .join("dist/index.js")
        .to_string_lossy()
        .into_owned()
}

/// `program args…` under `wrap.sh`: its stdin copied to `capture`, its
/// process id in `pidfile`.
fn wrapped(dir: &Path, program: &str, args: &[&str]) -> (Import, PathBuf, PathBuf) {
    let capture = dir.join("stdin.jsonl");
    let pidfile = dir.join("pid");
    let mut all = vec![
        support("wrap.sh"),
        capture.to_string_lossy().into_owned(),
        pidfile.to_string_lossy().into_owned(),
        program.to_owned(),
    ];
    all.extend(args.iter().map(|a| a.to_string()));
    (
        Import::stdio("sh", all).stderr(Stderr::Discard),
        capture,
        pidfile,
    )
}

/// The toolprism test server over stdio, its own session log at `log`.
fn toolprism_stdio(log: &Path) -> Import {
    Import::stdio(
        server_exe().to_string_lossy(),
        [
            "--server-log".to_owned(),
            log.to_string_lossy().into_owned(),
        ],
    )
}

/// The tiny server, recording what it receives in `events`.
fn tiny(events: &Path) -> Import {
    Import::stdio(
        "python3",
        [
            support("import_server.py"),
            "--events".to_owned(),
            events.to_string_lossy().into_owned(),
        ],
    )
}

fn lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// What a server was sent, from a copy of its stdin: each message's
/// method, `name` for a `tools/call`, and the cancelled request's id.
fn sent(capture: &Path) -> Vec<String> {
    lines(capture)
        .iter()
        .map(|m| {
            let method = m["method"].as_str().unwrap_or("(answer)");
            match method {
                "tools/call" => format!(
                    "tools/call {} #{}",
                    m["params"]["name"].as_str().unwrap(),
                    m["id"]
                ),
                "notifications/cancelled" => format!("cancelled #{}", m["params"]["requestId"]),
                other => other.to_owned(),
            }
        })
        .collect()
}

fn registry(imports: &[&Imported], log: &Path) -> Registry {
    imports
        .iter()
        .fold(Registry::builder(), |b, i| i.register_in(b))
        .log(SessionLog::create(log).unwrap())
        .build()
        .unwrap()
}

async fn call(registry: &Registry, id: &str, name: &str, arguments: Value) -> ToolOutcome {
    registry
        .call(ToolCall::new(id, name, arguments.to_string()))
        .await
}

/// A call with progress collected, and a token to cancel it.
async fn call_with(
    registry: &Registry,
    id: &str,
    name: &str,
    arguments: Value,
    timeout: Option<Duration>,
    cancel: Option<CancellationToken>,
) -> (ToolOutcome, Vec<(u64, Option<u64>, Option<String>)>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let mut options = CallOptions::new().with_progress(move |p| {
        sink.lock()
            .unwrap()
            .push((p.done, p.total, p.message.clone()));
    });
    if let Some(timeout) = timeout {
        options = options.with_timeout(timeout);
    }
    if let Some(token) = cancel {
        options = options.with_cancel(token);
    }
    let out = registry
        .call_with(ToolCall::new(id, name, arguments.to_string()), &options)
        .await;
    let progress = seen.lock().unwrap().clone();
    (out, progress)
}

fn code(out: &ToolOutcome) -> String {
    out.code()
        .map(|c| c.as_str().to_owned())
        .unwrap_or_default()
}

/// Every card drawn live equals the one drawn from the log (C13).
fn replayed_cards_equal(registry: &Registry, log: &Path, live: &[ToolOutcome]) {
    let replayed = replay_log(log, registry).unwrap();
    assert!(replayed.problems.is_empty(), "{:?}", replayed.problems);
    for out in live {
        let entry = replayed
            .entries
            .iter()
            .find(|e| e.call_id == out.call_id())
            .unwrap_or_else(|| panic!("call {} is not in the log", out.call_id()));
        assert_eq!(
            Some(&entry.call_card),
            out.call_card(),
            "call card of {}",
            out.call_id()
        );
        assert_eq!(
            entry.result_card.as_ref(),
            out.result_card(),
            "result card of {}",
            out.call_id()
        );
    }
}

/// Waits until `until` holds, up to 10 s.
fn eventually(what: &str, until: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !until() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn kill(pid: u32) {
    let status = std::process::Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

// ---------------------------------------------------------------------------
// toolprism's own server
// ---------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn p7_a_toolprism_server_over_stdio_keeps_every_rule() {
    let dir = tempfile::tempdir().unwrap();
    let server_log = dir.path().join("server.jsonl");
    let imported = toolprism_stdio(&server_log)
        .prefix("tp")
        .connect()
        .await
        .unwrap();
    let listed = imported.tools();
    let names: Vec<&str> = listed
        .iter()
        .map(|t| t.definition().name.as_str())
        .collect();
    assert_eq!(
        names,
        [
            "tp__echo",
            "tp__fail",
            "tp__slow",
            "tp__numbers",
            "tp__word",
            "tp__picture",
            "tp__whoami",
            "tp__steps",
            "tp__twice",
            "tp__ask_model",
            "tp__ask_model_blocking",
            "tp__ask_user",
            "tp__chatty",
            "tp__guarded",
            "tp__media"
        ]
    );
    let listed = imported.tools();
    let tool = |name: &str| listed.iter().find(|t| t.remote_name() == name).unwrap();
    let echo = tool("echo").definition();
    assert_eq!(echo.title.as_deref(), Some("Echo"));
    assert_eq!(echo.description, "Echo the text back.");
    assert!(
        echo.annotations.read_only && echo.annotations.idempotent && !echo.annotations.destructive
    );
    // The kind a toolprism server sends under `_meta`, and its wrapped
    // output schema unwrapped: `numbers` is a bare array again.
    assert_eq!(tool("slow").definition().kind, ToolKind::Execute);
    assert_eq!(
        tool("numbers").definition().output_schema.as_ref().unwrap()["type"],
        "array"
    );
    assert_eq!(
        tool("numbers").meta().unwrap()["toolprism/wrapped"],
        "value"
    );
    assert!(
        imported.server().contains("toolprism-test"),
        "{}",
        imported.server()
    );

    let log = dir.path().join("hub.jsonl");
    let registry = registry(&[&imported], &log);
    let mut live = Vec::new();

    let out = call(&registry, "c1", "tp__echo", json!({"text": "héllo"})).await;
    assert!(!out.is_error(), "{:?}", out.error());
    assert_eq!(out.content(), [ContentBlock::text("echo: héllo")]);
    assert_eq!(out.value().unwrap(), &json!({"text": "héllo", "len": 6}));
    live.push(out);

    let out = call(&registry, "c2", "tp__numbers", json!({"count": 3})).await;
    assert_eq!(out.value().unwrap(), &json!([1, 2, 3]));
    live.push(out);

    let out = call(&registry, "c3", "tp__picture", json!({})).await;
    assert_eq!(out.content()[1].kind(), "image");
    live.push(out);

    // isError with the server's own code, its message without a second "Error: ".
    let out = call(&registry, "c4", "tp__fail", json!({"message": "no luck"})).await;
    assert_eq!(code(&out), "NOPE");
    assert_eq!(out.error().unwrap().message, "no luck");
    live.push(out);

    // Arguments that break the schema never reach the server.
    let out = call(&registry, "c5", "tp__echo", json!({"text": 5})).await;
    assert_eq!(code(&out), "INVALID_ARGS");
    live.push(out);

    // Progress, in order, before the result.
    let (out, progress) = call_with(
        &registry,
        "c6",
        "tp__steps",
        json!({"count": 4}),
        None,
        None,
    )
    .await;
    assert!(!out.is_error(), "{:?}", out.error());
    assert_eq!(
        progress,
        (1..=4)
            .map(|i| (i, Some(4), Some(format!("step {i} of 4"))))
            .collect::<Vec<_>>()
    );
    live.push(out);

    // A hanging call times out, and the server is told.
    let started = Instant::now();
    let (out, _) = call_with(
        &registry,
        "c7",
        "tp__slow",
        json!({"ms": 60000}),
        Some(Duration::from_millis(300)),
        None,
    )
    .await;
    assert_eq!(code(&out), "TIMEOUT");
    assert!(started.elapsed() < Duration::from_secs(5));
    live.push(out);

    // A cancelled call ends at once, and the server sees the cancellation.
    let token = CancellationToken::new();
    let cancel = token.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        cancel.cancel();
    });
    let (out, _) = call_with(
        &registry,
        "c8",
        "tp__slow",
        json!({"ms": 60000}),
        None,
        Some(token),
    )
    .await;
    assert_eq!(code(&out), "ABORTED");
    live.push(out);

    // What the server recorded: no call with the bad arguments, the two
    // slow calls aborted there too.
    let events = log_events(&server_log, Duration::from_secs(10), |events| {
        events
            .iter()
            .filter(|e| e["type"] == "tool/result" && e["error"]["code"] == "ABORTED")
            .count()
            >= 2
    });
    let calls: Vec<&Value> = events.iter().filter(|e| e["type"] == "tool/call").collect();
    assert_eq!(calls.len(), 7, "{events:#?}");
    assert!(
        calls
            .iter()
            .all(|c| !c["arguments"].as_str().unwrap().contains(r#""text":5"#))
    );
    let aborted = events
        .iter()
        .filter(|e| e["type"] == "tool/result" && e["error"]["code"] == "ABORTED")
        .count();
    assert_eq!(aborted, 2, "{events:#?}");

    // The server dies mid-call: SERVER_GONE; the next call starts it again.
    let out = call(&registry, "c9", "tp__whoami", json!({})).await;
    let pid = out.value().unwrap()["pid"].as_u64().unwrap() as u32;
    let slow = call(&registry, "c10", "tp__slow", json!({"ms": 60000}));
    let killer = async {
        tokio::time::sleep(Duration::from_millis(300)).await;
        kill(pid);
    };
    let (out, ()) = tokio::join!(slow, killer);
    assert_eq!(code(&out), "SERVER_GONE", "{:?}", out.error());
    assert!(
        out.error().unwrap().message.contains("went away"),
        "{:?}",
        out.error()
    );
    live.push(out);
    let out = call(&registry, "c11", "tp__whoami", json!({})).await;
    assert!(!out.is_error(), "{:?}", out.error());
    assert_ne!(out.value().unwrap()["pid"].as_u64().unwrap() as u32, pid);
    live.push(out);

    replayed_cards_equal(&registry, &log, &live);
    // The generic cards: the tool's name, its kind, the raw input. The kind
    // is the one the server declares for echo (`other`), which wins over
    // the kind its hints alone would give (read-only, closed world: `read`).
    let card = serde_json::to_value(live[0].call_card().unwrap()).unwrap();
    assert_eq!(
        card,
        json!({"card": "generic", "title": "tp__echo", "kind": "other", "rawInput": {"text": "héllo"}})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn p7_a_toolprism_server_over_http_keeps_every_rule() {
    let dir = tempfile::tempdir().unwrap();
    let server_log = dir.path().join("server.jsonl");
    let server = HttpServer::start(&["--server-log", server_log.to_str().unwrap()]);
    let imported = Import::http(&server.url)
        .header("X-Test", "1")
        .connect()
        .await
        .unwrap();
    let log = dir.path().join("hub.jsonl");
    let registry = registry(&[&imported], &log);

    let out = call(&registry, "h1", "echo", json!({"text": "over http"})).await;
    assert_eq!(
        out.value().unwrap(),
        &json!({"text": "over http", "len": 9})
    );
    let out = call(&registry, "h2", "fail", json!({"message": "no"})).await;
    assert_eq!(code(&out), "NOPE");
    let out = call(&registry, "h3", "echo", json!({})).await;
    assert_eq!(code(&out), "INVALID_ARGS");
    let (out, progress) =
        call_with(&registry, "h4", "steps", json!({"count": 3}), None, None).await;
    assert!(!out.is_error());
    assert_eq!(progress.iter().map(|p| p.0).collect::<Vec<_>>(), [1, 2, 3]);
    let (out, _) = call_with(
        &registry,
        "h5",
        "slow",
        json!({"ms": 60000}),
        Some(Duration::from_millis(300)),
        None,
    )
    .await;
    assert_eq!(code(&out), "TIMEOUT");
    let events = log_events(&server_log, Duration::from_secs(10), |events| {
        events
            .iter()
            .any(|e| e["type"] == "tool/result" && e["error"]["code"] == "ABORTED")
    });
    assert_eq!(
        events.iter().filter(|e| e["type"] == "tool/call").count(),
        4,
        "{events:#?}"
    );
    assert!(
        events.iter().any(|e| e["error"]["code"] == "ABORTED"),
        "{events:#?}"
    );

    // The server is gone for good: the call fails, and later calls fail
    // at once while the backoff runs.
    drop(server);
    let out = call(&registry, "h6", "echo", json!({"text": "x"})).await;
    assert!(
        matches!(code(&out).as_str(), "SERVER_GONE" | "SERVER_UNAVAILABLE"),
        "{:?}",
        out.error()
    );
    let started = Instant::now();
    let mut unavailable = None;
    for i in 0..3 {
        let out = call(&registry, &format!("h7-{i}"), "echo", json!({"text": "x"})).await;
        if code(&out) == "SERVER_UNAVAILABLE" {
            unavailable = Some(out);
        }
    }
    let out = unavailable.expect("the server is reported unavailable");
    assert!(
        out.error().unwrap().message.contains("next attempt"),
        "{:?}",
        out.error()
    );
    assert!(started.elapsed() < Duration::from_secs(10));
}

// ---------------------------------------------------------------------------
// The tiny server: what well-behaved servers never do
// ---------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn p7_a_value_breaking_the_servers_own_schema_is_invalid_tool_output() {
    let dir = tempfile::tempdir().unwrap();
    let events = dir.path().join("events.jsonl");
    // `bad.name` is a name toolprism refuses: connecting says how to fix it.
    let refused = tiny(&events).connect().await.unwrap_err();
    assert!(refused.to_string().contains("\"bad.name\""), "{refused}");
    assert!(refused.to_string().contains("Import::rename"), "{refused}");

    let imported = tiny(&events)
        .rename("bad.name", "bad_name")
        .connect()
        .await
        .unwrap();
    let log = dir.path().join("hub.jsonl");
    let registry = registry(&[&imported], &log);
    let listed = imported.tools();
    let tool = |name: &str| listed.iter().find(|t| t.remote_name() == name).unwrap();
    assert_eq!(tool("add").definition().kind, ToolKind::Read);
    assert_eq!(
        tool("blocks").meta().unwrap()["example.com/ui"]["resourceUri"],
        "ui://blocks"
    );
    // No hints: MCP's defaults (destructive, open world), kind other.
    let fail = tool("fail").definition();
    assert!(fail.annotations.destructive && fail.annotations.open_world);
    assert_eq!(fail.kind, ToolKind::Other);

    let out = call(&registry, "t1", "add", json!({"a": 2, "b": 3})).await;
    assert_eq!(out.value().unwrap(), &json!({"sum": 5}));
    let out = call(&registry, "t2", "broken", json!({})).await;
    assert_eq!(code(&out), "INVALID_TOOL_OUTPUT");
    assert!(
        out.error().unwrap().message.contains("value.sum"),
        "{:?}",
        out.error()
    );
    let out = call(&registry, "t3", "missing", json!({})).await;
    assert_eq!(code(&out), "INVALID_TOOL_OUTPUT");
    let out = call(&registry, "t4", "fail", json!({})).await;
    assert_eq!(code(&out), "TOOL_ERROR");
    assert_eq!(out.error().unwrap().message, "it failed on purpose");

    // Every block kind, and the value of a tool without an output schema.
    let out = call(&registry, "t5", "blocks", json!({})).await;
    let kinds: Vec<&str> = out.content().iter().map(ContentBlock::kind).collect();
    assert_eq!(
        kinds,
        [
            "text",
            "image",
            "audio",
            "resource",
            "resource",
            "resource_link"
        ]
    );
    assert_eq!(
        out.value().unwrap(),
        &json!({"content": [
            {"type": "text", "text": "t"},
            {"type": "image", "mimeType": "image/png", "data": "iVBO"},
            {"type": "audio", "mimeType": "audio/wav", "data": "UklG"},
            {"type": "resource", "resource": {"uri": "test://t", "mimeType": "text/plain", "text": "inside"}},
            {"type": "resource", "resource": {"uri": "test://b", "blob": "AAEC"}},
            {"type": "resource_link", "uri": "file:///x.rs", "name": "x.rs", "mimeType": "text/x-rust", "size": 12}
        ]})
    );

    // Arguments refused before sending: the server never saw them.
    let out = call(&registry, "t6", "add", json!({"a": 1})).await;
    assert_eq!(code(&out), "INVALID_ARGS");
    let out = call(&registry, "t7", "add", json!({"a": 1, "b": 2, "c": 3})).await;
    assert_eq!(code(&out), "INVALID_ARGS");

    // Fractions of 1 become percentages.
    let (out, progress) = call_with(&registry, "t8", "wait", json!({"ms": 80}), None, None).await;
    assert!(!out.is_error());
    assert_eq!(
        progress,
        (1..=4)
            .map(|i| (i * 25, Some(100), Some(format!("quarter {i}"))))
            .collect::<Vec<_>>()
    );

    // A cancelled and a timed-out call: the server receives
    // notifications/cancelled for each.
    let token = CancellationToken::new();
    let cancel = token.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(150)).await;
        cancel.cancel();
    });
    let (out, _) = call_with(
        &registry,
        "t9",
        "wait",
        json!({"ms": 60000}),
        None,
        Some(token),
    )
    .await;
    assert_eq!(code(&out), "ABORTED");
    let (out, _) = call_with(
        &registry,
        "t10",
        "wait",
        json!({"ms": 60000}),
        Some(Duration::from_millis(150)),
        None,
    )
    .await;
    assert_eq!(code(&out), "TIMEOUT");
    eventually("two cancellations", || {
        lines(&events)
            .iter()
            .filter(|e| e["method"] == "notifications/cancelled")
            .count()
            == 2
    });
    let received = lines(&events);
    let calls: Vec<&Value> = received
        .iter()
        .filter(|e| e["method"] == "tools/call")
        .collect();
    let adds: Vec<&Value> = calls
        .iter()
        .copied()
        .filter(|c| c["params"]["name"] == "add")
        .collect();
    assert_eq!(adds.len(), 1, "only the good add was sent: {adds:#?}");
    let waits: Vec<&Value> = calls
        .iter()
        .copied()
        .filter(|c| c["params"]["arguments"]["ms"] == 60000)
        .collect();
    let cancelled: Vec<&Value> = received
        .iter()
        .filter(|e| e["method"] == "notifications/cancelled")
        .map(|e| &e["params"]["requestId"])
        .collect();
    assert_eq!(
        cancelled,
        waits.iter().map(|w| &w["id"]).collect::<Vec<_>>()
    );

    // The process dies mid-call; the next call starts a new one.
    let out = call(&registry, "t11", "pid", json!({})).await;
    let first = out.value().unwrap()["pid"].clone();
    let out = call(&registry, "t12", "die", json!({})).await;
    assert_eq!(code(&out), "SERVER_GONE", "{:?}", out.error());
    let out = call(&registry, "t13", "pid", json!({})).await;
    assert!(!out.is_error(), "{:?}", out.error());
    assert_ne!(out.value().unwrap()["pid"], first);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn p7_the_log_holds_content_code_and_meta_never_structured_content() {
    let dir = tempfile::tempdir().unwrap();
    let events = dir.path().join("events.jsonl");
    let imported = tiny(&events)
        .allow(["secret", "fail", "add"])
        .connect()
        .await
        .unwrap();
    assert_eq!(imported.tools().len(), 3);
    let log = dir.path().join("hub.jsonl");
    let registry = registry(&[&imported], &log);
    const CANARY: &str = "CANARY-7f3a9c-structured-only";
    let secret = call(
        &registry,
        "s1",
        "secret",
        json!({"canary": CANARY.to_lowercase()}),
    )
    .await;
    assert_eq!(secret.value().unwrap()["token"], CANARY.to_lowercase());
    assert_eq!(content_text(secret.content()), "a secret was made");
    let failed = call(&registry, "s2", "fail", json!({})).await;
    let added = call(&registry, "s3", "add", json!({"a": 1, "b": 1})).await;
    let text = std::fs::read_to_string(&log).unwrap();
    // The arguments hold the lower-case canary (the model sent them); the
    // value's copy never reaches the log in any spelling beyond that.
    assert_eq!(text.matches(&CANARY.to_lowercase()).count(), 1, "{text}");
    assert!(!text.contains("\"token\""), "{text}");
    assert!(!text.contains("\"sum\""), "{text}");
    let logged = lines(&log);
    let results: Vec<&Value> = logged
        .iter()
        .filter(|e| e["type"] == "tool/result")
        .collect();
    assert_eq!(
        results[0]["content"],
        json!([{"type": "text", "text": "a secret was made"}])
    );
    assert_eq!(results[1]["error"]["code"], "TOOL_ERROR");
    assert_eq!(
        results[2]["content"],
        json!([{"type": "text", "text": "2"}])
    );
    replayed_cards_equal(&registry, &log, &[secret, failed, added]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn p7_a_name_two_sources_share_fails_the_build_naming_both() {
    let dir = tempfile::tempdir().unwrap();
    let a = tiny(&dir.path().join("a.jsonl"))
        .name("alpha")
        .allow(["add"])
        .connect()
        .await
        .unwrap();
    let b = tiny(&dir.path().join("b.jsonl"))
        .name("beta")
        .allow(["add"])
        .connect()
        .await
        .unwrap();
    let err = b
        .register_in(a.register_in(Registry::builder()))
        .build()
        .unwrap_err()
        .to_string();
    assert!(err.contains("two tools are named \"add\""), "{err}");
    assert!(
        err.contains("the tool \"add\" of the MCP server \"beta\" (python3 "),
        "{err}"
    );
    assert!(
        err.contains("registered earlier, the tool \"add\" of the MCP server \"alpha\""),
        "{err}"
    );
    // The remedies an imported tool can take; not the attribute of a Rust
    // tool, which it cannot.
    for remedy in IMPORT_REMEDIES {
        assert!(err.contains(remedy), "{remedy}: {err}");
    }
    assert!(!err.contains("#[tool(name"), "{err}");
    // With prefixes they live side by side.
    let a = tiny(&dir.path().join("a.jsonl"))
        .prefix("a")
        .allow(["add"])
        .connect()
        .await
        .unwrap();
    let b = tiny(&dir.path().join("b.jsonl"))
        .prefix("b")
        .allow(["add"])
        .connect()
        .await
        .unwrap();
    let registry = b
        .register_in(a.register_in(Registry::builder()))
        .build()
        .unwrap();
    let names: Vec<&str> = registry.definitions().map(|d| d.name.as_str()).collect();
    assert_eq!(names, ["a__add", "b__add"]);
    // An allow-list naming a tool the server lacks is refused.
    let err = tiny(&dir.path().join("c.jsonl"))
        .allow(["nope"])
        .connect()
        .await
        .unwrap_err();
    assert!(err.to_string().contains("allow names \"nope\""), "{err}");
}

/// What a collision with an imported tool names as its remedies: a prefix
/// (in Rust and on the command line), an allow-list, a rename.
const IMPORT_REMEDIES: [&str; 6] = [
    "a prefix (`Import::prefix`",
    "`--mcp-config` names them `<server>__<tool>`",
    "import only the tools needed (`Import::allow`",
    "`includeTools` in `--mcp-config`",
    "or rename it (`Import::rename`)",
    "two tools are named \"add\"",
];

#[derive(Clone, serde::Deserialize, schemars::JsonSchema)]
struct Terms {
    a: f64,
    b: f64,
}

/// Adds a and b, in Rust: named like the tiny server's `add`.
struct RustAdd;

/// Adds a and b.
#[toolprism::tool(name = "add", read_only)]
impl RustAdd {
    fn execute(args: Terms) -> f64 {
        args.a + args.b
    }
    fn render(_: &Terms, v: &f64) -> Vec<ContentBlock> {
        vec![ContentBlock::text(v.to_string())]
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn p7_a_rust_tool_and_an_imported_one_sharing_a_name_name_the_imports_remedies() {
    let dir = tempfile::tempdir().unwrap();
    let tiny_add = tiny(&dir.path().join("a.jsonl"))
        .name("alpha")
        .allow(["add"])
        .connect()
        .await
        .unwrap();
    // Either order: the Rust tool first, or the imported one.
    let rust_first = tiny_add
        .register_in(Registry::builder().tool(RustAdd))
        .build()
        .unwrap_err()
        .to_string();
    let imported_first = tiny_add
        .register_in(Registry::builder())
        .tool(RustAdd)
        .build()
        .unwrap_err()
        .to_string();
    for err in [rust_first, imported_first] {
        assert!(err.contains("import::RustAdd`"), "{err}");
        assert!(
            err.contains("the tool \"add\" of the MCP server \"alpha\""),
            "{err}"
        );
        for remedy in IMPORT_REMEDIES {
            assert!(err.contains(remedy), "{remedy}: {err}");
        }
        assert!(!err.contains("#[tool(name"), "{err}");
    }
}

// ---------------------------------------------------------------------------
// The reference servers
// ---------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn p7_the_everything_server_lists_calls_streams_progress_cancels_and_restarts() {
    let dir = tempfile::tempdir().unwrap();
    let (import, capture, pidfile) = wrapped(
        dir.path(),
        "node",
        &[&reference("server-everything"), "stdio"],
    );
    let imported = import.connect().await.unwrap();
    let listed = imported.tools();
    let names: Vec<&str> = listed.iter().map(|t| t.remote_name()).collect();
    for name in [
        "echo",
        "get-sum",
        "get-structured-content",
        "get-tiny-image",
        "trigger-long-running-operation",
    ] {
        assert!(names.contains(&name), "{names:?}");
    }
    let log = dir.path().join("hub.jsonl");
    let registry = registry(&[&imported], &log);
    let mut live = Vec::new();

    let out = call(&registry, "e1", "echo", json!({"message": "hi"})).await;
    assert!(!out.is_error(), "{:?}", out.error());
    assert_eq!(content_text(out.content()), "Echo: hi");
    assert_eq!(out.value().unwrap()["content"][0]["text"], "Echo: hi");
    live.push(out);
    let out = call(
        &registry,
        "e2",
        "get-structured-content",
        json!({"location": "Chicago"}),
    )
    .await;
    assert!(!out.is_error(), "{:?}", out.error());
    assert!(
        out.value().unwrap()["temperature"].is_number(),
        "{:?}",
        out.value()
    );
    live.push(out);
    let out = call(&registry, "e3", "get-tiny-image", json!({})).await;
    assert!(out.content().iter().any(|b| b.kind() == "image"));
    live.push(out);
    // Refused here: a location the schema does not list, a missing message.
    let out = call(
        &registry,
        "e4",
        "get-structured-content",
        json!({"location": "Paris"}),
    )
    .await;
    assert_eq!(code(&out), "INVALID_ARGS");
    live.push(out);
    let out = call(&registry, "e5", "echo", json!({})).await;
    assert_eq!(code(&out), "INVALID_ARGS");
    live.push(out);

    let (out, progress) = call_with(
        &registry,
        "e6",
        "trigger-long-running-operation",
        json!({"duration": 0.4, "steps": 4}),
        None,
        None,
    )
    .await;
    assert!(!out.is_error(), "{:?}", out.error());
    assert_eq!(
        progress.iter().map(|p| p.0).collect::<Vec<_>>(),
        [1, 2, 3, 4],
        "{progress:?}"
    );
    assert!(progress.iter().all(|p| p.1 == Some(4)));
    live.push(out);

    let (out, _) = call_with(
        &registry,
        "e7",
        "trigger-long-running-operation",
        json!({"duration": 30, "steps": 3}),
        Some(Duration::from_millis(300)),
        None,
    )
    .await;
    assert_eq!(code(&out), "TIMEOUT");
    live.push(out);
    let token = CancellationToken::new();
    let cancel = token.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        cancel.cancel();
    });
    let (out, _) = call_with(
        &registry,
        "e8",
        "trigger-long-running-operation",
        json!({"duration": 30, "steps": 3}),
        None,
        Some(token),
    )
    .await;
    assert_eq!(code(&out), "ABORTED");
    live.push(out);
    eventually("two cancellations sent", || {
        sent(&capture)
            .iter()
            .filter(|s| s.starts_with("cancelled"))
            .count()
            == 2
    });
    let sent = sent(&capture);
    let calls: Vec<&String> = sent
        .iter()
        .filter(|s| s.starts_with("tools/call"))
        .collect();
    assert_eq!(
        calls.len(),
        6,
        "the two refused calls were never sent: {sent:#?}"
    );
    let long: Vec<String> = calls
        .iter()
        .filter(|c| c.contains("trigger-long-running-operation"))
        .skip(1)
        .map(|c| c.rsplit_once('#').unwrap().1.to_owned())
        .collect();
    let cancelled: Vec<String> = sent
        .iter()
        .filter_map(|s| s.strip_prefix("cancelled #").map(str::to_owned))
        .collect();
    assert_eq!(cancelled, long);

    // Killed mid-call: SERVER_GONE; the next call starts it again.
    let pid: u32 = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let slow = call(
        &registry,
        "e9",
        "trigger-long-running-operation",
        json!({"duration": 30, "steps": 3}),
    );
    let killer = async {
        tokio::time::sleep(Duration::from_millis(300)).await;
        kill(pid);
    };
    let (out, ()) = tokio::join!(slow, killer);
    assert_eq!(code(&out), "SERVER_GONE", "{:?}", out.error());
    live.push(out);
    let out = call(&registry, "e10", "echo", json!({"message": "again"})).await;
    assert!(!out.is_error(), "{:?}", out.error());
    let again: u32 = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert_ne!(again, pid);
    live.push(out);

    replayed_cards_equal(&registry, &log, &live);
}

/// `read_text_file` drawn as a read card by a presenter attached by name:
/// the lines of the content, numbered, with the path from the arguments.
fn read_card(arguments: &Value, result: &ToolResult) -> Option<ResultCard> {
    if result.is_error {
        return None;
    }
    let path = arguments.get("path")?.as_str()?.to_owned();
    let text = content_text(&result.content);
    let lines: Vec<NumberedLine> = text
        .lines()
        .enumerate()
        .map(|(i, line)| NumberedLine::new(i as u64 + 1, line.to_owned()))
        .collect();
    let total = lines.len() as u64;
    Some(ResultCard::Read(
        ReadResult::new(&path, 1, lines, total).with_title(format!("Read {path}")),
    ))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn p7_the_filesystem_servers_read_file_drawn_as_a_read_card_live_and_replayed() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    std::fs::create_dir(&root).unwrap();
    let root = root.canonicalize().unwrap();
    std::fs::write(root.join("notes.md"), "# Notes\nline two\nline three\n").unwrap();
    let (import, capture, _) = wrapped(
        dir.path(),
        "node",
        &[&reference("server-filesystem"), root.to_str().unwrap()],
    );
    let imported = import
        .prefix("fs")
        .present("read_text_file", read_card)
        .connect()
        .await
        .unwrap();
    let listed = imported.tools();
    let read = listed
        .iter()
        .find(|t| t.remote_name() == "read_text_file")
        .unwrap();
    assert_eq!(read.definition().name, "fs__read_text_file");
    assert_eq!(read.definition().kind, ToolKind::Read);
    let write = listed
        .iter()
        .find(|t| t.remote_name() == "write_file")
        .unwrap();
    assert_eq!(write.definition().kind, ToolKind::Edit);
    assert!(write.definition().annotations.destructive);

    let log = dir.path().join("hub.jsonl");
    let registry = registry(&[&imported], &log);
    let path = root.join("notes.md");
    let out = call(&registry, "f1", "fs__read_text_file", json!({"path": path})).await;
    assert!(!out.is_error(), "{:?}", out.error());
    assert_eq!(
        out.value().unwrap()["content"],
        "# Notes\nline two\nline three\n"
    );
    let card = serde_json::to_value(out.result_card().unwrap()).unwrap();
    assert_eq!(card["card"], "read");
    assert_eq!(card["path"], path.to_str().unwrap());
    assert_eq!(card["totalLines"], 3);
    assert_eq!(card["lines"][1], json!({"number": 2, "text": "line two"}));
    let live = vec![
        out,
        // Outside the allowed directory: the server's error, a generic card.
        call(
            &registry,
            "f2",
            "fs__read_text_file",
            json!({"path": "/etc/passwd"}),
        )
        .await,
        // Refused here: never sent.
        call(&registry, "f3", "fs__read_text_file", json!({"path": 1})).await,
    ];
    assert_eq!(code(&live[1]), "TOOL_ERROR");
    assert!(
        live[1].error().unwrap().message.contains("denied"),
        "{:?}",
        live[1].error()
    );
    assert_eq!(live[1].result_card().unwrap().tag(), "generic");
    assert_eq!(code(&live[2]), "INVALID_ARGS");
    let sent = sent(&capture);
    assert_eq!(
        sent.iter().filter(|s| s.starts_with("tools/call")).count(),
        2,
        "{sent:#?}"
    );
    replayed_cards_equal(&registry, &log, &live);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn p7_the_time_server_from_pypi() {
    let dir = tempfile::tempdir().unwrap();
    let python = python().python();
    let (import, capture, _) = wrapped(
        dir.path(),
        python.to_str().unwrap(),
        &["-m", "mcp_server_time", "--local-timezone", "UTC"],
    );
    let imported = import.prefix("time").connect().await.unwrap();
    assert_eq!(imported.server_name(), Some("mcp-time"));
    let listed = imported.tools();
    let names: Vec<&str> = listed
        .iter()
        .map(|t| t.definition().name.as_str())
        .collect();
    assert_eq!(names, ["time__get_current_time", "time__convert_time"]);
    let log = dir.path().join("hub.jsonl");
    let registry = registry(&[&imported], &log);
    let out = call(
        &registry,
        "m1",
        "time__get_current_time",
        json!({"timezone": "Europe/Paris"}),
    )
    .await;
    assert!(!out.is_error(), "{:?}", out.error());
    assert_eq!(out.value().unwrap()["timezone"], "Europe/Paris");
    let out = call(
        &registry,
        "m2",
        "time__get_current_time",
        json!({"timezone": "Mars/Olympus"}),
    )
    .await;
    assert_eq!(code(&out), "TOOL_ERROR", "{:?}", out.error());
    let out = call(
        &registry,
        "m3",
        "time__convert_time",
        json!({"source_timezone": "UTC"}),
    )
    .await;
    assert_eq!(code(&out), "INVALID_ARGS");
    let sent = sent(&capture);
    assert_eq!(
        sent.iter().filter(|s| s.starts_with("tools/call")).count(),
        2,
        "{sent:#?}"
    );
}
