//! Errors: the [`ErrorCode`] every failed result carries, the
//! [`ToolError`] a tool returns (and a nested call fails with), and the
//! [`ErrorInfo`] of an outcome.

use std::borrow::Cow;
use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

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
    /// The arguments are not JSON, are not lossless JSON (an object key
    /// written twice, `-0.0`, nesting deeper than [`MAX_DEPTH`](crate::MAX_DEPTH)),
    /// break the input schema or do not deserialize.
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
    /// The call needed a person's approval and did not get it: denied, not
    /// answered in time, or its client cannot be asked.
    NotApproved,
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
            ErrorCode::NotApproved => "NOT_APPROVED",
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
            "NOT_APPROVED" => ErrorCode::NotApproved,
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
///
/// `#[non_exhaustive]`: build it with [`ErrorInfo::new`].
///
/// ```
/// use toolprism::{ErrorCode, ErrorInfo};
/// let error = ErrorInfo::new(ErrorCode::Timeout, "the call took longer than 5 s");
/// assert_eq!(error.to_string(), "the call took longer than 5 s (TIMEOUT)");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ErrorInfo {
    /// What went wrong, written for a model to act on.
    pub message: String,
    /// The machine-readable code.
    pub code: ErrorCode,
}

impl ErrorInfo {
    /// A failure with this `code`, and `message` for the model.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
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
