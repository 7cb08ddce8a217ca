//! The session log: append-only JSON Lines, one file per session (C12 in `docs/contract.md`).
//!
//! Four events are written, one line each:
//!
//! - `{"type":"tool/call","callId":…,"name":…,"arguments":"<raw JSON text>","dialect":…?}`:
//!   `dialect` (e.g. `"openai"`) when the call was made with
//!   [`CallOptions::with_dialect`](crate::CallOptions::with_dialect): the
//!   [`ArgumentDialect`](crate::ArgumentDialect)'s name, so replay reads
//!   the raw arguments as the live call did;
//! - `{"type":"tool/result","callId":…,"content":[…],"isError":…,"error":{"code":…}?,"meta":…?}`
//! - `{"type":"tool/nested-call","callId":…,"parentCallId":…?,"name":…,"arguments":"<JSON text>"}`:
//!   a call made by a program (a tool calling another through its
//!   [`ToolContext`](crate::ToolContext)); its id is
//!   `<parentCallId>:nested:<n>`, so a reader can tie it to its parent;
//! - `{"type":"tool/nested-result","callId":…,"parentCallId":…?,"content":[…],"isError":…,"error":{"code":…}?,"meta":…?}`:
//!   its result; `meta` only for the calls of a program the model wrote
//!   (Code Mode), which are shown to a person call by call (a Rust
//!   program's calls compute none).
//!
//! - `{"type":"tool/approval","callId":…,"question":…,"decision":"approved"|"denied"|"dismissed"|"failed"|"unanswered"|"unavailable"}`:
//!   a person's decision on a call that needed approval, written when it
//!   is made (before the call runs, or does not).
//!
//! A meta whose JSON is `null` is written as `"meta":null` and read back as
//! a present `null` meta, so a replayed card sees what the live one saw.
//!
//! Every event written also says when: `"timeMs"`, the writer's wall clock
//! in milliseconds since the Unix epoch, last in its line. Several logs of
//! one session (the replicas of a server behind a load balancer each write
//! their own) are read as one in that order ([`Replay::merged`](crate::replay::Replay::merged));
//! [`LogEvents::time_ms`] gives it, and an event without one (an older
//! writer's) is read as before.
//!
//! The value is never written, nor the error message: only what a presenter
//! may see. Each line is written with one `write_all` call under a lock, so
//! parallel calls never interleave inside a line, and it reaches the OS
//! before the call returns (nothing is buffered in the process);
//! [`SessionLog::with_fsync`] also syncs it to disk.
//!
//! Reading ([`read_log`], [`LogEvents`]) skips a torn or corrupt line,
//! reports it (line number and reason), and keeps every complete event
//! before and after it. A line longer than [`MAX_LINE_BYTES`] is skipped
//! the same way without being held in memory. An event of a `type` this
//! version does not know (written by a newer toolprism) is not corruption:
//! it is skipped with a [`LogProblemKind::UnknownEvent`] note, so an old
//! reader still replays everything it understands. A crash mid-write leaves a torn last line; when the
//! log is opened again, the next event starts on a new line, so the torn
//! one costs only itself. [`replay`](crate::replay) draws the cards again
//! from a log.
//!
//! ```
//! use toolprism::log::{LogEvent, SessionLog, read_log};
//! let dir = tempfile::tempdir().unwrap();
//! let path = dir.path().join("session.jsonl");
//! let log = SessionLog::create(&path).unwrap();
//! log.record_call("c1", "echo", r#"{"text":"hi"}"#).unwrap();
//! let read = read_log(&path).unwrap();
//! assert!(matches!(&read.events[0], LogEvent::Call { name, .. } if name == "echo"));
//! assert!(read.problems.is_empty());
//! ```

use std::fs::{File, OpenOptions};
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::content::ContentBlock;
use crate::error::ErrorCode;
use crate::result::{Approval, ApprovalDecision, ToolResult};

/// The longest line a reader holds in memory: 64 MiB. A longer line is
/// skipped and reported, never buffered whole.
pub const MAX_LINE_BYTES: usize = 64 << 20;

/// An append-only JSON Lines session log. A cheap handle (an `Arc`
/// inside): clones append to the same file under the same lock, so one log
/// is shared by every call of a registry, and a caller can hand it to one
/// call ([`CallOptions::with_log`](crate::CallOptions::with_log)).
#[derive(Debug, Clone)]
pub struct SessionLog {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    path: PathBuf,
    writer: Mutex<Writer>,
    fsync: AtomicBool,
}

#[derive(Debug)]
struct Writer {
    file: File,
    /// The file does not end with a newline (a torn line from a crash or a
    /// failed write): the next event starts with one, so it gets a line
    /// of its own.
    torn: bool,
}

/// The persisted error: its code only (the message is not persisted).
///
/// ```
/// use toolprism::ErrorCode;
/// use toolprism::log::PersistedError;
/// let error = PersistedError::new(ErrorCode::Denied);
/// assert_eq!(serde_json::to_value(&error).unwrap(), serde_json::json!({"code": "DENIED"}));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct PersistedError {
    /// The code.
    pub code: ErrorCode,
}

impl PersistedError {
    /// The persisted form of an error with this code.
    pub fn new(code: ErrorCode) -> Self {
        PersistedError { code }
    }
}

/// One event of a session log.
///
/// Its JSON is `{"type": "tool/call" | "tool/result" | "tool/nested-call" |
/// "tool/nested-result", …}` as in the module docs; unknown fields are
/// ignored.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type")]
#[non_exhaustive]
pub enum LogEvent {
    /// A call from the model, logged before it runs.
    #[serde(rename = "tool/call", rename_all = "camelCase")]
    Call {
        /// The call's id.
        call_id: String,
        /// The tool's name.
        name: String,
        /// The raw arguments text, as the model sent it.
        arguments: String,
        /// The dialect the arguments were sent in, when not the canonical
        /// one (an [`ArgumentDialect`](crate::ArgumentDialect)'s name).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        dialect: Option<String>,
    },
    /// A result: what is persisted, never the value.
    #[serde(rename = "tool/result", rename_all = "camelCase")]
    Result {
        /// The call's id.
        call_id: String,
        /// What the model read.
        content: Vec<ContentBlock>,
        /// Whether the call failed.
        is_error: bool,
        /// The error code, failures only.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<PersistedError>,
        /// The meta, when the tool projects one (`Some(Value::Null)` for a
        /// `null` meta).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        meta: Option<Value>,
    },
    /// A call made by a program, logged before it runs.
    #[serde(rename = "tool/nested-call", rename_all = "camelCase")]
    NestedCall {
        /// The call's id: `<parent>:nested:<n>`, or `nested:<n>` without one.
        call_id: String,
        /// The call of the tool that made it, when a tool made it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        parent_call_id: Option<String>,
        /// The tool's name.
        name: String,
        /// The arguments, as JSON text.
        arguments: String,
    },
    /// A person's decision on a call that needed approval.
    #[serde(rename = "tool/approval", rename_all = "camelCase")]
    Approval {
        /// The call's id.
        call_id: String,
        /// What the person was asked.
        question: String,
        /// What came of it.
        decision: ApprovalDecision,
    },
    /// A nested call's result: content, error code and, for a Code Mode
    /// program's call, meta; never the value.
    #[serde(rename = "tool/nested-result", rename_all = "camelCase")]
    NestedResult {
        /// The call's id.
        call_id: String,
        /// The call of the tool that made it, when a tool made it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        parent_call_id: Option<String>,
        /// What a model would have read.
        content: Vec<ContentBlock>,
        /// Whether the call failed.
        is_error: bool,
        /// The error code, failures only.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<PersistedError>,
        /// The meta of a Code Mode program's call, when its tool projects
        /// one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        meta: Option<Value>,
    },
}

/// An event as written, read flat in one pass (a derived internally tagged
/// enum would buffer every field before choosing the variant, and replay
/// reads every line of a log); its `type` is checked after.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Wire {
    #[serde(rename = "type")]
    kind: String,
    call_id: String,
    parent_call_id: Option<String>,
    name: Option<String>,
    arguments: Option<String>,
    dialect: Option<String>,
    content: Option<Vec<ContentBlock>>,
    is_error: Option<bool>,
    error: Option<PersistedError>,
    #[serde(default, deserialize_with = "crate::result::present")]
    meta: Option<Value>,
    question: Option<String>,
    decision: Option<ApprovalDecision>,
    time_ms: Option<u64>,
}

/// Why a well-formed line is not an event this version reads.
enum Unread {
    /// A `type` this version does not know.
    UnknownType(String),
    /// A known type missing a field it needs.
    Missing(&'static str),
}

impl Wire {
    fn into_event(self) -> Result<LogEvent, Unread> {
        fn need<T>(field: Option<T>, name: &'static str) -> Result<T, Unread> {
            field.ok_or(Unread::Missing(name))
        }
        Ok(match self.kind.as_str() {
            "tool/call" => LogEvent::Call {
                call_id: self.call_id,
                name: need(self.name, "name")?,
                arguments: need(self.arguments, "arguments")?,
                dialect: self.dialect,
            },
            "tool/result" => LogEvent::Result {
                call_id: self.call_id,
                content: need(self.content, "content")?,
                is_error: need(self.is_error, "isError")?,
                error: self.error,
                meta: self.meta,
            },
            "tool/nested-call" => LogEvent::NestedCall {
                call_id: self.call_id,
                parent_call_id: self.parent_call_id,
                name: need(self.name, "name")?,
                arguments: need(self.arguments, "arguments")?,
            },
            "tool/approval" => LogEvent::Approval {
                call_id: self.call_id,
                question: need(self.question, "question")?,
                decision: need(self.decision, "decision")?,
            },
            "tool/nested-result" => LogEvent::NestedResult {
                call_id: self.call_id,
                parent_call_id: self.parent_call_id,
                content: need(self.content, "content")?,
                is_error: need(self.is_error, "isError")?,
                error: self.error,
                meta: self.meta,
            },
            _ => return Err(Unread::UnknownType(self.kind)),
        })
    }
}

impl<'de> Deserialize<'de> for LogEvent {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        match Wire::deserialize(deserializer)?.into_event() {
            Ok(event) => Ok(event),
            Err(Unread::Missing(field)) => Err(D::Error::missing_field(field)),
            Err(Unread::UnknownType(kind)) => Err(D::Error::custom(format_args!(
                "unknown event type \"{}\"",
                kind.escape_debug()
            ))),
        }
    }
}

#[derive(Serialize)]
#[serde(tag = "type")]
enum EventRef<'a> {
    #[serde(rename = "tool/call", rename_all = "camelCase")]
    Call {
        call_id: &'a str,
        name: &'a str,
        arguments: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        dialect: Option<&'a str>,
    },
    #[serde(rename = "tool/result", rename_all = "camelCase")]
    Result {
        call_id: &'a str,
        content: &'a [ContentBlock],
        is_error: bool,
        #[serde(skip_serializing_if = "Option::is_none")]
        error: Option<ErrorRef<'a>>,
        #[serde(skip_serializing_if = "Option::is_none")]
        meta: Option<&'a Value>,
    },
    #[serde(rename = "tool/nested-call", rename_all = "camelCase")]
    NestedCall {
        call_id: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        parent_call_id: Option<&'a str>,
        name: &'a str,
        arguments: &'a str,
    },
    #[serde(rename = "tool/approval", rename_all = "camelCase")]
    Approval {
        call_id: &'a str,
        question: &'a str,
        decision: ApprovalDecision,
    },
    #[serde(rename = "tool/nested-result", rename_all = "camelCase")]
    NestedResult {
        call_id: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        parent_call_id: Option<&'a str>,
        content: &'a [ContentBlock],
        is_error: bool,
        #[serde(skip_serializing_if = "Option::is_none")]
        error: Option<ErrorRef<'a>>,
        #[serde(skip_serializing_if = "Option::is_none")]
        meta: Option<&'a Value>,
    },
}

#[derive(Serialize)]
struct ErrorRef<'a> {
    code: &'a ErrorCode,
}

impl SessionLog {
    /// Opens `path` for appending, creating it (and its directory) if
    /// missing. A new file is readable and writable by its owner only
    /// (mode 0600 on Unix): it holds what the model read.
    ///
    /// If the file exists and does not end with a newline (a crash tore its
    /// last line), the next event starts on a new line.
    pub fn create(path: impl AsRef<Path>) -> io::Result<Self> {
        let path = path.as_ref().to_path_buf();
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent)?;
        }
        let mut options = OpenOptions::new();
        options.create(true).append(true).read(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let mut file = options.open(&path)?;
        let torn = ends_torn(&mut file)?;
        Ok(SessionLog {
            inner: Arc::new(Inner {
                path,
                writer: Mutex::new(Writer { file, torn }),
                fsync: AtomicBool::new(false),
            }),
        })
    }

    /// Also syncs each event to disk (`fdatasync`) before the call returns:
    /// slower, but an event survives a power loss once its call returned.
    /// (The setting is the log's, so every clone shares it.)
    pub fn with_fsync(self, fsync: bool) -> Self {
        self.inner.fsync.store(fsync, Ordering::Relaxed);
        self
    }

    /// Whether each event is synced to disk.
    pub fn fsyncs(&self) -> bool {
        self.inner.fsync.load(Ordering::Relaxed)
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    /// Whether two handles append to the same log.
    pub fn same_log(&self, other: &SessionLog) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }

    /// Appends a `tool/call` event.
    pub fn record_call(&self, call_id: &str, name: &str, arguments: &str) -> io::Result<()> {
        self.record_call_in(call_id, name, arguments, None)
    }

    /// Appends a `tool/call` event whose arguments were sent in the
    /// dialect named `dialect` (an [`ArgumentDialect`](crate::ArgumentDialect)'s name).
    pub fn record_call_in(
        &self,
        call_id: &str,
        name: &str,
        arguments: &str,
        dialect: Option<&str>,
    ) -> io::Result<()> {
        self.append(&EventRef::Call {
            call_id,
            name,
            arguments,
            dialect,
        })
    }

    /// Appends a `tool/result` event: content, isError, error code and
    /// meta; never the value or the error message.
    pub fn record_result(
        &self,
        call_id: &str,
        result: &ToolResult,
        error: Option<&ErrorCode>,
    ) -> io::Result<()> {
        self.append(&EventRef::Result {
            call_id,
            content: &result.content,
            is_error: result.is_error,
            error: error.map(|code| ErrorRef { code }),
            meta: result.meta.as_ref(),
        })
    }

    /// Appends a `tool/nested-call` event.
    pub fn record_nested_call(
        &self,
        call_id: &str,
        parent_call_id: Option<&str>,
        name: &str,
        arguments: &str,
    ) -> io::Result<()> {
        self.append(&EventRef::NestedCall {
            call_id,
            parent_call_id,
            name,
            arguments,
        })
    }

    /// Appends a `tool/nested-result` event: content, isError, error code,
    /// and meta when the call has one (a Code Mode program's); never the
    /// value.
    pub fn record_nested_result(
        &self,
        call_id: &str,
        parent_call_id: Option<&str>,
        result: &ToolResult,
        error: Option<&ErrorCode>,
    ) -> io::Result<()> {
        self.append(&EventRef::NestedResult {
            call_id,
            parent_call_id,
            content: &result.content,
            is_error: result.is_error,
            error: error.map(|code| ErrorRef { code }),
            meta: result.meta.as_ref(),
        })
    }

    /// Appends a `tool/approval` event: the question and the decision.
    pub fn record_approval(&self, call_id: &str, approval: &Approval) -> io::Result<()> {
        self.append(&EventRef::Approval {
            call_id,
            question: &approval.question,
            decision: approval.decision,
        })
    }

    /// Appends any event, e.g. to import a session or build a log for a
    /// benchmark. A [`LogEvent`] has no field for a value, so none can be
    /// written this way either.
    pub fn record_event(&self, event: &LogEvent) -> io::Result<()> {
        self.append(event)
    }

    fn append(&self, event: &impl Serialize) -> io::Result<()> {
        // Room for the newline that may go in front.
        let mut line = Vec::with_capacity(256);
        line.push(b'\n');
        serde_json::to_writer(&mut line, event)?;
        // Every event is an object: its time goes in before its `}`.
        if line.last() == Some(&b'}') {
            line.pop();
            let time = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
            line.extend_from_slice(format!(",\"timeMs\":{time}}}").as_bytes());
        }
        line.push(b'\n');
        let mut writer = self.inner.writer.lock().unwrap_or_else(|p| p.into_inner());
        let bytes = if writer.torn { &line[..] } else { &line[1..] };
        // One `write_all` per event, under the lock: lines never interleave.
        if let Err(e) = writer.file.write_all(bytes) {
            // Part of the line may have been written: end it before the next one.
            writer.torn = true;
            return Err(e);
        }
        writer.torn = false;
        if self.fsyncs() {
            writer.file.sync_data()?;
        }
        Ok(())
    }
}

/// Whether a non-empty file's last byte is not a newline.
fn ends_torn(file: &mut File) -> io::Result<bool> {
    let len = file.metadata()?.len();
    if len == 0 {
        return Ok(false);
    }
    // Not a regular file (a pipe, a device): nothing to look at.
    if file.seek(SeekFrom::Start(len - 1)).is_err() {
        return Ok(false);
    }
    let mut last = [0u8; 1];
    let torn = file.read_exact(&mut last).is_ok() && last[0] != b'\n';
    Ok(torn)
}

/// What is wrong with a line that could not be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum LogProblemKind {
    /// The last line has no newline and does not parse: a write cut short
    /// by a crash.
    Torn,
    /// A complete line that is not a valid event (or longer than
    /// [`MAX_LINE_BYTES`]).
    Corrupt,
    /// A well-formed event of a type this version does not know, written by
    /// a newer writer: skipped, not an error.
    UnknownEvent,
}

/// A line of a log that could not be read (made by the reader;
/// `#[non_exhaustive]`).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct LogProblem {
    /// 1-based line number.
    pub line: usize,
    /// Torn or corrupt.
    pub kind: LogProblemKind,
    /// Why it was skipped.
    pub reason: String,
}

impl std::fmt::Display for LogProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "line {}: {}", self.line, self.reason)
    }
}

/// What reading a log found (made by [`read_log`]; `#[non_exhaustive]`).
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct LogRead {
    /// Every complete event, in order.
    pub events: Vec<LogEvent>,
    /// Every line skipped, and why.
    pub problems: Vec<LogProblem>,
}

/// Reads a whole log; see [`LogEvents`] to stream one.
pub fn read_log(path: impl AsRef<Path>) -> io::Result<LogRead> {
    let mut read = LogRead::default();
    for item in LogEvents::open(path)? {
        match item? {
            Ok(event) => read.events.push(event),
            Err(problem) => read.problems.push(problem),
        }
    }
    Ok(read)
}

/// Streams a log's events: each item is an event or a skipped line's
/// problem; an I/O error ends the stream. Blank lines are skipped silently.
///
/// ```
/// use toolprism::log::{LogEvents, LogProblemKind};
/// let log = "{\"type\":\"tool/call\",\"callId\":\"1\",\"name\":\"a\",\"arguments\":\"{}\"}\n\
///            not json\n\
///            {\"type\":\"tool/result\",\"callId\":\"1\",\"content\":[],\"isError\":false}\n\
///            {\"type\":\"tool/ca";
/// let items: Vec<_> = LogEvents::new(log.as_bytes()).map(Result::unwrap).collect();
/// assert!(items[0].is_ok() && items[2].is_ok());
/// let corrupt = items[1].as_ref().unwrap_err();
/// assert_eq!((corrupt.line, corrupt.kind), (2, LogProblemKind::Corrupt));
/// let torn = items[3].as_ref().unwrap_err();
/// assert_eq!((torn.line, torn.kind), (4, LogProblemKind::Torn));
/// ```
pub struct LogEvents<R> {
    reader: R,
    line: usize,
    buf: Vec<u8>,
    time_ms: Option<u64>,
}

impl<R> std::fmt::Debug for LogEvents<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LogEvents")
            .field("line", &self.line)
            .finish_non_exhaustive()
    }
}

impl LogEvents<BufReader<File>> {
    /// Streams the log at `path`.
    pub fn open(path: impl AsRef<Path>) -> io::Result<Self> {
        Ok(Self::new(BufReader::with_capacity(
            1 << 16,
            File::open(path)?,
        )))
    }
}

impl<R: BufRead> LogEvents<R> {
    /// Streams a log from any reader (a file, or bytes in memory).
    pub fn new(reader: R) -> Self {
        LogEvents {
            reader,
            line: 0,
            buf: Vec::new(),
            time_ms: None,
        }
    }
}

impl<R> LogEvents<R> {
    /// The 1-based number of the line last read: the line of the item
    /// [`next`](Iterator::next) returned last.
    pub fn line(&self) -> usize {
        self.line
    }

    /// When the event [`next`](Iterator::next) returned last was written
    /// (`"timeMs"`: milliseconds since the Unix epoch, the writer's
    /// clock); `None` for an event without it (an older writer's) or a
    /// line that was not an event.
    ///
    /// ```
    /// use toolprism::log::LogEvents;
    /// let log = concat!(
    ///     r#"{"type":"tool/call","callId":"1","name":"a","arguments":"{}","timeMs":1765000000123}"#, "\n",
    ///     r#"{"type":"tool/result","callId":"1","content":[],"isError":false}"#, "\n",
    /// );
    /// let mut events = LogEvents::new(log.as_bytes());
    /// events.next();
    /// assert_eq!(events.time_ms(), Some(1765000000123));
    /// events.next();
    /// assert_eq!(events.time_ms(), None);
    /// ```
    pub fn time_ms(&self) -> Option<u64> {
        self.time_ms
    }
}

impl<R: BufRead> LogEvents<R> {
    /// Reads the next line into `buf`, up to [`MAX_LINE_BYTES`]; the rest
    /// of a longer line is read past, not kept. Returns whether the line was
    /// complete (ends with a newline) and whether it was cut, or `None` at
    /// the end.
    fn read_line(&mut self) -> io::Result<Option<(bool, bool)>> {
        self.buf.clear();
        let mut cut = false;
        loop {
            let available = match self.reader.fill_buf() {
                Ok(available) => available,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if available.is_empty() {
                let any = !self.buf.is_empty() || cut;
                return Ok(any.then_some((false, cut)));
            }
            let (piece, done) = match available.iter().position(|&b| b == b'\n') {
                Some(i) => (&available[..=i], true),
                None => (available, false),
            };
            let used = piece.len();
            let room = MAX_LINE_BYTES.saturating_sub(self.buf.len());
            if piece.len() > room {
                cut = true;
            }
            if !cut {
                self.buf.extend_from_slice(piece);
            }
            self.reader.consume(used);
            if done {
                return Ok(Some((true, cut)));
            }
        }
    }
}

impl<R: BufRead> Iterator for LogEvents<R> {
    type Item = io::Result<Result<LogEvent, LogProblem>>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let (complete, cut) = match self.read_line() {
                Err(e) => return Some(Err(e)),
                Ok(None) => return None,
                Ok(Some(read)) => read,
            };
            self.line += 1;
            self.time_ms = None;
            if cut {
                self.buf.clear();
                return Some(Ok(Err(LogProblem {
                    line: self.line,
                    kind: LogProblemKind::Corrupt,
                    reason: format!(
                        "a line longer than {MAX_LINE_BYTES} bytes, which no writer of this log makes; skipped"
                    ),
                })));
            }
            let text = self.buf.trim_ascii();
            if text.is_empty() {
                continue;
            }
            let parsed = serde_json::from_slice::<Wire>(text);
            if let Ok(wire) = &parsed {
                self.time_ms = wire.time_ms;
            }
            let problem = |kind, reason| {
                Some(Ok(Err(LogProblem {
                    line: self.line,
                    kind,
                    reason,
                })))
            };
            return match parsed {
                Ok(wire) => match wire.into_event() {
                    Ok(event) => Some(Ok(Ok(event))),
                    Err(Unread::UnknownType(kind)) => problem(
                        LogProblemKind::UnknownEvent,
                        format!(
                            "an event of type \"{}\", which this version does not know (a newer writer's); skipped",
                            crate::text::cap(&kind, 80).escape_debug()
                        ),
                    ),
                    Err(Unread::Missing(field)) => problem(
                        LogProblemKind::Corrupt,
                        format!("not a valid event, skipped: missing field `{field}`"),
                    ),
                },
                Err(e) if complete => problem(
                    LogProblemKind::Corrupt,
                    format!("not a valid event, skipped: {e}"),
                ),
                Err(e) => problem(
                    LogProblemKind::Torn,
                    format!(
                        "torn line (the file ends without a newline after {} bytes of it, as a crash mid-write leaves it), skipped: {e}",
                        self.buf.len()
                    ),
                ),
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(id: &str) -> LogEvent {
        LogEvent::Call {
            call_id: id.into(),
            name: "t".into(),
            arguments: "{}".into(),
            dialect: None,
        }
    }

    #[test]
    fn events_round_trip_and_bad_ones_are_refused() {
        let result = LogEvent::Result {
            call_id: "r".into(),
            content: vec![
                ContentBlock::text("a"),
                ContentBlock::image("image/png", "AAAA"),
            ],
            is_error: true,
            error: Some(PersistedError {
                code: ErrorCode::Denied,
            }),
            meta: Some(serde_json::json!({"k": [1, 2.5, null]})),
        };
        for event in [call("c"), result] {
            let text = serde_json::to_string(&event).unwrap();
            assert_eq!(serde_json::from_str::<LogEvent>(&text).unwrap(), event);
        }
        let bare = r#"{"type":"tool/result","callId":"r","content":[],"isError":false,"meta":null,"later":1}"#;
        assert_eq!(
            serde_json::from_str::<LogEvent>(bare).unwrap(),
            LogEvent::Result {
                call_id: "r".into(),
                content: vec![],
                is_error: false,
                error: None,
                // Present and null is kept: a unit-struct meta reads back.
                meta: Some(Value::Null)
            }
        );
        for (bad, why) in [
            (r#"{"callId":"1","name":"a","arguments":""}"#, "type"),
            (r#"{"type":"tool/other","callId":"1"}"#, "tool/other"),
            (
                r#"{"type":"tool/call","callId":"1","arguments":""}"#,
                "name",
            ),
            (
                r#"{"type":"tool/call","callId":"1","name":"a"}"#,
                "arguments",
            ),
            (
                r#"{"type":"tool/call","name":"a","arguments":""}"#,
                "callId",
            ),
            (
                r#"{"type":"tool/result","callId":"1","isError":false}"#,
                "content",
            ),
            (
                r#"{"type":"tool/result","callId":"1","content":[]}"#,
                "isError",
            ),
            (
                r#"{"type":"tool/result","callId":"1","content":[{"type":"x"}],"isError":false}"#,
                "x",
            ),
        ] {
            let err = serde_json::from_str::<LogEvent>(bad)
                .unwrap_err()
                .to_string();
            assert!(err.contains(why), "{bad}: {err}");
        }
    }

    #[test]
    fn nested_events_round_trip() {
        for event in [
            LogEvent::NestedCall {
                call_id: "c1:nested:1".into(),
                parent_call_id: Some("c1".into()),
                name: "weather".into(),
                arguments: r#"{"city":"Oslo"}"#.into(),
            },
            LogEvent::NestedResult {
                call_id: "nested:2".into(),
                parent_call_id: None,
                content: vec![ContentBlock::text("Error: no")],
                is_error: true,
                error: Some(PersistedError {
                    code: ErrorCode::parse("UNKNOWN_CITY"),
                }),
                meta: None,
            },
            LogEvent::NestedResult {
                call_id: "c2:nested:1".into(),
                parent_call_id: Some("c2".into()),
                content: vec![ContentBlock::text("12 lines")],
                is_error: false,
                error: None,
                meta: Some(serde_json::json!({"lines": 12})),
            },
        ] {
            let text = serde_json::to_string(&event).unwrap();
            assert_eq!(serde_json::from_str::<LogEvent>(&text).unwrap(), event);
        }
    }

    #[test]
    fn an_unknown_event_type_is_skipped_with_a_note() {
        let log = concat!(
            r#"{"type":"tool/call","callId":"1","name":"a","arguments":"{}"}"#,
            "\n",
            r#"{"type":"tool/handoff","callId":"1","by":"someone"}"#,
            "\n",
            r#"{"type":"tool/result","callId":"1","content":[],"isError":false}"#,
            "\n",
        );
        let items: Vec<_> = LogEvents::new(log.as_bytes()).map(Result::unwrap).collect();
        assert_eq!(items.len(), 3);
        assert!(items[0].is_ok() && items[2].is_ok());
        let note = items[1].as_ref().unwrap_err();
        assert_eq!((note.line, note.kind), (2, LogProblemKind::UnknownEvent));
        assert!(note.reason.contains("tool/handoff"), "{}", note.reason);
    }

    #[test]
    fn a_line_over_the_limit_is_skipped_without_being_kept() {
        let mut log = Vec::new();
        log.extend_from_slice(br#"{"type":"tool/call","callId":"1","name":"a","arguments":""#);
        log.resize(log.len() + MAX_LINE_BYTES + 10, b'x');
        log.extend_from_slice(b"\"}\n");
        log.extend_from_slice(br#"{"type":"tool/call","callId":"2","name":"a","arguments":"{}"}"#);
        log.push(b'\n');
        let mut events = LogEvents::new(std::io::BufReader::new(&log[..]));
        let first = events.next().unwrap().unwrap().unwrap_err();
        assert_eq!((first.line, first.kind), (1, LogProblemKind::Corrupt));
        assert!(events.buf.capacity() <= MAX_LINE_BYTES + (1 << 16));
        let second = events.next().unwrap().unwrap().unwrap();
        assert!(matches!(second, LogEvent::Call { call_id, .. } if call_id == "2"));
        assert!(events.next().is_none());
    }

    #[test]
    fn every_event_written_says_when() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        let log = SessionLog::create(&path).unwrap();
        let before = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis() as u64;
        log.record_event(&call("1")).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let line: Value = serde_json::from_str(text.trim()).unwrap();
        let time = line["timeMs"].as_u64().unwrap();
        assert!(time >= before && time < before + 60_000, "{text}");
        let mut events = LogEvents::open(&path).unwrap();
        assert_eq!(events.next().unwrap().unwrap().unwrap(), call("1"));
        assert_eq!(events.time_ms(), Some(time));
    }

    #[test]
    fn reopening_a_torn_log_starts_a_new_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        let log = SessionLog::create(&path).unwrap();
        log.record_event(&call("1")).unwrap();
        drop(log);
        // A crash mid-write: half an event, no newline.
        let mut file = OpenOptions::new().append(true).open(&path).unwrap();
        file.write_all(br#"{"type":"tool/call","callId":"2","na"#)
            .unwrap();
        drop(file);
        let log = SessionLog::create(&path).unwrap();
        log.record_event(&call("3")).unwrap();
        log.record_event(&call("4")).unwrap();
        let read = read_log(&path).unwrap();
        assert_eq!(read.events, vec![call("1"), call("3"), call("4")]);
        assert_eq!(read.problems.len(), 1);
        assert_eq!(read.problems[0].line, 2);
        assert_eq!(read.problems[0].kind, LogProblemKind::Corrupt);
    }

    #[test]
    fn a_failed_write_does_not_swallow_the_next_event() {
        // /dev/full accepts the open and fails every write with ENOSPC.
        let Ok(log) = SessionLog::create("/dev/full") else {
            return;
        };
        assert!(log.record_event(&call("1")).is_err());
        assert!(log.inner.writer.lock().unwrap().torn);
    }

    #[cfg(unix)]
    #[test]
    fn a_new_log_is_owner_only() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("deep/er/s.jsonl");
        SessionLog::create(&path).unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
}
