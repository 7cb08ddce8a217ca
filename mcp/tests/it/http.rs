//! Streamable HTTP under load and across processes, with the unmodified
//! Python `mcp` client:
//!
//! - 20 concurrent sessions make 1,000 calls (successes, errors,
//!   cancellations mixed): every answer matches its request, none is lost
//!   (the session log holds a result for every call), and the server's
//!   memory is back near where it started;
//! - two stateless server processes behind a round-robin balancer serve the
//!   calls of one client between them.

use crate::support;

use std::collections::HashSet;
use std::time::Duration;

use serde_json::Value;
use support::{HttpServer, log_events, run_python};

#[test]
fn twenty_sessions_make_a_thousand_calls() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("session.jsonl");
    let mut server = HttpServer::start(&["--log", log.to_str().unwrap()]);
    let pid = server.pid().to_string();
    let report = run_python(
        "load.py",
        &[
            "--url",
            &server.url,
            "--pid",
            &pid,
            "--sessions",
            "20",
            "--calls",
            "1000",
            "--warmup",
            "200",
        ],
    );
    assert!(server.is_running(), "the server died: {}", server.stderr());

    for round in ["warmup", "load"] {
        let tally = &report[round];
        assert_eq!(
            tally["failures"],
            Value::Array(vec![]),
            "{round}: {tally:#}"
        );
    }
    let load = &report["load"];
    let count = |kind: &str| load[kind].as_u64().unwrap_or(0);
    assert_eq!(
        count("echo") + count("fail") + count("numbers") + count("bad") + count("cancelled"),
        1000,
        "{load:#}"
    );
    for kind in ["echo", "fail", "numbers", "bad", "cancelled"] {
        assert!(count(kind) >= 90, "{kind}: {load:#}");
    }

    // None lost on the server's side either: every call that reached it is
    // logged with its result, every call id unique; all but the cancelled
    // ones reached it (a call cancelled before the client sent it never
    // does), and every cancelled call that did ended ABORTED.
    let cancelled = count("cancelled") + report["warmup"]["cancelled"].as_u64().unwrap_or(0);
    let answered = 1200 - cancelled as usize;
    // Every call logged has its result logged too: wait for all of them (a
    // slow call cancelled on a loaded machine ends a moment later).
    let events = log_events(&log, Duration::from_secs(20), |events| {
        let results: HashSet<&str> = events
            .iter()
            .filter(|e| e["type"] == "tool/result")
            .filter_map(|e| e["callId"].as_str())
            .collect();
        results.len() >= answered
            && events
                .iter()
                .filter(|e| e["type"] == "tool/call")
                .all(|e| e["callId"].as_str().is_some_and(|id| results.contains(id)))
    });
    let calls: Vec<&Value> = events.iter().filter(|e| e["type"] == "tool/call").collect();
    let results: std::collections::HashMap<&str, &Value> = events
        .iter()
        .filter(|e| e["type"] == "tool/result")
        .map(|e| (e["callId"].as_str().unwrap(), e))
        .collect();
    let ids: HashSet<&str> = calls
        .iter()
        .map(|e| e["callId"].as_str().unwrap())
        .collect();
    assert_eq!(ids.len(), calls.len(), "call ids are unique");
    assert_eq!(
        calls.iter().filter(|e| e["name"] != "slow").count(),
        answered,
        "every call that was not cancelled reached the server"
    );
    for call in &calls {
        let result = results
            .get(call["callId"].as_str().unwrap())
            .unwrap_or_else(|| panic!("no result for {call}"));
        if call["name"] == "slow" {
            assert_eq!(result["error"]["code"], "ABORTED", "{result}");
        }
    }
    let slow = calls.iter().filter(|e| e["name"] == "slow").count();
    eprintln!("{cancelled} calls cancelled, {slow} of them after reaching the server");

    // Memory: after the load and once its sessions closed, the server is
    // back near where the warm-up left it.
    let kib = |key: &str| report[key].as_u64().unwrap();
    let (start, warm, end) = (
        kib("rss_start_kib"),
        kib("rss_warm_kib"),
        kib("rss_end_kib"),
    );
    eprintln!("RSS: start {start} KiB, after warm-up {warm} KiB, after 1,000 calls {end} KiB");
    assert!(
        end <= warm + 8 * 1024,
        "RSS grew from {warm} KiB to {end} KiB over 1,000 calls"
    );
    assert!(
        end <= start + 32 * 1024,
        "RSS {end} KiB against {start} KiB at start"
    );
}

#[test]
fn stateless_processes_behind_a_balancer_share_the_calls() {
    let a = HttpServer::start(&["--stateless"]);
    let b = HttpServer::start(&["--stateless"]);
    let report = run_python("balance.py", &["--calls", "40", &a.url, &b.url]);
    let pids: HashSet<String> = [a.pid().to_string(), b.pid().to_string()].into();
    for version in ["2025-11-25", "2026-07-28"] {
        let run = &report[version];
        assert_eq!(run["protocol_version"], version, "{run:#}");
        assert_eq!(run["tools"], 15);
        assert_eq!(run["calls"], 60, "{run:#}");
        assert_eq!(run["wrong"], Value::Array(vec![]), "{run:#}");
        // Both processes answered, about half each.
        let served = run["pids"].as_object().unwrap();
        assert_eq!(
            served.keys().cloned().collect::<HashSet<_>>(),
            pids,
            "{version}: {run:#}"
        );
        for (pid, n) in served {
            assert!(n.as_u64().unwrap() >= 10, "{version}: {pid} served {n}");
        }
    }
}
