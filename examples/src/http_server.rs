//! A tiny HTTP/1.1 server on 127.0.0.1 for the showcase: fixed routes,
//! `GET` and `HEAD` only, one connection at a time, closed after each
//! response. It exists so `web_fetch` is shown against a real socket
//! without any network. HTTP is hyper's (its HTTP/1 server on tokio, as
//! `toolprism::mcp` serves Streamable HTTP); this file holds the routes.
//!
//! It is part of the showcase, not of its tests: `cargo run` serves the
//! article and the status the `web_fetch` scenarios fetch from it, and a
//! reader of the showcase sees it as the code it is. Tests that need a
//! server of their own use `toolprism_testkit::http` instead, so no test
//! depends on what the showcase chooses to serve (the end-to-end tests
//! check this server only through the showcase that uses it).

use std::collections::HashMap;
use std::convert::Infallible;
use std::io;
use std::net::{SocketAddr, TcpListener};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::header::{CONTENT_TYPE, HeaderValue};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::sync::Notify;

/// How long one connection may take, from its accept to its last byte.
const CONNECTION_TIMEOUT: Duration = Duration::from_secs(5);

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

impl Response {
    /// The response as hyper sends it (it adds `Content-Length` and
    /// `Connection: close`, and leaves the body out for `HEAD`).
    fn to_http(&self) -> hyper::Response<Full<Bytes>> {
        let mut response = hyper::Response::new(Full::new(Bytes::from(self.body.clone())));
        *response.status_mut() =
            StatusCode::from_u16(self.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        if let Ok(content_type) = HeaderValue::from_str(&self.content_type) {
            response.headers_mut().insert(CONTENT_TYPE, content_type);
        }
        response
    }
}

/// A running server; stopped when dropped.
#[derive(Debug)]
pub struct Server {
    addr: SocketAddr,
    stop: Arc<Notify>,
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

    /// Binds 127.0.0.1 on a free port and serves in a thread of its own
    /// (a single-threaded tokio runtime).
    pub fn start(self) -> io::Result<Server> {
        let listener = TcpListener::bind(("127.0.0.1", 0))?;
        let addr = listener.local_addr()?;
        listener.set_nonblocking(true)?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .enable_time()
            .build()?;
        let stop = Arc::new(Notify::new());
        let served = Arc::new(AtomicUsize::new(0));
        let (stop2, served2) = (stop.clone(), served.clone());
        let routes = Arc::new(self.routes);
        let thread = std::thread::Builder::new()
            .name("toolprism-http".into())
            .spawn(move || {
                runtime.block_on(async move {
                    let Ok(listener) = tokio::net::TcpListener::from_std(listener) else {
                        return;
                    };
                    loop {
                        let tcp = tokio::select! {
                            accepted = listener.accept() => accepted,
                            () = stop2.notified() => break,
                        };
                        if let Ok((tcp, _)) = tcp {
                            // A broken or stuck client only ends its own
                            // connection.
                            let _ =
                                tokio::time::timeout(CONNECTION_TIMEOUT, serve(tcp, &routes)).await;
                            served2.fetch_add(1, Ordering::SeqCst);
                        }
                    }
                });
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
        // Stops the accept loop (at once, or after the connection it is
        // serving); the port closes with the listener.
        self.stop.notify_one();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// One connection: one request, answered from `routes`, then closed.
async fn serve(
    tcp: tokio::net::TcpStream,
    routes: &HashMap<String, Response>,
) -> hyper::Result<()> {
    let answer = |request: Request<Incoming>| {
        let path = request.uri().path();
        let response = match *request.method() {
            Method::GET | Method::HEAD => match routes.get(path) {
                Some(response) => response.clone(),
                None => Response {
                    status: 404,
                    content_type: "text/plain; charset=utf-8".into(),
                    body: format!("no route for {path}\n").into_bytes(),
                },
            },
            _ => Response {
                status: 405,
                content_type: "text/plain; charset=utf-8".into(),
                body: b"only GET and HEAD\n".to_vec(),
            },
        };
        std::future::ready(Ok::<_, Infallible>(response.to_http()))
    };
    http1::Builder::new()
        .keep_alive(false)
        .serve_connection(TokioIo::new(tcp), service_fn(answer))
        .await
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::net::TcpStream;

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
        // HEAD: the headers a GET has, no body.
        let head = get(&server, "HEAD /a HTTP/1.1\r\n\r\n");
        assert!(head.starts_with("HTTP/1.1 200 OK\r\n"), "{head}");
        assert!(head.contains("content-length: 5\r\n"), "{head}");
        assert!(head.ends_with("\r\n\r\n"), "{head}");
        // Counted once the connection is closed, a moment after the
        // client read its end.
        let counted = std::time::Instant::now() + Duration::from_secs(5);
        while server.served() < 4 && std::time::Instant::now() < counted {
            std::thread::sleep(Duration::from_millis(10));
        }
        assert_eq!(server.served(), 4);
        let addr = server.addr();
        drop(server);
        assert!(TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_err());
    }
}
