//! The client of a call over MCP (W8 in `docs/contract.md`): what a tool's
//! [`ToolContext::log`](toolprism_core::ToolContext::log),
//! [`sample`](toolprism_core::ToolContext::sample) and
//! [`elicit`](toolprism_core::ToolContext::elicit) become on the wire, and
//! through `elicit`, approvals (W9).
//!
//! A [`CallClient`] is what the registry holds for one `tools/call`. It
//! never touches the transport: it turns each request into an [`Event`] on
//! a channel that the handler's own task reads ([`crate::handler`]), so a
//! blocking tool on another thread is served like an async one, and every
//! log message reaches the transport before the call's response. Whatever
//! the client did not declare is refused at once
//! ([`ClientError::Unavailable`]), never sent and waited for.

#![allow(deprecated)] // Logging, sampling: deprecated by SEP-2577, still in the protocol.

use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::Duration;

use rmcp::RoleServer;
use rmcp::model::{
    CreateMessageRequestParams, ElicitRequestParams, ElicitationSchema, LoggingLevel,
    LoggingMessageNotificationParam,
};
use rmcp::service::RequestContext;
use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};

use toolprism_core::Progress;
use toolprism_core::client::{
    Client, ClientError, ClientFuture, ElicitRequest, ElicitResponse, LogLevel, SampleRequest,
    SampleResponse,
};

/// The `_meta` key of a `2026-07-28` request that carries the client's
/// capabilities.
const CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";

/// What a running call hands the request's task.
pub(crate) enum Event {
    /// A `notifications/message`, already past the level.
    Log(LoggingMessageNotificationParam),
    /// A progress report, for the request's `progressToken`.
    Progress(Progress),
    /// A request to the client.
    Ask(Ask),
}

/// A request to the client, and where its answer goes: the client's result
/// as JSON (`CreateMessageResult`, `ElicitResult`).
pub(crate) struct Ask {
    pub(crate) request: AskRequest,
    pub(crate) reply: oneshot::Sender<Result<Value, ClientError>>,
}

/// What is asked.
pub(crate) enum AskRequest {
    /// `sampling/createMessage`.
    Sample(CreateMessageRequestParams),
    /// `elicitation/create`, form mode.
    Elicit(ElicitRequestParams),
}

impl AskRequest {
    /// The word for the key of an `inputRequests` entry.
    pub(crate) fn kind(&self) -> &'static str {
        match self {
            AskRequest::Sample(_) => "sampling",
            AskRequest::Elicit(_) => "elicitation",
        }
    }
}

/// A log threshold: 0 = none asked for, else 1 + the level's rank.
pub(crate) type Threshold = AtomicU8;

/// The encoding of `level` in a [`Threshold`].
pub(crate) fn encode(level: Option<LoggingLevel>) -> u8 {
    match level {
        None => 0,
        Some(level) => 1 + rank(from_mcp(level)),
    }
}

fn rank(level: LogLevel) -> u8 {
    match level {
        LogLevel::Debug => 0,
        LogLevel::Info => 1,
        LogLevel::Notice => 2,
        LogLevel::Warning => 3,
        LogLevel::Error => 4,
        LogLevel::Critical => 5,
        LogLevel::Alert => 6,
        LogLevel::Emergency => 7,
    }
}

pub(crate) fn from_mcp(level: LoggingLevel) -> LogLevel {
    match level {
        LoggingLevel::Debug => LogLevel::Debug,
        LoggingLevel::Info => LogLevel::Info,
        LoggingLevel::Notice => LogLevel::Notice,
        LoggingLevel::Warning => LogLevel::Warning,
        LoggingLevel::Error => LogLevel::Error,
        LoggingLevel::Critical => LogLevel::Critical,
        LoggingLevel::Alert => LogLevel::Alert,
        LoggingLevel::Emergency => LogLevel::Emergency,
    }
}

pub(crate) fn to_mcp(level: LogLevel) -> LoggingLevel {
    match level {
        LogLevel::Debug => LoggingLevel::Debug,
        LogLevel::Info => LoggingLevel::Info,
        LogLevel::Notice => LoggingLevel::Notice,
        LogLevel::Warning => LoggingLevel::Warning,
        LogLevel::Error => LoggingLevel::Error,
        LogLevel::Critical => LoggingLevel::Critical,
        LogLevel::Alert => LoggingLevel::Alert,
        LogLevel::Emergency => LoggingLevel::Emergency,
    }
}

/// What the client of a request can be asked, and the log level it wants.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Reach {
    pub(crate) sampling: bool,
    pub(crate) elicitation: bool,
    /// The [`Threshold`] encoding of the level asked for.
    pub(crate) level: u8,
}

impl Reach {
    /// The reach of the request in `context`. `modern`: a `2026-07-28`
    /// request, whose capabilities and log level travel in its own `_meta`;
    /// otherwise the session's `initialize` and `logging/setLevel`
    /// (`session_level`). Reads what is there, copies nothing.
    pub(crate) fn of(
        context: &RequestContext<RoleServer>,
        modern: bool,
        session_level: &Threshold,
    ) -> Reach {
        let level = if modern {
            encode(context.meta.log_level())
        } else {
            session_level.load(Ordering::Relaxed)
        };
        if let Some(capabilities) = context.meta.get(CLIENT_CAPABILITIES) {
            let elicitation = capabilities.get("elicitation").is_some_and(|e| {
                // `{}` means form mode; `{"url": {}}` alone does not.
                e.get("form").is_some() || e.get("url").is_none()
            });
            return Reach {
                sampling: capabilities.get("sampling").is_some(),
                elicitation,
                level,
            };
        }
        // A `2026-07-28` request carries its capabilities (rmcp refuses one
        // without); the session's `initialize` is for older ones.
        let info = if modern {
            None
        } else {
            context.peer.peer_info()
        };
        match info {
            Some(info) => {
                let capabilities = &info.capabilities;
                Reach {
                    sampling: capabilities.sampling.is_some(),
                    elicitation: capabilities
                        .elicitation
                        .as_ref()
                        .is_some_and(|e| e.form.is_some() || e.url.is_none()),
                    level,
                }
            }
            None => Reach {
                level,
                ..Reach::default()
            },
        }
    }

    /// Whether the client can be asked anything.
    pub(crate) fn can_ask(&self) -> bool {
        self.sampling || self.elicitation
    }

    /// Whether a call needs a client at all: something to ask, or logs
    /// wanted.
    pub(crate) fn any(&self) -> bool {
        self.can_ask() || self.level != 0
    }
}

/// Where a call's log threshold lives.
pub(crate) enum Level {
    /// The session's (`logging/setLevel`, before `2026-07-28`): a level set
    /// while the call runs applies to its next message.
    Session(Arc<Threshold>),
    /// The request's own (`2026-07-28`), set again by each round of a call
    /// that asks for input.
    Request(Threshold),
}

/// The client of one `tools/call`.
pub(crate) struct CallClient {
    events: mpsc::UnboundedSender<Event>,
    level: Level,
    sampling: bool,
    elicitation: bool,
    timeout: Duration,
}

impl CallClient {
    pub(crate) fn new(
        events: mpsc::UnboundedSender<Event>,
        level: Level,
        reach: Reach,
        timeout: Duration,
    ) -> Self {
        CallClient {
            events,
            level,
            sampling: reach.sampling,
            elicitation: reach.elicitation,
            timeout,
        }
    }

    /// A new round of a `2026-07-28` call: that request's log level.
    pub(crate) fn set_request_level(&self, level: u8) {
        if let Level::Request(threshold) = &self.level {
            threshold.store(level, Ordering::Relaxed);
        }
    }

    fn threshold(&self) -> u8 {
        match &self.level {
            Level::Session(threshold) => threshold.load(Ordering::Relaxed),
            Level::Request(threshold) => threshold.load(Ordering::Relaxed),
        }
    }

    /// Sends `request` to the request's task and waits for the answer,
    /// at most the server's client timeout.
    async fn ask(&self, request: AskRequest) -> Result<Value, ClientError> {
        let (reply, answer) = oneshot::channel();
        if self
            .events
            .send(Event::Ask(Ask { request, reply }))
            .is_err()
        {
            return Err(ClientError::Failed(
                "the request that made this call is over; nobody can answer".to_owned(),
            ));
        }
        match tokio::time::timeout(self.timeout, answer).await {
            Ok(Ok(answer)) => answer,
            Ok(Err(_)) => Err(ClientError::Failed(
                "the request was abandoned before the client answered (the client left, or it never sent the retry)".to_owned(),
            )),
            Err(_) => Err(ClientError::TimedOut),
        }
    }
}

impl Client for CallClient {
    fn log(&self, level: LogLevel, logger: Option<&str>, data: &Value) {
        let threshold = self.threshold();
        if threshold == 0 || 1 + rank(level) < threshold {
            return;
        }
        let mut param = LoggingMessageNotificationParam::new(to_mcp(level), data.clone());
        if let Some(logger) = logger {
            param = param.with_logger(logger);
        }
        // Fails only once the request is over: nobody is listening then.
        let _ = self.events.send(Event::Log(param));
    }

    fn sample(&self, request: SampleRequest) -> ClientFuture<'_, SampleResponse> {
        Box::pin(async move {
            if !self.sampling {
                return Err(ClientError::Unavailable("sampling".to_owned()));
            }
            let params = sampling_params(&request)?;
            let answer = self.ask(AskRequest::Sample(params)).await?;
            sample_response(answer)
        })
    }

    fn elicit(&self, request: ElicitRequest) -> ClientFuture<'_, ElicitResponse> {
        Box::pin(async move {
            if !self.elicitation {
                return Err(ClientError::Unavailable("elicitation".to_owned()));
            }
            let params = elicit_params(request)?;
            let answer = self.ask(AskRequest::Elicit(params)).await?;
            elicit_response(answer)
        })
    }
}

/// A [`SampleRequest`] as `sampling/createMessage` params: core's types
/// already have MCP's spelling.
fn sampling_params(request: &SampleRequest) -> Result<CreateMessageRequestParams, ClientError> {
    let json = serde_json::to_value(request).map_err(|e| ClientError::Failed(e.to_string()))?;
    let params: CreateMessageRequestParams = serde_json::from_value(json).map_err(|e| {
        ClientError::Failed(format!(
            "MCP sampling cannot carry this request (its messages hold text, image and audio only): {e}"
        ))
    })?;
    params
        .validate()
        .map_err(|e| ClientError::Failed(format!("MCP sampling cannot carry this request: {e}")))?;
    Ok(params)
}

/// The client's `CreateMessageResult` as a [`SampleResponse`]: its first
/// content block when it sent several.
fn sample_response(mut answer: Value) -> Result<SampleResponse, ClientError> {
    if let Some(content) = answer.get_mut("content")
        && let Value::Array(blocks) = content
    {
        *content = blocks.first().cloned().unwrap_or(Value::Null);
    }
    serde_json::from_value(answer)
        .map_err(|e| ClientError::Failed(format!("the client's sampling answer is malformed: {e}")))
}

/// An [`ElicitRequest`] as `elicitation/create` params, form mode. The
/// schema goes as the tool wrote it: one MCP's form schema
/// ([`ElicitationSchema`]) cannot carry unchanged is refused, never
/// quietly changed.
fn elicit_params(request: ElicitRequest) -> Result<ElicitRequestParams, ClientError> {
    let refused = |why: String| {
        ClientError::Failed(format!(
            "MCP elicitation cannot carry this form's schema ({why}); a form is an object of string, number, integer, boolean and enum fields"
        ))
    };
    let schema: ElicitationSchema = serde_json::from_value(request.requested_schema.clone())
        .map_err(|e| refused(e.to_string()))?;
    let sent = serde_json::to_value(&schema).map_err(|e| refused(e.to_string()))?;
    if sent != request.requested_schema {
        return Err(refused(format!("it would go as {sent}")));
    }
    Ok(ElicitRequestParams::FormElicitationParams {
        meta: None,
        message: request.message,
        requested_schema: schema,
    })
}

/// The client's `ElicitResult` as an [`ElicitResponse`].
fn elicit_response(answer: Value) -> Result<ElicitResponse, ClientError> {
    let malformed = |what: &str| {
        ClientError::Failed(format!(
            "the client's elicitation answer is malformed: {what}"
        ))
    };
    match answer.get("action").and_then(Value::as_str) {
        Some("accept") => Ok(ElicitResponse::Accept(
            answer.get("content").cloned().unwrap_or_else(|| json!({})),
        )),
        Some("decline") => Ok(ElicitResponse::Decline),
        Some("cancel") => Ok(ElicitResponse::Cancel),
        Some(other) => Err(malformed(&format!("unknown action {other:?}"))),
        None => Err(malformed("no action")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn form_schemas_of_every_shape_go_unchanged() {
        for schema in [
            json!({"type": "object", "properties": {
                "name": {"type": "string", "default": "John Doe"},
                "age": {"type": "integer", "default": 30},
                "score": {"type": "number", "default": 95.5},
                "status": {"type": "string", "enum": ["active", "inactive", "pending"], "default": "active"},
                "verified": {"type": "boolean", "default": true}}}),
            json!({"type": "object", "properties": {
                "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
                "titledSingle": {"type": "string", "oneOf": [{"const": "value1", "title": "First Option"}, {"const": "value2", "title": "Second Option"}]},
                "legacyEnum": {"type": "string", "enum": ["opt1", "opt2", "opt3"], "enumNames": ["Option One", "Option Two", "Option Three"]},
                "untitledMulti": {"type": "array", "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
                "titledMulti": {"type": "array", "items": {"anyOf": [{"const": "value1", "title": "First Choice"}, {"const": "value2", "title": "Second Choice"}]}}}}),
            json!({"type": "object", "properties": {
                "approve": {"type": "boolean", "title": "Run it?", "description": "d", "default": false}},
                "required": ["approve"]}),
        ] {
            let request = ElicitRequest::new("m", schema.clone());
            let params = elicit_params(request).unwrap_or_else(|e| panic!("{schema}: {e}"));
            let ElicitRequestParams::FormElicitationParams {
                requested_schema, ..
            } = params
            else {
                panic!("form mode")
            };
            assert_eq!(serde_json::to_value(requested_schema).unwrap(), schema);
        }
    }

    #[test]
    fn a_schema_mcp_cannot_carry_is_refused_by_name() {
        let request = ElicitRequest::new(
            "m",
            json!({"type": "object", "properties": {
                "address": {"type": "object", "properties": {"city": {"type": "string"}}}}}),
        );
        let Err(ClientError::Failed(message)) = elicit_params(request) else {
            panic!("a nested object is refused")
        };
        assert!(message.contains("cannot carry this form"), "{message}");
    }

    #[test]
    fn levels_filter_by_rank() {
        assert_eq!(encode(None), 0);
        assert!(encode(Some(LoggingLevel::Debug)) < encode(Some(LoggingLevel::Info)));
        assert_eq!(
            encode(Some(LoggingLevel::Emergency)),
            1 + rank(LogLevel::Emergency)
        );
        for level in [LogLevel::Debug, LogLevel::Warning, LogLevel::Emergency] {
            assert_eq!(from_mcp(to_mcp(level)), level);
        }
    }

    #[test]
    fn answers_read_as_core_types() {
        let sampled = sample_response(json!({
            "role": "assistant", "content": [{"type": "text", "text": "hi"}],
            "model": "m", "stopReason": "endTurn"}))
        .unwrap();
        assert_eq!(sampled.model, "m");
        assert_eq!(sampled.stop_reason.as_deref(), Some("endTurn"));
        assert_eq!(
            elicit_response(json!({"action": "accept", "content": {"a": 1}})).unwrap(),
            ElicitResponse::Accept(json!({"a": 1}))
        );
        assert_eq!(
            elicit_response(json!({"action": "decline"})).unwrap(),
            ElicitResponse::Decline
        );
        assert!(elicit_response(json!({"action": "maybe"})).is_err());
    }
}
