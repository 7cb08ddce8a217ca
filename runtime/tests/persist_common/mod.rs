//! Hand-written test tools shared by the `persist_*` tests (session log,
//! replay, spill, canary). They cover the card kinds: a search card from
//! meta, a terminal card, a read card, a tool with no presenters, and one
//! whose presenters panic.

#![allow(dead_code)]

use serde::{Deserialize, Serialize};
use toolprism::card::{
    CallCard, GenericCall, Location, NumberedLine, ReadResult, ResultCard, SearchFile, SearchMatch,
    SearchResult, TerminalCall, TerminalResult,
};
use toolprism::card::{ExitStatus, ToolKind};
use toolprism::{
    ContentBlock, NoMeta, SpillBudget, Tool, ToolContext, ToolError, ToolInfo, ToolResult,
    content_text,
};

// ---------------------------------------------------------------------------
// grep: a search card drawn from meta
// ---------------------------------------------------------------------------

#[derive(Clone, Deserialize, schemars::JsonSchema)]
pub(crate) struct GrepArgs {
    pub(crate) pattern: String,
    /// At most this many matches shown (the schema says at least 1, which
    /// serde alone does not check).
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub(crate) limit: Option<u32>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub(crate) struct Hit {
    pub(crate) path: String,
    pub(crate) line_number: u64,
    pub(crate) line: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub(crate) struct GrepValue {
    pub(crate) hits: Vec<Hit>,
    pub(crate) total: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct GrepMeta {
    pub(crate) files: Vec<SearchFile>,
    pub(crate) total: u64,
}

pub(crate) struct Grep;

impl Grep {
    fn shown(args: &GrepArgs, value: &GrepValue) -> usize {
        value
            .hits
            .len()
            .min(args.limit.unwrap_or(u32::MAX) as usize)
    }
}

impl Tool for Grep {
    type Args = GrepArgs;
    type Value = GrepValue;
    type Meta = GrepMeta;
    const INFO: ToolInfo =
        ToolInfo::new("grep", "Search files for a pattern.").with_kind(ToolKind::Search);

    async fn execute(&self, args: GrepArgs, _: &ToolContext<'_>) -> Result<GrepValue, ToolError> {
        if args.pattern == "(" {
            return Err(ToolError::new("unbalanced parenthesis").with_code("BAD_PATTERN"));
        }
        let total = (args.pattern.len() * 3) as u64;
        let hits = (0..total)
            .map(|i| Hit {
                path: format!("src/f{}.rs", i % 3),
                line_number: i + 1,
                line: format!("let {} = {i};", args.pattern),
            })
            .collect();
        Ok(GrepValue { hits, total })
    }

    fn render(args: &GrepArgs, value: &GrepValue) -> Vec<ContentBlock> {
        let shown = Self::shown(args, value);
        let mut text: String = value.hits[..shown]
            .iter()
            .map(|h| format!("{}:{}: {}\n", h.path, h.line_number, h.line))
            .collect();
        if shown < value.hits.len() {
            text.push_str(&format!("({} more not shown)", value.hits.len() - shown));
        }
        vec![ContentBlock::text(text)]
    }

    fn presentation_meta(args: &GrepArgs, value: &GrepValue) -> Option<GrepMeta> {
        let mut files: Vec<SearchFile> = Vec::new();
        for hit in &value.hits[..Self::shown(args, value)] {
            let m = SearchMatch::new(hit.line_number, hit.line.clone());
            match files.iter_mut().find(|f| f.path == hit.path) {
                Some(f) => f.matches.push(m),
                None => files.push(SearchFile::new(hit.path.clone(), vec![m])),
            }
        }
        Some(GrepMeta {
            files,
            total: value.total,
        })
    }

    fn present_call(args: &GrepArgs) -> Option<CallCard> {
        Some(CallCard::Generic(
            GenericCall::new(format!("grep {}", args.pattern))
                .with_kind(ToolKind::Search)
                .with_locations(vec![Location::new("src")]),
        ))
    }

    fn present_result(args: &GrepArgs, result: &ToolResult<GrepMeta>) -> Option<ResultCard> {
        let meta = result.meta.as_ref()?;
        let card = SearchResult::matches(meta.files.clone(), meta.total).ok()?;
        Some(ResultCard::Search(
            card.with_title(format!("grep {}", args.pattern)),
        ))
    }
}

// ---------------------------------------------------------------------------
// shell: terminal cards
// ---------------------------------------------------------------------------

#[derive(Clone, Deserialize, schemars::JsonSchema)]
pub(crate) struct ShellArgs {
    pub(crate) command: String,
    #[serde(default)]
    pub(crate) cwd: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub(crate) struct ShellValue {
    pub(crate) stdout: String,
    pub(crate) exit_code: i32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct ShellMeta {
    pub(crate) exit_code: i32,
}

/// A fake shell: `echo X` prints X, `fail` exits 1, `crash` errors,
/// `yes N` prints N lines.
pub(crate) struct Shell;

impl Tool for Shell {
    type Args = ShellArgs;
    type Value = ShellValue;
    type Meta = ShellMeta;
    const INFO: ToolInfo = ToolInfo::new("shell", "Run a command.").with_kind(ToolKind::Execute);

    async fn execute(&self, args: ShellArgs, _: &ToolContext<'_>) -> Result<ShellValue, ToolError> {
        let cmd = args.command.as_str();
        if let Some(text) = cmd.strip_prefix("echo ") {
            return Ok(ShellValue {
                stdout: format!("{text}\n"),
                exit_code: 0,
            });
        }
        if let Some(n) = cmd.strip_prefix("yes ") {
            let n: usize = n.parse().map_err(|_| ToolError::new("yes: not a number"))?;
            return Ok(ShellValue {
                stdout: (0..n).map(|i| format!("y {i}\n")).collect(),
                exit_code: 0,
            });
        }
        match cmd {
            "fail" => Ok(ShellValue {
                stdout: "it failed\n".into(),
                exit_code: 1,
            }),
            "crash" => Err(ToolError::new("the shell crashed")),
            _ => Ok(ShellValue {
                stdout: String::new(),
                exit_code: 127,
            }),
        }
    }

    fn render(_: &ShellArgs, value: &ShellValue) -> Vec<ContentBlock> {
        vec![ContentBlock::text(format!(
            "{}[exit code {}]",
            value.stdout, value.exit_code
        ))]
    }

    fn presentation_meta(_: &ShellArgs, value: &ShellValue) -> Option<ShellMeta> {
        Some(ShellMeta {
            exit_code: value.exit_code,
        })
    }

    fn present_call(args: &ShellArgs) -> Option<CallCard> {
        let mut card = TerminalCall::new(&args.command);
        card.cwd = args.cwd.clone();
        Some(CallCard::Terminal(card))
    }

    fn present_result(_: &ShellArgs, result: &ToolResult<ShellMeta>) -> Option<ResultCard> {
        // Drawn for failures too: output only, no status.
        Some(ResultCard::Terminal(TerminalResult::new(
            None,
            Some(content_text(&result.content)),
            result.meta.as_ref().map(|m| ExitStatus::Code(m.exit_code)),
        )))
    }
}

// ---------------------------------------------------------------------------
// read_file: read cards; never spilled
// ---------------------------------------------------------------------------

#[derive(Clone, Deserialize, schemars::JsonSchema)]
pub(crate) struct ReadArgs {
    pub(crate) path: String,
    #[serde(default)]
    pub(crate) offset: Option<u64>,
    #[serde(default)]
    pub(crate) limit: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub(crate) struct ReadValue {
    pub(crate) lines: Vec<String>,
    pub(crate) offset: u64,
    pub(crate) total_lines: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct ReadMeta {
    pub(crate) offset: u64,
    pub(crate) total_lines: u64,
    pub(crate) lang: Option<String>,
}

/// A fake file system: every file has 5000 lines `line N of PATH`.
pub(crate) struct ReadFile;

impl Tool for ReadFile {
    type Args = ReadArgs;
    type Value = ReadValue;
    type Meta = ReadMeta;
    const INFO: ToolInfo = ToolInfo::new("read_file", "Read a text file as numbered lines.")
        .with_kind(ToolKind::Read)
        .with_spill(SpillBudget::Never);

    async fn execute(&self, args: ReadArgs, _: &ToolContext<'_>) -> Result<ReadValue, ToolError> {
        if args.path.contains("missing") {
            return Err(ToolError::new(format!("{}: no such file", args.path)).with_code("ENOENT"));
        }
        let total = 5000u64;
        let offset = args.offset.unwrap_or(1).clamp(1, total);
        let end = (offset + args.limit.unwrap_or(2000)).min(total + 1);
        Ok(ReadValue {
            lines: (offset..end)
                .map(|n| format!("line {n} of {}", args.path))
                .collect(),
            offset,
            total_lines: total,
        })
    }

    fn render(_: &ReadArgs, value: &ReadValue) -> Vec<ContentBlock> {
        let text: Vec<String> = value
            .lines
            .iter()
            .zip(value.offset..)
            .map(|(line, n)| format!("{n:>6}\t{line}"))
            .collect();
        vec![ContentBlock::text(text.join("\n"))]
    }

    fn presentation_meta(args: &ReadArgs, value: &ReadValue) -> Option<ReadMeta> {
        Some(ReadMeta {
            offset: value.offset,
            total_lines: value.total_lines,
            lang: args.path.ends_with(".rs").then(|| "rust".into()),
        })
    }

    fn present_result(args: &ReadArgs, result: &ToolResult<ReadMeta>) -> Option<ResultCard> {
        let meta = result.meta.as_ref()?;
        // The lines come back from the persisted content, not the value.
        let text = content_text(&result.content);
        let lines = text
            .lines()
            .filter_map(|l| {
                let (n, t) = l.split_once('\t')?;
                Some(NumberedLine::new(n.trim().parse().ok()?, t.to_owned()))
            })
            .collect();
        let mut card = ReadResult::new(&args.path, meta.offset, lines, meta.total_lines);
        card.lang = meta.lang.clone();
        Some(ResultCard::Read(card))
    }
}

// ---------------------------------------------------------------------------
// plain: no presenters at all (generic cards)
// ---------------------------------------------------------------------------

#[derive(Clone, Deserialize, schemars::JsonSchema)]
pub(crate) struct PlainArgs {
    pub(crate) text: String,
    /// Repeat the text this many times (to make content large).
    #[serde(default)]
    pub(crate) times: Option<usize>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub(crate) struct PlainValue {
    pub(crate) text: String,
    pub(crate) len: usize,
}

pub(crate) struct Plain;

impl Tool for Plain {
    type Args = PlainArgs;
    type Value = PlainValue;
    type Meta = NoMeta;
    const INFO: ToolInfo = ToolInfo::new("plain", "Repeat some text.");

    async fn execute(&self, args: PlainArgs, _: &ToolContext<'_>) -> Result<PlainValue, ToolError> {
        let text = args.text.repeat(args.times.unwrap_or(1));
        Ok(PlainValue {
            len: text.len(),
            text,
        })
    }

    fn render(_: &PlainArgs, value: &PlainValue) -> Vec<ContentBlock> {
        vec![ContentBlock::text(&value.text)]
    }
}

// ---------------------------------------------------------------------------
// panicky: presenters that panic on some inputs (generic cards then)
// ---------------------------------------------------------------------------

#[derive(Clone, Deserialize, schemars::JsonSchema)]
pub(crate) struct PanickyArgs {
    pub(crate) mode: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct PanickyMeta {
    pub(crate) mode: String,
}

pub(crate) struct Panicky;

impl Tool for Panicky {
    type Args = PanickyArgs;
    type Value = String;
    type Meta = PanickyMeta;
    const INFO: ToolInfo = ToolInfo::new("panicky", "Presenters that panic.");

    async fn execute(&self, args: PanickyArgs, _: &ToolContext<'_>) -> Result<String, ToolError> {
        Ok(args.mode)
    }

    fn render(_: &PanickyArgs, value: &String) -> Vec<ContentBlock> {
        vec![ContentBlock::text(format!("mode {value}"))]
    }

    fn presentation_meta(args: &PanickyArgs, _: &String) -> Option<PanickyMeta> {
        Some(PanickyMeta {
            mode: args.mode.clone(),
        })
    }

    fn present_call(args: &PanickyArgs) -> Option<CallCard> {
        if args.mode.contains("call") {
            panic!("present_call panics on purpose");
        }
        Some(CallCard::Terminal(
            TerminalCall::new(args.mode.clone()).with_description("no panic"),
        ))
    }

    fn present_result(_: &PanickyArgs, result: &ToolResult<PanickyMeta>) -> Option<ResultCard> {
        let meta = result.meta.as_ref()?;
        if meta.mode.contains("result") {
            panic!("present_result panics on purpose");
        }
        Some(ResultCard::Terminal(TerminalResult::new(
            Some(meta.mode.clone()),
            None,
            Some(ExitStatus::Signal("SIGTERM".into())),
        )))
    }
}

/// Quiets the panic messages of presenters that panic on purpose.
pub(crate) fn quiet_panics() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let msg = info
                .payload()
                .downcast_ref::<&str>()
                .copied()
                .unwrap_or_default();
            if !msg.contains("on purpose") {
                default(info);
            }
        }));
    });
}

/// A multi-thread tokio runtime for the tests.
pub(crate) fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(4)
        .enable_all()
        .build()
        .unwrap()
}
