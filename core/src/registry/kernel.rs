//! What the pipeline runs: [`Kernel`], implemented by every [`Tool`] (its
//! facts and projections are static) and by the adapter of a
//! [`DynamicTool`] (a tool whose definition is known only at run time, such
//! as one imported from another MCP server), so both go through the same
//! steps, rule for rule.

use std::borrow::Cow;
use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use serde::de::{DeserializeOwned, Deserializer};
use serde::ser::Serializer;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::card::{CallCard, ResultCard, ToolKind};
use crate::content::ContentBlock;
use crate::context::ToolContext;
use crate::definition::{SpillBudget, ToolAnnotations};
use crate::error::ToolError;
use crate::result::ToolResult;
use crate::tool::{NoMeta, Tool};

/// The facts of a tool the pipeline reads, borrowed from where they live
/// (a `Tool`'s `INFO`, a dynamic tool's definition).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Facts<'a> {
    pub(crate) name: &'a str,
    pub(crate) kind: ToolKind,
    pub(crate) timeout: Option<Duration>,
    pub(crate) spill: SpillBudget,
    pub(crate) blocking: bool,
}

/// A tool as the pipeline runs it.
pub(crate) trait Kernel: Send + Sync + 'static {
    type Args: DeserializeOwned + Clone + Send + Sync + 'static;
    type Value: Serialize + DeserializeOwned + Send + Sync + 'static;
    type Meta: Serialize + DeserializeOwned + Send + Sync + 'static;

    fn facts(&self) -> Facts<'_>;

    /// Where the tool comes from, as registry problems name it: a Rust
    /// tool's type, a dynamic tool's [`DynamicTool::origin`].
    fn origin(&self) -> Cow<'_, str>;

    /// How to end a collision of this tool's name with another's, when it
    /// is not `#[tool(name = …)]` (a dynamic tool's
    /// [`DynamicTool::collision_remedy`]); `None` for a Rust tool.
    fn collision_remedy(&self) -> Option<String>;

    fn execute<'a>(
        &'a self,
        args: Self::Args,
        cx: &'a ToolContext<'_>,
    ) -> impl Future<Output = Result<Self::Value, ToolError>> + Send + 'a;

    fn execute_blocking(
        &self,
        args: Self::Args,
        cx: &ToolContext<'_>,
    ) -> Result<Self::Value, ToolError>;

    fn render(&self, args: &Self::Args, value: &Self::Value) -> Vec<ContentBlock>;

    fn presentation_meta(&self, args: &Self::Args, value: &Self::Value) -> Option<Self::Meta>;

    fn present_call(&self, args: &Self::Args) -> Option<CallCard>;

    fn present_result(
        &self,
        args: &Self::Args,
        result: &ToolResult<Self::Meta>,
    ) -> Option<ResultCard>;

    fn approval(&self, args: &Self::Args) -> Option<String>;
}

impl<T: Tool> Kernel for T {
    type Args = T::Args;
    type Value = T::Value;
    type Meta = T::Meta;

    #[inline]
    fn facts(&self) -> Facts<'_> {
        Facts {
            name: T::INFO.name,
            kind: T::INFO.kind,
            timeout: T::INFO.timeout,
            spill: T::INFO.spill,
            blocking: T::INFO.blocking,
        }
    }

    fn origin(&self) -> Cow<'_, str> {
        Cow::Owned(format!("`{}`", std::any::type_name::<T>()))
    }

    fn collision_remedy(&self) -> Option<String> {
        None
    }

    #[inline]
    fn execute<'a>(
        &'a self,
        args: T::Args,
        cx: &'a ToolContext<'_>,
    ) -> impl Future<Output = Result<T::Value, ToolError>> + Send + 'a {
        Tool::execute(self, args, cx)
    }

    fn execute_blocking(&self, args: T::Args, cx: &ToolContext<'_>) -> Result<T::Value, ToolError> {
        Tool::execute_blocking(self, args, cx)
    }

    #[inline]
    fn render(&self, args: &T::Args, value: &T::Value) -> Vec<ContentBlock> {
        T::render(args, value)
    }

    #[inline]
    fn presentation_meta(&self, args: &T::Args, value: &T::Value) -> Option<T::Meta> {
        T::presentation_meta(args, value)
    }

    #[inline]
    fn present_call(&self, args: &T::Args) -> Option<CallCard> {
        T::present_call(args)
    }

    #[inline]
    fn present_result(&self, args: &T::Args, result: &ToolResult<T::Meta>) -> Option<ResultCard> {
        T::present_result(args, result)
    }

    #[inline]
    fn approval(&self, args: &T::Args) -> Option<String> {
        T::approval(args)
    }
}

/// What describes a [`DynamicTool`]: the same facts as a `#[tool]`'s, as
/// data.
///
/// Build it with [`DynamicDefinition::new`] and the `with_…` methods: it
/// is `#[non_exhaustive]`, and gains the facts `#[tool]` has (an icon, a
/// task support) without breaking anyone.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct DynamicDefinition {
    /// The name the model calls, `[A-Za-z0-9_-]{1,64}`.
    pub name: String,
    /// A human title.
    pub title: Option<String>,
    /// What the model reads about the tool.
    pub description: String,
    /// JSON Schema of the arguments: an object.
    pub input_schema: Value,
    /// JSON Schema of the value, when the tool declares one (its values are
    /// then checked against it); `None` lets any JSON through.
    pub output_schema: Option<Value>,
    /// The kind of work it does.
    pub kind: ToolKind,
    /// Hints for clients.
    pub annotations: ToolAnnotations,
    /// Its own timeout; `None` uses the registry's default.
    pub timeout: Option<Duration>,
}

impl DynamicDefinition {
    /// A tool named `name` (`[A-Za-z0-9_-]{1,64}`), described for the
    /// model by `description`, whose arguments follow `input_schema` (an
    /// object schema); no title, no output schema (any value), kind
    /// [`ToolKind::Other`], no hints, the registry's timeout.
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        input_schema: Value,
    ) -> Self {
        DynamicDefinition {
            name: name.into(),
            title: None,
            description: description.into(),
            input_schema,
            output_schema: None,
            kind: ToolKind::Other,
            annotations: ToolAnnotations::NONE,
            timeout: None,
        }
    }

    /// The same definition with a human title.
    pub fn with_title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// The same definition with the JSON Schema of the value: its values
    /// are then checked against it.
    pub fn with_output_schema(mut self, output_schema: Value) -> Self {
        self.output_schema = Some(output_schema);
        self
    }

    /// The same definition with the kind of work the tool does.
    pub fn with_kind(mut self, kind: ToolKind) -> Self {
        self.kind = kind;
        self
    }

    /// The same definition with these hints for clients.
    pub fn with_annotations(mut self, annotations: ToolAnnotations) -> Self {
        self.annotations = annotations;
        self
    }

    /// The same definition with the tool's own timeout.
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }
}

/// What a dynamic tool's call produced: the content the model reads (as the
/// tool's source wrote it) and the canonical value.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct DynamicOutput {
    /// What the model reads.
    pub content: Vec<ContentBlock>,
    /// The value: checked against the output schema when there is one;
    /// what a program gets.
    pub value: Value,
}

impl DynamicOutput {
    /// The `content` the model reads and the `value` a program gets.
    pub fn new(content: Vec<ContentBlock>, value: Value) -> Self {
        DynamicOutput { content, value }
    }
}

/// A boxed future of a dynamic tool's call.
pub type DynamicFuture<'a> =
    Pin<Box<dyn Future<Output = Result<DynamicOutput, ToolError>> + Send + 'a>>;

/// A tool whose definition is known only at run time (a tool imported
/// from another MCP server, a tool read from a configuration): the same
/// pipeline as a `#[tool]`, rule for rule. Its arguments are JSON checked
/// against `input_schema`; its value is checked against `output_schema`
/// when there is one and under the lossless rules always; the model reads
/// the content it returns, or, after a post-execute policy replaced the
/// value, that value as JSON. It has no presentation meta; its cards are
/// the generic ones unless [`present_call`](Self::present_call) and
/// [`present_result`](Self::present_result) draw others, from the
/// persisted arguments and result only.
///
/// ```
/// use toolprism::{ContentBlock, DynamicDefinition, DynamicFuture, DynamicOutput, DynamicTool, Registry, ToolCall, ToolContext, ToolKind};
/// use serde_json::{Value, json};
///
/// struct Upper(DynamicDefinition);
/// impl DynamicTool for Upper {
///     fn definition(&self) -> &DynamicDefinition { &self.0 }
///     fn call<'a>(&'a self, args: Value, _cx: &'a ToolContext<'_>) -> DynamicFuture<'a> {
///         Box::pin(async move {
///             let text = args["text"].as_str().unwrap_or_default().to_uppercase();
///             Ok(DynamicOutput::new(vec![ContentBlock::text(&text)], json!({"text": text})))
///         })
///     }
/// }
/// let upper = Upper(
///     DynamicDefinition::new(
///         "upper",
///         "Upper-cases text.",
///         json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
///     )
///     .with_output_schema(json!({"type": "object", "properties": {"text": {"type": "string"}}}))
///     .with_kind(ToolKind::Other),
/// );
/// let registry = Registry::builder().dynamic_tool(upper).build().unwrap();
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let out = registry.call(ToolCall::new("c1", "upper", r#"{"text":"hi"}"#)).await;
/// assert_eq!(out.value().unwrap()["text"], "HI");
/// let bad = registry.call(ToolCall::new("c2", "upper", r#"{"text":1}"#)).await;
/// assert_eq!(bad.code().unwrap(), "INVALID_ARGS");
/// # });
/// ```
pub trait DynamicTool: Send + Sync + 'static {
    /// What describes it.
    fn definition(&self) -> &DynamicDefinition;

    /// One call with arguments that passed the input schema.
    fn call<'a>(&'a self, arguments: Value, cx: &'a ToolContext<'_>) -> DynamicFuture<'a>;

    /// Where the tool comes from, in a few words (for an imported tool:
    /// `the tool "read_file" of the MCP server "fs" (npx …)`). The
    /// registry's problems name it, so that a name two tools share says
    /// which two sources collide; `None` says "a dynamic tool".
    fn origin(&self) -> Option<String> {
        None
    }

    /// What to do when another tool of the registry already has this
    /// tool's name, in a few words, as the registry's problem about the
    /// collision ends (for an imported tool: a prefix, an allow-list or a
    /// rename of its import). A dynamic tool cannot take
    /// `#[tool(name = …)]`, so that remedy is named only when both tools
    /// are Rust tools; `None` names none for this tool.
    fn collision_remedy(&self) -> Option<String> {
        None
    }

    /// The call card; `None` gives the generic card. Pure.
    fn present_call(&self, _arguments: &Value) -> Option<CallCard> {
        None
    }

    /// The result card, from the persisted result only; `None` gives the
    /// generic card. Pure.
    fn present_result(&self, _arguments: &Value, _result: &ToolResult) -> Option<ResultCard> {
        None
    }
}

/// A dynamic tool, as the pipeline runs it.
pub(crate) struct Dynamic<D>(pub(crate) D);

/// A dynamic tool's value while the pipeline runs: its JSON is the value,
/// and it keeps the content the tool returned with it.
#[derive(Debug)]
pub(crate) struct DynamicValue {
    value: Value,
    /// The tool's own content, or `None` for a value that came from
    /// elsewhere (a policy's replacement), which renders as JSON.
    content: Option<Vec<ContentBlock>>,
}

impl Serialize for DynamicValue {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.value.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for DynamicValue {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(DynamicValue {
            value: Value::deserialize(deserializer)?,
            content: None,
        })
    }
}

impl<D: DynamicTool> Kernel for Dynamic<D> {
    type Args = Value;
    type Value = DynamicValue;
    type Meta = NoMeta;

    fn facts(&self) -> Facts<'_> {
        let definition = self.0.definition();
        Facts {
            name: &definition.name,
            kind: definition.kind,
            timeout: definition.timeout,
            spill: SpillBudget::Default,
            blocking: false,
        }
    }

    fn origin(&self) -> Cow<'_, str> {
        self.0
            .origin()
            .map_or(Cow::Borrowed("a dynamic tool"), Cow::Owned)
    }

    fn collision_remedy(&self) -> Option<String> {
        self.0.collision_remedy()
    }

    async fn execute<'a>(
        &'a self,
        args: Value,
        cx: &'a ToolContext<'_>,
    ) -> Result<DynamicValue, ToolError> {
        let DynamicOutput { content, value } = self.0.call(args, cx).await?;
        Ok(DynamicValue {
            value,
            content: Some(content),
        })
    }

    fn execute_blocking(
        &self,
        _args: Value,
        _cx: &ToolContext<'_>,
    ) -> Result<DynamicValue, ToolError> {
        Err(ToolError::new("a dynamic tool is never blocking"))
    }

    fn render(&self, _args: &Value, value: &DynamicValue) -> Vec<ContentBlock> {
        match &value.content {
            Some(content) => content.clone(),
            None => vec![ContentBlock::text(
                serde_json::to_string_pretty(&value.value).unwrap_or_default(),
            )],
        }
    }

    fn presentation_meta(&self, _args: &Value, _value: &DynamicValue) -> Option<NoMeta> {
        None
    }

    fn present_call(&self, args: &Value) -> Option<CallCard> {
        self.0.present_call(args)
    }

    fn present_result(&self, args: &Value, result: &ToolResult<NoMeta>) -> Option<ResultCard> {
        let result = ToolResult {
            content: result.content.clone(),
            is_error: result.is_error,
            meta: None,
        };
        self.0.present_result(args, &result)
    }

    fn approval(&self, _args: &Value) -> Option<String> {
        None
    }
}
