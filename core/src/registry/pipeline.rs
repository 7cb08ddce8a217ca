//! One call through the pipeline, in the order of `docs/contract.md`. Step 1 (look the tool
//! up) is the registry's; it hands the call to this tool's pipeline, which
//! runs steps 2–10, one method each, in this order:
//!
//! 2. [`parse_arguments`](Run::parse_arguments): JSON, lossless and depth
//!    rules, input schema, deserialize (`INVALID_ARGS`); a call cancelled
//!    by now ends `ABORTED_BEFORE_DISPATCH` and no further phase runs;
//! 3. [`pre_execute`](Run::pre_execute): the first denial wins (`DENIED`);
//! 4. [`execute`](Run::execute): under the call's timeout and cancellation
//!    (`TOOL_FAILED`, `TIMEOUT`, `ABORTED`, `ABORTED_BEFORE_DISPATCH`);
//! 5. [`check_value`](Run::check_value): lossless JSON, then the output
//!    schema (`INVALID_TOOL_OUTPUT`);
//! 6. [`project`](Run::project): `render`, and `presentation_meta` for
//!    top-level calls (`INVALID_TOOL_OUTPUT`);
//! 7. [`post_execute`](Run::post_execute): each policy in order, on
//!    successes and failures alike, denials included (`BLOCKED`,
//!    `POLICY_ERROR`); a replaced value goes back through 5 and 6;
//! 8. [`spill`](Run::spill): content over budget, top-level successes only;
//! 9. [`publish`](Run::publish): the result appended to the session log;
//! 10. [`draw_cards`](Run::draw_cards): both cards, top-level calls only
//!     (presenters are pure, so drawing the call card here rather than before
//!     step 4 changes nothing, and lets the generic card take the arguments
//!     instead of a copy).
//!
//! Every piece of user code is called under a guard (see [`crate::guard`]):
//! a panic in `execute` or in the arguments' `Deserialize`/`Clone` is
//! `TOOL_FAILED` (the arguments passed the schema, so the fault is the
//! tool's), a panic while producing the value or meta (their `Serialize`,
//! `render`, `presentation_meta`, a replacement's `Deserialize`) is
//! `INVALID_TOOL_OUTPUT`, a panicking policy is `POLICY_ERROR`, a
//! panicking presenter gives the generic card. The guards sit where the
//! pipeline calls into user code, drops included (the body's future, which
//! a timeout or cancellation leaves unfinished, is dropped under one too);
//! no step needs a guard around itself, so no step's result is moved
//! through one.

use std::any::Any;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::Value;
use tokio_util::sync::CancellationToken;
use tracing::{Instrument, Span};

use super::Registry;
use super::arguments::{Arguments, Input, read_arguments};
use super::builder::Settings;
use super::call::CallOptions;
use super::entry::Entry;
use super::kernel::{Facts, Kernel};
use super::present;
use crate::client::{ApprovalRequest, ClientError};
use crate::content::{ContentBlock, content_text};
use crate::context::{Lent, ToolContext};
use crate::definition::SpillBudget;
use crate::error::{ErrorCode, ErrorInfo};
use crate::guard::{Guarded, Held, discard, guard};
use crate::log::SessionLog;
use crate::lossless::{check_value_with, drop_deep, to_value_with};
use crate::path::Keys;
use crate::policy::{PostDecision, PostExecute, PreDecision, PreExecute};
use crate::result::{
    Approval, Asked, CallCardSlot, NestedCall, Parts, ResultCardSlot, ToolOutcome, ToolResult,
};
use crate::schema::violations;
use crate::spill::spill_content;
use crate::telemetry;
use crate::text::cap;

/// Where a call comes from.
#[derive(Debug, Clone, Copy)]
pub(super) enum Origin<'a> {
    /// The model: meta, cards and spill; `tool/call` and `tool/result` in
    /// the log.
    TopLevel,
    /// A program (a tool's nested call, or code holding the registry): the
    /// value, no cards, no spill; `tool/nested-call` and
    /// `tool/nested-result` in the log, tied to the parent when there is one.
    /// Meta only for a `program` the model wrote (Code Mode), whose calls
    /// are shown to a person call by call (C5, P4); a Rust program's calls
    /// compute none.
    Nested {
        parent: Option<&'a str>,
        program: bool,
    },
}

impl Origin<'_> {
    pub(super) fn is_nested(self) -> bool {
        matches!(self, Origin::Nested { .. })
    }

    /// Whether step 6 computes `presentation_meta`.
    fn projects_meta(self) -> bool {
        matches!(
            self,
            Origin::TopLevel | Origin::Nested { program: true, .. }
        )
    }
}

/// One call, as the registry hands it to a tool's pipeline. The arguments
/// are owned (text or JSON), so the call's future holds them and needs no
/// wrapper around it.
pub(super) struct Call<'a> {
    pub(super) id: String,
    pub(super) name: String,
    pub(super) args: Arguments<'static>,
    pub(super) options: &'a CallOptions,
    pub(super) origin: Origin<'a>,
}

impl<'a> Call<'a> {
    /// The log this call is written to: the caller's
    /// ([`CallOptions::with_log`]), else the registry's.
    pub(super) fn log<'s>(&'s self, settings: &'s Settings) -> Option<&'s SessionLog> {
        log_of(self.options, settings)
    }

    /// The call's `execute_tool` span ([`telemetry`]): the transport's, or
    /// a new one under the parent call's.
    pub(super) fn span(&self, registry: &Registry, description: Option<&str>) -> Span {
        let traced = registry.inner.settings.trace_content;
        let logged = traced.then(|| self.args.logged());
        telemetry::open(
            telemetry::Opening {
                name: &self.name,
                call_id: &self.id,
                description,
                arguments: logged.as_deref(),
            },
            self.options.span.as_ref(),
            self.options.parent_span.as_ref(),
        )
    }

    /// Step 0, for every origin: the call goes to its session log before
    /// anything runs (`tool/call` from the model, `tool/nested-call` from a
    /// program); a failed append is the outcome's first warning.
    pub(super) fn record(&self, settings: &Settings) -> Vec<String> {
        let mut warnings = Vec::new();
        let Some(log) = self.log(settings) else {
            return warnings;
        };
        let (event, written) = match self.origin {
            Origin::TopLevel => (
                "tool/call",
                log.record_call_in(
                    &self.id,
                    &self.name,
                    &self.args.logged(),
                    self.options.dialect.as_deref().map(|d| d.name()),
                ),
            ),
            Origin::Nested { parent, .. } => (
                "tool/nested-call",
                log.record_nested_call(&self.id, parent, &self.name, &self.args.logged()),
            ),
        };
        if let Err(e) = written {
            warnings.push(not_appended(log, event, &e));
        }
        warnings
    }
}

/// The log a call with `options` is written to.
fn log_of<'s>(options: &'s CallOptions, settings: &'s Settings) -> Option<&'s SessionLog> {
    options.log.as_ref().or(settings.log.as_ref())
}

/// The value while the pipeline runs: JSON for programs and policies,
/// typed for the projections and typed nested calls.
struct Produced<V> {
    json: Value,
    typed: V,
}

/// A call's result while the pipeline runs.
struct State<V> {
    result: ToolResult,
    produced: Option<Produced<V>>,
    error: Option<ErrorInfo>,
}

impl<V> State<V> {
    /// A placeholder, while a state is moved out and back.
    fn empty() -> Self {
        State {
            result: ToolResult {
                content: Vec::new(),
                is_error: false,
                meta: None,
            },
            produced: None,
            error: None,
        }
    }

    fn failed(error: ErrorInfo) -> Self {
        State {
            result: ToolResult::error(&error.message),
            produced: None,
            error: Some(error),
        }
    }
}

/// One call of tool `T`: what every step reads.
struct Run<'a, T: Kernel> {
    entry: &'a Entry<T>,
    registry: &'a Registry,
    settings: &'a Settings,
    id: String,
    name: String,
    options: &'a CallOptions,
    origin: Origin<'a>,
    /// What few calls leave for the outcome (a program's calls, an
    /// approval), boxed when there is any: most calls leave none, and the
    /// call's state stays small (it is moved as the future is).
    rare: Mutex<Option<Box<Rare>>>,
}

/// What a call leaves for its outcome beyond its result, when it needs
/// approval or runs a program.
#[derive(Default)]
struct Rare {
    /// The calls the body's program made (`ToolContext::program`): filled
    /// when `execute` is done.
    program: Vec<NestedCall>,
    /// The person's decision, when the call needed approval.
    approval: Option<Approval>,
    /// A `tool/approval` the log could not take.
    approval_warning: Option<String>,
}

/// What step 3 decided.
enum Admission {
    /// Run it.
    Run,
    /// Run it if a person approves.
    Ask(String),
    /// End it with this error.
    Refused(ErrorInfo),
}

/// A call that passed steps 2 and 3, ready for step 4: all the
/// pipeline's future holds while `execute` runs.
struct Ready<'a, T: Kernel> {
    run: Run<'a, T>,
    /// The arguments as JSON: what policies see and the generic call card
    /// shows.
    input: Input,
    /// Dropped under a guard also when the caller drops the call's future.
    args: Held<T::Args>,
    warnings: Vec<String>,
    /// The question to ask a person before step 4 (step 3's `Ask`, or the
    /// tool's own `approval`).
    ask: Option<String>,
}

/// What steps 2 and 3 leave: a call ready for step 4, or its outcome.
// Moved once, inside the call's own future; boxing `Ready` would cost every
// call an allocation to save a few bytes of a value that never sits in a
// collection. How large `Ready` is depends on the tool's types (and so on
// which features built them), hence `allow`, not `expect`.
#[allow(clippy::large_enum_variant)]
enum Prepared<'a, T: Kernel> {
    Ready(Ready<'a, T>),
    Ended(ToolOutcome),
}

impl<T: Kernel> Entry<T> {
    /// Steps 2–10 of one call. Only step 4 awaits; the synchronous steps
    /// around it run in [`prepare`](Entry::prepare) and
    /// [`Ready::finish`], so the future holds no more than a [`Ready`]
    /// call and `execute`'s own future.
    pub(super) async fn pipeline(&self, registry: &Registry, call: Call<'_>) -> ToolOutcome {
        let span = call.span(
            registry,
            Some(&super::entry::DynTool::definition(self).description),
        );
        // One state machine for the whole call, not a future inside a
        // future inside the boxed one: the synchronous steps run inside the
        // span, and only the awaited step is instrumented (when a subscriber
        // wants the span at all), so the call's state and its outcome are
        // not moved through layers.
        // No local here outlives its use across an await but `ready` and
        // the future awaited: the rest would be kept in the (boxed) future.
        let mut ready = match self.prepare_within(&span, registry, call) {
            Prepared::Ready(ready) => ready,
            Prepared::Ended(outcome) => {
                close(&span, registry, &outcome);
                return outcome;
            }
        };
        if let Some(question) = ready.ask.take() {
            // Boxed: the rare path keeps the common one's future small.
            let approving = Box::pin(
                ready
                    .run
                    .approve(question, &ready.input)
                    .instrument(span.clone()),
            );
            if let Err(refused) = approving.await {
                let outcome = ready.finish_within(&span, Err(refused));
                close(&span, registry, &outcome);
                return outcome;
            }
        }
        let executed = ready
            .run
            .execute(ready.args.get())
            .instrument(span.clone())
            .await;
        let outcome = ready.finish_within(&span, executed);
        close(&span, registry, &outcome);
        outcome
    }

    /// [`prepare`](Entry::prepare) inside the call's span.
    fn prepare_within<'a>(
        &'a self,
        span: &Span,
        registry: &'a Registry,
        call: Call<'a>,
    ) -> Prepared<'a, T> {
        let _in = span.enter();
        self.prepare(registry, call)
    }

    /// Steps 2 and 3 (after step 0, logging a top-level call): the call
    /// ready for step 4, or its outcome when it ends before (invalid
    /// arguments, cancelled before dispatch, denied).
    #[inline]
    fn prepare<'a>(&'a self, registry: &'a Registry, call: Call<'a>) -> Prepared<'a, T> {
        let settings = &registry.inner.settings;
        let warnings = call.record(settings);
        let Call {
            id,
            name,
            args,
            options,
            origin,
        } = call;
        let run = Run {
            entry: self,
            registry,
            settings,
            id,
            name,
            options,
            origin,
            rare: Mutex::new(None),
        };
        let (input, args) = match run.parse_arguments(args) {
            Ok(parsed) => parsed,
            Err((input, error)) => {
                let input = Input::Json(input);
                return Prepared::Ended(run.conclude(input, None, State::failed(error), warnings));
            }
        };
        if run.cancelled() {
            let state = State::failed(aborted_before_dispatch());
            return Prepared::Ended(run.conclude(input, Some(args), state, warnings));
        }
        let admission = run.pre_execute(&input, &args);
        let mut ready = Ready {
            run,
            input,
            args: Held::new(args),
            warnings,
            ask: None,
        };
        match admission {
            Admission::Run => Prepared::Ready(ready),
            Admission::Ask(question) => {
                ready.ask = Some(question);
                Prepared::Ready(ready)
            }
            Admission::Refused(denied) => Prepared::Ended(ready.finish(Err(denied))),
        }
    }
}

impl<T: Kernel> Ready<'_, T> {
    /// [`finish`](Ready::finish) inside the call's span.
    fn finish_within(self, span: &Span, executed: Result<T::Value, ErrorInfo>) -> ToolOutcome {
        let _in = span.enter();
        self.finish(executed)
    }

    /// Steps 5–10 once step 4 (or a denial in step 3) has given its
    /// result.
    #[inline]
    fn finish(self, executed: Result<T::Value, ErrorInfo>) -> ToolOutcome {
        let Ready {
            run,
            input,
            args,
            mut warnings,
            ask: _,
        } = self;
        let args = args.take();
        let mut state = match executed {
            Ok(typed) => {
                let produced = run.check_value(typed);
                run.project(&args, produced)
            }
            Err(error) => State::failed(error),
        };
        run.post_execute(&input, &args, &mut state);
        run.spill(&mut state.result, &mut warnings);
        run.conclude(input, Some(args), state, warnings)
    }
}

impl<T: Kernel> Run<'_, T> {
    #[inline]
    fn facts(&self) -> Facts<'_> {
        self.entry.tool.facts()
    }

    #[inline]
    fn nested(&self) -> bool {
        self.origin.is_nested()
    }

    /// What the call leaves beyond its result, made on first use.
    #[cold]
    fn with_rare(&self, f: impl FnOnce(&mut Rare)) {
        let mut rare = self.rare.lock().unwrap_or_else(PoisonError::into_inner);
        f(rare.get_or_insert_with(Box::default));
    }

    /// Steps 9 and 10, and the outcome.
    #[inline]
    fn conclude(
        self,
        input: Input,
        args: Option<T::Args>,
        state: State<T::Value>,
        mut warnings: Vec<String>,
    ) -> ToolOutcome {
        let State {
            mut result,
            produced,
            error,
        } = state;
        self.publish(&result, error.as_ref(), &mut warnings);
        let cards = self.draw_cards(args.as_ref(), input, &mut result);
        if let Some(args) = args {
            discard(args);
        }
        let produced = produced.map(|p| (p.json, Box::new(p.typed) as Box<dyn Any + Send + Sync>));
        let rare = self
            .rare
            .into_inner()
            .unwrap_or_else(PoisonError::into_inner);
        let (nested, approval) = match rare {
            None => (Vec::new(), None),
            Some(rare) => {
                let Rare {
                    program,
                    approval,
                    approval_warning,
                } = *rare;
                warnings.extend(approval_warning);
                (program, approval)
            }
        };
        let mut outcome = outcome(self.id, self.name, result, produced, error, cards, warnings);
        outcome.0.nested = nested;
        outcome.0.approval = approval;
        outcome
    }

    /// Step 2: JSON syntax, lossless and depth rules, input schema,
    /// deserialize.
    #[inline]
    fn parse_arguments(&self, args: Arguments<'_>) -> Result<(Input, T::Args), (Value, ErrorInfo)> {
        // Policies read the arguments as JSON; without them nothing does
        // until the generic call card is drawn.
        let keep = !self.settings.pre.is_empty() || !self.settings.post.is_empty();
        read_arguments::<T>(
            self.facts().name,
            &self.entry.compiled,
            args,
            self.options.dialect.as_deref(),
            keep,
        )
    }

    #[inline]
    fn cancelled(&self) -> bool {
        self.options
            .cancel
            .as_ref()
            .is_some_and(CancellationToken::is_cancelled)
    }

    /// Step 3: the first denial wins; a panicking policy is `POLICY_ERROR`.
    /// A policy that asks, or the tool's own `approval`, makes the call
    /// wait for a person: the first policy's question, and the tool's own
    /// after it when it has one (it names what this call asks for, a wider
    /// sandbox say, which no policy may hide).
    #[inline]
    fn pre_execute(&self, input: &Input, args: &T::Args) -> Admission {
        let mut ask = None;
        if !self.settings.pre.is_empty() {
            let arguments = input.json();
            let view = PreExecute {
                tool: self.facts().name,
                call_id: &self.id,
                arguments: &arguments,
                nested: self.nested(),
                caller: self.options.caller.as_ref(),
            };
            if let Some(refused) = self.pre_policies(&view, &mut ask) {
                return refused;
            }
        }
        {
            match guard(|| self.entry.tool.approval(args)) {
                Ok(Some(own)) => {
                    ask = Some(match ask {
                        Some(policy) => format!("{policy}\n{own}"),
                        None => own,
                    });
                }
                Ok(None) => {}
                Err(panic) => {
                    return Admission::Refused(self.failed(format!(
                        "tool \"{}\" panicked deciding whether the call needs approval: {panic}",
                        self.facts().name
                    )));
                }
            }
        }
        match ask {
            Some(question) => Admission::Ask(question),
            None => Admission::Run,
        }
    }

    /// Step 3's policies: the first denial wins, the first question is
    /// kept in `ask`; `Some` when the call is refused.
    fn pre_policies(&self, view: &PreExecute<'_>, ask: &mut Option<String>) -> Option<Admission> {
        for policy in &self.settings.pre {
            match guard(|| policy.check(view)) {
                Ok(PreDecision::Allow) => {}
                Ok(PreDecision::Deny { reason }) => {
                    return Some(Admission::Refused(ErrorInfo::new(
                        ErrorCode::Denied,
                        reason,
                    )));
                }
                Ok(PreDecision::Ask { question }) => {
                    ask.get_or_insert(question);
                }
                Err(panic) => {
                    return Some(Admission::Refused(ErrorInfo::new(
                        ErrorCode::PolicyError,
                        format!("a pre-execute policy panicked: {panic}"),
                    )));
                }
            }
        }
        None
    }

    /// Step 3, asking: the question goes to the call's client, under the
    /// approval timeout (the call's, else the registry's) and the call's
    /// cancellation; the decision is logged with the call and kept for its
    /// outcome, and a refusal says how the asking ended.
    #[cold]
    async fn approve(&self, question: String, arguments: &Input) -> Result<(), ErrorInfo> {
        let asked = match self.options.client.as_ref() {
            None => Asked::Unavailable,
            Some(client) => {
                let request = ApprovalRequest {
                    tool: self.facts().name.to_owned(),
                    call_id: self.id.clone(),
                    arguments: arguments.json().into_owned(),
                    question: question.clone(),
                };
                let timeout = self
                    .options
                    .approval_timeout
                    .unwrap_or(self.settings.approval_timeout);
                let started = Instant::now();
                // The client is the caller's code: polled under a guard.
                let slot = std::pin::pin!(Some(client.approve(request)));
                let mut asked = Guarded::new(slot);
                match race(asked.run(), Some(timeout), self.options.cancel.as_ref()).await {
                    Raced::Done(Ok(Ok(answer))) => Asked::Answered(answer),
                    Raced::Done(Ok(Err(ClientError::Unavailable(_)))) => Asked::Unavailable,
                    Raced::Done(Ok(Err(ClientError::Failed(error)))) => Asked::Failed(error),
                    // The client's own timeout came first.
                    Raced::Done(Ok(Err(ClientError::TimedOut))) => {
                        Asked::Unanswered(started.elapsed())
                    }
                    Raced::Done(Err(panic)) => {
                        Asked::Failed(format!("its code panicked while asking: {panic}"))
                    }
                    Raced::TimedOut => Asked::Unanswered(timeout),
                    Raced::Cancelled => return Err(aborted_before_dispatch()),
                }
            }
        };
        let approval = Approval {
            question,
            decision: asked.decision(),
        };
        let warning = log_of(self.options, self.settings).and_then(|log| {
            log.record_approval(&self.id, &approval)
                .err()
                .map(|e| not_appended(log, "tool/approval", &e))
        });
        self.with_rare(|rare| {
            rare.approval = Some(approval);
            rare.approval_warning = warning;
        });
        match asked.refusal(self.facts().name) {
            None => Ok(()),
            Some(message) => Err(ErrorInfo::new(ErrorCode::NotApproved, message)),
        }
    }

    /// Step 4: `execute` (or `execute_blocking` on tokio's blocking pool)
    /// under the call's timeout and cancellation.
    ///
    /// The body is polled before the cancellation, so a tool that sees the
    /// cancellation and returns its own error keeps it; a success that
    /// comes after a cancellation is `ABORTED`. A timeout or cancellation
    /// drops the body's future before this returns, so the tool's cleanup
    /// in `Drop` is done by then; a blocking body cannot be stopped, so its
    /// token is cancelled (also when the call's future is dropped) and its
    /// late result dropped.
    #[inline]
    async fn execute(&self, args: &T::Args) -> Result<T::Value, ErrorInfo> {
        let caller = self.options.cancel.as_ref();
        if caller.is_some_and(CancellationToken::is_cancelled) {
            return Err(aborted_before_dispatch());
        }
        let args = guard(|| args.clone())
            .map_err(|panic| self.failed(format!("cloning the arguments panicked: {panic}")))?;
        let timeout = self
            .options
            .timeout
            .or(self.facts().timeout)
            .or(self.settings.default_timeout);
        let outcome = if self.facts().blocking {
            // Boxed: the rare path keeps the common one's future small.
            Box::pin(self.execute_blocking(args, caller, timeout)).await
        } else {
            let cx = ToolContext::new(
                self.registry,
                &self.id,
                self.facts().name,
                self.nested(),
                caller,
                Lent {
                    progress: self.options.progress.as_ref(),
                    log: self.options.log.as_ref(),
                    client: self.options.client.as_ref(),
                    caller: self.options.caller.as_ref(),
                    approval_timeout: self.options.approval_timeout,
                },
            );
            // Dropped under a guard: after a timeout or cancellation, or when
            // the call's future is dropped, it may still hold the tool's
            // state, whose `Drop` is user code.
            let slot = std::pin::pin!(Some(self.entry.tool.execute(args, &cx)));
            let mut body = Guarded::new(slot);
            let outcome = race(body.run(), timeout, caller).await;
            if !matches!(outcome, Raced::Done(_)) {
                // Work the tool spawned with its token stops too.
                cx.cancel_own();
            }
            drop(body);
            let program = cx.take_program_calls();
            if !program.is_empty() {
                self.with_rare(|rare| rare.program = program);
            }
            outcome
        };
        match outcome {
            Raced::Done(Ok(Ok(value))) if caller.is_some_and(CancellationToken::is_cancelled) => {
                discard(value);
                Err(ErrorInfo::new(ErrorCode::Aborted, "tool call aborted"))
            }
            Raced::Done(Ok(Ok(value))) => Ok(value),
            Raced::Done(Ok(Err(e))) => Err(e.into_info()),
            Raced::Done(Err(panic)) => {
                Err(self.failed(format!("tool \"{}\" panicked: {panic}", self.facts().name)))
            }
            Raced::TimedOut => Err(ErrorInfo::new(
                ErrorCode::Timeout,
                format!(
                    "tool \"{}\" timed out after {} ms",
                    self.facts().name,
                    timeout.unwrap_or_default().as_millis()
                ),
            )),
            Raced::Cancelled => Err(ErrorInfo::new(ErrorCode::Aborted, "tool call aborted")),
        }
    }

    /// Step 4 for a blocking tool: its own thread from tokio's blocking
    /// pool, with a context that owns what it borrows.
    #[cold]
    async fn execute_blocking(
        &self,
        args: T::Args,
        caller: Option<&CancellationToken>,
        timeout: Option<Duration>,
    ) -> Raced<Result<Result<T::Value, crate::ToolError>, String>> {
        let token = caller.map_or_else(CancellationToken::new, CancellationToken::child_token);
        let work = {
            let tool = Arc::clone(&self.entry.tool);
            let registry = self.registry.clone();
            let id = self.id.to_owned();
            let nested = self.nested();
            let token = token.clone();
            let progress = self.options.progress.clone();
            let log = self.options.log.clone();
            let client = self.options.client.clone();
            let caller = self.options.caller.clone();
            let approval_timeout = self.options.approval_timeout;
            // The call's span, so the body's nested calls are its children.
            let span = Span::current();
            move || {
                let _entered = span.enter();
                let cx = ToolContext::new(
                    &registry,
                    &id,
                    tool.facts().name,
                    nested,
                    Some(&token),
                    Lent {
                        progress: progress.as_ref(),
                        log: log.as_ref(),
                        client: client.as_ref(),
                        caller: caller.as_ref(),
                        approval_timeout,
                    },
                );
                guard(|| tool.execute_blocking(args, &cx))
            }
        };
        // However this step ends (a result, a timeout, a cancellation, or
        // the call's future dropped by its caller), the body's token is
        // cancelled: a body still running learns that nobody waits for it.
        let _stop = token.drop_guard();
        let handle = tokio::task::spawn_blocking(work);
        let body = async {
            match handle.await {
                Ok(done) => done,
                Err(e) => Err(format!("its blocking task failed: {e}")),
            }
        };
        race(body, timeout, caller).await
    }

    /// Step 5: lossless JSON, then the output schema. A value's own keys
    /// never appear in a message (see [`crate::path`]).
    #[inline]
    fn check_value(&self, typed: T::Value) -> Result<Produced<T::Value>, ErrorInfo> {
        let keys = Keys::Declared(&self.entry.compiled.output_names);
        let json = match guard(|| to_value_with(&typed, "value", keys)) {
            Ok(Ok(json)) => json,
            Ok(Err(e)) => {
                discard(typed);
                return Err(self.invalid_output(&e.to_string()));
            }
            Err(panic) => {
                discard(typed);
                return Err(
                    self.invalid_output(&format!("serializing the value panicked: {panic}"))
                );
            }
        };
        if let Some(message) = violations(&self.entry.compiled.output, &json, "value", keys) {
            discard(typed);
            return Err(self.invalid_output(&message));
        }
        Ok(Produced { json, typed })
    }

    /// Step 5 for a replacement value: depth and lossless rules, the output
    /// schema, then typed.
    #[cold]
    fn check_replacement(&self, json: Value) -> Result<Produced<T::Value>, ErrorInfo> {
        let keys = Keys::Declared(&self.entry.compiled.output_names);
        if let Err(e) = check_value_with(&json, "value", keys) {
            drop_deep(json);
            return Err(self.invalid_output(&e.to_string()));
        }
        if let Some(message) = violations(&self.entry.compiled.output, &json, "value", keys) {
            return Err(self.invalid_output(&message));
        }
        match guard(|| T::Value::deserialize(&json)) {
            Ok(Ok(typed)) => Ok(Produced { json, typed }),
            Ok(Err(e)) => Err(self.invalid_output(&format!(
                "the replacement value does not deserialize: {}",
                cap(&e.to_string(), 300)
            ))),
            Err(panic) => Err(self.invalid_output(&format!(
                "deserializing the replacement value panicked: {panic}"
            ))),
        }
    }

    /// Step 6: content, and meta for top-level calls.
    #[inline]
    fn project(
        &self,
        args: &T::Args,
        produced: Result<Produced<T::Value>, ErrorInfo>,
    ) -> State<T::Value> {
        let produced = match produced {
            Ok(produced) => produced,
            Err(error) => return State::failed(error),
        };
        let content = match guard(|| self.entry.tool.render(args, &produced.typed)) {
            Ok(content) => content,
            Err(panic) => {
                discard(produced);
                return State::failed(
                    self.invalid_output(&format!("output.render failed: {panic}")),
                );
            }
        };
        let meta = if !self.origin.projects_meta() {
            None
        } else {
            match self.presentation_meta(args, &produced.typed) {
                Ok(meta) => meta,
                Err(error) => {
                    discard(produced);
                    return State::failed(error);
                }
            }
        };
        State {
            result: ToolResult {
                content,
                is_error: false,
                meta,
            },
            produced: Some(produced),
            error: None,
        }
    }

    #[inline]
    fn presentation_meta(
        &self,
        args: &T::Args,
        value: &T::Value,
    ) -> Result<Option<Value>, ErrorInfo> {
        let meta = match guard(|| self.entry.tool.presentation_meta(args, value)) {
            Ok(None) => return Ok(None),
            Ok(Some(meta)) => meta,
            Err(panic) => {
                return Err(
                    self.invalid_output(&format!("output.presentationMeta failed: {panic}"))
                );
            }
        };
        let json = guard(|| to_value_with(&meta, "meta", Keys::Hidden));
        discard(meta);
        match json {
            Ok(Ok(json)) => Ok(Some(json)),
            Ok(Err(e)) => Err(self.invalid_output(&format!(
                "output.presentationMeta returned non-lossless JSON: {e}"
            ))),
            Err(panic) => Err(self.invalid_output(&format!(
                "output.presentationMeta returned meta whose serialization panicked: {panic}"
            ))),
        }
    }

    /// Step 7: each policy sees the previous decision applied. Denied calls
    /// come through too, as in the reference system.
    #[inline]
    fn post_execute(&self, input: &Input, args: &T::Args, state: &mut State<T::Value>) {
        if self.settings.post.is_empty() {
            return;
        }
        let taken = std::mem::replace(state, State::empty());
        *state = self.apply_post_policies(&input.json(), args, taken);
    }

    #[cold]
    fn apply_post_policies(
        &self,
        arguments: &Value,
        args: &T::Args,
        mut state: State<T::Value>,
    ) -> State<T::Value> {
        for policy in &self.settings.post {
            let view = PostExecute {
                tool: self.facts().name,
                call_id: &self.id,
                arguments,
                nested: self.nested(),
                result: &state.result,
                value: state.produced.as_ref().map(|p| &p.json),
                error: state.error.as_ref(),
            };
            let decision = match guard(|| policy.decide(&view)) {
                Ok(decision) => decision,
                Err(panic) => {
                    discard(state);
                    return State::failed(ErrorInfo::new(
                        ErrorCode::PolicyError,
                        format!("a post-execute policy panicked: {panic}"),
                    ));
                }
            };
            match decision {
                PostDecision::Accept => {}
                PostDecision::ReplaceContent(content) => state.result.content = content,
                PostDecision::ReplaceValue(json) => {
                    if state.produced.is_none() {
                        drop_deep(json);
                        return State::failed(ErrorInfo::new(
                            ErrorCode::PolicyError,
                            "a post-execute policy cannot replace the value of a failed result",
                        ));
                    }
                    discard(state);
                    state = self.project(args, self.check_replacement(json));
                    if state.error.is_some() {
                        return state;
                    }
                }
                PostDecision::Block { feedback } => {
                    discard(state);
                    return blocked(feedback);
                }
            }
        }
        state
    }

    /// Step 8: content over budget goes to the spill store (top-level
    /// successes only); a failed write keeps the content and warns.
    #[inline]
    fn spill(&self, result: &mut ToolResult, warnings: &mut Vec<String>) {
        if self.nested() || result.is_error {
            return;
        }
        let budget = match self.facts().spill {
            SpillBudget::Never => return,
            SpillBudget::Default => self.settings.spill_budget,
            SpillBudget::Bytes(n) => n,
        };
        if let Some(store) = &self.settings.spill
            && let Err(problem) = spill_content(store, &mut result.content, budget)
        {
            warnings.push(problem);
        }
    }

    /// Step 9: the result goes to the call's session log, when it has one.
    #[inline]
    fn publish(&self, result: &ToolResult, error: Option<&ErrorInfo>, warnings: &mut Vec<String>) {
        publish(
            log_of(self.options, self.settings),
            self.origin,
            &self.id,
            result,
            error,
            warnings,
        );
    }

    /// Step 10: the call card and the result card, top-level calls only.
    #[inline]
    fn draw_cards(&self, args: Option<&T::Args>, input: Input, result: &mut ToolResult) -> Cards {
        if self.nested() {
            return (None, None);
        }
        let call_card = present::call_card(&*self.entry.tool, args, input);
        let result_card = match args
            .and_then(|args| present::draw_result_card(&*self.entry.tool, args, result))
        {
            Some(card) => ResultCardSlot::Drawn(Box::new(card)),
            None => ResultCardSlot::generic(),
        };
        (Some(call_card), Some(result_card))
    }

    #[cold]
    fn invalid_output(&self, detail: &str) -> ErrorInfo {
        ErrorInfo::new(
            ErrorCode::InvalidToolOutput,
            format!(
                "tool \"{}\" returned invalid output: {detail}",
                self.facts().name
            ),
        )
    }

    #[cold]
    fn failed(&self, message: String) -> ErrorInfo {
        ErrorInfo::new(ErrorCode::ToolFailed, message)
    }
}

/// How the race of a call's body against its timeout and cancellation ended.
enum Raced<O> {
    Done(O),
    TimedOut,
    Cancelled,
}

/// Runs `body` under `timeout` and `cancel`. The body is polled first, so
/// when it finishes in the same wake-up as a cancellation its own outcome
/// wins. Without a caller's token there is nothing to race (and no token to
/// allocate).
async fn race<F: Future>(
    body: F,
    timeout: Option<Duration>,
    cancel: Option<&CancellationToken>,
) -> Raced<F::Output> {
    if timeout.is_none() && cancel.is_none() {
        return Raced::Done(body.await);
    }
    // Boxed: a timer and a cancellation waiter are some hundreds of bytes,
    // which would otherwise make every call's future (boxed and copied
    // once per call) that much larger, timed or not.
    Box::pin(race_against(body, timeout, cancel)).await
}

/// [`race`] with a timeout or a token to race against.
async fn race_against<F: Future>(
    body: F,
    timeout: Option<Duration>,
    cancel: Option<&CancellationToken>,
) -> Raced<F::Output> {
    let timed = async {
        match timeout {
            Some(limit) => match tokio::time::timeout(limit, body).await {
                Ok(out) => Raced::Done(out),
                Err(_) => Raced::TimedOut,
            },
            None => Raced::Done(body.await),
        }
    };
    match cancel {
        Some(cancel) => tokio::select! {
            biased;
            out = timed => out,
            () = cancel.cancelled() => Raced::Cancelled,
        },
        None => timed.await,
    }
}

#[cold]
fn aborted_before_dispatch() -> ErrorInfo {
    ErrorInfo::new(
        ErrorCode::AbortedBeforeDispatch,
        "tool call aborted before dispatch",
    )
}

/// A `Block` decision: the feedback is the content, and its text the message.
#[cold]
fn blocked<V>(feedback: Vec<ContentBlock>) -> State<V> {
    let mut message = content_text(&feedback);
    if message.trim().is_empty() {
        message = "tool result blocked by post-execute policy".to_owned();
    }
    State {
        result: ToolResult {
            content: feedback,
            is_error: true,
            meta: None,
        },
        produced: None,
        error: Some(ErrorInfo::new(ErrorCode::Blocked, message)),
    }
}

/// The call's span records how it ended ([`telemetry::close`]).
#[inline]
fn close(span: &Span, registry: &Registry, outcome: &ToolOutcome) {
    telemetry::close(span, outcome, registry.inner.settings.trace_content);
}

/// Step 9 for any call, a known tool's or not: the result goes to `log`.
pub(super) fn publish(
    log: Option<&SessionLog>,
    origin: Origin<'_>,
    id: &str,
    result: &ToolResult,
    error: Option<&ErrorInfo>,
    warnings: &mut Vec<String>,
) {
    let Some(log) = log else {
        return;
    };
    let code = error.map(|e| &e.code);
    let (event, written) = match origin {
        Origin::TopLevel => ("tool/result", log.record_result(id, result, code)),
        Origin::Nested { parent, .. } => (
            "tool/nested-result",
            log.record_nested_result(id, parent, result, code),
        ),
    };
    if let Err(e) = written {
        warnings.push(not_appended(log, event, &e));
    }
}

/// The warning of an event the log could not take.
#[cold]
fn not_appended(log: &SessionLog, event: &str, error: &std::io::Error) -> String {
    format!(
        "session log {}: could not append {event}: {error}",
        log.path().display()
    )
}

/// The cards of a top-level call, not drawn yet where generic.
pub(super) type Cards = (Option<CallCardSlot>, Option<ResultCardSlot>);

/// Step 9's outcome, for every call (a known tool's or not): the one place a
/// [`ToolOutcome`] is put together.
pub(super) fn outcome(
    call_id: String,
    name: String,
    result: ToolResult,
    produced: Option<(Value, Box<dyn Any + Send + Sync>)>,
    error: Option<ErrorInfo>,
    (call_card, result_card): Cards,
    warnings: Vec<String>,
) -> ToolOutcome {
    let (value, typed) = match produced {
        Some((json, typed)) => (Some(json), Some(typed)),
        None => (None, None),
    };
    ToolOutcome(Box::new(Parts {
        call_id,
        name,
        result,
        value,
        typed,
        error,
        call_card,
        result_card,
        warnings,
        nested: Vec::new(),
        approval: None,
    }))
}
