//! A tiny HTTP/1.1 server on 127.0.0.1 for the showcase: fixed routes,
//! `GET` and `HEAD` only, one connection at a time, closed after each
//! response. It exists so `web_fetch` is shown against a real socket
//! without any network.
//!
//! It is part of the showcase, not of its tests: `cargo run` serves the
//! article and the status the `web_fetch` scenarios fetch from it, and a
//! reader of the showcase sees it as the code it is. Tests that need a
//! server of their own use `toolprism_testkit::http` instead, so no test
//! depends on what the showcase chooses to serve (the end-to-end tests
//! check this server only through the showcase that uses it).

use std::collections::HashMap;
use std::io::{self, BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

/// A canned response.
#[derive(Debug, Clone)]
pub struct Response {
    /// The status code.
    pub status: u16,
    /// The `Content-Type`.
    pub content_type: String,
    /// The body.
    pub body: Vec<u8>,
}

/// A running server; stopped when dropped.
#[derive(Debug)]
pub struct Server {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    served: Arc<AtomicUsize>,
    thread: Option<JoinHandle<()>>,
}

/// Routes for a [`Server`].
#[derive(Debug, Default, Clone)]
pub struct ServerBuilder {
    routes: HashMap<String, Response>,
}

impl ServerBuilder {
    /// Serves `body` at `path` with this status and content type.
    pub fn route(
        mut self,
        path: &str,
        status: u16,
        content_type: &str,
        body: impl Into<Vec<u8>>,
    ) -> Self {
        self.routes.insert(
            path.to_owned(),
            Response {
                status,
                content_type: content_type.to_owned(),
                body: body.into(),
            },
        );
        self
    }

    /// Binds 127.0.0.1 on a free port and serves in a thread.
    pub fn start(self) -> io::Result<Server> {
        let listener = TcpListener::bind(("127.0.0.1", 0))?;
        let addr = listener.local_addr()?;
        let stop = Arc::new(AtomicBool::new(false));
        let served = Arc::new(AtomicUsize::new(0));
        let (stop2, served2) = (stop.clone(), served.clone());
        let routes = self.routes;
        let thread = std::thread::Builder::new()
            .name("toolprism-http".into())
            .spawn(move || {
                for stream in listener.incoming() {
                    if stop2.load(Ordering::SeqCst) {
                        break;
                    }
                    if let Ok(stream) = stream {
                        // A broken client only ends its own connection.
                        let _ = serve(stream, &routes);
                        served2.fetch_add(1, Ordering::SeqCst);
                    }
                }
            })?;
        Ok(Server {
            addr,
            stop,
            served,
            thread: Some(thread),
        })
    }
}

impl Server {
    /// A builder with no routes (every path is a 404).
    pub fn builder() -> ServerBuilder {
        ServerBuilder::default()
    }

    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:<port><path>`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// Connections served so far.
    pub fn served(&self) -> usize {
        self.served.load(Ordering::SeqCst)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wake the accept loop so it sees the flag.
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_secs(1));
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        301 => "Moved Permanently",
        302 => "Found",
        400 => "Bad Request",
        404 => "Not Found",
        405 => "Method Not Allowed",
        500 => "Internal Server Error",
        _ => "Status",
    }
}

fn serve(stream: TcpStream, routes: &HashMap<String, Response>) -> io::Result<()> {
    stream.set_read_timeout(Some(Duration::from_secs(5)))?;
    stream.set_write_timeout(Some(Duration::from_secs(5)))?;
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut request_line = String::new();
    reader.read_line(&mut request_line)?;
    // Headers, up to the blank line; bounded.
    let mut header_bytes = 0;
    loop {
        let mut line = String::new();
        let n = reader.read_line(&mut line)?;
        header_bytes += n;
        if n == 0 || line == "\r\n" || line == "\n" || header_bytes > 16 * 1024 {
            break;
        }
    }
    let mut parts = request_line.split_whitespace();
    let (method, target) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    let path = target.split('?').next().unwrap_or("");
    let not_found = Response {
        status: 404,
        content_type: "text/plain; charset=utf-8".into(),
        body: format!("no route for {path}\n").into_bytes(),
    };
    let not_allowed = Response {
        status: 405,
        content_type: "text/plain; charset=utf-8".into(),
        body: b"only GET and HEAD\n".to_vec(),
    };
    let response = match method {
        "GET" | "HEAD" => routes.get(path).unwrap_or(&not_found),
        _ => &not_allowed,
    };
    let mut out = stream;
    write!(
        out,
        "HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        response.status,
        reason(response.status),
        response.content_type,
        response.body.len()
    )?;
    if method != "HEAD" {
        out.write_all(&response.body)?;
    }
    out.flush()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    fn get(server: &Server, raw: &str) -> String {
        let mut s = TcpStream::connect(server.addr()).unwrap();
        s.write_all(raw.as_bytes()).unwrap();
        let mut out = String::new();
        s.read_to_string(&mut out).unwrap();
        out
    }

    #[test]
    fn serves_routes_404s_and_stops() {
        let server = Server::builder()
            .route("/a", 200, "text/plain", "hello")
            .start()
            .unwrap();
        let ok = get(&server, "GET /a?x=1 HTTP/1.1\r\nHost: x\r\n\r\n");
        assert!(ok.starts_with("HTTP/1.1 200 OK\r\n"), "{ok}");
        assert!(ok.ends_with("\r\n\r\nhello"));
        let missing = get(&server, "GET /b HTTP/1.1\r\n\r\n");
        assert!(missing.starts_with("HTTP/1.1 404"));
        let post = get(&server, "POST /a HTTP/1.1\r\n\r\n");
        assert!(post.starts_with("HTTP/1.1 405"));
        let addr = server.addr();
        drop(server);
        assert!(TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_err());
    }
}
