//! Replay: a session log drawn again as cards, for UIs (C13 in `docs/contract.md`).
//!
//! A session log holds each call's name and raw arguments and each result's
//! content, `isError`, error code and meta: everything a presenter may see,
//! and never the value. Replay reads it back, matches each result to its
//! call by `callId`, and draws the call card and the result card with the
//! presenters registered **now** in a [`Registry`], through the same code
//! that draws the live cards ([`Registry::present_call`],
//! [`Registry::present_result`]). So a replayed card equals the live one,
//! and a tool that changed its presenters shows its new cards for old calls.
//!
//! Nothing here can fail on a log's content:
//!
//! - a tool no longer registered, arguments or meta that no longer parse,
//!   and a presenter that panics all give the generic card;
//! - a torn or corrupt line, a result whose call is not in the log, a call
//!   id used twice: each is reported as a [`ReplayProblem`] (line number and
//!   reason) and replay goes on with the next line;
//! - a call whose result never came (the session crashed while it ran) is
//!   an entry with no result card.
//!
//! Two ways in: [`replay_log`] reads a whole log into [`Replayed`] (entries
//! in call order, and problems); [`Replay`] streams a log of any size,
//! yielding each entry as soon as its result is read.
//!
//! **Several logs, one session.** The replicas of a server behind a load
//! balancer each write their own log of the same session. [`replay_logs`]
//! and [`Replay::merged`] read them as one: their events in the order they
//! were written (each event's `timeMs`; the logs' own order kept for
//! events written in the same millisecond, or without a time), a result
//! joined to its call by call id whichever log holds each, every entry and
//! problem saying which log it came from ([`ReplayedEntry::log`],
//! [`ReplayProblem::log`]).
//!
//! ```
//! use toolprism::{ContentBlock, NoMeta, Registry, Tool, ToolCall, ToolContext, ToolError, ToolInfo};
//! use toolprism::card::{CallCard, TerminalCall};
//! use toolprism::log::SessionLog;
//! use toolprism::replay::replay_log;
//!
//! #[derive(Clone, serde::Deserialize, schemars::JsonSchema)]
//! struct Args { command: String }
//!
//! struct Run;
//! impl Tool for Run {
//!     type Args = Args;
//!     type Value = String;
//!     type Meta = NoMeta;
//!     const INFO: ToolInfo = ToolInfo::new("run", "Run a command.");
//!     async fn execute(&self, args: Args, _: &ToolContext<'_>) -> Result<String, ToolError> {
//!         Ok(format!("ran {}", args.command))
//!     }
//!     fn render(_: &Args, out: &String) -> Vec<ContentBlock> {
//!         vec![ContentBlock::text(out)]
//!     }
//!     fn present_call(args: &Args) -> Option<CallCard> {
//!         Some(CallCard::Terminal(TerminalCall::new(&args.command)))
//!     }
//! }
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let dir = tempfile::tempdir().unwrap();
//! let path = dir.path().join("session.jsonl");
//! let registry = Registry::builder()
//!     .tool(Run)
//!     .log(SessionLog::create(&path).unwrap())
//!     .build()
//!     .unwrap();
//! let live = registry.call(ToolCall::new("c1", "run", r#"{"command":"ls"}"#)).await;
//!
//! // Later, maybe in another process: the log alone draws the same cards.
//! let replayed = replay_log(&path, &registry).unwrap();
//! assert!(replayed.problems.is_empty());
//! let entry = &replayed.entries[0];
//! assert_eq!((entry.call_id.as_str(), entry.name.as_str()), ("c1", "run"));
//! assert_eq!(Some(&entry.call_card), live.call_card());
//! assert_eq!(entry.result_card.as_ref(), live.result_card());
//! assert_eq!(entry.content, [ContentBlock::text("ran ls")]);
//!
//! // With the tool gone, the same log still replays, as generic cards.
//! let empty = Registry::builder().build().unwrap();
//! let generic = replay_log(&path, &empty).unwrap();
//! assert_eq!(generic.entries[0].call_card.tag(), "generic");
//! # });
//! ```

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::fs::File;
use std::io::{self, BufRead, BufReader};
use std::path::Path;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::argument_dialect::ArgumentDialect;
use crate::card::{CallCard, ResultCard};
use crate::content::ContentBlock;
use crate::error::ErrorCode;
use crate::log::{LogEvent, LogEvents, LogProblem, LogProblemKind, PersistedError};
use crate::registry::Registry;
use crate::result::{Approval, ToolResult};

/// One call of a log with its cards, drawn again.
///
/// Serialized (camelCase) for a UI as
/// `{callId, name, arguments, callCard, resultCard, content, isError, errorCode?, meta?, callLine, resultLine?, parentCallId?, nested?}`;
/// `resultCard` is `null` for a call whose result never came.
///
/// Nested calls (`tool/nested-call` events: a program's calls, a tool
/// calling another) are entries too, with `nested: true` and the calling
/// tool's call id in `parentCallId`; they had no live cards and no meta, so
/// their cards are drawn from their arguments and content.
///
/// Made by replay, or read from its JSON (`#[non_exhaustive]`: replay adds
/// fields, with defaults in the JSON).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ReplayedEntry {
    /// The call's id.
    pub call_id: String,
    /// The tool's name, as called.
    pub name: String,
    /// The raw arguments text, as the model sent it.
    pub arguments: String,
    /// The call card, drawn with the presenters registered now.
    pub call_card: CallCard,
    /// The result card, drawn with the presenters registered now; `None`
    /// when the log holds no result for the call.
    pub result_card: Option<ResultCard>,
    /// What the model read; empty when there is no result.
    pub content: Vec<ContentBlock>,
    /// Whether the call failed; `false` when there is no result.
    pub is_error: bool,
    /// The error code of a failed call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_code: Option<ErrorCode>,
    /// The persisted meta, when the tool projected one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Value>,
    /// The 1-based line of the `tool/call` event.
    pub call_line: usize,
    /// The 1-based line of the `tool/result` event, when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_line: Option<usize>,
    /// For a nested call made by a tool, that tool's call id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_call_id: Option<String>,
    /// Whether a program made this call (a nested call) rather than the model.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub nested: bool,
    /// A person's decision on the call, when it needed approval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval: Option<Approval>,
    /// When the call was logged (its event's `timeMs`: milliseconds since
    /// the Unix epoch), when the log says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_ms: Option<u64>,
    /// Which of the logs read together holds its call (0-based, in the
    /// order given to [`replay_logs`]; 0 for a single log).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub log: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl ReplayedEntry {
    /// Whether the log holds a result for this call.
    pub fn has_result(&self) -> bool {
        self.result_line.is_some()
    }
}

/// What kind of problem replay skipped over.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ReplayProblemKind {
    /// An event of a type this version does not know (a newer writer's):
    /// skipped, with this note.
    UnknownEvent,
    /// The last line was cut short (a crash mid-write).
    TornLine,
    /// A line that is not a valid event.
    CorruptLine,
    /// A `tool/result` whose call does not come before it in the log.
    ResultWithoutCall,
    /// A second `tool/result` for a call that already has one.
    DuplicateResult,
    /// A `tool/call` whose id an earlier call already used.
    DuplicateCallId,
    /// A `tool/approval` for no call waiting for its result.
    ApprovalWithoutCall,
}

impl ReplayProblemKind {
    /// A few words naming the problem, for a reader: `"torn line"`,
    /// `"corrupt line"`, `"result without call"`, …
    ///
    /// ```
    /// use toolprism::replay::ReplayProblemKind;
    /// assert_eq!(ReplayProblemKind::TornLine.label(), "torn line");
    /// ```
    pub fn label(self) -> &'static str {
        match self {
            ReplayProblemKind::TornLine => "torn line",
            ReplayProblemKind::CorruptLine => "corrupt line",
            ReplayProblemKind::ResultWithoutCall => "result without call",
            ReplayProblemKind::DuplicateResult => "duplicate result",
            ReplayProblemKind::DuplicateCallId => "duplicate call id",
            ReplayProblemKind::UnknownEvent => "unknown event",
            ReplayProblemKind::ApprovalWithoutCall => "approval without call",
        }
    }
}

/// Something replay skipped over or worked around, with where and why.
///
/// ```
/// use toolprism::replay::{ReplayProblem, ReplayProblemKind};
/// let problem = ReplayProblem::new(7, ReplayProblemKind::DuplicateResult, "a second result for c1")
///     .with_call_id("c1");
/// assert_eq!(problem.to_string(), "line 7: a second result for c1");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ReplayProblem {
    /// The 1-based line it was found at.
    pub line: usize,
    /// Which of the logs read together it was found in (0-based, in the
    /// order given to [`replay_logs`]; 0 for a single log).
    pub log: usize,
    /// What kind of problem.
    pub kind: ReplayProblemKind,
    /// The call id involved, when the line could be read.
    pub call_id: Option<String>,
    /// What happened, in a sentence.
    pub reason: String,
}

impl ReplayProblem {
    /// A problem of this `kind` at the 1-based `line`, `reason` saying
    /// what happened; no call id.
    pub fn new(line: usize, kind: ReplayProblemKind, reason: impl Into<String>) -> Self {
        ReplayProblem {
            line,
            log: 0,
            kind,
            call_id: None,
            reason: reason.into(),
        }
    }

    /// The same problem, about the call `call_id`.
    pub fn with_call_id(mut self, call_id: impl Into<String>) -> Self {
        self.call_id = Some(call_id.into());
        self
    }
}

impl fmt::Display for ReplayProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.reason)
    }
}

impl From<LogProblem> for ReplayProblem {
    fn from(problem: LogProblem) -> Self {
        ReplayProblem {
            line: problem.line,
            log: 0,
            kind: match problem.kind {
                LogProblemKind::Torn => ReplayProblemKind::TornLine,
                LogProblemKind::UnknownEvent => ReplayProblemKind::UnknownEvent,
                LogProblemKind::Corrupt => ReplayProblemKind::CorruptLine,
            },
            call_id: None,
            reason: problem.reason,
        }
    }
}

/// One item of a [`Replay`] stream.
#[derive(Debug, Clone, PartialEq)]
pub enum ReplayItem {
    /// A call with its cards.
    Entry(Box<ReplayedEntry>),
    /// A problem replay skipped over.
    Problem(ReplayProblem),
}

/// A whole log replayed: see [`replay_log`].
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct Replayed {
    /// Every call, in the order of the calls in the log.
    pub entries: Vec<ReplayedEntry>,
    /// Every problem, in the order found.
    pub problems: Vec<ReplayProblem>,
}

impl Replayed {
    /// A replay of these `entries` and `problems` (for a reader that
    /// streams a [`Replay`] and gathers it itself).
    pub fn new(entries: Vec<ReplayedEntry>, problems: Vec<ReplayProblem>) -> Self {
        Replayed { entries, problems }
    }
}

/// Replays the log at `path` with `registry`'s presenters: every entry, in
/// call order, and every problem. Only an I/O error (the file cannot be
/// read) is an `Err`; see [`Replay`] to stream a log instead.
pub fn replay_log(path: impl AsRef<Path>, registry: &Registry) -> io::Result<Replayed> {
    Replay::open(path, registry)?.into_replayed()
}

/// Replays the logs at `paths` as one session (see [several logs, one
/// session](self#several-logs-one-session)): every entry, in the order
/// the calls were logged, and every problem. Only an I/O error (a file
/// cannot be read) is an `Err`.
///
/// ```
/// use toolprism::Registry;
/// use toolprism::replay::replay_logs;
///
/// let dir = tempfile::tempdir().unwrap();
/// let (a, b) = (dir.path().join("a.jsonl"), dir.path().join("b.jsonl"));
/// std::fs::write(&a, concat!(
///     r#"{"type":"tool/call","callId":"a:1","name":"t","arguments":"{}","timeMs":100}"#, "\n",
///     r#"{"type":"tool/result","callId":"a:1","content":[],"isError":false,"timeMs":300}"#, "\n",
/// )).unwrap();
/// std::fs::write(&b, concat!(
///     r#"{"type":"tool/call","callId":"b:1","name":"t","arguments":"{}","timeMs":200}"#, "\n",
///     r#"{"type":"tool/result","callId":"b:1","content":[],"isError":false,"timeMs":250}"#, "\n",
/// )).unwrap();
/// let registry = Registry::builder().build().unwrap();
/// let replayed = replay_logs(&[&a, &b], &registry).unwrap();
/// let calls: Vec<(&str, usize)> = replayed.entries.iter().map(|e| (e.call_id.as_str(), e.log)).collect();
/// assert_eq!(calls, [("a:1", 0), ("b:1", 1)]);
/// assert!(replayed.problems.is_empty());
/// ```
pub fn replay_logs<P: AsRef<Path>>(paths: &[P], registry: &Registry) -> io::Result<Replayed> {
    let mut logs = Vec::with_capacity(paths.len());
    for path in paths {
        logs.push(LogEvents::open(path)?);
    }
    Replay::merged(logs, registry).into_replayed()
}

/// Where an event was read: which log, which line, and when it was
/// written.
#[derive(Clone, Copy, Default)]
struct At {
    log: usize,
    line: usize,
    time: Option<u64>,
}

/// The events of one log, or of several merged in time order.
enum Events<R> {
    One(LogEvents<R>),
    Many(Merge<R>),
}

/// Several logs' events in the order they were written: each log's next
/// event waits at its head; the earliest head goes first (the first log's
/// on a tie). A line that is not an event goes out as soon as it is read.
struct Merge<R> {
    logs: Vec<LogEvents<R>>,
    heads: Vec<Option<(At, u64, LogEvent)>>,
    done: Vec<bool>,
    /// The last time each log said: an event without one is as late.
    last: Vec<u64>,
}

/// What the event sources give.
type Read = io::Result<(At, Result<LogEvent, LogProblem>)>;

impl<R: BufRead> Merge<R> {
    fn next(&mut self) -> Option<Read> {
        for i in 0..self.logs.len() {
            while !self.done[i] && self.heads[i].is_none() {
                match self.logs[i].next() {
                    None => self.done[i] = true,
                    Some(Err(e)) => {
                        self.done[i] = true;
                        return Some(Err(e));
                    }
                    Some(Ok(Err(problem))) => {
                        let at = At {
                            log: i,
                            line: problem.line,
                            time: None,
                        };
                        return Some(Ok((at, Err(problem))));
                    }
                    Some(Ok(Ok(event))) => {
                        let time = self.logs[i].time_ms();
                        let order = time.unwrap_or(self.last[i]).max(self.last[i]);
                        self.last[i] = order;
                        let at = At {
                            log: i,
                            line: self.logs[i].line(),
                            time,
                        };
                        self.heads[i] = Some((at, order, event));
                    }
                }
            }
        }
        let first = self
            .heads
            .iter()
            .enumerate()
            .filter_map(|(i, head)| head.as_ref().map(|(_, order, _)| (*order, i)))
            .min()?
            .1;
        let (at, _, event) = self.heads[first].take()?;
        Some(Ok((at, Ok(event))))
    }
}

impl<R: BufRead> Events<R> {
    fn next(&mut self) -> Option<Read> {
        match self {
            Events::One(events) => match events.next()? {
                Err(e) => Some(Err(e)),
                Ok(item) => {
                    let at = At {
                        log: 0,
                        line: events.line(),
                        time: events.time_ms(),
                    };
                    Some(Ok((at, item)))
                }
            },
            Events::Many(merge) => merge.next(),
        }
    }
}

impl<R> Events<R> {
    fn line(&self) -> usize {
        match self {
            Events::One(events) => events.line(),
            Events::Many(merge) => merge.logs.iter().map(LogEvents::line).sum(),
        }
    }
}

/// A call read from the log, waiting for its result.
struct OpenCall {
    line: usize,
    /// Which log, and when.
    log: usize,
    time: Option<u64>,
    name: String,
    arguments: String,
    /// The dialect the arguments were sent in, when the log says and the
    /// registry knows it.
    dialect: Option<Arc<dyn ArgumentDialect>>,
    /// `Some` for a nested call: its parent's id, when it has one.
    nested: Option<Option<String>>,
    /// A person's decision on it, when it needed approval.
    approval: Option<Approval>,
}

/// What replay knows of a call id.
enum Slot {
    /// Its call is waiting for a result.
    Open(OpenCall),
    /// Its call (at the first line) got its result (at the second).
    Answered(usize, usize),
}

/// Streams a log's replayed entries and problems.
///
/// Entries come out as soon as their result is read, so in the order the
/// results were written (the completion order of parallel calls); calls
/// with no result come out at the end, in call order. Sort by
/// [`ReplayedEntry::call_line`] for call order, or use
/// [`into_replayed`](Self::into_replayed), which does. Memory holds only the
/// calls still waiting for a result and each call id seen (to report
/// duplicates).
///
/// An I/O error is yielded once and ends the stream.
///
/// ```
/// use toolprism::Registry;
/// use toolprism::replay::{Replay, ReplayItem, ReplayProblemKind};
///
/// let log = concat!(
///     r#"{"type":"tool/call","callId":"1","name":"gone","arguments":"{\"q\":1}"}"#, "\n",
///     r#"{"type":"tool/result","callId":"1","content":[{"type":"text","text":"ok"}],"isError":false}"#, "\n",
///     r#"{"type":"tool/result","callId":"2","content":[],"isError":false}"#, "\n",
///     r#"{"type":"tool/call","callId":"3","name":"gone","argu"#,
/// );
/// let registry = Registry::builder().build().unwrap();
/// let items: Vec<ReplayItem> = Replay::new(log.as_bytes(), &registry)
///     .collect::<std::io::Result<_>>()
///     .unwrap();
/// let ReplayItem::Entry(entry) = &items[0] else { panic!() };
/// assert_eq!(entry.call_card.tag(), "generic"); // "gone" is not registered
/// assert_eq!(entry.result_line, Some(2));
/// let ReplayItem::Problem(orphan) = &items[1] else { panic!() };
/// assert_eq!((orphan.line, orphan.kind), (3, ReplayProblemKind::ResultWithoutCall));
/// let ReplayItem::Problem(torn) = &items[2] else { panic!() };
/// assert_eq!((torn.line, torn.kind), (4, ReplayProblemKind::TornLine));
/// assert_eq!(items.len(), 3);
/// ```
pub struct Replay<'r, R = BufReader<File>> {
    events: Events<R>,
    /// Where the event being replayed was read.
    at: At,
    registry: &'r Registry,
    /// Every call id seen: its call waiting for a result, or answered.
    calls: HashMap<String, Slot>,
    queue: VecDeque<ReplayItem>,
    state: State,
}

impl<R> fmt::Debug for Replay<'_, R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Replay")
            .field("line", &self.events.line())
            .field("call_ids", &self.calls.len())
            .finish_non_exhaustive()
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    Reading,
    /// The end was reached and the calls with no result were queued.
    Drained,
}

impl<'r> Replay<'r> {
    /// Streams the log at `path`.
    pub fn open(path: impl AsRef<Path>, registry: &'r Registry) -> io::Result<Self> {
        let file = File::open(path)?;
        Ok(Self::new(BufReader::with_capacity(1 << 16, file), registry))
    }
}

impl<'r, R: BufRead> Replay<'r, R> {
    /// Streams a log from any reader: a file, or bytes in memory (`&[u8]`),
    /// which is what a benchmark of replay alone wants.
    pub fn new(reader: R, registry: &'r Registry) -> Self {
        Self::from_events(LogEvents::new(reader), registry)
    }

    /// Streams the events of an existing [`LogEvents`] reader.
    pub fn from_events(events: LogEvents<R>, registry: &'r Registry) -> Self {
        Self::with(Events::One(events), registry)
    }

    /// Streams several logs of one session as one (see [several logs, one
    /// session](self#several-logs-one-session)): their events in the
    /// order they were written, each entry and problem naming its log by
    /// its index in `logs`. Memory holds one waiting event per log, and
    /// what [`Replay`] holds for one.
    ///
    /// ```
    /// use toolprism::Registry;
    /// use toolprism::log::LogEvents;
    /// use toolprism::replay::{Replay, ReplayItem};
    ///
    /// // A call on one replica, answered with its task's result on another.
    /// let a = r#"{"type":"tool/call","callId":"c1","name":"t","arguments":"{}","timeMs":10}"#;
    /// let b = r#"{"type":"tool/result","callId":"c1","content":[],"isError":false,"timeMs":20}"#;
    /// let registry = Registry::builder().build().unwrap();
    /// let logs = vec![LogEvents::new(b.as_bytes()), LogEvents::new(a.as_bytes())];
    /// let items: Vec<ReplayItem> = Replay::merged(logs, &registry).map(Result::unwrap).collect();
    /// let [ReplayItem::Entry(entry)] = &items[..] else { panic!("{items:?}") };
    /// assert_eq!((entry.log, entry.call_line, entry.result_line), (1, 1, Some(1)));
    /// assert_eq!(entry.time_ms, Some(10));
    /// ```
    pub fn merged(logs: Vec<LogEvents<R>>, registry: &'r Registry) -> Self {
        let n = logs.len();
        Self::with(
            Events::Many(Merge {
                logs,
                heads: (0..n).map(|_| None).collect(),
                done: vec![false; n],
                last: vec![0; n],
            }),
            registry,
        )
    }

    fn with(events: Events<R>, registry: &'r Registry) -> Self {
        Replay {
            events,
            at: At::default(),
            registry,
            calls: HashMap::new(),
            queue: VecDeque::new(),
            state: State::Reading,
        }
    }

    /// Reads the rest of the log: every entry, sorted in call order, and
    /// every problem.
    pub fn into_replayed(self) -> io::Result<Replayed> {
        let many = matches!(self.events, Events::Many(_));
        let mut replayed = Replayed::default();
        for item in self {
            match item? {
                ReplayItem::Entry(entry) => replayed.entries.push(*entry),
                ReplayItem::Problem(problem) => replayed.problems.push(problem),
            }
        }
        // Stable, and close to sorted already: results mostly follow their
        // calls. Several logs: in the order the calls were logged.
        if many {
            replayed
                .entries
                .sort_by_key(|e| (e.time_ms.unwrap_or(0), e.log, e.call_line));
        } else {
            replayed.entries.sort_by_key(|e| e.call_line);
        }
        Ok(replayed)
    }

    fn on_event(&mut self, line: usize, event: LogEvent) {
        match event {
            LogEvent::Call {
                call_id,
                name,
                arguments,
                dialect,
            } => {
                // A dialect the registry does not know reads as canonical.
                let dialect = dialect.and_then(|d| self.registry.dialect(&d));
                self.on_call(line, call_id, name, arguments, dialect, None)
            }
            LogEvent::NestedCall {
                call_id,
                parent_call_id,
                name,
                arguments,
            } => self.on_call(line, call_id, name, arguments, None, Some(parent_call_id)),
            LogEvent::Result {
                call_id,
                content,
                is_error,
                error,
                meta,
            } => self.on_result(line, call_id, content, is_error, error, meta),
            LogEvent::NestedResult {
                call_id,
                content,
                is_error,
                error,
                meta,
                ..
            } => self.on_result(line, call_id, content, is_error, error, meta),
            LogEvent::Approval {
                call_id,
                question,
                decision,
            } => match self.calls.get_mut(&call_id) {
                Some(Slot::Open(call)) => call.approval = Some(Approval { question, decision }),
                _ => self.problem(
                    line,
                    ReplayProblemKind::ApprovalWithoutCall,
                    &call_id,
                    format!(
                        "an approval for call \"{}\", which is not waiting for its result here; skipped",
                        short(&call_id)
                    ),
                ),
            },
        }
    }

    fn on_result(
        &mut self,
        line: usize,
        call_id: String,
        content: Vec<ContentBlock>,
        is_error: bool,
        error: Option<PersistedError>,
        meta: Option<Value>,
    ) {
        let call = match self.calls.get_mut(&call_id) {
            Some(slot) => match std::mem::replace(slot, Slot::Answered(0, line)) {
                Slot::Open(call) => {
                    *slot = Slot::Answered(call.line, line);
                    call
                }
                answered @ Slot::Answered(call_line, first) => {
                    *slot = answered;
                    return self.problem(
                        line,
                        ReplayProblemKind::DuplicateResult,
                        &call_id,
                        format!(
                            "a second result for call id \"{}\", whose call at line {call_line} already got its result at line {first}; skipped",
                            short(&call_id)
                        ),
                    );
                }
            },
            None => {
                return self.problem(
                    line,
                    ReplayProblemKind::ResultWithoutCall,
                    &call_id,
                    format!(
                        "a result for call id \"{}\", but no call with that id comes before it; skipped",
                        short(&call_id)
                    ),
                );
            }
        };
        let result = ToolResult {
            content,
            is_error,
            meta,
        };
        // The result's own copy of the id names the entry: no clone.
        let entry = self.entry(call_id, call, Some((line, result, error.map(|e| e.code))));
        self.queue.push_back(ReplayItem::Entry(Box::new(entry)));
    }

    fn on_call(
        &mut self,
        line: usize,
        call_id: String,
        name: String,
        arguments: String,
        dialect: Option<Arc<dyn ArgumentDialect>>,
        nested: Option<Option<String>>,
    ) {
        let call = OpenCall {
            line,
            log: self.at.log,
            time: self.at.time,
            name,
            arguments,
            dialect,
            nested,
            approval: None,
        };
        match self.calls.get_mut(&call_id) {
            None => {
                self.calls.insert(call_id, Slot::Open(call));
            }
            Some(slot) => match std::mem::replace(slot, Slot::Open(call)) {
                Slot::Answered(first, answered_at) => self.problem(
                    line,
                    ReplayProblemKind::DuplicateCallId,
                    &call_id,
                    format!(
                        "call id \"{}\" was already used by the call at line {first} (answered at line {answered_at}); this call is replayed on its own",
                        short(&call_id)
                    ),
                ),
                Slot::Open(earlier) => {
                    self.problem(
                        line,
                        ReplayProblemKind::DuplicateCallId,
                        &call_id,
                        format!(
                            "call id \"{}\" is used again before the call at line {} got a result; that call is replayed without a result, and the next result with this id goes to this call",
                            short(&call_id),
                            earlier.line
                        ),
                    );
                    let entry = self.entry(call_id, earlier, None);
                    self.queue.push_back(ReplayItem::Entry(Box::new(entry)));
                }
            },
        }
    }

    fn problem(&mut self, line: usize, kind: ReplayProblemKind, call_id: &str, reason: String) {
        self.queue.push_back(ReplayItem::Problem(ReplayProblem {
            line,
            log: self.at.log,
            kind,
            call_id: Some(call_id.to_owned()),
            reason,
        }));
    }

    /// Draws the cards of a call and, when there is one, its result.
    fn entry(
        &self,
        call_id: String,
        call: OpenCall,
        result: Option<(usize, ToolResult, Option<ErrorCode>)>,
    ) -> ReplayedEntry {
        let (call_card, result_card, content, is_error, error_code, meta, result_line) =
            match result {
                Some((line, mut result, code)) => {
                    let (call_card, result_card) = self.registry.present(
                        &call.name,
                        &call.arguments,
                        call.dialect.as_deref(),
                        Some(&mut result),
                    );
                    (
                        call_card,
                        result_card,
                        result.content,
                        result.is_error,
                        code,
                        result.meta,
                        Some(line),
                    )
                }
                None => (
                    self.registry
                        .present(&call.name, &call.arguments, call.dialect.as_deref(), None)
                        .0,
                    None,
                    Vec::new(),
                    false,
                    None,
                    None,
                    None,
                ),
            };
        ReplayedEntry {
            call_id,
            name: call.name,
            arguments: call.arguments,
            call_card,
            result_card,
            content,
            is_error,
            error_code,
            meta,
            call_line: call.line,
            result_line,
            nested: call.nested.is_some(),
            parent_call_id: call.nested.flatten(),
            approval: call.approval,
            time_ms: call.time,
            log: call.log,
        }
    }

    /// Queues every call still waiting for a result, in call order.
    fn drain_open(&mut self) {
        let mut waiting: Vec<(String, OpenCall)> = self
            .calls
            .drain()
            .filter_map(|(call_id, slot)| match slot {
                Slot::Open(call) => Some((call_id, call)),
                Slot::Answered(..) => None,
            })
            .collect();
        waiting.sort_unstable_by_key(|(_, call)| (call.time.unwrap_or(0), call.log, call.line));
        for (call_id, call) in waiting {
            let entry = self.entry(call_id, call, None);
            self.queue.push_back(ReplayItem::Entry(Box::new(entry)));
        }
        self.state = State::Drained;
    }
}

impl<R: BufRead> Iterator for Replay<'_, R> {
    type Item = io::Result<ReplayItem>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(item) = self.queue.pop_front() {
                return Some(Ok(item));
            }
            if self.state == State::Drained {
                return None;
            }
            match self.events.next() {
                Some(Ok((at, Ok(event)))) => {
                    self.at = at;
                    self.on_event(at.line, event);
                }
                Some(Ok((at, Err(problem)))) => {
                    let mut problem = ReplayProblem::from(problem);
                    problem.log = at.log;
                    return Some(Ok(ReplayItem::Problem(problem)));
                }
                Some(Err(e)) => {
                    // An I/O error ends the stream; what is still open stays unreported.
                    self.calls.clear();
                    self.state = State::Drained;
                    return Some(Err(e));
                }
                None => self.drain_open(),
            }
        }
    }
}

/// A call id for a message: at most 80 bytes of it.
fn short(id: &str) -> std::borrow::Cow<'_, str> {
    if id.len() <= 80 {
        return id.escape_debug().to_string().into();
    }
    format!("{}…", crate::text::cut(id, 80).escape_debug()).into()
}
