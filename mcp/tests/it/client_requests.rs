//! A call's client over MCP (W8 in docs/contract.md) and approvals through
//! it (W9), with the unmodified Python `mcp` client (PyPI, pinned) over
//! stdio and Streamable HTTP, in both negotiations (`2025-11-25`:
//! server-to-client requests; `2026-07-28`: `InputRequiredResult` and the
//! retry): sampling and elicitation callbacks that answer, refuse, decline,
//! cancel and never answer; logging at the level set and not below, and
//! none unasked; approvals granted, denied, unanswered and impossible, each
//! in the session log and replayed; content blocks of every kind.
//!
//! One client process per transport and version runs every step
//! (`tests/support/asks.py`); this file judges its report and the server's
//! session log.

use crate::support;

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};
use support::{HttpServer, log_events, run_python, server_exe};
use toolprism::ApprovalDecision;

const LEGACY: &str = "2025-11-25";
const MODERN: &str = "2026-07-28";

/// The server's timeouts: a request to the client, an approval.
const TIMEOUTS: [&str; 4] = [
    "--client-timeout-ms",
    "1500",
    "--approval-timeout-ms",
    "1000",
];

#[test]
fn client_requests_stdio_2025_11_25() {
    stdio(LEGACY);
}

#[test]
fn client_requests_stdio_2026_07_28() {
    stdio(MODERN);
}

#[test]
fn client_requests_http_2025_11_25() {
    http(LEGACY);
}

#[test]
fn client_requests_http_2026_07_28() {
    http(MODERN);
}

fn stdio(version: &str) {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("session.jsonl");
    let exe = server_exe();
    let mut args = vec!["--version", version, "--stdio", exe.to_str().unwrap()];
    args.extend(TIMEOUTS);
    args.extend(["--log", log.to_str().unwrap()]);
    let report = run_python("asks.py", &args);
    check(&report, version, &log);
}

fn http(version: &str) {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("session.jsonl");
    let mut extra = TIMEOUTS.to_vec();
    extra.extend(["--log", log.to_str().unwrap()]);
    let mut server = HttpServer::start(&extra);
    let report = run_python("asks.py", &["--version", version, "--url", &server.url]);
    check(&report, version, &log);
    assert!(
        server.is_running(),
        "the server exited: {}",
        server.stderr()
    );
}

/// A call's result, failing the test with the report when there is none.
fn result<'a>(report: &'a Value, key: &str) -> &'a Value {
    let result = &report[key]["result"];
    assert!(result.is_object(), "{key} has no result: {report:#}");
    result
}

/// The text of a result's first block.
fn text<'a>(report: &'a Value, key: &str) -> &'a str {
    result(report, key)["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
}

fn error_code<'a>(report: &'a Value, key: &str) -> &'a Value {
    let result = result(report, key);
    assert_eq!(result["isError"], true, "{key}: {report:#}");
    &result["_meta"]["toolprism/errorCode"]
}

fn check(report: &Value, version: &str, log: &Path) {
    let modern = version == MODERN;
    assert_eq!(report["protocol_version"], version, "{report:#}");

    // Logging: nothing unasked; at the level set, and not below it.
    if !modern {
        assert_eq!(report["logs_unasked"], json!([]), "{report:#}");
    }
    assert_eq!(
        result(report, "chatty")["structuredContent"],
        json!({"logged": 4})
    );
    assert_eq!(
        report["logs"],
        json!([
            {"level": "warning", "logger": "chatty", "data": {"said": "warning"}},
            {"level": "error", "logger": "chatty", "data": {"said": "error"}},
        ]),
        "{report:#}"
    );

    // Sampling, from an async tool and from a blocking one (another
    // thread), and the request as the client received it.
    assert_eq!(
        result(report, "sampled")["structuredContent"],
        json!({"model": "py-model", "text": "you said hello"}),
        "{report:#}"
    );
    assert_eq!(
        result(report, "sampled_blocking")["structuredContent"],
        json!({"model": "py-model", "text": "you said hi there"}),
        "{report:#}"
    );
    let sampled = &report["asked"]["sampling"][0];
    assert_eq!(
        sampled["messages"],
        json!([{"role": "user", "content": {"type": "text", "text": "hello"}}]),
        "{sampled:#}"
    );
    assert_eq!(sampled["maxTokens"], 100);
    // A client that refuses: before 2026-07-28 the tool's error, with the
    // client's word; from then on the client does not retry and raises its
    // own error (the call, left waiting, times out in the server).
    if modern {
        let refused = &report["sampling_refused"]["error"]["message"];
        assert_eq!(refused, "the user refused to sample", "{report:#}");
    } else {
        assert_eq!(
            error_code(report, "sampling_refused"),
            "CLIENT_FAILED",
            "{report:#}"
        );
        assert!(
            text(report, "sampling_refused").contains("refused to sample"),
            "{report:#}"
        );
    }

    // Elicitation: accept, decline, cancel; the form as the tool wrote it.
    assert_eq!(
        result(report, "elicit_accept")["structuredContent"],
        json!({"action": "accept", "content": {"name": "Grace", "color": "blue", "sure": false}}),
        "{report:#}"
    );
    for action in ["decline", "cancel"] {
        assert_eq!(
            result(report, &format!("elicit_{action}"))["structuredContent"],
            json!({"action": action}),
            "{report:#}"
        );
    }
    let form = &report["asked"]["elicitation"][0];
    assert_eq!(form["message"], "please accept", "{form:#}");
    assert_eq!(
        form["requestedSchema"],
        json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "Your name", "default": "Ada"},
                "color": {"type": "string", "enum": ["red", "green", "blue"], "default": "green"},
                "sure": {"type": "boolean", "default": true}
            },
            "required": ["name"]
        }),
        "{form:#}"
    );

    // Approvals: granted, denied (asked through elicitation).
    assert_eq!(
        result(report, "approved")["structuredContent"],
        json!({"ran": true}),
        "{report:#}"
    );
    assert_eq!(error_code(report, "denied"), "NOT_APPROVED");
    assert!(
        text(report, "denied").contains("did not approve"),
        "{report:#}"
    );
    let approvals: Vec<&Value> = report["asked"]["elicitation"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["message"] == "Let the guarded tool run?")
        .collect();
    assert!(approvals.len() >= 2, "{report:#}");
    assert_eq!(
        approvals[0]["requestedSchema"]["properties"]["approve"]["type"],
        "boolean"
    );

    // Content blocks of every kind, in MCP's spelling.
    let media = &result(report, "media")["content"];
    let kinds: Vec<&str> = media
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        [
            "text",
            "image",
            "audio",
            "resource",
            "resource",
            "resource_link"
        ],
        "{media:#}"
    );
    assert_eq!(media[2]["mimeType"], "audio/wav");
    assert_eq!(
        media[3]["resource"],
        json!({"uri": "test://notes", "mimeType": "text/markdown", "text": "# Notes"})
    );
    assert_eq!(media[4]["resource"]["mimeType"], "image/png");
    assert!(media[4]["resource"]["blob"].is_string(), "{media:#}");
    assert_eq!(media[5]["uri"], "test://report");
    assert_eq!(media[5]["name"], "report");
    assert_eq!(media[5]["title"], "The report");
    assert_eq!(media[5]["size"], 42);

    // Never answered: bounded. Before 2026-07-28 the answer says so; from
    // then on the client, stuck in its callback, never retries, and the
    // session log says what became of the call.
    if modern {
        assert_eq!(report["sampling_hang"]["stuck"], true, "{report:#}");
        assert_eq!(report["approval_hang"]["stuck"], true, "{report:#}");
    } else {
        assert_eq!(error_code(report, "sampling_hang"), "CLIENT_TIMEOUT");
        assert!(
            text(report, "sampling_hang").contains("did not answer in time"),
            "{report:#}"
        );
        assert!(report["sampling_hang"]["seconds"].as_f64().unwrap() < 5.0);
        assert_eq!(error_code(report, "approval_hang"), "NOT_APPROVED");
        assert!(
            text(report, "approval_hang").contains("no answer came within 1 s"),
            "{report:#}"
        );
    }

    // A client that cannot be asked: told at once, never a hang; and no
    // log message, as it set no level.
    assert_eq!(error_code(report, "bare_sampled"), "CLIENT_UNAVAILABLE");
    assert_eq!(error_code(report, "bare_approval"), "NOT_APPROVED");
    assert!(
        text(report, "bare_approval").contains("cannot ask the user"),
        "{report:#}"
    );
    for key in ["bare_sampled", "bare_approval"] {
        assert!(
            report[key]["seconds"].as_f64().unwrap() < 2.0,
            "{key}: {report:#}"
        );
    }
    assert_eq!(report["bare_logs"], json!([]), "{report:#}");

    // The session log: every approval decision, and the end of the calls
    // whose client never answered.
    let events = log_events(log, Duration::from_secs(10), |events| {
        let approvals = events
            .iter()
            .filter(|e| e["type"] == "tool/approval")
            .count();
        let timed_out = events
            .iter()
            .any(|e| e["type"] == "tool/result" && e["error"]["code"] == "CLIENT_TIMEOUT");
        approvals >= 4 && timed_out
    });
    let decisions: Vec<&str> = events
        .iter()
        .filter(|e| e["type"] == "tool/approval")
        .map(|e| e["decision"].as_str().unwrap())
        .collect();
    assert_eq!(
        decisions,
        ["approved", "denied", "unanswered", "unavailable"],
        "{events:#?}"
    );
    assert!(
        events
            .iter()
            .any(|e| e["type"] == "tool/result" && e["error"]["code"] == "CLIENT_TIMEOUT"),
        "the call whose client never answered ended CLIENT_TIMEOUT: {events:#?}"
    );

    // Replayed: each approval with its call.
    let registry = toolprism::Registry::builder().build().unwrap();
    let replayed = toolprism::replay::replay_log(log, &registry).expect("replay the log");
    let replayed: Vec<ApprovalDecision> = replayed
        .entries
        .iter()
        .filter(|entry| entry.name == "guarded")
        .map(|entry| {
            let approval = entry
                .approval
                .as_ref()
                .expect("each guarded call was asked");
            assert_eq!(approval.question, "Let the guarded tool run?");
            approval.decision
        })
        .collect();
    assert_eq!(
        replayed,
        [
            ApprovalDecision::Approved,
            ApprovalDecision::Denied,
            ApprovalDecision::Unanswered,
            ApprovalDecision::Unavailable
        ]
    );
}
