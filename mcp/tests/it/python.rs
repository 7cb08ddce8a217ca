//! The unmodified Python `mcp` client (PyPI, pinned) against the test
//! server, in both negotiations (`2025-11-25` through `initialize`,
//! `2026-07-28` per request) over stdio and Streamable HTTP (progress
//! notifications included): one client
//! process per transport and version runs every check
//! (`tests/support/client.py`) and reports JSON; this file judges it, and reads
//! the server's session log for what the wire does not show (the cancelled
//! call's `ABORTED`, the call ids).

use crate::support;

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};
use support::{HttpServer, log_events, run_python, server_exe};

const LEGACY: &str = "2025-11-25";
const MODERN: &str = "2026-07-28";

#[test]
fn stdio_2025_11_25() {
    stdio(LEGACY);
}

#[test]
fn stdio_2026_07_28() {
    stdio(MODERN);
}

#[test]
fn http_2025_11_25() {
    http(LEGACY);
}

#[test]
fn http_2026_07_28() {
    http(MODERN);
}

fn stdio(version: &str) {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("session.jsonl");
    let exe = server_exe();
    let report = run_python(
        "client.py",
        &[
            "--version",
            version,
            "--stdio",
            exe.to_str().unwrap(),
            "--log",
            log.to_str().unwrap(),
        ],
    );
    check(&report, version, &log, |session| {
        assert!(
            session.starts_with('s') && session[1..].parse::<u64>().is_ok(),
            "over stdio the call ids are <sN>:<request id>, got session {session:?}"
        );
    });
}

fn http(version: &str) {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("session.jsonl");
    let mut server = HttpServer::start(&["--log", log.to_str().unwrap()]);
    let report = run_python("client.py", &["--version", version, "--url", &server.url]);
    check(&report, version, &log, |session| {
        if version == LEGACY {
            // The legacy session's Mcp-Session-Id (a UUID from rmcp).
            assert_eq!(session.len(), 36, "session id {session:?}");
        } else {
            assert!(session.starts_with('s'), "session {session:?}");
        }
    });
    assert!(
        server.is_running(),
        "the server exited: {}",
        server.stderr()
    );
}

/// Everything the client reported, against the mapping in the module docs.
fn check(report: &Value, version: &str, log: &Path, session_shape: impl Fn(&str)) {
    let modern = version == MODERN;
    assert_eq!(report["protocol_version"], version, "{report:#}");

    // tools/list: every tool, all four hints explicit, the kind under _meta,
    // schemas cleaned, non-object roots wrapped for the older version.
    let tools = report["tools"].as_array().expect("tools");
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "echo",
            "fail",
            "slow",
            "numbers",
            "word",
            "picture",
            "whoami",
            "steps",
            "twice",
            "ask_model",
            "ask_model_blocking",
            "ask_user",
            "chatty",
            "guarded",
            "media"
        ],
        "tools/list keeps the registry's order"
    );
    for tool in tools {
        for hint in [
            "readOnlyHint",
            "destructiveHint",
            "idempotentHint",
            "openWorldHint",
        ] {
            assert!(
                tool["annotations"][hint].is_boolean(),
                "{} lacks an explicit {hint}: {tool:#}",
                tool["name"]
            );
        }
        assert!(tool["_meta"]["toolprism/kind"].is_string(), "{tool:#}");
        let text = tool.to_string();
        assert!(!text.contains("$schema"), "{text}");
        assert!(!text.contains(r#""format":"uint"#), "{text}");
        assert_eq!(tool["inputSchema"]["type"], "object");
    }
    let tool = |name: &str| tools.iter().find(|t| t["name"] == name).unwrap();
    assert_eq!(
        tool("echo")["annotations"],
        json!({"title": "Echo", "readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false})
    );
    assert_eq!(tool("echo")["title"], "Echo");
    assert_eq!(tool("slow")["_meta"]["toolprism/kind"], "execute");
    let numbers = tool("numbers");
    if modern {
        assert_eq!(numbers["outputSchema"]["type"], "array", "{numbers:#}");
        assert!(numbers["_meta"].get("toolprism/wrapped").is_none());
    } else {
        assert_eq!(numbers["outputSchema"]["type"], "object", "{numbers:#}");
        assert_eq!(
            numbers["outputSchema"]["properties"]["value"]["type"],
            "array"
        );
        assert_eq!(numbers["outputSchema"]["required"], json!(["value"]));
        assert_eq!(numbers["_meta"]["toolprism/wrapped"], "value");
    }
    assert_eq!(tool("echo")["outputSchema"]["type"], "object");
    assert!(tool("echo")["_meta"].get("toolprism/wrapped").is_none());

    // A success: render's content, the value, meta and (asked for per
    // call) cards.
    let echo = &report["echo"]["result"];
    assert_eq!(echo["isError"], false, "{report:#}");
    assert_eq!(
        echo["content"],
        json!([{"type": "text", "text": "echo: héllo"}])
    );
    assert_eq!(
        echo["structuredContent"],
        json!({"text": "héllo", "len": 6})
    );
    assert_eq!(echo["_meta"]["toolprism/meta"], json!({"chars": 5}));
    assert_eq!(echo["_meta"]["toolprism/resultCard"]["card"], "generic");
    assert_eq!(
        echo["_meta"]["toolprism/resultCard"]["title"],
        "Echoed 5 chars"
    );
    assert_eq!(echo["_meta"]["toolprism/callCard"]["card"], "generic");
    assert_eq!(
        echo["_meta"]["toolprism/callCard"]["rawInput"],
        json!({"text": "héllo"})
    );
    assert!(echo["_meta"].get("toolprism/errorCode").is_none());
    // Not asked for: the same result, meta included, without the cards.
    let unasked = &report["echo_unasked"]["result"];
    assert_eq!(unasked["isError"], false, "{report:#}");
    assert_eq!(unasked["content"], echo["content"]);
    assert_eq!(unasked["structuredContent"], echo["structuredContent"]);
    assert_eq!(
        unasked["_meta"],
        json!({"toolprism/meta": {"chars": 5}}),
        "{report:#}"
    );

    // Failures: isError, the message, the code; never structuredContent.
    for (key, code, text) in [
        ("fail", "NOPE", "Error: no luck"),
        ("bad_args", "INVALID_ARGS", "Error: "),
    ] {
        let result = &report[key]["result"];
        assert_eq!(result["isError"], true, "{key}: {report:#}");
        assert!(
            result.get("structuredContent").is_none(),
            "{key}: {result:#}"
        );
        assert_eq!(result["_meta"]["toolprism/errorCode"], code, "{key}");
        // `fail` asked for the cards: an error result carries them too.
        assert_eq!(
            result["_meta"].get("toolprism/resultCard").is_some(),
            key == "fail",
            "{key}: {result:#}"
        );
        let content = result["content"][0]["text"].as_str().unwrap();
        assert!(content.starts_with(text), "{key}: {content}");
        assert!(result["_meta"].get("toolprism/meta").is_none());
    }
    assert!(
        report["bad_args"]["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("arguments"),
        "the message names the path: {report:#}"
    );

    // An unknown tool is a protocol error: invalid params.
    assert_eq!(report["unknown"]["error"]["code"], -32602, "{report:#}");
    assert!(
        report["unknown"]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("no_such_tool")
    );

    // Values that are not objects, accepted (validated) by the client.
    let (numbers, word) = if modern {
        (json!([1, 2, 3]), json!("prism"))
    } else {
        (json!({"value": [1, 2, 3]}), json!({"value": "prism"}))
    };
    assert_eq!(
        report["numbers"]["result"]["structuredContent"], numbers,
        "{report:#}"
    );
    assert_eq!(
        report["word"]["result"]["structuredContent"], word,
        "{report:#}"
    );
    assert_eq!(
        report["word"]["result"]["content"],
        json!([{"type": "text", "text": "the word is prism"}])
    );
    assert!(
        report["tampered"].as_str().unwrap().starts_with("refused"),
        "the client's validation is live: {}",
        report["tampered"]
    );

    // Text and image blocks.
    let picture = &report["picture"]["result"]["content"];
    assert_eq!(picture[0]["type"], "text");
    assert_eq!(picture[1]["type"], "image", "{picture:#}");
    assert_eq!(picture[1]["mimeType"], "image/png");

    // Cancellation ended the call early; the server still serves.
    assert_eq!(report["cancel"]["cancelled"], true, "{report:#}");
    assert!(report["cancel"]["seconds"].as_f64().unwrap() < 10.0);
    assert_eq!(
        report["after_cancel"]["result"]["isError"], false,
        "{report:#}"
    );

    // Progress asked for (a progressToken, sent by the client because a
    // callback was given): every report, in order, with total and message.
    let steps = &report["steps"];
    assert_eq!(
        steps["result"]["result"]["structuredContent"],
        json!({"steps": 4}),
        "{report:#}"
    );
    let expected: Vec<Value> = (1..=4)
        .map(|i| json!({"done": f64::from(i), "total": 4.0, "message": format!("step {i} of 4")}))
        .collect();
    assert_eq!(steps["progress"], json!(expected), "{report:#}");
    // The session's notification hook saw them too, so its silence below
    // means something.
    assert_eq!(
        steps["seen"].as_array().map(Vec::len),
        Some(4),
        "{report:#}"
    );
    assert_eq!(steps["seen"][3]["progress"], 4.0, "{report:#}");
    // Not asked for: the same call, no notification at all.
    let unasked = &report["steps_unasked"];
    assert_eq!(
        unasked["result"]["result"]["structuredContent"],
        json!({"steps": 4}),
        "{report:#}"
    );
    assert_eq!(unasked["seen"], json!([]), "{report:#}");

    // The session log: the cancelled call ended ABORTED, and every call id
    // is <session>:<JSON-RPC id>.
    let events = log_events(log, Duration::from_secs(10), |events| {
        events
            .iter()
            .any(|e| e["type"] == "tool/result" && e["error"]["code"] == "ABORTED")
    });
    let slow = events
        .iter()
        .find(|e| e["type"] == "tool/call" && e["name"] == "slow")
        .unwrap_or_else(|| panic!("no slow call in the log: {events:#?}"));
    let slow_id = slow["callId"].as_str().unwrap();
    let slow_result = events
        .iter()
        .find(|e| e["type"] == "tool/result" && e["callId"] == slow_id)
        .unwrap_or_else(|| panic!("the cancelled call has no result in the log: {events:#?}"));
    assert_eq!(slow_result["error"]["code"], "ABORTED", "{slow_result:#}");
    for event in events.iter().filter(|e| e["type"] == "tool/call") {
        let id = event["callId"].as_str().unwrap();
        let (session, request) = id.rsplit_once(':').expect("<session>:<id>");
        assert!(!request.is_empty(), "{id}");
        session_shape(session);
    }
    // The unknown tool reached the registry, which logged it as a result
    // (W1: the pipeline writes every call); the client got a protocol error.
    let unknown = events
        .iter()
        .find(|e| e["type"] == "tool/call" && e["name"] == "no_such_tool")
        .unwrap_or_else(|| panic!("the unknown tool's call is not in the log: {events:#?}"));
    let unknown_result = events
        .iter()
        .find(|e| e["type"] == "tool/result" && e["callId"] == unknown["callId"])
        .expect("the unknown tool's result is in the log");
    assert_eq!(
        unknown_result["error"]["code"], "UNKNOWN_TOOL",
        "{unknown_result:#}"
    );
}
