//! Bearer authentication for Streamable HTTP (W3 in `docs/contract.md`),
//! as the MCP authorization specification (2025-11-25) asks of a resource
//! server: `Authorization: Bearer <token>` on every request, checked before
//! anything else is read; a missing or refused token is `401` with a
//! `WWW-Authenticate: Bearer resource_metadata="…"` challenge (RFC 6750,
//! RFC 9728); the protected-resource metadata is served at
//! `/.well-known/oauth-protected-resource` (and its `/mcp`-suffixed form).
//!
//! Two ways to verify a token: [`StaticToken`], one shared secret compared
//! in constant time, or an [`Authenticator`] of your own (a JWT, an
//! introspection endpoint). Either way the verified [`Caller`] goes to the
//! registry with each call, for policies to read.

use std::fmt;
use std::future::Future;
use std::path::Path;
use std::pin::Pin;
use std::sync::Arc;

use bytes::Bytes;
use http::header::{AUTHORIZATION, CACHE_CONTROL, CONTENT_TYPE, HOST, WWW_AUTHENTICATE};
use http::{HeaderValue, Method, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::Response;
use rmcp::RoleServer;
use rmcp::service::RequestContext;
use serde_json::json;
use subtle::ConstantTimeEq;
use toolprism_core::{CallOptions, Caller};

use crate::http::{HttpResponse, MCP_PATH};
use crate::limits::{Refused, refusal};

/// Where the protected-resource metadata is served (RFC 9728), with
/// [`MCP_PATH`] appended for the resource at `/mcp`.
pub const PROTECTED_RESOURCE_PATH: &str = "/.well-known/oauth-protected-resource";

/// Verifies the bearer token of a request: yours to implement for a JWT, an
/// introspection endpoint, a database of API keys. It runs before the
/// request's body is read, for every request to `/mcp`; it returns the
/// verified [`Caller`], or a [`Refusal`] the client gets as `401` (or
/// `403`). [`StaticToken`] is one.
///
/// ```
/// use toolprism::Caller;
/// use toolprism::mcp::{Authenticator, BearerAuth, McpServer, Refusal};
///
/// /// Tokens `<subject>.<expiry in Unix seconds>`: a sketch, unsigned.
/// struct Expiring;
///
/// impl Authenticator for Expiring {
///     async fn verify(&self, token: &str) -> Result<Caller, Refusal> {
///         let (subject, expiry) = token.split_once('.').ok_or_else(|| Refusal::invalid_token("malformed token"))?;
///         let expiry: u64 = expiry.parse().map_err(|_| Refusal::invalid_token("malformed token"))?;
///         let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
///         if expiry <= now {
///             return Err(Refusal::invalid_token("the token expired"));
///         }
///         Ok(Caller::new(subject))
///     }
/// }
///
/// let registry = toolprism::Registry::builder().build().unwrap();
/// let server = McpServer::new(registry).with_auth(
///     BearerAuth::new(Expiring).with_authorization_servers(["https://auth.example.com"]),
/// );
/// assert!(server.authenticates());
/// ```
pub trait Authenticator: Send + Sync + 'static {
    /// The caller `token` stands for, or why it is refused. `token` is the
    /// text after `Bearer `, already checked to be one RFC 6750 token (no
    /// blanks, no quotes).
    fn verify(&self, token: &str) -> impl Future<Output = Result<Caller, Refusal>> + Send;
}

/// The object-safe form of [`Authenticator`].
trait Verify: Send + Sync {
    fn verify<'a>(
        &'a self,
        token: &'a str,
    ) -> Pin<Box<dyn Future<Output = Result<Caller, Refusal>> + Send + 'a>>;
}

impl<A: Authenticator> Verify for A {
    fn verify<'a>(
        &'a self,
        token: &'a str,
    ) -> Pin<Box<dyn Future<Output = Result<Caller, Refusal>> + Send + 'a>> {
        Box::pin(Authenticator::verify(self, token))
    }
}

/// Why a token is refused, for the client: the `error` and
/// `error_description` of the `WWW-Authenticate` challenge (RFC 6750 §3).
/// An [`Authenticator`] returns it.
///
/// ```
/// use toolprism::mcp::Refusal;
/// assert_eq!(Refusal::invalid_token("the token expired").status(), 401);
/// assert_eq!(Refusal::insufficient_scope("tools:write", "writing needs tools:write").status(), 403);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    status: StatusCode,
    error: &'static str,
    description: String,
    scope: Option<String>,
}

impl Refusal {
    /// `401`, `error="invalid_token"`: the token is expired, revoked,
    /// malformed or unknown. The description reaches the client: say what
    /// to do, never why a guess was close.
    pub fn invalid_token(description: impl Into<String>) -> Self {
        Refusal {
            status: StatusCode::UNAUTHORIZED,
            error: "invalid_token",
            description: description.into(),
            scope: None,
        }
    }

    /// `403`, `error="insufficient_scope"`: the token is valid but lacks
    /// `scope` (space-separated), which the challenge names so a client can
    /// ask for it.
    pub fn insufficient_scope(scope: impl Into<String>, description: impl Into<String>) -> Self {
        Refusal {
            status: StatusCode::FORBIDDEN,
            error: "insufficient_scope",
            description: description.into(),
            scope: Some(scope.into()),
        }
    }

    /// `401`, `error="invalid_request"`: the request carries its credential
    /// wrongly (twice, in the URL, malformed).
    fn invalid_request(description: impl Into<String>) -> Self {
        Refusal {
            status: StatusCode::UNAUTHORIZED,
            error: "invalid_request",
            description: description.into(),
            scope: None,
        }
    }

    /// The HTTP status: `401` or `403`.
    pub fn status(&self) -> u16 {
        self.status.as_u16()
    }
}

/// A problem with an authentication setting, found when the server is set
/// up: a token that is empty, too short or unreadable, a resource URL that
/// is not one. Its message is one line, and never holds the token.
///
/// ```
/// let e = toolprism::mcp::StaticToken::new("short").unwrap_err();
/// assert_eq!(e.to_string(), "the token is 5 bytes long, under the 32 required (make one with `openssl rand -hex 32`)");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthError(String);

impl fmt::Display for AuthError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for AuthError {}

/// One shared bearer token: a request is let in when its token equals this
/// one, compared in constant time (the time taken depends on this token's
/// length only, never on how much of a guess was right). Every request let
/// in is made by the same [`Caller`] (subject `"token"` unless
/// [set](StaticToken::with_caller)).
///
/// The token must be at least [`MIN_LEN`](StaticToken::MIN_LEN) bytes of
/// what RFC 6750 lets a bearer token hold (`A-Z a-z 0-9 - . _ ~ + /`, then
/// `=` padding); `openssl rand -hex 32` makes one. Read it from the
/// environment or a file, never from a command-line argument (`ps` shows
/// those to every user of the machine). Its `Debug` never shows it.
///
/// ```
/// use toolprism::mcp::{McpServer, StaticToken};
///
/// let token = StaticToken::new("0123456789abcdef0123456789abcdef").unwrap();
/// assert!(StaticToken::new("short").is_err());
/// assert!(!format!("{token:?}").contains("0123"));
///
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("token");
/// std::fs::write(&path, "0123456789abcdef0123456789abcdef\n").unwrap();
/// let token = StaticToken::from_file(&path)
///     .unwrap()
///     .with_caller(toolprism::Caller::new("ci").with_scopes(["tools:write"]));
/// let registry = toolprism::Registry::builder().build().unwrap();
/// let server = McpServer::new(registry).with_auth(token);
/// assert!(server.authenticates());
/// ```
#[derive(Clone)]
pub struct StaticToken {
    secret: Arc<[u8]>,
    caller: Caller,
}

impl fmt::Debug for StaticToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StaticToken")
            .field("len", &self.secret.len())
            .field("caller", &self.caller)
            .finish_non_exhaustive()
    }
}

impl StaticToken {
    /// The shortest token accepted, in bytes: 32, as 128 random bits
    /// written in hex.
    pub const MIN_LEN: usize = 32;

    /// `token`, if it is long enough and holds only what a bearer token may.
    pub fn new(token: impl Into<String>) -> Result<Self, AuthError> {
        let token = token.into();
        if token.is_empty() {
            return Err(AuthError("the token is empty".into()));
        }
        if !is_b64token(&token) {
            return Err(AuthError(
                "the token holds a character a bearer token cannot carry (use A-Z a-z 0-9 - . _ ~ + /, then = padding)".into(),
            ));
        }
        if token.len() < Self::MIN_LEN {
            return Err(AuthError(format!(
                "the token is {} bytes long, under the {} required (make one with `openssl rand -hex 32`)",
                token.len(),
                Self::MIN_LEN
            )));
        }
        Ok(StaticToken {
            secret: Arc::from(token.into_bytes()),
            caller: Caller::new("token"),
        })
    }

    /// The token in environment variable `name`.
    pub fn from_env(name: &str) -> Result<Self, AuthError> {
        match std::env::var(name) {
            Ok(token) => Self::new(token).map_err(|e| AuthError(format!("${name}: {e}"))),
            Err(std::env::VarError::NotPresent) => Err(AuthError(format!(
                "the environment variable {name} is not set"
            ))),
            Err(std::env::VarError::NotUnicode(_)) => Err(AuthError(format!(
                "the environment variable {name} is not UTF-8"
            ))),
        }
    }

    /// The token in the file at `path`, without the blanks and line end
    /// around it.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Self, AuthError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path)
            .map_err(|e| AuthError(format!("{}: {e}", path.display())))?;
        Self::new(text.trim()).map_err(|e| AuthError(format!("{}: {e}", path.display())))
    }

    /// The caller the token stands for (default: subject `"token"`, no
    /// scopes): what policies see of every request it lets in.
    pub fn with_caller(mut self, caller: Caller) -> Self {
        self.caller = caller;
        self
    }

    /// Whether `presented` is this token, in time that depends on this
    /// token's length only.
    fn matches(&self, presented: &[u8]) -> bool {
        let expected: &[u8] = &self.secret;
        let mut padded = vec![0u8; expected.len()];
        let n = presented.len().min(expected.len());
        padded[..n].copy_from_slice(&presented[..n]);
        let same_len = (presented.len() as u64).ct_eq(&(expected.len() as u64));
        (padded.as_slice().ct_eq(expected) & same_len).into()
    }
}

impl Authenticator for StaticToken {
    async fn verify(&self, token: &str) -> Result<Caller, Refusal> {
        if self.matches(token.as_bytes()) {
            Ok(self.caller.clone())
        } else {
            Err(Refusal::invalid_token("the bearer token is not valid"))
        }
    }
}

/// Bearer authentication for the Streamable HTTP service: the verifier and
/// what the protected-resource metadata says (RFC 9728). Give it to
/// [`McpServer::with_auth`](crate::McpServer::with_auth); an
/// [`Authenticator`] (a [`StaticToken`]) converts into one.
///
/// ```
/// use toolprism::mcp::{BearerAuth, StaticToken};
///
/// let auth = BearerAuth::new(StaticToken::new("0123456789abcdef0123456789abcdef").unwrap())
///     .with_resource("https://tools.example.com/mcp")
///     .unwrap()
///     .with_authorization_servers(["https://auth.example.com"])
///     .with_scopes_supported(["tools:read", "tools:write"]);
/// assert_eq!(auth.resource(), Some("https://tools.example.com/mcp"));
/// assert!(BearerAuth::new(StaticToken::new("0123456789abcdef0123456789abcdef").unwrap())
///     .with_resource("tools.example.com/mcp")
///     .is_err());
/// ```
#[derive(Clone)]
pub struct BearerAuth {
    verifier: Arc<dyn Verify>,
    resource: Option<String>,
    authorization_servers: Vec<String>,
    scopes_supported: Vec<String>,
}

impl fmt::Debug for BearerAuth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BearerAuth")
            .field("resource", &self.resource)
            .field("authorization_servers", &self.authorization_servers)
            .field("scopes_supported", &self.scopes_supported)
            .finish_non_exhaustive()
    }
}

impl<A: Authenticator> From<A> for BearerAuth {
    fn from(verifier: A) -> Self {
        BearerAuth::new(verifier)
    }
}

impl BearerAuth {
    /// Authentication by `verifier`, with metadata naming no authorization
    /// server.
    pub fn new(verifier: impl Authenticator) -> Self {
        BearerAuth {
            verifier: Arc::new(verifier),
            resource: None,
            authorization_servers: Vec::new(),
            scopes_supported: Vec::new(),
        }
    }

    /// The canonical URL clients reach the server at (the metadata's
    /// `resource`, RFC 9728; an `http` or `https` URL without query or
    /// fragment): set it behind a proxy, under a public name, or when the
    /// service is mounted at another path than `/mcp`. Unset, it is
    /// `http://<the request's Host>/mcp`.
    pub fn with_resource(mut self, url: impl Into<String>) -> Result<Self, AuthError> {
        let url = url.into();
        if split_url(&url).is_none() {
            return Err(AuthError(format!(
                "the resource {url:?} is not an absolute http(s) URL without query or fragment"
            )));
        }
        self.resource = Some(url);
        Ok(self)
    }

    /// The authorization servers that issue tokens for this server (the
    /// metadata's `authorization_servers`), for OAuth clients to discover.
    pub fn with_authorization_servers<S: Into<String>>(
        mut self,
        servers: impl IntoIterator<Item = S>,
    ) -> Self {
        self.authorization_servers = servers.into_iter().map(Into::into).collect();
        self
    }

    /// The scopes this server understands (the metadata's
    /// `scopes_supported`, and the `scope` of every challenge).
    pub fn with_scopes_supported<S: Into<String>>(
        mut self,
        scopes: impl IntoIterator<Item = S>,
    ) -> Self {
        self.scopes_supported = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// The configured resource URL, when set.
    pub fn resource(&self) -> Option<&str> {
        self.resource.as_deref()
    }

    /// The resource URL for a request with these headers.
    fn resource_for(&self, parts: &http::request::Parts) -> String {
        match &self.resource {
            Some(resource) => resource.clone(),
            None => format!("http://{}{MCP_PATH}", host(parts)),
        }
    }

    /// The protected-resource metadata document (RFC 9728 §2).
    fn metadata(&self, parts: &http::request::Parts) -> serde_json::Value {
        let mut doc = json!({
            "resource": self.resource_for(parts),
            "bearer_methods_supported": ["header"],
        });
        if !self.authorization_servers.is_empty() {
            doc["authorization_servers"] = json!(self.authorization_servers);
        }
        if !self.scopes_supported.is_empty() {
            doc["scopes_supported"] = json!(self.scopes_supported);
        }
        doc
    }

    /// The verified caller of a request, or the response refusing it.
    pub(crate) async fn authenticate(
        &self,
        parts: &http::request::Parts,
    ) -> Result<Caller, Refused> {
        let token = match bearer_token(parts) {
            Ok(token) => token,
            Err(refusal) => return Err(Box::new(self.challenge(parts, refusal.as_ref()))),
        };
        match self.verifier.verify(token).await {
            Ok(caller) => Ok(caller),
            Err(refusal) => Err(Box::new(self.challenge(parts, Some(&refusal)))),
        }
    }

    /// `401` (or the refusal's `403`) with the `WWW-Authenticate` challenge
    /// and a JSON-RPC error body naming what to do.
    fn challenge(&self, parts: &http::request::Parts, refusal: Option<&Refusal>) -> HttpResponse {
        let mut challenge = format!(
            "Bearer resource_metadata=\"{}\"",
            metadata_url(&self.resource_for(parts))
        );
        let scope = refusal.and_then(|r| r.scope.clone()).or_else(|| {
            (!self.scopes_supported.is_empty()).then(|| self.scopes_supported.join(" "))
        });
        if let Some(scope) = scope {
            challenge.push_str(&format!(", scope=\"{}\"", quotable(&scope)));
        }
        if let Some(refusal) = refusal {
            challenge.push_str(&format!(
                ", error=\"{}\", error_description=\"{}\"",
                refusal.error,
                quotable(&refusal.description)
            ));
        }
        let (status, message) = match refusal {
            None => (
                StatusCode::UNAUTHORIZED,
                "unauthorized: this server needs `Authorization: Bearer <token>` on every request"
                    .to_owned(),
            ),
            Some(refusal) => (
                refusal.status,
                format!("unauthorized: {}", quotable(&refusal.description)),
            ),
        };
        let mut response = refusal_response(status, &message);
        if let Ok(value) = HeaderValue::from_str(&challenge) {
            response.headers_mut().insert(WWW_AUTHENTICATE, value);
        }
        response
    }

    /// The answer to a request for the metadata, at
    /// [`PROTECTED_RESOURCE_PATH`] or below it.
    pub(crate) fn metadata_response(&self, parts: &http::request::Parts) -> HttpResponse {
        if parts.method != Method::GET && parts.method != Method::HEAD {
            let mut response = Response::new(Full::new(Bytes::from_static(b"")).boxed());
            *response.status_mut() = StatusCode::METHOD_NOT_ALLOWED;
            response
                .headers_mut()
                .insert(http::header::ALLOW, HeaderValue::from_static("GET, HEAD"));
            return response;
        }
        let body = serde_json::to_vec_pretty(&self.metadata(parts)).unwrap_or_default();
        let mut response = Response::new(Full::new(Bytes::from(body)).boxed());
        let headers = response.headers_mut();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        headers.insert(CACHE_CONTROL, HeaderValue::from_static("max-age=3600"));
        response
    }
}

fn refusal_response(status: StatusCode, message: &str) -> HttpResponse {
    refusal(status, None, "unauthorized", message)
}

/// The bearer token of a request: `Ok` with the token, `Err(None)` when the
/// request carries no credential for this scheme, `Err(Some(refusal))`
/// when it carries one wrongly. A token in the URL (`access_token`, RFC 6750
/// §2.3) is refused even next to a good header: URLs end up in logs.
fn bearer_token(parts: &http::request::Parts) -> Result<&str, Option<Refusal>> {
    if parts.uri.query().is_some_and(has_access_token) {
        return Err(Some(Refusal::invalid_request(
            "a token in the URL is refused, and it may now be in logs: revoke it, and send the new one as `Authorization: Bearer <token>`",
        )));
    }
    let mut values = parts.headers.get_all(AUTHORIZATION).iter();
    let Some(value) = values.next() else {
        return Err(None);
    };
    if values.next().is_some() {
        return Err(Some(Refusal::invalid_request(
            "send one Authorization header, not several",
        )));
    }
    let value = value.to_str().map_err(|_| {
        Some(Refusal::invalid_request(
            "the Authorization header is not text",
        ))
    })?;
    let (scheme, token) = value.split_once(' ').unwrap_or((value, ""));
    if !scheme.eq_ignore_ascii_case("bearer") {
        // Another scheme: no credential for this one (RFC 6750 §3: no error code).
        return Err(None);
    }
    let token = token.trim_start_matches(' ');
    if !is_b64token(token) {
        return Err(Some(Refusal::invalid_token(
            "the bearer token is malformed",
        )));
    }
    Ok(token)
}

/// Whether a query string holds an `access_token` parameter (its name
/// percent-decoded, in any case).
fn has_access_token(query: &str) -> bool {
    query.split('&').any(|pair| {
        let name = pair.split_once('=').map_or(pair, |(name, _)| name);
        percent_decoded(name).eq_ignore_ascii_case("access_token")
    })
}

fn percent_decoded(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match (
            bytes[i],
            bytes.get(i + 1).copied(),
            bytes.get(i + 2).copied(),
        ) {
            (b'%', Some(h), Some(l)) if hex(h).is_some() && hex(l).is_some() => {
                out.push((hex(h).unwrap_or(0) * 16 + hex(l).unwrap_or(0)) as u8);
                i += 3;
            }
            (b'+', _, _) => {
                out.push(b' ');
                i += 1;
            }
            (b, _, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// RFC 6750's `b64token`: `1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="`.
fn is_b64token(token: &str) -> bool {
    let body = token.trim_end_matches('=');
    !body.is_empty()
        && body.bytes().all(|b| {
            b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'+' | b'/')
        })
}

/// `text` as it may stand inside a quoted challenge parameter: printable
/// ASCII without `"` and `\` (RFC 6750 §3), at most 200 bytes.
fn quotable(text: &str) -> String {
    text.chars()
        .map(|c| {
            if (' '..='~').contains(&c) && c != '"' && c != '\\' {
                c
            } else {
                '?'
            }
        })
        .take(200)
        .collect()
}

/// The request's host, when it is one (else `localhost`): the `Host`
/// header, or the authority of an absolute request target.
fn host(parts: &http::request::Parts) -> String {
    let host = parts
        .headers
        .get(HOST)
        .and_then(|v| v.to_str().ok())
        .or_else(|| parts.uri.authority().map(|a| a.as_str()));
    match host {
        Some(host)
            if !host.is_empty()
                && host.len() <= 255
                && host.bytes().all(|b| {
                    b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b':' | b'[' | b']')
                }) =>
        {
            host.to_owned()
        }
        _ => "localhost".to_owned(),
    }
}

/// `(scheme and authority, path)` of an absolute http(s) URL without query
/// or fragment.
fn split_url(url: &str) -> Option<(&str, &str)> {
    let rest = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"))?;
    if url.contains(['?', '#', ' ', '"']) {
        return None;
    }
    let authority_len = rest.find('/').unwrap_or(rest.len());
    if authority_len == 0 {
        return None;
    }
    let split = url.len() - rest.len() + authority_len;
    Some((&url[..split], &url[split..]))
}

/// Where the metadata of `resource` is (RFC 9728 §3.1): the well-known
/// path between the authority and the resource's path.
fn metadata_url(resource: &str) -> String {
    match split_url(resource) {
        Some((origin, path)) => {
            format!(
                "{origin}{PROTECTED_RESOURCE_PATH}{}",
                path.trim_end_matches('/')
            )
        }
        None => format!("http://localhost{PROTECTED_RESOURCE_PATH}{MCP_PATH}"),
    }
}

/// `options` on behalf of the caller the HTTP transport verified for this
/// request, when it did.
pub(crate) fn with_caller(
    options: CallOptions,
    context: &RequestContext<RoleServer>,
) -> CallOptions {
    let caller = context
        .extensions
        .get::<http::request::Parts>()
        .and_then(|parts| parts.extensions.get::<Caller>());
    match caller {
        Some(caller) => options.with_caller(caller.clone()),
        None => options,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(uri: &str, headers: &[(&str, &str)]) -> http::request::Parts {
        let mut request = http::Request::builder().uri(uri);
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        request.body(()).unwrap().into_parts().0
    }

    #[test]
    fn the_token_comes_from_the_authorization_header_only() {
        let token = |uri: &str, headers: &[(&str, &str)]| {
            bearer_token(&parts(uri, headers))
                .map(str::to_owned)
                .map_err(|r| r.map(|r| r.error))
        };
        assert_eq!(
            token("/mcp", &[("authorization", "Bearer abc")]),
            Ok("abc".into())
        );
        assert_eq!(
            token("/mcp", &[("authorization", "bearer  abc==")]),
            Ok("abc==".into())
        );
        assert_eq!(token("/mcp", &[]), Err(None));
        assert_eq!(token("/mcp", &[("authorization", "Basic YTpi")]), Err(None));
        assert_eq!(
            token("/mcp", &[("authorization", "Bearer a b")]),
            Err(Some("invalid_token"))
        );
        assert_eq!(
            token("/mcp", &[("authorization", "Bearer ")]),
            Err(Some("invalid_token"))
        );
        assert_eq!(
            token(
                "/mcp",
                &[("authorization", "Bearer a"), ("authorization", "Bearer a")]
            ),
            Err(Some("invalid_request"))
        );
        for uri in [
            "/mcp?access_token=abc",
            "/mcp?x=1&ACCESS_TOKEN=abc",
            "/mcp?access%5Ftoken=abc",
            "/mcp?access_token",
        ] {
            assert_eq!(
                token(uri, &[("authorization", "Bearer abc")]),
                Err(Some("invalid_request")),
                "{uri}"
            );
        }
        assert_eq!(
            token("/mcp?token_access=1", &[("authorization", "Bearer abc")]),
            Ok("abc".into())
        );
    }

    #[test]
    fn static_tokens_are_checked_when_made_and_compared_whole() {
        assert!(StaticToken::new("").is_err());
        assert!(StaticToken::new("a".repeat(31)).is_err());
        assert!(StaticToken::new(format!("{} ", "a".repeat(32))).is_err());
        assert!(StaticToken::new(format!("{}\"", "a".repeat(32))).is_err());
        let token = StaticToken::new("a".repeat(32)).unwrap();
        assert!(token.matches("a".repeat(32).as_bytes()));
        assert!(!token.matches(format!("{}b", "a".repeat(31)).as_bytes()));
        assert!(!token.matches("a".repeat(31).as_bytes()));
        assert!(!token.matches("a".repeat(33).as_bytes()));
        assert!(!token.matches(b""));
    }

    #[test]
    fn the_metadata_url_sits_between_the_authority_and_the_path() {
        assert_eq!(
            metadata_url("https://tools.example.com/mcp"),
            "https://tools.example.com/.well-known/oauth-protected-resource/mcp"
        );
        assert_eq!(
            metadata_url("http://127.0.0.1:8765"),
            "http://127.0.0.1:8765/.well-known/oauth-protected-resource"
        );
        assert_eq!(
            metadata_url("https://h/a/b/"),
            "https://h/.well-known/oauth-protected-resource/a/b"
        );
        assert!(split_url("https:///mcp").is_none());
        assert!(split_url("https://h/mcp?x").is_none());
        assert!(split_url("ftp://h/mcp").is_none());
    }

    #[test]
    fn challenges_name_the_metadata_the_error_and_the_scope() {
        let auth = BearerAuth::new(StaticToken::new("a".repeat(32)).unwrap())
            .with_resource("https://tools.example.com/mcp")
            .unwrap()
            .with_scopes_supported(["tools:read", "tools:write"]);
        let request = parts("/mcp", &[("host", "ignored.example.com")]);
        let challenge = |refusal: Option<&Refusal>| {
            let response = auth.challenge(&request, refusal);
            let header = response.headers()[WWW_AUTHENTICATE]
                .to_str()
                .unwrap()
                .to_owned();
            (response.status().as_u16(), header)
        };
        assert_eq!(
            challenge(None),
            (
                401,
                "Bearer resource_metadata=\"https://tools.example.com/.well-known/oauth-protected-resource/mcp\", \
                 scope=\"tools:read tools:write\"".to_owned()
            )
        );
        let (status, header) = challenge(Some(&Refusal::insufficient_scope(
            "tools:write",
            "writing needs \"tools:write\"",
        )));
        assert_eq!(status, 403);
        assert!(
            header.ends_with(
                ", scope=\"tools:write\", error=\"insufficient_scope\", error_description=\"writing needs ?tools:write?\""
            ),
            "{header}"
        );
        let doc = auth.metadata(&request);
        assert_eq!(doc["resource"], "https://tools.example.com/mcp");
        assert_eq!(
            doc["scopes_supported"],
            json!(["tools:read", "tools:write"])
        );
        assert!(doc.get("authorization_servers").is_none());
    }

    #[test]
    fn hosts_that_are_not_host_names_are_not_echoed() {
        let host_of = |h: &str| host(&parts("/mcp", &[("host", h)]));
        assert_eq!(host_of("127.0.0.1:8765"), "127.0.0.1:8765");
        assert_eq!(host_of("[::1]:80"), "[::1]:80");
        assert_eq!(host_of("evil\"x"), "localhost");
        assert_eq!(host_of("a b"), "localhost");
        assert_eq!(quotable("a\"b\\c\u{e9}"), "a?b?c?");
    }
}
