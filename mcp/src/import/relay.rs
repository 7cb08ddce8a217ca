//! What an imported server sends the hub besides answers, and where it
//! goes: its log messages and its requests for a model (sampling) or a
//! person (elicitation) to the client of the one call waiting on it; its
//! `notifications/tools/list_changed` to a new `tools/list` and an
//! [`ImportEvent`]; what no call can take (a log message while no call or
//! several are waiting) to an [`ImportEvent`] as well, and a request no
//! call can take refused with an error that says why.

#![allow(deprecated)] // Logging, sampling: deprecated by SEP-2577, still in the protocol.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError, Weak};

use rmcp::model::{
    ClientCapabilities, ClientConfig, CreateMessageRequestParams, CreateMessageResult,
    ElicitRequestParams, ElicitResult, ElicitationCapability, ErrorCode, FormElicitationCapability,
    Implementation, ListRootsResult, LoggingMessageNotificationParam, ProtocolVersion,
    SamplingCapability,
};
use rmcp::service::RequestContext;
use rmcp::{ClientHandler, ErrorData, RoleClient};
use serde_json::{Value, json};
use tokio::sync::{broadcast, mpsc, oneshot};

use toolprism_core::ToolContext;
use toolprism_core::client::{ClientError, ElicitRequest, ElicitResponse, SampleRequest};

use super::ImportEvent;
use super::connection::Connection;

/// How many events wait for a slow reader before the oldest are dropped.
const EVENTS: usize = 256;

/// What the server sent that a call waiting on it takes.
pub(crate) enum Relayed {
    /// A `notifications/message`.
    Log(LoggingMessageNotificationParam),
    /// A request for the call's client.
    Ask(Ask),
}

/// A request of the server for the call's client, and where the answer goes.
pub(crate) struct Ask {
    request: AskRequest,
    reply: oneshot::Sender<Result<Value, ErrorData>>,
}

enum AskRequest {
    Sample(CreateMessageRequestParams),
    Elicit(ElicitRequestParams),
}

impl AskRequest {
    fn what(&self) -> &'static str {
        match self {
            AskRequest::Sample(_) => "sampling",
            AskRequest::Elicit(_) => "elicitation",
        }
    }
}

/// The relay of one server: the calls waiting on it, and its events.
pub(crate) struct Relay {
    /// The server's name in log messages (`fs`, or its own name).
    name: OnceLock<String>,
    /// The connection, for a `tools/list` after `list_changed`.
    connection: OnceLock<Weak<Connection>>,
    calls: Mutex<Vec<(u64, mpsc::UnboundedSender<Relayed>)>>,
    next: AtomicU64,
    events: broadcast::Sender<ImportEvent>,
    /// A `tools/list` is queued and has not started: a burst of
    /// `list_changed` makes at most one more.
    queued: std::sync::atomic::AtomicBool,
}

impl Default for Relay {
    fn default() -> Self {
        Relay {
            name: OnceLock::new(),
            connection: OnceLock::new(),
            calls: Mutex::default(),
            next: AtomicU64::new(0),
            events: broadcast::channel(EVENTS).0,
            queued: std::sync::atomic::AtomicBool::new(false),
        }
    }
}

/// A call's place in the relay; removed on drop.
pub(crate) struct Enrolled {
    relay: Arc<Relay>,
    id: u64,
}

impl Drop for Enrolled {
    fn drop(&mut self) {
        self.relay
            .calls
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .retain(|(id, _)| *id != self.id);
    }
}

impl Relay {
    pub(crate) fn set_name(&self, name: String) {
        let _ = self.name.set(name);
    }

    pub(crate) fn set_connection(&self, connection: Weak<Connection>) {
        let _ = self.connection.set(connection);
    }

    fn name(&self) -> &str {
        self.name.get().map_or("server", String::as_str)
    }

    pub(crate) fn subscribe(&self) -> broadcast::Receiver<ImportEvent> {
        self.events.subscribe()
    }

    pub(crate) fn emit(&self, event: ImportEvent) {
        // Nobody listening is fine: an import used without a hub.
        let _ = self.events.send(event);
    }

    /// Registers a call waiting on the server; what it is sent arrives on
    /// the receiver until the guard is dropped.
    pub(crate) fn enroll(self: &Arc<Self>) -> (Enrolled, mpsc::UnboundedReceiver<Relayed>) {
        let (send, receive) = mpsc::unbounded_channel();
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        self.calls
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push((id, send));
        (
            Enrolled {
                relay: self.clone(),
                id,
            },
            receive,
        )
    }

    /// The one call waiting on the server, when there is exactly one.
    fn only_call(&self) -> Option<mpsc::UnboundedSender<Relayed>> {
        let calls = self.calls.lock().unwrap_or_else(PoisonError::into_inner);
        match calls.as_slice() {
            [(_, send)] => Some(send.clone()),
            _ => None,
        }
    }

    /// A log message from the server, as it is read: to the one call
    /// waiting, else to the events.
    pub(crate) fn log(&self, message: LoggingMessageNotificationParam) {
        let message = match self.only_call() {
            Some(call) => match call.send(Relayed::Log(message)) {
                Ok(()) => return,
                Err(mpsc::error::SendError(Relayed::Log(message))) => message,
                Err(_) => return,
            },
            None => message,
        };
        self.emit(ImportEvent::Log {
            server: self.name().to_owned(),
            level: crate::client::from_mcp(message.level),
            logger: Some(logger(self.name(), message.logger.as_deref())),
            data: message.data,
        });
    }

    /// The server's tools changed (or it was started again): list them
    /// again, on a task of its own; one more list at most while one is
    /// queued.
    pub(crate) fn tools_changed(&self) {
        let Some(connection) = self.connection.get().and_then(Weak::upgrade) else {
            return;
        };
        if self.queued.swap(true, Ordering::AcqRel) {
            return;
        }
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move { connection.refresh().await });
        }
    }

    /// A queued `tools/list` starts: later changes queue another.
    pub(crate) fn refresh_started(&self) {
        self.queued.store(false, Ordering::Release);
    }

    /// A request of the server for a client: to the one call waiting on
    /// it, answered by that call's client.
    async fn ask(&self, request: AskRequest) -> Result<Value, ErrorData> {
        let what = request.what();
        let refused = |why: String| {
            ErrorData::new(
                ErrorCode::INVALID_REQUEST,
                format!("toolprism cannot forward this {what} request: {why}"),
                None,
            )
        };
        let calls = self
            .calls
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len();
        let Some(call) = self.only_call() else {
            return Err(refused(if calls == 0 {
                "no call of the hub is waiting on this server, so there is no client to ask"
                    .to_owned()
            } else {
                format!(
                    "{calls} calls of the hub are waiting on this server, and nothing says which one asks"
                )
            }));
        };
        let (reply, answer) = oneshot::channel();
        call.send(Relayed::Ask(Ask { request, reply }))
            .map_err(|_| refused("the call ended".to_owned()))?;
        answer.await.unwrap_or_else(|_| {
            Err(refused(
                "the call ended before its client answered".to_owned(),
            ))
        })
    }
}

/// The logger of a forwarded message: the server's name, then its own
/// logger when it gave one (`fs/watcher`).
pub(crate) fn logger(server: &str, own: Option<&str>) -> String {
    match own {
        Some(own) if !own.is_empty() => format!("{server}/{own}"),
        _ => server.to_owned(),
    }
}

/// Forwards what the server sends to `cx` while `call` runs: logs as they
/// come, requests one at a time (a second waits for the first's answer).
pub(crate) async fn relay_while<T>(
    call: impl Future<Output = T>,
    received: &mut mpsc::UnboundedReceiver<Relayed>,
    server: &str,
    cx: &ToolContext<'_>,
) -> T {
    let (asks, mut waiting) = mpsc::unbounded_channel::<Ask>();
    let answering = async {
        while let Some(ask) = waiting.recv().await {
            let answer = answer(ask.request, cx).await;
            let _ = ask.reply.send(answer);
        }
        std::future::pending::<()>().await
    };
    let forwarding = async {
        let mut call = std::pin::pin!(call);
        loop {
            tokio::select! {
                biased;
                Some(relayed) = received.recv() => match relayed {
                    Relayed::Log(message) => forward_log(message, server, cx),
                    Relayed::Ask(ask) => {
                        let _ = asks.send(ask);
                    }
                },
                done = &mut call => break done,
            }
        }
    };
    tokio::select! {
        done = forwarding => done,
        () = answering => unreachable!("answering never ends on its own"),
    }
}

/// The messages that came with the answer.
pub(crate) fn drain(
    received: &mut mpsc::UnboundedReceiver<Relayed>,
    server: &str,
    cx: &ToolContext<'_>,
) {
    while let Ok(relayed) = received.try_recv() {
        match relayed {
            Relayed::Log(message) => forward_log(message, server, cx),
            Relayed::Ask(ask) => {
                let _ = ask.reply.send(Err(ErrorData::new(
                    ErrorCode::INVALID_REQUEST,
                    "the call this request belongs to has ended".to_owned(),
                    None,
                )));
            }
        }
    }
}

fn forward_log(message: LoggingMessageNotificationParam, server: &str, cx: &ToolContext<'_>) {
    cx.log_as(
        crate::client::from_mcp(message.level),
        &logger(server, message.logger.as_deref()),
        message.data,
    );
}

/// Asks `cx`'s client, and writes its answer as MCP's result.
async fn answer(request: AskRequest, cx: &ToolContext<'_>) -> Result<Value, ErrorData> {
    let unavailable = |e: ClientError| {
        let code = match e {
            ClientError::Unavailable(_) => ErrorCode::METHOD_NOT_FOUND,
            _ => ErrorCode::INTERNAL_ERROR,
        };
        ErrorData::new(code, format!("the hub's client: {e}"), None)
    };
    match request {
        AskRequest::Elicit(ElicitRequestParams::FormElicitationParams {
            message,
            requested_schema,
            ..
        }) => {
            let schema = serde_json::to_value(&requested_schema)
                .map_err(|e| ErrorData::invalid_params(e.to_string(), None))?;
            let response = cx
                .elicit(ElicitRequest::new(message, schema))
                .await
                .map_err(unavailable)?;
            Ok(match response {
                ElicitResponse::Accept(content) => json!({"action": "accept", "content": content}),
                ElicitResponse::Decline => json!({"action": "decline"}),
                ElicitResponse::Cancel => json!({"action": "cancel"}),
            })
        }
        AskRequest::Elicit(_) => Err(ErrorData::new(
            ErrorCode::INVALID_PARAMS,
            "toolprism forwards form elicitation only, not URL mode".to_owned(),
            None,
        )),
        AskRequest::Sample(params) => {
            let request =
                sample_request(&params).map_err(|e| ErrorData::invalid_params(e, None))?;
            let response = cx.sample(request).await.map_err(unavailable)?;
            let mut answer = serde_json::to_value(&response)
                .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
            answer["role"] = json!("assistant");
            Ok(answer)
        }
    }
}

/// `sampling/createMessage` params as a [`SampleRequest`] (core's types
/// have MCP's spelling): a message of several content blocks is refused,
/// as core's messages hold one.
fn sample_request(params: &CreateMessageRequestParams) -> Result<SampleRequest, String> {
    let mut json = serde_json::to_value(params).map_err(|e| e.to_string())?;
    if let Some(messages) = json.get_mut("messages").and_then(Value::as_array_mut) {
        for message in messages {
            if let Some(Value::Array(blocks)) = message.get_mut("content") {
                if blocks.len() != 1 {
                    return Err(format!(
                        "a sampling message of {} content blocks cannot be forwarded (toolprism's messages hold one)",
                        blocks.len()
                    ));
                }
                let block = blocks.remove(0);
                message["content"] = block;
            }
        }
    }
    serde_json::from_value(json)
        .map_err(|e| format!("this sampling request cannot be forwarded: {e}"))
}

/// The client side of one session with an imported server: it declares
/// sampling and elicitation (form), which it forwards to the client of the
/// call waiting on the server, and no roots.
pub(crate) struct Handler {
    pub(crate) relay: Arc<Relay>,
}

impl ClientHandler for Handler {
    fn get_info(&self) -> ClientConfig {
        let mut capabilities = ClientCapabilities::default();
        capabilities.sampling = Some(SamplingCapability::default());
        capabilities.elicitation =
            Some(ElicitationCapability::new().with_form(FormElicitationCapability::new()));
        ClientConfig::new(
            capabilities,
            Implementation::new("toolprism", env!("CARGO_PKG_VERSION")),
        )
        .with_protocol_version(ProtocolVersion::V_2025_11_25)
    }

    async fn create_message(
        &self,
        params: CreateMessageRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        let answer = self.relay.ask(AskRequest::Sample(params)).await?;
        serde_json::from_value(answer)
            .map_err(|e| ErrorData::internal_error(format!("the hub's client answered: {e}"), None))
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let answer = self.relay.ask(AskRequest::Elicit(request)).await?;
        serde_json::from_value(answer)
            .map_err(|e| ErrorData::internal_error(format!("the hub's client answered: {e}"), None))
    }

    async fn list_roots(
        &self,
        _context: RequestContext<RoleClient>,
    ) -> Result<ListRootsResult, ErrorData> {
        Err(ErrorData::new(
            ErrorCode::METHOD_NOT_FOUND,
            "toolprism declares no roots: it does not forward roots/list".to_owned(),
            None,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sampling_requests_read_as_core_requests() {
        let params: CreateMessageRequestParams = serde_json::from_value(json!({
            "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
            "maxTokens": 9, "systemPrompt": "be brief"}))
        .unwrap();
        let request = sample_request(&params).unwrap();
        assert_eq!(request.max_tokens, 9);
        assert_eq!(request.system_prompt.as_deref(), Some("be brief"));
        assert_eq!(logger("fs", Some("watch")), "fs/watch");
        assert_eq!(logger("fs", None), "fs");
    }
}
