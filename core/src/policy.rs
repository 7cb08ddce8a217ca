//! Policies: allow or deny before `execute` (C11 in `docs/contract.md`), accept, replace
//! or block after it (C10 in `docs/contract.md`).
//!
//! A post-execute decision is exactly one of four things. It cannot carry
//! both new content and a new value: there is no variant for that.
//!
//! ```compile_fail
//! use toolprism::PostDecision;
//! // There is no decision that replaces content and value together.
//! let _ = PostDecision::ReplaceValue { value: serde_json::json!({}), content: vec![] };
//! ```
//!
//! ```
//! use toolprism::{ContentBlock, PostDecision, PostExecute, PreDecision, PreExecute};
//!
//! let no_rm = |call: &PreExecute<'_>| match call.arguments["command"].as_str() {
//!     Some(cmd) if cmd.contains("rm -rf") => PreDecision::deny("destructive commands need a human"),
//!     _ => PreDecision::Allow,
//! };
//! let quiet = |r: &PostExecute<'_>| {
//!     if r.tool == "bash" && !r.result.is_error {
//!         PostDecision::ReplaceContent(vec![ContentBlock::text("(output hidden)")])
//!     } else {
//!         PostDecision::Accept
//!     }
//! };
//! let registry = toolprism::Registry::builder().pre_execute(no_rm).post_execute(quiet).build().unwrap();
//! # let _ = registry;
//! ```

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::caller::Caller;
use crate::content::ContentBlock;
use crate::error::ErrorInfo;
use crate::lossless::{LosslessError, to_lossless_value};
use crate::result::ToolResult;

/// A call about to run, as a pre-execute policy sees it.
///
/// The registry makes it (`#[non_exhaustive]`: a policy may be shown more
/// of the call later); [`PreExecute::new`] is for testing a policy.
///
/// ```
/// use toolprism::{PreDecision, PreExecute, PreExecutePolicy};
/// let no_rm = |call: &PreExecute<'_>| match call.arguments["command"].as_str() {
///     Some(cmd) if cmd.contains("rm -rf") => PreDecision::deny("no"),
///     _ => PreDecision::Allow,
/// };
/// let args = serde_json::json!({"command": "rm -rf /"});
/// let call = PreExecute::new("bash", "c1", &args);
/// assert!(matches!(no_rm.check(&call), PreDecision::Deny { .. }));
/// assert!(matches!(no_rm.check(&call.with_nested(true)), PreDecision::Deny { .. }));
/// ```
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct PreExecute<'a> {
    /// The tool's name.
    pub tool: &'a str,
    /// The call's id.
    pub call_id: &'a str,
    /// The validated arguments.
    pub arguments: &'a Value,
    /// Whether a program (not the model) made the call.
    pub nested: bool,
    /// Who makes the call, when the transport verified it
    /// ([`CallOptions::with_caller`](crate::CallOptions::with_caller); a
    /// nested call carries its parent's): a policy may allow or deny per
    /// caller (W3 in `docs/contract.md`). `None` for a call made without
    /// one.
    pub caller: Option<&'a Caller>,
}

impl<'a> PreExecute<'a> {
    /// The call `call_id` of `tool` with these validated `arguments`, made
    /// by the model (not nested), with no caller.
    pub fn new(tool: &'a str, call_id: &'a str, arguments: &'a Value) -> Self {
        PreExecute {
            tool,
            call_id,
            arguments,
            nested: false,
            caller: None,
        }
    }

    /// The same call, saying whether a program made it.
    pub fn with_nested(mut self, nested: bool) -> Self {
        self.nested = nested;
        self
    }

    /// The same call, made by `caller`.
    pub fn with_caller(mut self, caller: &'a Caller) -> Self {
        self.caller = Some(caller);
        self
    }
}

/// Allow the call, or deny it with a reason the model reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PreDecision {
    /// Run it.
    Allow,
    /// Do not run it; the call ends as a `DENIED` error with this reason.
    Deny {
        /// Why, for the model.
        reason: String,
    },
    /// Run it only if a person approves: the question goes to the call's
    /// client ([`Client::approve`](crate::client::Client::approve), by
    /// elicitation over MCP, a prompt at the command line); a denial, no
    /// answer in time, or a client that cannot be asked ends the call as
    /// `NOT_APPROVED`. The decision is logged with the call.
    Ask {
        /// What to ask the person, about this call.
        question: String,
    },
}

impl PreDecision {
    /// A denial.
    pub fn deny(reason: impl Into<String>) -> Self {
        PreDecision::Deny {
            reason: reason.into(),
        }
    }

    /// Run only if a person approves.
    ///
    /// ```
    /// use toolprism::{PreDecision, PreExecute};
    /// // Ask before any edit.
    /// let ask = |call: &PreExecute<'_>| match call.tool {
    ///     "edit" | "write" => PreDecision::ask(format!("Let the agent change {}?", call.arguments["path"])),
    ///     _ => PreDecision::Allow,
    /// };
    /// let registry = toolprism::Registry::builder().pre_execute(ask).build().unwrap();
    /// # let _ = registry;
    /// ```
    pub fn ask(question: impl Into<String>) -> Self {
        PreDecision::Ask {
            question: question.into(),
        }
    }
}

/// Decides whether a call may run. Closures `Fn(&PreExecute) -> PreDecision` are policies.
pub trait PreExecutePolicy: Send + Sync + 'static {
    /// Allow or deny.
    fn check(&self, call: &PreExecute<'_>) -> PreDecision;
}

impl<F> PreExecutePolicy for F
where
    F: Fn(&PreExecute<'_>) -> PreDecision + Send + Sync + 'static,
{
    fn check(&self, call: &PreExecute<'_>) -> PreDecision {
        self(call)
    }
}

/// A finished call, as a post-execute policy sees it.
///
/// The registry makes it (`#[non_exhaustive]`); [`PostExecute::new`] is
/// for testing a policy.
///
/// ```
/// use toolprism::{ContentBlock, PostDecision, PostExecute, PostExecutePolicy, ToolResult};
/// let hide = |r: &PostExecute<'_>| match r.value {
///     Some(_) => PostDecision::ReplaceContent(vec![ContentBlock::text("(hidden)")]),
///     None => PostDecision::Accept,
/// };
/// let (args, value) = (serde_json::json!({}), serde_json::json!({"secret": 1}));
/// let result = ToolResult::ok(vec![ContentBlock::text("secret: 1")]);
/// let done = PostExecute::new("vault", "c1", &args, &result).with_value(&value);
/// assert!(matches!(hide.decide(&done), PostDecision::ReplaceContent(_)));
/// ```
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct PostExecute<'a> {
    /// The tool's name.
    pub tool: &'a str,
    /// The call's id.
    pub call_id: &'a str,
    /// The validated arguments.
    pub arguments: &'a Value,
    /// Whether a program (not the model) made the call.
    pub nested: bool,
    /// Content, isError and meta so far.
    pub result: &'a ToolResult,
    /// The validated value, successes only.
    pub value: Option<&'a Value>,
    /// The error, failures only.
    pub error: Option<&'a ErrorInfo>,
}

impl<'a> PostExecute<'a> {
    /// The call `call_id` of `tool` with these `arguments`, finished with
    /// `result`, made by the model (not nested); no value, no error.
    pub fn new(
        tool: &'a str,
        call_id: &'a str,
        arguments: &'a Value,
        result: &'a ToolResult,
    ) -> Self {
        PostExecute {
            tool,
            call_id,
            arguments,
            nested: false,
            result,
            value: None,
            error: None,
        }
    }

    /// The same call, saying whether a program made it.
    pub fn with_nested(mut self, nested: bool) -> Self {
        self.nested = nested;
        self
    }

    /// The same call, a success with this validated value.
    pub fn with_value(mut self, value: &'a Value) -> Self {
        self.value = Some(value);
        self
    }

    /// The same call, a failure with this error.
    pub fn with_error(mut self, error: &'a ErrorInfo) -> Self {
        self.error = Some(error);
        self
    }
}

impl PostExecute<'_> {
    /// The value deserialized as `V` (e.g. the tool's value type).
    pub fn value_as<V: DeserializeOwned>(&self) -> Option<V> {
        V::deserialize(self.value?).ok()
    }
}

/// What a post-execute policy decides: exactly one of four, and no decision
/// replaces both the value and the content, because content is projected
/// from the value (`render`): a new value brings its own content, and content
/// that came with a value of its own would let the model read one thing
/// while programs get another (C10 in `docs/contract.md`).
#[derive(Debug, Clone, PartialEq)]
pub enum PostDecision {
    /// Keep the result.
    Accept,
    /// Replace what the model reads; value and meta stay. This is
    /// presentation, not confidentiality: a program still gets the value.
    ReplaceContent(Vec<ContentBlock>),
    /// Replace the value (successes only). It is validated against the
    /// output schema again, and content and meta are projected again from it.
    ReplaceValue(Value),
    /// Turn the call into a `BLOCKED` error whose content is the feedback.
    Block {
        /// What the model reads instead.
        feedback: Vec<ContentBlock>,
    },
}

impl PostDecision {
    /// `ReplaceValue` from any serializable value, made lossless like every
    /// other value: NaN, infinities, `-0.0`, a key written twice or nesting
    /// deeper than [`MAX_DEPTH`](crate::MAX_DEPTH) are refused, never
    /// silently changed.
    ///
    /// ```
    /// #[derive(serde::Serialize)]
    /// struct V { n: f64 }
    /// let d = toolprism::PostDecision::replace_value(&V { n: 1.5 }).unwrap();
    /// assert_eq!(d, toolprism::PostDecision::ReplaceValue(serde_json::json!({"n": 1.5})));
    /// let e = toolprism::PostDecision::replace_value(&V { n: f64::NAN }).unwrap_err();
    /// assert_eq!(e.path(), "value.n");
    /// ```
    pub fn replace_value<V: Serialize>(value: &V) -> Result<Self, LosslessError> {
        Ok(PostDecision::ReplaceValue(to_lossless_value(
            value, "value",
        )?))
    }

    /// `Block` with a text feedback.
    pub fn block(feedback: impl Into<String>) -> Self {
        PostDecision::Block {
            feedback: vec![ContentBlock::text(feedback)],
        }
    }
}

/// Decides what happens to a finished call. Closures
/// `Fn(&PostExecute) -> PostDecision` are policies.
pub trait PostExecutePolicy: Send + Sync + 'static {
    /// Accept, replace or block.
    fn decide(&self, result: &PostExecute<'_>) -> PostDecision;
}

impl<F> PostExecutePolicy for F
where
    F: Fn(&PostExecute<'_>) -> PostDecision + Send + Sync + 'static,
{
    fn decide(&self, result: &PostExecute<'_>) -> PostDecision {
        self(result)
    }
}
