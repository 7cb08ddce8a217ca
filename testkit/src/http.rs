//! A loopback HTTP/1.1 server for tests: fixed routes (a body, or a
//! redirect), on `127.0.0.1` and a free port, one connection at a time,
//! each closed after its response. Plain HTTP, or any stream the test
//! wraps the connection in (TLS with a certificate the test made), so this
//! crate needs no TLS library of its own.
//!
//! It is the one server the tests use. The showcase keeps its own
//! (`toolprism_examples::http_server`) because that one is part of the
//! showcase, not of its tests: `cargo run` fetches from it, and the
//! showcase's readers see it as the code it is. A test that needs a server
//! takes this one, so no test depends on the showcase's code and the
//! showcase can change its server for what it shows without moving a test.
//!
//! ```
//! use std::io::{Read, Write};
//! use toolprism_testkit::http::Routes;
//!
//! let server = Routes::new()
//!     .route("/hello", 200, "text/plain", "hi")
//!     .redirect("/old", 302, "/hello")
//!     .http();
//! let mut tcp = std::net::TcpStream::connect(server.addr()).unwrap();
//! tcp.write_all(b"GET /old?x=1 HTTP/1.1\r\nHost: test\r\n\r\n").unwrap();
//! let mut answer = String::new();
//! tcp.read_to_string(&mut answer).unwrap();
//! assert!(answer.starts_with("HTTP/1.1 302 Found\r\n"));
//! assert!(answer.contains("\r\nLocation: /hello\r\n"));
//! assert_eq!(server.requests(), ["/old?x=1"]);
//! assert_eq!(server.url("/hello"), format!("http://{}/hello", server.addr()));
//! ```

use std::collections::HashMap;
use std::fmt;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

/// A connection as the server reads and writes it: the TCP stream itself,
/// or a wrapper around it (`rustls::StreamOwned`).
pub trait Stream: Read + Write + Send {}
impl<T: Read + Write + Send> Stream for T {}

/// What a route answers.
#[derive(Debug, Clone)]
struct Response {
    status: u16,
    headers: Vec<(&'static str, String)>,
    body: Vec<u8>,
}

/// The routes of a [`Server`], by path (the query is not part of it);
/// every other path is a 404.
#[derive(Debug, Clone, Default)]
pub struct Routes(HashMap<String, Response>);

impl Routes {
    /// No routes yet.
    pub fn new() -> Self {
        Routes::default()
    }

    /// Answers `path` with `status`, this `Content-Type` and `body`.
    pub fn route(
        mut self,
        path: &str,
        status: u16,
        content_type: &str,
        body: impl Into<Vec<u8>>,
    ) -> Self {
        let response = Response {
            status,
            headers: vec![("Content-Type", content_type.to_owned())],
            body: body.into(),
        };
        self.0.insert(path.to_owned(), response);
        self
    }

    /// Answers `path` with a redirect: `status` (301, 302, 303, 307, 308)
    /// and `Location: location`, sent as given (relative, or any scheme).
    pub fn redirect(mut self, path: &str, status: u16, location: &str) -> Self {
        let response = Response {
            status,
            headers: vec![("Location", location.to_owned())],
            body: Vec::new(),
        };
        self.0.insert(path.to_owned(), response);
        self
    }

    /// Serves plain HTTP.
    pub fn http(self) -> Server {
        self.serve_over("http", |tcp| Ok(Box::new(tcp)))
    }

    /// Serves each connection through `wrap`, under `scheme` in
    /// [`Server::url`]: for TLS, `wrap` makes the server side of the
    /// handshake. A connection `wrap` fails on (a client that refused the
    /// certificate) ends alone; the server goes on.
    pub fn serve_over(
        self,
        scheme: &'static str,
        wrap: impl Fn(TcpStream) -> io::Result<Box<dyn Stream>> + Send + 'static,
    ) -> Server {
        let listener = TcpListener::bind(("127.0.0.1", 0)).expect("a free port on 127.0.0.1");
        let addr = listener.local_addr().expect("the bound address");
        let stop = Arc::new(AtomicBool::new(false));
        let requests = Arc::new(Mutex::new(Vec::new()));
        let (flag, seen) = (stop.clone(), requests.clone());
        let thread = std::thread::Builder::new()
            .name("testkit-http".into())
            .spawn(move || {
                for tcp in listener.incoming() {
                    if flag.load(Ordering::SeqCst) {
                        break;
                    }
                    let Ok(tcp) = tcp else { continue };
                    let _ = tcp.set_read_timeout(Some(Duration::from_secs(5)));
                    let _ = tcp.set_write_timeout(Some(Duration::from_secs(5)));
                    // A broken client only ends its own connection.
                    if let Ok(stream) = wrap(tcp) {
                        let _ = serve(stream, &self.0, &seen);
                    }
                }
            })
            .expect("a thread for the server");
        Server {
            addr,
            scheme,
            stop,
            requests,
            thread: Some(thread),
        }
    }
}

/// A running server; stopped (its port closed) when dropped.
pub struct Server {
    addr: SocketAddr,
    scheme: &'static str,
    stop: Arc<AtomicBool>,
    requests: Arc<Mutex<Vec<String>>>,
    thread: Option<JoinHandle<()>>,
}

impl fmt::Debug for Server {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Server")
            .field("addr", &self.addr)
            .field("scheme", &self.scheme)
            .finish_non_exhaustive()
    }
}

impl Server {
    /// The bound address, `127.0.0.1:<port>`.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `<scheme>://127.0.0.1:<port><path>`.
    pub fn url(&self, path: &str) -> String {
        format!("{}://{}{path}", self.scheme, self.addr)
    }

    /// The target of every request served so far (path and query), in
    /// order.
    pub fn requests(&self) -> Vec<String> {
        self.requests
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
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
        303 => "See Other",
        307 => "Temporary Redirect",
        308 => "Permanent Redirect",
        404 => "Not Found",
        500 => "Internal Server Error",
        _ => "Status",
    }
}

fn serve(
    stream: Box<dyn Stream>,
    routes: &HashMap<String, Response>,
    requests: &Mutex<Vec<String>>,
) -> io::Result<()> {
    let mut reader = BufReader::new(stream);
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
    let target = request_line.split_whitespace().nth(1).unwrap_or("");
    requests
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .push(target.to_owned());
    let path = target.split('?').next().unwrap_or("");
    let not_found = Response {
        status: 404,
        headers: vec![("Content-Type", "text/plain".to_owned())],
        body: b"no such route".to_vec(),
    };
    let response = routes.get(path).unwrap_or(&not_found);
    let mut out = reader.into_inner();
    write!(
        out,
        "HTTP/1.1 {} {}\r\n",
        response.status,
        reason(response.status)
    )?;
    for (name, value) in &response.headers {
        write!(out, "{name}: {value}\r\n")?;
    }
    write!(
        out,
        "Content-Length: {}\r\nConnection: close\r\n\r\n",
        response.body.len()
    )?;
    out.write_all(&response.body)?;
    out.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ask(server: &Server, raw: &str) -> String {
        let mut tcp = TcpStream::connect(server.addr()).unwrap();
        tcp.write_all(raw.as_bytes()).unwrap();
        let mut out = String::new();
        tcp.read_to_string(&mut out).unwrap();
        out
    }

    #[test]
    fn serves_routes_redirects_and_404s_then_stops() {
        let server = Routes::new()
            .route("/a", 200, "text/plain", "hello")
            .redirect("/to-file", 302, "file:///etc/passwd")
            .http();
        let ok = ask(&server, "GET /a?x=1 HTTP/1.1\r\nHost: x\r\n\r\n");
        assert!(ok.starts_with("HTTP/1.1 200 OK\r\n"), "{ok}");
        assert!(ok.contains("\r\nContent-Type: text/plain\r\n"), "{ok}");
        assert!(ok.ends_with("\r\n\r\nhello"), "{ok}");
        let moved = ask(&server, "GET /to-file HTTP/1.1\r\n\r\n");
        assert!(moved.starts_with("HTTP/1.1 302 Found\r\n"), "{moved}");
        assert!(
            moved.contains("\r\nLocation: file:///etc/passwd\r\n"),
            "{moved}"
        );
        assert!(moved.ends_with("Content-Length: 0\r\nConnection: close\r\n\r\n"));
        let missing = ask(&server, "GET /b HTTP/1.1\r\n\r\n");
        assert!(
            missing.starts_with("HTTP/1.1 404 Not Found\r\n"),
            "{missing}"
        );
        assert_eq!(server.requests(), ["/a?x=1", "/to-file", "/b"]);
        let addr = server.addr();
        drop(server);
        assert!(TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_err());
    }

    #[test]
    fn a_wrapped_stream_carries_the_connection() {
        // A wrapper that counts the bytes it writes: the response goes
        // through it, and the scheme is the one given.
        struct Counting(TcpStream, Arc<Mutex<usize>>);
        impl Read for Counting {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                self.0.read(buf)
            }
        }
        impl Write for Counting {
            fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
                let n = self.0.write(buf)?;
                *self.1.lock().unwrap() += n;
                Ok(n)
            }
            fn flush(&mut self) -> io::Result<()> {
                self.0.flush()
            }
        }
        let written = Arc::new(Mutex::new(0));
        let counter = written.clone();
        let server = Routes::new()
            .route("/", 200, "text/plain", "wrapped")
            .serve_over("wrapped", move |tcp| {
                Ok(Box::new(Counting(tcp, counter.clone())))
            });
        assert!(server.url("/x").starts_with("wrapped://127.0.0.1:"));
        let answer = ask(&server, "GET / HTTP/1.1\r\n\r\n");
        assert!(answer.ends_with("wrapped"), "{answer}");
        assert_eq!(*written.lock().unwrap(), answer.len());
    }
}
