//! `web_fetch`: HTTP GET a URL, with a cap on the body.
//!
//! - **Client**: `ureq` (blocking, run on tokio's blocking pool), default
//!   features off. With the `web` feature alone it speaks **`http://`
//!   only** and refuses an `https://` URL with a clear error; the `https`
//!   feature adds TLS with rustls on the `ring` provider (no OpenSSL),
//!   trusting Mozilla's root certificates (the `webpki-roots` crate) or,
//!   with [`WebFetchTool::trusting_only_pem`], only the certificates given.
//!   No compression, no cookies. Environment proxies are used except for
//!   loopback hosts. The download stops when the call is cancelled or
//!   times out.
//! - **Redirects**: at most [`MAX_REDIRECTS`] are followed, each checked
//!   before it is: only to `http://` (and `https://` with TLS). A redirect
//!   to any other scheme (`file:`, `ftp:`, `data:`, …) is refused with
//!   `REDIRECT_REFUSED`, naming the scheme; nothing is fetched from it.
//! - **Value** [`WebFetchValue`]: `{url, statusCode, contentType?, body, truncated}`
//!   where `body` holds at most `maxBytes` (default 256 KiB) and `truncated`
//!   says the server sent more. A 404 or 500 is a value, not an error: the
//!   request worked and the status says how.
//! - **Render**: `Fetched <url> (HTTP n)` and the body cut to
//!   [`RENDER_CHARS`], with a footer when anything was cut.
//! - **Meta** [`WebFetchMeta`]: `{url, statusCode, truncated}`, where
//!   `truncated` is the effective truncation: the fetch or the render cut.
//! - **Cards**: a `generic` call card of kind `fetch`; a `web` result card of
//!   kind `fetch`.
//! - **Errors** (C9), by code: `INVALID_URL` (no scheme or host, a scheme
//!   other than http(s)), `UNSUPPORTED_SCHEME` (`https://`, or a redirect
//!   to it, in a build without TLS), `REDIRECT_REFUSED` (a redirect to
//!   another scheme), `FETCH_TIMEOUT`, and `FETCH_FAILED` (no connection, a
//!   refused certificate, more than [`MAX_REDIRECTS`] redirects, a body cut
//!   off).

use std::io::Read;
use std::net::IpAddr;
#[cfg(feature = "https")]
use std::sync::Arc;
use std::time::{Duration, Instant};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolprism::card::{ResultCard, WebFetch, WebResult};
use toolprism::{CallCard, ContentBlock, ToolContext, ToolError, ToolKind, ToolResult, tool};

use crate::blocking::Stop;
use crate::text::{cap_chars, ellipsize, lossy_head};

/// Bytes of body kept when the call sets no `maxBytes`.
pub const DEFAULT_MAX_BYTES: u64 = 256 * 1024;
/// The largest `maxBytes` a call may ask for.
pub const MAX_MAX_BYTES: u64 = 1024 * 1024;
/// Chars of body the model reads.
pub const RENDER_CHARS: usize = 10_000;
/// Redirects followed at most; one more is `FETCH_FAILED`.
pub const MAX_REDIRECTS: usize = 5;
/// The whole fetch, redirects and body, ends after this.
const FETCH_TIMEOUT: Duration = Duration::from_secs(20);

/// Arguments of `web_fetch`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WebFetchArgs {
    /// The URL: `http://`, or `https://` when this build has TLS.
    pub url: String,
    /// Keep at most this many bytes of the body. Default 262144, at most 1048576.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 1048576))]
    pub max_bytes: Option<u64>,
}

/// The value of `web_fetch`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WebFetchValue {
    /// The URL fetched.
    pub url: String,
    /// The HTTP status of the final response.
    pub status_code: u16,
    /// Its `Content-Type`, when sent.
    pub content_type: Option<String>,
    /// The body as text (invalid UTF-8 replaced), at most `maxBytes`.
    pub body: String,
    /// Whether the server sent more than was kept.
    pub truncated: bool,
}

/// The meta of `web_fetch`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WebFetchMeta {
    /// The URL fetched.
    pub url: String,
    /// The HTTP status.
    pub status_code: u16,
    /// Whether the model read less than the server sent.
    pub truncated: bool,
}

/// Fetches `http://` URLs, and `https://` ones with the `https` feature.
///
/// `Default` (and [`WebFetchTool::new`]) trusts Mozilla's root
/// certificates for `https://`.
#[derive(Debug, Clone, Default)]
pub struct WebFetchTool {
    /// The only certificates trusted for `https://`; `None`: Mozilla's roots.
    #[cfg(feature = "https")]
    roots: Option<Arc<Vec<ureq::tls::Certificate<'static>>>>,
}

impl WebFetchTool {
    /// A `web_fetch` with the default trust: Mozilla's root certificates.
    pub fn new() -> Self {
        WebFetchTool::default()
    }

    /// A `web_fetch` that trusts, for `https://`, only the certificates in
    /// `pem` (one or more `BEGIN CERTIFICATE` blocks): a private CA, or a
    /// test server's own certificate. Fails when `pem` holds no certificate
    /// or one that does not parse.
    #[cfg(feature = "https")]
    pub fn trusting_only_pem(pem: &[u8]) -> std::io::Result<Self> {
        let invalid = |why: String| std::io::Error::new(std::io::ErrorKind::InvalidData, why);
        let mut certs = Vec::new();
        for item in ureq::tls::parse_pem(pem) {
            match item.map_err(|e| invalid(format!("the PEM does not parse: {e}")))? {
                ureq::tls::PemItem::Certificate(cert) => certs.push(cert),
                _ => continue,
            }
        }
        if certs.is_empty() {
            return Err(invalid("the PEM holds no certificate".to_owned()));
        }
        Ok(WebFetchTool {
            roots: Some(Arc::new(certs)),
        })
    }
}

/// Fetch a URL with GET and return its status and body as text (the
/// first 10,000 chars; `maxBytes` caps what is downloaded).
#[tool(
    name = "web_fetch",
    title = "Fetch a URL",
    kind = fetch,
    read_only,
    open_world,
    timeout_ms = 30000,
    blocking,
    builtin
)]
impl WebFetchTool {
    fn execute(
        &self,
        args: WebFetchArgs,
        cx: &ToolContext<'_>,
    ) -> Result<WebFetchValue, ToolError> {
        self.run(args, &Stop::of(cx))
    }

    fn render(_args: &WebFetchArgs, value: &WebFetchValue) -> Vec<ContentBlock> {
        let (shown, cut) = cap_chars(&value.body, RENDER_CHARS);
        let mut out = format!("Fetched {} (HTTP {})", value.url, value.status_code);
        if let Some(kind) = &value.content_type {
            out.push_str(&format!(" [{kind}]"));
        }
        out.push_str("\n\n");
        out.push_str(if shown.is_empty() {
            "(empty body)"
        } else {
            &shown
        });
        if cut || value.truncated {
            out.push_str(&format!(
                "\n\n(Body cut: showing the first {} chars{}.)",
                shown.chars().count(),
                if value.truncated {
                    "; the download itself stopped at maxBytes"
                } else {
                    ""
                }
            ));
        }
        vec![ContentBlock::text(out)]
    }

    fn presentation_meta(_args: &WebFetchArgs, value: &WebFetchValue) -> WebFetchMeta {
        WebFetchMeta {
            url: value.url.clone(),
            status_code: value.status_code,
            truncated: value.truncated || value.body.chars().nth(RENDER_CHARS).is_some(),
        }
    }

    fn present_call(args: &WebFetchArgs) -> CallCard {
        CallCard::generic(
            format!("Fetch {}", args.url),
            Some(ToolKind::Fetch),
            serde_json::to_value(args).ok(),
        )
    }

    fn present_result(
        _args: &WebFetchArgs,
        result: &ToolResult<WebFetchMeta>,
    ) -> Option<ResultCard> {
        let meta = result.meta.as_ref().filter(|_| !result.is_error)?;
        Some(ResultCard::Web(WebResult::Fetch(
            WebFetch::new(meta.url.clone(), meta.status_code, meta.truncated)
                .with_title(meta.url.clone()),
        )))
    }
}

impl WebFetchTool {
    /// The fetch itself, synchronous (see [`crate::blocking`]): one request
    /// per hop, each redirect checked before it is followed.
    fn run(&self, args: WebFetchArgs, stop: &Stop) -> Result<WebFetchValue, ToolError> {
        let mut host = http_host(&args.url)?;
        let cap = args
            .max_bytes
            .unwrap_or(DEFAULT_MAX_BYTES)
            .clamp(1, MAX_MAX_BYTES);
        let deadline = Instant::now() + FETCH_TIMEOUT;
        let mut hop = args.url.clone();
        let mut redirects = 0;
        loop {
            let agent = self.agent(is_loopback(&host), deadline)?;
            let response = request(&agent, &args.url, &hop)?;
            stop.check()?;
            let status = response.status();
            let location = response.headers().get("location");
            let Some(location) = location.filter(|_| status.is_redirection()) else {
                return read_body(response, &args.url, cap, stop);
            };
            if redirects == MAX_REDIRECTS {
                return Err(ToolError::new(format!(
                    "could not fetch {}: too many redirects (web_fetch follows at most {MAX_REDIRECTS})",
                    args.url
                ))
                .with_code("FETCH_FAILED"));
            }
            let location = location.to_str().map_err(|_| {
                ToolError::new(format!(
                    "could not fetch {}: it redirected (HTTP {}) with a Location header that is not text",
                    args.url,
                    status.as_u16()
                ))
                .with_code("FETCH_FAILED")
            })?;
            hop = redirect_target(&args.url, &hop, status.as_u16(), location)?;
            host = http_host(&hop)?;
            redirects += 1;
        }
    }

    /// A client for one hop: it follows no redirect (the loop above checks
    /// each), and the time left until `deadline` is its timeout.
    fn agent(&self, loopback: bool, deadline: Instant) -> Result<ureq::Agent, ToolError> {
        let left = deadline
            .checked_duration_since(Instant::now())
            .filter(|left| !left.is_zero())
            .ok_or_else(|| {
                ToolError::new(format!(
                    "the fetch took longer than {} s, redirects included",
                    FETCH_TIMEOUT.as_secs()
                ))
                .with_code("FETCH_TIMEOUT")
            })?;
        let mut config = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .max_redirects(0)
            .timeout_global(Some(left))
            .user_agent(concat!(
                "toolprism-tools-web_fetch/",
                env!("CARGO_PKG_VERSION")
            ));
        if loopback {
            config = config.proxy(None);
        }
        #[cfg(feature = "https")]
        if let Some(roots) = &self.roots {
            config = config.tls_config(
                ureq::tls::TlsConfig::builder()
                    .root_certs(ureq::tls::RootCerts::Specific(roots.clone()))
                    .build(),
            );
        }
        Ok(ureq::Agent::new_with_config(config.build()))
    }
}

/// The host of an `http://` (or `https://`) URL, or why the URL is refused.
fn http_host(url: &str) -> Result<String, ToolError> {
    let invalid = |why: &str| {
        ToolError::new(format!(
            "\"{}\" is not a usable URL: {why}",
            ellipsize(url, 200)
        ))
        .with_code("INVALID_URL")
    };
    let Some((scheme, rest)) = url.split_once("://") else {
        return Err(invalid("it has no scheme; write it as http://host/path"));
    };
    match scheme.to_ascii_lowercase().as_str() {
        "http" => {}
        "https" if cfg!(feature = "https") => {}
        "https" => {
            return Err(ToolError::new(
                "https:// is not supported by this build of web_fetch (it has no TLS: the `https` feature of toolprism-tools is off); use an http:// URL",
            )
            .with_code("UNSUPPORTED_SCHEME"));
        }
        other => {
            return Err(invalid(&format!(
                "the scheme \"{}\" is not http{}",
                ellipsize(other, 20),
                if cfg!(feature = "https") {
                    " or https"
                } else {
                    ""
                }
            )));
        }
    }
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host_port = authority.rsplit('@').next().unwrap_or(authority);
    let host = match host_port.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or(""),
        None => host_port.split(':').next().unwrap_or(""),
    };
    if host.is_empty() {
        return Err(invalid("it has no host"));
    }
    Ok(host.to_ascii_lowercase())
}

fn is_loopback(host: &str) -> bool {
    host == "localhost" || host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// One GET of `hop`, on the way to `url` (the URL the call asked for).
fn request(
    agent: &ureq::Agent,
    url: &str,
    hop: &str,
) -> Result<ureq::http::Response<ureq::Body>, ToolError> {
    agent.get(hop).call().map_err(|e| {
        let code = match e {
            ureq::Error::Timeout(_) => "FETCH_TIMEOUT",
            ureq::Error::BadUri(_) => "INVALID_URL",
            _ => "FETCH_FAILED",
        };
        let via = if hop == url {
            String::new()
        } else {
            format!(" (redirected to {})", ellipsize(hop, 200))
        };
        ToolError::new(format!("could not fetch {url}{via}: {e}")).with_code(code)
    })
}

/// The body of the last response, at most `cap` bytes of it.
fn read_body(
    mut response: ureq::http::Response<ureq::Body>,
    url: &str,
    cap: u64,
    stop: &Stop,
) -> Result<WebFetchValue, ToolError> {
    let status_code = response.status().as_u16();
    let content_type = response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let mut reader = response.body_mut().as_reader().take(cap + 1);
    let mut bytes = Vec::new();
    let mut chunk = [0u8; 16 * 1024];
    loop {
        stop.check()?;
        match reader.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => bytes.extend_from_slice(&chunk[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => {
                return Err(
                    ToolError::new(format!("the body of {url} could not be read: {e}"))
                        .with_code("FETCH_FAILED"),
                );
            }
        }
    }
    let truncated = bytes.len() as u64 > cap;
    bytes.truncate(cap as usize);
    Ok(WebFetchValue {
        url: url.to_owned(),
        status_code,
        content_type,
        body: lossy_head(&bytes, truncated),
        truncated,
    })
}

/// Where the redirect from `hop` (`status`, `Location: location`) leads,
/// resolved against `hop` (RFC 3986, section 5.2), or why it is not
/// followed: only to `http://`, and `https://` with TLS. `url` is the URL
/// the call asked for, which the messages name.
fn redirect_target(url: &str, hop: &str, status: u16, location: &str) -> Result<String, ToolError> {
    // A fragment never reaches the server.
    let location = location.trim().split('#').next().unwrap_or_default();
    if let Some(scheme) = scheme_of(location) {
        let shown = ellipsize(location, 100);
        return match scheme.to_ascii_lowercase().as_str() {
            "http" => Ok(location.to_owned()),
            "https" if cfg!(feature = "https") => Ok(location.to_owned()),
            "https" => Err(ToolError::new(format!(
                "{url} redirected (HTTP {status}) to \"{shown}\", and this build of web_fetch has no TLS for https:// (the `https` feature of toolprism-tools is off); nothing was fetched from it"
            ))
            .with_code("UNSUPPORTED_SCHEME")),
            _ => Err(ToolError::new(format!(
                "{url} redirected (HTTP {status}) to \"{shown}\", a {}: URL; web_fetch follows redirects to {} only, so it did not follow this one and fetched nothing from it",
                ellipsize(scheme, 20),
                if cfg!(feature = "https") {
                    "http:// and https:// URLs"
                } else {
                    "http:// URLs"
                }
            ))
            .with_code("REDIRECT_REFUSED")),
        };
    }
    // Relative: `hop` is `scheme://authority[/path][?query]`, checked by
    // `http_host` before it was fetched.
    let (scheme, rest) = hop.split_once("://").unwrap_or(("http", hop));
    let rest = rest.split('#').next().unwrap_or_default();
    let (authority, path_and_query) = rest.split_at(rest.find(['/', '?']).unwrap_or(rest.len()));
    let path = match path_and_query.split('?').next().unwrap_or_default() {
        "" => "/",
        path => path,
    };
    Ok(if let Some(network_path) = location.strip_prefix("//") {
        format!("{scheme}://{network_path}")
    } else if location.is_empty() {
        format!("{scheme}://{authority}{path_and_query}")
    } else if location.starts_with('?') {
        format!("{scheme}://{authority}{path}{location}")
    } else {
        let (relative, query) = location.split_at(location.find('?').unwrap_or(location.len()));
        let merged = if relative.starts_with('/') {
            relative.to_owned()
        } else {
            // The base's path up to its last `/`, then the reference.
            let dir = &path[..path.rfind('/').map_or(0, |at| at + 1)];
            format!("{dir}{relative}")
        };
        format!(
            "{scheme}://{authority}{}{query}",
            remove_dot_segments(&merged)
        )
    })
}

/// The scheme of an absolute URL (`ALPHA *( ALPHA / DIGIT / "+" / "-" /
/// "." ) ":"`, RFC 3986), or `None` for a relative reference.
fn scheme_of(reference: &str) -> Option<&str> {
    let (scheme, _) = reference.split_once(':')?;
    let mut chars = scheme.chars();
    let valid = chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    valid.then_some(scheme)
}

/// `path` with its `.` and `..` segments applied (RFC 3986, 5.2.4); `path`
/// starts with `/`.
fn remove_dot_segments(path: &str) -> String {
    let segments: Vec<&str> = path.split('/').skip(1).collect();
    let mut out: Vec<&str> = Vec::with_capacity(segments.len());
    for (i, segment) in segments.iter().enumerate() {
        match *segment {
            "." => {}
            ".." => {
                out.pop();
            }
            other => {
                out.push(other);
                continue;
            }
        }
        // `/a/.` and `/a/b/..` name a directory: keep the trailing `/`.
        if i + 1 == segments.len() {
            out.push("");
        }
    }
    format!("/{}", out.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolprism::{Registry, ToolCall, ToolOutcome};
    use toolprism_testkit::http::{Routes, Server};

    fn registry() -> Registry {
        Registry::builder()
            .tool(WebFetchTool::new())
            .build()
            .unwrap()
    }

    async fn call(registry: &Registry, args: serde_json::Value) -> ToolOutcome {
        registry
            .call(ToolCall::new("c", "web_fetch", args.to_string()))
            .await
    }

    fn routes() -> Routes {
        Routes::default()
            .route("/hello", 200, "text/plain; charset=utf-8", "héllo world")
            .route("/big", 200, "text/plain", "b".repeat(50_000))
            .route("/boom", 500, "text/plain", "it broke")
    }

    fn server() -> Server {
        routes().http()
    }

    /// `routes` over TLS with this certificate and PKCS#8 key (DER).
    #[cfg(feature = "https")]
    fn https(routes: Routes, cert_der: Vec<u8>, key_der: Vec<u8>) -> Server {
        use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
        use std::sync::Arc;
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
        routes.serve_over("https", move |tcp| {
            let tls =
                rustls::ServerConnection::new(config.clone()).map_err(std::io::Error::other)?;
            Ok(Box::new(rustls::StreamOwned::new(tls, tcp)))
        })
    }

    #[tokio::test]
    async fn fetches_from_a_real_loopback_server() {
        let server = server();
        let registry = registry();
        let url = server.url("/hello");
        let out = call(&registry, serde_json::json!({"url": url})).await;
        assert!(!out.is_error(), "{out:?}");
        let v = out.value_as::<WebFetchValue>().unwrap();
        assert_eq!(
            (v.status_code, v.body.as_str(), v.truncated),
            (200, "héllo world", false)
        );
        assert_eq!(v.content_type.as_deref(), Some("text/plain; charset=utf-8"));
        assert_eq!(
            out.content()[0].as_text().unwrap(),
            format!("Fetched {url} (HTTP 200) [text/plain; charset=utf-8]\n\nhéllo world")
        );
        assert_eq!(
            out.result_card().unwrap(),
            &ResultCard::Web(WebResult::Fetch(
                WebFetch::new(url.clone(), 200, false).with_title(url.clone())
            ))
        );
        let out = call(&registry, serde_json::json!({"url": server.url("/nope")})).await;
        assert_eq!(out.value_as::<WebFetchValue>().unwrap().status_code, 404);
        let out = call(&registry, serde_json::json!({"url": server.url("/boom")})).await;
        assert_eq!(out.meta().unwrap()["statusCode"], 500);
    }

    #[tokio::test]
    async fn the_body_cap_and_the_render_cap_are_both_visible() {
        let server = server();
        let registry = registry();
        let out = call(
            &registry,
            serde_json::json!({"url": server.url("/big"), "maxBytes": 20000}),
        )
        .await;
        let v = out.value_as::<WebFetchValue>().unwrap();
        assert_eq!(v.body.len(), 20_000);
        assert!(v.truncated);
        let text = out.content()[0].as_text().unwrap();
        assert!(text.contains("showing the first 10000 chars; the download itself stopped"));
        assert_eq!(out.meta().unwrap()["truncated"], true);
        // Fetched whole, but the model reads only part: still truncated.
        let out = call(&registry, serde_json::json!({"url": server.url("/big")})).await;
        assert!(!out.value_as::<WebFetchValue>().unwrap().truncated);
        assert_eq!(out.meta().unwrap()["truncated"], true);
    }

    #[cfg(not(feature = "https"))]
    #[tokio::test]
    async fn without_tls_https_is_refused_clearly() {
        let out = call(
            &registry(),
            serde_json::json!({"url": "https://example.com/"}),
        )
        .await;
        assert_eq!(out.error().unwrap().code.as_str(), "UNSUPPORTED_SCHEME");
        assert!(out.error().unwrap().message.contains("`https` feature"));
    }

    /// A certificate made here, a TLS server on 127.0.0.1 presenting it, and
    /// a `web_fetch` trusting only it: the fetch works. A server with
    /// another certificate, or the default trust (Mozilla's roots), fails
    /// with an error that names the certificate problem.
    #[cfg(feature = "https")]
    #[tokio::test]
    async fn https_trusts_exactly_the_certificates_it_is_given() {
        let made = |name: &str| {
            let key =
                rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_owned(), name.to_owned()])
                    .unwrap();
            (
                key.cert.pem(),
                key.cert.der().to_vec(),
                key.signing_key.serialize_der(),
            )
        };
        let (pem_a, der_a, key_a) = made("a.test");
        let (_, der_b, key_b) = made("b.test");
        let server_a = https(routes(), der_a, key_a);
        let server_b = https(routes(), der_b, key_b);
        let trusting_a = Registry::builder()
            .tool(WebFetchTool::trusting_only_pem(pem_a.as_bytes()).unwrap())
            .build()
            .unwrap();
        let url = server_a.url("/hello");
        assert!(url.starts_with("https://127.0.0.1:"));
        let out = call(&trusting_a, serde_json::json!({"url": url})).await;
        assert!(!out.is_error(), "{out:?}");
        let v = out.value_as::<WebFetchValue>().unwrap();
        assert_eq!((v.status_code, v.body.as_str()), (200, "héllo world"));
        assert_eq!(out.result_card().unwrap().tag(), "web");

        for (registry, url) in [
            (&trusting_a, server_b.url("/hello")),
            (&registry(), server_a.url("/hello")),
        ] {
            let out = call(registry, serde_json::json!({"url": url})).await;
            let error = out
                .error()
                .unwrap_or_else(|| panic!("{url} was trusted: {out:?}"));
            assert_eq!(error.code.as_str(), "FETCH_FAILED");
            assert!(error.message.contains("certificate"), "{}", error.message);
        }
        for bad in [
            &b"no pem here"[..],
            b"-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n",
        ] {
            assert!(WebFetchTool::trusting_only_pem(bad).is_err());
        }
    }

    #[tokio::test]
    async fn bad_input_is_a_clear_error_result() {
        let registry = registry();
        let out = call(&registry, serde_json::json!({"url": "example.com"})).await;
        assert_eq!(out.error().unwrap().code.as_str(), "INVALID_URL");
        let out = call(&registry, serde_json::json!({"url": "ftp://x/"})).await;
        assert_eq!(out.error().unwrap().code.as_str(), "INVALID_URL");
        // A port nothing listens on: bind one, then free it.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let out = call(
            &registry,
            serde_json::json!({"url": format!("http://127.0.0.1:{port}/")}),
        )
        .await;
        assert_eq!(out.error().unwrap().code.as_str(), "FETCH_FAILED");
        assert!(out.error().unwrap().message.contains("could not fetch"));
        assert_eq!(out.result_card().unwrap().tag(), "generic");
    }

    /// A server that redirects to `file:`, `ftp:` and `data:` URLs: each
    /// call is `REDIRECT_REFUSED`, naming the scheme and what is followed,
    /// never "too many redirects"; the server sees the one request, and no
    /// value or meta comes back.
    #[tokio::test]
    async fn a_redirect_to_another_scheme_is_refused_by_name() {
        let server = Routes::new()
            .redirect("/to-file", 302, "file:///etc/passwd")
            .redirect("/to-FILE", 301, "FILE:///etc/passwd")
            .redirect("/to-ftp", 301, "ftp://127.0.0.1/pub/secret.txt")
            .redirect("/to-data", 307, "data:text/plain;base64,aGVsbG8=")
            .http();
        let registry = registry();
        for (path, status, scheme) in [
            ("/to-file", 302, "file"),
            ("/to-FILE", 301, "FILE"),
            ("/to-ftp", 301, "ftp"),
            ("/to-data", 307, "data"),
        ] {
            let before = server.requests().len();
            let url = server.url(path);
            let out = call(&registry, serde_json::json!({ "url": url })).await;
            let error = out
                .error()
                .unwrap_or_else(|| panic!("{path} was followed: {out:?}"));
            assert_eq!(error.code.as_str(), "REDIRECT_REFUSED", "{}", error.message);
            assert!(
                error
                    .message
                    .starts_with(&format!("{url} redirected (HTTP {status}) to \"{scheme}:")),
                "{}",
                error.message
            );
            assert!(
                error.message.contains(&format!(", a {scheme}: URL;")),
                "{}",
                error.message
            );
            let followed = if cfg!(feature = "https") {
                "follows redirects to http:// and https:// URLs only"
            } else {
                "follows redirects to http:// URLs only"
            };
            assert!(error.message.contains(followed), "{}", error.message);
            assert!(!error.message.contains("too many"), "{}", error.message);
            assert!(out.value().is_none() && out.meta().is_none());
            assert_eq!(out.result_card().unwrap().tag(), "generic");
            assert_eq!(server.requests()[before..], [path.to_owned()]);
        }
    }

    /// Redirects within http:// are followed, relative or absolute, and the
    /// value is the last response's; a loop ends after `MAX_REDIRECTS` as
    /// `FETCH_FAILED` saying so; a 3xx without a Location is a value.
    #[tokio::test]
    async fn http_redirects_are_followed_up_to_the_limit() {
        let server = routes()
            .redirect("/a/relative", 302, "../hello")
            .redirect("/absolute", 301, "/a/relative")
            .redirect("/loop", 302, "/loop")
            .route("/choices", 300, "text/plain", "pick one")
            .http();
        let far = Routes::new()
            .redirect("/elsewhere", 307, &server.url("/absolute?from=far"))
            .http();
        let registry = registry();
        let url = far.url("/elsewhere");
        let out = call(&registry, serde_json::json!({ "url": url })).await;
        assert!(!out.is_error(), "{out:?}");
        let v = out.value_as::<WebFetchValue>().unwrap();
        assert_eq!((v.status_code, v.body.as_str()), (200, "héllo world"));
        assert_eq!(v.url, url);
        assert_eq!(
            server.requests(),
            ["/absolute?from=far", "/a/relative", "/hello"]
        );

        let out = call(&registry, serde_json::json!({ "url": server.url("/loop") })).await;
        let error = out.error().unwrap();
        assert_eq!(error.code.as_str(), "FETCH_FAILED");
        assert!(
            error.message.contains("too many redirects"),
            "{}",
            error.message
        );
        let loops = server.requests().iter().filter(|r| *r == "/loop").count();
        assert_eq!(loops, MAX_REDIRECTS + 1);

        // A 3xx without a Location leads nowhere: it is a value.
        let out = call(
            &registry,
            serde_json::json!({ "url": server.url("/choices") }),
        )
        .await;
        let v = out.value_as::<WebFetchValue>().unwrap();
        assert_eq!((v.status_code, v.body.as_str()), (300, "pick one"));
    }

    /// Without TLS, a redirect to https:// says so, like an https:// URL.
    #[cfg(not(feature = "https"))]
    #[tokio::test]
    async fn without_tls_a_redirect_to_https_is_refused_clearly() {
        let server = Routes::new()
            .redirect("/up", 301, "https://127.0.0.1/")
            .http();
        let out = call(&registry(), serde_json::json!({ "url": server.url("/up") })).await;
        let error = out.error().unwrap();
        assert_eq!(error.code.as_str(), "UNSUPPORTED_SCHEME");
        assert!(
            error.message.contains("`https` feature"),
            "{}",
            error.message
        );
    }

    #[test]
    fn redirect_targets_resolve_against_the_hop() {
        let to = |hop: &str, location: &str| redirect_target("u", hop, 302, location).unwrap();
        let hop = "http://h:1/a/b/c?q=1#f";
        assert_eq!(to(hop, "http://o/x"), "http://o/x");
        assert_eq!(to(hop, "HTTP://o/x#frag"), "HTTP://o/x");
        assert_eq!(to(hop, "//o/x"), "http://o/x");
        assert_eq!(to(hop, "/x?y"), "http://h:1/x?y");
        assert_eq!(to(hop, "/x/../y/./z"), "http://h:1/y/z");
        assert_eq!(to(hop, "d"), "http://h:1/a/b/d");
        assert_eq!(to(hop, "../d?e=/f"), "http://h:1/a/d?e=/f");
        assert_eq!(to(hop, "../../../../d"), "http://h:1/d");
        assert_eq!(to(hop, "."), "http://h:1/a/b/");
        assert_eq!(to(hop, ".."), "http://h:1/a/");
        assert_eq!(to(hop, "?z"), "http://h:1/a/b/c?z");
        assert_eq!(to(hop, ""), "http://h:1/a/b/c?q=1");
        assert_eq!(to("http://h", "x"), "http://h/x");
        assert_eq!(to("http://h?q", "x"), "http://h/x");
        // A colon after a `/` is no scheme.
        assert_eq!(to(hop, "./x:y"), "http://h:1/a/b/x:y");
        for refused in [
            "file:///etc/passwd",
            "javascript:alert(1)",
            "mailto:a@b",
            "x-y.z+w:1",
        ] {
            let e = redirect_target("u", hop, 302, refused).unwrap_err();
            assert_eq!(e.code().as_str(), "REDIRECT_REFUSED", "{refused}");
        }
        let long = format!("data:text/plain,{}", "x".repeat(10_000));
        let e = redirect_target("u", hop, 302, &long).unwrap_err();
        assert!(e.message().len() < 400, "{}", e.message());
    }

    #[test]
    fn hosts() {
        assert_eq!(
            http_host("http://user@LOCALHOST:8080/x").unwrap(),
            "localhost"
        );
        assert_eq!(http_host("http://[::1]:80/").unwrap(), "::1");
        assert!(is_loopback("::1") && is_loopback("127.0.0.2") && !is_loopback("10.0.0.1"));
        assert!(http_host("http:///x").is_err());
    }
}
