//! Calls waiting for their client's input, between the rounds of a
//! `2026-07-28` multi round-trip (SEP-2322; W8 in `docs/contract.md`).
//!
//! From `2026-07-28` a server may not send requests to the client. A tool
//! that asks (sampling, elicitation, an approval) instead makes its
//! `tools/call` answer `InputRequiredResult {inputRequests, requestState}`;
//! the client answers the requests and calls again with `inputResponses`
//! and the same `requestState`. Toolprism keeps the call itself running
//! meanwhile (its future, in a task of its own, waiting for the answers)
//! in this store, under an unguessable id (128 random bits) that is the
//! `requestState`. The retry takes the call out, hands it the answers, and
//! the call resumes where it stopped: `execute` runs once, whatever the
//! number of rounds.
//!
//! - **Verified.** A `requestState` that is not in the store (tampered,
//!   expired, already used, or from another process) is a protocol error
//!   (`-32602`), as SEP-2322 asks; so is a retry that names another tool or
//!   other arguments than the call it resumes.
//! - **Bounded.** At most [`MAX_WAITING`] calls wait at once; past that,
//!   a new request fails at once with a clear error (the tool decides what
//!   to do), and the waiting ones are untouched.
//! - **Expiring.** The tool's request times out after the server's client
//!   timeout ([`McpServer::with_client_timeout`](crate::McpServer::with_client_timeout)),
//!   as over any transport; a call whose retry has still not come twice
//!   that long after it asked is cancelled, and ends as `ABORTED` in the
//!   session log.
//! - **Its caller's.** A retry by another caller than the call's (the
//!   verified subject) is refused as an unknown `requestState`, and leaves
//!   the call waiting for its own caller.
//! - **In this process; shared through the store.** The waiting call
//!   lives here. With a shared [`Store`](crate::Store) it is also noted
//!   there (which process runs it, for whom, the call), so a retry that
//!   reaches another replica is relayed here (`handler/relay.rs`); with the
//!   in-memory store the retry must reach this process.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::task::{Context, Poll};
use std::time::Duration;

use rmcp::model::JsonObject;
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::client::{CallClient, Event};
use toolprism_core::ToolOutcome;
use toolprism_core::client::ClientError;

/// The most calls that may wait for their client's input at once, per
/// server process.
pub const MAX_WAITING: usize = 1024;

/// A call running in a task of its own, as a future of its outcome
/// (`None` if the task failed, which the registry never makes happen).
pub(crate) struct CallTask(pub(crate) JoinHandle<ToolOutcome>);

impl Future for CallTask {
    type Output = Option<ToolOutcome>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        Pin::new(&mut self.0).poll(cx).map(Result::ok)
    }
}

/// A call that may ask its client for input, between two requests.
pub(crate) struct Suspended {
    pub(crate) task: CallTask,
    pub(crate) events: mpsc::UnboundedReceiver<Event>,
    /// Cancels the call.
    pub(crate) cancel: CancellationToken,
    pub(crate) client: Arc<CallClient>,
    /// The tool and arguments of the first round, which a retry must repeat.
    pub(crate) name: String,
    pub(crate) arguments: Option<JsonObject>,
    /// The caller that made it (the verified subject), which a retry must
    /// be made by.
    pub(crate) owner: Option<String>,
    /// Numbers the keys of `inputRequests`.
    pub(crate) asked: u32,
}

impl Suspended {
    /// Whether a retry naming `name` with `arguments` is this call's.
    pub(crate) fn same_call(&self, name: &str, arguments: Option<&JsonObject>) -> bool {
        let empty = JsonObject::new();
        self.name == name
            && self.arguments.as_ref().unwrap_or(&empty) == arguments.unwrap_or(&empty)
    }
}

/// Where the answers to a round's requests go, by `inputRequests` key.
pub(crate) type Replies = Vec<(String, oneshot::Sender<Result<Value, ClientError>>)>;

/// The store of waiting calls, shared by every session of a server.
#[derive(Default)]
pub(crate) struct Waiting {
    calls: Mutex<HashMap<String, (Suspended, Replies)>>,
}

impl Waiting {
    /// Keeps `call` until its retry, for at most `ttl`; returns the
    /// `requestState` to send, or the call back when the store is full.
    pub(crate) fn park(
        self: &Arc<Self>,
        call: Suspended,
        replies: Replies,
        ttl: Duration,
    ) -> Result<String, Box<(Suspended, Replies)>> {
        let state = uuid::Uuid::new_v4().simple().to_string();
        {
            let mut calls = self.calls.lock().unwrap_or_else(PoisonError::into_inner);
            if calls.len() >= MAX_WAITING {
                return Err(Box::new((call, replies)));
            }
            calls.insert(state.clone(), (call, replies));
        }
        let store: Weak<Self> = Arc::downgrade(self);
        let expiring = state.clone();
        tokio::spawn(async move {
            tokio::time::sleep(ttl).await;
            if let Some((call, _replies)) = store.upgrade().and_then(|s| s.take(&expiring)) {
                // Nobody came back for it: the call ends as cancelled.
                call.cancel.cancel();
            }
        });
        Ok(state)
    }

    /// The call waiting under `state`, taken out (a `requestState` is good
    /// for one retry).
    pub(crate) fn take(&self, state: &str) -> Option<(Suspended, Replies)> {
        self.take_if(state, |_| true)
    }

    /// The call waiting under `state`, taken out if `mine` holds for it
    /// (its caller's retry); else left waiting.
    pub(crate) fn take_if(
        &self,
        state: &str,
        mine: impl FnOnce(&Suspended) -> bool,
    ) -> Option<(Suspended, Replies)> {
        let mut calls = self.calls.lock().unwrap_or_else(PoisonError::into_inner);
        if !calls.get(state).is_some_and(|(call, _)| mine(call)) {
            return None;
        }
        calls.remove(state)
    }

    /// How many calls wait.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.calls
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }
}

/// The message of a request that cannot wait because [`MAX_WAITING`] calls
/// already do.
pub(crate) fn full() -> ClientError {
    ClientError::Failed(format!(
        "this server already has {MAX_WAITING} calls waiting for their clients' answers; try again later"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::{Level, Reach};

    fn suspended() -> Suspended {
        let (events, received) = mpsc::unbounded_channel();
        let client = Arc::new(CallClient::new(
            events,
            Level::Request(Default::default()),
            Reach::default(),
            Duration::from_secs(1),
        ));
        Suspended {
            task: CallTask(tokio::spawn(std::future::pending())),
            events: received,
            cancel: CancellationToken::new(),
            client,
            name: "t".into(),
            arguments: None,
            owner: None,
            asked: 0,
        }
    }

    #[tokio::test]
    async fn a_state_is_unguessable_good_once_and_expires() {
        let waiting = Arc::new(Waiting::default());
        let first = waiting
            .park(suspended(), Vec::new(), Duration::from_secs(5))
            .ok()
            .unwrap();
        // Real time, a short life: the paused clock would need tokio's
        // `test-util`, whose feature would rebuild every crate above tokio
        // when `cargo test` follows `cargo run`.
        let second = waiting
            .park(suspended(), Vec::new(), Duration::from_millis(300))
            .ok()
            .unwrap();
        assert_eq!(first.len(), 32, "128 bits, in hex: {first}");
        assert_ne!(first, second);
        assert!(waiting.take(&format!("{first}-TAMPERED")).is_none());
        let (call, _) = waiting.take(&first).expect("parked");
        assert!(!call.cancel.is_cancelled());
        assert!(waiting.take(&first).is_none(), "good for one retry");
        assert!(call.same_call("t", Some(&JsonObject::new())));
        assert!(!call.same_call("u", None));

        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        while waiting.len() > 0 && std::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert_eq!(waiting.len(), 0, "the second one expired");
    }

    #[tokio::test]
    async fn the_store_is_bounded() {
        let waiting = Arc::new(Waiting::default());
        for _ in 0..MAX_WAITING {
            assert!(
                waiting
                    .park(suspended(), Vec::new(), Duration::from_secs(60))
                    .is_ok()
            );
        }
        assert!(
            waiting
                .park(suspended(), Vec::new(), Duration::from_secs(60))
                .is_err()
        );
        assert_eq!(waiting.len(), MAX_WAITING);
    }
}
