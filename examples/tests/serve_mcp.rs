//! `toolprism-examples serve`: an `initialize` and a `tools/list` piped on
//! stdin get every built-in tool with its output schema, stdout carries
//! nothing but protocol messages, the tools stay inside `--root`, and
//! `--log` keeps the session log. With `--approvals`, `edit` asks the user
//! first (W9 in docs/contract.md): an elicitation to a client that can
//! answer one, a clear `NOT_APPROVED` to one that cannot.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

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

/// `serve --approvals` over stdio, spoken to line by line.
struct Session {
    child: Child,
    stdin: ChildStdin,
    lines: mpsc::Receiver<Value>,
}

impl Session {
    /// A server for `root`, initialized with `capabilities`.
    fn start(root: &std::path::Path, log: &std::path::Path, capabilities: Value) -> Session {
        let mut child = Command::new(env!("CARGO_BIN_EXE_toolprism-examples"))
            .args(["serve", "--approvals", "--root"])
            .arg(root)
            .arg("--log")
            .arg(log)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let (sender, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in stdout.lines().map_while(Result::ok) {
                let message = serde_json::from_str(&line).unwrap_or_else(|e| {
                    panic!("stdout holds a line that is not JSON-RPC ({e}): {line}")
                });
                if sender.send(message).is_err() {
                    break;
                }
            }
        });
        let mut session = Session {
            child,
            stdin,
            lines,
        };
        session.send(
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": capabilities,
            "clientInfo": {"name": "pipe", "version": "0"}}}),
        );
        session.next();
        session.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        session
    }

    fn send(&mut self, message: Value) {
        writeln!(self.stdin, "{message}").unwrap();
    }

    /// The next message from the server, within 10 s.
    fn next(&self) -> Value {
        self.lines
            .recv_timeout(Duration::from_secs(10))
            .expect("a message from the server within 10 s")
    }

    /// Calls `edit` as request `id`, answering the server's elicitation
    /// (if one comes) with `answer`; returns the elicitation's params and
    /// the call's result.
    fn edit(&mut self, id: u64, answer: Option<Value>) -> (Option<Value>, Value) {
        self.send(
            json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
            "name": "edit",
            "arguments": {"path": "notes.txt", "oldText": "first", "newText": "1st"}}}),
        );
        let mut asked = None;
        loop {
            let message = self.next();
            if message["method"] == "elicitation/create" {
                asked = Some(message["params"].clone());
                let answer = answer.clone().expect("no elicitation expected");
                self.send(json!({"jsonrpc": "2.0", "id": message["id"], "result": answer}));
            } else if message["id"] == id {
                return (asked, message["result"].clone());
            }
        }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn serve_approvals_ask_before_edit_and_refuse_a_client_that_cannot_be_asked() {
    let root = tempfile::tempdir().unwrap();
    let notes = root.path().join("notes.txt");
    std::fs::write(&notes, "first line\n").unwrap();
    let log = root.path().join("session.jsonl");

    let mut asking = Session::start(root.path(), &log, json!({"elicitation": {}}));
    // Declined: the file is unchanged.
    let (asked, result) = asking.edit(2, Some(json!({"action": "decline"})));
    let asked = asked.expect("the user was asked before edit ran");
    assert_eq!(
        asked["message"], "Let the agent edit notes.txt?",
        "{asked:#}"
    );
    assert_eq!(
        asked["requestedSchema"]["properties"]["approve"]["type"],
        "boolean"
    );
    assert_eq!(result["isError"], true, "{result:#}");
    assert_eq!(result["_meta"]["toolprism/errorCode"], "NOT_APPROVED");
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "first line\n");
    // Approved: the edit runs.
    let (asked, result) = asking.edit(
        3,
        Some(json!({"action": "accept", "content": {"approve": true}})),
    );
    assert!(asked.is_some());
    assert_eq!(result["isError"], false, "{result:#}");
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "1st line\n");
    drop(asking);

    // A client that declared no elicitation: a clear denial, no request.
    std::fs::write(&notes, "first line\n").unwrap();
    let mut bare = Session::start(root.path(), &log, json!({}));
    let (asked, result) = bare.edit(2, None);
    assert!(asked.is_none());
    assert_eq!(
        result["_meta"]["toolprism/errorCode"], "NOT_APPROVED",
        "{result:#}"
    );
    let text = result["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("cannot ask the user"), "{text}");
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "first line\n");
    drop(bare);

    let decisions: Vec<String> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|event| event["type"] == "tool/approval")
        .map(|event| event["decision"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(decisions, ["denied", "approved", "unavailable"]);
}
