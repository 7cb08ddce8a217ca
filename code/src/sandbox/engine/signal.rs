//! Wakes the engine thread: from host-future wakers, and from the caller's
//! cancellation (or the guard of a dropped run).

use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::task::{Context, Wake, Waker};
use std::thread::Thread;
use std::time::Instant;

use tokio_util::sync::{CancellationToken, WaitForCancellationFutureOwned};

/// A "woken" flag and the thread that waits on it.
///
/// [`notify`](Signal::notify) sets the flag and unparks the thread only
/// when the flag was clear, so a burst of wake-ups costs one unpark; the
/// thread [`take`](Signal::take)s the flag before it looks at what woke
/// it, so a wake-up that comes while it is looking is never lost.
#[derive(Debug, Default)]
pub(crate) struct Signal {
    woken: AtomicBool,
    thread: OnceLock<Thread>,
}

impl Signal {
    /// Makes the calling thread the one that waits on this signal. It must
    /// call this before its first [`wait_until`](Signal::wait_until) (a
    /// notification before then only sets the flag, which the first wait
    /// sees).
    pub(crate) fn bind(&self) {
        let _ = self.thread.set(std::thread::current());
    }

    /// Sets the flag and wakes the waiting thread (if it was not woken
    /// already).
    pub(crate) fn notify(&self) {
        if !self.woken.swap(true, Ordering::AcqRel)
            && let Some(thread) = self.thread.get()
        {
            thread.unpark();
        }
    }

    /// Whether the flag is set (it stays set).
    pub(crate) fn is_set(&self) -> bool {
        self.woken.load(Ordering::Acquire)
    }

    /// Clears the flag; `true` if it was set.
    pub(crate) fn take(&self) -> bool {
        self.woken.swap(false, Ordering::AcqRel)
    }

    /// Parks the bound thread until the flag is set or until `deadline`;
    /// `false` if the deadline came first. The flag stays set: whoever
    /// handles the wake-up [`take`](Signal::take)s it.
    pub(crate) fn wait_until(&self, deadline: Instant) -> bool {
        loop {
            if self.is_set() {
                return true;
            }
            let now = Instant::now();
            if now >= deadline {
                return false;
            }
            std::thread::park_timeout(deadline - now);
        }
    }
}

/// Sets the abort flag and wakes the engine thread the moment a token is
/// cancelled: its waker runs inside `cancel()`, on the cancelling thread,
/// so the engine sees the cancellation without waiting for any task.
pub(crate) struct CancelWatch {
    /// Kept pending for as long as the watch lives (its drop unregisters).
    _cancelled: Pin<Box<WaitForCancellationFutureOwned>>,
}

impl std::fmt::Debug for CancelWatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CancelWatch").finish_non_exhaustive()
    }
}

impl CancelWatch {
    /// Watches `token`: once it is cancelled, `abort` is set and `signal`
    /// notified (at once if it is cancelled already).
    pub(crate) fn new(
        token: CancellationToken,
        abort: Arc<AtomicBool>,
        signal: Arc<Signal>,
    ) -> Self {
        let wake = Arc::new(AbortWake { abort, signal });
        let mut cancelled = Box::pin(token.cancelled_owned());
        let waker = Waker::from(wake.clone());
        if cancelled
            .as_mut()
            .poll(&mut Context::from_waker(&waker))
            .is_ready()
        {
            wake.wake_by_ref();
        }
        CancelWatch {
            _cancelled: cancelled,
        }
    }
}

struct AbortWake {
    abort: Arc<AtomicBool>,
    signal: Arc<Signal>,
}

impl Wake for AbortWake {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.abort.store(true, Ordering::Release);
        self.signal.notify();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_notification_before_the_wait_is_not_lost() {
        let signal = Signal::default();
        signal.notify();
        signal.bind();
        assert!(signal.wait_until(Instant::now() + Duration::from_secs(10)));
        assert!(signal.take());
        assert!(!signal.is_set());
    }

    #[test]
    fn the_wait_ends_at_the_deadline_without_a_notification() {
        let signal = Signal::default();
        signal.bind();
        let started = Instant::now();
        assert!(!signal.wait_until(started + Duration::from_millis(30)));
        assert!(started.elapsed() >= Duration::from_millis(30));
    }

    #[test]
    fn a_cancellation_sets_the_abort_flag_before_cancel_returns() {
        let token = CancellationToken::new();
        let abort = Arc::new(AtomicBool::new(false));
        let signal = Arc::new(Signal::default());
        let watch = CancelWatch::new(token.child_token(), abort.clone(), signal.clone());
        assert!(!abort.load(Ordering::SeqCst));
        token.cancel();
        assert!(abort.load(Ordering::SeqCst));
        assert!(signal.take());
        drop(watch);
        // Already cancelled when the watch starts.
        let abort = Arc::new(AtomicBool::new(false));
        let _watch = CancelWatch::new(token, abort.clone(), signal);
        assert!(abort.load(Ordering::SeqCst));
    }

    #[test]
    fn another_thread_wakes_a_parked_thread() {
        let signal = Arc::new(Signal::default());
        signal.bind();
        let notifier = signal.clone();
        let other = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(20));
            notifier.notify();
        });
        let started = Instant::now();
        assert!(signal.wait_until(started + Duration::from_secs(10)));
        assert!(started.elapsed() < Duration::from_secs(5));
        other.join().unwrap();
    }
}
