//! The [`Tool`] trait `#[tool]` implements.

use std::future::Future;

use crate::card::{CallCard, ResultCard};
use crate::content::ContentBlock;
use crate::context::ToolContext;
use crate::definition::ToolInfo;
use crate::error::ToolError;
use crate::result::ToolResult;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

/// Placeholder meta type for tools with no `presentation_meta`. It has no
/// values, so such a tool's results never carry meta.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum NoMeta {}

/// A tool: one canonical value from `execute`, and pure projections of it.
///
/// Write it with `#[tool]`; implementing it by hand is supported and is
/// what the attribute generates. Only `execute` may do I/O. `render`,
/// `presentation_meta` and the presenters take no `self`, so they cannot
/// reach the handles the tool holds.
///
/// ```
/// use toolprism::{ContentBlock, NoMeta, Tool, ToolContext, ToolError, ToolInfo};
///
/// #[derive(serde::Deserialize, schemars::JsonSchema, Clone)]
/// struct EchoArgs { text: String }
///
/// #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
/// struct Echoed { text: String, len: usize }
///
/// struct Echo;
///
/// impl Tool for Echo {
///     type Args = EchoArgs;
///     type Value = Echoed;
///     type Meta = NoMeta;
///     const INFO: ToolInfo = ToolInfo::new("echo", "Echo the text back.");
///
///     async fn execute(&self, args: EchoArgs, _cx: &ToolContext<'_>) -> Result<Echoed, ToolError> {
///         Ok(Echoed { len: args.text.len(), text: args.text })
///     }
///
///     fn render(_args: &EchoArgs, value: &Echoed) -> Vec<ContentBlock> {
///         vec![ContentBlock::text(format!("{} ({} bytes)", value.text, value.len))]
///     }
/// }
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let registry = toolprism::Registry::builder().tool(Echo).build().unwrap();
/// let out = registry.call(toolprism::ToolCall::new("c1", "echo", r#"{"text":"hi"}"#)).await;
/// assert!(!out.is_error());
/// assert_eq!(out.value().unwrap()["len"], 2);
/// assert_eq!(out.value_as::<Echoed>().unwrap().text, "hi");
/// # });
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a toolprism tool",
    label = "not a tool",
    note = "put `#[toolprism::tool]` on an `impl {Self} {{ fn execute(..) .. fn render(..) .. }}` block"
)]
pub trait Tool: Send + Sync + 'static {
    /// The arguments, deserialized from the model's JSON. `Clone` because
    /// `execute` takes them by value while the projections read them after.
    type Args: DeserializeOwned + JsonSchema + Clone + Send + Sync + 'static;
    /// The canonical value.
    type Value: Serialize + DeserializeOwned + JsonSchema + Send + Sync + 'static;
    /// The presentation meta; [`NoMeta`] when there is none.
    type Meta: Serialize + DeserializeOwned + Send + Sync + 'static;

    /// Name, description, kind, hints, timeout, spill budget.
    const INFO: ToolInfo;

    /// Does the work. The only place for I/O.
    ///
    /// It must yield (`.await`) while it waits: a timeout or a cancellation
    /// can only end the call at an `.await`. Work that blocks its thread
    /// belongs in [`execute_blocking`](Self::execute_blocking).
    fn execute(
        &self,
        args: Self::Args,
        cx: &ToolContext<'_>,
    ) -> impl Future<Output = Result<Self::Value, ToolError>> + Send;

    /// Does the work of a tool whose [`ToolInfo::blocking`] is set, on
    /// tokio's blocking pool; the registry then never calls
    /// [`execute`](Self::execute). `#[tool(blocking)]` writes it from a
    /// synchronous `execute`.
    fn execute_blocking(
        &self,
        _args: Self::Args,
        _cx: &ToolContext<'_>,
    ) -> Result<Self::Value, ToolError> {
        Err(ToolError::new(format!(
            "tool \"{}\" sets `blocking` but does not implement `execute_blocking`",
            Self::INFO.name
        )))
    }

    /// What the model reads. Pure.
    fn render(args: &Self::Args, value: &Self::Value) -> Vec<ContentBlock>;

    /// Small replayable UI data. Pure; top-level calls only. `None`: no meta.
    fn presentation_meta(_args: &Self::Args, _value: &Self::Value) -> Option<Self::Meta> {
        None
    }

    /// Whether this call needs a person's approval before `execute` runs:
    /// the question to ask, or `None` to run without one. Pure, a function
    /// of the typed arguments (a static question is `#[tool(approval =
    /// "…")]`). See [`PreDecision::Ask`](crate::PreDecision::Ask) for what
    /// happens then.
    fn approval(_args: &Self::Args) -> Option<String> {
        Self::INFO.approval.map(str::to_owned)
    }

    /// The call card. Pure and total; `None` gives the generic card.
    fn present_call(_args: &Self::Args) -> Option<CallCard> {
        None
    }

    /// The result card, from what is persisted only. Pure and total; `None`
    /// gives the generic card.
    fn present_result(_args: &Self::Args, _result: &ToolResult<Self::Meta>) -> Option<ResultCard> {
        None
    }
}
