//! What a UI draws: call cards and result cards, a closed vocabulary.
//!
//! Both unions are tagged by `card`; a UI switches on that tag and never on
//! a tool's name (C8 in `docs/contract.md`). The JSON is the reference system's wire
//! format: camelCase fields, `card` tag, `shape` (search) and `kind` (web)
//! sub-tags.
//!
//! Cards that could lie about truncation cannot be built: a [`SearchResult`]
//! is made from the shown items and the `total`, and `truncated` is derived
//! from them; its `Deserialize` rejects JSON where the two disagree. A
//! [`TerminalResult`] holds an [`ExitStatus`], so an exit code and a signal
//! cannot both be set, and JSON that sets both is rejected. A
//! [`ReadResult`] cannot be made without its offset and total.
//!
//! # What may grow
//!
//! Every card struct and card part is `#[non_exhaustive]`: build it with
//! its `new` (which takes what the wire format requires) and its `with_…`
//! methods, never with a struct literal, so that a field added later (as
//! [`FileDiff`] gained `oldStart` and `newStart`) breaks no one. The fields
//! stay public, to read, to match with `..`, and to set.
//!
//! The unions ([`CallCard`], [`ResultCard`], [`WebResult`]) and the
//! enums inside cards ([`ToolKind`], [`ExitStatus`], [`SearchShape`]) are
//! exhaustive on purpose: they are the closed vocabulary of C7 in
//! `docs/contract.md`, a renderer's `match` over them is checked complete
//! by the compiler, and a new card or kind is a major version.
//!
//! ```compile_fail,E0639
//! use toolprism::card::Location;
//! // A struct literal of a card part does not compile outside toolprism:
//! let at = Location { path: "a.rs".into(), line: None };
//! ```
//!
//! ```
//! use toolprism::card::{ResultCard, SearchResult, SearchFile, SearchMatch};
//!
//! let files = vec![SearchFile::new("src/lib.rs", vec![SearchMatch::new(3, "fn main() {}")])];
//! // 1 match shown out of 40 found: the card says it is truncated.
//! let card = ResultCard::Search(SearchResult::matches(files, 40).unwrap());
//! let json = serde_json::to_value(&card).unwrap();
//! assert_eq!(json["card"], "search");
//! assert_eq!(json["shape"], "matches");
//! assert_eq!(json["truncated"], true);
//! assert_eq!(json["total"], 40);
//!
//! // The same JSON claiming it is complete is refused.
//! let mut lie = json.clone();
//! lie["truncated"] = false.into();
//! assert!(serde_json::from_value::<ResultCard>(lie).is_err());
//! ```

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::content::ContentBlock;

/// What kind of work a tool does; UIs pick icons and grouping from it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ToolKind {
    /// Reads data.
    Read,
    /// Changes files or data.
    Edit,
    /// Deletes files or data.
    Delete,
    /// Moves or renames.
    Move,
    /// Searches.
    Search,
    /// Runs a command or code.
    Execute,
    /// Fetches from the network.
    Fetch,
    /// Anything else.
    #[default]
    Other,
}

impl ToolKind {
    /// Every kind, in declaration order.
    pub const ALL: [ToolKind; 8] = [
        ToolKind::Read,
        ToolKind::Edit,
        ToolKind::Delete,
        ToolKind::Move,
        ToolKind::Search,
        ToolKind::Execute,
        ToolKind::Fetch,
        ToolKind::Other,
    ];

    /// The kind's wire name (`"read"`, `"execute"`, …).
    pub const fn as_str(self) -> &'static str {
        match self {
            ToolKind::Read => "read",
            ToolKind::Edit => "edit",
            ToolKind::Delete => "delete",
            ToolKind::Move => "move",
            ToolKind::Search => "search",
            ToolKind::Execute => "execute",
            ToolKind::Fetch => "fetch",
            ToolKind::Other => "other",
        }
    }
}

/// A place in a file a card points at.
///
/// ```
/// use toolprism::card::Location;
/// let at = Location::new("src/lib.rs").with_line(12);
/// assert_eq!(serde_json::to_value(&at).unwrap(), serde_json::json!({"path": "src/lib.rs", "line": 12}));
/// assert_eq!(Location::new("README.md").line, None);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Location {
    /// The file path.
    pub path: String,
    /// A 1-based line, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u64>,
}

impl Location {
    /// The file `path`, no line known.
    pub fn new(path: impl Into<String>) -> Self {
        Location {
            path: path.into(),
            line: None,
        }
    }

    /// The same place at a 1-based `line`.
    pub fn with_line(mut self, line: u64) -> Self {
        self.line = Some(line);
        self
    }
}

/// One file's change: `old_text` is `None` for a file (or hunk) that did not
/// exist before.
///
/// The texts may be an excerpt of the file (a hunk with its context). Where
/// the excerpt sits is said by `old_start` and `new_start` when the tool
/// knows it; a UI numbers the lines from them, and numbers nothing when
/// they are absent (an old log, a call card drawn from arguments): a card
/// never shows a line number it does not hold.
///
/// `oldStart` and `newStart` are optional fields beyond the reference
/// system's `{path, oldText, newText}`: absent, the JSON is exactly the
/// reference's; present, a reader that does not know them ignores them.
///
/// ```
/// use toolprism::card::FileDiff;
///
/// let hunk = FileDiff::new("app.toml", Some("a = 1\n".into()), "a = 2\n").with_starts(Some(17), Some(17));
/// let json = serde_json::to_value(&hunk).unwrap();
/// assert_eq!(json, serde_json::json!({"path": "app.toml", "oldText": "a = 1\n", "newText": "a = 2\n", "oldStart": 17, "newStart": 17}));
/// // The reference's shape reads back with no line known.
/// let plain: FileDiff = serde_json::from_value(serde_json::json!({"path": "a", "oldText": null, "newText": "x"})).unwrap();
/// assert_eq!((plain.old_start, plain.new_start), (None, None));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct FileDiff {
    /// The file path.
    pub path: String,
    /// The text before, `null` when created.
    pub old_text: Option<String>,
    /// The text after.
    pub new_text: String,
    /// The 1-based line of the file before at which `old_text` starts, when
    /// known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub old_start: Option<u64>,
    /// The 1-based line of the file after at which `new_text` starts, when
    /// known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub new_start: Option<u64>,
}

impl FileDiff {
    /// A change of `path` from `old_text` (`None`: the file did not exist)
    /// to `new_text`, with no line numbers known.
    pub fn new(
        path: impl Into<String>,
        old_text: Option<String>,
        new_text: impl Into<String>,
    ) -> Self {
        FileDiff {
            path: path.into(),
            old_text,
            new_text: new_text.into(),
            old_start: None,
            new_start: None,
        }
    }

    /// The same change, placed in the file: the 1-based lines at which
    /// `old_text` and `new_text` start.
    pub fn with_starts(mut self, old_start: Option<u64>, new_start: Option<u64>) -> Self {
        self.old_start = old_start;
        self.new_start = new_start;
        self
    }
}

// ---------------------------------------------------------------------------
// Call cards
// ---------------------------------------------------------------------------

/// The card a UI draws for a call, before its result is known.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "card", rename_all = "camelCase")]
pub enum CallCard {
    /// Any call: a title and the raw input.
    Generic(GenericCall),
    /// A command being run.
    Terminal(TerminalCall),
    /// A change to files.
    Diff(DiffCall),
}

/// The generic call card: `{card:"generic", title, kind?, rawInput?, content?, locations?}`.
///
/// ```
/// use toolprism::card::{CallCard, GenericCall, Location};
/// use toolprism::ToolKind;
/// let card = CallCard::Generic(
///     GenericCall::new("Open notes.md")
///         .with_kind(ToolKind::Read)
///         .with_locations(vec![Location::new("notes.md")]),
/// );
/// assert_eq!(
///     serde_json::to_value(&card).unwrap(),
///     serde_json::json!({"card": "generic", "title": "Open notes.md", "kind": "read", "locations": [{"path": "notes.md"}]})
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct GenericCall {
    /// The title.
    pub title: String,
    /// What kind of work the call does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<ToolKind>,
    /// The arguments, as JSON.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw_input: Option<serde_json::Value>,
    /// Extra content to show.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<Vec<ContentBlock>>,
    /// Files the call touches.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub locations: Option<Vec<Location>>,
}

impl GenericCall {
    /// A generic call card with a title and nothing else.
    pub fn new(title: impl Into<String>) -> Self {
        GenericCall {
            title: title.into(),
            kind: None,
            raw_input: None,
            content: None,
            locations: None,
        }
    }

    /// The same card, saying what kind of work the call does.
    pub fn with_kind(mut self, kind: ToolKind) -> Self {
        self.kind = Some(kind);
        self
    }

    /// The same card, with the arguments as JSON.
    pub fn with_raw_input(mut self, raw_input: serde_json::Value) -> Self {
        self.raw_input = Some(raw_input);
        self
    }

    /// The same card, with content to show.
    pub fn with_content(mut self, content: Vec<ContentBlock>) -> Self {
        self.content = Some(content);
        self
    }

    /// The same card, with the files the call touches.
    pub fn with_locations(mut self, locations: Vec<Location>) -> Self {
        self.locations = Some(locations);
        self
    }
}

/// The terminal call card: `{card:"terminal", title, description?, cwd?}`.
///
/// ```
/// use toolprism::card::{CallCard, TerminalCall};
/// let card = CallCard::Terminal(TerminalCall::new("cargo test").with_cwd("crates/core"));
/// assert_eq!(
///     serde_json::to_value(&card).unwrap(),
///     serde_json::json!({"card": "terminal", "title": "cargo test", "cwd": "crates/core"})
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TerminalCall {
    /// The command line.
    pub title: String,
    /// What the command is for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The working directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
}

impl TerminalCall {
    /// A terminal call card for the command line `title`.
    pub fn new(title: impl Into<String>) -> Self {
        TerminalCall {
            title: title.into(),
            description: None,
            cwd: None,
        }
    }

    /// The same card, saying what the command is for.
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// The same card, with the working directory.
    pub fn with_cwd(mut self, cwd: impl Into<String>) -> Self {
        self.cwd = Some(cwd.into());
        self
    }
}

/// The diff call card: `{card:"diff", title, diffs, locations?}`.
///
/// ```
/// use toolprism::card::{CallCard, DiffCall, FileDiff, Location};
/// let card = CallCard::Diff(
///     DiffCall::new("Create a.txt", vec![FileDiff::new("a.txt", None, "hello\n")])
///         .with_locations(vec![Location::new("a.txt")]),
/// );
/// assert_eq!(serde_json::to_value(&card).unwrap()["diffs"][0]["oldText"], serde_json::Value::Null);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct DiffCall {
    /// The title.
    pub title: String,
    /// The proposed changes.
    pub diffs: Vec<FileDiff>,
    /// Files the call touches.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub locations: Option<Vec<Location>>,
}

impl DiffCall {
    /// A diff call card: its title and the proposed changes.
    pub fn new(title: impl Into<String>, diffs: Vec<FileDiff>) -> Self {
        DiffCall {
            title: title.into(),
            diffs,
            locations: None,
        }
    }

    /// The same card, with the files the call touches.
    pub fn with_locations(mut self, locations: Vec<Location>) -> Self {
        self.locations = Some(locations);
        self
    }
}

impl CallCard {
    /// The generic call card every tool without `present_call` gets: the
    /// tool's name as title and the arguments as raw input.
    pub fn generic(
        title: impl Into<String>,
        kind: Option<ToolKind>,
        raw_input: Option<serde_json::Value>,
    ) -> Self {
        let mut card = GenericCall::new(title);
        card.kind = kind;
        card.raw_input = raw_input;
        CallCard::Generic(card)
    }

    /// The card's tag: `"generic"`, `"terminal"` or `"diff"`.
    pub fn tag(&self) -> &'static str {
        match self {
            CallCard::Generic(_) => "generic",
            CallCard::Terminal(_) => "terminal",
            CallCard::Diff(_) => "diff",
        }
    }
}

// ---------------------------------------------------------------------------
// Result cards
// ---------------------------------------------------------------------------

/// The card a UI draws for a finished call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "card", rename_all = "camelCase")]
pub enum ResultCard {
    /// Any result: its content.
    Generic(GenericResult),
    /// A command's output and how it ended.
    Terminal(TerminalResult),
    /// File changes.
    Diff(DiffResult),
    /// Search matches or paths, with truncation always visible.
    Search(SearchResult),
    /// A window of a file.
    Read(ReadResult),
    /// A web search or fetch.
    Web(WebResult),
}

impl ResultCard {
    /// The generic result card over a result's content.
    pub fn generic(title: Option<String>, content: Vec<ContentBlock>) -> Self {
        let mut card = GenericResult::new(content);
        card.title = title;
        ResultCard::Generic(card)
    }

    /// The card's tag: `"generic"`, `"terminal"`, `"diff"`, `"search"`,
    /// `"read"` or `"web"`.
    pub fn tag(&self) -> &'static str {
        match self {
            ResultCard::Generic(_) => "generic",
            ResultCard::Terminal(_) => "terminal",
            ResultCard::Diff(_) => "diff",
            ResultCard::Search(_) => "search",
            ResultCard::Read(_) => "read",
            ResultCard::Web(_) => "web",
        }
    }
}

/// The generic result card: `{card:"generic", title?, content?}`.
///
/// ```
/// use toolprism::card::{GenericResult, ResultCard};
/// use toolprism::ContentBlock;
/// let card = ResultCard::Generic(GenericResult::new(vec![ContentBlock::text("3 rows")]).with_title("Query"));
/// assert_eq!(serde_json::to_value(&card).unwrap()["title"], "Query");
/// // No content at all: the card says so.
/// let empty = GenericResult::empty();
/// assert_eq!(serde_json::to_value(ResultCard::Generic(empty)).unwrap(), serde_json::json!({"card": "generic"}));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct GenericResult {
    /// The title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The content to show.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<Vec<ContentBlock>>,
}

impl GenericResult {
    /// A generic result card showing `content`, with no title.
    pub fn new(content: Vec<ContentBlock>) -> Self {
        GenericResult {
            title: None,
            content: Some(content),
        }
    }

    /// A generic result card with no title and no content.
    pub fn empty() -> Self {
        GenericResult::default()
    }

    /// The same card with a title.
    pub fn with_title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }
}

/// The diff result card: `{card:"diff", title?, diffs}`.
///
/// ```
/// use toolprism::card::{DiffResult, FileDiff, ResultCard};
/// let card = ResultCard::Diff(
///     DiffResult::new(vec![FileDiff::new("a.txt", Some("a\n".into()), "b\n")]).with_title("Edited a.txt"),
/// );
/// assert_eq!(serde_json::to_value(&card).unwrap()["title"], "Edited a.txt");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct DiffResult {
    /// The title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The changes made.
    pub diffs: Vec<FileDiff>,
}

impl DiffResult {
    /// A diff result card over the changes made, with no title.
    pub fn new(diffs: Vec<FileDiff>) -> Self {
        DiffResult { title: None, diffs }
    }

    /// The same card with a title.
    pub fn with_title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }
}

/// How a process ended: an exit code or a signal, never both.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExitStatus {
    /// It exited with this code.
    Code(i32),
    /// It was killed by this signal (e.g. `"SIGKILL"`).
    Signal(String),
}

/// The terminal result card: `{card:"terminal", title?, output?, exitCode | signal, sandbox?}`.
///
/// Build it with [`TerminalResult::new`] (the struct may gain fields).
///
/// ```
/// use toolprism::card::{ExitStatus, ResultCard, TerminalResult, TerminalSandbox};
/// let both = serde_json::json!({"card": "terminal", "exitCode": 0, "signal": "SIGKILL"});
/// let err = serde_json::from_value::<ResultCard>(both).unwrap_err();
/// assert!(err.to_string().contains("both"));
///
/// let card = TerminalResult::new(Some("ls".into()), Some("a\nb".into()), Some(ExitStatus::Code(0)))
///     .with_sandbox(TerminalSandbox::new("workspace-write", false, false));
/// let json = serde_json::to_value(ResultCard::Terminal(card)).unwrap();
/// assert_eq!(json["sandbox"], serde_json::json!({"mode": "workspace-write", "network": false, "denied": false}));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct TerminalResult {
    /// The title.
    pub title: Option<String>,
    /// The command's output.
    pub output: Option<String>,
    /// How it ended, when it did.
    pub status: Option<ExitStatus>,
    /// The sandbox the command ran in, when the tool says.
    pub sandbox: Option<TerminalSandbox>,
}

impl TerminalResult {
    /// A terminal result card, with no sandbox.
    pub fn new(title: Option<String>, output: Option<String>, status: Option<ExitStatus>) -> Self {
        TerminalResult {
            title,
            output,
            status,
            sandbox: None,
        }
    }

    /// The same card, saying which sandbox the command ran in.
    pub fn with_sandbox(mut self, sandbox: TerminalSandbox) -> Self {
        self.sandbox = Some(sandbox);
        self
    }
}

/// The sandbox a command ran in, as a terminal card shows it:
/// `{mode, network, denied}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TerminalSandbox {
    /// The mode's name (`read-only`, `workspace-write`, `full-access`).
    pub mode: String,
    /// Whether the network was on.
    pub network: bool,
    /// Whether the sandbox likely stopped something the command did.
    #[serde(default)]
    pub denied: bool,
}

impl TerminalSandbox {
    /// A sandbox badge.
    pub fn new(mode: impl Into<String>, network: bool, denied: bool) -> Self {
        TerminalSandbox {
            mode: mode.into(),
            network,
            denied,
        }
    }
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[serde(bound(
    serialize = "T: Serialize, S: Serialize, B: Serialize",
    deserialize = "T: Deserialize<'de>, S: Deserialize<'de>, B: Deserialize<'de>"
))]
struct TerminalWire<T, S, B> {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    title: Option<T>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    output: Option<T>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    exit_code: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    signal: Option<S>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    sandbox: Option<B>,
}

impl Serialize for TerminalResult {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let (exit_code, signal) = match &self.status {
            Some(ExitStatus::Code(code)) => (Some(*code), None),
            Some(ExitStatus::Signal(signal)) => (None, Some(signal.as_str())),
            None => (None, None),
        };
        TerminalWire {
            title: self.title.as_deref(),
            output: self.output.as_deref(),
            exit_code,
            signal,
            sandbox: self.sandbox.as_ref(),
        }
        .serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for TerminalResult {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let wire = TerminalWire::<String, String, TerminalSandbox>::deserialize(deserializer)?;
        let status = match (wire.exit_code, wire.signal) {
            (Some(_), Some(_)) => {
                return Err(serde::de::Error::custom(
                    "a terminal card cannot carry both `exitCode` and `signal`: a process either exits or is killed",
                ));
            }
            (Some(code), None) => Some(ExitStatus::Code(code)),
            (None, Some(signal)) => Some(ExitStatus::Signal(signal)),
            (None, None) => None,
        };
        Ok(TerminalResult {
            title: wire.title,
            output: wire.output,
            status,
            sandbox: wire.sandbox,
        })
    }
}

/// One matching line.
///
/// ```
/// use toolprism::card::SearchMatch;
/// let m = SearchMatch::new(3, "fn main() {}");
/// assert_eq!(serde_json::to_value(&m).unwrap(), serde_json::json!({"lineNumber": 3, "line": "fn main() {}"}));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct SearchMatch {
    /// 1-based line number.
    pub line_number: u64,
    /// The line's text.
    pub line: String,
}

impl SearchMatch {
    /// The line numbered `line_number` (1-based), whose text is `line`.
    pub fn new(line_number: u64, line: impl Into<String>) -> Self {
        SearchMatch {
            line_number,
            line: line.into(),
        }
    }
}

/// The matches shown for one file.
///
/// ```
/// use toolprism::card::{SearchFile, SearchMatch};
/// let file = SearchFile::new("src/lib.rs", vec![SearchMatch::new(3, "fn main() {}")]);
/// assert_eq!(file.matches.len(), 1);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct SearchFile {
    /// The file path.
    pub path: String,
    /// Its matching lines.
    pub matches: Vec<SearchMatch>,
}

impl SearchFile {
    /// The matching lines shown for the file `path`.
    pub fn new(path: impl Into<String>, matches: Vec<SearchMatch>) -> Self {
        SearchFile {
            path: path.into(),
            matches,
        }
    }
}

/// What a search card shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SearchShape {
    /// Matching lines grouped by file.
    Matches(Vec<SearchFile>),
    /// Matching paths.
    Paths(Vec<String>),
}

impl SearchShape {
    /// How many items are shown: matching lines, or paths.
    pub fn shown(&self) -> usize {
        match self {
            SearchShape::Matches(files) => files.iter().map(|f| f.matches.len()).sum(),
            SearchShape::Paths(paths) => paths.len(),
        }
    }
}

/// Why a card could not be built.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CardError(String);

impl std::fmt::Display for CardError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for CardError {}

/// The search result card: `{card:"search", title?, shape:"matches", files, truncated, total}`
/// or `{card:"search", title?, shape:"paths", paths, truncated, total}`.
///
/// `truncated` is not stored: it is `total > shown`, so it cannot disagree
/// with `total`. A total below what is shown is refused.
///
/// ```
/// use toolprism::card::SearchResult;
/// let card = SearchResult::paths(vec!["a.rs".into(), "b.rs".into()], 2).unwrap();
/// assert!(!card.truncated());
/// assert!(SearchResult::paths(vec!["a.rs".into(), "b.rs".into()], 1).is_err());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchResult {
    title: Option<String>,
    shape: SearchShape,
    total: u64,
}

impl SearchResult {
    /// A card from what is shown and the total found.
    pub fn new(shape: SearchShape, total: u64) -> Result<Self, CardError> {
        let shown = shape.shown() as u64;
        if total < shown {
            return Err(CardError(format!(
                "a search card shows {shown} items but claims a total of {total}: the total counts every item found, so it cannot be smaller than what is shown"
            )));
        }
        Ok(SearchResult {
            title: None,
            shape,
            total,
        })
    }

    /// A `matches` card.
    pub fn matches(files: Vec<SearchFile>, total: u64) -> Result<Self, CardError> {
        Self::new(SearchShape::Matches(files), total)
    }

    /// A `paths` card.
    pub fn paths(paths: Vec<String>, total: u64) -> Result<Self, CardError> {
        Self::new(SearchShape::Paths(paths), total)
    }

    /// The same card with a title.
    pub fn with_title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// The title.
    pub fn title(&self) -> Option<&str> {
        self.title.as_deref()
    }

    /// What is shown.
    pub fn shape(&self) -> &SearchShape {
        &self.shape
    }

    /// Every item found, shown or not.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// Whether fewer items are shown than were found.
    pub fn truncated(&self) -> bool {
        self.total > self.shape.shown() as u64
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase", tag = "shape")]
enum SearchWireOut<'a> {
    Matches {
        #[serde(skip_serializing_if = "Option::is_none")]
        title: Option<&'a str>,
        files: &'a [SearchFile],
        truncated: bool,
        total: u64,
    },
    Paths {
        #[serde(skip_serializing_if = "Option::is_none")]
        title: Option<&'a str>,
        paths: &'a [String],
        truncated: bool,
        total: u64,
    },
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", tag = "shape")]
enum SearchWireIn {
    Matches {
        #[serde(default)]
        title: Option<String>,
        files: Vec<SearchFile>,
        truncated: bool,
        total: u64,
    },
    Paths {
        #[serde(default)]
        title: Option<String>,
        paths: Vec<String>,
        truncated: bool,
        total: u64,
    },
}

impl Serialize for SearchResult {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let title = self.title.as_deref();
        let truncated = self.truncated();
        let total = self.total;
        match &self.shape {
            SearchShape::Matches(files) => SearchWireOut::Matches {
                title,
                files,
                truncated,
                total,
            },
            SearchShape::Paths(paths) => SearchWireOut::Paths {
                title,
                paths,
                truncated,
                total,
            },
        }
        .serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for SearchResult {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let (title, shape, truncated, total) = match SearchWireIn::deserialize(deserializer)? {
            SearchWireIn::Matches {
                title,
                files,
                truncated,
                total,
            } => (title, SearchShape::Matches(files), truncated, total),
            SearchWireIn::Paths {
                title,
                paths,
                truncated,
                total,
            } => (title, SearchShape::Paths(paths), truncated, total),
        };
        let card = SearchResult::new(shape, total).map_err(serde::de::Error::custom)?;
        if card.truncated() != truncated {
            let shown = card.shape.shown();
            return Err(serde::de::Error::custom(format!(
                "a search card with {shown} items shown and total {total} must say truncated: {}, not {truncated}",
                card.truncated()
            )));
        }
        Ok(SearchResult { title, ..card })
    }
}

/// One numbered line of a read card.
///
/// ```
/// use toolprism::card::NumberedLine;
/// let line = NumberedLine::new(7, "let x = 1;");
/// assert_eq!(serde_json::to_value(&line).unwrap(), serde_json::json!({"number": 7, "text": "let x = 1;"}));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct NumberedLine {
    /// 1-based line number.
    pub number: u64,
    /// The line's text.
    pub text: String,
}

impl NumberedLine {
    /// The line numbered `number` (1-based), whose text is `text`.
    pub fn new(number: u64, text: impl Into<String>) -> Self {
        NumberedLine {
            number,
            text: text.into(),
        }
    }
}

/// The read result card: `{card:"read", title?, path, offset, lines, totalLines, lang?, content?}`.
///
/// `offset` and `totalLines` are required, so a UI always knows which part
/// of how much it shows: [`ReadResult::new`] takes both, and JSON without
/// them is refused.
///
/// ```
/// use toolprism::card::{NumberedLine, ReadResult, ResultCard};
/// let card = ReadResult::new("src/lib.rs", 10, vec![NumberedLine::new(10, "fn main() {}")], 42)
///     .with_lang("rust");
/// let json = serde_json::to_value(ResultCard::Read(card)).unwrap();
/// assert_eq!((json["offset"].as_u64(), json["totalLines"].as_u64()), (Some(10), Some(42)));
/// let no_total = serde_json::json!({"card": "read", "path": "a", "offset": 1, "lines": []});
/// assert!(serde_json::from_value::<ResultCard>(no_total).is_err());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ReadResult {
    /// The title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The file path.
    pub path: String,
    /// 1-based number of the first line shown.
    pub offset: u64,
    /// The lines shown.
    pub lines: Vec<NumberedLine>,
    /// Lines in the whole file.
    pub total_lines: u64,
    /// A language hint for highlighting.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lang: Option<String>,
    /// The body as text, when different from the lines.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
}

impl ReadResult {
    /// A read card: the `lines` shown of `path`, from the 1-based line
    /// `offset`, out of `total_lines` in the whole file.
    pub fn new(
        path: impl Into<String>,
        offset: u64,
        lines: Vec<NumberedLine>,
        total_lines: u64,
    ) -> Self {
        ReadResult {
            title: None,
            path: path.into(),
            offset,
            lines,
            total_lines,
            lang: None,
            content: None,
        }
    }

    /// The same card with a title.
    pub fn with_title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// The same card with a language hint for highlighting (`rust`, `toml`).
    pub fn with_lang(mut self, lang: impl Into<String>) -> Self {
        self.lang = Some(lang.into());
        self
    }

    /// The same card with the body as text, when it differs from the lines.
    pub fn with_content(mut self, content: impl Into<String>) -> Self {
        self.content = Some(content.into());
        self
    }
}

/// A web source of a web search card.
///
/// ```
/// use toolprism::card::WebSource;
/// let source = WebSource::new("https://www.rust-lang.org").with_title("Rust");
/// assert_eq!(
///     serde_json::to_value(&source).unwrap(),
///     serde_json::json!({"url": "https://www.rust-lang.org", "title": "Rust"})
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct WebSource {
    /// Its URL.
    pub url: String,
    /// Its title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// A snippet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snippet: Option<String>,
    /// When it was published.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub published_at: Option<String>,
}

impl WebSource {
    /// A source at `url`, nothing else known.
    pub fn new(url: impl Into<String>) -> Self {
        WebSource {
            url: url.into(),
            title: None,
            snippet: None,
            published_at: None,
        }
    }

    /// The same source with its title.
    pub fn with_title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// The same source with a snippet.
    pub fn with_snippet(mut self, snippet: impl Into<String>) -> Self {
        self.snippet = Some(snippet.into());
        self
    }

    /// The same source with when it was published.
    pub fn with_published_at(mut self, published_at: impl Into<String>) -> Self {
        self.published_at = Some(published_at.into());
        self
    }
}

/// The web result card: `{card:"web", kind:"search", title?, sources, answer?, truncated}`
/// or `{card:"web", kind:"fetch", title?, url, statusCode, truncated}`.
///
/// ```
/// use toolprism::card::{ResultCard, WebFetch, WebResult, WebSearch, WebSource};
/// let fetch = ResultCard::Web(WebResult::Fetch(WebFetch::new("https://example.com", 200, false)));
/// assert_eq!(
///     serde_json::to_value(&fetch).unwrap(),
///     serde_json::json!({"card": "web", "kind": "fetch", "url": "https://example.com", "statusCode": 200, "truncated": false})
/// );
/// let search = WebSearch::new(vec![WebSource::new("https://a.example")], true).with_answer("42");
/// let json = serde_json::to_value(ResultCard::Web(WebResult::Search(search))).unwrap();
/// assert_eq!((json["kind"].as_str(), json["answer"].as_str()), (Some("search"), Some("42")));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", tag = "kind")]
pub enum WebResult {
    /// A web search.
    Search(WebSearch),
    /// A page fetch.
    Fetch(WebFetch),
}

impl WebResult {
    /// The title, of either kind.
    pub fn title(&self) -> Option<&str> {
        match self {
            WebResult::Search(search) => search.title.as_deref(),
            WebResult::Fetch(fetch) => fetch.title.as_deref(),
        }
    }

    /// Whether something was cut: sources not shown, or the body.
    pub fn truncated(&self) -> bool {
        match self {
            WebResult::Search(search) => search.truncated,
            WebResult::Fetch(fetch) => fetch.truncated,
        }
    }
}

/// A web search card's body: `{title?, sources, answer?, truncated}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct WebSearch {
    /// The title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The sources found.
    pub sources: Vec<WebSource>,
    /// A direct answer, when the engine gave one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer: Option<String>,
    /// Whether more sources existed than are shown.
    pub truncated: bool,
}

impl WebSearch {
    /// A search that found `sources`; `truncated` says whether more
    /// existed than are shown.
    pub fn new(sources: Vec<WebSource>, truncated: bool) -> Self {
        WebSearch {
            title: None,
            sources,
            answer: None,
            truncated,
        }
    }

    /// The same card with a title.
    pub fn with_title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// The same card with the engine's direct answer.
    pub fn with_answer(mut self, answer: impl Into<String>) -> Self {
        self.answer = Some(answer.into());
        self
    }
}

/// A page fetch card's body: `{title?, url, statusCode, truncated}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct WebFetch {
    /// The title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The URL fetched.
    pub url: String,
    /// The HTTP status.
    pub status_code: u16,
    /// Whether the body was cut.
    pub truncated: bool,
}

impl WebFetch {
    /// A fetch of `url` that answered `status_code`; `truncated` says
    /// whether the body was cut.
    pub fn new(url: impl Into<String>, status_code: u16, truncated: bool) -> Self {
        WebFetch {
            title: None,
            url: url.into(),
            status_code,
            truncated,
        }
    }

    /// The same card with a title.
    pub fn with_title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn one_match() -> Vec<SearchFile> {
        vec![SearchFile::new("a.rs", vec![SearchMatch::new(1, "x")])]
    }

    #[test]
    fn search_card_cannot_understate_its_total() {
        assert!(SearchResult::matches(one_match(), 0).is_err());
        let exact = SearchResult::matches(one_match(), 1).unwrap();
        assert!(!exact.truncated());
        let more = SearchResult::matches(one_match(), 7).unwrap();
        assert!(more.truncated());
    }

    #[test]
    fn inconsistent_search_json_is_rejected() {
        let files = json!([{"path": "a.rs", "matches": [{"lineNumber": 1, "line": "x"}]}]);
        // truncated with total = shown
        let lie = json!({"card": "search", "shape": "matches", "files": files, "truncated": true, "total": 1});
        let err = serde_json::from_value::<ResultCard>(lie)
            .unwrap_err()
            .to_string();
        assert!(err.contains("truncated: false"), "{err}");
        // not truncated with total != shown
        let lie = json!({"card": "search", "shape": "matches", "files": files, "truncated": false, "total": 5});
        assert!(serde_json::from_value::<ResultCard>(lie).is_err());
        // total below shown
        let lie = json!({"card": "search", "shape": "paths", "paths": ["a", "b"], "truncated": false, "total": 1});
        assert!(serde_json::from_value::<ResultCard>(lie).is_err());
        // missing total
        let lie = json!({"card": "search", "shape": "paths", "paths": ["a"], "truncated": false});
        assert!(serde_json::from_value::<ResultCard>(lie).is_err());
        // consistent ones round-trip
        let ok = json!({"card": "search", "shape": "paths", "title": "t", "paths": ["a"], "truncated": true, "total": 3});
        let card: ResultCard = serde_json::from_value(ok.clone()).unwrap();
        assert_eq!(serde_json::to_value(&card).unwrap(), ok);
    }

    #[test]
    fn terminal_card_never_has_exit_code_and_signal() {
        let both = json!({"card": "terminal", "exitCode": 1, "signal": "SIGTERM"});
        assert!(serde_json::from_value::<ResultCard>(both).is_err());
        for ok in [
            json!({"card": "terminal", "output": "hi", "exitCode": 0}),
            json!({"card": "terminal", "signal": "SIGKILL"}),
            json!({"card": "terminal"}),
        ] {
            let card: ResultCard = serde_json::from_value(ok.clone()).unwrap();
            assert_eq!(serde_json::to_value(&card).unwrap(), ok);
        }
    }

    #[test]
    fn wire_format_matches_the_reference() {
        let read = ResultCard::Read(
            ReadResult::new("a.rs", 1, vec![NumberedLine::new(1, "x")], 9).with_lang("rust"),
        );
        assert_eq!(
            serde_json::to_value(&read).unwrap(),
            json!({"card": "read", "path": "a.rs", "offset": 1, "lines": [{"number": 1, "text": "x"}], "totalLines": 9, "lang": "rust"})
        );
        let missing_total = json!({"card": "read", "path": "a.rs", "offset": 1, "lines": []});
        assert!(serde_json::from_value::<ResultCard>(missing_total).is_err());

        let fetch = ResultCard::Web(WebResult::Fetch(
            WebFetch::new("http://x", 200, false).with_title("u"),
        ));
        assert_eq!(
            serde_json::to_value(&fetch).unwrap(),
            json!({"card": "web", "kind": "fetch", "title": "u", "url": "http://x", "statusCode": 200, "truncated": false})
        );
        let diff = CallCard::Diff(DiffCall::new(
            "Edit a.rs",
            vec![FileDiff::new("a.rs", None, "x")],
        ));
        assert_eq!(
            serde_json::to_value(&diff).unwrap(),
            json!({"card": "diff", "title": "Edit a.rs", "diffs": [{"path": "a.rs", "oldText": null, "newText": "x"}]})
        );
        // Where a hunk starts, when known: two optional camelCase fields;
        // a diff without them reads back with no line known.
        let placed = ResultCard::Diff(DiffResult::new(vec![
            FileDiff::new("a.rs", Some("a\n".into()), "b\n").with_starts(Some(17), Some(18)),
        ]));
        let json = serde_json::to_value(&placed).unwrap();
        assert_eq!(
            json,
            json!({"card": "diff", "diffs": [{"path": "a.rs", "oldText": "a\n", "newText": "b\n", "oldStart": 17, "newStart": 18}]})
        );
        assert_eq!(serde_json::from_value::<ResultCard>(json).unwrap(), placed);
        let reference = json!({"card": "diff", "diffs": [{"path": "a.rs", "oldText": "a\n", "newText": "b\n"}]});
        let ResultCard::Diff(read_back) = serde_json::from_value(reference).unwrap() else {
            panic!("a diff card")
        };
        assert_eq!(
            (read_back.diffs[0].old_start, read_back.diffs[0].new_start),
            (None, None)
        );
        let generic = CallCard::generic("read", Some(ToolKind::Read), Some(json!({"path": "a"})));
        assert_eq!(
            serde_json::to_value(&generic).unwrap(),
            json!({"card": "generic", "title": "read", "kind": "read", "rawInput": {"path": "a"}})
        );
        for kind in ToolKind::ALL {
            assert_eq!(serde_json::to_value(kind).unwrap(), json!(kind.as_str()));
        }
    }
}
