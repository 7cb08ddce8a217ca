//! Streamable HTTP: rmcp's service for an [`McpServer`], and a small hyper
//! loop that serves it at `/mcp` on a listener.

use std::convert::Infallible;
use std::io;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::BodyExt;
use http_body_util::combinators::BoxBody;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use rmcp::transport::StreamableHttpService;
use rmcp::transport::streamable_http_server::StreamableHttpServerConfig;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use tokio::net::TcpListener;

use super::McpServer;

/// The path [`McpServer::serve_http`] serves MCP at.
pub const MCP_PATH: &str = "/mcp";

/// The Streamable HTTP service of an [`McpServer`]: a tower service, so any
/// HTTP server mounts it (for example axum's `Router::nest_service("/mcp",
/// service)`).
pub type HttpService = StreamableHttpService<McpServer, LocalSessionManager>;

impl McpServer {
    /// The Streamable HTTP service of this server, with rmcp's `config`
    /// (sessions or stateless, allowed hosts and origins, keep-alive); the
    /// server's [message limit](McpServer::with_max_message_bytes) replaces
    /// `config.max_request_body_bytes`.
    ///
    /// Each legacy session (and, in stateless mode, each request) gets its
    /// own session tag for call ids; requests carrying `Mcp-Session-Id` use
    /// it instead.
    pub fn http_service(&self, mut config: StreamableHttpServerConfig) -> HttpService {
        config.max_request_body_bytes = self.max_message_bytes();
        let server = self.clone();
        StreamableHttpService::new(
            move || Ok(server.for_new_session()),
            Arc::new(LocalSessionManager::default()),
            config,
        )
    }

    /// Serves MCP over Streamable HTTP at [`/mcp`](MCP_PATH) on `listener`
    /// (other paths answer 404), HTTP/1.1, until `config.cancellation_token`
    /// is cancelled. A connection that fails only ends that connection;
    /// failing to accept one is retried after a short pause.
    pub async fn serve_http(
        self,
        listener: TcpListener,
        config: StreamableHttpServerConfig,
    ) -> io::Result<()> {
        let stop = config.cancellation_token.clone();
        let service = self.http_service(config);
        loop {
            let stream = tokio::select! {
                accepted = listener.accept() => match accepted {
                    Ok((stream, _)) => stream,
                    Err(_) => {
                        // Out of file descriptors, or a connection reset
                        // before it was accepted: try again shortly.
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                },
                () = stop.cancelled() => return Ok(()),
            };
            let _ = stream.set_nodelay(true);
            let service = service.clone();
            let stop = stop.clone();
            tokio::spawn(async move {
                let route = service_fn(move |request: Request<Incoming>| {
                    let mut service = service.clone();
                    async move {
                        if request.uri().path() != MCP_PATH {
                            return Ok::<_, Infallible>(not_found());
                        }
                        tower_service::Service::call(&mut service, request).await
                    }
                });
                let connection =
                    http1::Builder::new().serve_connection(TokioIo::new(stream), route);
                let mut connection = std::pin::pin!(connection);
                tokio::select! {
                    _ = connection.as_mut() => {}
                    () = stop.cancelled() => {
                        connection.as_mut().graceful_shutdown();
                        let _ = connection.await;
                    }
                }
            });
        }
    }
}

fn not_found() -> Response<BoxBody<Bytes, Infallible>> {
    let body = http_body_util::Full::new(Bytes::from_static(b"Not Found: MCP is served at /mcp\n"));
    let mut response = Response::new(body.boxed());
    *response.status_mut() = StatusCode::NOT_FOUND;
    response
}
