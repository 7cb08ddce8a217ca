//! The HTTP client of an import over Streamable HTTP: which URLs it may
//! reach in plain text, and its TLS (rustls on ring, the platform's roots,
//! webpki's when the platform has none, and the user's own CA).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;

/// How long connecting to an HTTP server (TCP and TLS) may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

/// The most redirects followed for one request.
const MAX_REDIRECTS: usize = 10;

pub(crate) use super::source::HttpOptions;

/// Whether `url` names this machine: `localhost` (or a name under it),
/// `127.0.0.0/8`, `::1`.
pub(crate) fn is_loopback(url: &reqwest::Url) -> bool {
    let Some(host) = url.host_str() else {
        return false;
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    if let Ok(ip) = host.parse::<std::net::IpAddr>() {
        return ip.is_loopback();
    }
    let host = host.to_ascii_lowercase();
    host == "localhost" || host.ends_with(".localhost")
}

/// `url` parsed, when an import may reach it: `https://`, or `http://` to
/// this machine (or anywhere, when the user allowed plain HTTP).
pub(crate) fn check_url(url: &str, allow_http: bool) -> Result<reqwest::Url, String> {
    let parsed = reqwest::Url::parse(url).map_err(|e| format!("{url:?} is not a URL: {e}"))?;
    match parsed.scheme() {
        "https" => Ok(parsed),
        "http" if allow_http || is_loopback(&parsed) => Ok(parsed),
        "http" => Err(format!(
            "http://{} is plain text across the network, where anyone on the way reads the calls and any token: use https://, or allow plain HTTP to that host (Import::allow_insecure_http; --allow-http on the command line)",
            parsed.host_str().unwrap_or_default()
        )),
        other => Err(format!(
            "{other}:// is not a Streamable HTTP URL: use https:// (or http:// on this machine)"
        )),
    }
}

/// The certificates of the PEM file at `path`.
fn read_ca(path: &Path) -> Result<Vec<CertificateDer<'static>>, String> {
    let text = std::fs::read(path)
        .map_err(|e| format!("cannot read the CA file {}: {e}", path.display()))?;
    let certificates = CertificateDer::pem_slice_iter(&text)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("the CA file {} is not PEM: {e}", path.display()))?;
    if certificates.is_empty() {
        return Err(format!(
            "the CA file {} holds no certificate (-----BEGIN CERTIFICATE-----)",
            path.display()
        ));
    }
    Ok(certificates)
}

/// The TLS configuration: ring, TLS 1.2 and 1.3, certificates checked
/// against the platform's roots (webpki's when the platform has none)
/// and the CAs in `ca`.
pub(crate) fn tls_config(ca: &[PathBuf]) -> Result<rustls::ClientConfig, String> {
    // ring: the provider the tree already compiles (rustls 0.23.48 marks it
    // deprecated for lacking post-quantum key exchange; aws-lc-rs would add
    // a C and assembly build of its own).
    #[allow(deprecated)]
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut extra = Vec::new();
    for path in ca {
        extra.extend(read_ca(path)?);
    }
    let builder = rustls::ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS: {e}"))?;
    let config = match rustls_platform_verifier::Verifier::new_with_extra_roots(
        extra.iter().cloned(),
        provider.clone(),
    ) {
        Ok(verifier) => builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(verifier))
            .with_no_client_auth(),
        // No root on the platform (a minimal container): webpki's.
        Err(_) => {
            let mut roots = rustls::RootCertStore::empty();
            roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
            for certificate in extra {
                roots
                    .add(certificate)
                    .map_err(|e| format!("a CA certificate is unusable: {e}"))?;
            }
            builder.with_root_certificates(roots).with_no_client_auth()
        }
    };
    Ok(config)
}

/// The HTTP client of an import: its TLS, no idle connection kept (a kept
/// one stalls ~40 ms on Linux when a body was not read to its end), and
/// only same-origin `307`/`308` redirects followed (they keep the method
/// and body; another would turn a POST into a GET, or replay the session
/// and the token to another host).
pub(crate) fn client(options: &HttpOptions) -> Result<reqwest::Client, String> {
    let tls = tls_config(&options.ca)?;
    reqwest::Client::builder()
        .tls_backend_preconfigured(tls)
        .pool_max_idle_per_host(0)
        .connect_timeout(CONNECT_TIMEOUT)
        .redirect(reqwest::redirect::Policy::custom(|attempt| {
            let keeps_body = matches!(
                attempt.status(),
                reqwest::StatusCode::TEMPORARY_REDIRECT | reqwest::StatusCode::PERMANENT_REDIRECT
            );
            let same_origin = attempt
                .previous()
                .first()
                .is_some_and(|first| first.origin() == attempt.url().origin());
            if !keeps_body || !same_origin {
                attempt.stop()
            } else if attempt.previous().len() > MAX_REDIRECTS {
                attempt.error(format!("more than {MAX_REDIRECTS} redirects"))
            } else {
                attempt.follow()
            }
        }))
        .build()
        .map_err(|e| format!("cannot make the HTTP client: {e}"))
}

/// A reqwest error in a few words, with its causes (reqwest's own
/// `Display` says only "error sending request").
pub(crate) fn describe(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let more = cause.to_string();
        if !text.contains(&more) {
            text.push_str(": ");
            text.push_str(&more);
        }
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_http_stays_on_this_machine_unless_allowed() {
        for url in [
            "http://127.0.0.1:8/mcp",
            "http://127.9.9.9/mcp",
            "http://[::1]:8/mcp",
            "http://localhost/mcp",
            "http://api.localhost/mcp",
            "https://example.com/mcp",
        ] {
            assert!(check_url(url, false).is_ok(), "{url}");
        }
        for url in [
            "http://example.com/mcp",
            "http://10.0.0.1/mcp",
            "http://localhost.example.com/mcp",
        ] {
            let error = check_url(url, false).unwrap_err();
            assert!(error.contains("plain text"), "{error}");
            assert!(check_url(url, true).is_ok(), "{url}");
        }
        assert!(check_url("ftp://x/", true).unwrap_err().contains("ftp://"));
        assert!(check_url("nope", true).is_err());
    }

    #[test]
    fn a_ca_file_must_hold_certificates() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ca.pem");
        assert!(read_ca(&path).unwrap_err().contains("cannot read"));
        std::fs::write(&path, "hello").unwrap();
        assert!(read_ca(&path).unwrap_err().contains("no certificate"));
        assert!(tls_config(&[]).is_ok());
    }
}
