//! What a call produces: the persisted [`ToolResult`], the live
//! [`ToolOutcome`], errors and their codes.

use std::any::Any;
use std::borrow::Cow;
use std::fmt;

use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::card::{CallCard, ResultCard};
use crate::content::ContentBlock;

/// What is persisted of a call, and all a presenter ever sees:
/// `{content, isError, meta?}`. The value is never part of it.
///
/// `M` is the tool's meta type for presenters; the registry keeps
/// `ToolResult<serde_json::Value>`.
///
/// ```
/// use toolprism::{ContentBlock, ToolResult};
/// let r: ToolResult = ToolResult::ok(vec![ContentBlock::text("done")]);
/// assert_eq!(
///     serde_json::to_string(&r).unwrap(),
///     r#"{"content":[{"type":"text","text":"done"}],"isError":false}"#
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", bound(deserialize = "M: Deserialize<'de>"))]
pub struct ToolResult<M = serde_json::Value> {
    /// What the model reads.
    pub content: Vec<ContentBlock>,
    /// Whether the call failed.
    pub is_error: bool,
    /// Small replayable UI data from `presentation_meta`, top-level calls
    /// only. A meta whose JSON is `null` (a unit struct, a `null` value) is
    /// kept as `"meta":null` and read back as such: live and replayed cards
    /// see the same meta.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "present"
    )]
    pub meta: Option<M>,
}

/// A field that is present is `Some`, even when its JSON is `null`; an
/// absent field is `None` (through `#[serde(default)]`).
pub(crate) fn present<'de, D, M>(deserializer: D) -> Result<Option<M>, D::Error>
where
    D: Deserializer<'de>,
    M: Deserialize<'de>,
{
    M::deserialize(deserializer).map(Some)
}

impl<M> ToolResult<M> {
    /// A successful result with no meta.
    pub fn ok(content: Vec<ContentBlock>) -> Self {
        ToolResult {
            content,
            is_error: false,
            meta: None,
        }
    }

    /// The error result the model reads: `Error: <message>`.
    pub fn error(message: &str) -> Self {
        ToolResult {
            content: vec![ContentBlock::text(format!("Error: {message}"))],
            is_error: true,
            meta: None,
        }
    }
}

/// A machine-readable error code.
///
/// Serialized as its `SCREAMING_SNAKE` name; [`ErrorCode::Custom`] carries
/// a tool's own code. Compares with its name as a string:
///
/// ```
/// use toolprism::ErrorCode;
/// assert_eq!(ErrorCode::InvalidArgs, "INVALID_ARGS");
/// assert_eq!(ErrorCode::parse("NOT_FOUND"), "NOT_FOUND");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorCode {
    /// No tool of that name is registered.
    UnknownTool,
    /// The arguments are not JSON, break the input schema or do not deserialize.
    InvalidArgs,
    /// The value, a projection or a replacement value broke the output contract.
    InvalidToolOutput,
    /// `execute` returned an error or panicked.
    ToolFailed,
    /// A pre-execute policy denied the call.
    Denied,
    /// A post-execute policy blocked the result.
    Blocked,
    /// `execute` ran past its timeout.
    Timeout,
    /// The call was cancelled while `execute` ran.
    Aborted,
    /// The call was cancelled before `execute` started.
    AbortedBeforeDispatch,
    /// A policy made a decision the contract forbids.
    PolicyError,
    /// A tool's own code.
    Custom(Cow<'static, str>),
}

impl ErrorCode {
    /// The code as a string, e.g. `"INVALID_ARGS"`.
    pub fn as_str(&self) -> &str {
        match self {
            ErrorCode::UnknownTool => "UNKNOWN_TOOL",
            ErrorCode::InvalidArgs => "INVALID_ARGS",
            ErrorCode::InvalidToolOutput => "INVALID_TOOL_OUTPUT",
            ErrorCode::ToolFailed => "TOOL_FAILED",
            ErrorCode::Denied => "DENIED",
            ErrorCode::Blocked => "BLOCKED",
            ErrorCode::Timeout => "TIMEOUT",
            ErrorCode::Aborted => "ABORTED",
            ErrorCode::AbortedBeforeDispatch => "ABORTED_BEFORE_DISPATCH",
            ErrorCode::PolicyError => "POLICY_ERROR",
            ErrorCode::Custom(code) => code,
        }
    }

    /// Parses a code; unknown names become [`ErrorCode::Custom`].
    pub fn parse(code: &str) -> Self {
        match code {
            "UNKNOWN_TOOL" => ErrorCode::UnknownTool,
            "INVALID_ARGS" => ErrorCode::InvalidArgs,
            "INVALID_TOOL_OUTPUT" => ErrorCode::InvalidToolOutput,
            "TOOL_FAILED" => ErrorCode::ToolFailed,
            "DENIED" => ErrorCode::Denied,
            "BLOCKED" => ErrorCode::Blocked,
            "TIMEOUT" => ErrorCode::Timeout,
            "ABORTED" => ErrorCode::Aborted,
            "ABORTED_BEFORE_DISPATCH" => ErrorCode::AbortedBeforeDispatch,
            "POLICY_ERROR" => ErrorCode::PolicyError,
            other => ErrorCode::Custom(Cow::Owned(other.to_owned())),
        }
    }
}

impl PartialEq<str> for ErrorCode {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for ErrorCode {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl PartialEq<ErrorCode> for str {
    fn eq(&self, other: &ErrorCode) -> bool {
        self == other.as_str()
    }
}

impl PartialEq<ErrorCode> for &str {
    fn eq(&self, other: &ErrorCode) -> bool {
        *self == other.as_str()
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for ErrorCode {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for ErrorCode {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let s = Cow::<'de, str>::deserialize(deserializer)?;
        Ok(ErrorCode::parse(&s))
    }
}

/// The error a tool's `execute` returns, and a nested call's error.
///
/// Any `E: Display` converts into it (`?` works on `io::Error`, `String`, …);
/// the code defaults to `TOOL_FAILED`. A nested call
/// ([`ToolContext::call_nested`](crate::ToolContext::call_nested)) fails
/// with a `ToolError` carrying the inner call's code, so `?` on it inside
/// `execute` passes that code on. (`ToolError` itself is not `Display`:
/// that would make the blanket conversion overlap with `From<ToolError>`.)
///
/// ```
/// use toolprism::{ErrorCode, ToolError};
/// let e = ToolError::new("file not found").with_code("NOT_FOUND");
/// assert_eq!(e.message(), "file not found");
/// assert_eq!(e.code().as_str(), "NOT_FOUND");
/// let e: ToolError = std::io::Error::other("disk full").into();
/// assert_eq!(e.code(), &ErrorCode::ToolFailed);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolError {
    message: String,
    code: ErrorCode,
}

impl ToolError {
    /// An error with this message and code `TOOL_FAILED`.
    pub fn new(message: impl Into<String>) -> Self {
        ToolError {
            message: message.into(),
            code: ErrorCode::ToolFailed,
        }
    }

    /// The same error with a code of the tool's own.
    pub fn with_code(mut self, code: impl Into<Cow<'static, str>>) -> Self {
        self.code = ErrorCode::parse_owned(code.into());
        self
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The code.
    pub fn code(&self) -> &ErrorCode {
        &self.code
    }

    pub(crate) fn into_info(self) -> ErrorInfo {
        ErrorInfo {
            message: self.message,
            code: self.code,
        }
    }
}

impl ErrorCode {
    fn parse_owned(code: Cow<'static, str>) -> Self {
        match ErrorCode::parse(&code) {
            ErrorCode::Custom(_) => ErrorCode::Custom(code),
            known => known,
        }
    }
}

impl<E: fmt::Display> From<E> for ToolError {
    fn from(e: E) -> Self {
        ToolError::new(e.to_string())
    }
}

/// Why a call failed: `{message, code}`. Only the code is persisted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorInfo {
    /// What went wrong, written for a model to act on.
    pub message: String,
    /// The machine-readable code.
    pub code: ErrorCode,
}

impl ErrorInfo {
    pub(crate) fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        ErrorInfo {
            message: message.into(),
            code,
        }
    }

    /// The same error as a [`ToolError`], its code kept: for a tool that
    /// returns an outcome's error as its own.
    pub fn into_tool_error(self) -> ToolError {
        ToolError {
            message: self.message,
            code: self.code,
        }
    }
}

impl fmt::Display for ErrorInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.message, self.code)
    }
}

impl std::error::Error for ErrorInfo {}

/// The live outcome of one call: the persisted [`ToolResult`], plus the
/// validated value for successes, plus `{message, code}` for failures, plus
/// the cards for top-level calls.
///
/// Serialized as `{callId, name, content, isError, meta?, value?, error?}`.
pub struct ToolOutcome {
    pub(crate) call_id: String,
    pub(crate) name: String,
    pub(crate) result: ToolResult,
    pub(crate) value: Option<serde_json::Value>,
    pub(crate) typed: Option<Box<dyn Any + Send + Sync>>,
    pub(crate) error: Option<ErrorInfo>,
    pub(crate) call_card: Option<CallCard>,
    pub(crate) result_card: Option<ResultCardSlot>,
    pub(crate) warnings: Vec<String>,
}

impl fmt::Debug for ToolOutcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolOutcome")
            .field("call_id", &self.call_id)
            .field("name", &self.name)
            .field("result", &self.result)
            .field("value", &self.value)
            .field("error", &self.error)
            .field("call_card", &self.call_card)
            .field("result_card", &self.result_card())
            .field("warnings", &self.warnings)
            .finish_non_exhaustive()
    }
}

impl ToolOutcome {
    /// The call's id.
    pub fn call_id(&self) -> &str {
        &self.call_id
    }

    /// The tool's name as called.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// What is persisted: content, isError, meta.
    pub fn result(&self) -> &ToolResult {
        &self.result
    }

    /// What the model reads.
    pub fn content(&self) -> &[ContentBlock] {
        &self.result.content
    }

    /// Whether the call failed.
    pub fn is_error(&self) -> bool {
        self.result.is_error
    }

    /// The meta, for top-level successes whose tool projects one.
    pub fn meta(&self) -> Option<&serde_json::Value> {
        self.result.meta.as_ref()
    }

    /// The validated canonical value as JSON, successes only.
    pub fn value(&self) -> Option<&serde_json::Value> {
        self.value.as_ref()
    }

    /// The canonical value as the tool's own type, when `V` is that type.
    pub fn value_as<V: 'static>(&self) -> Option<&V> {
        self.typed.as_ref()?.downcast_ref::<V>()
    }

    /// The error, failures only.
    pub fn error(&self) -> Option<&ErrorInfo> {
        self.error.as_ref()
    }

    /// The error code, failures only.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let registry = toolprism::Registry::builder().build().unwrap();
    /// let out = registry.call(toolprism::ToolCall::new("1", "missing", "")).await;
    /// assert_eq!(out.code().unwrap(), "UNKNOWN_TOOL");
    /// # });
    /// ```
    pub fn code(&self) -> Option<&ErrorCode> {
        self.error.as_ref().map(|e| &e.code)
    }

    /// The call card, top-level calls only.
    pub fn call_card(&self) -> Option<&CallCard> {
        self.call_card.as_ref()
    }

    /// The result card, top-level calls only.
    pub fn result_card(&self) -> Option<&ResultCard> {
        match self.result_card.as_ref()? {
            ResultCardSlot::Drawn(card) => Some(card),
            ResultCardSlot::Generic(card) => Some(card.get_or_init(|| {
                ResultCard::generic(Some(self.name.clone()), self.result.content.clone())
            })),
        }
    }

    /// Problems that did not fail the call: a spill or a log write that
    /// failed (the content was kept whole, the call's result stands).
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// Takes the persisted result, dropping the rest.
    pub fn into_result(self) -> ToolResult {
        self.result
    }

    /// The value as JSON, or the error.
    pub fn into_value(self) -> Result<serde_json::Value, ErrorInfo> {
        match (self.value, self.error) {
            (Some(value), None) => Ok(value),
            (_, Some(error)) => Err(error),
            (None, None) => Err(ErrorInfo::new(
                ErrorCode::ToolFailed,
                "the call produced no value",
            )),
        }
    }

    /// The value as the tool's own type `V`, or the error.
    pub fn into_typed<V: 'static>(self) -> Result<V, ErrorInfo> {
        if let Some(error) = self.error {
            return Err(error);
        }
        match self.typed.map(|b| b.downcast::<V>()) {
            Some(Ok(v)) => Ok(*v),
            _ => Err(ErrorInfo::new(
                ErrorCode::ToolFailed,
                format!(
                    "tool \"{}\" does not return a `{}`",
                    self.name,
                    std::any::type_name::<V>()
                ),
            )),
        }
    }
}

impl Serialize for ToolOutcome {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("callId", &self.call_id)?;
        map.serialize_entry("name", &self.name)?;
        map.serialize_entry("content", &self.result.content)?;
        map.serialize_entry("isError", &self.result.is_error)?;
        if let Some(meta) = &self.result.meta {
            map.serialize_entry("meta", meta)?;
        }
        if let Some(value) = &self.value {
            map.serialize_entry("value", value)?;
        }
        if let Some(error) = &self.error {
            map.serialize_entry("error", error)?;
        }
        map.end()
    }
}

/// A top-level call's result card: drawn by the tool's `present_result`, or
/// the generic card over the outcome's own name and content, drawn the first
/// time it is asked for. A copy of the content is the generic card's whole
/// cost, and most callers (an agent loop, a program) read the content only.
pub(crate) enum ResultCardSlot {
    /// Drawn by `present_result`.
    Drawn(ResultCard),
    /// The generic card, drawn on first access.
    Generic(std::sync::OnceLock<ResultCard>),
}

impl ResultCardSlot {
    /// The generic card, not drawn yet.
    pub(crate) fn generic() -> Self {
        ResultCardSlot::Generic(std::sync::OnceLock::new())
    }
}
