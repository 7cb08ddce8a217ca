//! Draws cards as plain text for a terminal.
//!
//! This is UI code: it switches on the card's tag (the enum variant) and
//! nothing else. It never names a tool, so any tool, present or future,
//! that returns a card of a known tag is drawn right (contract rule C8, `docs/contract.md`).
//! Long bodies are cut to a few lines, and the cut is always said.
//!
//! Every text in a card is data: control characters (an escape sequence
//! that would move the cursor or recolour the terminal, a carriage return
//! that would overwrite a line) and the bidirectional overrides that make
//! text read differently than it is are shown escaped (`\u{1b}`), never
//! sent to the terminal as is.
//!
//! ```
//! use toolprism::card::{ExitStatus, ResultCard, TerminalResult};
//! use toolprism::cli::terminal::{Style, draw_result};
//!
//! let card = ResultCard::Terminal(TerminalResult::new(Some("make".into()), Some("\x1b[31mbuild failed\x1b[0m".into()), Some(ExitStatus::Code(2))));
//! assert_eq!(
//!     draw_result(&card, Style::default()),
//!     "◀ [terminal] exit 2 ✗ · make\n  │ \\u{1b}[31mbuild failed\\u{1b}[0m"
//! );
//! ```

use similar::{ChangeTag, TextDiff};

use super::text::{clean, ellipsize, is_spill_notice, plural_grouped as plural, thousands};
use toolprism_core::card::{
    CallCard, DiffCall, DiffResult, ExitStatus, FileDiff, GenericCall, GenericResult, ReadResult,
    ResultCard, SearchResult, SearchShape, TerminalCall, TerminalResult, WebFetch, WebResult,
    WebSearch,
};
use toolprism_core::{ContentBlock, content_text};

/// How much of a card to draw.
#[derive(Debug, Clone, Copy)]
pub struct Style {
    /// Body lines drawn per card before `… N more lines`.
    pub max_lines: usize,
    /// Chars per line before `…`.
    pub width: usize,
}

impl Default for Style {
    fn default() -> Self {
        Style {
            max_lines: 8,
            width: 100,
        }
    }
}

/// Lines being drawn, with the card's body capped.
struct Canvas {
    style: Style,
    head: String,
    body: Vec<String>,
    hidden: usize,
}

impl Canvas {
    fn new(style: Style, head: String) -> Self {
        Canvas {
            style,
            head: ellipsize(&clean(&head), style.width.saturating_add(20)),
            body: Vec::new(),
            hidden: 0,
        }
    }

    fn line(&mut self, text: impl AsRef<str>) {
        if self.body.len() < self.style.max_lines {
            self.body
                .push(ellipsize(&clean(text.as_ref()), self.style.width));
        } else {
            self.hidden += 1;
        }
    }

    fn text(&mut self, prefix: &str, text: &str) {
        for line in text.lines() {
            if is_spill_notice(line) {
                self.pinned(format!("{prefix}{line}"));
            } else {
                self.line(format!("{prefix}{line}"));
            }
        }
    }

    /// A line drawn even past the cap: the notice that says where spilled
    /// output was stored (C15) is never among the lines left out. The
    /// lines left out before it are said first.
    fn pinned(&mut self, text: String) {
        if self.body.len() < self.style.max_lines {
            return self.line(text);
        }
        self.say_hidden();
        self.body.push(ellipsize(&clean(&text), self.style.width));
    }

    /// `… N more lines` for the lines left out so far.
    fn say_hidden(&mut self) {
        if self.hidden > 0 {
            let more = plural(self.hidden as u64, "more line", "more lines");
            self.body.push(format!("… {more}"));
            self.hidden = 0;
        }
    }

    fn finish(mut self) -> String {
        self.say_hidden();
        let mut out = self.head;
        for line in self.body {
            out.push_str("\n  │ ");
            out.push_str(&line);
        }
        out
    }
}

/// A call card as text.
pub fn draw_call(card: &CallCard, style: Style) -> String {
    match card {
        CallCard::Generic(GenericCall {
            title,
            kind,
            raw_input,
            content,
            locations,
            ..
        }) => {
            let kind = kind
                .map(|k| format!(" ({})", k.as_str()))
                .unwrap_or_default();
            let mut c = Canvas::new(style, format!("▶ [generic] {title}{kind}"));
            match raw_input {
                // Arguments that were not JSON arrive as their text: shown
                // as sent, not as a quoted JSON string.
                Some(serde_json::Value::String(text)) if text.contains('\n') => {
                    c.line("input:");
                    c.text("  ", text);
                }
                Some(serde_json::Value::String(text)) => c.line(format!("input: {text}")),
                Some(input) => c.line(format!("input: {input}")),
                None => {}
            }
            for location in locations.iter().flatten() {
                match location.line {
                    Some(line) => c.line(format!("at: {}:{line}", location.path)),
                    None => c.line(format!("at: {}", location.path)),
                }
            }
            if let Some(content) = content {
                c.text("", &content_text(content));
            }
            c.finish()
        }
        CallCard::Terminal(TerminalCall {
            title,
            description,
            cwd,
            ..
        }) => {
            let mut c = Canvas::new(style, format!("▶ [terminal] $ {title}"));
            match (cwd, description) {
                (Some(cwd), Some(d)) => c.line(format!("in {cwd} · {d}")),
                (Some(cwd), None) => c.line(format!("in {cwd}")),
                (None, Some(d)) => c.line(d),
                (None, None) => {}
            }
            c.finish()
        }
        CallCard::Diff(DiffCall { title, diffs, .. }) => {
            let mut c = Canvas::new(style, format!("▶ [diff] {title}"));
            diff_lines(&mut c, diffs);
            c.finish()
        }
    }
}

/// A result card as text.
pub fn draw_result(card: &ResultCard, style: Style) -> String {
    match card {
        ResultCard::Generic(GenericResult { title, content, .. }) => {
            let mut c = Canvas::new(
                style,
                format!("◀ [generic] {}", title.as_deref().unwrap_or("result")),
            );
            if let Some(content) = content {
                for block in content {
                    match block {
                        ContentBlock::Text { text } => c.text("", text),
                        ContentBlock::Image { mime_type, .. } => {
                            c.line(format!("[{mime_type} image]"))
                        }
                        ContentBlock::Audio { mime_type, .. } => {
                            c.line(format!("[{mime_type} audio]"))
                        }
                        other => c.text("", &content_text(std::slice::from_ref(other))),
                    }
                }
            }
            c.finish()
        }
        ResultCard::Terminal(TerminalResult {
            title,
            output,
            status,
            sandbox,
            ..
        }) => {
            let status = match status {
                Some(ExitStatus::Code(0)) => "exit 0 ✓".to_owned(),
                Some(ExitStatus::Code(code)) => format!("exit {code} ✗"),
                Some(ExitStatus::Signal(signal)) => format!("killed by {signal} ✗"),
                None => "still running".to_owned(),
            };
            let title = title
                .as_deref()
                .map(|t| format!(" · {t}"))
                .unwrap_or_default();
            let mut c = Canvas::new(style, format!("◀ [terminal] {status}{title}"));
            if let Some(sandbox) = sandbox {
                c.line(sandbox_line(sandbox));
            }
            if let Some(output) = output {
                c.text("", output);
            }
            c.finish()
        }
        ResultCard::Diff(DiffResult { title, diffs, .. }) => {
            let mut c = Canvas::new(
                style,
                format!("◀ [diff] {}", title.as_deref().unwrap_or("changes")),
            );
            diff_lines(&mut c, diffs);
            c.finish()
        }
        ResultCard::Search(search) => draw_search(search, style),
        ResultCard::Read(ReadResult {
            path,
            offset,
            lines,
            total_lines,
            lang,
            content,
            ..
        }) => {
            let lang = lang
                .as_deref()
                .map(|l| format!(" · {l}"))
                .unwrap_or_default();
            let (first, total) = (thousands(*offset), thousands(*total_lines));
            // The window the card holds, never one line it does not.
            let window = match (lines.len() as u64).checked_sub(1) {
                None => format!("no lines from line {first} of {total}"),
                Some(more) => format!(
                    "lines {first}–{} of {total}",
                    thousands(offset.saturating_add(more))
                ),
            };
            let mut c = Canvas::new(style, format!("◀ [read] {path} · {window}{lang}"));
            for line in lines {
                c.line(format!("{:>5} │ {}", line.number, line.text));
            }
            if let Some(content) = content {
                c.text("", content);
            }
            c.finish()
        }
        ResultCard::Web(WebResult::Fetch(WebFetch {
            url,
            status_code,
            truncated,
            ..
        })) => {
            let cut = if *truncated { " · truncated" } else { "" };
            Canvas::new(
                style,
                format!("◀ [web] GET {url} → HTTP {status_code}{cut}"),
            )
            .finish()
        }
        ResultCard::Web(WebResult::Search(WebSearch {
            title,
            sources,
            answer,
            truncated,
            ..
        })) => {
            let cut = if *truncated { " · truncated" } else { "" };
            let mut c = Canvas::new(
                style,
                format!(
                    "◀ [web] search {} · {}{cut}",
                    title.as_deref().unwrap_or(""),
                    plural(sources.len() as u64, "source", "sources")
                ),
            );
            if let Some(answer) = answer {
                c.text("", answer);
            }
            for source in sources {
                c.line(format!(
                    "{} {}",
                    source.url,
                    source.title.as_deref().unwrap_or("")
                ));
            }
            c.finish()
        }
    }
}

fn draw_search(search: &SearchResult, style: Style) -> String {
    let shown = search.shape().shown();
    let (shown, total) = (thousands(shown as u64), thousands(search.total()));
    let count = if search.truncated() {
        format!("{shown} shown of {total} · truncated")
    } else {
        format!("all {shown} shown")
    };
    let (shape, title) = match search.shape() {
        SearchShape::Matches(_) => ("matches", search.title().unwrap_or("matches")),
        SearchShape::Paths(_) => ("paths", search.title().unwrap_or("paths")),
    };
    let mut c = Canvas::new(style, format!("◀ [search/{shape}] {title} · {count}"));
    match search.shape() {
        SearchShape::Matches(files) => {
            for file in files {
                c.line(&file.path);
                for m in &file.matches {
                    c.line(format!("  {:>5}: {}", m.line_number, m.line));
                }
            }
        }
        SearchShape::Paths(paths) => {
            for path in paths {
                c.line(path);
            }
        }
    }
    c.finish()
}

/// How long one file diff may spend aligning lines.
const DIFF_TIMEOUT: std::time::Duration = std::time::Duration::from_millis(250);

/// Each file diff as `-`/`+`/` ` lines.
fn diff_lines(c: &mut Canvas, diffs: &[FileDiff]) {
    for diff in diffs {
        // Where the excerpt sits in the file, only when the card says so:
        // its lines are never numbered from a guess.
        match diff.new_start.or(diff.old_start) {
            Some(line) => c.line(format!("@ {}:{line}", diff.path)),
            None => c.line(format!("@ {}", diff.path)),
        }
        let old = diff.old_text.as_deref().unwrap_or("");
        // A diff of hostile or huge texts gives up aligning after a while
        // and shows a correct, longer diff: drawing a card never hangs.
        let lines = TextDiff::configure()
            .timeout(DIFF_TIMEOUT)
            .diff_lines(old, diff.new_text.as_str());
        for change in lines.iter_all_changes() {
            let sign = match change.tag() {
                ChangeTag::Delete => "-",
                ChangeTag::Insert => "+",
                ChangeTag::Equal => " ",
            };
            c.line(format!("{sign} {}", change.value().trim_end_matches('\n')));
        }
    }
}

/// The sandbox line of a terminal card: the mode, the network, and whether
/// the sandbox likely stopped the command.
fn sandbox_line(sandbox: &toolprism_core::card::TerminalSandbox) -> String {
    let network = if sandbox.network {
        "network on"
    } else {
        "network off"
    };
    let stopped = if sandbox.denied {
        " · the sandbox may have stopped it"
    } else {
        ""
    };
    format!("sandbox: {}, {network}{stopped}", sandbox.mode)
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolprism_core::card::{NumberedLine, SearchFile, SearchMatch};

    #[test]
    fn draws_each_tag_and_says_what_it_cut() {
        let style = Style {
            max_lines: 2,
            width: 40,
        };
        let generic = ResultCard::generic(Some("t".into()), vec![ContentBlock::text("a\nb\nc\nd")]);
        assert_eq!(
            draw_result(&generic, style),
            "◀ [generic] t\n  │ a\n  │ b\n  │ … 2 more lines"
        );
        let search = ResultCard::Search(
            SearchResult::matches(
                vec![SearchFile::new("a.rs", vec![SearchMatch::new(3, "x")])],
                9,
            )
            .unwrap(),
        );
        let text = draw_result(&search, style);
        assert!(
            text.starts_with("◀ [search/matches] matches · 1 shown of 9 · truncated"),
            "{text}"
        );
        let terminal = ResultCard::Terminal(TerminalResult::new(
            Some("false".into()),
            None,
            Some(ExitStatus::Signal("SIGKILL".into())),
        ));
        assert_eq!(
            draw_result(&terminal, style),
            "◀ [terminal] killed by SIGKILL ✗ · false"
        );
        let read = ResultCard::Read(
            ReadResult::new("a.rs", 4, vec![NumberedLine::new(4, "fn x() {}")], 10)
                .with_lang("rust"),
        );
        assert_eq!(
            draw_result(&read, style),
            "◀ [read] a.rs · lines 4–4 of 10 · rust\n  │     4 │ fn x() {}"
        );
        let diff = CallCard::Diff(DiffCall::new(
            "Edit a",
            vec![FileDiff::new("a", Some("x\n".into()), "y\n")],
        ));
        assert_eq!(
            draw_call(&diff, Style::default()),
            "▶ [diff] Edit a\n  │ @ a\n  │ - x\n  │ + y"
        );
    }

    #[test]
    fn a_diff_says_where_it_is_only_when_the_card_holds_it() {
        let at = |diff: FileDiff| {
            let card = ResultCard::Diff(DiffResult::new(vec![diff]));
            draw_result(&card, Style::default())
        };
        let excerpt = || FileDiff::new("app.toml", Some("a\nb\n".into()), "a\nB\n");
        assert_eq!(
            at(excerpt().with_starts(Some(17), Some(18))),
            "◀ [diff] changes\n  │ @ app.toml:18\n  │   a\n  │ - b\n  │ + B"
        );
        // An old log's card, or a call card built from arguments: no line.
        assert!(at(excerpt()).starts_with("◀ [diff] changes\n  │ @ app.toml\n"));
    }

    #[test]
    fn the_spill_notice_is_drawn_past_the_cap() {
        let mut output: String = (1..=20).map(|i| format!("{i}\n")).collect();
        output.push_str("\n(Omitted 4350 of 16456 bytes. The full result (16456 bytes) is stored at: /s/x.txt. Read that file in pages to see the rest.)\n\n");
        output.extend((90..=99).map(|i| format!("{i}\n")));
        let card = ResultCard::Terminal(TerminalResult::new(
            None,
            Some(output),
            Some(ExitStatus::Code(0)),
        ));
        let style = Style {
            max_lines: 3,
            width: 200,
        };
        assert_eq!(
            draw_result(&card, style),
            "◀ [terminal] exit 0 ✓\n  │ 1\n  │ 2\n  │ 3\n  │ … 18 more lines\n  │ (Omitted 4350 of 16456 bytes. The full result (16456 bytes) is stored at: /s/x.txt. Read that file in pages to see the rest.)\n  │ … 11 more lines"
        );
    }

    #[test]
    fn counts_are_grouped_and_windows_are_what_the_card_holds() {
        let search = ResultCard::Search(
            SearchResult::matches(
                vec![SearchFile::new("a.rs", vec![SearchMatch::new(3, "x")])],
                9876,
            )
            .unwrap(),
        );
        assert!(
            draw_result(&search, Style::default())
                .starts_with("◀ [search/matches] matches · 1 shown of 9,876 · truncated"),
        );
        let past_the_end = ResultCard::Read(ReadResult::new("a.rs", 1200, vec![], 1100));
        assert_eq!(
            draw_result(&past_the_end, Style::default()),
            "◀ [read] a.rs · no lines from line 1,200 of 1,100"
        );
        let long: String = (0..1234).map(|i| format!("{i}\n")).collect();
        let generic = ResultCard::generic(None, vec![ContentBlock::text(long)]);
        assert!(draw_result(&generic, Style::default()).ends_with("… 1,226 more lines"));
    }

    #[test]
    fn arguments_that_were_not_json_are_shown_as_sent() {
        let sent = "{\"path\": \"a.rs\", oops";
        let card = CallCard::generic("look", None, Some(serde_json::Value::String(sent.into())));
        assert_eq!(
            draw_call(&card, Style::default()),
            "▶ [generic] look\n  │ input: {\"path\": \"a.rs\", oops"
        );
        let two_lines =
            CallCard::generic("x", None, Some(serde_json::Value::String("a\nb".into())));
        assert_eq!(
            draw_call(&two_lines, Style::default()),
            "▶ [generic] x\n  │ input:\n  │   a\n  │   b"
        );
    }

    #[test]
    fn the_status_comes_from_the_card_never_from_the_output() {
        // Output that says "timed out" does not make a command time out.
        let card = ResultCard::Terminal(TerminalResult::new(
            None,
            Some("[retry 2: timed out, retried]".into()),
            Some(ExitStatus::Code(0)),
        ));
        assert_eq!(
            draw_result(&card, Style::default()),
            "◀ [terminal] exit 0 ✓\n  │ [retry 2: timed out, retried]"
        );
    }
}
