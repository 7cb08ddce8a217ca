//! HTTP/1.1 by hand over a `TcpStream`, one request per connection: what a
//! client that owes the server nothing sends (no token, a token in the URL,
//! a thousand requests at once), and the MCP messages of a legacy session.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use serde_json::{Value, json};

/// A response: status, headers (names lowercased), body (de-chunked).
#[derive(Debug, Clone)]
pub(crate) struct Reply {
    pub(crate) status: u16,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) body: String,
}

impl Reply {
    /// The first header called `name` (lowercase).
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The JSON-RPC messages of an SSE body (`data:` lines), or the body
    /// itself when it is one JSON object.
    pub(crate) fn messages(&self) -> Vec<Value> {
        if let Ok(value) = serde_json::from_str::<Value>(&self.body) {
            return vec![value];
        }
        self.body
            .lines()
            .filter_map(|line| line.strip_prefix("data:"))
            .filter_map(|data| serde_json::from_str(data.trim()).ok())
            .collect()
    }

    /// The message answering request `id`.
    pub(crate) fn answer(&self, id: u64) -> Option<Value> {
        self.messages().into_iter().find(|m| m["id"] == id)
    }
}

/// `http://HOST:PORT/mcp` → `HOST:PORT`.
pub(crate) fn authority(url: &str) -> &str {
    let rest = url.strip_prefix("http://").unwrap_or(url);
    rest.split('/').next().unwrap_or(rest)
}

/// Sends one request to `addr` (`HOST:PORT`) and reads the whole answer
/// (the server closes the connection after it: `Connection: close`).
pub(crate) fn request(
    addr: &str,
    method: &str,
    target: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> std::io::Result<Reply> {
    let mut stream = TcpStream::connect(addr)?;
    stream.set_read_timeout(Some(Duration::from_secs(60)))?;
    let mut head = format!(
        "{method} {target} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes())?;
    stream.write_all(body.as_bytes())?;
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw)?;
    parse(&raw).ok_or_else(|| {
        std::io::Error::other(format!(
            "not an HTTP response: {:?}",
            String::from_utf8_lossy(&raw)
        ))
    })
}

fn parse(raw: &[u8]) -> Option<Reply> {
    let split = raw.windows(4).position(|w| w == b"\r\n\r\n")?;
    let head = std::str::from_utf8(&raw[..split]).ok()?;
    let mut lines = head.split("\r\n");
    let status = lines.next()?.split(' ').nth(1)?.parse().ok()?;
    let headers: Vec<(String, String)> = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let mut body = raw[split + 4..].to_vec();
    let chunked = headers
        .iter()
        .any(|(n, v)| n == "transfer-encoding" && v.contains("chunked"));
    if chunked {
        body = dechunk(&body)?;
    }
    Some(Reply {
        status,
        headers,
        body: String::from_utf8_lossy(&body).into_owned(),
    })
}

fn dechunk(mut data: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    loop {
        let line_end = data.windows(2).position(|w| w == b"\r\n")?;
        let size_text = std::str::from_utf8(&data[..line_end]).ok()?;
        let size = usize::from_str_radix(size_text.split(';').next()?.trim(), 16).ok()?;
        data = &data[line_end + 2..];
        if size == 0 {
            return Some(out);
        }
        out.extend_from_slice(data.get(..size)?);
        data = data.get(size + 2..)?;
    }
}

/// The headers of an MCP POST, with `extra` after them.
fn mcp_headers<'a>(extra: &[(&'a str, &'a str)]) -> Vec<(&'a str, &'a str)> {
    let mut headers = vec![
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
    ];
    headers.extend_from_slice(extra);
    headers
}

/// POSTs `message` to `/mcp` with the MCP headers and `extra`.
pub(crate) fn post(addr: &str, extra: &[(&str, &str)], message: &Value) -> std::io::Result<Reply> {
    request(
        addr,
        "POST",
        "/mcp",
        &mcp_headers(extra),
        &message.to_string(),
    )
}

/// Sends `message` in `session` and hangs up once it is read, without
/// waiting for the answer.
pub(crate) fn send_and_leave(session: &Session, message: &Value) {
    let body = message.to_string();
    let mut stream = TcpStream::connect(&session.addr).unwrap();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMcp-Session-Id: {}\r\n\
         MCP-Protocol-Version: 2025-11-25\r\nContent-Length: {}\r\n\r\n",
        session.addr,
        session.id,
        body.len()
    );
    stream.write_all(head.as_bytes()).unwrap();
    stream.write_all(body.as_bytes()).unwrap();
    // The answer's head: the request was read and handed to the session.
    let mut first = [0u8; 12];
    stream.read_exact(&mut first).unwrap();
    assert_eq!(
        &first,
        b"HTTP/1.1 200",
        "{:?}",
        String::from_utf8_lossy(&first)
    );
}

/// `Authorization: Bearer <token>`.
pub(crate) fn bearer(token: &str) -> String {
    format!("Bearer {token}")
}

/// A legacy session of `2025-11-25`, opened with `auth` headers.
#[derive(Debug, Clone)]
pub(crate) struct Session {
    pub(crate) addr: String,
    pub(crate) id: String,
}

impl Session {
    /// `initialize`, then `notifications/initialized`; panics unless both
    /// are answered as they should.
    pub(crate) fn open(addr: &str, auth: &[(&str, &str)]) -> Session {
        let reply = Session::initialize(addr, auth).expect("initialize");
        assert_eq!(reply.status, 200, "initialize: {reply:?}");
        let id = reply
            .header("mcp-session-id")
            .unwrap_or_else(|| panic!("no session id: {reply:?}"))
            .to_owned();
        let session = Session {
            addr: addr.to_owned(),
            id,
        };
        let reply = session
            .send(
                auth,
                &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            )
            .expect("initialized");
        assert_eq!(reply.status, 202, "initialized: {reply:?}");
        session
    }

    /// The `initialize` request alone.
    pub(crate) fn initialize(addr: &str, auth: &[(&str, &str)]) -> std::io::Result<Reply> {
        post(
            addr,
            auth,
            &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "raw", "version": "0"}}}),
        )
    }

    /// `message` in this session, with `auth` headers.
    pub(crate) fn send(&self, auth: &[(&str, &str)], message: &Value) -> std::io::Result<Reply> {
        let mut headers = vec![
            ("Mcp-Session-Id", self.id.as_str()),
            ("MCP-Protocol-Version", "2025-11-25"),
        ];
        headers.extend_from_slice(auth);
        post(&self.addr, &headers, message)
    }

    /// `tools/call` of `name` with `arguments`, request id `id`.
    pub(crate) fn call(
        &self,
        auth: &[(&str, &str)],
        id: u64,
        name: &str,
        arguments: Value,
    ) -> std::io::Result<Reply> {
        self.send(
            auth,
            &json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                    "params": {"name": name, "arguments": arguments}}),
        )
    }

    /// `ping`, request id `id`.
    pub(crate) fn ping(&self, auth: &[(&str, &str)], id: u64) -> std::io::Result<Reply> {
        self.send(auth, &json!({"jsonrpc": "2.0", "id": id, "method": "ping"}))
    }
}
