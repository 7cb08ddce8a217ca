//! What bounds the Streamable HTTP service (W3 in `docs/contract.md`):
//! requests at once, sessions, calls in flight per session, idle sessions,
//! and the body size ([`McpServer::with_max_message_bytes`]). rmcp keeps the
//! sessions ([`LocalSessionManager`]) and has no knob for the first three;
//! they are kept here, in front of it, and so is the expiry of idle
//! sessions, which rmcp's own keep-alive would apply to a session whose
//! call is still running.
//!
//! Every refusal is an HTTP status with a JSON-RPC error body (code
//! [`REFUSED`], `data.reason` naming the limit, a one-line message), which
//! MCP clients surface as the error of that one request.

use std::collections::{HashMap, HashSet};
use std::convert::Infallible;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Once, PoisonError, Weak};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::header::{CONTENT_TYPE, RETRY_AFTER};
use http::{HeaderValue, Method, StatusCode};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper::Response;
use hyper::body::{Body, Frame, SizeHint};
use rmcp::transport::streamable_http_server::SessionManager;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use toolprism_core::{Caller, CancellationToken};

use crate::McpServer;
use crate::auth::BearerAuth;
use crate::http::HttpResponse;
use crate::sent::envelope;
use crate::store::Store;

/// The default of [`McpServer::with_max_requests`]: 256 requests at once.
pub const DEFAULT_MAX_REQUESTS: usize = 256;

/// The default of [`McpServer::with_max_sessions`]: 128 sessions.
pub const DEFAULT_MAX_SESSIONS: usize = 128;

/// The default of [`McpServer::with_max_calls_per_session`]: 16 calls.
pub const DEFAULT_MAX_CALLS_PER_SESSION: usize = 16;

/// The default of [`McpServer::with_session_idle_timeout`]: 5 minutes, as
/// rmcp's keep-alive.
pub const DEFAULT_SESSION_IDLE_TIMEOUT: Duration = Duration::from_secs(300);

/// The JSON-RPC error code of every request the HTTP service refuses
/// before it reaches the protocol (a limit, a missing credential): `-32000`,
/// the first of JSON-RPC's implementation-defined server errors. The
/// error's `data.reason` says which: `"max_requests"`, `"max_sessions"`,
/// `"max_calls_per_session"`, `"unauthorized"`.
pub const REFUSED: i64 = -32000;

/// A response refusing a request (boxed: the `Err` of a `Result` stays
/// small on the path that lets requests in).
pub(crate) type Refused = Box<HttpResponse>;

/// The HTTP settings of an [`McpServer`]: who may connect, and the limits.
#[derive(Debug, Clone)]
pub(crate) struct HttpSettings {
    pub(crate) auth: Option<Arc<BearerAuth>>,
    pub(crate) allow_unauthenticated_network: bool,
    max_requests: usize,
    max_sessions: usize,
    max_calls_per_session: usize,
    session_idle_timeout: Duration,
}

impl HttpSettings {
    /// How long a session may be idle.
    pub(crate) fn session_idle_timeout(&self) -> Duration {
        self.session_idle_timeout
    }
}

impl Default for HttpSettings {
    fn default() -> Self {
        HttpSettings {
            auth: None,
            allow_unauthenticated_network: false,
            max_requests: DEFAULT_MAX_REQUESTS,
            max_sessions: DEFAULT_MAX_SESSIONS,
            max_calls_per_session: DEFAULT_MAX_CALLS_PER_SESSION,
            session_idle_timeout: DEFAULT_SESSION_IDLE_TIMEOUT,
        }
    }
}

/// The limits, set on the server (each a documented setting with its
/// error; the [module docs](crate#limits) have the whole picture).
impl McpServer {
    /// At most `n` HTTP requests are read or answered at once (at least
    /// 1), across all clients: a request's slot is held from its first byte
    /// until its response ends, so a running call, and an open SSE stream
    /// (`GET`), hold one; a call holds its slot until it ends, even when
    /// its client has left (rmcp lets a legacy session's call run). One more is answered at once with `503`,
    /// `Retry-After: 1` and a JSON-RPC error ([`REFUSED`], reason
    /// `"max_requests"`). With the [body limit](McpServer::with_max_message_bytes),
    /// this bounds what requests can make the server hold: `n` times that
    /// many bytes, at most. Default [`DEFAULT_MAX_REQUESTS`].
    ///
    /// ```
    /// use std::time::Duration;
    /// use toolprism::mcp::McpServer;
    ///
    /// let registry = toolprism::Registry::builder().build().unwrap();
    /// // A small server: 32 requests at once of at most 1 MiB each (32 MiB
    /// // of bodies at most), 8 sessions of 4 calls each, idle for 1 minute.
    /// let server = McpServer::new(registry)
    ///     .with_max_message_bytes(1024 * 1024)
    ///     .with_max_requests(32)
    ///     .with_max_sessions(8)
    ///     .with_max_calls_per_session(4)
    ///     .with_session_idle_timeout(Duration::from_secs(60));
    /// # let _ = server;
    /// ```
    pub fn with_max_requests(mut self, n: usize) -> Self {
        self.http.max_requests = n.max(1);
        self
    }

    /// At most `n` sessions at once (at least 1; sessions are kept for
    /// clients before `2026-07-28` unless the service runs stateless). An
    /// `initialize` past it is answered with `503` and a JSON-RPC error
    /// carrying its id ([`REFUSED`], reason `"max_sessions"`); the client
    /// may retry once a session has ended or [expired](Self::with_session_idle_timeout).
    /// Default [`DEFAULT_MAX_SESSIONS`]. An example is on
    /// [`with_max_requests`](Self::with_max_requests).
    pub fn with_max_sessions(mut self, n: usize) -> Self {
        self.http.max_sessions = n.max(1);
        self
    }

    /// At most `n` `tools/call` requests of one session run at once (at
    /// least 1): a call counts until it ends, even when its client has left.
    /// One more is answered with `429` and a JSON-RPC error carrying its id ([`REFUSED`], reason `"max_calls_per_session"`); it
    /// never reaches the registry, so the session log does not hold it.
    /// Stateless requests (every `2026-07-28` request, and all of them in
    /// stateless mode) belong to no session: [`with_max_requests`](Self::with_max_requests)
    /// bounds them. Default [`DEFAULT_MAX_CALLS_PER_SESSION`]. An example
    /// is on [`with_max_requests`](Self::with_max_requests).
    pub fn with_max_calls_per_session(mut self, n: usize) -> Self {
        self.http.max_calls_per_session = n.max(1);
        self
    }

    /// A session that has had no request for `timeout`, and has no `POST`
    /// or `DELETE` still being answered (a running call keeps its session),
    /// is closed: its memory is freed, and its id then gets `404`, which
    /// tells a client to start a new session. An open `GET` stream alone
    /// does not keep a session. Checked about four times per timeout (at
    /// most once a second). Default [`DEFAULT_SESSION_IDLE_TIMEOUT`]. An
    /// example is on [`with_max_requests`](Self::with_max_requests).
    pub fn with_session_idle_timeout(mut self, timeout: Duration) -> Self {
        self.http.session_idle_timeout = timeout.max(Duration::from_millis(1));
        self
    }
}

/// The `Mcp-Session-Id` header.
const SESSION_HEADER: &str = "mcp-session-id";

/// What the service knows of one session.
#[derive(Debug)]
struct Session {
    /// When the last request for it arrived or ended.
    last: Instant,
    /// Its `POST` and `DELETE` requests being answered.
    open: usize,
    /// Its `tools/call` requests being answered.
    calls: usize,
    /// The subject of the caller that opened it, when authenticated: only
    /// that subject may use it.
    owner: Option<Arc<str>>,
    /// When its record in a shared store was last given a new idle time.
    refreshed: Instant,
}

impl Session {
    fn new(owner: Option<Arc<str>>) -> Self {
        Session {
            last: Instant::now(),
            open: 0,
            calls: 0,
            owner,
            refreshed: Instant::now(),
        }
    }
}

/// The limits of one service, shared by its clones.
pub(crate) struct Gate {
    settings: HttpSettings,
    /// Whether rmcp keeps sessions (`legacy_session_mode`).
    sessions_kept: bool,
    requests: Arc<Semaphore>,
    manager: Arc<LocalSessionManager>,
    table: Mutex<HashMap<Arc<str>, Session>>,
    /// Serializes the decisions to admit an `initialize`.
    admission: tokio::sync::Mutex<()>,
    /// Admitted `initialize` requests not answered yet.
    pending: AtomicUsize,
    reaper: Once,
    stop: CancellationToken,
    /// A store shared with other replicas, which restore this one's
    /// sessions (W16): their owners are kept there.
    store: Option<Store>,
}

impl std::fmt::Debug for Gate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gate")
            .field("settings", &self.settings)
            .field("sessions_kept", &self.sessions_kept)
            .finish_non_exhaustive()
    }
}

impl Gate {
    pub(crate) fn new(
        settings: HttpSettings,
        sessions_kept: bool,
        manager: Arc<LocalSessionManager>,
        stop: CancellationToken,
        store: Option<Store>,
    ) -> Self {
        Gate {
            store,
            requests: Arc::new(Semaphore::new(settings.max_requests)),
            settings,
            sessions_kept,
            manager,
            table: Mutex::new(HashMap::new()),
            admission: tokio::sync::Mutex::new(()),
            pending: AtomicUsize::new(0),
            reaper: Once::new(),
            stop,
        }
    }

    /// rmcp's session manager, without its own idle expiry: the reaper
    /// here expires sessions, and knows which have a call running.
    pub(crate) fn session_manager() -> LocalSessionManager {
        let mut manager = LocalSessionManager::default();
        manager.session_config.keep_alive = None;
        manager
    }

    pub(crate) fn auth(&self) -> Option<&BearerAuth> {
        self.settings.auth.as_deref()
    }

    fn table(&self) -> std::sync::MutexGuard<'_, HashMap<Arc<str>, Session>> {
        self.table.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Starts the task that expires idle sessions, once, from the first
    /// request (the service may be made outside a runtime).
    pub(crate) fn start_reaper(self: &Arc<Self>) {
        if !self.sessions_kept {
            return;
        }
        self.reaper.call_once(|| {
            let gate = Arc::downgrade(self);
            let stop = self.stop.clone();
            let tick = (self.settings.session_idle_timeout / 4)
                .clamp(Duration::from_millis(10), Duration::from_secs(1));
            tokio::spawn(reap(gate, stop, tick));
        });
    }

    /// A slot for one request, or the `503` refusing it.
    pub(crate) fn slot(&self) -> Result<OwnedSemaphorePermit, Refused> {
        Arc::clone(&self.requests).try_acquire_owned().map_err(|_| {
            let mut response = refusal(
                StatusCode::SERVICE_UNAVAILABLE,
                None,
                "max_requests",
                &format!(
                    "this server is answering {} requests, its limit; retry shortly",
                    self.settings.max_requests
                ),
            );
            response
                .headers_mut()
                .insert(RETRY_AFTER, HeaderValue::from_static("1"));
            Box::new(response)
        })
    }

    /// Admits a request whose body is `body` to its session, or answers it
    /// (a limit, a session that is another caller's).
    pub(crate) async fn admit(
        self: &Arc<Self>,
        parts: &http::request::Parts,
        body: &[u8],
        caller: Option<&Caller>,
    ) -> Result<Admission, Refused> {
        let mut admission = Admission::default();
        let message = std::str::from_utf8(body).map(envelope).unwrap_or_default();
        let call = parts.method == Method::POST
            && message.method.as_deref() == Some("tools/call")
            && message.id.is_some();
        admission.call = call;
        if !self.sessions_kept {
            return Ok(admission);
        }
        let subject: Option<Arc<str>> = caller.map(|c| Arc::from(c.subject()));
        let session = parts
            .headers
            .get(SESSION_HEADER)
            .and_then(|v| v.to_str().ok());
        let Some(session) = session else {
            if parts.method == Method::POST && message.method.as_deref() == Some("initialize") {
                admission.pending = Some(self.admit_initialize(message.id.as_deref()).await?);
                admission.opened_by = Some(subject);
            }
            return Ok(admission);
        };
        let id: Arc<str> = Arc::from(session);
        let known = self.table().contains_key(&id);
        if !known && let Some(store) = &self.store {
            // A session another replica opened (rmcp restores it from the
            // store): its owner is the store's.
            let idle = self.settings.session_idle_timeout;
            match store.backend().session(&id, idle).await {
                Ok(Some(record)) => {
                    let owner: Option<Arc<str>> = record.owner.as_deref().map(Arc::from);
                    if owner.is_some() && owner != subject {
                        return Err(Box::new(not_found()));
                    }
                    self.table()
                        .entry(Arc::clone(&id))
                        .or_insert_with(|| Session::new(owner));
                }
                Ok(None) => {}
                Err(e) => {
                    return Err(Box::new(refusal(
                        StatusCode::SERVICE_UNAVAILABLE,
                        message.id.as_deref(),
                        "store",
                        &format!(
                            "this session lives in the session store, which cannot be reached: {e}"
                        ),
                    )));
                }
            }
        }
        // A session rmcp holds that was never registered here (its
        // `initialize` answer was dropped on the way out).
        let known = self.table().contains_key(&id);
        if !known && self.manager.has_session(&id).await.unwrap_or(false) {
            self.table()
                .entry(Arc::clone(&id))
                .or_insert_with(|| Session::new(None));
        }
        let mut table = self.table();
        let Some(entry) = table.get_mut(&id) else {
            // rmcp answers `404` for a session it does not hold.
            return Ok(admission);
        };
        if entry.owner.is_some() && entry.owner != subject {
            // Another caller's session: as if it did not exist.
            return Err(Box::new(not_found()));
        }
        entry.last = Instant::now();
        if let Some(store) = &self.store
            && entry.refreshed.elapsed() >= self.settings.session_idle_timeout / 4
        {
            // Its record in the store lives as long as it is used, on
            // any replica.
            entry.refreshed = Instant::now();
            let (store, id, idle) = (
                store.clone(),
                Arc::clone(&id),
                self.settings.session_idle_timeout,
            );
            tokio::spawn(async move {
                let _ = store.backend().save_session(&id, None, None, idle).await;
            });
        }
        if call && entry.calls >= self.settings.max_calls_per_session {
            return Err(Box::new(refusal(
                StatusCode::TOO_MANY_REQUESTS,
                message.id.as_deref(),
                "max_calls_per_session",
                &format!(
                    "this session has {} calls running, its limit; wait for one to end, then call again",
                    self.settings.max_calls_per_session
                ),
            )));
        }
        if parts.method == Method::POST || parts.method == Method::DELETE {
            entry.open += 1;
            entry.calls += usize::from(call);
            admission.guard = Some(SessionGuard {
                gate: Arc::clone(self),
                id: Arc::clone(&id),
                call,
            });
        }
        if parts.method == Method::DELETE {
            admission.deleting = Some(id);
        }
        Ok(admission)
    }

    /// Room for one more session, or the `503` refusing it.
    async fn admit_initialize(self: &Arc<Self>, id: Option<&str>) -> Result<Pending, Refused> {
        let _one_at_a_time = self.admission.lock().await;
        let live = self.manager.sessions.read().await.len();
        // A session being opened may already be in rmcp's map: counted
        // twice for a moment, never missed.
        if live + self.pending.load(Ordering::SeqCst) >= self.settings.max_sessions {
            let mut response = refusal(
                StatusCode::SERVICE_UNAVAILABLE,
                id,
                "max_sessions",
                &format!(
                    "this server holds {} sessions, its limit; retry once one ends or has been idle for {} s",
                    self.settings.max_sessions,
                    self.settings.session_idle_timeout.as_secs_f64()
                ),
            );
            response
                .headers_mut()
                .insert(RETRY_AFTER, HeaderValue::from_static("5"));
            return Err(Box::new(response));
        }
        self.pending.fetch_add(1, Ordering::SeqCst);
        Ok(Pending(Arc::clone(self)))
    }

    /// One sweep: forget sessions rmcp no longer holds, take in those it
    /// holds unregistered, close those idle past the timeout.
    async fn sweep(&self) {
        let live: HashSet<Arc<str>> = self.manager.sessions.read().await.keys().cloned().collect();
        let expired: Vec<Arc<str>> = {
            let mut table = self.table();
            table.retain(|id, _| live.contains(id));
            for id in &live {
                table
                    .entry(Arc::clone(id))
                    .or_insert_with(|| Session::new(None));
            }
            let idle = self.settings.session_idle_timeout;
            let expired: Vec<Arc<str>> = table
                .iter()
                .filter(|(_, s)| s.open == 0 && s.last.elapsed() >= idle)
                .map(|(id, _)| Arc::clone(id))
                .collect();
            for id in &expired {
                table.remove(id);
            }
            expired
        };
        for id in expired {
            let _ = self.manager.close_session(&id).await;
        }
    }
}

/// Expires idle sessions every `tick` until the service is gone or stopped.
async fn reap(gate: Weak<Gate>, stop: CancellationToken, tick: Duration) {
    loop {
        tokio::select! {
            () = tokio::time::sleep(tick) => {}
            () = stop.cancelled() => return,
        }
        let Some(gate) = gate.upgrade() else { return };
        gate.sweep().await;
    }
}

/// An admitted `initialize`, counted until its session is registered.
struct Pending(Arc<Gate>);

impl Drop for Pending {
    fn drop(&mut self) {
        self.0.pending.fetch_sub(1, Ordering::SeqCst);
    }
}

/// A request of a session being answered: the session is not idle, and
/// (for a call) one of its call slots is taken, until the [`Hold`] ends.
struct SessionGuard {
    gate: Arc<Gate>,
    id: Arc<str>,
    call: bool,
}

impl Drop for SessionGuard {
    fn drop(&mut self) {
        if let Some(entry) = self.gate.table().get_mut(&self.id) {
            entry.open = entry.open.saturating_sub(1);
            if self.call {
                entry.calls = entry.calls.saturating_sub(1);
            }
            entry.last = Instant::now();
        }
    }
}

/// What admitting a request left to do once rmcp has answered it.
#[derive(Default)]
pub(crate) struct Admission {
    /// Whether the request is a `tools/call`.
    call: bool,
    guard: Option<SessionGuard>,
    pending: Option<Pending>,
    /// For an `initialize`: the subject opening the session.
    opened_by: Option<Option<Arc<str>>>,
    /// For a `DELETE`: the session.
    deleting: Option<Arc<str>>,
}

/// What a request holds while it is answered: its slot among the
/// [requests at once](McpServer::with_max_requests), and its session's
/// guard. Shared by the response body and, for a `tools/call`, the
/// request's extensions, which the handler holds until the call is over:
/// a client that leaves does not end a legacy session's call (rmcp lets it
/// run), so the call keeps what it holds until it ends.
pub(crate) struct Hold {
    _slot: OwnedSemaphorePermit,
    _session: Option<SessionGuard>,
}

/// A [`Hold`] in a request's extensions.
#[derive(Clone)]
struct Holding {
    _hold: Arc<Hold>,
}

impl Admission {
    /// The request's [`Hold`], with `slot`; for a `tools/call`, put in
    /// `extensions` too.
    pub(crate) fn hold(
        &mut self,
        slot: OwnedSemaphorePermit,
        extensions: &mut http::Extensions,
    ) -> Arc<Hold> {
        let hold = Arc::new(Hold {
            _slot: slot,
            _session: self.guard.take(),
        });
        if self.call {
            extensions.insert(Holding {
                _hold: Arc::clone(&hold),
            });
        }
        hold
    }

    /// rmcp's `response`, holding `hold` until its body ends; a new
    /// session registered (with its owner in a shared store, before the
    /// client can use it elsewhere), a deleted one forgotten.
    pub(crate) async fn finish(
        mut self,
        gate: &Gate,
        response: HttpResponse,
        hold: Arc<Hold>,
    ) -> HttpResponse {
        if let Some(owner) = self.opened_by.take()
            && let Some(id) = response
                .headers()
                .get(SESSION_HEADER)
                .and_then(|v| v.to_str().ok())
        {
            if let Some(store) = &gate.store {
                let idle = gate.settings.session_idle_timeout;
                if let Err(e) = store
                    .backend()
                    .save_session(id, None, Some(owner.as_deref()), idle)
                    .await
                {
                    tracing::warn!("the owner of session {id} could not be stored: {e}");
                }
            }
            gate.table().insert(Arc::from(id), Session::new(owner));
        }
        drop(self.pending.take());
        if let Some(id) = self.deleting.take()
            && response.status().is_success()
        {
            gate.table().remove(&id);
        }
        let (parts, body) = response.into_parts();
        let body = Held { body, _hold: hold };
        Response::from_parts(parts, BoxBody::new(body))
    }
}

/// A response body that holds the request's [`Hold`] until it ends or is
/// dropped (the client left).
struct Held {
    body: BoxBody<Bytes, Infallible>,
    _hold: Arc<Hold>,
}

impl Body for Held {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        Pin::new(&mut self.get_mut().body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

/// `404` for a session this caller cannot use.
fn not_found() -> HttpResponse {
    let mut response =
        Response::new(Full::new(Bytes::from_static(b"Not Found: Session not found")).boxed());
    *response.status_mut() = StatusCode::NOT_FOUND;
    response
}

/// A refusal: `status` with a JSON-RPC error body ([`REFUSED`], `reason`,
/// `message`), for the request `id` (as written) when known.
pub(crate) fn refusal(
    status: StatusCode,
    id: Option<&str>,
    reason: &str,
    message: &str,
) -> HttpResponse {
    let id = id
        .and_then(|id| serde_json::from_str::<serde_json::Value>(id).ok())
        .unwrap_or(serde_json::Value::Null);
    let body = serde_json::json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {"code": REFUSED, "message": message, "data": {"reason": reason}},
    });
    let mut response = Response::new(Full::new(Bytes::from(body.to_string())).boxed());
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}
