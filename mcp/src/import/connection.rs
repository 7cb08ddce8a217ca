//! The connection to one imported server: opened with rmcp's client
//! (a child process, or Streamable HTTP), watched for death, opened again
//! on the next call after one (with a bounded backoff when that fails),
//! and one `tools/call` at a time through it with progress forwarded and
//! `notifications/cancelled` sent when the caller stops waiting.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, CancelledNotificationParam,
    ClientRequest, JsonObject, JsonRpcMessage, ProgressNotificationParam, ProgressToken, RequestId,
    ServerNotification, ServerResult, Tool as McpTool,
};
use rmcp::service::{
    Peer, PeerRequestOptions, RoleClient, RunningService, RxJsonRpcMessage, TxJsonRpcMessage,
};
use rmcp::transport::Transport as McpTransport;
use rmcp::{ServiceError, ServiceExt};
use tokio::sync::mpsc;

use toolprism_core::ToolContext;

use super::relay::{self, Handler, Relay};
use super::source::{INHERITED_ENV, Import, Stderr, Transport};

/// The first wait before reconnecting after a failed attempt; it doubles
/// with each failure up to [`MAX_BACKOFF`].
const FIRST_BACKOFF: Duration = Duration::from_millis(250);

/// The longest wait between two attempts to reach a server that is down.
pub const MAX_BACKOFF: Duration = Duration::from_secs(30);

/// Progress notifications kept for a token nobody listens to yet (a report
/// that overtook the registration of its call).
const EARLY_REPORTS: usize = 64;

/// Why a call did not get the server's answer.
#[derive(Debug)]
pub(crate) enum Failure {
    /// The server could not be reached: nothing was sent.
    Unavailable(String),
    /// The request was sent, and the server went away before answering.
    Gone(String),
    /// The server answered with a JSON-RPC error, or with something that
    /// is not a `tools/call` result.
    Protocol(String),
    /// The server refused the request's authorization, and none could be
    /// had without a person (or the person's login failed).
    Unauthorized(String),
}

/// A live session with the server.
struct Live {
    service: RunningService<RoleClient, Handler>,
    routes: Arc<Routes>,
    /// Which session this is, so that a failure seen by a call of an older
    /// one does not take the new one down.
    generation: u64,
}

enum State {
    Up(Live),
    Down {
        /// Failed attempts since the server went down.
        failures: u32,
        /// No attempt before this.
        retry_at: Instant,
        /// What went wrong last.
        reason: String,
    },
}

/// The connection to one server.
pub(crate) struct Connection {
    import: Import,
    /// `the MCP server "fs" (npx …)`.
    pub(crate) server: String,
    state: tokio::sync::Mutex<State>,
    generations: std::sync::atomic::AtomicU64,
    /// The server's OAuth authorization, shared by its sessions.
    auth: Auth,
    /// Its log messages, requests and list changes, to the calls waiting
    /// on it and to the import's events.
    pub(crate) relay: Arc<Relay>,
    /// The tools as last listed, shared with the [`Imported`](super::Imported)
    /// (weak: the tools hold the connection).
    listing: std::sync::OnceLock<std::sync::Weak<super::Listing>>,
    /// One `tools/list` after `list_changed` at a time, so the last one
    /// read is the one kept.
    refreshing: tokio::sync::Mutex<()>,
}

#[cfg(feature = "client-http")]
type Auth = Option<Arc<super::oauth::Authorization>>;
#[cfg(not(feature = "client-http"))]
type Auth = ();

/// The authorization of `import`, when it has one.
#[cfg(feature = "client-http")]
fn authorization(import: &Import) -> Result<Auth, String> {
    match &import.transport {
        Transport::Http {
            url,
            headers,
            options,
            oauth: Some(oauth),
        } => {
            if headers
                .iter()
                .any(|(name, _)| name.eq_ignore_ascii_case("authorization"))
            {
                return Err(
                    "it has both an Authorization header and OAuth: give one of them".to_owned(),
                );
            }
            super::oauth::Authorization::new(url, oauth.clone(), options)
                .map(|auth| Some(Arc::new(auth)))
        }
        _ => Ok(None),
    }
}

#[cfg(not(feature = "client-http"))]
fn authorization(_import: &Import) -> Result<Auth, String> {
    Ok(())
}

/// How long connecting may take: the connect timeout, and the time a
/// person may take to log in.
fn connect_deadline(import: &Import) -> Duration {
    #[cfg(feature = "client-http")]
    if let Transport::Http {
        oauth: Some(oauth), ..
    } = &import.transport
    {
        return import.connect_timeout + oauth.login_time();
    }
    import.connect_timeout
}

/// Why the last request could not be authorized, when that is why it
/// failed.
#[cfg(feature = "client-http")]
fn auth_failure(auth: &Auth) -> Option<String> {
    auth.as_ref().and_then(|a| a.take_failure())
}

#[cfg(not(feature = "client-http"))]
fn auth_failure(_auth: &Auth) -> Option<String> {
    None
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection")
            .field("server", &self.server)
            .finish_non_exhaustive()
    }
}

/// What connecting found: the server's name for itself and its tools.
pub(crate) struct Opened {
    pub(crate) connection: Arc<Connection>,
    pub(crate) server_name: Option<String>,
    pub(crate) tools: Vec<McpTool>,
}

impl Connection {
    /// Connects and lists every tool (all pages), within the import's
    /// connect timeout.
    pub(crate) async fn open(import: Import) -> Result<Opened, String> {
        let deadline = connect_deadline(&import);
        let auth = authorization(&import)?;
        let relay = Arc::new(Relay::default());
        let opened = tokio::time::timeout(deadline, async {
            let (service, routes) = start(&import, &auth, &relay)
                .await
                .map_err(|e| auth_failure(&auth).unwrap_or(e))?;
            let tools = service
                .peer()
                .list_all_tools()
                .await
                .map_err(|e| format!("tools/list failed: {}", service_error(&e)))?;
            Ok::<_, String>((service, routes, tools))
        })
        .await
        .map_err(|_| {
            format!(
                "it did not answer initialize and tools/list within {} ms",
                deadline.as_millis()
            )
        })??;
        let (service, routes, tools) = opened;
        let server_name = service
            .peer()
            .peer_info()
            .and_then(|info| info.server_info.as_ref().map(|i| i.name.clone()));
        let shown = import.name.clone().or_else(|| server_name.clone());
        relay.set_name(shown.clone().unwrap_or_else(|| "server".to_owned()));
        let server = match &shown {
            Some(name) => format!(
                "the MCP server \"{}\" ({})",
                name.escape_debug(),
                import.source()
            ),
            None => format!("the MCP server {}", import.source()),
        };
        let connection = Arc::new(Connection {
            import,
            server,
            state: tokio::sync::Mutex::new(State::Up(Live {
                service,
                routes,
                generation: 0,
            })),
            generations: std::sync::atomic::AtomicU64::new(0),
            auth,
            relay: relay.clone(),
            listing: std::sync::OnceLock::new(),
            refreshing: tokio::sync::Mutex::new(()),
        });
        relay.set_connection(Arc::downgrade(&connection));
        Ok(Opened {
            connection,
            server_name,
            tools,
        })
    }

    /// A peer of a live session: the current one, or a new one when the
    /// server went away (at once after a death, then after a backoff that
    /// doubles with each failed attempt, up to [`MAX_BACKOFF`]).
    async fn peer(&self) -> Result<(Peer<RoleClient>, Arc<Routes>, u64), Failure> {
        let mut state = self.state.lock().await;
        if let State::Up(live) = &*state {
            if !live.service.peer().is_transport_closed() {
                return Ok((
                    live.service.peer().clone(),
                    live.routes.clone(),
                    live.generation,
                ));
            }
            *state = State::Down {
                failures: 0,
                retry_at: Instant::now(),
                reason: "it closed the connection".to_owned(),
            };
        }
        let State::Down {
            failures,
            retry_at,
            reason,
        } = &*state
        else {
            unreachable!("handled above");
        };
        let now = Instant::now();
        if now < *retry_at {
            return Err(Failure::Unavailable(format!(
                "{} is down ({reason}); the next attempt to reach it is in {} ms",
                self.server,
                (*retry_at - now).as_millis()
            )));
        }
        let failures = *failures;
        let attempt = tokio::time::timeout(
            connect_deadline(&self.import),
            start(&self.import, &self.auth, &self.relay),
        )
        .await;
        match attempt {
            Ok(Ok((service, routes))) => {
                let generation = self
                    .generations
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
                    + 1;
                let peer = service.peer().clone();
                *state = State::Up(Live {
                    service,
                    routes: routes.clone(),
                    generation,
                });
                // A server started again may have other tools: listed again
                // once this call has the session.
                self.relay.tools_changed();
                Ok((peer, routes, generation))
            }
            failed => {
                let reason = match failed {
                    Ok(Err(e)) => auth_failure(&self.auth).unwrap_or(e),
                    _ => format!(
                        "it did not answer initialize within {} ms",
                        self.import.connect_timeout.as_millis()
                    ),
                };
                let wait = backoff(failures + 1);
                let message = format!(
                    "{} could not be restarted ({reason}); the next attempt is in {} ms",
                    self.server,
                    wait.as_millis()
                );
                *state = State::Down {
                    failures: failures + 1,
                    retry_at: Instant::now() + wait,
                    reason,
                };
                Err(Failure::Unavailable(message))
            }
        }
    }

    /// The import's options (naming, presenters, timeouts).
    pub(crate) fn import_options(&self) -> Import {
        self.import.clone()
    }

    /// The tools' shared list, which [`refresh`](Self::refresh) replaces.
    pub(crate) fn set_listing(&self, listing: &Arc<super::Listing>) {
        let _ = self.listing.set(Arc::downgrade(listing));
    }

    /// The server's name in forwarded log messages.
    fn relay_name(&self) -> String {
        self.import
            .name
            .clone()
            .unwrap_or_else(|| self.relay_fallback_name())
    }

    fn relay_fallback_name(&self) -> String {
        match &self.import.transport {
            Transport::Stdio { program, .. } => program.clone(),
            Transport::Http { url, .. } => url.clone(),
        }
    }

    /// After `notifications/tools/list_changed`: lists the tools again and
    /// replaces the import's, named as when connecting; then tells the
    /// import's listeners ([`ImportEvent::ToolsChanged`]). A list that
    /// cannot be used (a name toolprism refuses, a failed `tools/list`)
    /// keeps the tools there were, and says why
    /// ([`ImportEvent::RefreshFailed`]).
    pub(crate) async fn refresh(self: Arc<Self>) {
        let _one = self.refreshing.lock().await;
        self.relay.refresh_started();
        let Some(listing) = self.listing.get().and_then(std::sync::Weak::upgrade) else {
            return;
        };
        let listed = match self.peer().await {
            Ok((peer, _, _)) => peer
                .list_all_tools()
                .await
                .map_err(|e| format!("tools/list failed: {}", service_error(&e))),
            Err(Failure::Unavailable(why) | Failure::Gone(why) | Failure::Protocol(why))
            | Err(Failure::Unauthorized(why)) => Err(why),
        };
        let server = self.relay_name();
        match listed.and_then(|tools| super::name_tools(&self.import, &self, tools, false)) {
            Ok(tools) => {
                listing.set(tools);
                self.relay.emit(super::ImportEvent::ToolsChanged { server });
            }
            Err(message) => self
                .relay
                .emit(super::ImportEvent::RefreshFailed { server, message }),
        }
    }

    /// Takes session `generation` down (its server died under a call):
    /// the next call opens a new one. Dropping the session kills what is
    /// left of a child process's group.
    async fn take_down(&self, generation: u64, reason: &str) {
        let mut state = self.state.lock().await;
        if matches!(&*state, State::Up(live) if live.generation == generation) {
            *state = State::Down {
                failures: 0,
                retry_at: Instant::now(),
                reason: reason.to_owned(),
            };
        }
    }

    /// One `tools/call` of the server's tool `name`: progress reports go to
    /// `cx` as they arrive; dropping the future before the answer (a
    /// timeout, a cancellation) sends `notifications/cancelled`.
    pub(crate) async fn call(
        &self,
        name: &str,
        arguments: JsonObject,
        cx: &ToolContext<'_>,
    ) -> Result<CallToolResult, Failure> {
        // Enrolled first: a request of the server may follow the call at once.
        let (_enrolled, mut relayed) = self.relay.enroll();
        let (peer, routes, generation) = self.peer().await?;
        let params = CallToolRequestParams::new(name.to_owned()).with_arguments(arguments);
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        let handle = match peer
            .send_request_with_option(request, PeerRequestOptions::no_options())
            .await
        {
            Ok(handle) => handle,
            Err(e) => {
                // Not sent: the session had just closed.
                let reason = service_error(&e);
                self.take_down(generation, &reason).await;
                return Err(Failure::Unavailable(format!(
                    "{} had closed the connection ({reason}); it is restarted on the next call",
                    self.server
                )));
            }
        };
        let mut abandon = Abandon {
            peer: peer.clone(),
            id: Some(handle.id.clone()),
        };
        let mut route = Route::open(&routes, handle.progress_token.clone());
        let reports = &mut route.receiver;
        let response = handle.await_response();
        let mut response = std::pin::pin!(response);
        let mut scale = Scale::default();
        let name = self.relay_name();
        let waiting = async {
            loop {
                tokio::select! {
                    biased;
                    Some(report) = reports.recv() => scale.forward(&report, cx),
                    answered = &mut response => break answered,
                }
            }
        };
        let answered = relay::relay_while(waiting, &mut relayed, &name, cx).await;
        abandon.id = None;
        // The reports and messages that came with the answer.
        while let Ok(report) = reports.try_recv() {
            scale.forward(&report, cx);
        }
        relay::drain(&mut relayed, &name, cx);
        match answered {
            Ok(ServerResult::CallToolResult(result)) => Ok(result),
            Ok(ServerResult::EmptyResult(_)) => Ok(CallToolResult::default()),
            Ok(ServerResult::CustomResult(custom)) => {
                serde_json::from_value(custom.0).map_err(|e| {
                    Failure::Protocol(format!("its answer is not a tools/call result: {e}"))
                })
            }
            Ok(_) => Err(Failure::Protocol(
                "its answer is not a tools/call result".to_owned(),
            )),
            Err(ServiceError::McpError(error)) => Err(Failure::Protocol(format!(
                "it answered with the JSON-RPC error {}: {}",
                error.code.0, error.message
            ))),
            Err(e @ (ServiceError::TransportClosed | ServiceError::TransportSend(_))) => {
                if let Some(why) = auth_failure(&self.auth) {
                    return Err(Failure::Unauthorized(why));
                }
                let reason = service_error(&e);
                self.take_down(generation, &reason).await;
                Err(Failure::Gone(format!(
                    "{} went away before answering ({reason}); whether the call took effect is unknown, and the server is restarted on the next call",
                    self.server
                )))
            }
            Err(e) => Err(Failure::Protocol(service_error(&e))),
        }
    }
}

/// How one call's progress notifications become
/// [`ToolContext::report_progress`]: MCP's progress and total are numbers,
/// toolprism's whole units. A call whose reports count in fractions of
/// their total (a fraction in either number, or a total of 1) is reported
/// in percent (`0.25 of 1` → `25 of 100`), and stays in percent to its
/// end, so that its last report (`1 of 1`) is `100 of 100` like the ones
/// before it; otherwise the numbers are kept (rounded to whole units).
#[derive(Debug, Default)]
struct Scale {
    percent: bool,
}

impl Scale {
    fn forward(&mut self, report: &ProgressNotificationParam, cx: &ToolContext<'_>) {
        let (done, total) = self.convert(report.progress, report.total);
        cx.report_progress(done, total, report.message.as_deref());
    }

    fn convert(&mut self, progress: f64, total: Option<f64>) -> (u64, Option<u64>) {
        let whole = |x: f64| x.is_finite() && x.fract() == 0.0;
        let clamp = |x: f64| {
            if x.is_finite() && x > 0.0 {
                x.round() as u64
            } else {
                0
            }
        };
        match total {
            Some(total) if total.is_finite() && total > 0.0 => {
                if !(whole(progress) && whole(total)) || total == 1.0 {
                    self.percent = true;
                }
                if self.percent {
                    (clamp(progress / total * 100.0), Some(100))
                } else {
                    (clamp(progress), Some(clamp(total)))
                }
            }
            total => (clamp(progress), total.map(clamp)),
        }
    }
}

/// Sends `notifications/cancelled` for a request dropped before its
/// answer came (rmcp's own guard does the same for `Peer::call_tool`,
/// which does not give the request's progress token).
struct Abandon {
    peer: Peer<RoleClient>,
    id: Option<RequestId>,
}

impl Drop for Abandon {
    fn drop(&mut self) {
        let Some(id) = self.id.take() else {
            return;
        };
        let peer = self.peer.clone();
        let notification = CancelledNotificationParam::new(
            Some(id),
            Some("the caller stopped waiting (cancelled or timed out)".to_owned()),
        );
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                let _ = peer.notify_cancelled(notification).await;
            });
        }
    }
}

/// Where each call's progress notifications go, by progress token.
#[derive(Default)]
struct Routes {
    inner: Mutex<RoutesInner>,
}

#[derive(Default)]
struct RoutesInner {
    open: HashMap<ProgressToken, mpsc::UnboundedSender<ProgressNotificationParam>>,
    early: VecDeque<ProgressNotificationParam>,
}

impl Routes {
    fn deliver(&self, report: ProgressNotificationParam) {
        let mut inner = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        match inner.open.get(&report.progress_token) {
            Some(sender) => {
                let _ = sender.send(report);
            }
            None => {
                if inner.early.len() == EARLY_REPORTS {
                    inner.early.pop_front();
                }
                inner.early.push_back(report);
            }
        }
    }
}

/// One call's registration; removed on drop.
struct Route {
    routes: Arc<Routes>,
    token: ProgressToken,
    receiver: mpsc::UnboundedReceiver<ProgressNotificationParam>,
}

impl Route {
    fn open(routes: &Arc<Routes>, token: ProgressToken) -> Route {
        let (sender, receiver) = mpsc::unbounded_channel();
        let mut inner = routes.inner.lock().unwrap_or_else(PoisonError::into_inner);
        let early = std::mem::take(&mut inner.early);
        for report in early {
            if report.progress_token == token {
                let _ = sender.send(report);
            } else {
                inner.early.push_back(report);
            }
        }
        inner.open.insert(token.clone(), sender);
        drop(inner);
        Route {
            routes: routes.clone(),
            token,
            receiver,
        }
    }
}

impl Drop for Route {
    fn drop(&mut self) {
        let mut inner = self
            .routes
            .inner
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        inner.open.remove(&self.token);
    }
}

/// A transport that routes each progress notification to its call as it
/// is read, in the order the server wrote it. rmcp hands notifications to
/// the handler on tasks of their own, which may run after the answer that
/// followed them has reached the call: a report sent just before the
/// answer would be lost. The notification still goes on to rmcp, whose
/// handler ignores it.
struct Routed<T> {
    inner: T,
    routes: Arc<Routes>,
    relay: Arc<Relay>,
}

impl<T: McpTransport<RoleClient>> McpTransport<RoleClient> for Routed<T> {
    type Error = T::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        let message = self.inner.receive().await?;
        if let JsonRpcMessage::Notification(notification) = &message {
            match &notification.notification {
                ServerNotification::ProgressNotification(progress) => {
                    self.routes.deliver(progress.params.clone());
                }
                #[allow(deprecated)]
                ServerNotification::LoggingMessageNotification(log) => {
                    self.relay.log(log.params.clone());
                }
                ServerNotification::ToolListChangedNotification(_) => self.relay.tools_changed(),
                _ => {}
            }
        }
        Some(message)
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}

/// The wait before attempt `failures + 1`.
fn backoff(failures: u32) -> Duration {
    let factor = 1u32 << failures.saturating_sub(1).min(16);
    FIRST_BACKOFF.saturating_mul(factor).min(MAX_BACKOFF)
}

/// Starts a session: spawns the process or opens the HTTP client, and
/// runs `initialize`.
async fn start(
    import: &Import,
    auth: &Auth,
    relay: &Arc<Relay>,
) -> Result<(RunningService<RoleClient, Handler>, Arc<Routes>), String> {
    let routes = Arc::new(Routes::default());
    let handler = Handler {
        relay: relay.clone(),
    };
    let service = match &import.transport {
        Transport::Stdio {
            program,
            args,
            env,
            inherit,
            current_dir,
            stderr,
        } => {
            let mut command = tokio::process::Command::new(program);
            command.args(args).env_clear();
            for name in INHERITED_ENV
                .iter()
                .copied()
                .chain(inherit.iter().map(String::as_str))
            {
                if let Some(value) = std::env::var_os(name) {
                    command.env(name, value);
                }
            }
            command.envs(env);
            if let Some(dir) = current_dir {
                command.current_dir(dir);
            }
            let stderr: std::process::Stdio = match stderr {
                Stderr::Inherit => std::process::Stdio::inherit(),
                Stderr::Discard => std::process::Stdio::null(),
                Stderr::Append(path) => std::fs::File::options()
                    .create(true)
                    .append(true)
                    .open(path)
                    .map_err(|e| format!("cannot open {} for its stderr: {e}", path.display()))?
                    .into(),
            };
            let mut wrapped = process_wrap::tokio::CommandWrap::from(command);
            // Its own process group, killed whole: `npx` and `uvx` start
            // the server as a child of their own.
            wrapped.wrap(process_wrap::tokio::ProcessGroup::leader());
            let (transport, _) = rmcp::transport::TokioChildProcess::builder(wrapped)
                .stderr(stderr)
                .spawn()
                .map_err(|e| format!("cannot start {}: {e}", program.escape_debug()))?;
            let transport = Routed {
                inner: transport,
                routes: routes.clone(),
                relay: relay.clone(),
            };
            handler
                .serve(transport)
                .await
                .map_err(|e| format!("initialize failed: {e}"))?
        }
        Transport::Http {
            url,
            headers,
            options,
            ..
        } => http(handler, routes.clone(), url, headers, options, auth).await?,
    };
    // Every log message the server has, for the hub's clients to filter by
    // their own levels.
    let logs = service
        .peer()
        .peer_info()
        .is_some_and(|info| info.capabilities.logging.is_some());
    if logs {
        #[allow(deprecated)] // Logging: deprecated by SEP-2577, still in the protocol.
        let _ = service
            .peer()
            .set_level(rmcp::model::SetLevelRequestParams::new(
                rmcp::model::LoggingLevel::Debug,
            ))
            .await;
    }
    Ok((service, routes))
}

#[cfg(feature = "client-http")]
async fn http(
    handler: Handler,
    routes: Arc<Routes>,
    url: &str,
    headers: &[(String, String)],
    options: &super::source::HttpOptions,
    auth: &Auth,
) -> Result<RunningService<RoleClient, Handler>, String> {
    use rmcp::transport::StreamableHttpClientTransport;
    use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
    super::http::check_url(url, options.allow_http)?;
    let mut map = HashMap::new();
    for (name, value) in headers {
        let header = http::HeaderName::try_from(name.as_str())
            .map_err(|_| format!("{:?} is not an HTTP header name", name))?;
        let value = http::HeaderValue::try_from(value.as_str())
            .map_err(|_| format!("the value of the header {name} is not a valid header value"))?;
        map.insert(header, value);
    }
    let client = super::oauth::SessionClient {
        http: super::http::client(options)?,
        auth: auth.clone(),
        failure: Arc::default(),
    };
    let failed = client.clone();
    let config = StreamableHttpClientTransportConfig::with_uri(url.to_owned()).custom_headers(map);
    let relay = handler.relay.clone();
    let transport = Routed {
        inner: StreamableHttpClientTransport::with_client(client, config),
        routes,
        relay,
    };
    handler
        .serve(transport)
        .await
        .map_err(|e| match failed.take_failure() {
            Some(why) => format!("initialize failed: {why}"),
            None => format!("initialize failed: {e}"),
        })
}

#[cfg(not(feature = "client-http"))]
async fn http(
    _handler: Handler,
    _routes: Arc<Routes>,
    _url: &str,
    _headers: &[(String, String)],
    _options: &super::source::HttpOptions,
    _auth: &Auth,
) -> Result<RunningService<RoleClient, Handler>, String> {
    Err("this build imports over stdio only: enable the feature `client-http` of toolprism-mcp (`import` of toolprism) for Streamable HTTP".to_owned())
}

/// A [`ServiceError`] in a few words.
fn service_error(error: &ServiceError) -> String {
    match error {
        ServiceError::TransportClosed => "the connection closed".to_owned(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fractions_are_percentages_to_the_end_of_the_call() {
        let mut scale = Scale::default();
        let reports: Vec<_> = [0.0, 0.25, 0.5, 1.0]
            .into_iter()
            .map(|p| scale.convert(p, Some(1.0)))
            .collect();
        assert_eq!(
            reports,
            [
                (0, Some(100)),
                (25, Some(100)),
                (50, Some(100)),
                (100, Some(100))
            ]
        );
        let mut scale = Scale::default();
        let reports: Vec<_> = [(1.0, 4.0), (1.5, 4.0), (4.0, 4.0)]
            .into_iter()
            .map(|(p, t)| scale.convert(p, Some(t)))
            .collect();
        assert_eq!(reports, [(1, Some(4)), (38, Some(100)), (100, Some(100))]);
        let mut scale = Scale::default();
        assert_eq!(scale.convert(3.0, Some(10.0)), (3, Some(10)));
        assert_eq!(scale.convert(7.0, None), (7, None));
        assert_eq!(scale.convert(f64::NAN, Some(0.0)), (0, Some(0)));
    }

    #[test]
    fn backoff_doubles_up_to_its_bound() {
        assert_eq!(backoff(1), Duration::from_millis(250));
        assert_eq!(backoff(2), Duration::from_millis(500));
        assert_eq!(backoff(3), Duration::from_secs(1));
        assert_eq!(backoff(9), MAX_BACKOFF);
        assert_eq!(backoff(u32::MAX), MAX_BACKOFF);
    }
}
