//! `toolprism-examples serve`: an `initialize` and a `tools/list` piped on
//! stdin get every built-in tool with its output schema, stdout carries
//! nothing but protocol messages, the tools stay inside `--root`, and
//! `--log` keeps the session log; `--import` and `--mcp-config` make it a
//! hub over other MCP servers. With `--approvals`, `edit` asks the user
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

/// How the test's client answers the server's `elicitation/create`.
#[derive(Debug, Clone)]
enum Answer {
    /// A result: `{"action": …}`.
    Result(Value),
    /// A JSON-RPC error, `{"code", "message"}`.
    Error(Value),
    /// Nothing: the request is left unanswered.
    Silence,
}

impl Session {
    /// A server for `root`, initialized with `capabilities`.
    fn start(root: &std::path::Path, log: &std::path::Path, capabilities: Value) -> Session {
        Session::start_with(root, log, capabilities, &[])
    }

    /// A server for `root` with the extra `flags`, initialized with
    /// `capabilities`.
    fn start_with(
        root: &std::path::Path,
        log: &std::path::Path,
        capabilities: Value,
        flags: &[&str],
    ) -> Session {
        let mut child = Command::new(env!("CARGO_BIN_EXE_toolprism-examples"))
            .args(["serve", "--approvals"])
            .args(flags)
            .arg("--root")
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
        self.edit_answering(id, answer.map(Answer::Result))
    }

    /// [`edit`](Self::edit), answering the elicitation as `answer` says.
    fn edit_answering(&mut self, id: u64, answer: Option<Answer>) -> (Option<Value>, Value) {
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
                match answer.clone().expect("no elicitation expected") {
                    Answer::Result(result) => {
                        self.send(json!({"jsonrpc": "2.0", "id": message["id"], "result": result}))
                    }
                    Answer::Error(error) => {
                        self.send(json!({"jsonrpc": "2.0", "id": message["id"], "error": error}))
                    }
                    Answer::Silence => {}
                }
            } else if message.get("method").is_none() && message["id"] == id {
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

// W3 in docs/contract.md: the showcase serves bash, edit and write, so over
// HTTP it listens on loopback unless a token is required or
// `--insecure-no-auth` says otherwise.

const TOKEN: &str = "c0ffee00c0ffee00c0ffee00c0ffee00c0ffee00c0ffee00c0ffee00c0ffee00";

/// `toolprism-examples serve --root <tmp> ARGS` with `env`, stderr piped.
fn serve(root: &std::path::Path, args: &[&str], env: &[(&str, &str)]) -> std::process::Child {
    Command::new(env!("CARGO_BIN_EXE_toolprism-examples"))
        .args(["serve", "--root"])
        .arg(root)
        .args(args)
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// stderr lines of `child` until one contains `wanted` (all of them, with
/// it last), or it ends.
fn stderr_until(child: &mut std::process::Child, wanted: &str) -> Vec<String> {
    use std::io::BufRead;
    let stderr = child.stderr.take().unwrap();
    let mut lines = Vec::new();
    for line in std::io::BufReader::new(stderr).lines() {
        let line = line.unwrap();
        let done = line.contains(wanted);
        lines.push(line);
        if done {
            break;
        }
    }
    lines
}

/// The port in `… at http://ADDR:PORT/mcp…`.
fn port_of(line: &str) -> u16 {
    let url = line.split("http://").nth(1).unwrap();
    let addr = url.split("/mcp").next().unwrap();
    addr.rsplit(':').next().unwrap().parse().unwrap()
}

/// A `2026-07-28` `tools/call` of `bash` running `touch ran` (one request,
/// no session), POSTed to 127.0.0.1:`port` with `auth` headers: the whole
/// answer, status line first.
fn touch_with_bash(port: u16, auth: &[&str]) -> String {
    use std::io::Read;
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "bash", "arguments": {"command": "touch ran"},
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                  "io.modelcontextprotocol/clientCapabilities": {},
                  "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"}}}})
    .to_string();
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    let mut head = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n\
         Mcp-Method: tools/call\r\nMcp-Name: bash\r\nContent-Length: {}\r\n",
        body.len()
    );
    for header in auth {
        head.push_str(header);
        head.push_str("\r\n");
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).unwrap();
    stream.write_all(body.as_bytes()).unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    answer
}

#[test]
fn w3_serve_refuses_an_address_other_machines_reach_without_a_token() {
    let root = tempfile::tempdir().unwrap();
    // `0` is a name the resolver reads as 0.0.0.0: resolved, then refused.
    for (addr, named) in [("0.0.0.0:0", "0.0.0.0:0"), ("0:0", "0:0 (0.0.0.0:0)")] {
        let output = Command::new(env!("CARGO_BIN_EXE_toolprism-examples"))
            .args(["serve", "--root"])
            .arg(root.path())
            .args(["--http", addr])
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(2));
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(
            stderr.starts_with(&format!("error: --http {named} can be reached")),
            "{stderr}"
        );
        for hint in [
            "--token-env",
            "--token-file",
            "--insecure-no-auth",
            "127.0.0.1",
        ] {
            assert!(stderr.contains(hint), "{stderr}");
        }
        assert!(!stderr.contains("serving"), "{stderr}");
    }

    // A token too short, or missing, is refused at start too.
    for (env, args, says) in [
        (
            vec![("SHOWCASE_TOKEN", "short")],
            vec!["--token-env", "SHOWCASE_TOKEN"],
            "under the 32 required",
        ),
        (
            vec![],
            vec!["--token-env", "SHOWCASE_NO_SUCH_TOKEN"],
            "is not set",
        ),
        (
            vec![("SHOWCASE_TOKEN", "")],
            vec!["--token-env", "SHOWCASE_TOKEN"],
            "empty",
        ),
    ] {
        let output = Command::new(env!("CARGO_BIN_EXE_toolprism-examples"))
            .args(["serve", "--root"])
            .arg(root.path())
            .args(["--http", "127.0.0.1:0"])
            .args(&args)
            .envs(env)
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(2));
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(stderr.contains(says), "{stderr}");
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

// W9 over raw stdio, one test per way an approval can end: each ends with
// its own decision in the session log and, unless approved, its own
// message to the model.

/// What the model reads for each way an approval can end, unless approved.
const REFUSALS: [(&str, &str); 5] = [
    ("denied", "the user did not approve this call of \"edit\""),
    (
        "dismissed",
        "the user dismissed the approval of this call of \"edit\" without answering",
    ),
    (
        "failed",
        "this call of \"edit\" needs the user's approval, and the client could not ask the user",
    ),
    (
        "unavailable",
        "this call of \"edit\" needs the user's approval, and this client cannot ask the user",
    ),
    (
        "unanswered",
        "this call of \"edit\" needs the user's approval, and no answer came within",
    ),
];

/// What became of one `edit` that needed approval.
struct Ended {
    /// The elicitation's params, when the user was asked.
    asked: Option<Value>,
    /// The `tools/call` result.
    result: Value,
    /// The decision the session log keeps.
    decision: String,
    /// notes.txt after the call.
    notes: String,
    /// From the request to its answer.
    took: Duration,
}

impl Ended {
    /// The text the model reads.
    fn text(&self) -> &str {
        self.result["content"][0]["text"]
            .as_str()
            .unwrap_or_default()
    }

    /// Refused as `decision`, with that decision's message and no other's.
    fn assert_refused(&self, decision: &str) {
        let result = &self.result;
        assert_eq!(result["isError"], true, "{result:#}");
        assert_eq!(
            result["_meta"]["toolprism/errorCode"], "NOT_APPROVED",
            "{result:#}"
        );
        assert_eq!(self.decision, decision, "{result:#}");
        assert_eq!(self.notes, "first line\n", "edit ran: {result:#}");
        for (other, message) in REFUSALS {
            assert_eq!(
                self.text().contains(message),
                other == decision,
                "{decision}: {:?}",
                self.text()
            );
        }
    }
}

/// Starts `serve --approvals FLAGS` for a client with `capabilities`,
/// calls `edit` once, answering the approval as `answer` says, and stops.
fn edit_once(capabilities: Value, flags: &[&str], answer: Option<Answer>) -> Ended {
    let root = tempfile::tempdir().unwrap();
    let notes = root.path().join("notes.txt");
    std::fs::write(&notes, "first line\n").unwrap();
    let log = root.path().join("session.jsonl");
    let mut session = Session::start_with(root.path(), &log, capabilities, flags);
    let started = std::time::Instant::now();
    let (asked, result) = session.edit_answering(2, answer);
    let took = started.elapsed();
    drop(session);
    let decisions: Vec<String> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|event| event["type"] == "tool/approval")
        .map(|event| event["decision"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(decisions.len(), 1, "{decisions:?}");
    Ended {
        asked,
        result,
        decision: decisions[0].clone(),
        notes: std::fs::read_to_string(&notes).unwrap(),
        took,
    }
}

#[test]
fn w9_serve_an_approved_edit_runs() {
    let ended = edit_once(
        json!({"elicitation": {}}),
        &[],
        Some(Answer::Result(
            json!({"action": "accept", "content": {"approve": true}}),
        )),
    );
    assert!(ended.asked.is_some());
    assert_eq!(ended.result["isError"], false, "{:#}", ended.result);
    assert_eq!(ended.decision, "approved");
    assert_eq!(ended.notes, "1st line\n");
}

#[test]
fn w9_serve_a_declined_approval_says_the_user_did_not_approve() {
    let ended = edit_once(
        json!({"elicitation": {}}),
        &[],
        Some(Answer::Result(json!({"action": "decline"}))),
    );
    assert!(ended.asked.is_some());
    ended.assert_refused("denied");
    assert!(
        ended.text().contains("do not retry it unchanged"),
        "{}",
        ended.text()
    );
}

#[test]
fn w9_serve_a_dismissed_approval_says_the_user_gave_no_answer() {
    let ended = edit_once(
        json!({"elicitation": {}}),
        &[],
        Some(Answer::Result(json!({"action": "cancel"}))),
    );
    assert!(ended.asked.is_some());
    ended.assert_refused("dismissed");
}

#[test]
fn w9_serve_a_client_error_says_the_client_could_not_ask_at_once() {
    let ended = edit_once(
        json!({"elicitation": {}}),
        &["--approval-timeout", "60"],
        Some(Answer::Error(
            json!({"code": -32603, "message": "no window to show the question in"}),
        )),
    );
    assert!(ended.asked.is_some());
    ended.assert_refused("failed");
    // The client's own error, passed on; at once, not after a timeout.
    let text = ended.text();
    assert!(
        text.contains("no window to show the question in") && text.contains("-32603"),
        "{text}"
    );
    assert!(!text.contains("no answer came"), "{text}");
    assert!(ended.took < Duration::from_secs(5), "{:?}", ended.took);
}

#[test]
fn w9_serve_a_client_that_cannot_elicit_is_refused_without_being_asked() {
    let ended = edit_once(json!({}), &[], None);
    assert!(ended.asked.is_none());
    ended.assert_refused("unavailable");
    assert!(ended.took < Duration::from_secs(5), "{:?}", ended.took);
}

#[test]
fn w9_serve_an_unanswered_approval_ends_after_the_approval_timeout() {
    let ended = edit_once(
        json!({"elicitation": {}}),
        &["--approval-timeout", "1"],
        Some(Answer::Silence),
    );
    assert!(ended.asked.is_some());
    ended.assert_refused("unanswered");
    assert!(
        ended.text().contains("no answer came within 1 s"),
        "{}",
        ended.text()
    );
    assert!(
        ended.took >= Duration::from_secs(1) && ended.took < Duration::from_secs(8),
        "{:?}",
        ended.took
    );
}

#[test]
fn w3_serve_with_insecure_no_auth_starts_with_a_warning() {
    let root = tempfile::tempdir().unwrap();
    let mut child = serve(
        root.path(),
        &["--http", "0.0.0.0:0", "--insecure-no-auth"],
        &[],
    );
    let lines = stderr_until(&mut child, "WARNING");
    let _ = child.kill();
    let _ = child.wait();
    let warning = lines.last().unwrap();
    assert!(warning.contains("WITHOUT AUTHENTICATION"), "{lines:?}");
    for tool in ["bash", "edit", "write"] {
        assert!(warning.contains(tool), "{warning}");
    }
}

#[test]
fn w3_serve_with_a_token_answers_401_without_it() {
    let root = tempfile::tempdir().unwrap();
    let token_file = root.path().join("token");
    std::fs::write(&token_file, format!("{TOKEN}\n")).unwrap();
    let env_run = serve(
        root.path(),
        &["--http", "0.0.0.0:0", "--token-env", "SHOWCASE_TOKEN"],
        &[("SHOWCASE_TOKEN", TOKEN)],
    );
    let file_run = serve(
        root.path(),
        &[
            "--http",
            "0.0.0.0:0",
            "--token-file",
            token_file.to_str().unwrap(),
        ],
        &[],
    );
    for mut child in [env_run, file_run] {
        let ran = root.path().join("ran");
        let lines = stderr_until(&mut child, "serving");
        let serving = lines.last().unwrap().clone();
        assert!(serving.contains("bearer token required"), "{lines:?}");
        assert!(!lines.iter().any(|l| l.contains("WARNING")), "{lines:?}");
        let port = port_of(&serving);
        let wrong = format!("Authorization: Bearer {}", "0".repeat(64));
        for (auth, case) in [
            (vec![], "no token"),
            (vec![wrong.as_str()], "a wrong token"),
        ] {
            let refused = touch_with_bash(port, &auth);
            assert!(refused.starts_with("HTTP/1.1 401"), "{case}: {refused}");
            assert!(
                refused
                    .to_ascii_lowercase()
                    .contains("www-authenticate: bearer resource_metadata="),
                "{case}: {refused}"
            );
            assert!(!ran.exists(), "{case}: bash ran");
        }
        let answered = touch_with_bash(port, &[&format!("Authorization: Bearer {TOKEN}")]);
        assert!(answered.starts_with("HTTP/1.1 200"), "{answered}");
        assert!(answered.contains("\"exitCode\":0"), "{answered}");
        assert!(ran.exists(), "bash did not run with the token");
        std::fs::remove_file(&ran).unwrap();
        let _ = child.kill();
        let _ = child.wait();
    }
}

/// P7: `serve --import` of a server whose tools are named like the
/// built-in ones (the showcase itself) is refused in one line that names
/// both sources of each name and the remedies an imported tool can take,
/// once; the remedy it names for the command line, `--mcp-config`, then
/// serves both sets of tools side by side.
#[test]
fn serve_refuses_an_import_named_like_the_built_in_tools_naming_the_import_remedies() {
    let root = tempfile::tempdir().unwrap();
    let bin = env!("CARGO_BIN_EXE_toolprism-examples");
    let import = format!("'{bin}' serve --root '{}'", root.path().display());
    let output = Command::new(bin)
        .args(["serve", "--root"])
        .arg(root.path())
        .args(["--import", &import])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    // The imported server's own "serving" line aside, one line: the error.
    let errors: Vec<&str> = stderr.lines().filter(|l| !l.contains("serving")).collect();
    assert_eq!(errors.len(), 1, "{stderr}");
    let error = errors[0];
    assert!(
        error.contains(
            "two tools are named \"read\" (`toolprism_tools::read::ReadTool` and, registered earlier, the tool \"read\" of the MCP server \"toolprism-examples\""
        ),
        "{error}"
    );
    for remedy in [
        "a prefix (`Import::prefix`",
        "`--mcp-config` names them `<server>__<tool>`",
        "(`Import::allow`",
        "`includeTools` in `--mcp-config`",
        "(`Import::rename`)",
    ] {
        assert_eq!(error.matches(remedy).count(), 1, "{remedy}: {error}");
    }
    assert!(!error.contains("#[tool(name"), "{error}");
    assert!(
        error.contains("two tools are named \"grep\"") && error.contains("as for \"read\""),
        "{error}"
    );

    // The remedy named: `--mcp-config` prefixes the server's tools.
    let config = root.path().join("servers.json");
    std::fs::write(
        &config,
        json!({"mcpServers": {"self": {"command": bin, "args": ["serve", "--root", root.path()]}}})
            .to_string(),
    )
    .unwrap();
    let mut child = Command::new(bin)
        .args(["serve", "--root"])
        .arg(root.path())
        .arg("--mcp-config")
        .arg(&config)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    for request in [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "pipe", "version": "0"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
    ] {
        writeln!(stdin, "{request}").unwrap();
    }
    let mut names = Vec::new();
    for line in BufReader::new(child.stdout.take().unwrap()).lines() {
        let response: Value = serde_json::from_str(&line.unwrap()).unwrap();
        if response["id"] == 2 {
            names = response["result"]["tools"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t["name"].as_str().unwrap().to_owned())
                .collect();
            break;
        }
    }
    drop(stdin);
    let _ = child.kill();
    let _ = child.wait();
    assert!(
        names.iter().any(|n| n == "read") && names.iter().any(|n| n == "self__read"),
        "{names:?}"
    );
    assert_eq!(names.len(), 18, "{names:?}");
}

/// The hub: `serve --import 'CMD ARGS…'` and `serve --mcp-config FILE`
/// put the tools of the MCP project's filesystem server (npm, pinned,
/// installed under `target/`) next to the built-in ones; a call through
/// the hub reaches that server, is logged like a built-in call, and
/// `replay` draws it again.
#[test]
fn serve_imports_the_filesystem_server_next_to_the_built_in_tools() {
    use std::io::{BufRead, BufReader};

    let npm = toolprism_testkit::npm_packages(
        "mcp-filesystem",
        &["@modelcontextprotocol/server-filesystem@2026.8.31"],
    );
    let server = npm.join("node_modules/@modelcontextprotocol/server-filesystem/dist/index.js");
    let root = tempfile::tempdir().unwrap();
    let files = root.path().join("files");
    std::fs::create_dir(&files).unwrap();
    let note = files.join("note.txt");
    std::fs::write(&note, "hello from the hub\nsecond line\n").unwrap();
    let config = root.path().join("servers.json");
    std::fs::write(
        &config,
        json!({"mcpServers": {"fs": {"command": "node", "args": [server, files]}}}).to_string(),
    )
    .unwrap();
    let import = format!("node '{}' '{}'", server.display(), files.display());
    let bin = env!("CARGO_BIN_EXE_toolprism-examples");

    for (flags, read_text_file) in [
        (["--import", import.as_str()], "read_text_file"),
        (
            ["--mcp-config", config.to_str().unwrap()],
            "fs__read_text_file",
        ),
    ] {
        let log = root.path().join(format!("{read_text_file}.jsonl"));
        let mut child = Command::new(bin)
            .arg("serve")
            .args(flags)
            .arg("--root")
            .arg(root.path())
            .arg("--log")
            .arg(&log)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let requests = [
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "pipe", "version": "0"}}}),
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
            json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
                "name": read_text_file, "arguments": {"path": note}}}),
        ];
        let mut stdin = child.stdin.take().unwrap();
        for request in &requests {
            writeln!(stdin, "{request}").unwrap();
        }
        let mut responses = Vec::new();
        for line in BufReader::new(child.stdout.take().unwrap()).lines() {
            let response: Value = serde_json::from_str(&line.unwrap()).unwrap();
            let last = response["id"] == 3;
            responses.push(response);
            if last {
                break;
            }
        }
        drop(stdin);
        assert!(child.wait().unwrap().success());
        let response = |id: u64| responses.iter().find(|r| r["id"] == id).unwrap().clone();
        let names: Vec<String> = response(2)["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_owned())
            .collect();
        for name in [read_text_file, "read", "bash", "sql_query", "acme_ticket"] {
            assert!(
                names.iter().any(|n| n == name),
                "{name} missing from {names:?}"
            );
        }
        let result = &response(3)["result"];
        assert_eq!(result["isError"], false, "{result}");
        assert_eq!(
            result["content"][0]["text"],
            "hello from the hub\nsecond line\n"
        );

        // Logged like a built-in call: its name, arguments and content.
        let logged: Vec<Value> = std::fs::read_to_string(&log)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(logged.len(), 2, "{logged:#?}");
        assert_eq!(logged[0]["type"], "tool/call");
        assert_eq!(logged[0]["name"], read_text_file);
        assert_eq!(
            logged[1]["content"][0]["text"],
            "hello from the hub\nsecond line\n"
        );

        // Replayed with the same servers: the call and its content again.
        let out = Command::new(bin)
            .arg("replay")
            .arg(&log)
            .args(flags)
            .stderr(Stdio::null())
            .output()
            .unwrap();
        assert!(out.status.success());
        let drawn = String::from_utf8_lossy(&out.stdout);
        assert!(drawn.contains(read_text_file), "{drawn}");
        assert!(drawn.contains("hello from the hub"), "{drawn}");
        assert!(drawn.contains("1 call"), "{drawn}");
    }
}
