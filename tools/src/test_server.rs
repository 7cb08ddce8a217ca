//! A small HTTP/1.1 server on 127.0.0.1 for the `web_fetch` tests: fixed
//! routes, one connection at a time, closed after each response; plain, or
//! TLS with a certificate made by the test.

use std::collections::HashMap;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

/// A canned response: status, content type, body.
type Route = (u16, String, Vec<u8>);

/// A running server; stopped when dropped.
pub(crate) struct Server {
    addr: SocketAddr,
    scheme: &'static str,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

/// Routes for a [`Server`].
#[derive(Default)]
pub(crate) struct Routes(HashMap<String, Route>);

impl Routes {
    /// Serves `body` at `path`.
    pub(crate) fn route(
        mut self,
        path: &str,
        status: u16,
        kind: &str,
        body: impl Into<Vec<u8>>,
    ) -> Self {
        self.0
            .insert(path.to_owned(), (status, kind.to_owned(), body.into()));
        self
    }

    /// Plain HTTP.
    pub(crate) fn http(self) -> Server {
        Server::start("http", self, |tcp| Ok(Box::new(tcp)))
    }

    /// HTTPS with this certificate and PKCS#8 key (DER).
    #[cfg(feature = "https")]
    pub(crate) fn https(self, cert_der: Vec<u8>, key_der: Vec<u8>) -> Server {
        use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(
                vec![CertificateDer::from(cert_der)],
                PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key_der)),
            )
            .unwrap();
        let config = Arc::new(config);
        Server::start("https", self, move |tcp| {
            let tls = rustls::ServerConnection::new(config.clone()).map_err(io::Error::other)?;
            Ok(Box::new(rustls::StreamOwned::new(tls, tcp)))
        })
    }
}

trait Stream: Read + Write + Send {}
impl<T: Read + Write + Send> Stream for T {}

impl Server {
    fn start(
        scheme: &'static str,
        routes: Routes,
        wrap: impl Fn(TcpStream) -> io::Result<Box<dyn Stream>> + Send + 'static,
    ) -> Server {
        let listener = TcpListener::bind(("127.0.0.1", 0)).unwrap();
        let addr = listener.local_addr().unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::spawn(move || {
            for tcp in listener.incoming() {
                if flag.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(tcp) = tcp else { continue };
                let _ = tcp.set_read_timeout(Some(Duration::from_secs(5)));
                let _ = tcp.set_write_timeout(Some(Duration::from_secs(5)));
                // A client that gives up (a refused certificate) only ends
                // its own connection.
                if let Ok(stream) = wrap(tcp) {
                    let _ = serve(stream, &routes.0);
                }
            }
        });
        Server {
            addr,
            scheme,
            stop,
            thread: Some(thread),
        }
    }

    /// `<scheme>://127.0.0.1:<port><path>`.
    pub(crate) fn url(&self, path: &str) -> String {
        format!("{}://{}{path}", self.scheme, self.addr)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_secs(1));
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn serve(stream: Box<dyn Stream>, routes: &HashMap<String, Route>) -> io::Result<()> {
    let mut reader = BufReader::new(stream);
    let mut request_line = String::new();
    reader.read_line(&mut request_line)?;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 || line == "\r\n" || line == "\n" {
            break;
        }
    }
    let path = request_line.split_whitespace().nth(1).unwrap_or("");
    let not_found = (404, "text/plain".to_owned(), b"no such route".to_vec());
    let (status, kind, body) = routes.get(path).unwrap_or(&not_found);
    let mut out = reader.into_inner();
    write!(
        out,
        "HTTP/1.1 {status} X\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    )?;
    out.write_all(body)?;
    out.flush()
}
