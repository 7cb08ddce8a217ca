//! What a run returns: logs, the value or the error, and what it used.

use std::fmt;
use std::time::Duration;

use serde_json::Value;

/// The longest error message a run returns, in bytes. A message built from
/// program data (a thrown 100 MB string, say) is cut to this, and to what
/// the output ledger has left, whichever is smaller (but never below
/// [`MESSAGE_FLOOR`]).
pub const MESSAGE_CAP: usize = 4096;

/// The shortest an error message is cut to, even when the output ledger is
/// spent: the model always learns what went wrong.
pub const MESSAGE_FLOOR: usize = 256;

/// The result of one [`run`](crate::sandbox::run).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct RunOutcome {
    /// What the program wrote with `console.*`, one entry per call, in order.
    pub logs: Vec<String>,
    /// The returned value (`None` when the program returned `undefined` or
    /// nothing), or why the run failed.
    pub result: Result<Option<Value>, RunError>,
    /// Nested tool calls the program submitted (and the limit accepted).
    pub calls: usize,
    /// Time the interpreter spent executing (what [`Limits::compute`](crate::sandbox::Limits::compute) bounds).
    pub compute: Duration,
    /// Time the whole run took.
    pub wall: Duration,
    /// Bytes charged to the output ledger: logs plus the returned value.
    pub output_bytes: usize,
}

/// Why a run failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunError {
    /// Which failure this is; [`ErrorKind::code`] gives its stable code.
    pub kind: ErrorKind,
    /// What happened, written for a model to act on; at most [`MESSAGE_CAP`] bytes.
    pub message: String,
    /// Where in the program it happened, when known.
    pub location: Option<SourceLocation>,
}

impl RunError {
    pub(crate) fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        RunError {
            kind,
            message: message.into(),
            location: None,
        }
    }

    /// The stable code of [`kind`](Self::kind), e.g. `COMPUTE_LIMIT`.
    pub fn code(&self) -> &'static str {
        self.kind.code()
    }
}

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code(), self.message)
    }
}

impl std::error::Error for RunError {}

/// A position in the program's own source (not the wrapper the engine adds).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SourceLocation {
    /// 1-based line.
    pub line: u32,
    /// 1-based column, as QuickJS counts it.
    pub column: u32,
}

/// Every way a run can fail. Each has its own stable code ([`code`](Self::code)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The program does not parse (`SYNTAX_ERROR`); nothing ran.
    Syntax,
    /// The program threw and nothing caught it (`EXCEPTION`).
    Exception,
    /// The returned value is not lossless JSON (`INVALID_RESULT`).
    InvalidResult,
    /// The interpreter ran longer than [`Limits::compute`](crate::sandbox::Limits::compute) (`COMPUTE_LIMIT`).
    Compute,
    /// The run took longer than [`Limits::wall`](crate::sandbox::Limits::wall) (`WALL_LIMIT`).
    Wall,
    /// The heap cap was hit (`MEMORY_LIMIT`).
    Memory,
    /// The stack overflowed, e.g. unbounded recursion (`STACK_LIMIT`).
    Stack,
    /// More nested calls than [`Limits::max_calls`](crate::sandbox::Limits::max_calls) (`CALL_LIMIT`).
    Calls,
    /// Logs plus the returned value exceed [`Limits::output_bytes`](crate::sandbox::Limits::output_bytes) (`OUTPUT_LIMIT`).
    Output,
    /// The program awaits a promise that nothing can settle: no job is
    /// queued and no nested call is pending (`STALLED`).
    Stalled,
    /// The run's cancellation token was cancelled (`ABORTED`).
    Aborted,
    /// The engine itself failed (`INTERNAL`): a bug or a resource the
    /// machine could not give; not the program's fault.
    Internal,
}

impl ErrorKind {
    /// Every kind, in declaration order.
    pub const ALL: [ErrorKind; 12] = [
        ErrorKind::Syntax,
        ErrorKind::Exception,
        ErrorKind::InvalidResult,
        ErrorKind::Compute,
        ErrorKind::Wall,
        ErrorKind::Memory,
        ErrorKind::Stack,
        ErrorKind::Calls,
        ErrorKind::Output,
        ErrorKind::Stalled,
        ErrorKind::Aborted,
        ErrorKind::Internal,
    ];

    /// The stable error code string of this kind.
    pub fn code(self) -> &'static str {
        match self {
            ErrorKind::Syntax => "SYNTAX_ERROR",
            ErrorKind::Exception => "EXCEPTION",
            ErrorKind::InvalidResult => "INVALID_RESULT",
            ErrorKind::Compute => "COMPUTE_LIMIT",
            ErrorKind::Wall => "WALL_LIMIT",
            ErrorKind::Memory => "MEMORY_LIMIT",
            ErrorKind::Stack => "STACK_LIMIT",
            ErrorKind::Calls => "CALL_LIMIT",
            ErrorKind::Output => "OUTPUT_LIMIT",
            ErrorKind::Stalled => "STALLED",
            ErrorKind::Aborted => "ABORTED",
            ErrorKind::Internal => "INTERNAL",
        }
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code())
    }
}

/// Cuts `text` to at most `max` bytes at a character boundary, appending
/// a note of how much was cut. The result may exceed `max` by the note.
pub(crate) fn truncate_message(text: &mut String, max: usize) {
    if text.len() <= max {
        return;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let cut = text.len() - end;
    text.truncate(end);
    text.push_str(&format!(" …[{cut} more bytes cut]"));
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn codes_are_distinct() {
        let codes: HashSet<_> = ErrorKind::ALL.iter().map(|k| k.code()).collect();
        assert_eq!(codes.len(), ErrorKind::ALL.len());
    }

    #[test]
    fn truncation_keeps_char_boundaries() {
        let mut s = "ééé".to_owned();
        truncate_message(&mut s, 3);
        assert_eq!(s, "é …[4 more bytes cut]");
        let mut s = "abc".to_owned();
        truncate_message(&mut s, 3);
        assert_eq!(s, "abc");
    }
}
