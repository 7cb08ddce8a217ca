//! The [`Registry`]: holds tools and policies, and runs the call pipeline.
//!
//! One call goes through these steps (DESIGN, "Pipeline order"):
//!
//! 1. look the tool up (`UNKNOWN_TOOL`);
//! 2. parse the arguments: JSON syntax, input schema, deserialize (`INVALID_ARGS`);
//! 3. pre-execute policies (`DENIED`);
//! 4. `execute` under the call's timeout and cancellation (`TOOL_FAILED`,
//!    `TIMEOUT`, `ABORTED`, `ABORTED_BEFORE_DISPATCH`);
//! 5. value → lossless JSON → output schema (`INVALID_TOOL_OUTPUT`);
//! 6. `render`, and `presentation_meta` for top-level calls (`INVALID_TOOL_OUTPUT`);
//! 7. post-execute policies, in order (`BLOCKED`, `POLICY_ERROR`);
//! 8. spill (content only, top-level calls only);
//! 9. the outcome, appended to the session log when one is attached;
//! 10. cards: `present_call` before step 4, `present_result` after step 9.
//!
//! Every failure is a result: [`Registry::call`] never panics and never
//! returns `Err` for a tool-level problem.

use std::any::{Any, TypeId};
use std::fmt;
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::card::{CallCard, ResultCard};
use crate::content::{ContentBlock, content_text};
use crate::log::SessionLog;
use crate::lossless::{check_value, to_lossless_value};
use crate::policy::{
    PostDecision, PostExecute, PostExecutePolicy, PreDecision, PreExecute, PreExecutePolicy,
};
use crate::result::{ErrorCode, ErrorInfo, ResultCardSlot, ToolOutcome, ToolResult};
use crate::schema::{Compiled, compiled, violations};
use crate::spill::{SpillStore, spill_content};
use crate::tool::{SpillBudget, Tool, ToolContext, ToolDefinition, ToolInfo};

/// One call from the model: its id, the tool's name and the raw arguments
/// string. An empty string means `{}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolCall {
    /// The call's id.
    pub call_id: String,
    /// The tool's name.
    pub name: String,
    /// The arguments as the model sent them: a JSON object, as text.
    pub arguments: String,
}

impl ToolCall {
    /// A call.
    pub fn new(
        call_id: impl Into<String>,
        name: impl Into<String>,
        arguments: impl Into<String>,
    ) -> Self {
        ToolCall {
            call_id: call_id.into(),
            name: name.into(),
            arguments: arguments.into(),
        }
    }
}

/// Per-call options: a timeout that overrides the tool's, and a
/// cancellation token.
#[derive(Debug, Clone, Default)]
pub struct CallOptions {
    /// Overrides the tool's and the registry's timeout.
    pub timeout: Option<Duration>,
    /// Cancels the call: before dispatch it ends as
    /// `ABORTED_BEFORE_DISPATCH`, during `execute` as `ABORTED`.
    pub cancel: Option<CancellationToken>,
}

/// The options of [`Registry::call`]: none.
static NO_OPTIONS: CallOptions = CallOptions {
    timeout: None,
    cancel: None,
};

/// Why a registry could not be built: every problem found, not just the first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegistryError {
    problems: Vec<String>,
}

impl RegistryError {
    /// Each problem, one sentence each.
    pub fn problems(&self) -> &[String] {
        &self.problems
    }
}

impl fmt::Display for RegistryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the registry could not be built: ")?;
        f.write_str(&self.problems.join("; "))
    }
}

impl std::error::Error for RegistryError {}

/// Builds a [`Registry`]. Problems (a duplicate name, an arguments type
/// that is not an object) are collected and reported by [`build`](Self::build).
#[must_use]
pub struct RegistryBuilder {
    tools: Vec<Box<dyn DynTool>>,
    problems: Vec<String>,
    settings: Settings,
}

/// What a registry holds besides its tools; the builder fills it in.
struct Settings {
    pre: Vec<Box<dyn PreExecutePolicy>>,
    post: Vec<Box<dyn PostExecutePolicy>>,
    default_timeout: Option<Duration>,
    log: Option<SessionLog>,
    spill: Option<SpillStore>,
    spill_budget: usize,
}

/// The default content budget before spilling: 50 KiB.
pub const DEFAULT_SPILL_BUDGET: usize = 50 * 1024;

impl RegistryBuilder {
    fn new() -> Self {
        RegistryBuilder {
            tools: Vec::new(),
            problems: Vec::new(),
            settings: Settings {
                pre: Vec::new(),
                post: Vec::new(),
                default_timeout: None,
                log: None,
                spill: None,
                spill_budget: DEFAULT_SPILL_BUDGET,
            },
        }
    }

    /// Registers a tool.
    pub fn tool<T: Tool>(mut self, tool: T) -> Self {
        let name = T::INFO.name;
        if let Err(problem) = crate::tool::check_name(name) {
            self.problems.push(problem);
            return self;
        }
        if self.tools.iter().any(|t| t.info().name == name) {
            self.problems.push(format!(
                "two tools are named \"{name}\" (`{}` and an earlier one): tool names must be unique; rename one with #[tool(name = \"...\")]",
                std::any::type_name::<T>()
            ));
            return self;
        }
        match compiled::<T>() {
            Ok(compiled) => self.tools.push(Box::new(Entry { tool, compiled })),
            Err(problem) => self.problems.push(problem),
        }
        self
    }

    /// Adds a pre-execute policy; policies run in the order added and the
    /// first denial wins.
    pub fn pre_execute(mut self, policy: impl PreExecutePolicy) -> Self {
        self.settings.pre.push(Box::new(policy));
        self
    }

    /// Adds a post-execute policy; policies run in the order added, each
    /// seeing the previous one's decision applied, and a block ends the chain.
    pub fn post_execute(mut self, policy: impl PostExecutePolicy) -> Self {
        self.settings.post.push(Box::new(policy));
        self
    }

    /// The timeout of tools that set none.
    pub fn default_timeout(mut self, timeout: Duration) -> Self {
        self.settings.default_timeout = Some(timeout);
        self
    }

    /// Appends every top-level call and result to this session log.
    pub fn log(mut self, log: SessionLog) -> Self {
        self.settings.log = Some(log);
        self
    }

    /// Spills content over budget to this store (DESIGN C15).
    pub fn spill(mut self, store: SpillStore) -> Self {
        self.settings.spill = Some(store);
        self
    }

    /// The budget of tools that set none ([`DEFAULT_SPILL_BUDGET`] unless set).
    pub fn spill_budget(mut self, bytes: usize) -> Self {
        self.settings.spill_budget = bytes;
        self
    }

    /// The registry, or every problem found.
    pub fn build(self) -> Result<Registry, RegistryError> {
        if !self.problems.is_empty() {
            return Err(RegistryError {
                problems: self.problems,
            });
        }
        // Sorted by name: a lookup is a binary search, which for the handful
        // of tools a registry holds costs less than hashing the name (SipHash).
        let mut index: Vec<(&'static str, usize)> = self
            .tools
            .iter()
            .enumerate()
            .map(|(i, t)| (t.info().name, i))
            .collect();
        index.sort_unstable();
        Ok(Registry {
            tools: self.tools,
            index,
            settings: self.settings,
        })
    }
}

/// Holds tools and policies and runs calls. `Send + Sync`: share it behind
/// an `Arc` and call it from many tasks.
///
/// ```
/// # use toolprism::{ContentBlock, NoMeta, Tool, ToolContext, ToolError, ToolInfo};
/// # #[derive(serde::Deserialize, schemars::JsonSchema, Clone)] struct A { n: i64 }
/// # struct Double;
/// # impl Tool for Double {
/// #     type Args = A; type Value = i64; type Meta = NoMeta;
/// #     const INFO: ToolInfo = ToolInfo::new("double", "Double n.");
/// #     async fn execute(&self, a: A, _: &ToolContext<'_>) -> Result<i64, ToolError> { Ok(a.n * 2) }
/// #     fn render(_: &A, v: &i64) -> Vec<ContentBlock> { vec![ContentBlock::text(v.to_string())] }
/// # }
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// use toolprism::{Registry, ToolCall};
/// let registry = Registry::builder().tool(Double).build().unwrap();
///
/// // The model's view: content, and an error result for bad input.
/// let bad = registry.call(ToolCall::new("1", "double", r#"{"n":"two"}"#)).await;
/// assert!(bad.is_error());
/// assert_eq!(bad.error().unwrap().code.as_str(), "INVALID_ARGS");
///
/// // A program's view: the typed value.
/// let n: i64 = registry.call_typed::<Double>(serde_json::json!({"n": 21})).await.unwrap();
/// assert_eq!(n, 42);
/// # });
/// ```
pub struct Registry {
    tools: Vec<Box<dyn DynTool>>,
    index: Vec<(&'static str, usize)>,
    settings: Settings,
}

impl fmt::Debug for Registry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Registry")
            .field(
                "tools",
                &self.tools.iter().map(|t| t.info().name).collect::<Vec<_>>(),
            )
            .field("pre_execute", &self.settings.pre.len())
            .field("post_execute", &self.settings.post.len())
            .finish_non_exhaustive()
    }
}

/// Where a call's arguments come from.
enum RawArgs<'a> {
    Text(&'a str),
    Json(Value),
}

struct Request<'a> {
    call_id: &'a str,
    name: &'a str,
    args: RawArgs<'a>,
    options: &'a CallOptions,
    nested: bool,
}

impl Registry {
    /// A builder.
    pub fn builder() -> RegistryBuilder {
        RegistryBuilder::new()
    }

    /// A builder holding every `#[tool(builtin)]` tool linked into the
    /// program, in name order, each made with `Default`.
    pub fn builtin() -> RegistryBuilder {
        let mut builtins: Vec<&crate::__private::Builtin> =
            crate::__private::inventory::iter::<crate::__private::Builtin>
                .into_iter()
                .collect();
        builtins.sort_by_key(|b| b.name);
        builtins
            .into_iter()
            .fold(RegistryBuilder::new(), |builder, b| (b.register)(builder))
    }

    /// Every tool's definition, in registration order.
    pub fn definitions(&self) -> impl ExactSizeIterator<Item = &ToolDefinition> {
        self.tools.iter().map(|t| &t.compiled().definition)
    }

    /// One tool's definition.
    pub fn definition(&self, name: &str) -> Option<&ToolDefinition> {
        self.lookup(name).map(|t| &t.compiled().definition)
    }

    /// The session log, when one is attached.
    pub fn session_log(&self) -> Option<&SessionLog> {
        self.settings.log.as_ref()
    }

    fn lookup(&self, name: &str) -> Option<&dyn DynTool> {
        let at = self.index.binary_search_by(|(n, _)| (*n).cmp(name)).ok()?;
        Some(&*self.tools[self.index[at].1])
    }

    /// Runs a top-level call from the model: content, meta, cards, and the
    /// session log when attached.
    pub fn call(&self, call: ToolCall) -> impl Future<Output = ToolOutcome> + Send + '_ {
        // No wrapping `async` layer: the outcome is moved once less.
        self.call_with(call, &NO_OPTIONS)
    }

    /// [`call`](Self::call) with a timeout or cancellation.
    pub async fn call_with(&self, call: ToolCall, options: &CallOptions) -> ToolOutcome {
        let request = Request {
            call_id: &call.call_id,
            name: &call.name,
            args: RawArgs::Text(&call.arguments),
            options,
            nested: false,
        };
        let logged = self
            .settings
            .log
            .as_ref()
            .map(|log| log.record_call(&call.call_id, &call.name, &call.arguments));
        let mut outcome = self.dispatch(request).await;
        outcome.call_id = call.call_id;
        outcome.name = call.name;
        if let Some(log) = &self.settings.log {
            if let Some(Err(e)) = logged {
                outcome
                    .warnings
                    .push(format!("session log: could not append tool/call: {e}"));
            }
            if let Err(e) = log.record_result(&outcome) {
                outcome
                    .warnings
                    .push(format!("session log: could not append tool/result: {e}"));
            }
        }
        outcome
    }

    /// Runs a nested call made by a program: the full pipeline, but no
    /// meta, no cards, no spill and no log entry. Returns the validated
    /// value as JSON, or the error.
    pub async fn call_nested(&self, name: &str, arguments: Value) -> Result<Value, ErrorInfo> {
        self.call_nested_with(name, arguments, &CallOptions::default())
            .await
            .into_value()
    }

    /// [`call_nested`](Self::call_nested) with options, returning the whole outcome.
    pub async fn call_nested_with(
        &self,
        name: &str,
        arguments: Value,
        options: &CallOptions,
    ) -> ToolOutcome {
        let call_id = format!("nested:{name}");
        let request = Request {
            call_id: &call_id,
            name,
            args: RawArgs::Json(arguments),
            options,
            nested: true,
        };
        let mut outcome = self.dispatch(request).await;
        outcome.call_id = call_id;
        outcome.name = name.to_owned();
        outcome
    }

    /// A nested call to tool `T`, returning its value typed.
    pub async fn call_typed<T: Tool>(&self, arguments: Value) -> Result<T::Value, ErrorInfo> {
        let name = T::INFO.name;
        match self.lookup(name) {
            Some(tool) if tool.tool_type() == TypeId::of::<T>() => {}
            _ => {
                return Err(ErrorInfo::new(
                    ErrorCode::UnknownTool,
                    format!(
                        "unknown tool \"{name}\": `{}` is not registered in this registry",
                        std::any::type_name::<T>()
                    ),
                ));
            }
        }
        self.call_nested_with(name, arguments, &CallOptions::default())
            .await
            .into_typed::<T::Value>()
    }

    fn dispatch<'a>(
        &'a self,
        request: Request<'a>,
    ) -> Pin<Box<dyn Future<Output = ToolOutcome> + Send + 'a>> {
        match self.lookup(request.name) {
            Some(tool) => tool.run(self, request),
            None => Box::pin(std::future::ready(self.unknown(request))),
        }
    }

    fn unknown(&self, request: Request<'_>) -> ToolOutcome {
        let names: Vec<&str> = self.index.iter().map(|(n, _)| *n).collect();
        let message = format!(
            "unknown tool \"{}\"; the available tools are: {}",
            cap(request.name, 64),
            if names.is_empty() {
                "(none)".to_owned()
            } else {
                names.join(", ")
            }
        );
        let mut outcome = failure(ErrorInfo::new(ErrorCode::UnknownTool, message));
        if !request.nested {
            let raw = match request.args {
                RawArgs::Text(t) => raw_input(t),
                RawArgs::Json(v) => v,
            };
            outcome.call_card = Some(CallCard::generic(request.name, None, Some(raw)));
            outcome.result_card = Some(ResultCardSlot::generic());
        }
        outcome
    }

    /// The call card of a call, from its name and raw arguments, drawn with
    /// the presenters registered now. Unknown tools, arguments that no
    /// longer parse and presenter panics give the generic card.
    pub fn present_call(&self, name: &str, arguments: &str) -> CallCard {
        match self.lookup(name) {
            Some(tool) => tool.present_call_raw(arguments),
            None => CallCard::generic(name, None, Some(raw_input(arguments))),
        }
    }

    /// The result card of a call, from its name, raw arguments and persisted
    /// result, drawn with the presenters registered now. Falls back to the
    /// generic card like [`present_call`](Self::present_call).
    pub fn present_result(
        &self,
        name: &str,
        arguments: &str,
        result: &mut ToolResult,
    ) -> ResultCard {
        match self.lookup(name) {
            Some(tool) => tool.present_result_raw(arguments, result),
            None => generic_result(name, result),
        }
    }
}

fn raw_input(arguments: &str) -> Value {
    let trimmed = arguments.trim();
    if trimmed.is_empty() {
        return Value::Object(Default::default());
    }
    serde_json::from_str(trimmed)
        .unwrap_or_else(|_| Value::String(cap(arguments, 4096).into_owned()))
}

fn generic_result(name: &str, result: &ToolResult) -> ResultCard {
    ResultCard::generic(Some(name.to_owned()), result.content.clone())
}

/// A failed outcome; the caller fills in the call's id and name.
fn failure(error: ErrorInfo) -> ToolOutcome {
    ToolOutcome {
        call_id: String::new(),
        name: String::new(),
        result: ToolResult::error(&error.message),
        value: None,
        typed: None,
        error: Some(error),
        call_card: None,
        result_card: None,
        warnings: Vec::new(),
    }
}

/// At most `max` bytes of `s`, cut on a char boundary, with `…` when cut.
fn cap(s: &str, max: usize) -> std::borrow::Cow<'_, str> {
    if s.len() <= max {
        return s.into();
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end]).into()
}

/// The message of a caught panic.
pub(crate) fn panic_message(payload: Box<dyn Any + Send>) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "<panic payload that is not a string>".to_owned()
    }
}

/// Runs `f`, turning a panic into its message.
pub(crate) fn guard<R>(f: impl FnOnce() -> R) -> Result<R, String> {
    catch_unwind(AssertUnwindSafe(f)).map_err(panic_message)
}

/// Polls `fut`, turning a panic into its message.
async fn guard_future<F: Future>(fut: F) -> Result<F::Output, String> {
    let mut fut = std::pin::pin!(fut);
    std::future::poll_fn(
        |cx| match catch_unwind(AssertUnwindSafe(|| fut.as_mut().poll(cx))) {
            Ok(Poll::Ready(out)) => Poll::Ready(Ok(out)),
            Ok(Poll::Pending) => Poll::Pending,
            Err(payload) => Poll::Ready(Err(panic_message(payload))),
        },
    )
    .await
}

// ---------------------------------------------------------------------------
// The type-erased tool and its pipeline
// ---------------------------------------------------------------------------

trait DynTool: Send + Sync {
    fn info(&self) -> &'static ToolInfo;
    fn compiled(&self) -> &Compiled;
    fn tool_type(&self) -> TypeId;
    fn run<'a>(
        &'a self,
        registry: &'a Registry,
        request: Request<'a>,
    ) -> Pin<Box<dyn Future<Output = ToolOutcome> + Send + 'a>>;
    fn present_call_raw(&self, arguments: &str) -> CallCard;
    fn present_result_raw(&self, arguments: &str, result: &mut ToolResult) -> ResultCard;
}

struct Entry<T: Tool> {
    tool: T,
    compiled: Arc<Compiled>,
}

impl<T: Tool> DynTool for Entry<T> {
    fn info(&self) -> &'static ToolInfo {
        &T::INFO
    }

    fn compiled(&self) -> &Compiled {
        &self.compiled
    }

    fn tool_type(&self) -> TypeId {
        TypeId::of::<T>()
    }

    fn run<'a>(
        &'a self,
        registry: &'a Registry,
        request: Request<'a>,
    ) -> Pin<Box<dyn Future<Output = ToolOutcome> + Send + 'a>> {
        Box::pin(self.pipeline(registry, request))
    }

    // Replay parses the arguments with the live path's own step 2 (JSON,
    // input schema, deserialize): arguments that deserialize but break the
    // schema got generic cards live, so they get them again.
    fn present_call_raw(&self, arguments: &str) -> CallCard {
        match self.parse_args(RawArgs::Text(arguments)) {
            Ok((parsed, args)) => self.present_call(&args, parsed),
            Err((raw, _)) => CallCard::generic(T::INFO.name, Some(T::INFO.kind), Some(raw)),
        }
    }

    fn present_result_raw(&self, arguments: &str, result: &mut ToolResult) -> ResultCard {
        match self.parse_args(RawArgs::Text(arguments)) {
            Ok((_, args)) => present_result::<T>(&args, result),
            Err(_) => generic_result(T::INFO.name, result),
        }
    }
}

/// The presenters' view of a result: the persisted result with typed meta.
fn present_result<T: Tool>(args: &T::Args, result: &mut ToolResult) -> ResultCard {
    match present_result_slot::<T>(args, result) {
        ResultCardSlot::Drawn(card) => card,
        ResultCardSlot::Generic(_) => generic_result(T::INFO.name, result),
    }
}

/// [`present_result`] for a live call: the generic card is left to be drawn
/// on first access ([`ToolOutcome::result_card`]).
fn present_result_slot<T: Tool>(args: &T::Args, result: &mut ToolResult) -> ResultCardSlot {
    let meta = match &result.meta {
        None => None,
        Some(meta) => match T::Meta::deserialize(meta) {
            Ok(meta) => Some(meta),
            Err(_) => return ResultCardSlot::generic(),
        },
    };
    // Lend the content to the typed view instead of cloning it.
    let typed = ToolResult {
        content: std::mem::take(&mut result.content),
        is_error: result.is_error,
        meta,
    };
    let card = guard(|| T::present_result(args, &typed));
    result.content = typed.content;
    match card {
        Ok(Some(card)) => ResultCardSlot::Drawn(card),
        Ok(None) | Err(_) => ResultCardSlot::generic(),
    }
}

/// The value during the pipeline: JSON for programs and policies, typed for
/// projections and typed nested calls.
struct Produced<V> {
    json: Value,
    typed: V,
}

impl<T: Tool> Entry<T> {
    fn present_call(&self, args: &T::Args, parsed: Value) -> CallCard {
        match guard(|| T::present_call(args)) {
            Ok(Some(card)) => card,
            Ok(None) | Err(_) => CallCard::generic(T::INFO.name, Some(T::INFO.kind), Some(parsed)),
        }
    }

    /// Step 2: JSON syntax, input schema, deserialize.
    fn parse_args(&self, raw: RawArgs<'_>) -> Result<(Value, T::Args), (Value, ErrorInfo)> {
        let json = match raw {
            RawArgs::Json(v) => v,
            RawArgs::Text(text) if text.trim().is_empty() => Value::Object(Default::default()),
            RawArgs::Text(text) => match serde_json::from_str::<Value>(text) {
                Ok(v) => v,
                Err(e) => {
                    return Err((
                        raw_input(text),
                        ErrorInfo::new(
                            ErrorCode::InvalidArgs,
                            format!(
                                "invalid arguments: \"arguments\" is not valid JSON ({e}); send one JSON object"
                            ),
                        ),
                    ));
                }
            },
        };
        if !json.is_object() {
            return Err((
                json,
                ErrorInfo::new(
                    ErrorCode::InvalidArgs,
                    "invalid arguments: \"arguments\" must be a JSON object",
                ),
            ));
        }
        if let Some(message) = violations(&self.compiled.input, &json, "arguments") {
            return Err((
                json,
                ErrorInfo::new(
                    ErrorCode::InvalidArgs,
                    format!("invalid arguments: {message}"),
                ),
            ));
        }
        match T::Args::deserialize(&json) {
            Ok(args) => Ok((json, args)),
            Err(e) => {
                let message = format!("invalid arguments: {}", cap(&e.to_string(), 300));
                Err((json, ErrorInfo::new(ErrorCode::InvalidArgs, message)))
            }
        }
    }

    /// Step 5: lossless JSON, then the output schema.
    fn check_value(&self, typed: T::Value) -> Result<Produced<T::Value>, ErrorInfo> {
        let json =
            to_lossless_value(&typed, "value").map_err(|e| self.invalid_output(&e.to_string()))?;
        if let Some(message) = violations(&self.compiled.output, &json, "value") {
            return Err(self.invalid_output(&message));
        }
        Ok(Produced { json, typed })
    }

    /// Step 5 for a replacement value: lossless, schema, then typed.
    fn check_replacement(&self, json: Value) -> Result<Produced<T::Value>, ErrorInfo> {
        check_value(&json, "value").map_err(|e| self.invalid_output(&e.to_string()))?;
        if let Some(message) = violations(&self.compiled.output, &json, "value") {
            return Err(self.invalid_output(&message));
        }
        let typed = T::Value::deserialize(&json).map_err(|e| {
            self.invalid_output(&format!("the replacement value does not deserialize: {e}"))
        })?;
        Ok(Produced { json, typed })
    }

    fn invalid_output(&self, detail: &str) -> ErrorInfo {
        ErrorInfo::new(
            ErrorCode::InvalidToolOutput,
            format!(
                "tool \"{}\" returned invalid output: {detail}",
                T::INFO.name
            ),
        )
    }

    /// Step 6: content, and meta for top-level calls.
    fn project(
        &self,
        args: &T::Args,
        value: &T::Value,
        nested: bool,
    ) -> Result<(Vec<ContentBlock>, Option<Value>), ErrorInfo> {
        let content = guard(|| T::render(args, value))
            .map_err(|m| self.invalid_output(&format!("output.render failed: {m}")))?;
        if nested {
            return Ok((content, None));
        }
        let meta = match guard(|| T::presentation_meta(args, value)) {
            Err(m) => {
                return Err(self.invalid_output(&format!("output.presentationMeta failed: {m}")));
            }
            Ok(None) => None,
            Ok(Some(meta)) => Some(to_lossless_value(&meta, "meta").map_err(|e| {
                self.invalid_output(&format!(
                    "output.presentationMeta returned non-lossless JSON: {e}"
                ))
            })?),
        };
        Ok((content, meta))
    }

    async fn execute(
        &self,
        registry: &Registry,
        call_id: &str,
        options: &CallOptions,
        nested: bool,
        args: T::Args,
    ) -> Result<T::Value, ErrorInfo> {
        let cancel = options.cancel.as_ref();
        if cancel.is_some_and(CancellationToken::is_cancelled) {
            return Err(ErrorInfo::new(
                ErrorCode::AbortedBeforeDispatch,
                "tool call aborted before dispatch",
            ));
        }
        let cx = ToolContext {
            registry,
            call_id,
            name: T::INFO.name,
            cancel: cancel.cloned().map(Into::into).unwrap_or_default(),
            nested,
        };
        let timeout = options
            .timeout
            .or(T::INFO.timeout)
            .or(registry.settings.default_timeout);
        let body = guard_future(async {
            match timeout {
                Some(limit) => tokio::time::timeout(limit, self.tool.execute(args, &cx))
                    .await
                    .ok(),
                None => Some(self.tool.execute(args, &cx).await),
            }
        });
        // Only a caller's token can be cancelled: without one there is no
        // race to run (and no token to allocate).
        let outcome = match cancel {
            Some(cancel) => tokio::select! {
                biased;
                () = cancel.cancelled() => return Err(ErrorInfo::new(ErrorCode::Aborted, "tool call aborted")),
                outcome = body => outcome,
            },
            None => body.await,
        };
        match outcome {
            Ok(Some(Ok(value))) => Ok(value),
            Ok(Some(Err(e))) => Err(e.into_info()),
            Ok(None) => Err(ErrorInfo::new(
                ErrorCode::Timeout,
                format!(
                    "tool \"{}\" timed out after {} ms",
                    T::INFO.name,
                    timeout.unwrap_or_default().as_millis()
                ),
            )),
            Err(panic) => Err(ErrorInfo::new(
                ErrorCode::ToolFailed,
                format!("tool \"{}\" panicked: {}", T::INFO.name, cap(&panic, 500)),
            )),
        }
    }

    /// Steps 5 and 6 for a value, new or replaced.
    fn accept_value(
        &self,
        args: &T::Args,
        produced: Result<Produced<T::Value>, ErrorInfo>,
        nested: bool,
    ) -> State<T::Value> {
        let produced = match produced {
            Ok(p) => p,
            Err(e) => return State::failed(e),
        };
        match self.project(args, &produced.typed, nested) {
            Ok((content, meta)) => State {
                result: ToolResult {
                    content,
                    is_error: false,
                    meta,
                },
                produced: Some(produced),
                error: None,
            },
            Err(e) => State::failed(e),
        }
    }

    async fn pipeline(&self, registry: &Registry, request: Request<'_>) -> ToolOutcome {
        let Request {
            call_id,
            args: raw,
            options,
            nested,
            ..
        } = request;
        let name = T::INFO.name;
        let (args_json, args) = match self.parse_args(raw) {
            Ok(parsed) => parsed,
            Err((raw_json, error)) => {
                let mut outcome = failure(error);
                if !nested {
                    outcome.call_card =
                        Some(CallCard::generic(name, Some(T::INFO.kind), Some(raw_json)));
                    outcome.result_card = Some(ResultCardSlot::generic());
                }
                return outcome;
            }
        };
        let mut state = match self.pre_execute(registry, call_id, &args_json, nested) {
            Some(denied) => State::failed(denied),
            None => {
                let executed = self
                    .execute(registry, call_id, options, nested, args.clone())
                    .await;
                let state = match executed {
                    Ok(value) => self.accept_value(&args, self.check_value(value), nested),
                    Err(e) => State::failed(e),
                };
                self.post_execute(registry, call_id, &args_json, &args, nested, state)
            }
        };

        let mut warnings = Vec::new();
        if !nested && !state.result.is_error {
            let budget = match T::INFO.spill {
                SpillBudget::Never => None,
                SpillBudget::Default => Some(registry.settings.spill_budget),
                SpillBudget::Bytes(n) => Some(n),
            };
            if let (Some(store), Some(budget)) = (&registry.settings.spill, budget)
                && let Err(problem) = spill_content(store, &mut state.result.content, budget)
            {
                warnings.push(problem);
            }
        }

        let State {
            mut result,
            produced,
            error,
        } = state;
        // Presenters are pure, so drawing the call card last changes nothing
        // but lets the generic card take the arguments instead of a copy.
        let call_card = (!nested).then(|| self.present_call(&args, args_json));
        let result_card = (!nested).then(|| present_result_slot::<T>(&args, &mut result));
        let (value, typed) = match produced {
            Some(p) => (
                Some(p.json),
                Some(Box::new(p.typed) as Box<dyn Any + Send + Sync>),
            ),
            None => (None, None),
        };
        ToolOutcome {
            call_id: String::new(),
            name: String::new(),
            result,
            value,
            typed,
            error,
            call_card,
            result_card,
            warnings,
        }
    }

    /// Step 3: the first denial wins; a panicking policy denies.
    fn pre_execute(
        &self,
        registry: &Registry,
        call_id: &str,
        arguments: &Value,
        nested: bool,
    ) -> Option<ErrorInfo> {
        let view = PreExecute {
            tool: T::INFO.name,
            call_id,
            arguments,
            nested,
        };
        for policy in &registry.settings.pre {
            match guard(|| policy.check(&view)) {
                Ok(PreDecision::Allow) => {}
                Ok(PreDecision::Deny { reason }) => {
                    return Some(ErrorInfo::new(ErrorCode::Denied, reason));
                }
                Err(panic) => {
                    return Some(ErrorInfo::new(
                        ErrorCode::PolicyError,
                        format!("a pre-execute policy panicked: {}", cap(&panic, 500)),
                    ));
                }
            }
        }
        None
    }

    /// Step 7: each policy sees the previous decision applied.
    fn post_execute(
        &self,
        registry: &Registry,
        call_id: &str,
        arguments: &Value,
        args: &T::Args,
        nested: bool,
        mut state: State<T::Value>,
    ) -> State<T::Value> {
        for policy in &registry.settings.post {
            let view = PostExecute {
                tool: T::INFO.name,
                call_id,
                arguments,
                nested,
                result: &state.result,
                value: state.produced.as_ref().map(|p| &p.json),
                error: state.error.as_ref(),
            };
            let decision = match guard(|| policy.decide(&view)) {
                Ok(decision) => decision,
                Err(panic) => {
                    return State::failed(ErrorInfo::new(
                        ErrorCode::PolicyError,
                        format!("a post-execute policy panicked: {}", cap(&panic, 500)),
                    ));
                }
            };
            match decision {
                PostDecision::Accept => {}
                PostDecision::ReplaceContent(content) => state.result.content = content,
                PostDecision::ReplaceValue(json) => {
                    if state.produced.is_none() {
                        return State::failed(ErrorInfo::new(
                            ErrorCode::PolicyError,
                            "a post-execute policy cannot replace the value of a failed result",
                        ));
                    }
                    state = self.accept_value(args, self.check_replacement(json), nested);
                    if state.error.is_some() {
                        return state;
                    }
                }
                PostDecision::Block { feedback } => {
                    let mut message = content_text(&feedback);
                    if message.trim().is_empty() {
                        message = "tool result blocked by post-execute policy".to_owned();
                    }
                    return State {
                        result: ToolResult {
                            content: feedback,
                            is_error: true,
                            meta: None,
                        },
                        produced: None,
                        error: Some(ErrorInfo::new(ErrorCode::Blocked, message)),
                    };
                }
            }
        }
        state
    }
}

/// A call's result while the pipeline runs.
struct State<V> {
    result: ToolResult,
    produced: Option<Produced<V>>,
    error: Option<ErrorInfo>,
}

impl<V> State<V> {
    fn failed(error: ErrorInfo) -> Self {
        State {
            result: ToolResult::error(&error.message),
            produced: None,
            error: Some(error),
        }
    }
}
