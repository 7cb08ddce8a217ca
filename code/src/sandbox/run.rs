//! The async side of a run: starts the engine thread and waits for its
//! outcome.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use tokio::runtime::Handle;
use tokio_util::sync::CancellationToken;

use crate::sandbox::engine::signal::Signal;
use crate::sandbox::engine::{self, Job};
use crate::sandbox::{ErrorKind, Host, Limits, RunError, RunOutcome};

/// Runs `program`, the body of an async function, in a fresh QuickJS
/// runtime and context, with `host` behind the program's `tools` global.
///
/// The JavaScript runs on an engine thread of its own, which also calls the
/// host and polls the host's futures: a nested call costs no thread hop, and
/// this future never blocks the tokio worker polling it (it only waits for
/// the engine's outcome). Engine threads are kept between runs (a few, for
/// a few seconds) and make the runtime of their next run while they wait,
/// so a run rarely waits for the engine's set-up; no runtime, context or
/// JavaScript value serves two runs.
///
/// It must be called inside a tokio runtime: the engine thread enters that
/// runtime ([`Handle::current`]), so host futures can use its timers,
/// `tokio::spawn`, `spawn_blocking` and I/O as they could in a task. Those
/// are driven by the runtime's own threads, which holds on a multi-thread
/// runtime, and on a current-thread runtime while its `block_on` runs (as
/// it does while the caller awaits this future there); on a current-thread
/// runtime nobody drives, such a host future does not progress until the
/// run's wall limit. A host future that needs nothing from the runtime
/// (it answers at once, or it is woken by another thread) works either way.
///
/// Cancelling `cancel` ends the run with `ABORTED`, promptly even inside
/// `while (true) {}`, and cancels the token of every running nested call.
/// When this returns, no nested call is running or will start: calls still
/// running when the run ends have their tokens cancelled and are polled
/// for up to [`Limits::cancel_grace`], then their futures are dropped;
/// queued calls never start. If this future is dropped instead, the engine
/// thread is told to abort, the running calls' tokens are cancelled, and the
/// engine ends the run the same way on its own.
///
/// Every failure is a [`RunError`] in the outcome; nothing here panics.
pub async fn run(
    program: &str,
    limits: &Limits,
    host: Arc<dyn Host>,
    cancel: CancellationToken,
) -> RunOutcome {
    let started = Instant::now();
    let Ok(runtime) = Handle::try_current() else {
        return engine::failed(
            RunError::new(
                ErrorKind::Internal,
                "run must be called inside a tokio runtime (the host's futures need one)",
            ),
            started,
        );
    };
    let abort = Arc::new(AtomicBool::new(false));
    let signal = Arc::new(Signal::default());
    let calls_cancel = cancel.child_token();
    let (done, outcome) = tokio::sync::oneshot::channel();
    let job = Job {
        program: program.to_owned(),
        limits: limits.clone(),
        abort: abort.clone(),
        signal: signal.clone(),
        host,
        cancel: calls_cancel.clone(),
        runtime,
    };
    if let Err(e) = engine::spawn(job, done) {
        return engine::failed(
            RunError::new(
                ErrorKind::Internal,
                format!("could not start the sandbox thread: {e}"),
            ),
            started,
        );
    }
    // The engine watches `cancel` itself (through `calls_cancel`, its
    // child); this side only waits.
    let mut guard = AbortOnDrop {
        abort,
        signal,
        calls: calls_cancel,
        armed: true,
    };
    let outcome = outcome.await;
    // The run is over: nothing to stop, and no wake-up for the engine
    // thread, which may be serving another run already.
    guard.armed = outcome.is_err();
    outcome.unwrap_or_else(|_| {
        engine::failed(
            RunError::new(
                ErrorKind::Internal,
                "the sandbox thread ended without an outcome",
            ),
            started,
        )
    })
}

/// Tells the engine thread to stop if the run future is dropped before the
/// outcome came.
struct AbortOnDrop {
    abort: Arc<AtomicBool>,
    signal: Arc<Signal>,
    calls: CancellationToken,
    armed: bool,
}

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        if self.armed {
            self.abort.store(true, Ordering::Release);
            self.calls.cancel();
            self.signal.notify();
        }
    }
}
