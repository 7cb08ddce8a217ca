//! An OAuth 2.1 authorization server and an MCP server it protects, both
//! on 127.0.0.1, for the tests of toolprism's OAuth client: the
//! authorization server (metadata, dynamic registration, the
//! authorization endpoint that approves at once and redirects, the token
//! endpoint: codes, refresh tokens that rotate, and `invalid_grant` for a
//! revoked one) is written here on hyper; the MCP server is toolprism's,
//! with an authenticator that accepts the access tokens issued and not
//! expired. What the tests change: expire the access tokens, revoke the
//! refresh tokens. What they read: every token issued, and the grants.
//! Shared by the mcp crate's tests and the command line's (`#[path]`).

#![allow(dead_code)]

use std::collections::{HashMap, HashSet};
use std::convert::Infallible;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use toolprism::mcp::{Authenticator, BearerAuth, McpServer, Refusal, StreamableHttpServerConfig};
use toolprism::{Caller, Registry};

/// What the authorization server knows.
#[derive(Default)]
pub(crate) struct State {
    /// Access tokens the MCP server accepts.
    pub(crate) access: HashSet<String>,
    /// Refresh tokens: revoked or not.
    pub(crate) refresh: HashMap<String, bool>,
    /// Every token issued, access and refresh.
    pub(crate) issued: Vec<String>,
    /// The grant type of every token request.
    pub(crate) grants: Vec<String>,
    /// The `resource` of every authorization and token request.
    pub(crate) resources: Vec<String>,
    /// `expires_in` of the access tokens issued.
    pub(crate) expires_in: u64,
    codes: u64,
}

impl State {
    fn issue(&mut self) -> Value {
        let access = format!("at-{}", uuid::Uuid::new_v4().simple());
        let refresh = format!("rt-{}", uuid::Uuid::new_v4().simple());
        self.access.insert(access.clone());
        self.refresh.insert(refresh.clone(), false);
        self.issued.push(access.clone());
        self.issued.push(refresh.clone());
        json!({"access_token": access, "token_type": "Bearer", "expires_in": self.expires_in,
               "refresh_token": refresh, "scope": "tools"})
    }
}

/// The accepted access tokens, as the MCP server's authenticator.
struct Tokens(Arc<Mutex<State>>);

impl Authenticator for Tokens {
    async fn verify(&self, token: &str) -> Result<Caller, Refusal> {
        if self.0.lock().unwrap().access.contains(token) {
            Ok(Caller::new("someone"))
        } else {
            Err(Refusal::invalid_token("the token expired or was revoked"))
        }
    }
}

/// The two servers, stopped on drop.
pub(crate) struct OAuthServers {
    /// `http://127.0.0.1:PORT/mcp`: the protected MCP server.
    pub(crate) url: String,
    /// `http://127.0.0.1:PORT`: the authorization server.
    pub(crate) issuer: String,
    pub(crate) state: Arc<Mutex<State>>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl OAuthServers {
    /// `registry` behind an OAuth-protected MCP server.
    pub(crate) fn start(registry: Registry) -> OAuthServers {
        let state = Arc::new(Mutex::new(State {
            expires_in: 3600,
            ..State::default()
        }));
        let auth_listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let mcp_listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        auth_listener.set_nonblocking(true).unwrap();
        mcp_listener.set_nonblocking(true).unwrap();
        let issuer = format!("http://{}", auth_listener.local_addr().unwrap());
        let url = format!("http://{}/mcp", mcp_listener.local_addr().unwrap());
        let server = McpServer::new(registry).with_auth(
            BearerAuth::new(Tokens(state.clone()))
                .with_resource(url.clone())
                .unwrap()
                .with_authorization_servers([issuer.clone()])
                .with_scopes_supported(["tools"]),
        );
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let shared = state.clone();
        let base = issuer.clone();
        let thread = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .unwrap();
            runtime.block_on(async move {
                let mcp_listener = tokio::net::TcpListener::from_std(mcp_listener).unwrap();
                let auth_listener = tokio::net::TcpListener::from_std(auth_listener).unwrap();
                let serving = server.serve_http(
                    mcp_listener,
                    StreamableHttpServerConfig::default().with_allowed_hosts(["127.0.0.1"]),
                );
                let authorizing = async {
                    loop {
                        let Ok((stream, _)) = auth_listener.accept().await else {
                            continue;
                        };
                        let state = shared.clone();
                        let base = base.clone();
                        tokio::spawn(async move {
                            let route = service_fn(move |request: Request<Incoming>| {
                                let state = state.clone();
                                let base = base.clone();
                                async move {
                                    Ok::<_, Infallible>(authorization(request, &state, &base).await)
                                }
                            });
                            let _ = http1::Builder::new()
                                .serve_connection(TokioIo::new(stream), route)
                                .await;
                        });
                    }
                };
                tokio::select! {
                    _ = serving => {}
                    () = authorizing => {}
                    _ = stopped => {}
                }
            });
        });
        OAuthServers {
            url,
            issuer,
            state,
            stop: Some(stop),
            thread: Some(thread),
        }
    }

    /// Every access token stops working, as when they expire.
    pub(crate) fn expire_access_tokens(&self) {
        self.state.lock().unwrap().access.clear();
    }

    /// Every refresh token is revoked, and every access token with it.
    pub(crate) fn revoke_everything(&self) {
        let mut state = self.state.lock().unwrap();
        state.access.clear();
        for revoked in state.refresh.values_mut() {
            *revoked = true;
        }
    }

    /// Every token issued so far.
    pub(crate) fn issued(&self) -> Vec<String> {
        self.state.lock().unwrap().issued.clone()
    }

    /// The grant type of every token request so far.
    pub(crate) fn grants(&self) -> Vec<String> {
        self.state.lock().unwrap().grants.clone()
    }
}

impl Drop for OAuthServers {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn respond(status: StatusCode, body: Value) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from(body.to_string())));
    *response.status_mut() = status;
    response.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("application/json"),
    );
    response
}

fn form(text: &[u8]) -> HashMap<String, String> {
    url_pairs(std::str::from_utf8(text).unwrap_or_default())
}

fn url_pairs(query: &str) -> HashMap<String, String> {
    let base = format!("http://x/?{query}");
    reqwest::Url::parse(&base)
        .map(|url| url.query_pairs().into_owned().collect())
        .unwrap_or_default()
}

async fn authorization(
    request: Request<Incoming>,
    state: &Arc<Mutex<State>>,
    issuer: &str,
) -> Response<Full<Bytes>> {
    let path = request.uri().path().to_owned();
    let query = url_pairs(request.uri().query().unwrap_or_default());
    let body = request
        .into_body()
        .collect()
        .await
        .map(|b| b.to_bytes())
        .unwrap_or_default();
    match path.as_str() {
        "/.well-known/oauth-authorization-server" => respond(
            StatusCode::OK,
            json!({
                "issuer": issuer,
                "authorization_endpoint": format!("{issuer}/authorize"),
                "token_endpoint": format!("{issuer}/token"),
                "registration_endpoint": format!("{issuer}/register"),
                "response_types_supported": ["code"],
                "grant_types_supported": ["authorization_code", "refresh_token"],
                "code_challenge_methods_supported": ["S256"],
                "token_endpoint_auth_methods_supported": ["none"],
                "scopes_supported": ["tools"],
            }),
        ),
        "/register" => {
            let asked: Value = serde_json::from_slice(&body).unwrap_or_default();
            respond(
                StatusCode::CREATED,
                json!({"client_id": "test-client", "redirect_uris": asked["redirect_uris"],
                       "token_endpoint_auth_method": "none"}),
            )
        }
        "/authorize" => {
            let mut state = state.lock().unwrap();
            state.codes += 1;
            state
                .resources
                .push(query.get("resource").cloned().unwrap_or_default());
            let code = format!("code-{}", state.codes);
            let mut location = reqwest::Url::parse(&query["redirect_uri"]).unwrap();
            location
                .query_pairs_mut()
                .append_pair("code", &code)
                .append_pair("state", &query["state"]);
            let mut response = Response::new(Full::new(Bytes::new()));
            *response.status_mut() = StatusCode::FOUND;
            response.headers_mut().insert(
                hyper::header::LOCATION,
                hyper::header::HeaderValue::from_str(location.as_str()).unwrap(),
            );
            response
        }
        "/token" => {
            let form = form(&body);
            let mut state = state.lock().unwrap();
            let grant = form.get("grant_type").cloned().unwrap_or_default();
            state.grants.push(grant.clone());
            state
                .resources
                .push(form.get("resource").cloned().unwrap_or_default());
            match grant.as_str() {
                "authorization_code" => {
                    let tokens = state.issue();
                    respond(StatusCode::OK, tokens)
                }
                "refresh_token" => {
                    let presented = form.get("refresh_token").cloned().unwrap_or_default();
                    match state.refresh.get(&presented) {
                        Some(false) => {
                            state.refresh.insert(presented, true);
                            let tokens = state.issue();
                            respond(StatusCode::OK, tokens)
                        }
                        _ => respond(
                            StatusCode::BAD_REQUEST,
                            json!({"error": "invalid_grant",
                                   "error_description": "the refresh token was revoked"}),
                        ),
                    }
                }
                _ => respond(
                    StatusCode::BAD_REQUEST,
                    json!({"error": "unsupported_grant_type"}),
                ),
            }
        }
        _ => respond(StatusCode::NOT_FOUND, json!({"error": "not_found"})),
    }
}
