//! The engine thread: a fresh QuickJS runtime and context per run, the
//! program's event loop, the nested calls' host futures, and the limits.
//! Threads are kept between runs ([`pool`]); a runtime serves one run.
//!
//! The thread owns everything JavaScript and polls every host future
//! itself ([`calls`]), inside the caller's tokio runtime (it has entered
//! the runtime's handle for the run). Its event loop runs the program's
//! pending jobs, polls the host futures whose wakers fired, settles the
//! promises of the calls that finished, and when nothing can run parks
//! until a waker (or the caller's cancellation) unparks it, or until the
//! wall deadline; the parked time is not compute. The async side of
//! [`run`](crate::sandbox::run) only waits for the outcome, sent once no
//! host future is left; the run's runtime is freed right after.

mod calls;
pub(crate) mod format;
mod globals;
pub(crate) mod kit;
pub(crate) mod meter;
mod natives;
mod pool;
pub(crate) mod signal;
pub(crate) mod text;
pub(crate) mod thrown;

use std::cell::{Cell, RefCell};
use std::collections::{HashMap, VecDeque};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use rquickjs::context::{EvalOptions, intrinsic};
use rquickjs::{Context, Ctx, Function, Object, Persistent, Promise, Runtime, Value};
use serde_json::Value as Json;
use tokio_util::sync::CancellationToken;

use self::calls::{Answer, Calls};
use self::kit::Kit;
use self::meter::{Meter, Stop};
use self::signal::{CancelWatch, Signal};
use self::thrown::{PROGRAM_FILE, SourceMap};
use crate::sandbox::codes as code;
use crate::sandbox::convert::{drop_deep, from_json, to_json};
use crate::sandbox::{
    ErrorKind, Host, HostError, Limits, MAX_STACK_BYTES, MESSAGE_CAP, MESSAGE_FLOOR, RunError,
    RunOutcome,
};

/// The program is the body of this async function.
const PREFIX: &str = "(async function __toolprism_program__() {";
const SUFFIX: &str = "\n})";
/// Native stack beyond the JavaScript stack cap, for the engine's own
/// frames and C code that does not check the cap.
pub(crate) const STACK_MARGIN: usize = 2 << 20;

/// The intrinsics a context gets: the language, JSON, RegExp, Proxy,
/// Map/Set, typed arrays, Promise and Date. Left out: `performance`
/// (a clock), WeakRef and FinalizationRegistry (garbage-collection timing
/// would become observable) and DOMException.
type Intrinsics = (
    intrinsic::Date,
    intrinsic::Eval,
    intrinsic::RegExpCompiler,
    intrinsic::RegExp,
    intrinsic::Json,
    intrinsic::Proxy,
    intrinsic::MapSet,
    intrinsic::TypedArrays,
    intrinsic::Promise,
);

/// A nested call the program is awaiting (running or queued; a call
/// answered on its first poll never becomes one).
pub(crate) struct Pending {
    resolve: Persistent<Function<'static>>,
    reject: Persistent<Function<'static>>,
    /// The `ToolCallError` made at the call site, rejected with on failure.
    site: Persistent<Object<'static>>,
    name: Rc<str>,
}

/// State shared by the event loop, the native functions and the interrupt
/// handler.
pub(crate) struct Session {
    limits: Limits,
    meter: Rc<Meter>,
    kit: RefCell<Kit>,
    /// Wakes this thread: host-future wakers, the caller's cancellation.
    signal: Arc<Signal>,
    /// The host futures in flight and the queue. Never borrowed while
    /// program code runs.
    nested: RefCell<Calls>,
    /// Answers of calls that finished, not yet delivered to the program.
    completed: RefCell<VecDeque<(u64, Answer)>>,
    /// The run's calls token (cancelled with the caller's token).
    cancel: CancellationToken,
    pending: RefCell<HashMap<u64, Pending>>,
    /// Tool names read so far, by the id each tool's function is bound to.
    names: RefCell<Vec<natives::ToolName>>,
    next_id: Cell<u64>,
    calls: Cell<usize>,
    logs: RefCell<Vec<String>>,
    /// Bytes charged to the output ledger.
    output: Cell<usize>,
    /// Results already handed to the program as JavaScript values, dropped
    /// when the engine next waits (at most [`SET_ASIDE`] are kept).
    spent: RefCell<Vec<Json>>,
}

/// The most results [`Session::set_aside`] keeps before dropping them.
const SET_ASIDE: usize = 4;

impl Session {
    /// Runs host code (`Host::call`, `Host::concurrent`, polls): its time
    /// is not compute.
    fn host_work<T>(&self, work: impl FnOnce() -> T) -> T {
        self.meter.pause();
        let out = work();
        self.meter.resume();
        out
    }

    /// Polls the host futures whose wakers fired; their answers go to
    /// `completed`. Skipped if program code is inside a host call (never,
    /// in practice: host code cannot run JavaScript).
    fn poll_nested(&self) {
        let (Ok(mut nested), Ok(mut completed)) = (
            self.nested.try_borrow_mut(),
            self.completed.try_borrow_mut(),
        ) else {
            return;
        };
        self.host_work(|| nested.poll(&mut completed));
    }

    /// Whether the caller cancelled the run (or dropped it); if so the run
    /// stops. Checked before a call's answer reaches the program: a host
    /// future that ended because its token was cancelled must not make the
    /// program's outcome anything but `ABORTED` (the calls' tokens are all
    /// marked cancelled before any of their wakers runs).
    fn cancelled(&self) -> bool {
        if self.cancel.is_cancelled() {
            self.meter.stop(Stop::Aborted);
            return true;
        }
        false
    }

    /// QuickJS's interrupt handler: the limits, and, while the program
    /// computes, the host futures that woke (so a call's next step, or the
    /// start of a queued call, does not wait for the program to pause).
    fn interrupt(&self) -> bool {
        if self.meter.check() {
            return true;
        }
        if self.signal.is_set() {
            self.poll_nested();
        }
        false
    }

    /// Room for an error message: what the ledger has left, within
    /// [`MESSAGE_FLOOR`] and [`MESSAGE_CAP`].
    fn message_room(&self) -> usize {
        self.limits
            .output_bytes
            .saturating_sub(self.output.get())
            .clamp(MESSAGE_FLOOR, MESSAGE_CAP)
    }

    /// Keeps a result the program has as a JavaScript value until the engine
    /// next waits: dropping it is work off the path from one call to the
    /// next.
    fn set_aside(&self, value: Json) {
        let mut spent = self.spent.borrow_mut();
        if spent.len() >= SET_ASIDE {
            spent.clear();
        }
        spent.push(value);
    }

    /// Drops every JavaScript value held outside the heap; must run before
    /// the context and runtime are freed.
    fn release(&self) {
        self.spent.borrow_mut().clear();
        self.pending.borrow_mut().clear();
        self.kit.borrow_mut().clear();
    }
}

/// What the engine thread is given.
pub(crate) struct Job {
    pub(crate) program: String,
    pub(crate) limits: Limits,
    /// Set when the caller cancels the run (the engine's own watch on
    /// `cancel`) or drops it (the run's guard).
    pub(crate) abort: Arc<AtomicBool>,
    /// Wakes the engine thread; the thread binds it to itself.
    pub(crate) signal: Arc<Signal>,
    pub(crate) host: Arc<dyn Host>,
    /// The parent of every nested call's token (a child of the caller's).
    pub(crate) cancel: CancellationToken,
    /// The caller's tokio runtime, entered by the engine thread.
    pub(crate) runtime: tokio::runtime::Handle,
}

/// Starts `job` on an engine thread (one kept from an earlier run if one is
/// idle, see [`pool`]); the thread sends the outcome on `done` when the run
/// is over and no host future is left.
pub(crate) fn spawn(
    job: Job,
    done: tokio::sync::oneshot::Sender<RunOutcome>,
) -> std::io::Result<()> {
    pool::submit(job, done)
}

/// A fresh QuickJS runtime and context with the sandbox's globals
/// installed, made before the run it will serve is known: no program code
/// has run in it, and it serves exactly one run, then is freed. An engine
/// thread makes the next one while it waits for its next run, so a run
/// does not wait for the engine's own set-up (see [`pool`]).
pub(crate) struct Prepared {
    // Dropped in this order: the values held outside the heap before the
    // context, the context before the runtime (freeing a runtime with a
    // value still held is a use after free).
    kit: Kit,
    slot: Rc<Slot>,
    ctx: Context,
    rt: Runtime,
}

impl std::fmt::Debug for Prepared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Prepared").finish_non_exhaustive()
    }
}

/// Where the natives of a context find the run it serves: empty while the
/// context waits for its run, the run's session while it runs.
#[derive(Default)]
pub(crate) struct Slot(RefCell<Option<Rc<Session>>>);

impl Slot {
    /// The session of the run (there is one whenever JavaScript runs).
    pub(crate) fn session(&self) -> rquickjs::Result<Rc<Session>> {
        self.0.borrow().clone().ok_or(rquickjs::Error::Unknown)
    }
}

/// Makes a runtime and context for a run, on this thread (so QuickJS
/// measures the stack from here), with no limit set yet: those of the run
/// are set when it starts.
pub(crate) fn prepare() -> rquickjs::Result<Prepared> {
    let rt = Runtime::new()?;
    let ctx = Context::custom::<Intrinsics>(&rt)?;
    let slot = Rc::new(Slot::default());
    let kit = ctx.with(|ctx| globals::install(&ctx, &slot))?;
    Ok(Prepared { kit, slot, ctx, rt })
}

/// Serves one run on this engine thread, in `prepared` (or in a runtime
/// and context made now). The outcome is sent on `done` once no host
/// future is left, right after `listed` runs (the pool lists the thread
/// idle there); the run's runtime is freed after, while the caller reads
/// the outcome.
pub(crate) fn serve(
    prepared: Option<Prepared>,
    job: Job,
    done: tokio::sync::oneshot::Sender<RunOutcome>,
    listed: impl FnOnce(),
) {
    job.signal.bind();
    // Host futures are polled here: they find the caller's runtime
    // (timers, spawn, spawn_blocking, I/O) as inside a task.
    let runtime = job.runtime.clone();
    let _entered = runtime.enter();
    let started = Instant::now();
    let (outcome, leftover) = catch_unwind(AssertUnwindSafe(|| execute(prepared, &job)))
        .unwrap_or_else(|_| {
            let error = RunError::new(ErrorKind::Internal, "the sandbox engine panicked");
            (failed(error, started), None)
        });
    listed();
    // The caller's host goes before the outcome, like the session's (a
    // panic in its destructor must not keep the outcome from the caller).
    let _ = catch_unwind(AssertUnwindSafe(|| drop(job)));
    let _ = done.send(outcome);
    if let Some(leftover) = leftover {
        // A panic in a destructor must not end the thread.
        let _ = catch_unwind(AssertUnwindSafe(|| leftover.free()));
    }
}

/// An outcome for a run that failed before it could start.
pub(crate) fn failed(error: RunError, started: Instant) -> RunOutcome {
    RunOutcome {
        logs: Vec::new(),
        result: Err(error),
        calls: 0,
        compute: Duration::ZERO,
        wall: started.elapsed(),
        output_bytes: 0,
    }
}

/// What a run leaves to free once its outcome is sent: its runtime and
/// context. Nothing of the caller's is in it: the run's session (its host,
/// and through the host the call's span, log and client) is let go before
/// the outcome is sent, so the call is over for its caller when the outcome
/// arrives (its span ends with it).
struct Leftover {
    // Dropped in this order if `free` does not run to its end.
    slot: Rc<Slot>,
    ctx: Context,
    rt: Runtime,
}

impl Leftover {
    /// Lets go of `session` (its values held outside the heap first, then
    /// the interrupt handler's and the slot's references) and keeps what is
    /// left to free.
    fn detach(session: Rc<Session>, slot: Rc<Slot>, ctx: Context, rt: Runtime) -> Self {
        slot.0.borrow_mut().take();
        session.release();
        rt.set_interrupt_handler(None);
        drop(session);
        Leftover { slot, ctx, rt }
    }

    /// Frees the context and the runtime.
    fn free(self) {
        let Leftover { slot, ctx, rt } = self;
        drop(ctx);
        drop(slot);
        drop(rt);
    }
}

fn execute(prepared: Option<Prepared>, job: &Job) -> (RunOutcome, Option<Leftover>) {
    let started = Instant::now();
    let meter = Rc::new(Meter::new(
        job.limits.compute,
        started + job.limits.wall,
        job.abort.clone(),
    ));
    meter.resume();
    let prepared = match prepared.map_or_else(prepare, Ok) {
        Ok(prepared) => prepared,
        Err(e) => {
            let error = RunError::new(
                ErrorKind::Internal,
                format!("could not create the JavaScript runtime: {e}"),
            );
            return (failed(error, started), None);
        }
    };
    // On an unwind, bindings drop last first: the kit before the runtime.
    let Prepared { rt, ctx, slot, kit } = prepared;
    rt.set_memory_limit(job.limits.memory_bytes);
    rt.set_max_stack_size(job.limits.stack_bytes.min(MAX_STACK_BYTES));
    let session = Rc::new(Session {
        limits: job.limits.clone(),
        meter: meter.clone(),
        kit: RefCell::new(kit),
        signal: job.signal.clone(),
        nested: RefCell::new(Calls::new(
            job.host.clone(),
            job.cancel.clone(),
            job.signal.clone(),
            job.limits.max_concurrent,
        )),
        completed: RefCell::new(VecDeque::new()),
        cancel: job.cancel.clone(),
        pending: RefCell::new(HashMap::new()),
        names: RefCell::new(Vec::new()),
        next_id: Cell::new(0),
        calls: Cell::new(0),
        logs: RefCell::new(Vec::new()),
        output: Cell::new(0),
        spent: RefCell::new(Vec::new()),
    });
    *slot.0.borrow_mut() = Some(session.clone());
    let handler_session = session.clone();
    rt.set_interrupt_handler(Some(Box::new(move || handler_session.interrupt())));
    let watch = CancelWatch::new(job.cancel.clone(), job.abort.clone(), job.signal.clone());

    let result = drive(&rt, &ctx, &session, job);
    drop(watch);

    // No call starts any more, and the running ones are told to stop.
    session.nested.borrow_mut().shutdown();
    meter.pause();
    let outcome = RunOutcome {
        logs: session.logs.take(),
        result,
        calls: session.calls.get(),
        compute: meter.spent(),
        wall: started.elapsed(),
        output_bytes: session.output.get(),
    };
    // Running calls get the grace to end cleanly; then they are dropped.
    session.completed.borrow_mut().clear();
    session.nested.borrow_mut().drain(job.limits.cancel_grace);
    (outcome, Some(Leftover::detach(session, slot, ctx, rt)))
}

/// Everything the event loop needs about the program's source.
struct Source<'a> {
    text: &'a str,
    map: SourceMap,
}

fn drive(
    rt: &Runtime,
    ctx: &Context,
    session: &Rc<Session>,
    job: &Job,
) -> Result<Option<Json>, RunError> {
    let source = Source {
        text: &job.program,
        map: SourceMap {
            prefix: PREFIX.len() as u32,
            lines: job.program.lines().count().max(1) as u32,
        },
    };
    let main = ctx.with(|ctx| start(&ctx, session, &source))?;
    loop {
        // Run every queued job (promise reactions: the program's code).
        loop {
            if session.meter.check() {
                break;
            }
            match rt.execute_pending_job() {
                Ok(true) => {}
                Ok(false) => break,
                Err(job_error) => {
                    return Err(job_error
                        .0
                        .with(|ctx| failure(&ctx, session, &source, false)));
                }
            }
        }
        if let Some(stop) = session.meter.stopped() {
            return Err(stopped(session, stop));
        }
        if let Some(result) = ctx.with(|ctx| settled(&ctx, session, &main, &source)) {
            return result;
        }
        // The host futures that woke; deliver what finished.
        session.poll_nested();
        if !session.completed.borrow().is_empty() && session.cancelled() {
            continue;
        }
        if ctx.with(|ctx| deliver_completed(&ctx, session)) {
            continue;
        }
        if session.pending.borrow().is_empty() {
            return Err(RunError::new(
                ErrorKind::Stalled,
                "the program is awaiting a promise that nothing can settle: no tool call is \
                 pending and there are no timers or events in the sandbox (a `new Promise` \
                 whose resolve is never called?)",
            ));
        }
        // Park until a host future (or the caller) wakes this thread; this
        // is not compute. The values set aside are dropped first, while the
        // host works on the calls the program is waiting for.
        session.meter.pause();
        session.spent.borrow_mut().clear();
        let woken = session.signal.wait_until(session.meter.deadline());
        session.meter.resume();
        if !woken {
            session.meter.stop(Stop::Wall);
        }
    }
}

/// Settles the promises of the calls in `completed`; `true` if there were
/// any. No borrow is held while a promise settles: that can run program
/// code (an `Object.prototype.then` getter), which can make calls.
fn deliver_completed(ctx: &Ctx<'_>, session: &Session) -> bool {
    let mut any = false;
    loop {
        let next = session.completed.borrow_mut().pop_front();
        let Some((id, answer)) = next else {
            return any;
        };
        any = true;
        settle(ctx, session, id, answer);
    }
}

/// Compiles the program and starts it; returns its promise.
fn start<'js>(
    ctx: &Ctx<'js>,
    session: &Rc<Session>,
    source: &Source<'_>,
) -> Result<Persistent<Promise<'static>>, RunError> {
    let mut options = EvalOptions::default();
    options.filename = Some(PROGRAM_FILE.to_owned());
    options.strict = true;
    let wrapped = format!("{PREFIX}{}{SUFFIX}", source.text);
    let function: Value = ctx
        .eval_with_options(wrapped, options)
        .map_err(|_| failure(ctx, session, source, true))?;
    let broken_out = || {
        RunError::new(
            ErrorKind::Syntax,
            "the program closes the function it is the body of (an extra `}` or `)`?)",
        )
    };
    let Some(function) = function.into_function() else {
        return Err(broken_out());
    };
    let promise: Value = function
        .call(())
        .map_err(|_| failure(ctx, session, source, false))?;
    // Only the wrapper (an async function) returns a promise here.
    match promise.into_promise() {
        Some(promise) => Ok(Persistent::save(ctx, promise)),
        None => Err(broken_out()),
    }
}

/// The run's error for the pending exception (or the stop reason).
fn failure(ctx: &Ctx<'_>, session: &Session, source: &Source<'_>, compiling: bool) -> RunError {
    let exception = ctx.catch();
    if let Some(stop) = session.meter.stopped() {
        return stopped(session, stop);
    }
    let kit = session.kit.borrow();
    thrown::diagnose(
        ctx,
        &kit,
        exception,
        source.map,
        source.text,
        compiling,
        session.message_room(),
    )
}

/// The error of a run stopped by a limit or the caller.
///
/// It carries no location: QuickJS does not record the position of the
/// instruction an interrupt stops (a loop's back edge shows the function's
/// first line), so any location would mislead.
fn stopped(session: &Session, stop: Stop) -> RunError {
    let limits = &session.limits;
    let message = match stop {
        Stop::Compute => format!(
            "the program ran for more than {:?} of interpreter time (Limits::compute; time \
             waiting for tools does not count): do less work per run, or stop a loop earlier",
            limits.compute
        ),
        Stop::Wall => format!(
            "the run took longer than {:?} (Limits::wall), waiting for tools included",
            limits.wall
        ),
        Stop::Aborted => "the run was cancelled by its caller".to_owned(),
        Stop::Calls => format!(
            "the program made more than {} nested tool calls (Limits::max_calls): the call \
             after the last allowed one ended the run; batch the work into fewer calls",
            limits.max_calls
        ),
        Stop::Output => format!(
            "the output passed {} bytes (Limits::output_bytes: logs plus the returned value); \
             logs are kept up to that point: log less, or return a smaller value",
            limits.output_bytes
        ),
    };
    RunError::new(stop.kind(), message)
}

/// The run's result once the program's promise has settled.
fn settled(
    ctx: &Ctx<'_>,
    session: &Session,
    main: &Persistent<Promise<'static>>,
    source: &Source<'_>,
) -> Option<Result<Option<Json>, RunError>> {
    let promise = main.clone().restore(ctx).ok()?;
    match promise.result::<Value>()? {
        Err(_) => Some(Err(failure(ctx, session, source, false))),
        Ok(value) if value.is_undefined() => Some(Ok(None)),
        Ok(value) => Some(returned(ctx, session, value).map(Some)),
    }
}

/// The returned value as JSON, charged to the output ledger.
fn returned<'js>(ctx: &Ctx<'js>, session: &Session, value: Value<'js>) -> Result<Json, RunError> {
    let limits = &session.limits;
    let room = limits.output_bytes.saturating_sub(session.output.get());
    let too_large = |bytes: Option<usize>| {
        let size = bytes.map_or_else(|| "more".to_owned(), |b| b.to_string());
        RunError::new(
            ErrorKind::Output,
            format!(
                "the returned value is {size} bytes of JSON, over the {room} bytes the output \
                 has left (Limits::output_bytes = {}, logs took {}): return less, e.g. a \
                 summary or the first items",
                limits.output_bytes,
                session.output.get()
            ),
        )
    };
    let kit = session.kit.borrow();
    let json = match to_json::to_json(ctx, &kit, value, "result", room) {
        Ok(json) => json,
        Err(to_json::ToJsonError::Refused(why)) => {
            let mut message = format!("the returned value is not lossless JSON: {why}");
            crate::sandbox::outcome::truncate_message(&mut message, session.message_room());
            return Err(RunError::new(ErrorKind::InvalidResult, message));
        }
        Err(to_json::ToJsonError::TooLarge) => return Err(too_large(None)),
        Err(to_json::ToJsonError::Interrupted(_)) => {
            let stop = session.meter.stopped().unwrap_or(Stop::Aborted);
            return Err(stopped(session, stop));
        }
    };
    let bytes = json_len(&json);
    if bytes > room {
        return Err(too_large(Some(bytes)));
    }
    session.output.set(session.output.get() + bytes);
    Ok(json)
}

/// Bytes of `value` written as compact JSON.
fn json_len(value: &Json) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    let _ = serde_json::to_writer(&mut count, value);
    count.0
}

/// Resolves or rejects the promise of pending call `id`.
fn settle(ctx: &Ctx<'_>, session: &Session, id: u64, answer: Answer) {
    let Some(pending) = session.pending.borrow_mut().remove(&id) else {
        return;
    };
    let (Ok(resolve), Ok(reject), Ok(site)) = (
        pending.resolve.restore(ctx),
        pending.reject.restore(ctx),
        pending.site.restore(ctx),
    ) else {
        return;
    };
    let result = answer.into_result(&pending.name);
    deliver(
        ctx,
        session,
        &pending.name,
        &resolve,
        &reject,
        Some(site),
        result,
    );
}

/// Resolves a call's promise with its result as a JavaScript value, or
/// rejects it with the call's `ToolCallError`: `site`, filled in, or if
/// there is none (the call was answered while the program's frame is still
/// on the stack) one made now.
pub(crate) fn deliver<'js>(
    ctx: &Ctx<'js>,
    session: &Session,
    name: &str,
    resolve: &Function<'js>,
    reject: &Function<'js>,
    site: Option<Object<'js>>,
    result: Result<Json, HostError>,
) {
    let kit = session.kit.borrow();
    let failure = match result {
        Ok(json) => match from_json::check(&json, "result") {
            Err(why) => {
                drop_deep(json);
                Some((
                    code::NOT_REPRESENTABLE.to_owned(),
                    format!("tools.{name} returned a value JavaScript cannot hold exactly: {why}"),
                ))
            }
            Ok(()) => match from_json::build(ctx, &json) {
                Ok(value) => {
                    if resolve.call::<_, ()>((value,)).is_err() {
                        let _ = ctx.catch();
                    }
                    session.set_aside(json);
                    None
                }
                Err(_) => {
                    let exception = ctx.catch();
                    if exception.is_uncatchable_error() {
                        return;
                    }
                    Some((
                        code::RESULT_TOO_LARGE.to_owned(),
                        format!(
                            "tools.{name} returned a value too large for the sandbox heap \
                             (Limits::memory_bytes = {}): ask for less, e.g. a page of it",
                            session.limits.memory_bytes
                        ),
                    ))
                }
            },
        },
        Err(HostError { code, message }) => Some((code, message)),
    };
    if let Some((code, message)) = failure {
        let site = match site {
            Some(site) => Some(site),
            None => natives::call_site(ctx, &kit).ok(),
        };
        let rejected = site
            .filter(|site| natives::fill(ctx, site, name, &code, &message).is_ok())
            .and_then(|site| reject.call::<_, ()>((site,)).ok());
        if rejected.is_none() {
            let _ = ctx.catch();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::engine::thrown::PROGRAM_FUNCTION;

    #[test]
    fn the_wrapper_names_the_program_function() {
        assert!(PREFIX.contains(PROGRAM_FUNCTION));
    }
}
