//! The `code`s of the `ToolCallError`s the engine raises itself (a host
//! chooses its own codes; [`UNKNOWN_TOOL`] is the one it should use for a
//! name it has no tool for).

/// What a host should answer for a tool name it does not know.
pub const UNKNOWN_TOOL: &str = "UNKNOWN_TOOL";
/// The arguments are not lossless JSON, exceed `Limits::args_bytes`, or are
/// more than one; the tool was not called.
pub const INVALID_ARGUMENTS: &str = "INVALID_ARGUMENTS";
/// The call would pass `Limits::max_calls`; the run ends with `CALL_LIMIT`.
pub const CALL_LIMIT: &str = "CALL_LIMIT";
/// The tool returned a value JavaScript cannot hold exactly: an integer
/// beyond ±(2^53 − 1), or nesting deeper than 127 levels.
pub const NOT_REPRESENTABLE: &str = "NOT_REPRESENTABLE";
/// The tool returned a value too large for the heap (`Limits::memory_bytes`).
pub const RESULT_TOO_LARGE: &str = "RESULT_TOO_LARGE";
/// The host's future (or its `call`) panicked.
pub const HOST_PANIC: &str = "HOST_PANIC";
