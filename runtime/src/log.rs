//! The session log: append-only JSON Lines, one file per session (DESIGN C12).
//!
//! Two events are written, one line each:
//!
//! - `{"type":"tool/call","callId":…,"name":…,"arguments":"<raw JSON text>"}`
//! - `{"type":"tool/result","callId":…,"content":[…],"isError":…,"error":{"code":…}?,"meta":…?}`
//!
//! The value is never written, nor the error message: only what a presenter
//! may see. Each line is written with one `write` call under a lock, so
//! parallel calls never interleave inside a line, and it reaches the OS
//! before the call returns; [`SessionLog::with_fsync`] also syncs it to disk.
//! Reading skips a torn or corrupt line, reports it (line number and
//! reason), and keeps every complete event before and after it.
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
use std::io::{self, BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::content::ContentBlock;
use crate::result::{ErrorCode, ToolOutcome};

/// An append-only JSON Lines session log.
#[derive(Debug)]
pub struct SessionLog {
    path: PathBuf,
    file: Mutex<File>,
    fsync: bool,
}

/// The persisted error: its code only (the message is not persisted).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PersistedError {
    /// The code.
    pub code: ErrorCode,
}

/// One event of a session log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
    /// Opens `path` for appending, creating it (and its directory) if missing.
    pub fn create(path: impl AsRef<Path>) -> io::Result<Self> {
        let path = path.as_ref().to_path_buf();
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent)?;
        }
        let file = OpenOptions::new().create(true).append(true).open(&path)?;
        Ok(SessionLog {
            path,
            file: Mutex::new(file),
            fsync: false,
        })
    }

    /// Also syncs each event to disk before the call returns.
    pub fn with_fsync(mut self, fsync: bool) -> Self {
        self.fsync = fsync;
        self
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

    fn append(&self, event: &EventRef<'_>) -> io::Result<()> {
        let mut line = serde_json::to_vec(event)?;
        line.push(b'\n');
        let mut file = self.file.lock().unwrap_or_else(|p| p.into_inner());
        file.write_all(&line)?;
        if self.fsync {
            file.sync_data()?;
        }
        Ok(())
    }
}

/// A line of a log that could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogProblem {
    /// 1-based line number.
    pub line: usize,
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
/// problem; an I/O error ends the stream.
pub struct LogEvents<R> {
    reader: R,
    line: usize,
    buf: Vec<u8>,
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
    /// Streams a log from any reader.
    pub fn new(reader: R) -> Self {
        LogEvents {
            reader,
            line: 0,
            buf: Vec::new(),
        }
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
            let text = trim_ascii(&self.buf);
            if text.is_empty() {
                continue;
            }
            let parsed = serde_json::from_slice::<LogEvent>(text);
            return Some(Ok(match parsed {
                Ok(event) => Ok(event),
                Err(e) => Err(LogProblem {
                    line: self.line,
                    reason: if complete {
                        format!("not a valid event: {e}")
                    } else {
                        format!(
                            "torn line (no newline at the end of the file, {} bytes): {e}",
                            self.buf.len()
                        )
                    },
                }),
            }));
        }
    }
}

fn trim_ascii(bytes: &[u8]) -> &[u8] {
    bytes.trim_ascii()
}
