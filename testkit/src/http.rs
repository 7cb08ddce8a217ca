//! A loopback HTTP/1.1 server for tests: fixed routes (a body, or a
//! redirect), on `127.0.0.1` and a free port, one connection at a time,
//! each closed after its response. Plain HTTP, or any stream the test
//! wraps the connection in (TLS with a certificate the test made), so this
//! crate needs no TLS library of its own. HTTP itself is hyper's (its
//! HTTP/1 server, the one the MCP server is built on).
//!
//! A connection is a blocking stream ([`Stream`]: a test's TLS wrapper is
//! rustls' blocking `StreamOwned`), so hyper is given it as I/O whose
//! every read and write completes in place, on the server's own thread:
//! that thread serves nothing else, and hyper is told not to read ahead
//! for the client's end of the connection while it answers (`half_close`),
//! so nothing waits on a read no client will send.
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
use std::convert::Infallible;
use std::fmt;
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::thread::JoinHandle;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::header::{CONTENT_TYPE, HeaderName, HeaderValue, LOCATION};
use hyper::rt::ReadBufCursor;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, StatusCode};

/// A connection as the server reads and writes it: the TCP stream itself,
/// or a wrapper around it (`rustls::StreamOwned`).
pub trait Stream: Read + Write + Send {}
impl<T: Read + Write + Send> Stream for T {}

/// What a route answers.
#[derive(Debug, Clone)]
struct Response {
    status: StatusCode,
    headers: Vec<(HeaderName, HeaderValue)>,
    body: Bytes,
}

impl Response {
    /// `status` with one header and `body`; panics on a status outside
    /// 100–999 or a header value that is not one (a test's own mistake).
    fn new(status: u16, header: HeaderName, value: &str, body: Vec<u8>) -> Response {
        Response {
            status: StatusCode::from_u16(status).expect("an HTTP status from 100 to 999"),
            headers: vec![(
                header,
                HeaderValue::from_str(value).expect("a valid header value"),
            )],
            body: Bytes::from(body),
        }
    }

    /// The response to send: hyper adds `Connection: close` and the
    /// body's `Content-Length`.
    fn to_http(&self) -> hyper::Response<Full<Bytes>> {
        let mut response = hyper::Response::new(Full::new(self.body.clone()));
        *response.status_mut() = self.status;
        let headers = response.headers_mut();
        for (name, value) in &self.headers {
            headers.insert(name.clone(), value.clone());
        }
        response
    }
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
    ///
    /// # Panics
    ///
    /// On a status outside 100–999, or a content type that is no header
    /// value.
    pub fn route(
        mut self,
        path: &str,
        status: u16,
        content_type: &str,
        body: impl Into<Vec<u8>>,
    ) -> Self {
        let response = Response::new(status, CONTENT_TYPE, content_type, body.into());
        self.0.insert(path.to_owned(), response);
        self
    }

    /// Answers `path` with a redirect: `status` (301, 302, 303, 307, 308)
    /// and `Location: location`, sent as given (relative, or any scheme).
    ///
    /// # Panics
    ///
    /// On a status outside 100–999, or a location that is no header value.
    pub fn redirect(mut self, path: &str, status: u16, location: &str) -> Self {
        let response = Response::new(status, LOCATION, location, Vec::new());
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
        // hyper's connection is a future: this runtime drives it, on the
        // server's thread (no I/O driver: the stream is blocking).
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("a runtime for the server");
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
                        let _ = runtime.block_on(serve(stream, &self.0, &seen));
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

/// One connection: one request, its route's response (or a 404), then the
/// connection closes.
async fn serve(
    stream: Box<dyn Stream>,
    routes: &HashMap<String, Response>,
    requests: &Mutex<Vec<String>>,
) -> hyper::Result<()> {
    let not_found = Response::new(404, CONTENT_TYPE, "text/plain", b"no such route".to_vec());
    let answer = |request: Request<Incoming>| {
        requests
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(request.uri().to_string());
        let response = routes.get(request.uri().path()).unwrap_or(&not_found);
        std::future::ready(Ok::<_, Infallible>(response.to_http()))
    };
    http1::Builder::new()
        .keep_alive(false)
        .half_close(true)
        // `Content-Type`, as tests read it back, not `content-type`.
        .title_case_headers(true)
        .auto_date_header(false)
        .serve_connection(Blocking(stream), service_fn(answer))
        .await
}

/// A blocking stream as hyper's I/O: each read and write is done in place
/// and is always ready (see the module's docs).
struct Blocking(Box<dyn Stream>);

impl hyper::rt::Read for Blocking {
    fn poll_read(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
        mut buf: ReadBufCursor<'_>,
    ) -> Poll<io::Result<()>> {
        let mut chunk = [0u8; 8192];
        let room = buf.remaining().min(chunk.len());
        let read = self.0.read(&mut chunk[..room]);
        Poll::Ready(read.map(|n| buf.put_slice(&chunk[..n])))
    }
}

impl hyper::rt::Write for Blocking {
    fn poll_write(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        Poll::Ready(self.0.write(data))
    }

    fn poll_flush(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(self.0.flush())
    }

    /// Flushes: the connection closes when the stream is dropped, right
    /// after.
    fn poll_shutdown(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(self.0.flush())
    }
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
        // No body: each header once, then the blank line (hyper writes
        // `Content-Length` last).
        for header in ["Connection: close", "Content-Length: 0"] {
            assert_eq!(moved.matches(header).count(), 1, "{moved:?}");
        }
        assert!(moved.ends_with("Content-Length: 0\r\n\r\n"), "{moved:?}");
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
    fn slow_half_closed_and_broken_clients_are_each_answered_alone() {
        let server = Routes::new().route("/a", 200, "text/plain", "hi").http();
        // A request in two writes, 100 ms apart.
        let mut tcp = TcpStream::connect(server.addr()).unwrap();
        tcp.write_all(b"GET /a HTTP/1.1\r\nHo").unwrap();
        std::thread::sleep(Duration::from_millis(100));
        tcp.write_all(b"st: x\r\n\r\n").unwrap();
        let mut out = String::new();
        tcp.read_to_string(&mut out).unwrap();
        assert!(
            out.starts_with("HTTP/1.1 200 OK\r\n") && out.ends_with("hi"),
            "{out}"
        );
        // A client that closes its side once it has asked.
        let mut tcp = TcpStream::connect(server.addr()).unwrap();
        tcp.write_all(b"GET /a HTTP/1.0\r\n\r\n").unwrap();
        tcp.shutdown(std::net::Shutdown::Write).unwrap();
        let mut out = String::new();
        tcp.read_to_string(&mut out).unwrap();
        assert!(
            out.starts_with("HTTP/1.0 200 OK\r\n") && out.ends_with("hi"),
            "{out}"
        );
        // One that says nothing, then one that sends no HTTP.
        drop(TcpStream::connect(server.addr()).unwrap());
        let garbage = ask(&server, "\u{1}\u{2} not http\r\n\r\n");
        assert!(
            garbage.starts_with("HTTP/1.1 400 Bad Request\r\n"),
            "{garbage:?}"
        );
        // The server goes on; only the requests it could read are listed.
        assert!(ask(&server, "GET /a HTTP/1.1\r\n\r\n").ends_with("hi"));
        assert_eq!(server.requests(), ["/a", "/a", "/a"]);
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
