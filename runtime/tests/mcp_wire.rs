//! Hostile input on the wire, straight to the test server process: over
//! stdio, lines that are not JSON, JSON that is not JSON-RPC, a 10 MB
//! request, 100,000-deep JSON; over HTTP, the same bodies. Each gets a
//! protocol error, and the server goes on serving.

mod mcp;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use mcp::{HttpServer, server_exe};
use serde_json::{Value, json};

/// A stdio server with a reader thread turning its stdout into messages.
struct StdioServer {
    child: std::process::Child,
    stdin: Option<ChildStdin>,
    messages: mpsc::Receiver<Value>,
}

impl StdioServer {
    fn start() -> StdioServer {
        let mut child = Command::new(server_exe())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start the test server");
        let stdin = child.stdin.take().unwrap();
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
    let init = server.call(
        1,
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "wire", "version": "0"}}),
    );
    assert_eq!(init["result"]["protocolVersion"], "2025-11-25", "{init}");
    server.send(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
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

    // 100,000-deep arguments: deeper than serde_json reads, a parse error.
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    server.send(
        format!(r#"{{"jsonrpc":"2.0","id":14,"method":"tools/call","params":{{"name":"echo","arguments":{{"text":{deep}}}}}}}"#)
            .as_bytes(),
    );
    let error = server.next();
    assert_eq!(error["error"]["code"], -32700, "{error}");
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
    assert_eq!(list["result"]["tools"].as_array().unwrap().len(), 8);
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
