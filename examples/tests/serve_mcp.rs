//! `toolprism-examples serve`: an `initialize` and a `tools/list` piped on
//! stdin get every built-in tool with its output schema, stdout carries
//! nothing but protocol messages, the tools stay inside `--root`, and
//! `--log` keeps the session log.

use std::io::Write;
use std::process::{Command, Stdio};

use serde_json::{Value, json};

#[test]
fn serve_answers_initialize_and_tools_list_on_stdin() {
    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("notes.txt"), "first line\nsecond line\n").unwrap();
    let log = root.path().join("session.jsonl");
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolprism-examples"))
        .args(["serve", "--root"])
        .arg(root.path())
        .arg("--log")
        .arg(&log)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let requests = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "pipe", "version": "0"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "read", "arguments": {"path": "notes.txt"}, "_meta": {"toolprism/cards": true}}}),
        json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "read", "arguments": {"path": "../outside.txt"}}}),
    ];
    let mut stdin = child.stdin.take().unwrap();
    for request in &requests {
        writeln!(stdin, "{request}").unwrap();
    }
    // Answer everything, then end when stdin closes.
    let waiter = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(1500));
        drop(stdin);
    });
    let output = child.wait_with_output().unwrap();
    waiter.join().unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let stdout = String::from_utf8(output.stdout).unwrap();
    let messages: Vec<Value> = stdout
        .lines()
        .map(|line| {
            serde_json::from_str(line).unwrap_or_else(|e| {
                panic!("stdout holds a line that is not JSON-RPC ({e}): {line}")
            })
        })
        .collect();
    let response = |id: u64| {
        messages
            .iter()
            .find(|m| m["id"] == id)
            .unwrap_or_else(|| panic!("no response {id}: {stdout}"))
    };
    assert_eq!(
        response(1)["result"]["serverInfo"]["name"],
        "toolprism-examples"
    );

    let tools = response(2)["result"]["tools"].as_array().unwrap();
    let mut names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    names.sort_unstable();
    assert_eq!(
        names,
        [
            "acme_ticket",
            "bash",
            "edit",
            "glob",
            "grep",
            "read",
            "sql_query",
            "web_fetch",
            "write"
        ]
    );
    for tool in tools {
        assert_eq!(tool["outputSchema"]["type"], "object", "{tool:#}");
        assert!(tool["outputSchema"]["properties"].is_object(), "{tool:#}");
        assert!(
            tool["annotations"]["openWorldHint"].is_boolean(),
            "{tool:#}"
        );
    }

    let read = &response(3)["result"];
    assert_eq!(read["isError"], false, "{read:#}");
    assert!(
        read["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("1: first line")
    );
    assert_eq!(read["structuredContent"]["totalLines"], 2, "{read:#}");
    // Asked for per call: the cards; not asked for: meta and code only.
    assert_eq!(read["_meta"]["toolprism/resultCard"]["card"], "read");
    let outside = &response(4)["result"];
    assert_eq!(outside["isError"], true, "{outside:#}");
    assert_eq!(outside["_meta"]["toolprism/errorCode"], "OUTSIDE_WORKSPACE");
    assert!(outside["_meta"].get("toolprism/resultCard").is_none());

    let logged = std::fs::read_to_string(&log).unwrap();
    assert_eq!(logged.lines().count(), 4, "{logged}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("serving 9 tools"), "{stderr}");
}

/// Code Mode over MCP (P2, P6 in docs/contract.md): the Python `mcp` client
/// against `serve --mode both` lists `run_code` with the SDK as its
/// description, runs a program over the built-in tools and gets its value
/// as `structuredContent`; a hot loop is an error result with its own code;
/// the session log holds the program's nested calls and none of their
/// values.
#[test]
fn serve_mode_both_runs_programs_for_the_python_client() {
    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("a.txt"), "one\ntwo\nthree\n").unwrap();
    let log = root.path().join("session.jsonl");
    let python = toolprism_testkit::python_env("mcp-client", toolprism_testkit::MCP_CLIENT);
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/support/code_mode.py");
    let output = python
        .command([
            script,
            env!("CARGO_BIN_EXE_toolprism-examples"),
            "serve",
            "--mode",
            "both",
            "--root",
        ])
        .arg(root.path())
        .arg("--log")
        .arg(&log)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    let tools = report["tools"].as_array().unwrap();
    assert!(
        tools.contains(&json!("run_code")) && tools.contains(&json!("read")),
        "{report}"
    );
    let sdk = report["sdk"].as_str().unwrap();
    assert!(sdk.contains("interface ToolOutputMap"), "{sdk}");
    assert!(
        sdk.contains("`code`") && sdk.contains("`description`"),
        "{sdk}"
    );
    assert_eq!(report["isError"], false, "{report}");
    assert_eq!(
        report["structured"],
        json!({"logs": ["read a.txt"], "result": {"files": 1, "lines": 3}}),
        "{report}"
    );
    assert_eq!(report["spin"]["isError"], true, "{report}");
    assert_eq!(report["spin"]["code"], "COMPUTE_LIMIT", "{report}");
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(text.contains("\"tool/nested-call\""), "{text}");
    assert!(text.contains("\"parentCallId\""), "{text}");
    // `byteCapped` is a field of read's value alone (not of its content or
    // meta): no value reached the log.
    assert!(!text.contains("byteCapped"), "{text}");
}
