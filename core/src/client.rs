//! What a running call may ask of whoever is on the other side of the
//! registry: the [`Client`] (an MCP client, the command line's terminal,
//! an agent loop). A call logs to it, asks its model ([`Client::sample`])
//! and asks its user ([`Client::elicit`], [`Client::approve`]) through its
//! [`ToolContext`](crate::ToolContext); the caller hands one to the call
//! with [`CallOptions::with_client`](crate::CallOptions::with_client).
//!
//! A call with no client still runs: its logs are dropped, and a request
//! to the model or the user fails at once with [`ClientError::Unavailable`],
//! never a hang.

use std::fmt;
use std::future::Future;
use std::pin::Pin;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::content::ContentBlock;

/// A boxed future of a client's answer.
pub type ClientFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, ClientError>> + Send + 'a>>;

/// The other side of a call: where its logs go and whom it may ask.
///
/// Implement the requests a host can answer; the others keep their
/// default, which says the host cannot.
///
/// ```
/// use std::sync::{Arc, Mutex};
/// use toolprism::client::{Client, LogLevel};
///
/// /// Keeps every log line of the calls it serves.
/// #[derive(Default)]
/// struct Lines(Mutex<Vec<String>>);
/// impl Client for Lines {
///     fn log(&self, level: LogLevel, _logger: Option<&str>, data: &serde_json::Value) {
///         self.0.lock().unwrap().push(format!("{level}: {data}"));
///     }
/// }
/// let lines = Arc::new(Lines::default());
/// let options = toolprism::CallOptions::new().with_client(lines.clone());
/// # let _ = options;
/// ```
pub trait Client: Send + Sync {
    /// A log message from the call (MCP `notifications/message`). The
    /// default drops it.
    fn log(&self, level: LogLevel, logger: Option<&str>, data: &Value) {
        let _ = (level, logger, data);
    }

    /// Asks the client's model (MCP sampling). The default: unavailable.
    fn sample(&self, request: SampleRequest) -> ClientFuture<'_, SampleResponse> {
        let _ = request;
        Box::pin(async { Err(ClientError::Unavailable("sampling".to_owned())) })
    }

    /// Asks the user to fill a form (MCP elicitation, form mode). The
    /// default: unavailable.
    fn elicit(&self, request: ElicitRequest) -> ClientFuture<'_, ElicitResponse> {
        let _ = request;
        Box::pin(async { Err(ClientError::Unavailable("elicitation".to_owned())) })
    }

    /// Asks the user whether a call may run. The default asks with
    /// [`elicit`](Self::elicit) (a form with one yes/no field), so a host
    /// that can elicit can approve: the form accepted with the box ticked
    /// is [`Approve`](ApprovalAnswer::Approve), unticked or declined
    /// [`Deny`](ApprovalAnswer::Deny), dismissed
    /// [`Dismiss`](ApprovalAnswer::Dismiss).
    ///
    /// An `Err` says the user could not be asked, and how: the call ends
    /// `NOT_APPROVED` with a message that says which
    /// ([`ClientError::Unavailable`], [`ClientError::Failed`] with the
    /// client's error, [`ClientError::TimedOut`]).
    fn approve(&self, request: ApprovalRequest) -> ClientFuture<'_, ApprovalAnswer> {
        Box::pin(async move {
            let form = ElicitRequest {
                message: request.question,
                requested_schema: serde_json::json!({
                    "type": "object",
                    "properties": {
                        "approve": {
                            "type": "boolean",
                            "title": "Run it?",
                            "description": format!("Let `{}` run with these arguments.", request.tool),
                            "default": false
                        }
                    },
                    "required": ["approve"]
                }),
            };
            match self.elicit(form).await? {
                ElicitResponse::Accept(content) => {
                    Ok((content["approve"] == Value::Bool(true)).into())
                }
                ElicitResponse::Decline => Ok(ApprovalAnswer::Deny),
                ElicitResponse::Cancel => Ok(ApprovalAnswer::Dismiss),
            }
        })
    }
}

/// How severe a log message is: the levels of RFC 5424, as MCP names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogLevel {
    /// Debugging detail.
    Debug,
    /// What is happening.
    Info,
    /// Normal but worth noting.
    Notice,
    /// Something may be wrong.
    Warning,
    /// Something failed.
    Error,
    /// A part of the system failed.
    Critical,
    /// Act now.
    Alert,
    /// The system is unusable.
    Emergency,
}

impl fmt::Display for LogLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match self {
            LogLevel::Debug => "debug",
            LogLevel::Info => "info",
            LogLevel::Notice => "notice",
            LogLevel::Warning => "warning",
            LogLevel::Error => "error",
            LogLevel::Critical => "critical",
            LogLevel::Alert => "alert",
            LogLevel::Emergency => "emergency",
        };
        f.write_str(name)
    }
}

/// A question to the client's model.
///
/// `#[non_exhaustive]` (MCP's sampling request has more to offer): build
/// it with [`SampleRequest::text`] or [`SampleRequest::new`].
///
/// ```
/// use toolprism::client::{Role, SampleMessage, SampleRequest};
/// use toolprism::ContentBlock;
/// let request = SampleRequest::new(
///     vec![
///         SampleMessage::new(Role::User, ContentBlock::text("Name a colour.")),
///         SampleMessage::new(Role::Assistant, ContentBlock::text("Blue.")),
///         SampleMessage::new(Role::User, ContentBlock::text("Another one.")),
///     ],
///     20,
/// )
/// .with_system_prompt("Answer in one word.");
/// assert_eq!(request.messages.len(), 3);
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct SampleRequest {
    /// The conversation so far.
    pub messages: Vec<SampleMessage>,
    /// A system prompt the client may use.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
    /// The most tokens the answer may take.
    pub max_tokens: u32,
}

impl SampleRequest {
    /// The conversation `messages`, answered in at most `max_tokens`, with
    /// no system prompt.
    pub fn new(messages: Vec<SampleMessage>, max_tokens: u32) -> Self {
        SampleRequest {
            messages,
            system_prompt: None,
            max_tokens,
        }
    }

    /// The same request with a system prompt the client may use.
    pub fn with_system_prompt(mut self, system_prompt: impl Into<String>) -> Self {
        self.system_prompt = Some(system_prompt.into());
        self
    }

    /// One user message of text.
    ///
    /// ```
    /// let request = toolprism::client::SampleRequest::text("Summarize: …", 100);
    /// assert_eq!(request.messages.len(), 1);
    /// ```
    pub fn text(text: impl Into<String>, max_tokens: u32) -> Self {
        SampleRequest::new(
            vec![SampleMessage::new(Role::User, ContentBlock::text(text))],
            max_tokens,
        )
    }
}

/// One message of a sampling conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SampleMessage {
    /// Who speaks.
    pub role: Role,
    /// What is said.
    pub content: ContentBlock,
}

impl SampleMessage {
    /// `role` says `content`.
    pub fn new(role: Role, content: ContentBlock) -> Self {
        SampleMessage { role, content }
    }
}

/// Who speaks in a sampling conversation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The user (the tool, asking).
    User,
    /// The model.
    Assistant,
}

/// The client model's answer.
///
/// ```
/// use toolprism::client::SampleResponse;
/// use toolprism::ContentBlock;
/// let answer = SampleResponse::new(ContentBlock::text("Blue."), "some-model").with_stop_reason("endTurn");
/// assert_eq!(answer.stop_reason.as_deref(), Some("endTurn"));
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct SampleResponse {
    /// The answer.
    pub content: ContentBlock,
    /// The model that answered.
    pub model: String,
    /// Why it stopped, when the client says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
}

impl SampleResponse {
    /// The answer `content`, from `model`.
    pub fn new(content: ContentBlock, model: impl Into<String>) -> Self {
        SampleResponse {
            content,
            model: model.into(),
            stop_reason: None,
        }
    }

    /// The same answer, saying why the model stopped.
    pub fn with_stop_reason(mut self, stop_reason: impl Into<String>) -> Self {
        self.stop_reason = Some(stop_reason.into());
        self
    }
}

/// A form for the user: a message and the JSON Schema of what to fill in
/// (an object of primitive fields: strings, numbers, integers, booleans,
/// enums; with `default`s and titled or multi-select enums, as MCP's
/// elicitation allows).
///
/// ```
/// use toolprism::client::ElicitRequest;
/// let form = ElicitRequest::new(
///     "Which branch?",
///     serde_json::json!({"type": "object", "properties": {"branch": {"type": "string"}}, "required": ["branch"]}),
/// );
/// assert_eq!(serde_json::to_value(&form).unwrap()["message"], "Which branch?");
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ElicitRequest {
    /// What to ask.
    pub message: String,
    /// The schema of the answer.
    pub requested_schema: Value,
}

impl ElicitRequest {
    /// Ask `message`, the answer following `requested_schema`.
    pub fn new(message: impl Into<String>, requested_schema: Value) -> Self {
        ElicitRequest {
            message: message.into(),
            requested_schema,
        }
    }
}

/// What the user did with a form.
#[derive(Debug, Clone, PartialEq)]
pub enum ElicitResponse {
    /// Filled it in: the content, matching the schema.
    Accept(Value),
    /// Said no.
    Decline,
    /// Dismissed it without an answer.
    Cancel,
}

/// A question before a call runs: may `tool` run with `arguments`?
///
/// The registry makes it; [`ApprovalRequest::new`] is for testing a
/// [`Client`] of your own.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ApprovalRequest {
    /// The tool's name.
    pub tool: String,
    /// The call's id.
    pub call_id: String,
    /// The arguments, as JSON.
    pub arguments: Value,
    /// The question, as the tool or policy wrote it.
    pub question: String,
}

impl ApprovalRequest {
    /// May the call `call_id` of `tool` run with `arguments`? Asked as
    /// `question`.
    pub fn new(
        tool: impl Into<String>,
        call_id: impl Into<String>,
        arguments: Value,
        question: impl Into<String>,
    ) -> Self {
        ApprovalRequest {
            tool: tool.into(),
            call_id: call_id.into(),
            arguments,
            question: question.into(),
        }
    }
}

/// What the user answered when asked whether a call may run
/// ([`Client::approve`]).
///
/// ```
/// use toolprism::client::ApprovalAnswer;
/// assert_eq!(ApprovalAnswer::from(true), ApprovalAnswer::Approve);
/// assert_eq!(ApprovalAnswer::from(false), ApprovalAnswer::Deny);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ApprovalAnswer {
    /// Yes: the call runs.
    Approve,
    /// No: the call ends as `NOT_APPROVED`, denied.
    Deny,
    /// The user dismissed the question without answering it (MCP
    /// elicitation's `cancel`, the end of input at a terminal): the call
    /// ends as `NOT_APPROVED`, dismissed.
    Dismiss,
}

impl From<bool> for ApprovalAnswer {
    /// `true` approves, `false` denies.
    fn from(yes: bool) -> Self {
        if yes {
            ApprovalAnswer::Approve
        } else {
            ApprovalAnswer::Deny
        }
    }
}

/// Why a client could not answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClientError {
    /// The call has no client, or the client cannot do this (names what:
    /// `sampling`, `elicitation`).
    Unavailable(String),
    /// The client answered with an error.
    Failed(String),
    /// No answer came in time.
    TimedOut,
}

impl fmt::Display for ClientError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ClientError::Unavailable(what) => write!(
                f,
                "the client of this call cannot answer {what} (it did not declare the capability, or there is no client)"
            ),
            ClientError::Failed(message) => {
                write!(f, "the client answered with an error: {message}")
            }
            ClientError::TimedOut => f.write_str("the client did not answer in time"),
        }
    }
}

impl std::error::Error for ClientError {}

impl ClientError {
    /// The error code a tool passing this on should use: `CLIENT_UNAVAILABLE`,
    /// `CLIENT_FAILED` or `CLIENT_TIMEOUT`.
    ///
    /// ```
    /// use toolprism::client::ClientError;
    /// let e = ClientError::Unavailable("sampling".into());
    /// let tool_error = toolprism::ToolError::new(e.to_string()).with_code(e.code());
    /// assert_eq!(e.code(), "CLIENT_UNAVAILABLE");
    /// # let _ = tool_error;
    /// ```
    pub fn code(&self) -> &'static str {
        match self {
            ClientError::Unavailable(_) => "CLIENT_UNAVAILABLE",
            ClientError::Failed(_) => "CLIENT_FAILED",
            ClientError::TimedOut => "CLIENT_TIMEOUT",
        }
    }
}
