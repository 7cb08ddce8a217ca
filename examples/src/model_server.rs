//! A scripted model on 127.0.0.1 for the showcase's `agent` scenario: it
//! speaks the Anthropic Messages API (`POST /v1/messages`), so the loop
//! runs against a real socket with no network and no key.
//!
//! Its script reads what the loop sends, as a real model would: the first
//! turn asks for the Rust files and the TODOs (two read-only calls, run
//! together); the second reads the first file the `glob` result names;
//! the third answers with that file's first line. Each turn also checks
//! the request: the tools are defined, every `tool_use` of the last turn
//! has its `tool_result` first in the next user message, and the
//! assistant turn (with its signed thinking block) came back byte for
//! byte. A request that breaks a rule gets a `400` naming it, as the real
//! API would, and the loop ends with that error.

use std::convert::Infallible;
use std::io;
use std::net::{SocketAddr, TcpListener};
use std::sync::Arc;
use std::thread::JoinHandle;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use tokio::sync::Notify;

/// The signature of the first turn's thinking block: it must come back.
pub const SIGNATURE: &str = "c2hvd2Nhc2Utc2lnbmVkLXRoaW5raW5n";

/// The largest request the model reads: 8 MiB.
const MAX_REQUEST: usize = 8 << 20;

/// A running scripted model; stopped when dropped.
#[derive(Debug)]
pub struct ModelServer {
    addr: SocketAddr,
    stop: Arc<Notify>,
    thread: Option<JoinHandle<()>>,
}

impl ModelServer {
    /// Starts the model on a free loopback port.
    pub fn start() -> io::Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?;
        let stop = Arc::new(Notify::new());
        let stopped = Arc::clone(&stop);
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let thread = std::thread::spawn(move || {
            runtime.block_on(async move {
                let Ok(listener) = tokio::net::TcpListener::from_std(listener) else {
                    return;
                };
                loop {
                    tokio::select! {
                        () = stopped.notified() => return,
                        accepted = listener.accept() => {
                            let Ok((tcp, _)) = accepted else { continue };
                            tokio::spawn(async move {
                                let service = service_fn(answer);
                                let _ = http1::Builder::new()
                                    .serve_connection(TokioIo::new(tcp), service)
                                    .await;
                            });
                        }
                    }
                }
            });
        });
        Ok(ModelServer {
            addr,
            stop,
            thread: Some(thread),
        })
    }

    /// The Messages endpoint's URL.
    pub fn url(&self) -> String {
        format!("http://{}/v1/messages", self.addr)
    }
}

impl Drop for ModelServer {
    fn drop(&mut self) {
        self.stop.notify_one();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

async fn answer(request: Request<Incoming>) -> Result<Response<Full<Bytes>>, Infallible> {
    if request.method() != Method::POST || request.uri().path() != "/v1/messages" {
        return Ok(reply(
            StatusCode::NOT_FOUND,
            error("not_found_error", "POST /v1/messages only"),
        ));
    }
    let body = match Limited::new(request.into_body(), MAX_REQUEST)
        .collect()
        .await
    {
        Ok(body) => body.to_bytes(),
        Err(e) => {
            return Ok(reply(
                StatusCode::PAYLOAD_TOO_LARGE,
                error("request_too_large", &e.to_string()),
            ));
        }
    };
    let (status, body) = match serde_json::from_slice::<Value>(&body) {
        Ok(request) => match script(&request, &String::from_utf8_lossy(&body)) {
            Ok(response) => (StatusCode::OK, response),
            Err(why) => (
                StatusCode::BAD_REQUEST,
                error("invalid_request_error", &why),
            ),
        },
        Err(e) => (
            StatusCode::BAD_REQUEST,
            error("invalid_request_error", &format!("not JSON: {e}")),
        ),
    };
    Ok(reply(status, body))
}

fn reply(status: StatusCode, body: Value) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from(body.to_string())));
    *response.status_mut() = status;
    response.headers_mut().insert(
        "content-type",
        hyper::header::HeaderValue::from_static("application/json"),
    );
    response
}

fn error(kind: &str, message: &str) -> Value {
    json!({"type": "error", "error": {"type": kind, "message": message}})
}

fn message(content: Value, stop_reason: &str, turn: usize) -> Value {
    json!({
        "id": format!("msg_showcase_{turn}"),
        "type": "message",
        "role": "assistant",
        "model": "showcase-scripted",
        "stop_reason": stop_reason,
        "usage": {"input_tokens": 0, "output_tokens": 0},
        "content": content,
    })
}

/// The text of a `tool_result` block.
fn result_text(block: &Value) -> String {
    match &block["content"] {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// The next turn, or why the request breaks the API's rules.
fn script(request: &Value, raw: &str) -> Result<Value, String> {
    let tools: Vec<&str> = request["tools"]
        .as_array()
        .ok_or("`tools` is missing")?
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    for needed in ["glob", "grep", "read"] {
        if !tools.contains(&needed) {
            return Err(format!("the tool `{needed}` is not defined"));
        }
    }
    let messages = request["messages"]
        .as_array()
        .ok_or("`messages` is missing")?;
    let turn = messages.iter().filter(|m| m["role"] == "assistant").count();
    // Every tool_use of the last assistant turn answered, results first.
    if let Some(last) = messages.iter().rev().find(|m| m["role"] == "assistant") {
        let asked: Vec<&str> = last["content"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|b| b["type"] == "tool_use")
            .filter_map(|b| b["id"].as_str())
            .collect();
        let answer = messages.last().ok_or("no messages")?;
        let blocks = answer["content"]
            .as_array()
            .ok_or("the last message has no blocks")?;
        let leading: Vec<&str> = blocks
            .iter()
            .take_while(|b| b["type"] == "tool_result")
            .filter_map(|b| b["tool_use_id"].as_str())
            .collect();
        if answer["role"] != "user" || leading.len() != blocks.len() || leading != asked {
            return Err(format!(
                "`tool_use` ids were found without `tool_result` blocks immediately after: {asked:?} asked, {leading:?} answered first"
            ));
        }
    }
    match turn {
        0 => Ok(message(
            json!([
                {"type": "thinking", "thinking": "Find the Rust files and the TODOs first.", "signature": SIGNATURE},
                {"type": "text", "text": "Let me look at the workspace."},
                {"type": "tool_use", "id": "agent-1", "name": "glob", "input": {"pattern": "src/**/*.rs"}},
                {"type": "tool_use", "id": "agent-2", "name": "grep", "input": {"pattern": "TODO"}},
            ]),
            "tool_use",
            turn,
        )),
        1 => {
            // The thinking block must come back exactly as it was sent.
            if !raw.contains(&format!("\"signature\":\"{SIGNATURE}\"")) {
                return Err("the thinking block of the last turn was not sent back".into());
            }
            let results = messages.last().map(|m| &m["content"]).ok_or("no results")?;
            let glob = results
                .as_array()
                .and_then(|r| r.iter().find(|b| b["tool_use_id"] == "agent-1"))
                .map(result_text)
                .unwrap_or_default();
            let path = glob
                .split_whitespace()
                .find(|w| w.ends_with(".rs"))
                .ok_or("the glob result names no .rs file")?;
            Ok(message(
                json!([
                    {"type": "text", "text": format!("Reading {path}.")},
                    {"type": "tool_use", "id": "agent-3", "name": "read", "input": {"path": path, "limit": 3}},
                ]),
                "tool_use",
                turn,
            ))
        }
        _ => {
            let results = messages.last().map(|m| &m["content"]).ok_or("no results")?;
            let read = results
                .as_array()
                .and_then(|r| r.first())
                .map(result_text)
                .unwrap_or_default();
            // The read result numbers its lines: `1: …` is the file's first.
            let first = read
                .lines()
                .find_map(|l| l.trim().strip_prefix("1: "))
                .ok_or("the read result has no line 1")?
                .to_owned();
            Ok(message(
                json!([{"type": "text", "text": format!("The first line I read: {first}")}]),
                "end_turn",
                turn,
            ))
        }
    }
}
