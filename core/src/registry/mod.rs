//! The [`Registry`]: holds tools and policies, and runs calls.
//!
//! A call goes through the pipeline (`docs/contract.md`): look the tool up (`UNKNOWN_TOOL`),
//! then the tool's own steps 2–10 ([`pipeline`] lays them out in order).
//! Every failure is a result: [`Registry::call`] never panics and never
//! returns `Err` for a tool-level problem.
//!
//! Calls come from the model ([`Registry::call`]: content, meta, cards,
//! spill, logged as `tool/call` and `tool/result`) or from a program
//! ([`Registry::call_nested`], [`Registry::call_typed`], and the same
//! methods on [`ToolContext`](crate::ToolContext) for a tool calling
//! another: the validated value; no meta, no cards, no spill; logged as
//! `tool/nested-call` and `tool/nested-result`, tied to the calling tool's
//! call id).

pub(crate) mod arguments;
mod builder;
pub(crate) mod builtin;
mod call;
mod entry;
pub(crate) mod kernel;
mod pipeline;
pub(crate) mod present;

use std::any::TypeId;
use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError, RwLock};

use serde_json::Value;

pub use builder::{DEFAULT_APPROVAL_TIMEOUT, DEFAULT_SPILL_BUDGET, RegistryBuilder, RegistryError};
pub(crate) use call::ProgressSink;
pub use call::{CallOptions, ToolCall};
pub use kernel::{DynamicDefinition, DynamicFuture, DynamicOutput, DynamicTool};

use self::arguments::{Arguments, raw_input};
use self::builder::Settings;
use self::call::NO_OPTIONS;
use self::entry::DynTool;
use self::pipeline::{Call, Origin, outcome, publish};
use self::present::generic_result;
use crate::argument_dialect::ArgumentDialect;
use crate::card::{CallCard, ResultCard};
use crate::definition::ToolDefinition;
use crate::error::{ErrorCode, ErrorInfo, ToolError};
use crate::log::SessionLog;
use crate::lossless::drop_deep;
use crate::result::{CallCardSlot, ResultCardSlot, ToolOutcome, ToolResult};
use crate::schema::{Compiled, compile, input_schema, output_schema};
use crate::text::cap;
use crate::tool::Tool;

type Cache = Mutex<HashMap<TypeId, Arc<Compiled>>>;

/// The compiled schemas of tool `T`, built on first use and shared by every
/// registry afterwards.
pub(crate) fn compiled<T: Tool>() -> Result<Arc<Compiled>, String> {
    static CACHE: OnceLock<Cache> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    if let Some(hit) = cache
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .get(&TypeId::of::<T>())
    {
        return Ok(hit.clone());
    }
    let built = Arc::new(compile(
        &T::INFO,
        std::any::type_name::<T::Args>(),
        input_schema::<T::Args>(),
        output_schema::<T::Value>(),
    )?);
    let mut guard = cache.lock().unwrap_or_else(|p| p.into_inner());
    Ok(guard.entry(TypeId::of::<T>()).or_insert(built).clone())
}

/// Holds tools and policies and runs calls. A cheap handle (an `Arc`
/// inside): clone it to share it between tasks, or to hand it to spawned
/// work; every clone is the same registry.
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
/// assert_eq!(bad.code().unwrap(), "INVALID_ARGS");
///
/// // A program's view: the typed value.
/// let n: i64 = registry.call_typed::<Double>(serde_json::json!({"n": 21})).await.unwrap();
/// assert_eq!(n, 42);
/// # });
/// ```
#[derive(Clone)]
pub struct Registry {
    inner: Arc<Inner>,
}

struct Inner {
    tools: Vec<Box<dyn DynTool>>,
    /// `(name, position in tools)`, sorted by name.
    index: Vec<(Box<str>, usize)>,
    settings: Settings,
    /// Numbers the nested calls made without a parent call.
    nested_ids: AtomicU64,
    /// Which tools the model is offered.
    mode: Mode,
    /// The position of the program tool in `tools`, when there is one.
    program: Option<usize>,
    /// The positions of the tools the model is offered, in order.
    offered: Box<[usize]>,
    /// The positions of the tools a program may call, in order.
    callable: Box<[usize]>,
    /// The argument dialects replay reads a log's calls in, by name.
    dialects: RwLock<Vec<Arc<dyn ArgumentDialect>>>,
}

/// The name of the tool that runs the model's programs (Code Mode): no
/// other tool may take it.
pub const PROGRAM_TOOL: &str = "run_code";

/// Which tools a registry offers the model; see
/// [`RegistryBuilder::mode`].
///
/// ```
/// use toolprism::Mode;
/// assert_eq!("both".parse::<Mode>().unwrap(), Mode::Both);
/// assert_eq!(Mode::Code.to_string(), "code");
/// assert!("mixed".parse::<Mode>().is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Mode {
    /// Every tool, called one at a time by the model (no program tool).
    #[default]
    Native,
    /// Only the program tool (`run_code`): the model writes one program
    /// against the typed SDK of every tool.
    Code,
    /// Every tool, and the program tool.
    Both,
}

impl Mode {
    /// Its name: `native`, `code` or `both`.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Native => "native",
            Mode::Code => "code",
            Mode::Both => "both",
        }
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Mode {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "native" => Ok(Mode::Native),
            "code" => Ok(Mode::Code),
            "both" => Ok(Mode::Both),
            _ => Err(format!(
                "unknown mode \"{}\": use native, code or both",
                cap(s, 32).escape_debug()
            )),
        }
    }
}

impl Inner {
    /// Whether the model is offered the tool at `at`, in `mode`.
    pub(super) fn offered_in(mode: Mode, program: Option<usize>, at: usize) -> bool {
        let is_program = program == Some(at);
        match mode {
            Mode::Native => !is_program,
            Mode::Code => is_program,
            Mode::Both => true,
        }
    }

    /// Whether the model is offered the tool at `at`.
    fn offered(&self, at: usize) -> bool {
        Inner::offered_in(self.mode, self.program, at)
    }

    /// Whether a call from `origin` may reach the tool at `at`.
    fn reachable(&self, at: usize, origin: Origin<'_>) -> bool {
        if origin.is_nested() {
            self.program != Some(at)
        } else {
            self.offered(at)
        }
    }
}

impl fmt::Debug for Registry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let settings = &self.inner.settings;
        f.debug_struct("Registry")
            .field(
                "tools",
                &self
                    .inner
                    .tools
                    .iter()
                    .map(|t| t.name())
                    .collect::<Vec<_>>(),
            )
            .field("pre_execute", &settings.pre.len())
            .field("post_execute", &settings.post.len())
            .field("log", &settings.log.as_ref().map(SessionLog::path))
            .finish_non_exhaustive()
    }
}

impl Registry {
    /// A builder.
    pub fn builder() -> RegistryBuilder {
        RegistryBuilder::new()
    }

    /// A builder holding every `#[tool(builtin)]` tool linked into the
    /// program, in name order, each made with `Default`.
    pub fn builtin() -> RegistryBuilder {
        let mut builtins: Vec<&builtin::Builtin> =
            inventory::iter::<builtin::Builtin>.into_iter().collect();
        builtins.sort_by_key(|b| b.name);
        builtins
            .into_iter()
            .fold(RegistryBuilder::new(), |builder, b| (b.register)(builder))
    }

    /// The definitions of the tools the model is offered, in registration
    /// order: every tool in [`Mode::Native`], only the program tool in
    /// [`Mode::Code`], both in [`Mode::Both`].
    pub fn definitions(&self) -> impl ExactSizeIterator<Item = &ToolDefinition> {
        let inner = &*self.inner;
        inner.offered.iter().map(|&i| inner.tools[i].definition())
    }

    /// The definition of a tool the model is offered.
    pub fn definition(&self, name: &str) -> Option<&ToolDefinition> {
        self.look_up(name, Origin::TopLevel).map(|t| t.definition())
    }

    /// The definitions of the tools a program may call (a tool's nested
    /// calls, a Code Mode program): every tool but the program tool, in
    /// registration order, whatever the mode.
    pub fn program_definitions(&self) -> impl ExactSizeIterator<Item = &ToolDefinition> {
        let inner = &*self.inner;
        inner.callable.iter().map(|&i| inner.tools[i].definition())
    }

    /// The definition of a tool a program may call.
    pub fn program_definition(&self, name: &str) -> Option<&ToolDefinition> {
        let nested = Origin::Nested {
            parent: None,
            program: true,
        };
        self.look_up(name, nested).map(|t| t.definition())
    }

    /// Which tools the model is offered.
    pub fn mode(&self) -> Mode {
        self.inner.mode
    }

    /// Teaches the registry an argument dialect, so [`replay`](crate::replay)
    /// reads the arguments of a logged call made in it (the log names the
    /// dialect) as the live call read them. A call made with
    /// [`CallOptions::with_dialect`] teaches the registry its dialect
    /// already; a process that only replays (`replay LOG`) adds the
    /// dialects its logs may name. A dialect of a name already known
    /// replaces it.
    ///
    /// ```
    /// # #[derive(Debug)] struct Plain;
    /// # impl toolprism::ArgumentDialect for Plain {
    /// #     fn name(&self) -> &str { "plain" }
    /// #     fn restore(&self, _: &serde_json::Value, a: serde_json::Value) -> serde_json::Value { a }
    /// # }
    /// let registry = toolprism::Registry::builder().build().unwrap();
    /// assert!(registry.dialect("plain").is_none());
    /// registry.add_dialect(std::sync::Arc::new(Plain));
    /// assert_eq!(registry.dialect("plain").unwrap().name(), "plain");
    /// ```
    pub fn add_dialect(&self, dialect: Arc<dyn ArgumentDialect>) {
        let mut known = self
            .inner
            .dialects
            .write()
            .unwrap_or_else(PoisonError::into_inner);
        match known.iter_mut().find(|d| d.name() == dialect.name()) {
            Some(slot) => *slot = dialect,
            None => known.push(dialect),
        }
    }

    /// The argument dialect of that name, when the registry knows it
    /// ([`add_dialect`](Self::add_dialect)).
    pub fn dialect(&self, name: &str) -> Option<Arc<dyn ArgumentDialect>> {
        self.inner
            .dialects
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .find(|d| d.name() == name)
            .cloned()
    }

    /// Remembers the dialect of a call made with one, for replay.
    pub(crate) fn remember_dialect(&self, dialect: &Arc<dyn ArgumentDialect>) {
        let known = self
            .inner
            .dialects
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .any(|d| d.name() == dialect.name());
        if !known {
            self.add_dialect(Arc::clone(dialect));
        }
    }

    /// The session log, when one is attached.
    pub fn session_log(&self) -> Option<&SessionLog> {
        self.inner.settings.log.as_ref()
    }

    /// Runs a top-level call from the model: content, meta, cards, and the
    /// session log when attached.
    pub fn call(&self, call: ToolCall) -> impl Future<Output = ToolOutcome> + Send + '_ {
        self.call_with(call, &NO_OPTIONS)
    }

    /// [`call`](Self::call) with a timeout, a cancellation token or a
    /// progress sink.
    ///
    /// Nothing runs until the future is first polled (`tool/call` is
    /// logged then); the future is the tool's own pipeline, with no layer
    /// around it.
    pub fn call_with<'a>(
        &'a self,
        call: ToolCall,
        options: &'a CallOptions,
    ) -> impl Future<Output = ToolOutcome> + Send + 'a {
        let ToolCall {
            call_id,
            name,
            arguments,
        } = call;
        if let Some(dialect) = &options.dialect {
            self.remember_dialect(dialect);
        }
        self.dispatch(Call {
            id: call_id,
            name,
            args: Arguments::Text(arguments.into()),
            options,
            origin: Origin::TopLevel,
        })
    }

    /// Runs a call made by a program: the full pipeline, but no meta, no
    /// cards, no spill. Returns the validated value as JSON, or the error
    /// (its code kept, so `?` in a tool's `execute` passes it on).
    pub async fn call_nested(&self, name: &str, arguments: Value) -> Result<Value, ToolError> {
        self.call_nested_with(name, arguments, &NO_OPTIONS)
            .await
            .into_value()
            .map_err(ErrorInfo::into_tool_error)
    }

    /// [`call_nested`](Self::call_nested) with options, returning the whole
    /// outcome.
    pub async fn call_nested_with(
        &self,
        name: &str,
        arguments: Value,
        options: &CallOptions,
    ) -> ToolOutcome {
        let n = self.inner.nested_ids.fetch_add(1, Ordering::Relaxed) + 1;
        self.run_nested(name, arguments, options, None, format!("nested:{n}"))
            .await
    }

    /// A call made by a program to tool `T`, returning its value typed.
    pub async fn call_typed<T: Tool>(&self, arguments: Value) -> Result<T::Value, ToolError> {
        let n = self.inner.nested_ids.fetch_add(1, Ordering::Relaxed) + 1;
        self.run_typed::<T>(arguments, &NO_OPTIONS, None, format!("nested:{n}"))
            .await
    }

    /// A nested call to `T` made for a parent call: checks that `T` is the
    /// tool registered under its name.
    pub(crate) async fn run_typed<T: Tool>(
        &self,
        arguments: Value,
        options: &CallOptions,
        parent: Option<&str>,
        id: String,
    ) -> Result<T::Value, ToolError> {
        let name = T::INFO.name;
        let nested = Origin::Nested {
            parent,
            program: false,
        };
        match self.look_up(name, nested) {
            Some(tool) if tool.tool_type() == TypeId::of::<T>() => {}
            _ => {
                drop_deep(arguments);
                return Err(ErrorInfo::new(
                    ErrorCode::UnknownTool,
                    format!(
                        "unknown tool \"{name}\": `{}` is not registered in this registry",
                        std::any::type_name::<T>()
                    ),
                )
                .into_tool_error());
            }
        }
        self.run_nested(name, arguments, options, parent, id)
            .await
            .into_typed::<T::Value>()
            .map_err(ErrorInfo::into_tool_error)
    }

    /// A nested call: its arguments are checked for depth before anything
    /// recursive (the log's writer, the schema, serde) touches them.
    pub(crate) async fn run_nested(
        &self,
        name: &str,
        arguments: Value,
        options: &CallOptions,
        parent: Option<&str>,
        id: String,
    ) -> ToolOutcome {
        self.dispatch(Call {
            id,
            name: name.to_owned(),
            args: Arguments::checked(arguments),
            options,
            origin: Origin::Nested {
                parent,
                program: false,
            },
        })
        .await
    }

    /// A program's call (Code Mode): a nested call that computes its meta,
    /// with the arguments as logged.
    pub(crate) async fn run_program(
        &self,
        name: &str,
        arguments: Value,
        options: &CallOptions,
        parent: &str,
        id: String,
    ) -> (ToolOutcome, String) {
        let args = Arguments::checked(arguments);
        let logged = args.logged().into_owned();
        let outcome = self
            .dispatch(Call {
                id,
                name: name.to_owned(),
                args,
                options,
                origin: Origin::Nested {
                    parent: Some(parent),
                    program: true,
                },
            })
            .await;
        (outcome, logged)
    }

    /// Step 1: the tool of that name, if a call from `origin` may reach it
    /// (the model: the tools its mode offers; a program: every tool but the
    /// program tool).
    fn look_up(&self, name: &str, origin: Origin<'_>) -> Option<&dyn DynTool> {
        let inner = &*self.inner;
        let index = &inner.index;
        let at = index[index.binary_search_by(|(n, _)| (**n).cmp(name)).ok()?].1;
        inner.reachable(at, origin).then(|| &*inner.tools[at])
    }

    /// Step 1, and the future of the rest; nothing runs (nothing is
    /// logged) before it is polled.
    fn dispatch<'a>(
        &'a self,
        call: Call<'a>,
    ) -> Pin<Box<dyn Future<Output = ToolOutcome> + Send + 'a>> {
        match self.look_up(&call.name, call.origin) {
            Some(tool) => tool.run(self, call),
            None => Box::pin(async move {
                let span = call.span(self, None);
                let outcome = span.in_scope(|| self.unknown_tool(call));
                crate::telemetry::close(&span, &outcome, self.inner.settings.trace_content);
                outcome
            }),
        }
    }

    /// Step 1 failed: `UNKNOWN_TOOL`, logged, published and drawn like any
    /// result.
    fn unknown_tool(&self, call: Call<'_>) -> ToolOutcome {
        let settings = &self.inner.settings;
        let mut warnings = call.record(settings);
        let inner = &*self.inner;
        let names: Vec<&str> = inner
            .index
            .iter()
            .filter(|(_, at)| inner.reachable(*at, call.origin))
            .map(|(n, _)| &**n)
            .collect();
        let error = ErrorInfo::new(
            ErrorCode::UnknownTool,
            format!(
                "unknown tool \"{}\"; the available tools are: {}",
                cap(&call.name, 64).escape_debug(),
                if names.is_empty() {
                    "(none)".to_owned()
                } else {
                    names.join(", ")
                }
            ),
        );
        let result = ToolResult::error(&error.message);
        publish(
            call.log(settings),
            call.origin,
            &call.id,
            &result,
            Some(&error),
            &mut warnings,
        );
        let cards = if call.origin.is_nested() {
            (None, None)
        } else {
            (
                Some(CallCardSlot::generic(
                    None,
                    arguments::Input::Json(call.args.into_input()),
                )),
                Some(ResultCardSlot::generic()),
            )
        };
        outcome(
            call.id,
            call.name,
            result,
            None,
            Some(error),
            cards,
            warnings,
        )
    }

    /// The call card of a call, from its name and raw arguments, drawn with
    /// the presenters registered now. Unknown tools, arguments that no
    /// longer parse and presenter panics give the generic card.
    pub fn present_call(&self, name: &str, arguments: &str) -> CallCard {
        self.present(name, arguments, None, None).0
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
        let drawn = self.present(name, arguments, None, Some(&mut *result)).1;
        drawn.unwrap_or_else(|| generic_result(name, result))
    }

    /// Both cards of a persisted call, reading its arguments once (in the
    /// dialect they were sent in, when the log says).
    pub(crate) fn present(
        &self,
        name: &str,
        arguments: &str,
        dialect: Option<&dyn ArgumentDialect>,
        result: Option<&mut ToolResult>,
    ) -> (CallCard, Option<ResultCard>) {
        // Replay draws every call it finds, the program tool's too.
        let index = &self.inner.index;
        let found = index
            .binary_search_by(|(n, _)| (**n).cmp(name))
            .ok()
            .map(|at| &*self.inner.tools[index[at].1]);
        match found {
            Some(tool) => tool.present_raw(arguments, dialect, result),
            None => (
                CallCard::generic(name, None, Some(raw_input(arguments))),
                result.map(|r| generic_result(name, r)),
            ),
        }
    }
}
