//! [`OAuth`]: an imported server's authorization, as the MCP authorization
//! specification (2025-11-25) says, on rmcp's OAuth client (the `oauth2`
//! crate): the protocol is theirs; what is here is the policy (when to
//! log in, refresh, step up), the token file, the loopback redirect and
//! the HTTP client the flows use.
//!
//! The flow, on the first request the server refuses with `401` and
//! `WWW-Authenticate: Bearer resource_metadata=…`:
//!
//! 1. protected-resource metadata (RFC 9728) from the challenge's
//!    `resource_metadata`, else from the well-known URLs; authorization
//!    server metadata (RFC 8414, then OpenID discovery);
//! 2. the client: a pre-registered one ([`OAuth::client`]), a client ID
//!    metadata document ([`OAuth::client_metadata_url`]) when the server
//!    supports them, else dynamic registration (RFC 7591);
//! 3. scopes: [`OAuth::scopes`] when given, else the challenge's `scope`,
//!    else the resource's `scopes_supported`, else none;
//! 4. a person: the authorization code flow with PKCE (S256) and the
//!    `resource` parameter (RFC 8707), in a browser ([`Browser`]), back
//!    to a listener on `127.0.0.1` (the loopback redirect of RFC 8252); a
//!    machine: the client credentials grant ([`OAuth::client_credentials`]);
//! 5. the tokens, in a file only its owner can read and write.
//!
//! Later, an expired access token is refreshed before it is sent; a token
//! the server refuses (`401`) is refreshed once and the request retried; a
//! refresh token the authorization server rejects ends the request with one
//! error that says to log in again. A `403` with
//! `error="insufficient_scope"` asks for the union of the scopes held and
//! the ones the challenge names, at most [`OAuth::max_step_ups`] times for
//! one request.

use std::collections::{BTreeSet, HashMap};
use std::fmt;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use http::{HeaderName, HeaderValue};
use oauth2::TokenResponse;
use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::auth::{
    AuthError, AuthorizationCallback, AuthorizationManager, AuthorizationRequest,
    AuthorizationSession, ClientCredentialsConfig, CredentialStore, OAuthHttpClient,
    OAuthHttpClientFuture, OAuthHttpRedirectPolicy, OAuthHttpRequest, StoredCredentials,
    WWWAuthenticateParams,
};
use rmcp::transport::common::client_side_sse::BoxedSseResponse;
use rmcp::transport::streamable_http_client::{
    StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};

use super::http::{HttpOptions, check_url, describe};

/// How long [`OAuth`]'s browser login waits for the person, unless set:
/// five minutes.
pub const DEFAULT_LOGIN_TIMEOUT: Duration = Duration::from_secs(300);

/// How many times one request may ask for wider scopes after a `403
/// insufficient_scope`, unless set: 2 (so a request makes at most three
/// authorizations, the limit the MCP conformance suite checks).
pub const DEFAULT_MAX_STEP_UPS: u32 = 2;

/// The largest OAuth response read (metadata, registration, tokens).
const MAX_OAUTH_BODY: usize = 1024 * 1024;

/// How long one OAuth HTTP request may take.
const OAUTH_HTTP_TIMEOUT: Duration = Duration::from_secs(30);

/// The path of the loopback redirect.
const CALLBACK_PATH: &str = "/callback";

/// Shows the person the authorization URL: a browser, or anything that
/// opens the URL for them ([`OAuth::browser`]). A closure `Fn(&str) ->
/// Result<(), String>` is one.
pub trait Browser: Send + Sync + 'static {
    /// Opens `url`, the authorization server's login page for this
    /// client. It redirects the browser to a listener on `127.0.0.1`
    /// when the person has decided; an `Err` stops the login.
    fn open(&self, url: &str) -> Result<(), String>;
}

impl<F> Browser for F
where
    F: Fn(&str) -> Result<(), String> + Send + Sync + 'static,
{
    fn open(&self, url: &str) -> Result<(), String> {
        self(url)
    }
}

/// The person's own browser: the URL is printed on stderr (to copy when
/// no browser opens), then handed to the command in `$BROWSER` (`%s` in it
/// replaced by the URL, else the URL appended), else to `xdg-open`
/// (`open` on macOS). Failing to start one is not an error: the printed
/// URL still works.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemBrowser;

impl Browser for SystemBrowser {
    fn open(&self, url: &str) -> Result<(), String> {
        eprintln!("To authorize, open this address in a browser:\n\n  {url}\n");
        let words = match std::env::var("BROWSER") {
            Ok(line) if !line.trim().is_empty() => {
                let mut words = super::split_command_line(&line)
                    .map_err(|e| format!("$BROWSER is not a command line: {e}"))?;
                if words.iter().any(|w| w.contains("%s")) {
                    for word in &mut words {
                        *word = word.replace("%s", url);
                    }
                } else {
                    words.push(url.to_owned());
                }
                words
            }
            _ if cfg!(target_os = "macos") => vec!["open".to_owned(), url.to_owned()],
            _ => vec!["xdg-open".to_owned(), url.to_owned()],
        };
        let Some((program, args)) = words.split_first() else {
            return Ok(());
        };
        let _ = std::process::Command::new(program)
            .args(args)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn();
        Ok(())
    }
}

/// A secret, never shown by `Debug`.
#[derive(Clone, PartialEq, Eq)]
struct Secret(String);

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[redacted]")
    }
}

/// Who the client is to the authorization server.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Identity {
    /// Found at login: a client ID metadata document when the server
    /// supports them and one is given, else dynamic registration.
    Dynamic {
        name: String,
        metadata_url: Option<String>,
    },
    /// Registered with the authorization server beforehand.
    Registered { id: String, secret: Option<Secret> },
    /// A machine: the client credentials grant, no person involved.
    Machine { id: String, secret: Secret },
}

/// An imported server's OAuth 2.1 authorization: how to log in, where the
/// tokens live. Attach it with [`Import::oauth`](super::Import::oauth);
/// see the [module docs](super#authorization) for the flow.
///
/// Without a [browser](Self::browser) and without [client
/// credentials](Self::client_credentials), an import uses the tokens a
/// login left in the token file and never asks a person: a server that
/// needs one fails to connect with an error that says how to log in
/// ([`Import::login`](super::Import::login), or `import login URL` on a
/// `toolprism::cli` command line).
///
/// ```no_run
/// use toolprism::mcp::import::{Import, OAuth, SystemBrowser};
///
/// # async fn run() -> Result<(), toolprism::mcp::import::ImportError> {
/// // A person at a terminal: a browser on first use, tokens kept.
/// let tickets = Import::http("https://tickets.example.com/mcp")
///     .oauth(OAuth::new().browser(SystemBrowser))
///     .connect()
///     .await?;
/// // A machine: the client credentials grant.
/// let secret = std::env::var("REPORTS_CLIENT_SECRET").unwrap_or_default();
/// let reports = Import::http("https://reports.example.com/mcp")
///     .oauth(OAuth::new().client_credentials("hub-7", secret))
///     .connect()
///     .await?;
/// # let _ = (tickets, reports); Ok(()) }
/// ```
#[derive(Clone)]
pub struct OAuth {
    tokens: Option<PathBuf>,
    identity: Identity,
    scopes: Vec<String>,
    browser: Option<Arc<dyn Browser>>,
    redirect_port: u16,
    login_timeout: Duration,
    max_step_ups: u32,
    login_hint: Option<String>,
}

impl fmt::Debug for OAuth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OAuth")
            .field("tokens", &self.tokens)
            .field("identity", &self.identity)
            .field("scopes", &self.scopes)
            .field("browser", &self.browser.is_some())
            .field("redirect_port", &self.redirect_port)
            .field("login_timeout", &self.login_timeout)
            .field("max_step_ups", &self.max_step_ups)
            .finish_non_exhaustive()
    }
}

/// Equal when they authorize the same way (browsers compared by presence).
impl PartialEq for OAuth {
    fn eq(&self, other: &Self) -> bool {
        self.tokens == other.tokens
            && self.identity == other.identity
            && self.scopes == other.scopes
            && self.browser.is_some() == other.browser.is_some()
            && self.redirect_port == other.redirect_port
            && self.login_timeout == other.login_timeout
            && self.max_step_ups == other.max_step_ups
            && self.login_hint == other.login_hint
    }
}

impl Eq for OAuth {}

impl Default for OAuth {
    fn default() -> Self {
        OAuth::new()
    }
}

impl OAuth {
    /// Dynamic registration under the name `toolprism`, tokens in
    /// [`default_token_dir`](Self::default_token_dir), no browser.
    pub fn new() -> Self {
        OAuth {
            tokens: None,
            identity: Identity::Dynamic {
                name: "toolprism".to_owned(),
                metadata_url: None,
            },
            scopes: Vec::new(),
            browser: None,
            redirect_port: 0,
            login_timeout: DEFAULT_LOGIN_TIMEOUT,
            max_step_ups: DEFAULT_MAX_STEP_UPS,
            login_hint: None,
        }
    }

    /// Where tokens are kept unless set: `$XDG_CONFIG_HOME/toolprism/oauth`,
    /// else `~/.config/toolprism/oauth`. `None` when neither variable is
    /// set.
    pub fn default_token_dir() -> Option<PathBuf> {
        let base = std::env::var_os("XDG_CONFIG_HOME")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .or_else(|| {
                std::env::var_os("HOME")
                    .filter(|v| !v.is_empty())
                    .map(|home| PathBuf::from(home).join(".config"))
            })?;
        Some(base.join("toolprism").join("oauth"))
    }

    /// Keeps the tokens in `dir`: one file per server, named after its
    /// URL, readable and writable by its owner only (the directory too).
    /// A token file others can read is refused, never used.
    pub fn token_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.tokens = Some(dir.into());
        self
    }

    /// The name a dynamic registration gives the client (`toolprism`
    /// unless set).
    pub fn client_name(mut self, name: impl Into<String>) -> Self {
        if let Identity::Dynamic { name: own, .. } = &mut self.identity {
            *own = name.into();
        } else {
            self.identity = Identity::Dynamic {
                name: name.into(),
                metadata_url: None,
            };
        }
        self
    }

    /// The HTTPS URL of this client's metadata document (a client ID
    /// metadata document): its client ID where the authorization server
    /// supports them (`client_id_metadata_document_supported`), instead of
    /// a dynamic registration.
    pub fn client_metadata_url(mut self, url: impl Into<String>) -> Self {
        match &mut self.identity {
            Identity::Dynamic { metadata_url, .. } => *metadata_url = Some(url.into()),
            _ => {
                self.identity = Identity::Dynamic {
                    name: "toolprism".to_owned(),
                    metadata_url: Some(url.into()),
                }
            }
        }
        self
    }

    /// A client registered with the authorization server beforehand: its
    /// ID, and its secret for a confidential client (sent as the server's
    /// metadata asks, HTTP Basic or in the body).
    pub fn client(mut self, id: impl Into<String>, secret: Option<String>) -> Self {
        self.identity = Identity::Registered {
            id: id.into(),
            secret: secret.map(Secret),
        };
        self
    }

    /// A machine, no person: the client credentials grant with this
    /// client's ID and secret, on every login and whenever the token
    /// expires.
    pub fn client_credentials(mut self, id: impl Into<String>, secret: impl Into<String>) -> Self {
        self.identity = Identity::Machine {
            id: id.into(),
            secret: Secret(secret.into()),
        };
        self
    }

    /// The scopes to ask for, instead of the server's (its challenge's
    /// `scope`, else its metadata's `scopes_supported`).
    pub fn scopes<I, S>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// Logs a person in when the server needs it and no token will do
    /// (first use, a rejected refresh token, a wider scope): the
    /// authorization URL goes to `browser` ([`SystemBrowser`] for the
    /// person's own), and the server's redirect comes back to a listener
    /// on `127.0.0.1`.
    pub fn browser(mut self, browser: impl Browser) -> Self {
        self.browser = Some(Arc::new(browser));
        self
    }

    /// The port of the loopback redirect (`http://127.0.0.1:PORT/callback`),
    /// for an authorization server that only accepts the redirect URI
    /// registered with it; unset, any free port.
    pub fn redirect_port(mut self, port: u16) -> Self {
        self.redirect_port = port;
        self
    }

    /// How long a browser login waits for the person
    /// ([`DEFAULT_LOGIN_TIMEOUT`] unless set).
    pub fn login_timeout(mut self, timeout: Duration) -> Self {
        self.login_timeout = timeout;
        self
    }

    /// How many times one request may ask for wider scopes
    /// ([`DEFAULT_MAX_STEP_UPS`] unless set).
    pub fn max_step_ups(mut self, times: u32) -> Self {
        self.max_step_ups = times;
        self
    }

    /// What an error tells the person to run to log in, when a server
    /// needs a login this import cannot do itself (a `toolprism::cli`
    /// command line sets `PROGRAM import login URL`).
    pub fn login_hint(mut self, hint: impl Into<String>) -> Self {
        self.login_hint = Some(hint.into());
        self
    }

    /// `self`, with `other`'s browser and login hint where it has none.
    pub(crate) fn fill_from(mut self, other: OAuth) -> OAuth {
        if self.browser.is_none() {
            self.browser = other.browser;
        }
        if self.login_hint.is_none() {
            self.login_hint = other.login_hint;
        }
        if self.tokens.is_none() {
            self.tokens = other.tokens;
        }
        self
    }

    /// Whether a login may wait for a person.
    pub(crate) fn is_interactive(&self) -> bool {
        self.browser.is_some() && !matches!(self.identity, Identity::Machine { .. })
    }

    /// The longest a login may take.
    pub(crate) fn login_time(&self) -> Duration {
        if self.is_interactive() {
            self.login_timeout
        } else {
            Duration::ZERO
        }
    }
}

// ---------------------------------------------------------------------------
// The token file.

/// What the token file holds for one server.
#[derive(serde::Serialize, serde::Deserialize)]
struct TokenFileBody {
    /// The server's URL, for whoever reads the file.
    server: String,
    /// A dynamic registration's secret, when it gave one (a refresh after
    /// a restart needs it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    client_secret: Option<String>,
    credentials: StoredCredentials,
}

/// The tokens of one server in a file only its owner can read: rmcp's
/// credential store.
#[derive(Clone)]
struct TokenFile {
    inner: Arc<TokenFileInner>,
}

struct TokenFileInner {
    path: PathBuf,
    server: String,
    /// The secret to write with the next save.
    secret: Mutex<Option<String>>,
    /// The authorization server rejected the refresh token.
    rejected: Mutex<bool>,
}

impl TokenFile {
    fn new(dir: &Path, server: &str) -> TokenFile {
        TokenFile {
            inner: Arc::new(TokenFileInner {
                path: dir.join(token_file_name(server)),
                server: server.to_owned(),
                secret: Mutex::new(None),
                rejected: Mutex::new(false),
            }),
        }
    }

    fn path(&self) -> &Path {
        &self.inner.path
    }

    fn read(&self) -> Result<Option<TokenFileBody>, String> {
        let path = &self.inner.path;
        let text = match std::fs::read(path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => {
                return Err(format!(
                    "cannot read the token file {}: {e}",
                    path.display()
                ));
            }
        };
        check_private(path)?;
        match serde_json::from_slice::<TokenFileBody>(&text) {
            Ok(body) if body.server == self.inner.server => Ok(Some(body)),
            // Another server's file under this name, or a torn one: no
            // tokens, and the next login writes it again.
            _ => Ok(None),
        }
    }

    fn write(&self, credentials: StoredCredentials) -> Result<(), String> {
        let body = TokenFileBody {
            server: self.inner.server.clone(),
            client_secret: self.secret(),
            credentials,
        };
        let text = serde_json::to_vec_pretty(&body).map_err(|e| e.to_string())?;
        write_private(&self.inner.path, &text)
    }

    fn secret(&self) -> Option<String> {
        self.inner
            .secret
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    fn set_secret(&self, secret: Option<String>) {
        *self
            .inner
            .secret
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = secret;
    }

    fn take_rejected(&self) -> bool {
        std::mem::take(
            &mut *self
                .inner
                .rejected
                .lock()
                .unwrap_or_else(PoisonError::into_inner),
        )
    }

    /// Every secret the file holds, to keep out of messages.
    fn secrets(&self) -> Vec<String> {
        let Ok(Some(body)) = self.read() else {
            return Vec::new();
        };
        let mut out: Vec<String> = body.client_secret.into_iter().collect();
        if let Some(tokens) = &body.credentials.token_response {
            out.push(tokens.access_token().secret().clone());
            if let Some(refresh) = tokens.refresh_token() {
                out.push(refresh.secret().clone());
            }
        }
        out
    }
}

#[async_trait::async_trait]
impl CredentialStore for TokenFile {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        self.read()
            .map(|body| body.map(|b| b.credentials))
            .map_err(AuthError::CredentialStoreError)
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        self.write(credentials)
            .map_err(AuthError::CredentialStoreError)
    }

    async fn clear(&self) -> Result<(), AuthError> {
        match std::fs::remove_file(&self.inner.path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(AuthError::CredentialStoreError(format!(
                "cannot remove the token file {}: {e}",
                self.inner.path.display()
            ))),
        }
    }

    async fn on_refresh_token_rejected(
        &self,
        _credentials: &StoredCredentials,
    ) -> Result<(), AuthError> {
        *self
            .inner
            .rejected
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = true;
        Ok(())
    }
}

/// The token file's name for `server`: its host, for a person looking in
/// the directory, and a hash of the whole URL, so two servers never share
/// one.
fn token_file_name(server: &str) -> String {
    use sha2::Digest;
    let host: String = reqwest::Url::parse(server)
        .ok()
        .and_then(|url| url.host_str().map(str::to_owned))
        .unwrap_or_default()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect();
    let digest = sha2::Sha256::digest(server.as_bytes());
    let hash: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
    format!("{host}-{hash}.json")
}

/// Refuses a token file its owner does not keep to themself.
#[cfg(unix)]
fn check_private(path: &Path) -> Result<(), String> {
    use std::os::unix::fs::MetadataExt;
    let meta =
        std::fs::metadata(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    if meta.mode() & 0o077 != 0 {
        return Err(format!(
            "the token file {} can be read by others (mode {:o}): its tokens are not used; run `chmod 600 {}` if nobody else read it, else log in again",
            path.display(),
            meta.mode() & 0o777,
            path.display()
        ));
    }
    Ok(())
}

#[cfg(not(unix))]
fn check_private(_path: &Path) -> Result<(), String> {
    Ok(())
}

/// Writes `bytes` to `path` whole or not at all (a temporary file renamed
/// over it), readable and writable by its owner only, in a directory only
/// its owner can enter.
fn write_private(path: &Path, bytes: &[u8]) -> Result<(), String> {
    use std::io::Write;
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder
        .create(dir)
        .map_err(|e| format!("cannot make the token directory {}: {e}", dir.display()))?;
    let temporary = dir.join(format!(
        ".{}.{}.tmp",
        path.file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("tokens"),
        std::process::id()
    ));
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let written = (|| {
        let mut file = options.open(&temporary)?;
        // A file that existed (a crash mid-write) keeps its mode: set it.
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
        }
        file.write_all(bytes)?;
        file.sync_all()?;
        std::fs::rename(&temporary, path)
    })();
    written.map_err(|e| {
        let _ = std::fs::remove_file(&temporary);
        format!("cannot write the token file {}: {e}", path.display())
    })
}

// ---------------------------------------------------------------------------
// The HTTP client of the OAuth flows.

/// Every HTTP request of the OAuth flows (metadata, registration, tokens):
/// the import's TLS, a bounded body, and never a secret over plain HTTP
/// to another machine.
struct Fetch {
    follow: reqwest::Client,
    stop: reqwest::Client,
    allow_http: bool,
}

impl Fetch {
    fn new(options: &HttpOptions) -> Result<Fetch, String> {
        let allow_http = options.allow_http;
        let build = |redirect: reqwest::redirect::Policy| -> Result<reqwest::Client, String> {
            reqwest::Client::builder()
                .tls_backend_preconfigured(super::http::tls_config(&options.ca)?)
                .timeout(OAUTH_HTTP_TIMEOUT)
                .redirect(redirect)
                .build()
                .map_err(|e| format!("cannot make the OAuth HTTP client: {e}"))
        };
        let follow = reqwest::redirect::Policy::custom(move |attempt| {
            if attempt.previous().len() > 10 {
                attempt.error("more than 10 redirects")
            } else if let Err(e) = check_url(attempt.url().as_str(), allow_http) {
                attempt.error(e)
            } else {
                attempt.follow()
            }
        });
        Ok(Fetch {
            follow: build(follow)?,
            stop: build(reqwest::redirect::Policy::none())?,
            allow_http,
        })
    }
}

/// A plain message as the error of an OAuth HTTP request.
#[derive(Debug)]
struct FetchError(String);

impl fmt::Display for FetchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for FetchError {}

impl OAuthHttpClient for Fetch {
    fn execute(&self, request: OAuthHttpRequest) -> OAuthHttpClientFuture<'_> {
        let redirect = request.redirect_policy;
        let request = request.request;
        Box::pin(async move {
            let fail = |message: String| -> rmcp::transport::auth::OAuthHttpClientError {
                Box::new(FetchError(message))
            };
            check_url(&request.uri().to_string(), self.allow_http).map_err(fail)?;
            let request = reqwest::Request::try_from(request)
                .map_err(|e| fail(format!("a malformed OAuth request: {e}")))?;
            let client = match redirect {
                OAuthHttpRedirectPolicy::Stop => &self.stop,
                _ => &self.follow,
            };
            let url = request.url().clone();
            let mut response = client.execute(request).await.map_err(|e| {
                fail(format!(
                    "{}{}: {}",
                    url.origin().ascii_serialization(),
                    url.path(),
                    describe(&e)
                ))
            })?;
            let mut builder = oauth2::http::Response::builder().status(response.status());
            for (name, value) in response.headers() {
                builder = builder.header(name, value);
            }
            let mut body = Vec::new();
            while let Some(chunk) = response
                .chunk()
                .await
                .map_err(|e| fail(format!("reading an OAuth response: {}", describe(&e))))?
            {
                if body.len() + chunk.len() > MAX_OAUTH_BODY {
                    return Err(fail(format!(
                        "an OAuth response from {} is over {MAX_OAUTH_BODY} bytes",
                        url.origin().ascii_serialization()
                    )));
                }
                body.extend_from_slice(&chunk);
            }
            builder.body(body).map_err(|e| fail(e.to_string()))
        })
    }
}

// ---------------------------------------------------------------------------
// The authorization of one server.

/// One server's authorization, shared by every session with it (a
/// restarted session keeps its tokens).
pub(crate) struct Authorization {
    server: String,
    options: OAuth,
    fetch: Arc<Fetch>,
    store: TokenFile,
    manager: tokio::sync::Mutex<Option<AuthorizationManager>>,
    /// Why the last request could not be authorized, for the call's error.
    failure: Mutex<Option<String>>,
}

impl fmt::Debug for Authorization {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Authorization")
            .field("server", &self.server)
            .field("tokens", &self.store.path())
            .finish_non_exhaustive()
    }
}

impl Authorization {
    pub(crate) fn new(
        server: &str,
        options: OAuth,
        http: &HttpOptions,
    ) -> Result<Authorization, String> {
        let dir = match &options.tokens {
            Some(dir) => dir.clone(),
            None => OAuth::default_token_dir().ok_or(
                "no directory for OAuth tokens: neither XDG_CONFIG_HOME nor HOME is set (give one with OAuth::token_dir)",
            )?,
        };
        if let Identity::Registered { id, .. } | Identity::Machine { id, .. } = &options.identity
            && id.is_empty()
        {
            return Err("the OAuth client ID is empty".to_owned());
        }
        Ok(Authorization {
            server: server.to_owned(),
            fetch: Arc::new(Fetch::new(http)?),
            store: TokenFile::new(&dir, server),
            options,
            manager: tokio::sync::Mutex::new(None),
            failure: Mutex::new(None),
        })
    }

    /// The file the tokens are kept in.
    pub(crate) fn token_file(&self) -> &Path {
        self.store.path()
    }

    /// Why the last request could not be authorized, taken.
    pub(crate) fn take_failure(&self) -> Option<String> {
        self.failure
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
    }

    fn fail(&self, message: String) -> String {
        let message = self.redact(message);
        *self.failure.lock().unwrap_or_else(PoisonError::into_inner) = Some(message.clone());
        message
    }

    /// `text` with every secret this authorization knows replaced.
    pub(crate) fn redact(&self, mut text: String) -> String {
        let mut secrets = self.store.secrets();
        match &self.options.identity {
            Identity::Registered {
                secret: Some(secret),
                ..
            }
            | Identity::Machine { secret, .. } => secrets.push(secret.0.clone()),
            _ => {}
        }
        for secret in secrets {
            if secret.len() >= 4 {
                text = text.replace(&secret, "[redacted]");
            }
        }
        text
    }

    async fn manager(&self) -> Result<AuthorizationManager, String> {
        let fetch: Arc<dyn OAuthHttpClient> = self.fetch.clone();
        let mut manager =
            AuthorizationManager::new_with_oauth_http_client(self.server.as_str(), fetch)
                .await
                .map_err(|e| format!("OAuth: {e}"))?;
        manager.set_credential_store(self.store.clone());
        Ok(manager)
    }

    /// The access token to send, refreshed first when it expired; `None`
    /// when there is none (the server's `401` then says how to get one).
    async fn token(&self) -> Result<Option<String>, String> {
        let mut slot = self.manager.lock().await;
        if slot.is_none() {
            let Some(body) = self.store.read().map_err(|e| self.fail(e))? else {
                return Ok(None);
            };
            if body.credentials.token_response.is_none() {
                return Ok(None);
            }
            let mut manager = self.manager().await?;
            // Discovery again (the token endpoint, for refreshes), then the
            // stored client, with its secret when it has one.
            match manager.initialize_from_store().await {
                Ok(true) => {}
                Ok(false) => return Ok(None),
                Err(e) => return Err(self.fail(format!("OAuth discovery failed: {e}"))),
            }
            let secret = body
                .client_secret
                .clone()
                .or_else(|| match &self.options.identity {
                    Identity::Registered {
                        id,
                        secret: Some(secret),
                    } if *id == body.credentials.client_id => Some(secret.0.clone()),
                    _ => None,
                });
            if let Some(secret) = secret {
                self.store.set_secret(Some(secret.clone()));
                let config = rmcp::transport::auth::OAuthClientConfig::new(
                    body.credentials.client_id.clone(),
                    format!("http://127.0.0.1{CALLBACK_PATH}"),
                )
                .with_client_secret(secret);
                manager
                    .configure_client(config)
                    .map_err(|e| self.fail(format!("OAuth: {e}")))?;
            }
            *slot = Some(manager);
        }
        let manager = slot.as_ref().expect("set above");
        match manager.get_access_token().await {
            Ok(token) => Ok(Some(token)),
            Err(AuthError::AuthorizationRequired) => Ok(None),
            Err(e) => Err(self.fail(format!("cannot refresh the access token: {e}"))),
        }
    }

    /// After a `401` for `sent`: a refreshed token, when the refresh token
    /// still works.
    async fn refresh(&self, sent: &str) -> Result<Option<String>, String> {
        let slot = self.manager.lock().await;
        let Some(manager) = slot.as_ref() else {
            return Ok(None);
        };
        match manager.refresh_token().await {
            Ok(tokens) => {
                let fresh = tokens.access_token().secret().clone();
                Ok((fresh != sent).then_some(fresh))
            }
            Err(AuthError::AuthorizationRequired | AuthError::TokenRefreshRejected(_)) => Ok(None),
            Err(e) => Err(self.fail(format!("cannot refresh the access token: {e}"))),
        }
    }

    /// What to tell the person when a login is needed and none can be
    /// done here.
    fn login_needed(&self, why: &str) -> String {
        let how = match &self.options.login_hint {
            Some(hint) => format!("log in with `{hint}`"),
            None => "log in (Import::login, or OAuth::browser for a login on first use)".to_owned(),
        };
        format!(
            "{} needs an OAuth authorization and {why}: {how}, or give the import client credentials",
            self.server
        )
    }

    /// Authorizes after the server's challenge (`401`, or `403` with
    /// `insufficient_scope` when `step_up`): new tokens in the file, or
    /// the reason there are none.
    async fn authorize(&self, challenge: Option<&str>, step_up: bool) -> Result<(), String> {
        let mut slot = self.manager.lock().await;
        let rejected = self.store.take_rejected();
        let interactive = self.options.is_interactive();
        if !interactive && !matches!(self.options.identity, Identity::Machine { .. }) {
            let why = if rejected {
                "the authorization server rejected its refresh token (revoked, or expired)"
            } else if step_up {
                "its tokens lack a scope it asks for"
            } else if self.store.read().ok().flatten().is_some() {
                "its saved tokens no longer work"
            } else {
                "none is saved yet"
            };
            return Err(self.fail(self.login_needed(why)));
        }
        let mut manager = self.manager().await?;
        let metadata = manager
            .resolve_metadata_from_challenge(challenge)
            .await
            .map_err(|e| self.fail(format!("OAuth discovery for {} failed: {e}", self.server)))?;
        let metadata = metadata.metadata;
        manager.set_metadata(metadata.clone());
        // The scopes: the user's; else, stepping up, those held and those
        // the challenge names; else the server's choice (its challenge,
        // else its resource's `scopes_supported`).
        let challenged: Vec<String> = challenge
            .and_then(|c| {
                let base = reqwest::Url::parse(&self.server).ok()?;
                WWWAuthenticateParams::parse(c, &base).scope
            })
            .map(|s| s.split_whitespace().map(str::to_owned).collect())
            .unwrap_or_default();
        let scopes: Vec<String> = if !self.options.scopes.is_empty() {
            let mut scopes = self.options.scopes.clone();
            if step_up {
                scopes.extend(challenged);
            }
            dedup(scopes)
        } else if step_up {
            let held = self
                .store
                .read()
                .ok()
                .flatten()
                .map(|b| b.credentials.granted_scopes)
                .unwrap_or_default();
            dedup(held.into_iter().chain(challenged).collect())
        } else {
            manager.select_initial_scopes(&[]).await
        };
        let result = match &self.options.identity {
            Identity::Machine { id, secret } => {
                let config = ClientCredentialsConfig::ClientSecret {
                    client_id: id.clone(),
                    client_secret: secret.0.clone(),
                    scopes: scopes.clone(),
                    resource: Some(self.server.clone()),
                };
                self.store.set_secret(None);
                async {
                    manager.validate_client_credentials_metadata(&config)?;
                    manager.configure_client_credentials(&config)?;
                    manager.exchange_client_credentials(&config).await
                }
                .await
                .map(|_| manager)
                .map_err(|e| format!("the client credentials grant failed: {e}"))
            }
            _ => self.log_in(manager, &metadata, scopes).await,
        };
        match result {
            Ok(manager) => {
                *slot = Some(manager);
                Ok(())
            }
            Err(e) => {
                *slot = None;
                Err(self.fail(e))
            }
        }
    }

    /// The authorization code flow with a person: the loopback listener,
    /// the client's identity, the browser, the code, the tokens.
    async fn log_in(
        &self,
        mut manager: AuthorizationManager,
        metadata: &rmcp::transport::auth::AuthorizationMetadata,
        scopes: Vec<String>,
    ) -> Result<AuthorizationManager, String> {
        let Some(browser) = self.options.browser.clone() else {
            return Err(self.login_needed("no browser was given to log in with"));
        };
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", self.options.redirect_port))
            .await
            .map_err(|e| {
                format!(
                    "cannot listen on 127.0.0.1:{} for the login's redirect: {e}",
                    self.options.redirect_port
                )
            })?;
        let port = listener.local_addr().map_err(|e| e.to_string())?.port();
        let redirect_uri = format!("http://127.0.0.1:{port}{CALLBACK_PATH}");
        let mut request = AuthorizationRequest::new(&redirect_uri).with_scopes(scopes.clone());
        self.store.set_secret(None);
        match &self.options.identity {
            Identity::Registered { id, secret } => {
                request = request.with_preregistered_client(id);
                if let Some(secret) = secret {
                    request = request.with_client_secret(&secret.0);
                    self.store.set_secret(Some(secret.0.clone()));
                }
            }
            Identity::Dynamic { name, metadata_url } => {
                let cimd = metadata
                    .additional_fields
                    .get("client_id_metadata_document_supported")
                    .and_then(serde_json::Value::as_bool)
                    .unwrap_or(false);
                match metadata_url {
                    Some(url) if cimd => request = request.with_client_metadata_url(url),
                    _ if metadata.registration_endpoint.is_some() => {
                        let scope_refs: Vec<&str> = scopes.iter().map(String::as_str).collect();
                        let registered = manager
                            .register_client(name, &redirect_uri, &scope_refs)
                            .await
                            .map_err(|e| format!("dynamic client registration failed: {e}"))?;
                        request = request.with_preregistered_client(&registered.client_id);
                        if let Some(secret) = registered.client_secret {
                            request = request.with_client_secret(&secret);
                            self.store.set_secret(Some(secret));
                        }
                    }
                    _ => {
                        return Err(format!(
                            "the authorization server of {} offers no dynamic client registration{}: give the client ID it registered for you (OAuth::client; --client-id on the command line)",
                            self.server,
                            if metadata_url.is_some() {
                                " and no client ID metadata documents"
                            } else {
                                ""
                            }
                        ));
                    }
                }
            }
            Identity::Machine { .. } => unreachable!("handled by the caller"),
        }
        let session = AuthorizationSession::new(manager, request)
            .await
            .map_err(|(_, e)| format!("cannot start the login: {e}"))?;
        let (callback, listening) = callback_listener(listener);
        let opened = browser.open(session.get_authorization_url());
        if let Err(e) = opened {
            listening.abort();
            return Err(format!("the login was not started: {e}"));
        }
        let answer = tokio::time::timeout(self.options.login_timeout, callback).await;
        listening.abort();
        let query = match answer {
            Ok(Ok(query)) => query,
            Ok(Err(_)) => return Err("the login's redirect listener stopped".to_owned()),
            Err(_) => {
                return Err(format!(
                    "nobody completed the login in the browser within {} s",
                    self.options.login_timeout.as_secs()
                ));
            }
        };
        let url = format!("{redirect_uri}?{query}");
        if let Some((error, description)) = callback_error(&url) {
            return Err(format!(
                "the authorization server refused the login: {error}{}",
                description.map(|d| format!(" ({d})")).unwrap_or_default()
            ));
        }
        let callback = AuthorizationCallback::from_redirect_url(&url)
            .map_err(|e| format!("the login's redirect is unusable: {e}"))?;
        session
            .handle_callback_with_issuer(
                &callback.code,
                &callback.csrf_token,
                callback.issuer.as_deref(),
            )
            .await
            .map_err(|e| format!("exchanging the login's code for tokens failed: {e}"))?;
        Ok(session.auth_manager)
    }

    /// A login now, whatever the file holds: asks the server for its
    /// challenge (an unauthenticated `initialize`), then authorizes.
    pub(crate) async fn login(&self, client: &reqwest::Client) -> Result<(), String> {
        let body = serde_json::json!({
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                       "clientInfo": {"name": "toolprism", "version": env!("CARGO_PKG_VERSION")}}
        });
        let response = client
            .post(&self.server)
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .body(body.to_string())
            .send()
            .await
            .map_err(|e| format!("cannot reach {}: {}", self.server, describe(&e)))?;
        let challenge = response
            .headers()
            .get(http::header::WWW_AUTHENTICATE)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        if challenge.is_none() && response.status().is_success() {
            return Err(format!(
                "{} answers without authorization: there is nothing to log in to",
                self.server
            ));
        }
        self.take_failure();
        self.authorize(challenge.as_deref(), false).await
    }
}

/// `scopes` without repeats, in their first order.
fn dedup(scopes: Vec<String>) -> Vec<String> {
    let mut seen = BTreeSet::new();
    scopes
        .into_iter()
        .filter(|s| !s.is_empty() && seen.insert(s.clone()))
        .collect()
}

/// An `error` in a redirect's query: the error code and its description.
fn callback_error(url: &str) -> Option<(String, Option<String>)> {
    let url = reqwest::Url::parse(url).ok()?;
    let mut error = None;
    let mut description = None;
    for (key, value) in url.query_pairs() {
        match key.as_ref() {
            "error" => error = Some(value.into_owned()),
            "error_description" => description = Some(value.into_owned()),
            _ => {}
        }
    }
    error.map(|e| (e, description))
}

/// Serves the loopback redirect on `listener`: the query of the first
/// request to [`CALLBACK_PATH`] goes to the receiver, and the browser is
/// told it may close the page.
fn callback_listener(
    listener: tokio::net::TcpListener,
) -> (
    tokio::sync::oneshot::Receiver<String>,
    tokio::task::JoinHandle<()>,
) {
    use http_body_util::Full;
    use hyper::service::service_fn;
    let (send, receive) = tokio::sync::oneshot::channel();
    let send = Arc::new(Mutex::new(Some(send)));
    let task = tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                continue;
            };
            let send = send.clone();
            tokio::spawn(async move {
                let service = service_fn(move |request: hyper::Request<hyper::body::Incoming>| {
                    let send = send.clone();
                    async move {
                        let (status, text) = if request.uri().path() == CALLBACK_PATH {
                            let query = request.uri().query().unwrap_or_default().to_owned();
                            let refused = query.split('&').any(|p| p.starts_with("error="));
                            if let Some(send) =
                                send.lock().unwrap_or_else(PoisonError::into_inner).take()
                            {
                                let _ = send.send(query);
                            }
                            if refused {
                                (200, "The login was refused. You can close this page.")
                            } else {
                                (
                                    200,
                                    "Logged in. You can close this page and return to the terminal.",
                                )
                            }
                        } else {
                            (404, "Not found.")
                        };
                        let mut response = hyper::Response::new(Full::new(bytes::Bytes::from(
                            format!(
                                "<!doctype html><meta charset=utf-8><title>toolprism</title><p>{text}</p>\n"
                            ),
                        )));
                        *response.status_mut() =
                            hyper::StatusCode::from_u16(status).unwrap_or_default();
                        response.headers_mut().insert(
                            http::header::CONTENT_TYPE,
                            http::HeaderValue::from_static("text/html; charset=utf-8"),
                        );
                        Ok::<_, std::convert::Infallible>(response)
                    }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    (receive, task)
}

// ---------------------------------------------------------------------------
// The HTTP client of the MCP session.

/// The HTTP client of a Streamable HTTP session: reqwest, and the server's
/// authorization when the import has one (tokens attached, refreshed,
/// obtained and widened as the server's answers ask).
#[derive(Clone)]
pub(crate) struct SessionClient {
    pub(crate) http: reqwest::Client,
    pub(crate) auth: Option<Arc<Authorization>>,
    /// The last HTTP failure, with its causes (rmcp's own message drops
    /// them: "error sending request" without the certificate it refused).
    pub(crate) failure: Arc<Mutex<Option<String>>>,
}

impl SessionClient {
    /// The last HTTP failure, taken.
    pub(crate) fn take_failure(&self) -> Option<String> {
        self.failure
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
    }

    fn note<T>(&self, result: Result<T, HttpError>) -> Result<T, HttpError> {
        if let Err(StreamableHttpError::Client(e)) = &result {
            *self.failure.lock().unwrap_or_else(PoisonError::into_inner) = Some(describe(e));
        }
        result
    }
}

type HttpError = StreamableHttpError<reqwest::Error>;

impl SessionClient {
    /// Runs `call` with the token, reacting to the server's verdicts.
    async fn run<T, F, Fut>(&self, given: Option<String>, call: F) -> Result<T, HttpError>
    where
        F: Fn(Option<String>) -> Fut,
        Fut: Future<Output = Result<T, HttpError>>,
    {
        let Some(auth) = &self.auth else {
            return self.note(call(given).await);
        };
        let refused = |message: String| HttpError::Auth(AuthError::AuthorizationFailed(message));
        let mut step_ups = 0;
        let mut refreshed = false;
        let mut authorized = false;
        let mut token = auth.token().await.map_err(refused)?;
        loop {
            match call(token.clone()).await {
                Err(StreamableHttpError::AuthRequired(challenge)) => {
                    let challenge = challenge.www_authenticate_header;
                    if let Some(sent) = &token
                        && !refreshed
                    {
                        refreshed = true;
                        if let Some(fresh) = auth.refresh(sent).await.map_err(refused)? {
                            token = Some(fresh);
                            continue;
                        }
                    }
                    if authorized {
                        return Err(refused(auth.fail(format!(
                            "{} refused the token it was just given",
                            auth.server
                        ))));
                    }
                    authorized = true;
                    auth.authorize(Some(&challenge), false)
                        .await
                        .map_err(refused)?;
                    token = auth.token().await.map_err(refused)?;
                }
                Err(StreamableHttpError::InsufficientScope(challenge)) => {
                    if step_ups >= auth.options.max_step_ups {
                        return Err(refused(auth.fail(format!(
                            "{} still refuses the request for lack of scope after {step_ups} wider authorization{}: {}",
                            auth.server,
                            if step_ups == 1 { "" } else { "s" },
                            challenge.www_authenticate_header
                        ))));
                    }
                    step_ups += 1;
                    auth.authorize(Some(&challenge.www_authenticate_header), true)
                        .await
                        .map_err(refused)?;
                    token = auth.token().await.map_err(refused)?;
                }
                other => return self.note(other),
            }
        }
    }
}

impl StreamableHttpClient for SessionClient {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, HttpError> {
        self.run(auth_header, |token| {
            self.http.post_message(
                uri.clone(),
                message.clone(),
                session_id.clone(),
                token,
                custom_headers.clone(),
            )
        })
        .await
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<StreamableHttpPostResponse, HttpError> {
        self.run(auth_header, |token| {
            self.http.post_message_with_max_sse_event_size(
                uri.clone(),
                message.clone(),
                session_id.clone(),
                token,
                custom_headers.clone(),
                max_sse_event_size,
            )
        })
        .await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, HttpError> {
        self.run(auth_header, |token| {
            self.http.post_message_with_response_limits(
                uri.clone(),
                message.clone(),
                session_id.clone(),
                token,
                custom_headers.clone(),
                limits,
            )
        })
        .await
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), HttpError> {
        self.run(auth_header, |token| {
            self.http.delete_session(
                uri.clone(),
                session_id.clone(),
                token,
                custom_headers.clone(),
            )
        })
        .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<BoxedSseResponse, HttpError> {
        self.run(auth_header, |token| {
            self.http.get_stream(
                uri.clone(),
                session_id.clone(),
                last_event_id.clone(),
                token,
                custom_headers.clone(),
            )
        })
        .await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<BoxedSseResponse, HttpError> {
        self.run(auth_header, |token| {
            self.http.get_stream_with_max_sse_event_size(
                uri.clone(),
                session_id.clone(),
                last_event_id.clone(),
                token,
                custom_headers.clone(),
                max_sse_event_size,
            )
        })
        .await
    }
}
