//! Loopback unless told otherwise (W3 in `docs/contract.md`): who may
//! connect to the HTTP server, and the check of the address it listens on.

use std::io;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use crate::McpServer;
use crate::auth::BearerAuth;

/// Whether `addr` can be reached only from this machine: an IPv4 address in
/// `127.0.0.0/8`, `::1`, or `::ffff:127.x.y.z`. The unspecified addresses
/// (`0.0.0.0`, `::`) listen on every interface: they are not loopback.
///
/// ```
/// use toolprism::mcp::is_loopback;
/// assert!(is_loopback(&"127.0.0.1:8765".parse().unwrap()));
/// assert!(is_loopback(&"[::1]:8765".parse().unwrap()));
/// assert!(!is_loopback(&"0.0.0.0:8765".parse().unwrap()));
/// assert!(!is_loopback(&"192.168.1.5:8765".parse().unwrap()));
/// ```
pub fn is_loopback(addr: &SocketAddr) -> bool {
    match addr.ip() {
        IpAddr::V4(ip) => ip.is_loopback(),
        IpAddr::V6(ip) => {
            ip.is_loopback() || ip.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback())
        }
    }
}

/// Who may connect.
impl McpServer {
    /// Every HTTP request must carry a bearer token that `auth` verifies
    /// (a [`StaticToken`](crate::StaticToken), your own
    /// [`Authenticator`](crate::Authenticator), or a [`BearerAuth`] with
    /// its metadata); the verified [`Caller`](toolprism_core::Caller) goes
    /// to the registry with each call. A server with an authenticator may
    /// listen on any address. stdio is not affected: its client is the
    /// process that started the server.
    ///
    /// ```
    /// use toolprism::mcp::{McpServer, StaticToken};
    ///
    /// let registry = toolprism::Registry::builder().build().unwrap();
    /// let token = StaticToken::new("9b1f0c6e2d4a8b3c7e5f1a0d9c8b7a6e").unwrap();
    /// let server = McpServer::new(registry).with_auth(token);
    /// assert!(server.authenticates());
    /// assert!(server.check_address("0.0.0.0:8765".parse().unwrap()).is_ok());
    /// ```
    pub fn with_auth(mut self, auth: impl Into<BearerAuth>) -> Self {
        self.http.auth = Some(Arc::new(auth.into()));
        self
    }

    /// Whether HTTP requests must carry a verified credential
    /// ([`with_auth`](Self::with_auth)); an example is there.
    pub fn authenticates(&self) -> bool {
        self.http.auth.is_some()
    }

    /// Lets [`serve_http`](Self::serve_http) listen on an address other
    /// machines can reach **without any credential**: anyone who reaches it
    /// can call every tool, so a tool that runs commands or writes files
    /// becomes remote code execution. Meant for a network you fully trust,
    /// or for a proxy in front that authenticates. Each start on such an
    /// address prints a warning on stderr naming the tools that are not
    /// read-only.
    ///
    /// ```no_run
    /// # async fn run(registry: toolprism::Registry) -> std::io::Result<()> {
    /// use toolprism::mcp::{McpServer, StreamableHttpServerConfig};
    /// let listener = tokio::net::TcpListener::bind("0.0.0.0:8765").await?;
    /// // Behind a proxy that checks who connects; prints the warning, then serves.
    /// McpServer::new(registry)
    ///     .allow_unauthenticated_network()
    ///     .serve_http(listener, StreamableHttpServerConfig::default())
    ///     .await
    /// # }
    /// ```
    pub fn allow_unauthenticated_network(mut self) -> Self {
        self.http.allow_unauthenticated_network = true;
        self
    }

    /// Whether this server may listen on `addr`: always on a loopback
    /// address ([`is_loopback`]); on any other only with an authenticator
    /// or [the opt-out](Self::allow_unauthenticated_network). The error is
    /// one line saying how to allow it. [`serve_http`](Self::serve_http)
    /// calls it with the listener's address; call it yourself before
    /// mounting [`http_service`](Self::http_service) on a listener of your
    /// own, which cannot know where it is mounted.
    ///
    /// ```
    /// let registry = toolprism::Registry::builder().build().unwrap();
    /// let server = toolprism::mcp::McpServer::new(registry);
    /// assert!(server.check_address("127.0.0.1:8765".parse().unwrap()).is_ok());
    /// let refused = server.check_address("0.0.0.0:8765".parse().unwrap()).unwrap_err();
    /// assert_eq!(refused.kind(), std::io::ErrorKind::PermissionDenied);
    /// assert!(refused.to_string().contains("allow_unauthenticated_network"));
    /// let server = server.allow_unauthenticated_network();
    /// assert!(server.check_address("0.0.0.0:8765".parse().unwrap()).is_ok());
    /// ```
    pub fn check_address(&self, addr: SocketAddr) -> io::Result<()> {
        if is_loopback(&addr) || self.authenticates() || self.http.allow_unauthenticated_network {
            return Ok(());
        }
        Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!(
                "refusing to serve MCP without authentication on {addr}, which other machines can reach: \
                 give the server a bearer token (McpServer::with_auth), listen on 127.0.0.1, \
                 or opt out with McpServer::allow_unauthenticated_network()"
            ),
        ))
    }

    /// The warning of a start on `addr` without a credential, when other
    /// machines can reach it.
    pub(crate) fn exposure_warning(&self, addr: SocketAddr) -> Option<String> {
        if is_loopback(&addr) || self.authenticates() {
            return None;
        }
        let registry = self.registry();
        let writers: Vec<&str> = registry
            .definitions()
            .filter(|d| !d.annotations.read_only)
            .map(|d| d.name.as_str())
            .collect();
        let shown = match writers.len() {
            0 => String::new(),
            n if n <= 5 => format!(", {n} of them not read-only ({})", writers.join(", ")),
            n => format!(
                ", {n} of them not read-only ({}, …)",
                writers[..5].join(", ")
            ),
        };
        Some(format!(
            "WARNING: serving MCP on {addr} WITHOUT AUTHENTICATION: anyone who can reach this address can call all {} tools{shown}",
            self.registry().definitions().len()
        ))
    }
}
