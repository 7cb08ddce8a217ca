//! The async side of a run: starts the engine thread, runs the nested calls
//! it submits on a tokio task set, and watches the cancellation token.

use std::any::Any;
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll, Waker};
use std::time::Instant;

use serde_json::Value as Json;
use tokio::sync::mpsc::unbounded_channel;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use crate::sandbox::engine::{self, Job};
use crate::sandbox::schedule::Schedule;
use crate::sandbox::{ErrorKind, Host, HostError, HostFuture, Limits, RunError, RunOutcome, codes};

/// From the engine thread to the async side.
pub(crate) enum ToHost {
    /// The program submitted a nested call.
    Call { id: u64, name: String, args: Json },
    /// The run is over and its runtime freed.
    Done(Box<RunOutcome>),
}

/// From the async side to the engine thread.
pub(crate) enum ToEngine {
    /// A nested call finished.
    Reply {
        id: u64,
        result: Result<Json, HostError>,
    },
    /// Look at the abort flag.
    Wake,
}

/// Runs `program`, the body of an async function, in a fresh QuickJS
/// runtime, with `host` behind the program's `tools` global.
///
/// The JavaScript runs on its own OS thread, so this future never blocks
/// the tokio worker polling it; it must be polled inside a tokio runtime
/// (multi-thread or current-thread), which also runs the host's futures.
/// Cancelling `cancel` ends the run with `ABORTED`, promptly even inside
/// `while (true) {}`, and cancels the token of every running nested call.
/// When this returns, no nested call is running or will start: calls still
/// running when the run ends have their tokens cancelled and are awaited
/// for up to [`Limits::cancel_grace`], then their futures are dropped;
/// queued calls never start. If this future is
/// dropped instead, the engine thread is told to abort and the running
/// calls' tasks are aborted.
///
/// Every failure is a [`RunError`] in the outcome; nothing here panics.
pub async fn run(
    program: &str,
    limits: &Limits,
    host: Arc<dyn Host>,
    cancel: CancellationToken,
) -> RunOutcome {
    let started = Instant::now();
    let abort = Arc::new(AtomicBool::new(false));
    let (to_host, mut from_engine) = unbounded_channel();
    let (to_engine, from_host) = std::sync::mpsc::channel();
    let job = Job {
        program: program.to_owned(),
        limits: limits.clone(),
        abort: abort.clone(),
        to_host,
        from_host,
    };
    if let Err(e) = engine::spawn(job) {
        return engine::failed(
            RunError::new(
                ErrorKind::Internal,
                format!("could not start the sandbox thread: {e}"),
            ),
            started,
        );
    }
    let _guard = AbortOnDrop {
        abort: abort.clone(),
        to_engine: to_engine.clone(),
    };
    let calls_cancel = cancel.child_token();
    let mut schedule = Schedule::new(limits.max_concurrent);
    let mut running: JoinSet<(u64, Result<Json, HostError>)> = JoinSet::new();
    let mut aborted = false;
    let outcome = loop {
        tokio::select! {
            biased;
            () = cancel.cancelled(), if !aborted => {
                aborted = true;
                abort.store(true, Ordering::Release);
                schedule.clear();
                let _ = to_engine.send(ToEngine::Wake);
            }
            Some(joined) = running.join_next(), if !running.is_empty() => {
                schedule.finished();
                // A join error is an aborted task; panics are caught inside.
                if let Ok((id, result)) = joined {
                    let _ = to_engine.send(ToEngine::Reply { id, result });
                }
                if !aborted {
                    start_ready(&mut schedule, &mut running, &host, &calls_cancel, &to_engine);
                }
            }
            message = from_engine.recv() => match message {
                Some(ToHost::Call { id, name, args }) => {
                    if aborted {
                        continue;
                    }
                    let concurrent = catch_unwind(AssertUnwindSafe(|| host.concurrent(&name)))
                        .unwrap_or(false);
                    schedule.push(concurrent, (id, name, args));
                    start_ready(&mut schedule, &mut running, &host, &calls_cancel, &to_engine);
                }
                Some(ToHost::Done(outcome)) => break *outcome,
                None => break engine::failed(
                    RunError::new(ErrorKind::Internal, "the sandbox thread ended without an outcome"),
                    started,
                ),
            }
        }
    };
    // Nothing may still run once the run is over: cancel the running calls,
    // give them `cancel_grace` to finish, then drop what is left.
    calls_cancel.cancel();
    if !running.is_empty() {
        let mut grace = timer(limits.cancel_grace);
        loop {
            tokio::select! {
                joined = running.join_next() => if joined.is_none() { break },
                _ = &mut grace => {
                    running.abort_all();
                    while running.join_next().await.is_some() {}
                    break;
                }
            }
        }
    }
    outcome
}

/// Fires after `after`, from a short-lived thread: the run needs no tokio
/// timer (so any tokio runtime can poll it). Fires at once if the thread
/// cannot be had.
fn timer(after: std::time::Duration) -> tokio::sync::oneshot::Receiver<()> {
    let (fire, fired) = tokio::sync::oneshot::channel();
    let spawned = std::thread::Builder::new()
        .name("toolprism-grace".to_owned())
        .stack_size(64 << 10)
        .spawn(move || {
            std::thread::sleep(after);
            let _ = fire.send(());
        });
    if let Err(e) = spawned {
        // `fire` went with the closure: the receiver sees it dropped.
        drop(e);
    }
    fired
}

/// Starts every queued call the schedule admits now.
///
/// Each future is polled once right here: a host that answers at once (a
/// cache, a pure function) then costs no task and no wake-up. A future
/// still pending goes to the task set, whose task polls it again (so it
/// registers that task's waker, as the `Future` contract requires of the
/// latest poll).
fn start_ready(
    schedule: &mut Schedule<(u64, String, Json)>,
    running: &mut JoinSet<(u64, Result<Json, HostError>)>,
    host: &Arc<dyn Host>,
    cancel: &CancellationToken,
    to_engine: &std::sync::mpsc::Sender<ToEngine>,
) {
    while let Some((_, (id, name, args))) = schedule.next() {
        let token = cancel.child_token();
        let called = catch_unwind(AssertUnwindSafe(|| host.call(name.clone(), args, token)));
        let mut future = match called {
            Ok(future) => CatchUnwind(future),
            Err(panic) => {
                let _ = to_engine.send(ToEngine::Reply {
                    id,
                    result: Err(panicked(&name, panic.as_ref())),
                });
                schedule.finished();
                continue;
            }
        };
        let mut cx = Context::from_waker(Waker::noop());
        match Pin::new(&mut future).poll(&mut cx) {
            Poll::Ready(result) => {
                let result = result.unwrap_or_else(|panic| Err(panicked(&name, panic.as_ref())));
                let _ = to_engine.send(ToEngine::Reply { id, result });
                schedule.finished();
            }
            Poll::Pending => {
                running.spawn(async move {
                    let result = future
                        .await
                        .unwrap_or_else(|panic| Err(panicked(&name, panic.as_ref())));
                    (id, result)
                });
            }
        }
    }
}

fn panicked(name: &str, panic: &(dyn Any + Send)) -> HostError {
    let detail = panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "no message".to_owned());
    HostError::new(
        codes::HOST_PANIC,
        format!("tools.{name} failed inside the host (it panicked: {detail})"),
    )
}

/// Polls a host future, turning a panic into an `Err`.
struct CatchUnwind(HostFuture);

impl Future for CatchUnwind {
    type Output = Result<Result<Json, HostError>, Box<dyn Any + Send>>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match catch_unwind(AssertUnwindSafe(|| self.0.as_mut().poll(cx))) {
            Ok(Poll::Pending) => Poll::Pending,
            Ok(Poll::Ready(result)) => Poll::Ready(Ok(result)),
            Err(panic) => Poll::Ready(Err(panic)),
        }
    }
}

/// Tells the engine thread to stop if the run future is dropped early.
struct AbortOnDrop {
    abort: Arc<AtomicBool>,
    to_engine: std::sync::mpsc::Sender<ToEngine>,
}

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.abort.store(true, Ordering::Release);
        let _ = self.to_engine.send(ToEngine::Wake);
    }
}
