//! What a call produces: the persisted [`ToolResult`] and the live
//! [`ToolOutcome`].

use std::any::Any;
use std::fmt;
use std::sync::OnceLock;

use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::card::{CallCard, ResultCard, ToolKind};
use crate::client::ApprovalAnswer;
use crate::content::ContentBlock;
use crate::error::{ErrorCode, ErrorInfo};
use crate::registry::arguments::Input;

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
#[non_exhaustive]
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

    /// The same result with this meta (what a presenter reads), e.g. to
    /// test a presenter:
    ///
    /// ```
    /// use toolprism::{ContentBlock, ToolResult};
    /// let result = ToolResult::ok(vec![ContentBlock::text("3 rows")]).with_meta(serde_json::json!({"rows": 3}));
    /// assert_eq!(result.meta.unwrap()["rows"], 3);
    /// ```
    pub fn with_meta(mut self, meta: M) -> Self {
        self.meta = Some(meta);
        self
    }
}

/// A call a program made while another call ran (through
/// [`ToolContext::program`](crate::ToolContext::program)), as the session
/// log keeps it: its name, arguments, persisted result and error code,
/// never its value. A UI draws its cards live from this with
/// [`Registry::present_call`](crate::Registry::present_call) and
/// [`Registry::present_result`](crate::Registry::present_result), the same
/// functions replay draws with, so live and replayed cards are the same.
///
/// Made by the registry (`#[non_exhaustive]`).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct NestedCall {
    /// Its id: `<parent call id>:nested:<n>`.
    pub call_id: String,
    /// The tool's name.
    pub name: String,
    /// The arguments, as JSON text (as logged).
    pub arguments: String,
    /// What is persisted of its result: content, isError, meta.
    pub result: ToolResult,
    /// The error code, failures only.
    pub error: Option<ErrorCode>,
}

/// A person's decision on a call that needed approval
/// ([`PreDecision::Ask`](crate::PreDecision::Ask), or the tool's own
/// [`approval`](crate::Tool::approval)), as the session log keeps it and
/// a card shows it.
///
/// ```
/// use toolprism::{Approval, ApprovalDecision};
/// let approval = Approval::new("Delete build/?", ApprovalDecision::Denied);
/// assert_eq!(
///     serde_json::to_value(&approval).unwrap(),
///     serde_json::json!({"question": "Delete build/?", "decision": "denied"})
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Approval {
    /// What the person was asked.
    pub question: String,
    /// What came of it.
    pub decision: ApprovalDecision,
}

impl Approval {
    /// `question` was asked, and `decision` came of it.
    pub fn new(question: impl Into<String>, decision: ApprovalDecision) -> Self {
        Approval {
            question: question.into(),
            decision,
        }
    }
}

/// What came of asking a person.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum ApprovalDecision {
    /// Yes: the call ran.
    Approved,
    /// No: the call ended as `NOT_APPROVED`.
    Denied,
    /// The person dismissed the question without answering it (MCP
    /// elicitation's `cancel`): `NOT_APPROVED`.
    Dismissed,
    /// The client could not ask the person: it answered the request with
    /// an error (or its own code panicked): `NOT_APPROVED`, at once.
    Failed,
    /// No answer in time: `NOT_APPROVED`.
    Unanswered,
    /// The call's client cannot be asked (none, or it cannot elicit):
    /// `NOT_APPROVED`, never a hang.
    Unavailable,
}

impl ApprovalDecision {
    /// A word for a card: `approved`, `denied`, `dismissed`, `failed`,
    /// `unanswered`, `unavailable`.
    pub fn as_str(self) -> &'static str {
        match self {
            ApprovalDecision::Approved => "approved",
            ApprovalDecision::Denied => "denied",
            ApprovalDecision::Dismissed => "dismissed",
            ApprovalDecision::Failed => "failed",
            ApprovalDecision::Unanswered => "unanswered",
            ApprovalDecision::Unavailable => "unavailable",
        }
    }
}

/// How asking a person whether a call may run ended: the
/// [`ApprovalDecision`] the log keeps, plus what the model's message says
/// of it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Asked {
    /// The person answered.
    Answered(ApprovalAnswer),
    /// The call's client cannot be asked.
    Unavailable,
    /// The client could not ask: its error.
    Failed(String),
    /// No answer came within this long.
    Unanswered(std::time::Duration),
}

impl Asked {
    /// The decision the log keeps.
    pub(crate) fn decision(&self) -> ApprovalDecision {
        match self {
            Asked::Answered(ApprovalAnswer::Approve) => ApprovalDecision::Approved,
            Asked::Answered(ApprovalAnswer::Deny) => ApprovalDecision::Denied,
            Asked::Answered(ApprovalAnswer::Dismiss) => ApprovalDecision::Dismissed,
            Asked::Unavailable => ApprovalDecision::Unavailable,
            Asked::Failed(_) => ApprovalDecision::Failed,
            Asked::Unanswered(_) => ApprovalDecision::Unanswered,
        }
    }

    /// The model's message when the call of `tool` may not run, `None`
    /// when approved: each ending its own.
    pub(crate) fn refusal(&self, tool: &str) -> Option<String> {
        Some(match self {
            Asked::Answered(ApprovalAnswer::Approve) => return None,
            Asked::Answered(ApprovalAnswer::Deny) => format!(
                "the user did not approve this call of \"{tool}\"; do not retry it unchanged: ask the user, or do something else"
            ),
            Asked::Answered(ApprovalAnswer::Dismiss) => format!(
                "the user dismissed the approval of this call of \"{tool}\" without answering; it did not run: ask the user whether to run it before calling it again"
            ),
            Asked::Failed(error) => format!(
                "this call of \"{tool}\" needs the user's approval, and the client could not ask the user ({error}); it did not run"
            ),
            Asked::Unanswered(waited) => format!(
                "this call of \"{tool}\" needs the user's approval, and no answer came within {} s; it did not run",
                waited.as_secs()
            ),
            Asked::Unavailable => format!(
                "this call of \"{tool}\" needs the user's approval, and this client cannot ask the user; it did not run"
            ),
        })
    }
}

/// The live outcome of one call: the persisted [`ToolResult`], plus the
/// validated value for successes, plus `{message, code}` for failures, plus
/// the cards for top-level calls.
///
/// Serialized as `{callId, name, content, isError, meta?, value?, error?}`.
pub struct ToolOutcome(pub(crate) Box<Parts>);

/// What a [`ToolOutcome`] holds, boxed: an outcome is returned through
/// several layers of futures, and a pointer moves for free where the
/// whole (some 300 bytes) would be copied at each.
pub(crate) struct Parts {
    pub(crate) call_id: String,
    pub(crate) name: String,
    pub(crate) result: ToolResult,
    pub(crate) value: Option<serde_json::Value>,
    pub(crate) typed: Option<Box<dyn Any + Send + Sync>>,
    pub(crate) error: Option<ErrorInfo>,
    pub(crate) call_card: Option<CallCardSlot>,
    pub(crate) result_card: Option<ResultCardSlot>,
    pub(crate) warnings: Vec<String>,
    pub(crate) nested: Vec<NestedCall>,
    pub(crate) approval: Option<Approval>,
}

impl fmt::Debug for ToolOutcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolOutcome")
            .field("call_id", &self.0.call_id)
            .field("name", &self.0.name)
            .field("result", &self.0.result)
            .field("value", &self.0.value)
            .field("error", &self.0.error)
            .field("call_card", &self.call_card())
            .field("result_card", &self.result_card())
            .field("warnings", &self.0.warnings)
            .finish_non_exhaustive()
    }
}

impl ToolOutcome {
    /// The call's id.
    pub fn call_id(&self) -> &str {
        &self.0.call_id
    }

    /// The tool's name as called.
    pub fn name(&self) -> &str {
        &self.0.name
    }

    /// What is persisted: content, isError, meta.
    pub fn result(&self) -> &ToolResult {
        &self.0.result
    }

    /// What the model reads.
    pub fn content(&self) -> &[ContentBlock] {
        &self.0.result.content
    }

    /// Whether the call failed.
    pub fn is_error(&self) -> bool {
        self.0.result.is_error
    }

    /// The meta, for top-level successes whose tool projects one.
    pub fn meta(&self) -> Option<&serde_json::Value> {
        self.0.result.meta.as_ref()
    }

    /// The validated canonical value as JSON, successes only.
    pub fn value(&self) -> Option<&serde_json::Value> {
        self.0.value.as_ref()
    }

    /// The canonical value as the tool's own type, when `V` is that type.
    pub fn value_as<V: 'static>(&self) -> Option<&V> {
        self.0.typed.as_ref()?.downcast_ref::<V>()
    }

    /// The error, failures only.
    pub fn error(&self) -> Option<&ErrorInfo> {
        self.0.error.as_ref()
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
        self.0.error.as_ref().map(|e| &e.code)
    }

    /// The call card, top-level calls only.
    pub fn call_card(&self) -> Option<&CallCard> {
        match self.0.call_card.as_ref()? {
            CallCardSlot::Drawn(card) => Some(card),
            CallCardSlot::Generic { kind, input, card } => Some(card.get_or_init(|| {
                Box::new(CallCard::generic(
                    self.0.name.clone(),
                    *kind,
                    Some(input.json().into_owned()),
                ))
            })),
        }
    }

    /// The call card taken out of the outcome: a generic card not drawn
    /// yet is drawn over the arguments the outcome keeps, without copying
    /// them (for a transport that sends the card and drops the rest).
    pub fn take_call_card(&mut self) -> Option<CallCard> {
        Some(self.0.call_card.take()?.into_card(&self.0.name))
    }

    /// The result card, top-level calls only.
    pub fn result_card(&self) -> Option<&ResultCard> {
        match self.0.result_card.as_ref()? {
            ResultCardSlot::Drawn(card) => Some(card),
            ResultCardSlot::Generic(card) => Some(card.get_or_init(|| {
                Box::new(ResultCard::generic(
                    Some(self.0.name.clone()),
                    self.0.result.content.clone(),
                ))
            })),
        }
    }

    /// The calls a program made while this call ran (a Code Mode program's
    /// `tools.x(…)`), in the order they finished: what the log keeps of
    /// each, to draw their cards under this call's. Empty for a tool that
    /// runs no program.
    pub fn nested_calls(&self) -> &[NestedCall] {
        &self.0.nested
    }

    /// The person's decision, for a call that needed approval.
    pub fn approval(&self) -> Option<&Approval> {
        self.0.approval.as_ref()
    }

    /// Problems that did not fail the call: a spill or a log write that
    /// failed (the content was kept whole, the call's result stands).
    pub fn warnings(&self) -> &[String] {
        &self.0.warnings
    }

    /// Takes the persisted result, dropping the rest.
    pub fn into_result(self) -> ToolResult {
        self.0.result
    }

    /// The value as JSON, or the error.
    pub fn into_value(self) -> Result<serde_json::Value, ErrorInfo> {
        match (self.0.value, self.0.error) {
            (Some(value), None) => Ok(value),
            (_, Some(error)) => Err(error),
            (None, None) => Err(ErrorInfo::new(
                ErrorCode::ToolFailed,
                "the call produced no value",
            )),
        }
    }

    /// What the log keeps of a program's call, and what the program gets:
    /// the value or the error.
    pub(crate) fn into_record(
        self,
        arguments: String,
    ) -> (NestedCall, Result<serde_json::Value, ErrorInfo>) {
        let Parts {
            call_id,
            name,
            result,
            value,
            typed,
            error,
            ..
        } = *self.0;
        // The typed value's `Drop` is the tool's code.
        if let Some(typed) = typed {
            crate::guard::discard(typed);
        }
        let code = error.as_ref().map(|e| e.code.clone());
        let value = match (value, error) {
            (_, Some(error)) => Err(error),
            (Some(value), None) => Ok(value),
            (None, None) => Err(ErrorInfo::new(
                ErrorCode::ToolFailed,
                "the call produced no value",
            )),
        };
        let record = NestedCall {
            call_id,
            name,
            arguments,
            result,
            error: code,
        };
        (record, value)
    }

    /// The value as the tool's own type `V`, or the error.
    pub fn into_typed<V: 'static>(self) -> Result<V, ErrorInfo> {
        if let Some(error) = self.0.error {
            return Err(error);
        }
        match self.0.typed.map(|b| b.downcast::<V>()) {
            Some(Ok(v)) => Ok(*v),
            _ => Err(ErrorInfo::new(
                ErrorCode::ToolFailed,
                format!(
                    "tool \"{}\" does not return a `{}`",
                    self.0.name,
                    std::any::type_name::<V>()
                ),
            )),
        }
    }
}

impl Serialize for ToolOutcome {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("callId", &self.0.call_id)?;
        map.serialize_entry("name", &self.0.name)?;
        map.serialize_entry("content", &self.0.result.content)?;
        map.serialize_entry("isError", &self.0.result.is_error)?;
        if let Some(meta) = &self.0.result.meta {
            map.serialize_entry("meta", meta)?;
        }
        if let Some(value) = &self.0.value {
            map.serialize_entry("value", value)?;
        }
        if let Some(error) = &self.0.error {
            map.serialize_entry("error", error)?;
        }
        map.end()
    }
}

/// A top-level call's call card: drawn by the tool's `present_call`, or the
/// generic card over the outcome's own name and the arguments, drawn the
/// first time it is asked for. Most callers (an agent loop, a program) read
/// the content only, and a card not drawn costs nothing but the arguments
/// it keeps. Boxed, so the outcome stays small to move.
pub(crate) enum CallCardSlot {
    /// Drawn by `present_call`.
    Drawn(Box<CallCard>),
    /// The generic card, drawn on first access.
    Generic {
        kind: Option<ToolKind>,
        /// The arguments as JSON, or as the raw text when they are not JSON.
        input: Input,
        card: OnceLock<Box<CallCard>>,
    },
}

impl CallCardSlot {
    /// The card, drawn now if it was not yet (over the arguments it keeps,
    /// without copying them).
    pub(crate) fn into_card(self, name: &str) -> CallCard {
        match self {
            CallCardSlot::Drawn(card) => *card,
            CallCardSlot::Generic { kind, input, card } => match card.into_inner() {
                Some(card) => *card,
                None => CallCard::generic(name, kind, Some(input.into_json())),
            },
        }
    }

    /// The generic card over `input`, not drawn yet.
    pub(crate) fn generic(kind: Option<ToolKind>, input: Input) -> Self {
        CallCardSlot::Generic {
            kind,
            input,
            card: OnceLock::new(),
        }
    }
}

/// A top-level call's result card: drawn by the tool's `present_result`, or
/// the generic card over the outcome's own name and content, drawn the first
/// time it is asked for (a copy of the content is its whole cost). Boxed,
/// like the call card.
pub(crate) enum ResultCardSlot {
    /// Drawn by `present_result`.
    Drawn(Box<ResultCard>),
    /// The generic card, drawn on first access.
    Generic(OnceLock<Box<ResultCard>>),
}

impl ResultCardSlot {
    /// The generic card, not drawn yet.
    pub(crate) fn generic() -> Self {
        ResultCardSlot::Generic(OnceLock::new())
    }
}
