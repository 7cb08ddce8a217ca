//! The limits one run is held to.

use std::time::Duration;

/// The largest JavaScript stack QuickJS can be given: its limit check is
/// disabled above 16 MiB, so larger values are clamped to this.
pub const MAX_STACK_BYTES: usize = 16 << 20;

/// What one run may use. Each limit is independent and has its own error
/// kind when exceeded (see [`ErrorKind`](crate::sandbox::ErrorKind)).
///
/// Build one from [`Limits::default`] and change the fields you need:
///
/// ```
/// use std::time::Duration;
/// let mut limits = toolprism::code::sandbox::Limits::default();
/// limits.wall = Duration::from_secs(5);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Limits {
    /// Time the interpreter may spend executing (parsing included). Time
    /// spent waiting for the host is not counted. `COMPUTE_LIMIT`.
    pub compute: Duration,
    /// Time the whole run may take, waits included. `WALL_LIMIT`.
    pub wall: Duration,
    /// The JavaScript heap cap (QuickJS `set_memory_limit`). `MEMORY_LIMIT`.
    pub memory_bytes: usize,
    /// How many nested tool calls the program may make. The call after the
    /// last allowed one ends the run with `CALL_LIMIT`.
    pub max_calls: usize,
    /// The output ledger: bytes of log lines plus the JSON of the returned
    /// value. `OUTPUT_LIMIT`. Error messages are capped separately (see
    /// [`MESSAGE_CAP`](crate::sandbox::MESSAGE_CAP)) and take what is left.
    pub output_bytes: usize,
    /// The JavaScript stack (QuickJS `set_max_stack_size`), at most
    /// [`MAX_STACK_BYTES`]. `STACK_LIMIT`.
    pub stack_bytes: usize,
    /// How many `concurrent` nested calls may run at once (at least 1).
    pub max_concurrent: usize,
    /// When a run ends with nested calls still running, their cancellation
    /// tokens are cancelled and they get this long to finish; the futures
    /// of those still running then are dropped.
    pub cancel_grace: Duration,
    /// The largest arguments of one nested call, in bytes of JSON. Bounds the
    /// copy out of the JavaScript heap: a value that repeats one object many
    /// times is small in the heap but not as JSON.
    pub args_bytes: usize,
}

impl Default for Limits {
    /// 5 s of compute, 30 s of wall time, a 64 MiB heap, 200 calls, 1 MiB of
    /// output, a 4 MiB stack (about 6,000 frames of a simple recursive function), 10 concurrent calls, 1 s of grace for cancelled
    /// calls, 4 MiB of arguments per call.
    fn default() -> Self {
        Limits {
            compute: Duration::from_secs(5),
            wall: Duration::from_secs(30),
            memory_bytes: 64 << 20,
            max_calls: 200,
            output_bytes: 1 << 20,
            stack_bytes: 4 << 20,
            max_concurrent: 10,
            cancel_grace: Duration::from_secs(1),
            args_bytes: 4 << 20,
        }
    }
}
