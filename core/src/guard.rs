//! Panics in user code become messages: every call into a user's impl
//! (`execute`, the projections, the presenters, the policies, and the
//! `Serialize`/`Deserialize`/`Clone`/`Drop` impls of the tool's types) goes
//! through [`guard`] or [`Guarded`], so a panic ends one call as an
//! error result and the registry serves the next.

use std::any::Any;
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::task::Poll;

/// The message of a caught panic.
pub(crate) fn panic_message(payload: Box<dyn Any + Send>) -> String {
    let message = if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "<panic payload that is not a string>".to_owned()
    };
    // Dropping the payload runs user code too (a panic carrying a value
    // whose `Drop` panics): keep it from unwinding out.
    let _ = catch_unwind(AssertUnwindSafe(move || drop(payload)));
    crate::text::cap(&message, 500).into_owned()
}

/// Runs `f`, turning a panic into its message.
pub(crate) fn guard<R>(f: impl FnOnce() -> R) -> Result<R, String> {
    catch_unwind(AssertUnwindSafe(f)).map_err(panic_message)
}

/// Drops `value` (a user type whose `Drop` may panic) without unwinding.
pub(crate) fn discard<T>(value: T) {
    let _ = guard(move || drop(value));
}

/// A future pinned where it lives (the large pipeline futures are not
/// moved into one more state machine), polled and dropped under guards: a
/// panic while polling becomes its message, and dropping it early (after a
/// timeout or a cancellation, or with the call's own future) cannot unwind
/// out of the pipeline.
pub(crate) struct Guarded<'a, F>(Pin<&'a mut Option<F>>);

impl<'a, F: Future> Guarded<'a, F> {
    /// Guards the future in `slot`.
    pub(crate) fn new(slot: Pin<&'a mut Option<F>>) -> Self {
        Guarded(slot)
    }

    /// Runs the future to its end, turning a panic into its message.
    pub(crate) fn run(&mut self) -> impl Future<Output = Result<F::Output, String>> + '_ {
        std::future::poll_fn(move |cx| {
            let Some(fut) = self.0.as_mut().as_pin_mut() else {
                return Poll::Ready(Err("polled after it was dropped".to_owned()));
            };
            match catch_unwind(AssertUnwindSafe(|| fut.poll(cx))) {
                Ok(Poll::Ready(out)) => Poll::Ready(Ok(out)),
                Ok(Poll::Pending) => Poll::Pending,
                Err(payload) => Poll::Ready(Err(panic_message(payload))),
            }
        })
    }
}

impl<F> Drop for Guarded<'_, F> {
    fn drop(&mut self) {
        let mut slot = self.0.as_mut();
        let _ = guard(move || slot.set(None));
    }
}

/// A value of a user type kept across an await: dropped under a guard
/// however it goes, taken out, or dropped with a future its caller drops.
pub(crate) struct Held<T>(Option<T>);

impl<T> Held<T> {
    pub(crate) fn new(value: T) -> Self {
        Held(Some(value))
    }

    pub(crate) fn get(&self) -> &T {
        match &self.0 {
            Some(value) => value,
            None => unreachable!("only `take`, which consumes the holder, empties it"),
        }
    }

    pub(crate) fn take(mut self) -> T {
        match self.0.take() {
            Some(value) => value,
            None => unreachable!("only `take`, which consumes the holder, empties it"),
        }
    }
}

impl<T> Drop for Held<T> {
    fn drop(&mut self) {
        if let Some(value) = self.0.take() {
            discard(value);
        }
    }
}
