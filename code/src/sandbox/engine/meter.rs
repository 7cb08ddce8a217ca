//! Compute time, the wall deadline and the reasons a run must stop, as seen
//! by QuickJS's interrupt handler.

use std::cell::Cell;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::sandbox::ErrorKind;

/// Why the interpreter must stop now. Once set it stays set: the interrupt
/// handler then interrupts everything, so no program code runs again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stop {
    Compute,
    Wall,
    Aborted,
    Calls,
    Output,
}

impl Stop {
    pub(crate) fn kind(self) -> ErrorKind {
        match self {
            Stop::Compute => ErrorKind::Compute,
            Stop::Wall => ErrorKind::Wall,
            Stop::Aborted => ErrorKind::Aborted,
            Stop::Calls => ErrorKind::Calls,
            Stop::Output => ErrorKind::Output,
        }
    }
}

/// The run's clocks and stop flag, shared by the event loop, the native
/// functions and the interrupt handler (all on the engine thread, except
/// `abort`, which a cancellation or the dropped run's guard sets from
/// another thread).
#[derive(Debug)]
pub(crate) struct Meter {
    compute: Duration,
    deadline: Instant,
    abort: Arc<AtomicBool>,
    spent: Cell<Duration>,
    busy_since: Cell<Option<Instant>>,
    stop: Cell<Option<Stop>>,
}

impl Meter {
    pub(crate) fn new(compute: Duration, deadline: Instant, abort: Arc<AtomicBool>) -> Self {
        Meter {
            compute,
            deadline,
            abort,
            spent: Cell::new(Duration::ZERO),
            busy_since: Cell::new(None),
            stop: Cell::new(None),
        }
    }

    /// The interpreter starts (or resumes) working.
    pub(crate) fn resume(&self) {
        if self.busy_since.get().is_none() {
            self.busy_since.set(Some(Instant::now()));
        }
    }

    /// The interpreter waits for the host; the time until the next
    /// [`resume`](Self::resume) is not compute.
    pub(crate) fn pause(&self) {
        if let Some(since) = self.busy_since.take() {
            self.spent.set(self.spent.get() + since.elapsed());
        }
    }

    /// Compute spent so far.
    pub(crate) fn spent(&self) -> Duration {
        self.spent_at(Instant::now())
    }

    fn spent_at(&self, now: Instant) -> Duration {
        let running = self
            .busy_since
            .get()
            .map_or(Duration::ZERO, |s| now.saturating_duration_since(s));
        self.spent.get() + running
    }

    /// The wall deadline.
    pub(crate) fn deadline(&self) -> Instant {
        self.deadline
    }

    /// Records why the run must stop (the first reason wins).
    pub(crate) fn stop(&self, why: Stop) {
        if self.stop.get().is_none() {
            self.stop.set(Some(why));
        }
    }

    /// The reason the run must stop, if any.
    pub(crate) fn stopped(&self) -> Option<Stop> {
        self.stop.get()
    }

    /// Checks every limit the clock enforces; `true` when the run must stop.
    /// This is QuickJS's interrupt handler, called every few thousand
    /// bytecode operations (including in regular expressions).
    pub(crate) fn check(&self) -> bool {
        if self.stop.get().is_some() {
            return true;
        }
        if self.abort.load(Ordering::Acquire) {
            self.stop(Stop::Aborted);
            return true;
        }
        let now = Instant::now();
        if now >= self.deadline {
            self.stop(Stop::Wall);
        } else if self.spent_at(now) > self.compute {
            self.stop(Stop::Compute);
        }
        self.stop.get().is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paused_time_is_not_compute() {
        let meter = Meter::new(
            Duration::from_millis(20),
            Instant::now() + Duration::from_secs(60),
            Arc::default(),
        );
        meter.resume();
        meter.pause();
        std::thread::sleep(Duration::from_millis(40));
        assert!(!meter.check());
        meter.resume();
        std::thread::sleep(Duration::from_millis(40));
        assert!(meter.check());
        assert_eq!(meter.stopped(), Some(Stop::Compute));
    }

    #[test]
    fn the_first_reason_wins_and_abort_is_seen() {
        let abort = Arc::new(AtomicBool::new(false));
        let meter = Meter::new(
            Duration::from_secs(60),
            Instant::now() + Duration::from_secs(60),
            abort.clone(),
        );
        assert!(!meter.check());
        abort.store(true, Ordering::Release);
        assert!(meter.check());
        meter.stop(Stop::Output);
        assert_eq!(meter.stopped(), Some(Stop::Aborted));
    }
}
