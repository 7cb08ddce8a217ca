//! How blocking work learns to stop.
//!
//! The file tools, `sql_query` and `web_fetch` do synchronous work (file
//! walks, reads, SQLite, a blocking HTTP client): each is a
//! `#[tool(blocking)]`, so the registry runs its synchronous `execute` on
//! tokio's blocking pool. A timeout, a cancellation or a dropped call cannot
//! stop a thread; the registry cancels the call's token instead, and the
//! work checks a [`Stop`] that follows it, so a long walk or query ends at
//! its next check instead of running on unseen.

use toolprism::{CancellationToken, ToolContext, ToolError};

/// Tells synchronous work that nobody waits for its result any more.
#[derive(Debug, Clone)]
pub(crate) struct Stop {
    token: CancellationToken,
}

impl Stop {
    /// Follows the call's cancellation token.
    pub(crate) fn of(cx: &ToolContext<'_>) -> Stop {
        Stop {
            token: cx.cancellation().clone(),
        }
    }

    /// A flag nobody raises unless the test does, for tests of the
    /// synchronous parts.
    #[cfg(all(test, any(feature = "fs", feature = "sql")))]
    pub(crate) fn never() -> Stop {
        Stop {
            token: CancellationToken::new(),
        }
    }

    /// Whether the work should end now.
    pub(crate) fn is_stopped(&self) -> bool {
        self.token.is_cancelled()
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
    #[cfg(all(test, any(feature = "fs", feature = "sql")))]
    pub(crate) fn raise(&self) {
        self.token.cancel();
    }
}
