//! The session log: append-only JSON Lines, one file per session (DESIGN C12).
//!
//! Two events are written, one line each:
//!
//! - `{"type":"tool/call","callId":…,"name":…,"arguments":"<raw JSON text>"}`
//! - `{"type":"tool/result","callId":…,"content":[…],"isError":…,"error":{"code":…}?,"meta":…?}`
//!
//! The value is never written, nor the error message: only what a presenter
//! may see. Each line is written with one `write_all` call under a lock, so
//! parallel calls never interleave inside a line, and it reaches the OS
//! before the call returns (nothing is buffered in the process);
//! [`SessionLog::with_fsync`] also syncs it to disk.
//!
//! Reading ([`read_log`], [`LogEvents`]) skips a torn or corrupt line,
//! reports it (line number and reason), and keeps every complete event
//! before and after it. A crash mid-write leaves a torn last line; when the
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
use std::sync::Mutex;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::content::ContentBlock;
use crate::result::{ErrorCode, ToolOutcome};

/// An append-only JSON Lines session log. `Send + Sync`: one log is shared
/// by every call of a registry.
#[derive(Debug)]
pub struct SessionLog {
    path: PathBuf,
    writer: Mutex<Writer>,
    fsync: bool,
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PersistedError {
    /// The code.
    pub code: ErrorCode,
}

/// One event of a session log.
///
/// Its JSON is `{"type": "tool/call" | "tool/result", …}` as in the module
/// docs; unknown fields are ignored.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type")]
pub enum LogEvent {
    /// A call, logged before it runs.
    #[serde(rename = "tool/call", rename_all = "camelCase")]
    Call {
        /// The call's id.
        call_id: String,
        /// The tool's name.
        name: String,
        /// The raw arguments text, as the model sent it.
        arguments: String,
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
        /// The meta, when the tool projects one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        meta: Option<Value>,
    },
}

/// Reads an event in one pass. A derived internally tagged enum would
/// buffer every field before choosing the variant; replay reads every line
/// of a log, so the fields are read flat and checked after.
impl<'de> Deserialize<'de> for LogEvent {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::Error;

        #[derive(Deserialize)]
        enum Type {
            #[serde(rename = "tool/call")]
            Call,
            #[serde(rename = "tool/result")]
            Result,
        }

        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct Wire {
            #[serde(rename = "type")]
            kind: Type,
            call_id: String,
            name: Option<String>,
            arguments: Option<String>,
            content: Option<Vec<ContentBlock>>,
            is_error: Option<bool>,
            error: Option<PersistedError>,
            meta: Option<Value>,
        }

        let wire = Wire::deserialize(deserializer)?;
        Ok(match wire.kind {
            Type::Call => LogEvent::Call {
                call_id: wire.call_id,
                name: wire.name.ok_or_else(|| D::Error::missing_field("name"))?,
                arguments: wire
                    .arguments
                    .ok_or_else(|| D::Error::missing_field("arguments"))?,
            },
            Type::Result => LogEvent::Result {
                call_id: wire.call_id,
                content: wire
                    .content
                    .ok_or_else(|| D::Error::missing_field("content"))?,
                is_error: wire
                    .is_error
                    .ok_or_else(|| D::Error::missing_field("isError"))?,
                error: wire.error,
                meta: wire.meta,
            },
        })
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
            path,
            writer: Mutex::new(Writer { file, torn }),
            fsync: false,
        })
    }

    /// Also syncs each event to disk (`fdatasync`) before the call returns:
    /// slower, but an event survives a power loss once its call returned.
    pub fn with_fsync(mut self, fsync: bool) -> Self {
        self.fsync = fsync;
        self
    }

    /// Whether each event is synced to disk.
    pub fn fsyncs(&self) -> bool {
        self.fsync
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends a `tool/call` event.
    pub fn record_call(&self, call_id: &str, name: &str, arguments: &str) -> io::Result<()> {
        self.append(&EventRef::Call {
            call_id,
            name,
            arguments,
        })
    }

    /// Appends the `tool/result` event of an outcome: content, isError,
    /// error code and meta; never the value or the error message.
    pub fn record_result(&self, outcome: &ToolOutcome) -> io::Result<()> {
        self.append(&EventRef::Result {
            call_id: outcome.call_id(),
            content: outcome.content(),
            is_error: outcome.is_error(),
            error: outcome.error().map(|e| ErrorRef { code: &e.code }),
            meta: outcome.meta(),
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
        line.push(b'\n');
        let mut writer = self.writer.lock().unwrap_or_else(|p| p.into_inner());
        let bytes = if writer.torn { &line[..] } else { &line[1..] };
        // One `write_all` per event, under the lock: lines never interleave.
        if let Err(e) = writer.file.write_all(bytes) {
            // Part of the line may have been written: end it before the next one.
            writer.torn = true;
            return Err(e);
        }
        writer.torn = false;
        if self.fsync {
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
pub enum LogProblemKind {
    /// The last line has no newline and does not parse: a write cut short
    /// by a crash.
    Torn,
    /// A complete line that is not a valid event.
    Corrupt,
}

/// A line of a log that could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
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

/// What reading a log found.
#[derive(Debug, Clone, Default)]
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
        }
    }
}

impl<R> LogEvents<R> {
    /// The 1-based number of the line last read: the line of the item
    /// [`next`](Iterator::next) returned last.
    pub fn line(&self) -> usize {
        self.line
    }
}

impl<R: BufRead> Iterator for LogEvents<R> {
    type Item = io::Result<Result<LogEvent, LogProblem>>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            self.buf.clear();
            match self.reader.read_until(b'\n', &mut self.buf) {
                Err(e) => return Some(Err(e)),
                Ok(0) => return None,
                Ok(_) => {}
            }
            self.line += 1;
            let complete = self.buf.last() == Some(&b'\n');
            let text = self.buf.trim_ascii();
            if text.is_empty() {
                continue;
            }
            return Some(Ok(match serde_json::from_slice::<LogEvent>(text) {
                Ok(event) => Ok(event),
                Err(e) if complete => Err(LogProblem {
                    line: self.line,
                    kind: LogProblemKind::Corrupt,
                    reason: format!("not a valid event, skipped: {e}"),
                }),
                Err(e) => Err(LogProblem {
                    line: self.line,
                    kind: LogProblemKind::Torn,
                    reason: format!(
                        "torn line (the file ends without a newline after {} bytes of it, as a crash mid-write leaves it), skipped: {e}",
                        self.buf.len()
                    ),
                }),
            }));
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
                meta: None
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
        assert!(log.writer.lock().unwrap().torn);
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
