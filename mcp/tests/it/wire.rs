//! Hostile input on the wire, straight to the test server process: over
//! stdio, lines that are not JSON, JSON that is not JSON-RPC, a 10 MB
//! request, 100,000-deep JSON; over HTTP, the same bodies. Each gets a
//! protocol error, and the server goes on serving. Also over raw stdio:
//! progress only when asked, cards only for clients that ask (by
//! capability or per call), and the server's own session log
//! (`McpServer::with_log`).

use crate::support;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};
use support::{HttpServer, server_exe};

/// A stdio server with a reader thread turning its stdout into messages.
struct StdioServer {
    child: std::process::Child,
    stdin: Option<ChildStdin>,
    messages: mpsc::Receiver<Value>,
    /// Everything the server wrote to stderr so far.
    stderr: std::sync::Arc<std::sync::Mutex<String>>,
}

impl StdioServer {
    fn start() -> StdioServer {
        StdioServer::start_with(&[])
    }

    /// The server with `args` (see `tests/support/server.rs`).
    fn start_with(args: &[&str]) -> StdioServer {
        let mut child = Command::new(server_exe())
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start the test server");
        let stdin = child.stdin.take().unwrap();
        let stderr = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
        let mut errors = child.stderr.take().unwrap();
        let sink = stderr.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n @ 1..) = errors.read(&mut buf) {
                sink.lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        });
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let (send, messages) = mpsc::channel();
        std::thread::spawn(move || {
            for line in stdout.lines() {
                let Ok(line) = line else { break };
                let message = serde_json::from_str(&line).unwrap_or_else(|e| {
                    panic!("stdout carried a line that is not JSON ({e}): {line}")
                });
                if send.send(message).is_err() {
                    break;
                }
            }
        });
        StdioServer {
            child,
            stdin: Some(stdin),
            messages,
            stderr,
        }
    }

    fn send(&mut self, line: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        stdin.write_all(line).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    fn next(&self) -> Value {
        self.messages
            .recv_timeout(Duration::from_secs(20))
            .expect("the server answered")
    }

    /// The response to request `id`, skipping nothing: the next message
    /// must be it.
    fn call(&mut self, id: u64, method: &str, params: Value) -> Value {
        let request = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.send(request.to_string().as_bytes());
        let response = self.next();
        assert_eq!(response["id"], id, "{response}");
        response
    }
}

impl Drop for StdioServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn initialize(server: &mut StdioServer) {
    initialize_with(server, json!({}));
}

/// `initialize` declaring `capabilities`; returns the server's answer.
fn initialize_with(server: &mut StdioServer, capabilities: Value) -> Value {
    let init = server.call(
        1,
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": capabilities, "clientInfo": {"name": "wire", "version": "0"}}),
    );
    assert_eq!(init["result"]["protocolVersion"], "2025-11-25", "{init}");
    server.send(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    init
}

/// A working call, proving the server still serves.
fn still_serving(server: &mut StdioServer, id: u64) {
    let response = server.call(
        id,
        "tools/call",
        json!({"name": "echo", "arguments": {"text": "ok"}}),
    );
    assert_eq!(
        response["result"]["structuredContent"],
        json!({"text": "ok", "len": 2}),
        "{response}"
    );
}

#[test]
fn stdio_answers_every_malformed_line_and_keeps_serving() {
    let mut server = StdioServer::start();
    initialize(&mut server);
    still_serving(&mut server, 2);

    // Not JSON: parse error, no id.
    for garbage in [
        &b"not json at all"[..],
        b"{\"jsonrpc\":",
        b"\xff\xfe binary \x00",
        b"}",
    ] {
        server.send(garbage);
        let error = server.next();
        assert_eq!(error["error"]["code"], -32700, "{error}");
        assert!(
            error.get("id").is_none() || error["id"].is_null(),
            "{error}"
        );
    }
    still_serving(&mut server, 3);

    // JSON, not JSON-RPC: invalid request, with the id when there is one.
    for (line, id) in [
        (json!([1, 2]), Value::Null),
        (json!({"foo": 1}), Value::Null),
        (json!(42), Value::Null),
        (
            json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": "oops"}),
            json!(7),
        ),
        (
            json!({"jsonrpc": "2.0", "id": "x", "result": 5, "error": 3}),
            json!("x"),
        ),
    ] {
        server.send(line.to_string().as_bytes());
        let error = server.next();
        assert_eq!(error["error"]["code"], -32600, "{line} → {error}");
        assert_eq!(
            error.get("id").cloned().unwrap_or(Value::Null),
            id,
            "{line} → {error}"
        );
    }
    // A known method with params of the wrong shape: invalid params.
    let response = server.call(8, "tools/call", json!({"name": 5}));
    assert_eq!(response["error"]["code"], -32602, "{response}");
    // An unknown method: method not found.
    let response = server.call(9, "no/such/method", json!({}));
    assert_eq!(response["error"]["code"], -32601, "{response}");
    // A notification nobody knows is not answered: the next message is the
    // answer to the next request.
    server.send(br#"{"jsonrpc":"2.0","method":"notifications/whatever","params":{}}"#);
    still_serving(&mut server, 10);

    // A 10 MB request: refused with its id, then the server serves on.
    let big = "x".repeat(10 * 1024 * 1024);
    let request = json!({"jsonrpc": "2.0", "id": 11, "method": "tools/call",
        "params": {"name": "echo", "arguments": {"text": big}}});
    server.send(request.to_string().as_bytes());
    let error = server.next();
    assert_eq!(
        error["id"],
        11,
        "{}",
        &error.to_string()[..200.min(error.to_string().len())]
    );
    assert_eq!(error["error"]["code"], -32600);
    assert_eq!(error["error"]["data"]["limit"], 4 * 1024 * 1024);
    // Over 4 times the limit the line is skipped unread: no id.
    let huge = "y".repeat(17 * 1024 * 1024);
    server.send(
        format!(r#"{{"jsonrpc":"2.0","id":12,"method":"ping","params":{{"p":"{huge}"}}}}"#)
            .as_bytes(),
    );
    let error = server.next();
    assert_eq!(error["error"]["code"], -32600, "{error}");
    assert!(error.get("id").is_none(), "{error}");
    still_serving(&mut server, 13);

    // 100,000-deep arguments: deeper than serde_json reads, yet the
    // message is read around them and the registry refuses them as a
    // result the model can act on, naming the rule (W2).
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    server.send(
        format!(r#"{{"jsonrpc":"2.0","id":14,"method":"tools/call","params":{{"name":"echo","arguments":{{"text":{deep}}}}}}}"#)
            .as_bytes(),
    );
    let response = server.next();
    assert_eq!(response["id"], 14, "{response}");
    assert_eq!(response["result"]["isError"], true, "{response}");
    assert_eq!(
        response["result"]["_meta"]["toolprism/errorCode"], "INVALID_ARGS",
        "{response}"
    );
    assert!(
        response["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("nests deeper than 127 levels"),
        "{response}"
    );
    // 100-deep arguments parse and reach the registry, which refuses them
    // as a result the model can act on.
    let nested = format!("{}1{}", "[".repeat(100), "]".repeat(100));
    let response = server.call(
        15,
        "tools/call",
        json!({"name": "echo", "arguments": {"text": serde_json::from_str::<Value>(&nested).unwrap()}}),
    );
    assert_eq!(response["result"]["isError"], true, "{response}");
    assert_eq!(
        response["result"]["_meta"]["toolprism/errorCode"],
        "INVALID_ARGS"
    );
    still_serving(&mut server, 16);

    // Blank lines, a UTF-8 byte order mark and CRLF are tolerated.
    server.send(b"");
    server.send(b"   ");
    let mut bom = b"\xEF\xBB\xBF".to_vec();
    bom.extend_from_slice(
        json!({"jsonrpc": "2.0", "id": 17, "method": "tools/list"})
            .to_string()
            .as_bytes(),
    );
    bom.push(b'\r');
    server.send(&bom);
    let list = server.next();
    assert_eq!(list["id"], 17, "{list}");
    assert_eq!(list["result"]["tools"].as_array().unwrap().len(), 15);
}

#[test]
fn stdio_ends_cleanly_when_the_client_leaves() {
    let mut server = StdioServer::start();
    initialize(&mut server);
    still_serving(&mut server, 2);
    // A call still running when stdin closes: the server exits anyway.
    server.send(
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "slow", "arguments": {"ms": 600000}}})
            .to_string()
            .as_bytes(),
    );
    server.stdin = None;
    let child = &mut server.child;
    let started = std::time::Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            assert!(status.success(), "{status}");
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "the server did not exit"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Over pipes, `serve_stdio` makes stdin and stdout non-blocking (they are
/// read and written through the runtime's I/O driver); once serving ends
/// they are blocking again, so a program that writes to stdout afterwards
/// waits for a slow reader instead of failing with `WouldBlock`.
#[test]
fn stdio_pipes_are_blocking_again_after_serving() {
    let mut server = Command::new(server_exe())
        .args(["--then-write", "1048576"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = server.stdin.take().unwrap();
    let mut stdout = BufReader::new(server.stdout.take().unwrap());
    stdin
        .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}\n")
        .unwrap();
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    let answer: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(answer["id"], 1, "{line}");
    drop(stdin);
    // The server now writes 1 MiB, 16 times a pipe's buffer, while nobody
    // reads: a non-blocking stdout would fail at once.
    std::thread::sleep(Duration::from_millis(300));
    let mut rest = Vec::new();
    stdout.read_to_end(&mut rest).unwrap();
    let status = server.wait().unwrap();
    let mut stderr = String::new();
    server
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    assert!(status.success(), "{status}: {stderr}");
    assert_eq!(rest.len(), 1 << 20, "{stderr}");
}

/// One raw HTTP/1.1 POST; returns the status and the body.
fn post(server: &HttpServer, path: &str, content_type: &str, body: &[u8]) -> (u16, String) {
    let authority = server
        .url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_owned();
    let mut stream = TcpStream::connect(&authority).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let head = format!(
        "POST {path} HTTP/1.1\r\nHost: {authority}\r\nContent-Type: {content_type}\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2025-11-25\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).unwrap();
    // The server may answer (413) before it has read the whole body.
    let _ = stream.write_all(body);
    let mut response = Vec::new();
    let _ = stream.read_to_end(&mut response);
    let response = String::from_utf8_lossy(&response).into_owned();
    let status = response
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status line: {response:?}"));
    let body = response
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_owned())
        .unwrap_or_default();
    (status, body)
}

/// A stateless `tools/call` over HTTP, answered on an SSE stream.
fn http_echo(server: &HttpServer) -> String {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "echo", "arguments": {"text": "ok"}}});
    let (status, body) = post(
        server,
        "/mcp",
        "application/json",
        body.to_string().as_bytes(),
    );
    assert_eq!(status, 200, "{body}");
    body
}

#[test]
fn http_refuses_malformed_bodies_and_keeps_serving() {
    let mut server = HttpServer::start(&["--stateless"]);
    assert!(http_echo(&server).contains("echo: ok"));
    let cases: Vec<(&str, &str, Vec<u8>)> = vec![
        ("/mcp", "application/json", b"not json".to_vec()),
        ("/mcp", "application/json", br#"{"foo":1}"#.to_vec()),
        (
            "/mcp",
            "application/json",
            format!("{}{}", "[".repeat(100_000), "]".repeat(100_000)).into_bytes(),
        ),
        (
            "/mcp",
            "text/plain",
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#.to_vec(),
        ),
        ("/mcp", "application/json", vec![b'x'; 10 * 1024 * 1024]),
        (
            "/elsewhere",
            "application/json",
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#.to_vec(),
        ),
    ];
    for (path, content_type, body) in cases {
        let (status, answer) = post(&server, path, content_type, &body);
        assert!(
            (400..500).contains(&status),
            "{path} {content_type} {}… → {status} {answer}",
            String::from_utf8_lossy(&body[..body.len().min(40)])
        );
        assert!(server.is_running());
        assert!(http_echo(&server).contains("echo: ok"));
    }
}

/// Progress on the wire: a `tools/call` carrying a `progressToken` gets one
/// `notifications/progress` per report, in order, all before its response;
/// the same call without a token gets its response and nothing else.
#[test]
fn stdio_sends_progress_before_the_response_only_when_asked() {
    let mut server = StdioServer::start();
    initialize(&mut server);
    for (id, token) in [(2, json!("tok-2")), (3, json!(77))] {
        let request = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "steps", "arguments": {"count": 4},
                       "_meta": {"progressToken": token}}});
        server.send(request.to_string().as_bytes());
        for step in 1..=4 {
            let note = server.next();
            assert_eq!(note["method"], "notifications/progress", "{note}");
            assert!(note.get("id").is_none(), "{note}");
            assert_eq!(
                note["params"],
                json!({"progressToken": token, "progress": step as f64, "total": 4.0,
                       "message": format!("step {step} of 4")}),
                "{note}"
            );
        }
        let response = server.next();
        assert_eq!(response["id"], id, "{response}");
        assert_eq!(
            response["result"]["structuredContent"],
            json!({"steps": 4}),
            "{response}"
        );
    }
    // No token: `call` checks that the very next message is the response.
    let response = server.call(
        4,
        "tools/call",
        json!({"name": "steps", "arguments": {"count": 4}}),
    );
    assert_eq!(response["result"]["structuredContent"], json!({"steps": 4}));
    still_serving(&mut server, 5);
}

/// `echo` called with `meta` as the request's `_meta` (none when null);
/// returns the result.
fn echo_with_meta(server: &mut StdioServer, id: u64, meta: Value) -> Value {
    let mut params = json!({"name": "echo", "arguments": {"text": "card"}});
    if !meta.is_null() {
        params["_meta"] = meta;
    }
    let response = server.call(id, "tools/call", params);
    let result = response["result"].clone();
    assert_eq!(
        result["structuredContent"],
        json!({"text": "card", "len": 4}),
        "{response}"
    );
    // The presentation meta is on every result, cards or not.
    assert_eq!(
        result["_meta"]["toolprism/meta"],
        json!({"chars": 4}),
        "{result}"
    );
    result
}

/// Whether `result` carries both cards (and, if one, both).
fn has_cards(result: &Value) -> bool {
    let call = result["_meta"].get("toolprism/callCard").is_some();
    let card = result["_meta"].get("toolprism/resultCard").is_some();
    assert_eq!(call, card, "one card without the other: {result}");
    if card {
        assert_eq!(
            result["_meta"]["toolprism/resultCard"]["title"],
            "Echoed 4 chars"
        );
        assert_eq!(
            result["_meta"]["toolprism/callCard"]["rawInput"],
            json!({"text": "card"})
        );
    }
    card
}

/// A client that declares the `toolprism/cards` capability in `initialize`
/// gets the cards on every result without asking again; a call can still
/// turn them off with `_meta: {"toolprism/cards": false}`.
#[test]
fn stdio_cards_for_a_session_that_declared_the_capability() {
    let mut server = StdioServer::start();
    let init = initialize_with(
        &mut server,
        json!({"experimental": {"toolprism/cards": {}}}),
    );
    // The server says it can send them.
    assert_eq!(
        init["result"]["capabilities"]["experimental"]["toolprism/cards"],
        json!({}),
        "{init}"
    );
    assert!(has_cards(&echo_with_meta(&mut server, 2, Value::Null)));
    assert!(has_cards(&echo_with_meta(&mut server, 3, json!({}))));
    assert!(!has_cards(&echo_with_meta(
        &mut server,
        4,
        json!({"toolprism/cards": false})
    )));
    // An error result carries them too, with its code.
    let fail = server.call(
        5,
        "tools/call",
        json!({"name": "fail", "arguments": {"message": "no"}}),
    );
    assert_eq!(
        fail["result"]["_meta"]["toolprism/errorCode"], "NOPE",
        "{fail}"
    );
    assert!(
        fail["result"]["_meta"]["toolprism/resultCard"].is_object(),
        "{fail}"
    );
}

/// A client that declares nothing gets no cards (but the meta and the
/// error code), unless it asks for one call with
/// `_meta: {"toolprism/cards": true}`. Other experimental capabilities, and
/// a per-call value that is not `true`, do not ask.
#[test]
fn stdio_no_cards_unless_asked() {
    let mut server = StdioServer::start();
    initialize_with(
        &mut server,
        json!({"experimental": {"someone/else": {}}, "roots": {}}),
    );
    assert!(!has_cards(&echo_with_meta(&mut server, 2, Value::Null)));
    assert!(!has_cards(&echo_with_meta(
        &mut server,
        3,
        json!({"toolprism/cards": "yes"})
    )));
    let fail = server.call(
        4,
        "tools/call",
        json!({"name": "fail", "arguments": {"message": "no"}}),
    );
    let meta = &fail["result"]["_meta"];
    assert_eq!(meta["toolprism/errorCode"], "NOPE", "{fail}");
    assert!(meta.get("toolprism/resultCard").is_none(), "{fail}");
    assert!(meta.get("toolprism/callCard").is_none(), "{fail}");
    // Asked for this call only.
    assert!(has_cards(&echo_with_meta(
        &mut server,
        5,
        json!({"toolprism/cards": true})
    )));
    assert!(!has_cards(&echo_with_meta(&mut server, 6, Value::Null)));
}

/// `--cards always` sends them unasked; `--cards never` refuses even a
/// call that asks, and does not announce the capability.
#[test]
fn stdio_cards_always_and_never() {
    let mut always = StdioServer::start_with(&["--cards", "always"]);
    initialize(&mut always);
    assert!(has_cards(&echo_with_meta(&mut always, 2, Value::Null)));

    let mut never = StdioServer::start_with(&["--cards", "never"]);
    let init = initialize_with(&mut never, json!({"experimental": {"toolprism/cards": {}}}));
    assert!(
        init["result"]["capabilities"]
            .get("experimental")
            .and_then(|e| e.get("toolprism/cards"))
            .is_none(),
        "{init}"
    );
    assert!(!has_cards(&echo_with_meta(
        &mut never,
        2,
        json!({"toolprism/cards": true})
    )));
}

/// `McpServer::with_log` (the test server's `--server-log`, on a registry
/// without a log of its own): each call is appended as a `tool/call` before
/// it runs and a `tool/result` after, under `<session>:<request id>`; a
/// tool the registry does not hold is not; the value never is.
#[test]
fn stdio_server_log_records_each_call_without_its_value() {
    use toolprism::log::{LogEvent, read_log};

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("server.jsonl");
    let mut server = StdioServer::start_with(&["--server-log", path.to_str().unwrap()]);
    initialize(&mut server);
    let echo = server.call(
        2,
        "tools/call",
        json!({"name": "echo", "arguments": {"text": "logged"}}),
    );
    assert_eq!(
        echo["result"]["structuredContent"],
        json!({"text": "logged", "len": 6}),
        "{echo}"
    );
    let fail = server.call(
        3,
        "tools/call",
        json!({"name": "fail", "arguments": {"message": "kept out"}}),
    );
    assert_eq!(fail["result"]["isError"], true, "{fail}");
    let unknown = server.call(4, "tools/call", json!({"name": "nope", "arguments": {}}));
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
    // The result is logged before the response is written; the unknown
    // tool too, as an `UNKNOWN_TOOL` result (W1).
    let read = read_log(&path).unwrap();
    assert!(read.problems.is_empty(), "{:?}", read.problems);
    let [call_1, result_1, call_2, result_2, call_3, result_3] = &read.events[..] else {
        panic!("three call/result pairs, got {:#?}", read.events);
    };
    assert!(
        matches!(call_3, LogEvent::Call { name, .. } if name == "nope"),
        "{call_3:?}"
    );
    assert!(
        matches!(result_3, LogEvent::Result { error: Some(e), .. } if e.code.as_str() == "UNKNOWN_TOOL"),
        "{result_3:?}"
    );
    let LogEvent::Call {
        call_id,
        name,
        arguments,
        dialect,
    } = call_1
    else {
        panic!("{call_1:?}");
    };
    let (session, request) = call_id.rsplit_once(':').unwrap();
    assert!(session.starts_with('s'), "{call_id}");
    assert_eq!((request, name.as_str(), dialect), ("2", "echo", &None));
    assert_eq!(
        serde_json::from_str::<Value>(arguments).unwrap(),
        json!({"text": "logged"})
    );
    let LogEvent::Result {
        call_id: id,
        content,
        is_error,
        error,
        meta,
    } = result_1
    else {
        panic!("{result_1:?}");
    };
    assert_eq!(id, call_id);
    assert_eq!(content, &[toolprism::ContentBlock::text("echo: logged")]);
    assert!(!is_error && error.is_none());
    assert_eq!(meta, &Some(json!({"chars": 6})));

    let LogEvent::Call {
        call_id: fail_id,
        name,
        ..
    } = call_2
    else {
        panic!("{call_2:?}");
    };
    assert_eq!(
        (fail_id.as_str(), name.as_str()),
        (&*format!("{session}:3"), "fail")
    );
    let LogEvent::Result {
        call_id: id,
        is_error,
        error,
        meta,
        ..
    } = result_2
    else {
        panic!("{result_2:?}");
    };
    assert_eq!(id, fail_id);
    assert!(is_error);
    assert_eq!(error.as_ref().map(|e| e.code.as_str()), Some("NOPE"));
    assert_eq!(meta, &None);

    // No value reached the file: echo's `len`, the structured content.
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(!text.contains("\"len\""), "{text}");
    assert!(!text.contains("structuredContent"), "{text}");
}

/// A session log that cannot be written (`/dev/full`): every call is still
/// answered, and the failure is reported on stderr once, not per call.
#[test]
#[cfg(target_os = "linux")]
fn stdio_server_log_failure_is_reported_once_and_calls_go_on() {
    let mut server = StdioServer::start_with(&["--server-log", "/dev/full"]);
    initialize(&mut server);
    for id in 2..5 {
        still_serving(&mut server, id);
    }
    // Each report was written before its call's response; give the thread
    // reading stderr time to catch up.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !server.stderr.lock().unwrap().contains('\n') && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(200));
    let stderr = server.stderr.lock().unwrap().clone();
    assert_eq!(
        stderr.matches("could not append").count(),
        1,
        "one report on stderr: {stderr}"
    );
    assert!(stderr.contains("/dev/full"), "{stderr}");
}

/// A `2026-07-28` client has no `initialize`: it declares the capability in
/// the capabilities every request carries, and gets the cards; the same
/// request without it gets none.
#[test]
fn stdio_cards_for_a_2026_07_28_request_that_declares_the_capability() {
    let mut server = StdioServer::start();
    for (id, experimental, cards) in [
        (1, json!({"toolprism/cards": {}}), true),
        (2, json!({}), false),
    ] {
        let meta = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "wire", "version": "0"},
            "io.modelcontextprotocol/clientCapabilities": {"experimental": experimental},
        });
        assert_eq!(has_cards(&echo_with_meta(&mut server, id, meta)), cards);
    }
}

/// The arguments' text as a client wrote it, each case refused by the
/// registry's own reader (W2), and what its message must say.
const LOSSLESS_CASES: [(&str, &str); 4] = [
    (
        r#"{"text":"a.txt","text":"nope.txt"}"#,
        "\"arguments.text\" is given twice; send each key once",
    ),
    (r#"{"text":"x","n":-0.0}"#, "\"arguments.n\" is -0.0"),
    (r#"{"text":1e999}"#, "\"arguments\" is not valid JSON"),
    (
        r#"{"text":"x","more":{"text":1,"text":2}}"#,
        "\"arguments.more.text\" is given twice",
    ),
];

/// The error result of a raw `tools/call` answer: its code and message.
fn invalid_args_message(response: &Value) -> String {
    let result = &response["result"];
    assert_eq!(result["isError"], true, "{response}");
    assert_eq!(
        result["_meta"]["toolprism/errorCode"], "INVALID_ARGS",
        "{response}"
    );
    result["content"][0]["text"].as_str().unwrap().to_owned()
}

/// W2 over stdio: the same text that `Registry::call` refuses is refused
/// over the wire, read from the bytes the client sent (the protocol
/// library's parsed map keeps the last duplicate and cannot show one).
#[test]
fn stdio_arguments_follow_the_lossless_rules_as_sent() {
    let mut server = StdioServer::start();
    initialize(&mut server);
    for (id, (arguments, says)) in (20..).zip(LOSSLESS_CASES) {
        server.send(
            format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"echo","arguments":{arguments}}}}}"#)
                .as_bytes(),
        );
        let response = server.next();
        assert_eq!(response["id"], id, "{response}");
        let message = invalid_args_message(&response);
        assert!(message.contains(says), "{arguments} → {message}");
        still_serving(&mut server, id + 100);
    }
}

/// W2 over Streamable HTTP: the body is read before the protocol library
/// parses it, so the same cases get the same answers.
#[test]
fn http_arguments_follow_the_lossless_rules_as_sent() {
    let mut server = HttpServer::start(&["--stateless"]);
    for (arguments, says) in LOSSLESS_CASES {
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"echo","arguments":{arguments}}}}}"#
        );
        let (status, answer) = post(&server, "/mcp", "application/json", body.as_bytes());
        assert_eq!(status, 200, "{answer}");
        let data = answer
            .lines()
            .find_map(|line| line.strip_prefix("data: ").filter(|d| d.contains("result")))
            .unwrap_or_else(|| panic!("no result event: {answer}"));
        let response: Value = serde_json::from_str(data).unwrap();
        let message = invalid_args_message(&response);
        assert!(message.contains(says), "{arguments} → {message}");
        assert!(server.is_running());
        assert!(http_echo(&server).contains("echo: ok"));
    }
    // 100,000-deep arguments in a body: read around, refused as a result.
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"echo","arguments":{{"text":{deep}}}}}}}"#
    );
    let (status, answer) = post(&server, "/mcp", "application/json", body.as_bytes());
    assert_eq!(status, 200, "{}", &answer[..answer.len().min(300)]);
    assert!(
        answer.contains("INVALID_ARGS"),
        "{}",
        &answer[..answer.len().min(300)]
    );
    assert!(answer.contains("nests deeper than 127 levels"));
    assert!(http_echo(&server).contains("echo: ok"));
}

/// W1 over MCP: the registry's pipeline writes the server's log, so the
/// calls a tool makes in turn are in it, tied to their parent.
#[test]
fn stdio_server_log_holds_nested_calls() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nested.jsonl");
    let mut server = StdioServer::start_with(&["--server-log", path.to_str().unwrap()]);
    initialize(&mut server);
    let twice = server.call(
        2,
        "tools/call",
        json!({"name": "twice", "arguments": {"text": "hi"}}),
    );
    assert_eq!(twice["result"]["isError"], false, "{twice}");
    let read = toolprism::log::read_log(&path).unwrap();
    let kinds: Vec<String> = read
        .events
        .iter()
        .map(|e| {
            serde_json::to_value(e).unwrap()["type"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "tool/call",
            "tool/nested-call",
            "tool/nested-result",
            "tool/nested-call",
            "tool/nested-result",
            "tool/result"
        ],
        "{:#?}",
        read.events
    );
    let events: Vec<Value> = read
        .events
        .iter()
        .map(|e| serde_json::to_value(e).unwrap())
        .collect();
    let parent = events[0]["callId"].as_str().unwrap();
    for nested in &events[1..5] {
        assert_eq!(nested["parentCallId"], parent, "{nested}");
        assert!(
            nested["callId"]
                .as_str()
                .unwrap()
                .starts_with(&format!("{parent}:nested:")),
            "{nested}"
        );
    }
    // Nothing of a value: echo's `len` never reaches the file.
    assert!(!std::fs::read_to_string(&path).unwrap().contains("\"len\""));
}
