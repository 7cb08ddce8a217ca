//! The host side of a run: what a program's nested tool calls are sent to.

use std::fmt;
use std::future::Future;
use std::pin::Pin;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

/// The future [`Host::call`] returns: the tool's canonical JSON value, or an
/// error the program sees as a rejected `ToolCallError`.
pub type HostFuture = Pin<Box<dyn Future<Output = Result<Value, HostError>> + Send>>;

/// Runs the nested tool calls of a program.
///
/// The engine calls [`call`](Host::call), in the order the program
/// submitted the calls, and polls the returned future on the run's engine
/// thread itself, inside the tokio runtime that [`run`](crate::sandbox::run) was
/// called in (the thread has entered it): the future can use tokio timers,
/// `tokio::spawn`, `spawn_blocking` and I/O as in a task. The program is
/// paused while `call` runs or the future is polled, so neither may block:
/// blocking work belongs on `spawn_blocking` (as toolprism's blocking tools
/// do). A future ready on its first poll costs no task and no thread hop.
/// A panic in `call` or in a poll becomes a `HOST_PANIC` error for the
/// program, not a crash.
pub trait Host: Send + Sync + 'static {
    /// One nested tool call: `tools.<name>(args)` in the program.
    ///
    /// Resolves to the tool's canonical JSON value, or to a [`HostError`].
    /// An unknown `name` is the host's to decide: it should fail with code
    /// `UNKNOWN_TOOL`. `cancel` is cancelled when the run ends or is aborted
    /// before the call finished; the engine then drops the future.
    fn call(&self, name: String, args: Value, cancel: CancellationToken) -> HostFuture;

    /// Whether calls to `name` may overlap with other such calls (read-only
    /// tools). A call for which this is `false` waits for every running call
    /// to finish and runs alone.
    fn concurrent(&self, name: &str) -> bool;
}

/// A failed nested call, as the program sees it: `ToolCallError.code` and
/// `ToolCallError.message`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostError {
    /// A stable, machine-readable code, e.g. `UNKNOWN_TOOL`.
    pub code: String,
    /// What went wrong, written for the model to act on.
    pub message: String,
}

impl HostError {
    /// A host error with this code and message.
    pub fn new(code: impl Into<String>, message: impl Into<String>) -> Self {
        HostError {
            code: code.into(),
            message: message.into(),
        }
    }
}

impl fmt::Display for HostError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for HostError {}
