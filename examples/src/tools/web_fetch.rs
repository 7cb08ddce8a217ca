//! `web_fetch`: HTTP GET a URL, with a cap on the body.
//!
//! - **Client**: `ureq` with default features off: **`http://` only**, no
//!   TLS, no compression; this example build asks for nothing else. An
//!   `https://` URL is refused with a clear error. Redirects (at most 5) are
//!   followed; environment proxies are used except for loopback hosts. The
//!   blocking client runs on tokio's blocking pool.
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

use std::io::Read;
use std::net::IpAddr;
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolprism::card::{ResultCard, WebResult};
use toolprism::{CallCard, ContentBlock, ToolContext, ToolError, ToolKind, ToolResult, tool};

use super::{blocking, generic_result_card};
use crate::text::cap_chars;

/// Bytes of body kept when the call sets no `maxBytes`.
pub const DEFAULT_MAX_BYTES: u64 = 256 * 1024;
/// The largest `maxBytes` a call may ask for.
pub const MAX_MAX_BYTES: u64 = 1024 * 1024;
/// Chars of body the model reads.
pub const RENDER_CHARS: usize = 10_000;

/// Arguments of `web_fetch`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WebFetchArgs {
    /// An `http://` URL.
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

/// Fetches `http://` URLs.
#[derive(Debug, Clone, Default)]
pub struct WebFetchTool;

/// Fetch an http:// URL with GET and return its status and body as text
/// (the first 10,000 chars; `maxBytes` caps what is downloaded). https is
/// not supported by this build.
#[tool(
    name = "web_fetch",
    title = "Fetch a URL",
    kind = fetch,
    read_only,
    open_world,
    timeout_ms = 30000,
    builtin
)]
impl WebFetchTool {
    async fn execute(
        &self,
        args: WebFetchArgs,
        _cx: &ToolContext<'_>,
    ) -> Result<WebFetchValue, ToolError> {
        let host = http_host(&args.url)?;
        let cap = args
            .max_bytes
            .unwrap_or(DEFAULT_MAX_BYTES)
            .clamp(1, MAX_MAX_BYTES);
        blocking(move || fetch(&args.url, &host, cap)).await
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

    fn present_result(_args: &WebFetchArgs, result: &ToolResult<WebFetchMeta>) -> ResultCard {
        let Some(meta) = result.meta.as_ref().filter(|_| !result.is_error) else {
            return generic_result_card("web_fetch", result);
        };
        ResultCard::Web(WebResult::Fetch {
            title: Some(meta.url.clone()),
            url: meta.url.clone(),
            status_code: meta.status_code,
            truncated: meta.truncated,
        })
    }
}

/// The host of an `http://` URL, or why the URL is refused.
fn http_host(url: &str) -> Result<String, ToolError> {
    let invalid = |why: &str| {
        ToolError::new(format!(
            "\"{}\" is not a usable URL: {why}",
            crate::text::ellipsize(url, 200)
        ))
        .with_code("INVALID_URL")
    };
    let Some((scheme, rest)) = url.split_once("://") else {
        return Err(invalid("it has no scheme; write it as http://host/path"));
    };
    match scheme.to_ascii_lowercase().as_str() {
        "http" => {}
        "https" => {
            return Err(ToolError::new(
                "https:// is not supported by this build of web_fetch (it has no TLS); use an http:// URL",
            )
            .with_code("UNSUPPORTED_SCHEME"));
        }
        other => return Err(invalid(&format!("the scheme \"{other}\" is not http"))),
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

fn fetch(url: &str, host: &str, cap: u64) -> Result<WebFetchValue, ToolError> {
    let mut config = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .max_redirects(5)
        .timeout_global(Some(Duration::from_secs(20)))
        .user_agent("toolprism-examples-web_fetch/0.1");
    if is_loopback(host) {
        config = config.proxy(None);
    }
    let agent = ureq::Agent::new_with_config(config.build());
    let mut response = agent.get(url).call().map_err(|e| {
        let code = match e {
            ureq::Error::Timeout(_) => "FETCH_TIMEOUT",
            ureq::Error::BadUri(_) => "INVALID_URL",
            _ => "FETCH_FAILED",
        };
        ToolError::new(format!("could not fetch {url}: {e}")).with_code(code)
    })?;
    let status_code = response.status().as_u16();
    let content_type = response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let mut bytes = Vec::new();
    response
        .body_mut()
        .as_reader()
        .take(cap + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| {
            ToolError::new(format!("the body of {url} could not be read: {e}"))
                .with_code("FETCH_FAILED")
        })?;
    let truncated = bytes.len() as u64 > cap;
    bytes.truncate(cap as usize);
    // A cut may split a UTF-8 sequence at the end: drop the partial char.
    let body = match std::str::from_utf8(&bytes) {
        Ok(text) => text.to_owned(),
        Err(e) if truncated && e.error_len().is_none() => {
            String::from_utf8_lossy(&bytes[..e.valid_up_to()]).into_owned()
        }
        Err(_) => String::from_utf8_lossy(&bytes).into_owned(),
    };
    Ok(WebFetchValue {
        url: url.to_owned(),
        status_code,
        content_type,
        body,
        truncated,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http_server::Server;
    use toolprism::{Registry, ToolCall, ToolOutcome};

    fn registry() -> Registry {
        Registry::builder().tool(WebFetchTool).build().unwrap()
    }

    async fn call(registry: &Registry, args: serde_json::Value) -> ToolOutcome {
        registry
            .call(ToolCall::new("c", "web_fetch", args.to_string()))
            .await
    }

    fn server() -> Server {
        Server::builder()
            .route("/hello", 200, "text/plain; charset=utf-8", "héllo world")
            .route("/big", 200, "text/plain", "b".repeat(50_000))
            .route("/boom", 500, "text/plain", "it broke")
            .start()
            .unwrap()
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
            &ResultCard::Web(WebResult::Fetch {
                title: Some(url.clone()),
                url: url.clone(),
                status_code: 200,
                truncated: false
            })
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

    #[tokio::test]
    async fn bad_input_is_a_clear_error_result() {
        let registry = registry();
        let out = call(
            &registry,
            serde_json::json!({"url": "https://example.com/"}),
        )
        .await;
        assert_eq!(out.error().unwrap().code.as_str(), "UNSUPPORTED_SCHEME");
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
