//! The [`Tool`] trait `#[tool]` implements, and what describes a tool.

use std::future::Future;
use std::time::Duration;

use crate::card::{CallCard, ResultCard, ToolKind};
use crate::content::ContentBlock;
use crate::context::ToolContext;
use crate::error::ToolError;
use crate::result::ToolResult;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

/// Hints a client may show or act on. They are hints: nothing enforces them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolAnnotations {
    /// The tool does not change its environment.
    #[serde(rename = "readOnlyHint")]
    pub read_only: bool,
    /// The tool may destroy data.
    #[serde(rename = "destructiveHint")]
    pub destructive: bool,
    /// Calling it twice with the same arguments has no further effect.
    #[serde(rename = "idempotentHint")]
    pub idempotent: bool,
    /// The tool reaches an open world (the web, other systems).
    #[serde(rename = "openWorldHint")]
    pub open_world: bool,
}

impl ToolAnnotations {
    /// No hints set.
    pub const NONE: ToolAnnotations = ToolAnnotations {
        read_only: false,
        destructive: false,
        idempotent: false,
        open_world: false,
    };
}

/// How a tool's content is spilled when it is too large (DESIGN C15).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SpillBudget {
    /// Use the registry's default budget.
    #[default]
    Default,
    /// Spill content whose text is over this many bytes.
    Bytes(usize),
    /// Never spill (e.g. `read`, to avoid read → spill → read loops).
    Never,
}

/// The static facts of a tool, known at compile time.
///
/// `#[tool]` writes this from its attribute and the doc comment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ToolInfo {
    /// The name the model calls, `[A-Za-z0-9_-]{1,64}`.
    pub name: &'static str,
    /// A human title.
    pub title: Option<&'static str>,
    /// What the model reads about the tool.
    pub description: &'static str,
    /// The kind of work it does.
    pub kind: ToolKind,
    /// Hints for clients.
    pub annotations: ToolAnnotations,
    /// Its own timeout; `None` uses the registry's default.
    pub timeout: Option<Duration>,
    /// Its content budget.
    pub spill: SpillBudget,
    /// `execute` blocks its thread (synchronous I/O, `std::thread::sleep`, a
    /// synchronous database call): the registry runs
    /// [`Tool::execute_blocking`] on tokio's blocking pool instead of
    /// polling [`Tool::execute`], so a timeout or a cancellation ends the
    /// call on time (the late result is dropped). `#[tool(blocking)]` sets it.
    pub blocking: bool,
}

impl ToolInfo {
    /// Facts with only a name and description; everything else default.
    ///
    /// ```
    /// use toolprism::ToolInfo;
    /// const INFO: ToolInfo = ToolInfo::new("echo", "Echo the text back.");
    /// assert_eq!(INFO.name, "echo");
    /// ```
    pub const fn new(name: &'static str, description: &'static str) -> Self {
        ToolInfo {
            name,
            title: None,
            description,
            kind: ToolKind::Other,
            annotations: ToolAnnotations::NONE,
            timeout: None,
            spill: SpillBudget::Default,
            blocking: false,
        }
    }
}

/// Checks a tool name: `[A-Za-z0-9_-]{1,64}`.
pub(crate) fn check_name(name: &str) -> Result<(), String> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if ok {
        Ok(())
    } else {
        Err(format!(
            "the tool name \"{}\" is not allowed: use 1 to 64 characters from A-Z, a-z, 0-9, `_` and `-`",
            name.escape_debug()
        ))
    }
}

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

/// What a client lists: name, title, description, input and output schema,
/// kind and hints.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolDefinition {
    /// The name.
    pub name: String,
    /// A human title.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The description.
    pub description: String,
    /// JSON Schema of the arguments (deserialize contract).
    pub input_schema: serde_json::Value,
    /// JSON Schema of the value (serialize contract).
    pub output_schema: serde_json::Value,
    /// The kind.
    pub kind: ToolKind,
    /// The hints.
    pub annotations: ToolAnnotations,
}
