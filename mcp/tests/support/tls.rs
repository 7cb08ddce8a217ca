//! An MCP server over HTTPS on 127.0.0.1 for tests: a certificate
//! authority the test makes (rcgen), a certificate for `127.0.0.1` and
//! `localhost` it signs, and toolprism's Streamable HTTP service behind
//! rustls (tokio-rustls) and hyper, on a thread and runtime of its own,
//! stopped on drop. Shared by the mcp crate's tests and the command
//! line's (`#[path]`).

#![allow(dead_code)]

use std::convert::Infallible;
use std::sync::Arc;

use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use toolprism::mcp::{McpServer, StreamableHttpServerConfig};

/// A certificate authority made for one test, and a server certificate
/// it signed for `127.0.0.1` and `localhost`.
pub(crate) struct Authority {
    /// The CA's certificate, PEM: what a client trusts.
    pub(crate) ca_pem: String,
    leaf: CertificateDer<'static>,
    key: Vec<u8>,
}

impl Authority {
    pub(crate) fn new() -> Authority {
        let mut ca = CertificateParams::new(Vec::<String>::new()).unwrap();
        ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca.distinguished_name
            .push(DnType::CommonName, "toolprism test CA");
        let ca_key = KeyPair::generate().unwrap();
        let ca_cert = ca.self_signed(&ca_key).unwrap();
        let issuer = Issuer::new(ca, ca_key);
        let leaf =
            CertificateParams::new(vec!["127.0.0.1".to_owned(), "localhost".to_owned()]).unwrap();
        let leaf_key = KeyPair::generate().unwrap();
        let leaf = leaf.signed_by(&leaf_key, &issuer).unwrap();
        Authority {
            ca_pem: ca_cert.pem(),
            leaf: leaf.der().clone(),
            key: leaf_key.serialize_der(),
        }
    }

    /// The CA's PEM in a file under `dir`.
    pub(crate) fn ca_file(&self, dir: &std::path::Path) -> std::path::PathBuf {
        let path = dir.join("test-ca.pem");
        std::fs::write(&path, &self.ca_pem).unwrap();
        path
    }
}

/// `server` over HTTPS on 127.0.0.1 with `authority`'s certificate.
pub(crate) struct TlsServer {
    /// `https://127.0.0.1:PORT/mcp`.
    pub(crate) url: String,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl TlsServer {
    #[allow(deprecated)] // ring, as the library's own TLS (see src/import/http.rs)
    pub(crate) fn start(server: McpServer, authority: &Authority) -> TlsServer {
        let config = rustls::ServerConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(
            vec![authority.leaf.clone()],
            PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(authority.key.clone())),
        )
        .unwrap();
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let url = format!("https://{}/mcp", listener.local_addr().unwrap());
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .unwrap();
            runtime.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(listener).unwrap();
                let service = server.http_service(
                    StreamableHttpServerConfig::default()
                        .with_allowed_hosts(["127.0.0.1", "localhost"]),
                );
                let accepting = async {
                    loop {
                        let Ok((stream, _)) = listener.accept().await else {
                            continue;
                        };
                        let acceptor = acceptor.clone();
                        let service = service.clone();
                        tokio::spawn(async move {
                            // A client that refuses the certificate ends here.
                            let Ok(stream) = acceptor.accept(stream).await else {
                                return;
                            };
                            let route = service_fn(move |request: hyper::Request<Incoming>| {
                                let mut service = service.clone();
                                async move {
                                    Ok::<_, Infallible>(
                                        tower_service::Service::call(&mut service, request)
                                            .await
                                            .unwrap_or_else(|e| match e {}),
                                    )
                                }
                            });
                            let _ = http1::Builder::new()
                                .serve_connection(TokioIo::new(stream), route)
                                .await;
                        });
                    }
                };
                tokio::select! {
                    () = accepting => {}
                    _ = stopped => {}
                }
            });
        });
        TlsServer {
            url,
            stop: Some(stop),
            thread: Some(thread),
        }
    }
}

impl Drop for TlsServer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
