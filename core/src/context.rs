//! What `execute` may use besides its arguments: [`ToolContext`] (the call's
//! identity, cancellation, progress, nested calls) and [`NestedCalls`], the
//! owned handle for nested calls from spawned tasks.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::Duration;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::caller::Caller;
use crate::client::{
    Client, ClientError, ElicitRequest, ElicitResponse, LogLevel, SampleRequest, SampleResponse,
};
use crate::definition::ToolDefinition;
use crate::error::{ErrorInfo, ToolError};
use crate::log::SessionLog;
use crate::registry::{CallOptions, ProgressSink, Registry};
use crate::result::NestedCall;
use crate::tool::Tool;

/// A progress report from a running tool, as the caller's sink receives it
/// ([`CallOptions::with_progress`]); the MCP server forwards it as a
/// `notifications/progress`.
///
/// ```
/// use toolprism::Progress;
/// let report = Progress::new(3).with_total(10).with_message("indexing");
/// assert_eq!((report.done, report.total, report.message.as_deref()), (3, Some(10), Some("indexing")));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Progress {
    /// Work done so far, in the tool's own unit (files, rows, bytes).
    pub done: u64,
    /// The total of that unit, when known.
    pub total: Option<u64>,
    /// What is happening now, in a few words.
    pub message: Option<String>,
}

impl Progress {
    /// `done` units of work so far, total unknown, no message.
    pub fn new(done: u64) -> Self {
        Progress {
            done,
            total: None,
            message: None,
        }
    }

    /// The same report with the total of the unit.
    pub fn with_total(mut self, total: u64) -> Self {
        self.total = Some(total);
        self
    }

    /// The same report with what is happening now.
    pub fn with_message(mut self, message: impl Into<String>) -> Self {
        self.message = Some(message.into());
        self
    }
}

/// What `execute` may use besides its arguments: the call's identity, its
/// cancellation, progress reports, and nested calls to other tools.
///
/// A timeout or a cancellation can only end an async `execute` at an
/// `.await`: an `execute` that blocks its thread (`std::thread::sleep`, a
/// synchronous database call, a long computation) must be a blocking tool
/// (`#[tool(blocking)]`), which runs on tokio's blocking pool.
pub struct ToolContext<'a> {
    registry: &'a Registry,
    call_id: &'a str,
    name: &'a str,
    nested: bool,
    /// The caller's token, when there is one.
    caller: Option<&'a CancellationToken>,
    /// The call's own token (a child of the caller's), made the first time
    /// a tool asks for it, and cancelled when the call times out.
    own: OnceLock<CancellationToken>,
    progress: Option<&'a ProgressSink>,
    /// The log the caller gave this call, which its nested calls inherit
    /// (without one, every call goes to the registry's own log).
    log: Option<&'a SessionLog>,
    /// The call's client, which its nested calls inherit.
    client: Option<&'a Arc<dyn Client>>,
    /// Numbers this call's nested calls, shared with its [`NestedCalls`].
    nested_ids: OnceLock<Arc<AtomicU64>>,
    /// What a program's calls left, for the outcome ([`ProgramCalls`]).
    program: OnceLock<Arc<Records>>,
    /// Who makes the call ([`CallOptions::with_caller`]).
    identity: Option<&'a Caller>,
    /// The call's own approval timeout, which its nested calls inherit
    /// ([`CallOptions::with_approval_timeout`]).
    approval_timeout: Option<Duration>,
}

/// The persisted projections of a program's calls, in the order they
/// finished.
type Records = Mutex<Vec<NestedCall>>;

impl fmt::Debug for ToolContext<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolContext")
            .field("call_id", &self.call_id)
            .field("tool", &self.name)
            .field("nested", &self.nested)
            .field("cancelled", &self.is_cancelled())
            .finish_non_exhaustive()
    }
}

/// What a call's options lend its context: where progress goes, its log,
/// its client, its caller and its approval timeout.
pub(crate) struct Lent<'a> {
    pub(crate) progress: Option<&'a ProgressSink>,
    pub(crate) log: Option<&'a SessionLog>,
    pub(crate) client: Option<&'a Arc<dyn Client>>,
    pub(crate) caller: Option<&'a Caller>,
    pub(crate) approval_timeout: Option<Duration>,
}

impl<'a> ToolContext<'a> {
    pub(crate) fn new(
        registry: &'a Registry,
        call_id: &'a str,
        name: &'a str,
        nested: bool,
        caller: Option<&'a CancellationToken>,
        lent: Lent<'a>,
    ) -> Self {
        let Lent {
            progress,
            log,
            client,
            caller: identity,
            approval_timeout,
        } = lent;
        ToolContext {
            registry,
            call_id,
            name,
            nested,
            caller,
            own: OnceLock::new(),
            progress,
            log,
            client,
            nested_ids: OnceLock::new(),
            program: OnceLock::new(),
            identity,
            approval_timeout,
        }
    }

    /// What the calls of this call's program left (taken once, when the
    /// body is done).
    pub(crate) fn take_program_calls(&self) -> Vec<NestedCall> {
        match self.program.get() {
            Some(records) => {
                std::mem::take(&mut *records.lock().unwrap_or_else(PoisonError::into_inner))
            }
            None => Vec::new(),
        }
    }

    /// The options of a nested call: cancelled with this call, written to
    /// this call's log.
    fn nested_options(&self) -> CallOptions {
        self.inherited()
            .apply(CallOptions::new().with_cancel(self.cancellation().child_token()))
    }

    /// What this call's nested calls inherit from it.
    fn inherited(&self) -> Inherited {
        Inherited {
            log: self.log.cloned(),
            client: self.client.cloned(),
            caller: self.identity.cloned(),
            approval_timeout: self.approval_timeout,
            // The body runs inside its call's span: its nested calls'
            // spans are children of it, wherever they are made from.
            span: Some(tracing::Span::current()).filter(|s| s.id().is_some()),
        }
    }

    /// Logs to the call's client (MCP `notifications/message`, honouring
    /// the level the client set); dropped when the call has no client.
    /// `data` is any JSON: a message string, or an object.
    pub fn log(&self, level: LogLevel, data: impl Into<Value>) {
        if let Some(client) = self.client {
            let data = data.into();
            // A client is the caller's code: its panic must not end the call.
            let _ = crate::guard::guard(|| client.log(level, Some(self.name), &data));
        }
    }

    /// Logs to the call's client as `logger` instead of the tool's name: a
    /// message the tool relays from elsewhere (a hub forwards an imported
    /// server's own as `<server>/<its logger>`). Otherwise as
    /// [`log`](Self::log).
    pub fn log_as(&self, level: LogLevel, logger: &str, data: impl Into<Value>) {
        if let Some(client) = self.client {
            let data = data.into();
            let _ = crate::guard::guard(|| client.log(level, Some(logger), &data));
        }
    }

    /// Asks the client's model (MCP sampling). Fails at once, never hangs,
    /// when the call has no client or the client cannot sample; the call's
    /// timeout and cancellation bound the wait.
    pub async fn sample(&self, request: SampleRequest) -> Result<SampleResponse, ClientError> {
        match self.client {
            Some(client) => client.sample(request).await,
            None => Err(ClientError::Unavailable("sampling".to_owned())),
        }
    }

    /// Asks the user to fill a form (MCP elicitation). Fails at once when
    /// the call has no client or the client cannot elicit.
    pub async fn elicit(&self, request: ElicitRequest) -> Result<ElicitResponse, ClientError> {
        match self.client {
            Some(client) => client.elicit(request).await,
            None => Err(ClientError::Unavailable("elicitation".to_owned())),
        }
    }

    /// The call's id.
    pub fn call_id(&self) -> &str {
        self.call_id
    }

    /// The tool's name.
    pub fn tool_name(&self) -> &str {
        self.name
    }

    /// Whether this call was made by a program rather than the model.
    pub fn is_nested(&self) -> bool {
        self.nested
    }

    /// Who makes the call, when the transport verified it (W3 in
    /// `docs/contract.md`; see [`CallOptions::with_caller`]): the MCP
    /// server's authenticated client, for instance. A nested call has its
    /// parent's. `None` for a call made without one. An example is on
    /// [`Caller`].
    pub fn caller(&self) -> Option<&Caller> {
        self.identity
    }

    /// Whether the call was cancelled (or timed out).
    pub fn is_cancelled(&self) -> bool {
        self.caller.is_some_and(CancellationToken::is_cancelled)
            || self.own.get().is_some_and(CancellationToken::is_cancelled)
    }

    /// Completes when the call is cancelled or times out.
    pub async fn cancelled(&self) {
        self.cancellation().cancelled().await
    }

    /// The call's cancellation token, to hand to spawned work: cancelled
    /// when the caller cancels the call and when the call times out.
    pub fn cancellation(&self) -> &CancellationToken {
        self.own.get_or_init(|| {
            self.caller
                .map_or_else(CancellationToken::new, CancellationToken::child_token)
        })
    }

    /// Cancels the call's own token, if a tool took it: its spawned work
    /// stops when the call has ended without it.
    pub(crate) fn cancel_own(&self) {
        if let Some(own) = self.own.get() {
            own.cancel();
        }
    }

    /// Reports progress to the caller (dropped when the caller did not ask
    /// for it). `done` and `total` are in the tool's own unit.
    ///
    /// ```
    /// # use toolprism::{ContentBlock, NoMeta, Tool, ToolContext, ToolError, ToolInfo};
    /// # #[derive(serde::Deserialize, schemars::JsonSchema, Clone)] struct A { files: u64 }
    /// struct Index;
    /// impl Tool for Index {
    /// #   type Args = A; type Value = u64; type Meta = NoMeta;
    /// #   const INFO: ToolInfo = ToolInfo::new("index", "Index files.");
    ///     // …
    ///     async fn execute(&self, args: A, cx: &ToolContext<'_>) -> Result<u64, ToolError> {
    ///         for done in 1..=args.files {
    ///             cx.report_progress(done, Some(args.files), Some("indexing"));
    ///         }
    ///         Ok(args.files)
    ///     }
    /// #   fn render(_: &A, v: &u64) -> Vec<ContentBlock> { vec![ContentBlock::text(v.to_string())] }
    /// }
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// use std::sync::{Arc, Mutex};
    /// let seen = Arc::new(Mutex::new(Vec::new()));
    /// let sink = seen.clone();
    /// let options = toolprism::CallOptions::new().with_progress(move |p| sink.lock().unwrap().push(p.done));
    /// let registry = toolprism::Registry::builder().tool(Index).build().unwrap();
    /// registry.call_with(toolprism::ToolCall::new("1", "index", r#"{"files":3}"#), &options).await;
    /// assert_eq!(*seen.lock().unwrap(), [1, 2, 3]);
    /// # });
    /// ```
    pub fn report_progress(&self, done: u64, total: Option<u64>, message: Option<&str>) {
        if let Some(sink) = self.progress {
            // A sink is the caller's code: its panic must not end the call.
            let report = Progress {
                done,
                total,
                message: message.map(str::to_owned),
            };
            let _ = crate::guard::guard(|| sink(&report));
        }
    }

    /// The registry running this call. It is a cheap handle: clone it to
    /// keep it in spawned work (prefer [`nested`](Self::nested), which ties
    /// the nested calls to this one).
    pub fn registry(&self) -> &'a Registry {
        self.registry
    }

    fn next_id(&self) -> String {
        let counter = self.nested_ids.get_or_init(Default::default);
        let n = counter.fetch_add(1, Ordering::Relaxed) + 1;
        format!("{}:nested:{n}", self.call_id)
    }

    /// Calls another tool of the registry from this one: the full pipeline,
    /// the validated value as JSON, no meta and no cards. Its id is
    /// `<this call's id>:nested:<n>`, its cancellation follows this call's,
    /// and its error keeps its code, so `?` passes it on.
    pub async fn call_nested(&self, name: &str, arguments: Value) -> Result<Value, ToolError> {
        let options = self.nested_options();
        self.registry
            .run_nested(
                name,
                arguments,
                &options,
                Some(self.call_id),
                self.next_id(),
            )
            .await
            .into_value()
            .map_err(ErrorInfo::into_tool_error)
    }

    /// [`call_nested`](Self::call_nested) to tool `T`, returning its value
    /// typed.
    pub async fn call_typed<T: Tool>(&self, arguments: Value) -> Result<T::Value, ToolError> {
        let options = self.nested_options();
        self.registry
            .run_typed::<T>(arguments, &options, Some(self.call_id), self.next_id())
            .await
    }

    /// An owned handle for nested calls, to move into spawned tasks: its
    /// calls are tied to this call (ids, log) and cancelled with it.
    pub fn nested(&self) -> NestedCalls {
        NestedCalls {
            registry: self.registry.clone(),
            parent: Arc::from(self.call_id),
            ids: Arc::clone(self.nested_ids.get_or_init(Default::default)),
            cancel: self.cancellation().clone(),
            inherited: self.inherited(),
        }
    }
}

impl ToolContext<'_> {
    /// The handle a tool that runs a program (Code Mode's `run_code`) makes
    /// the program's tool calls with: like [`nested`](Self::nested), but
    /// each call is shown to the person watching, call by call. So, unlike a
    /// Rust nested call, it computes its presentation meta; the session log
    /// keeps its content, error code and meta (never the value), tied to
    /// this call; and this call's outcome lists it
    /// ([`ToolOutcome::nested_calls`](crate::ToolOutcome::nested_calls)),
    /// so its cards are drawn under this call's, live and on replay. Its
    /// content is never spilled: the program reads the value.
    ///
    /// Only an async `execute` records its program's calls in the outcome
    /// (a blocking tool's calls are still logged).
    pub fn program(&self) -> ProgramCalls {
        ProgramCalls {
            calls: self.nested(),
            records: Arc::clone(self.program.get_or_init(Default::default)),
        }
    }
}

/// The tool calls of a program a tool runs, made with
/// [`ToolContext::program`]: `'static`, `Send`, `Clone`, so a program's
/// event loop can hold it.
#[derive(Clone)]
pub struct ProgramCalls {
    calls: NestedCalls,
    records: Arc<Records>,
}

impl fmt::Debug for ProgramCalls {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProgramCalls")
            .field("parent", &self.calls.parent)
            .finish_non_exhaustive()
    }
}

impl ProgramCalls {
    /// The call running the program.
    pub fn parent_call_id(&self) -> &str {
        &self.calls.parent
    }

    /// The running call's cancellation: cancelled when it is cancelled or
    /// times out. A program's calls take a child of it.
    pub fn cancellation(&self) -> &CancellationToken {
        &self.calls.cancel
    }

    /// The definitions of the tools a program may call: every tool of the
    /// registry but the one running programs.
    pub fn definitions(&self) -> impl Iterator<Item = &ToolDefinition> {
        self.calls.registry.program_definitions()
    }

    /// One tool's definition, if a program may call it.
    pub fn definition(&self, name: &str) -> Option<&ToolDefinition> {
        self.calls.registry.program_definition(name)
    }

    /// Calls tool `name` for the program: the whole pipeline (policies,
    /// both schema checks, the tool's timeout), under `cancel` (pass a
    /// child of [`cancellation`](Self::cancellation)). Resolves to the
    /// validated, post-policy value, or the error with its code and the
    /// message the model would read.
    pub async fn call(
        &self,
        name: &str,
        arguments: Value,
        cancel: CancellationToken,
    ) -> Result<Value, ErrorInfo> {
        let options = self
            .calls
            .inherited
            .apply(CallOptions::new().with_cancel(cancel));
        let (outcome, arguments) = self
            .calls
            .registry
            .run_program(
                name,
                arguments,
                &options,
                &self.calls.parent,
                self.calls.next_id(),
            )
            .await;
        let (record, value) = outcome.into_record(arguments);
        self.records
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(record);
        value
    }
}

/// Nested calls for one parent call, from anywhere: `'static`, `Send`,
/// `Clone`. Made by [`ToolContext::nested`].
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
/// struct Fan;
/// impl Tool for Fan {
/// #   type Args = A; type Value = i64; type Meta = NoMeta;
/// #   const INFO: ToolInfo = ToolInfo::new("fan", "Double n in parallel.");
///     // …
///     async fn execute(&self, a: A, cx: &ToolContext<'_>) -> Result<i64, ToolError> {
///         let tasks: Vec<_> = (0..3)
///             .map(|i| {
///                 let nested = cx.nested();
///                 tokio::spawn(async move { nested.call_typed::<Double>(serde_json::json!({"n": a.n + i})).await })
///             })
///             .collect();
///         let mut sum = 0;
///         for task in tasks {
///             sum += task.await.map_err(|e| ToolError::new(e.to_string()))??;
///         }
///         Ok(sum)
///     }
/// #   fn render(_: &A, v: &i64) -> Vec<ContentBlock> { vec![ContentBlock::text(v.to_string())] }
/// }
/// # tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap().block_on(async {
/// let registry = toolprism::Registry::builder().tool(Double).tool(Fan).build().unwrap();
/// let out = registry.call(toolprism::ToolCall::new("c1", "fan", r#"{"n":1}"#)).await;
/// assert_eq!(out.value().unwrap(), 12); // 2 + 4 + 6
/// # });
/// ```
#[derive(Clone)]
pub struct NestedCalls {
    registry: Registry,
    parent: Arc<str>,
    ids: Arc<AtomicU64>,
    cancel: CancellationToken,
    inherited: Inherited,
}

/// What a nested call inherits from its parent: the log it is written to,
/// its client, its caller and its approval timeout.
#[derive(Clone, Default)]
struct Inherited {
    log: Option<SessionLog>,
    client: Option<Arc<dyn Client>>,
    /// A nested call is made on behalf of its parent's caller, so a tool
    /// cannot get around a policy by calling another (W3).
    caller: Option<Caller>,
    approval_timeout: Option<Duration>,
    /// The parent call's `execute_tool` span.
    span: Option<tracing::Span>,
}

impl Inherited {
    fn apply(&self, mut options: CallOptions) -> CallOptions {
        if let Some(log) = &self.log {
            options = options.with_log(log.clone());
        }
        if let Some(client) = &self.client {
            options = options.with_client(Arc::clone(client));
        }
        if let Some(caller) = &self.caller {
            options = options.with_caller(caller.clone());
        }
        if let Some(timeout) = self.approval_timeout {
            options = options.with_approval_timeout(timeout);
        }
        options.parent_span = self.span.clone();
        options
    }
}

impl fmt::Debug for NestedCalls {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NestedCalls")
            .field("parent", &self.parent)
            .field("cancelled", &self.cancel.is_cancelled())
            .finish_non_exhaustive()
    }
}

impl NestedCalls {
    fn next_id(&self) -> String {
        let n = self.ids.fetch_add(1, Ordering::Relaxed) + 1;
        format!("{}:nested:{n}", self.parent)
    }

    fn options(&self) -> CallOptions {
        self.inherited
            .apply(CallOptions::new().with_cancel(self.cancel.child_token()))
    }

    /// The parent call's id.
    pub fn parent_call_id(&self) -> &str {
        &self.parent
    }

    /// See [`ToolContext::call_nested`].
    pub async fn call_nested(&self, name: &str, arguments: Value) -> Result<Value, ToolError> {
        let options = self.options();
        self.registry
            .run_nested(
                name,
                arguments,
                &options,
                Some(&self.parent),
                self.next_id(),
            )
            .await
            .into_value()
            .map_err(ErrorInfo::into_tool_error)
    }

    /// See [`ToolContext::call_typed`].
    pub async fn call_typed<T: Tool>(&self, arguments: Value) -> Result<T::Value, ToolError> {
        let options = self.options();
        self.registry
            .run_typed::<T>(arguments, &options, Some(&self.parent), self.next_id())
            .await
    }
}
