//! The nested calls of a run, driven on the engine thread itself: the
//! queue, the host futures in flight, and their wakers.
//!
//! A call the [`Schedule`] admits is started with [`Host::call`] and polled
//! at once, on this thread. A future that is ready on that first poll costs
//! nothing more: no task, no channel, no thread hop. One still pending takes
//! a slot; each slot has a waker of its own, made once and reused by every
//! call that takes the slot, which marks the slot ready and wakes the engine
//! thread ([`Signal`]). The engine polls the ready slots when it is idle
//! (and from the interrupt handler while the program computes), so a host
//! future is only ever polled here, never on a tokio worker.
//!
//! The engine thread has entered the caller's tokio runtime, so host futures
//! can use its timers, `tokio::spawn`, `spawn_blocking` and I/O; the
//! runtime's own threads drive those and wake the slot's waker.

use std::any::Any;
use std::collections::VecDeque;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll, Wake, Waker};
use std::time::{Duration, Instant};

use serde_json::Value as Json;
use tokio_util::sync::CancellationToken;

use super::signal::Signal;
use crate::sandbox::schedule::Schedule;
use crate::sandbox::{Host, HostError, HostFuture, codes};

/// What a nested call came to.
#[derive(Debug)]
pub(crate) enum Answer {
    /// The host's result.
    Returned(Result<Json, HostError>),
    /// `Host::call` or a poll of its future panicked, with this message.
    Panicked(String),
}

impl Answer {
    /// The result the program sees; `name` is the tool's.
    pub(crate) fn into_result(self, name: &str) -> Result<Json, HostError> {
        match self {
            Answer::Returned(result) => result,
            Answer::Panicked(detail) => Err(HostError::new(
                codes::HOST_PANIC,
                format!("tools.{name} failed inside the host (it panicked: {detail})"),
            )),
        }
    }
}

/// What became of a call just submitted.
#[derive(Debug)]
pub(crate) enum Submitted {
    /// It started and finished on its first poll.
    Answered(Answer),
    /// It started and its future is pending.
    Running,
    /// It waits for the schedule to admit it.
    Queued,
}

/// A call not started yet.
#[derive(Debug)]
struct Queued {
    id: u64,
    name: String,
    args: Json,
}

/// Marks its slot ready and wakes the engine thread.
#[derive(Debug)]
struct SlotWake {
    ready: AtomicBool,
    signal: Arc<Signal>,
}

impl Wake for SlotWake {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.ready.store(true, Ordering::Release);
        self.signal.notify();
    }
}

/// Room for one future in flight.
struct Slot {
    wake: Arc<SlotWake>,
    /// A waker made from `wake`, once: polls with it never allocate, and a
    /// future that compares wakers (`will_wake`) sees the same one.
    waker: Waker,
    call: Option<(u64, HostFuture)>,
}

/// The nested calls of one run.
pub(crate) struct Calls {
    host: Arc<dyn Host>,
    /// The parent of every call's token: cancelled when the run ends, and a
    /// child of the caller's token.
    cancel: CancellationToken,
    signal: Arc<Signal>,
    schedule: Schedule<Queued>,
    slots: Vec<Slot>,
    /// Indices of the slots with no call.
    free: Vec<usize>,
    /// A child of `cancel` that lives as long as the calls: `cancel`'s list
    /// of children then never empties, so tokio-util does not free it when
    /// a call's token goes and allocate it again for the next call.
    _keep_children: CancellationToken,
}

impl std::fmt::Debug for Calls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Calls")
            .field("running", &self.running())
            .field("schedule", &self.schedule)
            .finish_non_exhaustive()
    }
}

impl Calls {
    /// No calls yet. `cancel` is the run's calls token; `signal` wakes the
    /// engine thread.
    pub(crate) fn new(
        host: Arc<dyn Host>,
        cancel: CancellationToken,
        signal: Arc<Signal>,
        max_concurrent: usize,
    ) -> Self {
        Calls {
            host,
            _keep_children: cancel.child_token(),
            cancel,
            signal,
            schedule: Schedule::new(max_concurrent),
            slots: Vec::new(),
            free: Vec::new(),
        }
    }

    /// What the host says of `name` (a panic counts as "not concurrent").
    pub(crate) fn concurrent(&self, name: &str) -> bool {
        catch_unwind(AssertUnwindSafe(|| self.host.concurrent(name))).unwrap_or(false)
    }

    /// A call the program just made. It starts now if the schedule admits
    /// it (nothing queued before it, room to run), else it is queued.
    pub(crate) fn submit(
        &mut self,
        id: u64,
        name: String,
        args: Json,
        concurrent: bool,
    ) -> Submitted {
        let call = Queued { id, name, args };
        if !self.schedule.admit_now(concurrent) {
            self.schedule.push(concurrent, call);
            return Submitted::Queued;
        }
        match self.start(call) {
            Some(answer) => Submitted::Answered(answer),
            None => Submitted::Running,
        }
    }

    /// Polls every future whose waker fired, then starts what the schedule
    /// admits once they are done; answers go to `done` with their call's
    /// id. Does nothing if nothing woke the engine since the last time.
    pub(crate) fn poll(&mut self, done: &mut VecDeque<(u64, Answer)>) {
        if !self.signal.take() {
            return;
        }
        let mut finished = false;
        for index in 0..self.slots.len() {
            let slot = &mut self.slots[index];
            let Some((_, future)) = slot.call.as_mut() else {
                continue;
            };
            if !slot.wake.ready.swap(false, Ordering::Acquire) {
                continue;
            }
            if let Poll::Ready(answer) = poll_host(future, &slot.waker)
                && let Some((id, future)) = slot.call.take()
            {
                drop_quietly(future);
                self.free.push(index);
                self.schedule.finished();
                done.push_back((id, answer));
                finished = true;
            }
        }
        if finished {
            while let Some((_, call)) = self.schedule.next() {
                let id = call.id;
                if let Some(answer) = self.start(call) {
                    done.push_back((id, answer));
                }
            }
        }
    }

    /// How many futures are in flight.
    pub(crate) fn running(&self) -> usize {
        self.slots.len() - self.free.len()
    }

    /// The run is over: queued calls are dropped without starting, and
    /// every running call's token is cancelled.
    pub(crate) fn shutdown(&mut self) {
        self.schedule.clear();
        self.cancel.cancel();
    }

    /// After [`shutdown`](Self::shutdown): polls the running calls until
    /// they have all finished or `grace` has passed, then drops the rest.
    /// Their answers are discarded.
    pub(crate) fn drain(&mut self, grace: Duration) {
        let deadline = Instant::now() + grace;
        let mut discarded = VecDeque::new();
        while self.running() > 0 {
            self.poll(&mut discarded);
            discarded.clear();
            if self.running() == 0 || !self.signal.wait_until(deadline) {
                break;
            }
        }
        for slot in &mut self.slots {
            if let Some((_, future)) = slot.call.take() {
                drop_quietly(future);
            }
        }
        self.free = (0..self.slots.len()).collect();
    }

    /// Calls the host for an admitted call and polls its future once;
    /// `Some` if it is already done (the schedule then counts it finished).
    fn start(&mut self, call: Queued) -> Option<Answer> {
        let Queued { id, name, args } = call;
        let token = self.cancel.child_token();
        let host = &self.host;
        let mut future = match catch_unwind(AssertUnwindSafe(|| host.call(name, args, token))) {
            Ok(future) => future,
            Err(panic) => {
                self.schedule.finished();
                return Some(Answer::Panicked(panic_message(panic)));
            }
        };
        let index = match self.free.pop() {
            Some(index) => index,
            None => {
                let wake = Arc::new(SlotWake {
                    ready: AtomicBool::new(false),
                    signal: self.signal.clone(),
                });
                self.slots.push(Slot {
                    waker: Waker::from(wake.clone()),
                    wake,
                    call: None,
                });
                self.slots.len() - 1
            }
        };
        let slot = &mut self.slots[index];
        // A wake-up left from the slot's previous call is not this one's.
        slot.wake.ready.store(false, Ordering::Relaxed);
        match poll_host(&mut future, &slot.waker) {
            Poll::Ready(answer) => {
                drop_quietly(future);
                self.free.push(index);
                self.schedule.finished();
                Some(answer)
            }
            Poll::Pending => {
                slot.call = Some((id, future));
                None
            }
        }
    }
}

impl Drop for Calls {
    fn drop(&mut self) {
        // Normally empty (drained); on an engine failure the futures go
        // here, each dropped on its own so one panicking drop spares the rest.
        for slot in &mut self.slots {
            if let Some((_, future)) = slot.call.take() {
                drop_quietly(future);
            }
        }
    }
}

/// One poll of a host future; a panic becomes [`Answer::Panicked`].
fn poll_host(future: &mut HostFuture, waker: &Waker) -> Poll<Answer> {
    let mut cx = Context::from_waker(waker);
    match catch_unwind(AssertUnwindSafe(|| future.as_mut().poll(&mut cx))) {
        Ok(Poll::Pending) => Poll::Pending,
        Ok(Poll::Ready(result)) => Poll::Ready(Answer::Returned(result)),
        Err(panic) => Poll::Ready(Answer::Panicked(panic_message(panic))),
    }
}

/// Drops a host future; a panic in its destructor is swallowed (the engine
/// thread must go on).
fn drop_quietly(future: HostFuture) {
    let _ = catch_unwind(AssertUnwindSafe(move || drop(future)));
}

fn panic_message(panic: Box<dyn Any + Send>) -> String {
    let message = panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "no message".to_owned());
    // The payload's own destructor may panic too.
    let _ = catch_unwind(AssertUnwindSafe(move || drop(panic)));
    message
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;
    use std::sync::atomic::AtomicUsize;
    use std::task::Poll;

    /// A host whose futures stay pending until `release`d, or answer at once.
    #[derive(Default)]
    struct Manual {
        wakers: Mutex<Vec<Waker>>,
        released: AtomicBool,
        calls: AtomicUsize,
    }

    struct Gate(Arc<Manual>);

    impl Future for Gate {
        type Output = Result<Json, HostError>;
        fn poll(self: std::pin::Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
            if self.0.released.load(Ordering::SeqCst) {
                return Poll::Ready(Ok(Json::from("released")));
            }
            self.0.wakers.lock().unwrap().push(cx.waker().clone());
            Poll::Pending
        }
    }

    struct ManualHost(Arc<Manual>);

    impl Host for ManualHost {
        fn call(&self, name: String, _args: Json, _cancel: CancellationToken) -> HostFuture {
            self.0.calls.fetch_add(1, Ordering::SeqCst);
            match name.as_str() {
                "now" => Box::pin(async { Ok(Json::from("now")) }),
                "panic" => Box::pin(async { panic!("boom") }),
                _ => Box::pin(Gate(self.0.clone())),
            }
        }
        fn concurrent(&self, _name: &str) -> bool {
            true
        }
    }

    fn calls(max_concurrent: usize) -> (Calls, Arc<Manual>, Arc<Signal>) {
        let manual = Arc::new(Manual::default());
        let signal = Arc::new(Signal::default());
        signal.bind();
        let calls = Calls::new(
            Arc::new(ManualHost(manual.clone())),
            CancellationToken::new(),
            signal.clone(),
            max_concurrent,
        );
        (calls, manual, signal)
    }

    fn returned(answer: Answer) -> Json {
        match answer {
            Answer::Returned(Ok(v)) => v,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_ready_future_is_answered_without_a_slot_staying_taken() {
        let (mut calls, _, _) = calls(4);
        match calls.submit(0, "now".into(), Json::Null, true) {
            Submitted::Answered(answer) => assert_eq!(returned(answer), "now"),
            other => panic!("{other:?}"),
        }
        assert_eq!(calls.running(), 0);
        // The slot is reused by the next call.
        let _ = calls.submit(1, "now".into(), Json::Null, true);
        assert_eq!(calls.slots.len(), 1);
    }

    #[test]
    fn a_woken_future_is_polled_and_the_queue_moves_on() {
        let (mut calls, manual, signal) = calls(1);
        assert!(matches!(
            calls.submit(0, "gate".into(), Json::Null, true),
            Submitted::Running
        ));
        assert!(matches!(
            calls.submit(1, "now".into(), Json::Null, true),
            Submitted::Queued
        ));
        let mut done = VecDeque::new();
        calls.poll(&mut done);
        assert!(done.is_empty(), "nothing woke");
        manual.released.store(true, Ordering::SeqCst);
        for waker in manual.wakers.lock().unwrap().drain(..) {
            waker.wake();
        }
        assert!(signal.is_set());
        calls.poll(&mut done);
        let ids: Vec<u64> = done.iter().map(|(id, _)| *id).collect();
        assert_eq!(ids, [0, 1], "the gate answered, then the queued call ran");
        assert_eq!(calls.running(), 0);
    }

    #[test]
    fn a_panicking_future_is_an_answer() {
        let (mut calls, _, _) = calls(1);
        match calls.submit(0, "panic".into(), Json::Null, true) {
            Submitted::Answered(answer) => {
                let err = answer.into_result("panic").unwrap_err();
                assert_eq!(err.code, codes::HOST_PANIC);
                assert!(err.message.contains("boom"), "{}", err.message);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn drain_drops_what_is_still_running_after_the_grace() {
        let (mut calls, manual, _) = calls(2);
        let _ = calls.submit(0, "gate".into(), Json::Null, true);
        let _ = calls.submit(1, "gate".into(), Json::Null, true);
        let _ = calls.submit(2, "gate".into(), Json::Null, true);
        calls.shutdown();
        let started = Instant::now();
        calls.drain(Duration::from_millis(20));
        assert!(started.elapsed() >= Duration::from_millis(20));
        assert_eq!(calls.running(), 0);
        assert_eq!(
            manual.calls.load(Ordering::SeqCst),
            2,
            "the queued call never started"
        );
    }
}
