//! `read`: a window of a text file as numbered lines.
//!
//! - **Value** [`ReadValue`]: `{path, offset, lines:[{number,text}], totalLines, byteCapped}`,
//!   only the window (the file may be large).
//! - **Caps**: 2000 chars per line (longer lines end in `…[line truncated]`),
//!   2000 lines and 50 KiB per call.
//! - **Render**: `<path>P</path>\n<type>file</type>\n<content>\nN: text…\n\n(footer)\n</content>`;
//!   the footer says whether the file ended, the window ended, or the byte cap hit,
//!   and which `offset` continues.
//! - **Meta** [`ReadMeta`]: `{path, offset, lines, totalLines, lang?}` where `lines` is a count.
//! - **Cards**: a `generic` call card of kind `read` with a location,
//!   titled `Read P` plus only the window the arguments ask for
//!   (`(lines 3–4)`, `(from line 3)`, `(first 10 lines)`), never the
//!   defaults; a `read` result card from meta, with the numbered lines taken
//!   back out of the persisted content. If the content no longer holds them
//!   (a policy rewrote it), the card keeps path, offset and totalLines from
//!   meta and shows the content as text instead of guessing lines.
//! - **Spill**: never (`spill = never`): a spilled read would be read again.
//! - **Confinement**: the path is resolved in the tool's [`Workspace`].

use std::fs::File;
use std::io::{BufRead, BufReader, Read};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolprism::card::{Location, NumberedLine, ReadResult, ResultCard};
use toolprism::{CallCard, ContentBlock, ToolContext, ToolError, ToolKind, ToolResult, tool};

use crate::blocking::Stop;
use crate::text::{cap_chars, plural};
use crate::workspace::Workspace;

/// Longest line kept, in chars.
pub const MAX_LINE_CHARS: usize = 2000;
/// Most lines per call.
pub const MAX_LINES: u64 = 2000;
/// Most bytes of numbered lines per call.
pub const MAX_BYTES: usize = 50 * 1024;

/// Arguments of `read`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ReadArgs {
    /// The file, relative to the workspace root.
    pub path: String,
    /// 1-based number of the first line to read. Default 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub offset: Option<u64>,
    /// How many lines to read. Default and maximum 2000.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 2000))]
    pub limit: Option<u64>,
}

impl ReadArgs {
    fn window(&self) -> (u64, u64) {
        let offset = self.offset.unwrap_or(1).max(1);
        let limit = self.limit.unwrap_or(MAX_LINES).clamp(1, MAX_LINES);
        (offset, limit)
    }
}

/// One numbered line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Line {
    /// 1-based line number.
    pub number: u64,
    /// The text, without its line ending, capped at 2000 chars.
    pub text: String,
}

/// The value of `read`: the window read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReadValue {
    /// The file, relative to the workspace root.
    pub path: String,
    /// 1-based number of the first line.
    pub offset: u64,
    /// The lines read.
    pub lines: Vec<Line>,
    /// Lines in the whole file.
    pub total_lines: u64,
    /// Whether the 50 KiB cap ended the window early.
    pub byte_capped: bool,
}

/// The meta of `read`: enough to draw the card, not the lines themselves.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReadMeta {
    /// The file, relative to the workspace root.
    pub path: String,
    /// 1-based number of the first line shown.
    pub offset: u64,
    /// How many lines are shown.
    pub lines: u64,
    /// Lines in the whole file.
    pub total_lines: u64,
    /// A language hint from the file's extension.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lang: Option<String>,
}

/// Reads text files inside its workspace (`Default`: the current directory).
#[derive(Debug, Clone, Default)]
pub struct ReadTool {
    workspace: Workspace,
}

impl ReadTool {
    /// A `read` confined to `workspace`.
    pub fn new(workspace: Workspace) -> Self {
        ReadTool { workspace }
    }
}

/// Read a text file as numbered lines (`N: text`). Use `offset` (1-based) and
/// `limit` to page through long files; the footer says where to continue.
/// Lines over 2000 chars are cut; at most 2000 lines or 50 KiB per call.
/// Paths are relative to the workspace root and cannot leave it.
#[tool(
    name = "read",
    title = "Read file",
    kind = read,
    read_only,
    idempotent,
    timeout_ms = 5000,
    spill = never,
    blocking,
    builtin
)]
impl ReadTool {
    fn execute(&self, args: ReadArgs, cx: &ToolContext<'_>) -> Result<ReadValue, ToolError> {
        self.run(args, &Stop::of(cx))
    }

    fn render(_args: &ReadArgs, value: &ReadValue) -> Vec<ContentBlock> {
        let mut out = format!(
            "<path>{}</path>\n<type>file</type>\n<content>\n",
            value.path
        );
        for line in &value.lines {
            out.push_str(&format!("{}: {}\n", line.number, line.text));
        }
        out.push('\n');
        out.push_str(&footer(value));
        out.push_str("\n</content>");
        vec![ContentBlock::text(out)]
    }

    fn presentation_meta(_args: &ReadArgs, value: &ReadValue) -> ReadMeta {
        ReadMeta {
            path: value.path.clone(),
            offset: value.offset,
            lines: value.lines.len() as u64,
            total_lines: value.total_lines,
            lang: lang_of(&value.path).map(str::to_owned),
        }
    }

    fn present_call(args: &ReadArgs) -> CallCard {
        // Only what the arguments say: the window a call asked for, never
        // the defaults filled in (the call may fail or the file be shorter).
        let window = match (args.offset, args.limit) {
            (Some(offset), Some(limit)) => format!(
                " (lines {offset}–{})",
                offset.saturating_add(limit.saturating_sub(1))
            ),
            (Some(offset), None) => format!(" (from line {offset})"),
            (None, Some(limit)) => format!(" (first {})", plural(limit, "line", "lines")),
            (None, None) => String::new(),
        };
        let CallCard::Generic(mut card) = CallCard::generic(
            format!("Read {}{window}", args.path),
            Some(ToolKind::Read),
            serde_json::to_value(args).ok(),
        ) else {
            unreachable!("CallCard::generic builds a generic card")
        };
        let mut location = Location::new(&args.path);
        location.line = args.offset;
        card.locations = Some(vec![location]);
        CallCard::Generic(card)
    }

    fn present_result(_args: &ReadArgs, result: &ToolResult<ReadMeta>) -> Option<ResultCard> {
        let meta = result.meta.as_ref().filter(|_| !result.is_error)?;
        let text = toolprism::content_text(&result.content);
        let (lines, content) = match lines_from_content(&text, meta) {
            Some(lines) => (lines, None),
            None => (Vec::new(), Some(text)),
        };
        let mut card = ReadResult::new(&meta.path, meta.offset, lines, meta.total_lines)
            .with_title(&meta.path);
        card.lang = meta.lang.clone();
        card.content = content;
        Some(ResultCard::Read(card))
    }
}

impl ReadTool {
    /// The read itself, synchronous (see [`crate::blocking`]).
    fn run(&self, args: ReadArgs, stop: &Stop) -> Result<ReadValue, ToolError> {
        let (path, file) = self.workspace.open_existing(&args.path)?;
        let shown = self.workspace.display(&path);
        let (offset, limit) = args.window();
        read_window(file, shown, offset, limit, stop)
    }
}

fn footer(value: &ReadValue) -> String {
    let first = value.offset;
    let last = value.offset + value.lines.len() as u64 - 1;
    if value.total_lines == 0 {
        "(File is empty)".to_owned()
    } else if value.lines.is_empty() {
        format!("(No lines shown: the first line from offset {first} is over the 50 KiB cap)")
    } else if last >= value.total_lines {
        format!("(End of file - total {} lines)", value.total_lines)
    } else if value.byte_capped {
        format!(
            "(Output capped at 50 KiB. Showing lines {first}-{last} of {}. Use offset={} to continue.)",
            value.total_lines,
            last + 1
        )
    } else {
        format!(
            "(Showing lines {first}-{last} of {}. Use offset={} to continue.)",
            value.total_lines,
            last + 1
        )
    }
}

/// The numbered lines back out of rendered content, if it still holds
/// exactly the lines meta says it shows.
fn lines_from_content(text: &str, meta: &ReadMeta) -> Option<Vec<NumberedLine>> {
    let body = text.split_once("<content>\n")?.1;
    let mut lines = Vec::with_capacity(meta.lines as usize);
    let mut rest = body.split('\n');
    for i in 0..meta.lines {
        let number = meta.offset + i;
        let line = rest.next()?;
        let text = line.strip_prefix(&format!("{number}: "))?;
        lines.push(NumberedLine::new(number, text.to_owned()));
    }
    Some(lines)
}

/// A language hint from a path's extension.
pub fn lang_of(path: &str) -> Option<&'static str> {
    let name = path.rsplit('/').next().unwrap_or(path);
    let ext = name.rsplit_once('.')?.1.to_ascii_lowercase();
    Some(match ext.as_str() {
        "rs" => "rust",
        "py" => "python",
        "js" | "mjs" | "cjs" => "javascript",
        "ts" | "tsx" => "typescript",
        "md" => "markdown",
        "toml" => "toml",
        "json" => "json",
        "yaml" | "yml" => "yaml",
        "sh" | "bash" => "bash",
        "c" | "h" => "c",
        "cc" | "cpp" | "hpp" => "cpp",
        "go" => "go",
        "java" => "java",
        "rb" => "ruby",
        "html" | "htm" => "html",
        "css" => "css",
        "sql" => "sql",
        _ => return None,
    })
}

fn read_window(
    mut file: File,
    shown: String,
    offset: u64,
    limit: u64,
    stop: &Stop,
) -> Result<ReadValue, ToolError> {
    if file.metadata().is_ok_and(|m| m.is_dir()) {
        return Err(ToolError::new(format!(
            "\"{shown}\" is a directory; use glob to list its files"
        ))
        .with_code("IS_A_DIRECTORY"));
    }
    // The first 8 KiB, into room that is not zeroed first (a zeroed buffer
    // was a sixth of a small file's read).
    let mut head = Vec::with_capacity(8192);
    (&mut file)
        .take(8192)
        .read_to_end(&mut head)
        .map_err(|e| format!("cannot read \"{shown}\": {e}"))?;
    if head.contains(&0) {
        return Err(ToolError::new(format!(
            "\"{shown}\" looks like a binary file (it contains NUL bytes); read only text files"
        ))
        .with_code("BINARY_FILE"));
    }
    let mut reader = BufReader::new(head.as_slice().chain(file));
    let mut buf = Vec::new();
    let mut number = 0u64;
    let mut lines = Vec::new();
    let mut bytes = 0usize;
    let mut byte_capped = false;
    loop {
        buf.clear();
        let read = reader
            .read_until(b'\n', &mut buf)
            .map_err(|e| format!("cannot read \"{shown}\": {e}"))?;
        if read == 0 {
            break;
        }
        number += 1;
        // Counting the lines of a huge file takes a while: end it when the
        // call is over.
        if number.is_multiple_of(16_384) {
            stop.check()?;
        }
        let in_window = number >= offset && number < offset.saturating_add(limit);
        if !in_window || byte_capped {
            continue;
        }
        let raw = String::from_utf8_lossy(&buf);
        let raw = raw.strip_suffix('\n').unwrap_or(&raw);
        let raw = raw.strip_suffix('\r').unwrap_or(raw);
        let text = match cap_chars(raw, MAX_LINE_CHARS) {
            (text, false) => text.into_owned(),
            (text, true) => format!("{text}…[line truncated]"),
        };
        let cost = text.len() + number.to_string().len() + 3;
        if bytes + cost > MAX_BYTES {
            byte_capped = true;
            continue;
        }
        bytes += cost;
        lines.push(Line { number, text });
    }
    let total_lines = number;
    if total_lines > 0 && offset > total_lines {
        return Err(ToolError::new(format!(
            "offset {offset} is past the end of \"{shown}\", which has {total_lines} lines; use an offset from 1 to {total_lines}"
        ))
        .with_code("OFFSET_OUT_OF_RANGE"));
    }
    Ok(ReadValue {
        path: shown,
        offset,
        lines,
        total_lines,
        byte_capped,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use toolprism::{Registry, ToolCall};

    fn setup() -> (tempfile::TempDir, Registry) {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        fs::create_dir_all(ws.join("src")).unwrap();
        let body: String = (1..=30).map(|i| format!("line {i}\n")).collect();
        fs::write(ws.join("src/lib.rs"), body).unwrap();
        fs::write(ws.join("empty.txt"), "").unwrap();
        fs::write(ws.join("crlf.txt"), "a\r\nb\r\n").unwrap();
        fs::write(ws.join("long.txt"), "x".repeat(5000)).unwrap();
        fs::write(ws.join("bin.dat"), [0u8, 1, 2]).unwrap();
        fs::write(dir.path().join("secret.txt"), "top secret").unwrap();
        std::os::unix::fs::symlink(dir.path().join("secret.txt"), ws.join("sneaky")).unwrap();
        let wide: String = (0..100)
            .map(|_| format!("{}\n", "y".repeat(1000)))
            .collect();
        fs::write(ws.join("wide.txt"), wide).unwrap();
        let registry = Registry::builder()
            .tool(ReadTool::new(Workspace::new(&ws).unwrap()))
            .build()
            .unwrap();
        (dir, registry)
    }

    async fn call(registry: &Registry, args: serde_json::Value) -> toolprism::ToolOutcome {
        registry
            .call(ToolCall::new("c", "read", args.to_string()))
            .await
    }

    #[tokio::test]
    async fn reads_a_window_with_meta_and_a_read_card() {
        let (_d, registry) = setup();
        let out = call(
            &registry,
            serde_json::json!({"path": "src/lib.rs", "offset": 3, "limit": 2}),
        )
        .await;
        assert!(!out.is_error(), "{out:?}");
        let value = out.value_as::<ReadValue>().unwrap();
        assert_eq!(value.lines.len(), 2);
        assert_eq!(value.lines[0].text, "line 3");
        assert_eq!(value.total_lines, 30);
        let text = out.content()[0].as_text().unwrap();
        assert!(text.contains("3: line 3\n4: line 4\n"), "{text}");
        assert!(
            text.contains("(Showing lines 3-4 of 30. Use offset=5 to continue.)"),
            "{text}"
        );
        assert_eq!(
            out.meta().unwrap(),
            &serde_json::json!({"path": "src/lib.rs", "offset": 3, "lines": 2, "totalLines": 30, "lang": "rust"})
        );
        let ResultCard::Read(card) = out.result_card().unwrap() else {
            panic!("not a read card: {:?}", out.result_card())
        };
        assert_eq!(card.lines.len(), 2);
        assert_eq!(card.lines[1].number, 4);
        assert_eq!(card.lines[1].text, "line 4");
        assert_eq!(card.content, None);
        let CallCard::Generic(call) = out.call_card().unwrap() else {
            panic!()
        };
        assert_eq!(call.title, "Read src/lib.rs (lines 3–4)");
        assert_eq!(call.locations.as_ref().unwrap()[0].line, Some(3));
        assert_eq!(call.kind, Some(ToolKind::Read));
    }

    #[test]
    fn the_call_card_shows_only_the_window_the_arguments_ask_for() {
        let card = |args: serde_json::Value| {
            let args: ReadArgs = serde_json::from_value(args).unwrap();
            match ReadTool::present_call(&args) {
                CallCard::Generic(card) => (card.title, card.locations.unwrap()[0].line),
                other => panic!("not a generic card: {other:?}"),
            }
        };
        // No offset or limit: no window, no line (the defaults are not facts).
        assert_eq!(
            card(serde_json::json!({"path": "a.rs"})),
            ("Read a.rs".into(), None)
        );
        assert_eq!(
            card(serde_json::json!({"path": "a.rs", "offset": 7})),
            ("Read a.rs (from line 7)".into(), Some(7))
        );
        assert_eq!(
            card(serde_json::json!({"path": "a.rs", "limit": 1200})),
            ("Read a.rs (first 1,200 lines)".into(), None)
        );
    }

    #[tokio::test]
    async fn end_of_file_empty_crlf_and_long_lines() {
        let (_d, registry) = setup();
        let out = call(
            &registry,
            serde_json::json!({"path": "src/lib.rs", "offset": 29}),
        )
        .await;
        assert!(
            out.content()[0]
                .as_text()
                .unwrap()
                .contains("(End of file - total 30 lines)")
        );
        let out = call(&registry, serde_json::json!({"path": "empty.txt"})).await;
        assert!(!out.is_error());
        assert!(
            out.content()[0]
                .as_text()
                .unwrap()
                .contains("(File is empty)")
        );
        let out = call(&registry, serde_json::json!({"path": "crlf.txt"})).await;
        assert_eq!(out.value_as::<ReadValue>().unwrap().lines[0].text, "a");
        let out = call(&registry, serde_json::json!({"path": "long.txt"})).await;
        let line = &out.value_as::<ReadValue>().unwrap().lines[0].text;
        assert!(line.ends_with("…[line truncated]"));
        assert_eq!(line.chars().filter(|c| *c == 'x').count(), MAX_LINE_CHARS);
    }

    #[tokio::test]
    async fn the_byte_cap_ends_the_window_and_says_so() {
        let (_d, registry) = setup();
        let out = call(&registry, serde_json::json!({"path": "wide.txt"})).await;
        let value = out.value_as::<ReadValue>().unwrap();
        assert!(value.byte_capped);
        assert!(value.lines.len() < 100 && value.lines.len() > 40);
        let text = out.content()[0].as_text().unwrap();
        assert!(text.contains("(Output capped at 50 KiB."), "{text}");
        assert!(text.len() < MAX_BYTES + 500);
    }

    #[tokio::test]
    async fn bad_input_is_a_clear_error_result() {
        let (_d, registry) = setup();
        for (args, code, needle) in [
            (
                serde_json::json!({"path": "../secret.txt"}),
                "OUTSIDE_WORKSPACE",
                "`..`",
            ),
            (
                serde_json::json!({"path": "sneaky"}),
                "OUTSIDE_WORKSPACE",
                "symlink",
            ),
            (
                serde_json::json!({"path": "/etc/hostname"}),
                "OUTSIDE_WORKSPACE",
                "absolute",
            ),
            (serde_json::json!({"path": "nope.txt"}), "NOT_FOUND", "glob"),
            (
                serde_json::json!({"path": "src"}),
                "IS_A_DIRECTORY",
                "directory",
            ),
            (
                serde_json::json!({"path": "bin.dat"}),
                "BINARY_FILE",
                "binary",
            ),
            (
                serde_json::json!({"path": "src/lib.rs", "offset": 99}),
                "OFFSET_OUT_OF_RANGE",
                "from 1 to 30",
            ),
            (
                serde_json::json!({"path": "src/lib.rs", "limit": 0}),
                "INVALID_ARGS",
                "limit",
            ),
            (serde_json::json!({"file": "x"}), "INVALID_ARGS", "path"),
        ] {
            let out = call(&registry, args.clone()).await;
            assert!(out.is_error(), "{args}");
            let error = out.error().unwrap();
            assert_eq!(error.code.as_str(), code, "{args}: {}", error.message);
            assert!(error.message.contains(needle), "{args}: {}", error.message);
            assert!(!error.message.contains("top secret"));
            assert_eq!(out.result_card().unwrap().tag(), "generic");
        }
    }

    #[test]
    fn a_rewritten_content_gives_an_honest_card() {
        let meta = ReadMeta {
            path: "a.rs".into(),
            offset: 5,
            lines: 2,
            total_lines: 9,
            lang: Some("rust".into()),
        };
        let args = ReadArgs {
            path: "a.rs".into(),
            offset: Some(5),
            limit: None,
        };
        let result = ToolResult::ok(vec![ContentBlock::text("[pruned]")]).with_meta(meta);
        let Some(ResultCard::Read(card)) = ReadTool::present_result(&args, &result) else {
            panic!()
        };
        assert!(card.lines.is_empty());
        assert_eq!(card.content.as_deref(), Some("[pruned]"));
        assert_eq!((card.offset, card.total_lines), (5, 9));
    }

    #[test]
    fn languages_from_extensions() {
        assert_eq!(lang_of("src/a.rs"), Some("rust"));
        assert_eq!(lang_of("Makefile"), None);
        assert_eq!(lang_of("a.b/c"), None);
        assert_eq!(lang_of("README.MD"), Some("markdown"));
    }
}
