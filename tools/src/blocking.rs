//! Blocking work off the runtime's workers, and the way it learns to stop.
//!
//! The file tools, `sql_query` and `web_fetch` do synchronous work (file
//! walks, reads, SQLite, a blocking HTTP client). Each keeps that work in a
//! synchronous method `fn run(&self, args, stop: &Stop) -> Result<Value,
//! ToolError>`, and its `execute` hands it to [`on_blocking_pool`], which
//! runs it on tokio's blocking pool and raises the [`Stop`] flag when the
//! call's future is dropped (a timeout or a cancellation), so a long walk or
//! query ends at its next check instead of running on unseen.
//!
//! When `#[tool(blocking)]` is available (a synchronous `execute` that the
//! registry runs on the blocking pool), a tool switches by adding `blocking`
//! to its attribute and making `execute` synchronous:
//!
//! ```text
//! async fn execute(&self, args: A, cx: &ToolContext<'_>) -> Result<V, ToolError> {
//!     on_blocking_pool(self, args, cx, Self::run).await
//! }
//! // becomes
//! fn execute(&self, args: A, cx: &ToolContext<'_>) -> Result<V, ToolError> {
//!     self.run(args, &Stop::of(cx))
//! }
//! ```
//!
//! [`Stop::of`] follows the call's cancellation token, so the checks keep
//! working as long as the registry cancels that token when it gives up on a
//! blocking call.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use toolprism::{CancellationToken, ToolContext, ToolError};

/// Tells synchronous work that nobody waits for its result any more.
#[derive(Debug, Clone)]
pub(crate) struct Stop {
    dropped: Arc<AtomicBool>,
    token: CancellationToken,
}

impl Stop {
    /// Follows the call's cancellation token.
    pub(crate) fn of(cx: &ToolContext<'_>) -> Stop {
        Stop {
            dropped: Arc::new(AtomicBool::new(false)),
            token: cx.cancellation().clone(),
        }
    }

    /// A flag nobody raises, for tests of the synchronous parts.
    #[cfg(all(test, any(feature = "fs", feature = "sql")))]
    pub(crate) fn never() -> Stop {
        Stop {
            dropped: Arc::new(AtomicBool::new(false)),
            token: CancellationToken::new(),
        }
    }

    /// Whether the work should end now.
    pub(crate) fn is_stopped(&self) -> bool {
        self.dropped.load(Ordering::Relaxed) || self.token.is_cancelled()
    }

    /// `Err(ABORTED)` once the work should end; its result is never seen.
    #[cfg_attr(not(any(feature = "fs", feature = "web")), allow(dead_code))]
    pub(crate) fn check(&self) -> Result<(), ToolError> {
        if self.is_stopped() {
            Err(ToolError::new("the call was cancelled").with_code("ABORTED"))
        } else {
            Ok(())
        }
    }

    /// Raises the flag: the work should end.
    pub(crate) fn raise(&self) {
        self.dropped.store(true, Ordering::Relaxed);
    }
}

/// Raises the flag when the call's future is dropped before the work ended.
struct StopOnDrop(Stop);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.raise();
    }
}

/// Runs `work(tool, args, stop)` on tokio's blocking pool. Dropping the
/// returned future raises `stop`.
pub(crate) async fn on_blocking_pool<T, A, V>(
    tool: &T,
    args: A,
    cx: &ToolContext<'_>,
    work: fn(&T, A, &Stop) -> Result<V, ToolError>,
) -> Result<V, ToolError>
where
    T: Clone + Send + 'static,
    A: Send + 'static,
    V: Send + 'static,
{
    let stop = Stop::of(cx);
    let guard = StopOnDrop(stop.clone());
    let tool = tool.clone();
    let joined = tokio::task::spawn_blocking(move || work(&tool, args, &stop)).await;
    // The work is over: the flag no longer matters either way.
    drop(guard);
    match joined {
        Ok(result) => result,
        // The registry reports a panic in `execute` as a failed call; a panic
        // on the blocking pool is the same thing, so it propagates as one.
        Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
        Err(e) => Err(ToolError::new(format!(
            "the tool's worker was cancelled: {e}"
        ))),
    }
}
