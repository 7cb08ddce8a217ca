//! Streamable HTTP: rmcp's service for an [`McpServer`] behind the
//! authentication and the limits (W3 in `docs/contract.md`) and the body
//! reader that keeps a call's arguments as sent, and a small hyper loop
//! that serves it at `/mcp` on a listener.

use std::convert::Infallible;
use std::fmt;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::{Body, Incoming};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use rmcp::transport::StreamableHttpService;
use rmcp::transport::streamable_http_server::StreamableHttpServerConfig;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use tokio::net::TcpListener;

use super::McpServer;
use crate::auth::PROTECTED_RESOURCE_PATH;
use crate::limits::Gate;
use crate::sent::{Sent, locate, with_placeholder};

/// The path [`McpServer::serve_http`] serves MCP at.
pub const MCP_PATH: &str = "/mcp";

/// The response of an [`HttpService`].
pub type HttpResponse = Response<BoxBody<Bytes, Infallible>>;

/// The Streamable HTTP service of an [`McpServer`]: a tower service, so any
/// HTTP server mounts it (for example axum's `Router::nest_service("/mcp",
/// service)`).
///
/// For each request, in this order:
///
/// 1. a request for the protected-resource metadata (a path starting with
///    [`PROTECTED_RESOURCE_PATH`](crate::PROTECTED_RESOURCE_PATH)) is
///    answered with it, when the server [authenticates](McpServer::with_auth)
///    (else `404`); mount the service there too;
/// 2. the request takes one of the [request slots](McpServer::with_max_requests)
///    (`503` when none is free);
/// 3. when the server authenticates, its bearer token is verified (`401`
///    or `403` with the challenge: see the [module docs](crate#authentication));
/// 4. its body is read, up to the server's [message
///    limit](McpServer::with_max_message_bytes) (a larger one is `413`),
///    before rmcp parses it, so that a `tools/call`'s arguments reach the
///    registry as the client wrote them, under the same lossless rules as
///    [`Registry::call`](toolprism_core::Registry::call) (a key written
///    twice, `-0.0`, depth);
/// 5. the [session limits](McpServer::with_max_sessions) apply (`503` for
///    one session too many, `429` for one call too many in a session);
/// 6. rmcp's own service answers.
///
/// What it does **not** check is where it listens: it cannot know the
/// address it is mounted on, so a server without an authenticator serves
/// whoever reaches that address. Call
/// [`McpServer::check_address`] with your listener's address, as
/// [`McpServer::serve_http`] does. Nor does it bound connections: your
/// HTTP server's own timeouts and limits do.
#[derive(Clone)]
pub struct HttpService {
    rmcp: StreamableHttpService<McpServer, LocalSessionManager>,
    max_message_bytes: usize,
    gate: Arc<Gate>,
}

impl fmt::Debug for HttpService {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpService")
            .field("max_message_bytes", &self.max_message_bytes)
            .field("gate", &self.gate)
            .finish_non_exhaustive()
    }
}

impl<B> tower_service::Service<Request<B>> for HttpService
where
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: fmt::Display + Send + Sync + std::error::Error + 'static,
{
    type Response = HttpResponse;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<HttpResponse, Infallible>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        let mut rmcp = self.rmcp.clone();
        let gate = Arc::clone(&self.gate);
        let limit = self.max_message_bytes;
        Box::pin(async move {
            gate.start_reaper();
            let (mut parts, body) = request.into_parts();
            if is_metadata_path(parts.uri.path()) {
                return Ok(match gate.auth() {
                    Some(auth) => auth.metadata_response(&parts),
                    None => not_found(),
                });
            }
            let slot = match gate.slot() {
                Ok(slot) => slot,
                Err(refused) => return Ok(*refused),
            };
            let caller = match gate.auth() {
                None => None,
                Some(auth) => match auth.authenticate(&parts).await {
                    Ok(caller) => Some(caller),
                    Err(refused) => return Ok(*refused),
                },
            };
            let bytes = match Limited::new(body, limit).collect().await {
                Ok(collected) => collected.to_bytes(),
                Err(e) if e.is::<http_body_util::LengthLimitError>() => {
                    return Ok(plain(
                        StatusCode::PAYLOAD_TOO_LARGE,
                        format!(
                            "the request body is over this server's limit of {limit} bytes; send a smaller one\n"
                        ),
                    ));
                }
                Err(e) => {
                    return Ok(plain(
                        StatusCode::BAD_REQUEST,
                        format!("the request body could not be read: {e}\n"),
                    ));
                }
            };
            let mut admission = match gate.admit(&parts, &bytes, caller.as_ref()).await {
                Ok(admission) => admission,
                Err(refused) => return Ok(*refused),
            };
            if let Some(caller) = caller {
                // For the handler: the call is made on the caller's behalf.
                parts.extensions.insert(caller);
            }
            let hold = admission.hold(slot, &mut parts.extensions);
            let body = keep_arguments(&mut parts.extensions, bytes);
            let response = tower_service::Service::call(
                &mut rmcp,
                Request::from_parts(parts, Full::new(body)),
            )
            .await?;
            Ok(admission.finish(&gate, response, hold).await)
        })
    }
}

/// A `tools/call` body's arguments as sent, put in the request's
/// extensions; the body rmcp reads: as sent, or with `{}` in place of
/// arguments that are what stops it from parsing.
fn keep_arguments(extensions: &mut http::Extensions, bytes: Bytes) -> Bytes {
    let Some((text, located)) = std::str::from_utf8(&bytes)
        .ok()
        .and_then(|text| Some((text, locate(text)?)))
    else {
        return bytes;
    };
    let arguments = &text[located.arguments.clone()];
    extensions.insert(Sent(arguments.into()));
    // What rmcp's parser would refuse in them (a depth past its limit, a
    // number no `f64` holds) would fail the whole message.
    if serde_json::from_str::<serde_json::Value>(arguments).is_ok() {
        return bytes;
    }
    Bytes::from(with_placeholder(text, located.arguments))
}

fn plain(status: StatusCode, text: String) -> HttpResponse {
    let mut response = Response::new(Full::new(Bytes::from(text)).boxed());
    *response.status_mut() = status;
    response
}

impl McpServer {
    /// The Streamable HTTP service of this server, with rmcp's `config`
    /// (sessions or stateless, allowed hosts and origins, SSE keep-alive);
    /// the server's [message limit](McpServer::with_max_message_bytes)
    /// replaces `config.max_request_body_bytes`, and the server's [idle
    /// timeout](McpServer::with_session_idle_timeout) replaces rmcp's
    /// session keep-alive. See [`HttpService`] for what it checks, and
    /// what it cannot (the address it listens on).
    ///
    /// Each legacy session (and, in stateless mode, each request) gets its
    /// own session tag for call ids; requests carrying `Mcp-Session-Id` use
    /// it instead.
    pub fn http_service(&self, mut config: StreamableHttpServerConfig) -> HttpService {
        config.max_request_body_bytes = self.max_message_bytes();
        // W16: with a shared store, a legacy session opened on another
        // replica is restored here (rmcp's session store).
        let store = self.replica.shared().then(|| self.replica.store.clone());
        if let Some(store) = &store
            && config.legacy_session_mode
            && config.session_store.is_none()
        {
            config.session_store = Some(Arc::new(crate::store::Sessions {
                store: store.clone(),
                ttl: self.http.session_idle_timeout(),
            }));
        }
        let manager = Arc::new(Gate::session_manager());
        let gate = Arc::new(Gate::new(
            self.http.clone(),
            config.legacy_session_mode,
            Arc::clone(&manager),
            config.cancellation_token.clone(),
            store,
        ));
        let server = self.clone();
        HttpService {
            rmcp: StreamableHttpService::new(move || Ok(server.for_new_session()), manager, config),
            max_message_bytes: self.max_message_bytes(),
            gate,
        }
    }

    /// Serves MCP over Streamable HTTP at [`/mcp`](MCP_PATH) on `listener`,
    /// and the protected-resource metadata under
    /// [`PROTECTED_RESOURCE_PATH`](crate::PROTECTED_RESOURCE_PATH) (other
    /// paths answer 404), HTTP/1.1, until `config.cancellation_token` is
    /// cancelled. A connection that fails only ends that connection;
    /// failing to accept one is retried after a short pause; one that sends
    /// no request head for 30 s is closed.
    ///
    /// Refused at once, before any connection is accepted, when the
    /// listener's address is not loopback and the server has no
    /// authenticator ([`check_address`](Self::check_address)); with
    /// [`allow_unauthenticated_network`](Self::allow_unauthenticated_network)
    /// it serves, after a warning on stderr.
    pub async fn serve_http(
        self,
        listener: TcpListener,
        config: StreamableHttpServerConfig,
    ) -> io::Result<()> {
        let addr = listener.local_addr()?;
        self.check_address(addr)?;
        if let Some(warning) = self.exposure_warning(addr) {
            eprintln!("{warning}");
        }
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
                        let path = request.uri().path();
                        if path != MCP_PATH && !is_metadata_path(path) {
                            return Ok::<_, Infallible>(not_found());
                        }
                        tower_service::Service::call(&mut service, request).await
                    }
                });
                // A timer, so that hyper closes a connection that sends no
                // request head for 30 s (its default), idle ones included.
                let connection = http1::Builder::new()
                    .timer(TokioTimer::new())
                    .serve_connection(TokioIo::new(stream), route);
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

/// Whether `path` asks for the protected-resource metadata: the
/// well-known path itself, or it with a resource's path appended.
fn is_metadata_path(path: &str) -> bool {
    path.strip_prefix(PROTECTED_RESOURCE_PATH)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
}

fn not_found() -> HttpResponse {
    plain(
        StatusCode::NOT_FOUND,
        "Not Found: MCP is served at /mcp\n".to_owned(),
    )
}
