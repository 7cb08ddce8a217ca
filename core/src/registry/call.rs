//! What a caller hands the registry: a [`ToolCall`] and its [`CallOptions`].

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;
use tracing::Span;

use crate::argument_dialect::ArgumentDialect;
use crate::caller::Caller;
use crate::client::Client;
use crate::context::Progress;
use crate::log::SessionLog;

/// One call from the model: its id, the tool's name and the raw arguments
/// text. Only the empty string means `{}`; anything else must be one JSON
/// object (whitespace alone is not JSON).
///
/// Made with [`ToolCall::new`] (`#[non_exhaustive]`: a call may gain
/// fields).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
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

/// Receives a call's progress reports; see [`CallOptions::with_progress`].
pub(crate) type ProgressSink = Arc<dyn Fn(&Progress) + Send + Sync>;

/// Per-call options: a timeout that overrides the tool's, a cancellation
/// token, where progress reports go, the arguments' dialect, and the
/// session log this call is written to.
///
/// ```
/// use std::time::Duration;
/// use toolprism::{CallOptions, CancellationToken};
///
/// let cancel = CancellationToken::new();
/// let options = CallOptions::new()
///     .with_timeout(Duration::from_secs(5))
///     .with_cancel(cancel.clone())
///     .with_progress(|p| eprintln!("{}/{:?} {}", p.done, p.total, p.message.as_deref().unwrap_or("")));
/// assert_eq!(options.timeout(), Some(Duration::from_secs(5)));
/// assert!(options.cancel().is_some());
/// ```
#[derive(Clone, Default)]
pub struct CallOptions {
    pub(crate) timeout: Option<Duration>,
    pub(crate) cancel: Option<CancellationToken>,
    pub(crate) progress: Option<ProgressSink>,
    pub(crate) dialect: Option<Arc<dyn ArgumentDialect>>,
    pub(crate) log: Option<SessionLog>,
    pub(crate) client: Option<Arc<dyn Client>>,
    pub(crate) caller: Option<Caller>,
    pub(crate) approval_timeout: Option<Duration>,
    /// The transport's `execute_tool` span for this call.
    pub(crate) span: Option<Span>,
    /// The span of the call this nested call is made for.
    pub(crate) parent_span: Option<Span>,
}

impl CallOptions {
    /// No options: the tool's (or the registry's) timeout, no cancellation,
    /// progress reports dropped.
    pub fn new() -> Self {
        CallOptions::default()
    }

    /// A timeout that overrides the tool's and the registry's.
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Cancels the call when `token` is cancelled: before dispatch it ends as
    /// `ABORTED_BEFORE_DISPATCH` and runs no policy; while `execute` runs, as
    /// `ABORTED` (unless the tool returns its own error first).
    pub fn with_cancel(mut self, token: CancellationToken) -> Self {
        self.cancel = Some(token);
        self
    }

    /// Receives the progress the tool reports with
    /// [`ToolContext::report_progress`](crate::ToolContext::report_progress),
    /// on the thread that reports it.
    pub fn with_progress(mut self, sink: impl Fn(&Progress) + Send + Sync + 'static) -> Self {
        self.progress = Some(Arc::new(sink));
        self
    }

    /// The arguments come from a model speaking `dialect`: the registry
    /// undoes what the dialect changed before it validates them
    /// ([`ArgumentDialect::restore`]; OpenAI strict mode sends `null` for
    /// every optional field it was made to require, and the provider
    /// crate's `Dialect::OpenAi` removes those nulls). The session log
    /// records the dialect's name with the call, and the registry
    /// remembers the dialect, so replay reads the arguments the same way.
    ///
    /// ```
    /// # #[derive(Debug)] struct Plain;
    /// # impl toolprism::ArgumentDialect for Plain {
    /// #     fn name(&self) -> &str { "plain" }
    /// #     fn restore(&self, _: &serde_json::Value, a: serde_json::Value) -> serde_json::Value { a }
    /// # }
    /// let options = toolprism::CallOptions::new().with_dialect(Plain);
    /// assert_eq!(options.dialect().unwrap().name(), "plain");
    /// ```
    pub fn with_dialect(mut self, dialect: impl ArgumentDialect) -> Self {
        self.dialect = Some(Arc::new(dialect));
        self
    }

    /// [`with_dialect`](Self::with_dialect) with a dialect already shared.
    pub fn with_shared_dialect(mut self, dialect: Arc<dyn ArgumentDialect>) -> Self {
        self.dialect = Some(dialect);
        self
    }

    /// Writes this call, and every nested call it makes, to `log` instead
    /// of the registry's own log (W1 in `docs/contract.md`: the pipeline is
    /// the only writer, whoever makes the call). A transport or front end
    /// that keeps a log of its own (`serve --log`, `call --log`) passes it
    /// here; it never writes events itself, so a call is never written
    /// twice.
    ///
    /// ```
    /// use toolprism::CallOptions;
    /// use toolprism::log::SessionLog;
    /// let dir = tempfile::tempdir().unwrap();
    /// let log = SessionLog::create(dir.path().join("s.jsonl")).unwrap();
    /// let options = CallOptions::new().with_log(log.clone());
    /// assert!(options.log().unwrap().same_log(&log));
    /// ```
    pub fn with_log(mut self, log: SessionLog) -> Self {
        self.log = Some(log);
        self
    }

    /// The other side of the call ([`crate::client`]): where its logs go,
    /// whom it may ask (the client's model, the user) and who approves it
    /// when it needs approval. Its nested calls have the same client.
    pub fn with_client(mut self, client: Arc<dyn Client>) -> Self {
        self.client = Some(client);
        self
    }

    /// How long this call, if it needs the user's approval, waits for the
    /// answer before it ends as `NOT_APPROVED`, unanswered: instead of the
    /// registry's [`approval_timeout`](crate::RegistryBuilder::approval_timeout).
    /// The calls a program makes from this call wait as long. A transport
    /// that knows how long its users take passes it here (`serve
    /// --approval-timeout SECS`).
    ///
    /// ```
    /// use std::time::Duration;
    /// let options = toolprism::CallOptions::new().with_approval_timeout(Duration::from_secs(600));
    /// assert_eq!(options.approval_timeout(), Some(Duration::from_secs(600)));
    /// ```
    pub fn with_approval_timeout(mut self, timeout: Duration) -> Self {
        self.approval_timeout = Some(timeout);
        self
    }

    /// The call's `execute_tool` span, opened by a transport that traces
    /// the request with attributes of its own (the MCP server's `mcp.*`):
    /// the pipeline records its fields into it instead of opening a second
    /// span ([`telemetry`](crate::telemetry)). It must declare every field
    /// of [`telemetry::FIELDS`](crate::telemetry::FIELDS), and carries
    /// `gen_ai.operation.name`, `gen_ai.tool.name` and `gen_ai.tool.type`
    /// from its creation.
    ///
    /// ```
    /// use tracing::field::Empty;
    /// let span = tracing::info_span!("execute_tool",
    ///     otel.name = "execute_tool ping", otel.kind = "server", otel.status_code = Empty,
    ///     gen_ai.operation.name = "execute_tool", gen_ai.tool.name = "ping",
    ///     gen_ai.tool.call.id = Empty, gen_ai.tool.type = "function",
    ///     gen_ai.tool.description = Empty, gen_ai.tool.call.arguments = Empty,
    ///     gen_ai.tool.call.result = Empty, error.type = Empty,
    ///     rpc.system = "jsonrpc");
    /// let options = toolprism::CallOptions::new().with_span(span);
    /// # let _ = options;
    /// ```
    pub fn with_span(mut self, span: Span) -> Self {
        self.span = Some(span);
        self
    }

    /// The approval timeout of
    /// [`with_approval_timeout`](Self::with_approval_timeout), when set.
    pub fn approval_timeout(&self) -> Option<Duration> {
        self.approval_timeout
    }

    /// The client of [`with_client`](Self::with_client), when set.
    pub fn client(&self) -> Option<&Arc<dyn Client>> {
        self.client.as_ref()
    }

    /// Makes the call on behalf of `caller`, an identity the transport
    /// verified (W3 in `docs/contract.md`): pre-execute policies see it
    /// ([`PreExecute::caller`](crate::PreExecute::caller)), the tool too
    /// ([`ToolContext::caller`](crate::ToolContext::caller)), and the
    /// call's nested calls carry it. The registry does not check it.
    ///
    /// ```
    /// use toolprism::{Caller, CallOptions};
    /// let options = CallOptions::new().with_caller(Caller::new("alice"));
    /// assert_eq!(options.caller().unwrap().subject(), "alice");
    /// ```
    pub fn with_caller(mut self, caller: Caller) -> Self {
        self.caller = Some(caller);
        self
    }

    /// The caller of [`with_caller`](Self::with_caller), when set.
    pub fn caller(&self) -> Option<&Caller> {
        self.caller.as_ref()
    }

    /// The session log of [`with_log`](Self::with_log), when set.
    pub fn log(&self) -> Option<&SessionLog> {
        self.log.as_ref()
    }

    /// The arguments' dialect, when set.
    pub fn dialect(&self) -> Option<&dyn ArgumentDialect> {
        self.dialect.as_deref()
    }

    /// The timeout, when set.
    pub fn timeout(&self) -> Option<Duration> {
        self.timeout
    }

    /// The cancellation token, when set.
    pub fn cancel(&self) -> Option<&CancellationToken> {
        self.cancel.as_ref()
    }
}

impl fmt::Debug for CallOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CallOptions")
            .field("timeout", &self.timeout)
            .field("cancel", &self.cancel)
            .field("progress", &self.progress.is_some())
            .field("dialect", &self.dialect.as_ref().map(|d| d.name()))
            .field("log", &self.log.as_ref().map(SessionLog::path))
            .field("client", &self.client.is_some())
            .field("caller", &self.caller)
            .field("approval_timeout", &self.approval_timeout)
            .field("span", &self.span)
            .finish()
    }
}

/// The options of [`Registry::call`](crate::Registry::call): none.
pub(crate) static NO_OPTIONS: CallOptions = CallOptions {
    timeout: None,
    cancel: None,
    progress: None,
    dialect: None,
    log: None,
    client: None,
    caller: None,
    approval_timeout: None,
    span: None,
    parent_span: None,
};
