//! Cards drawn as HTML. Every function here switches on the card's tag
//! (the enum variant) and on nothing else: no tool name reaches this file
//! (DESIGN C8). Every string from a card goes through [`escape`].
//!
//! A card is drawn in two parts, so that the session page can put the
//! head in a call's always-visible summary and the body below it: the
//! *head* (icon, title, the key facts as chips) and the *body*.

use serde_json::Value;

use super::diff::{self, Line};
use super::text::{
    after_line, bytes, escape, escape_attr, escape_fmt, line_count, plural, says_timed_out,
    thousands,
};
use toolprism_core::ContentBlock;
use toolprism_core::card::{
    CallCard, DiffCall, DiffResult, ExitStatus, FileDiff, GenericCall, GenericResult, Location,
    ReadResult, ResultCard, SearchResult, SearchShape, TerminalCall, TerminalResult, ToolKind,
    WebResult,
};

/// A body of up to this many lines or rows is shown whole; a longer one
/// shows its first rows and folds the rest under "N more …".
pub(crate) const PREVIEW_LINES: usize = 16;
/// Rows of a long search card shown before its fold.
const SEARCH_HEAD_ROWS: usize = 8;
/// A read window is shown whole up to this many lines…
const READ_WHOLE_ROWS: usize = 40;
/// …else its first lines this many.
const READ_HEAD_ROWS: usize = 20;
/// A diff is shown whole up to this many rows (hunk headers included)…
const DIFF_WHOLE_ROWS: usize = 40;
/// …else its first rows this many.
const DIFF_HEAD_ROWS: usize = 24;
/// Bytes of text drawn per body; the rest is said, not drawn.
pub(crate) const MAX_TEXT_BYTES: usize = 256 * 1024;
/// Rows drawn per table (numbered lines, matches, paths, diff lines).
pub(crate) const MAX_ROWS: usize = 5_000;
/// Bytes drawn of one row (a line, a path, a URL); the rest is said.
pub(crate) const MAX_LINE_BYTES: usize = 16 * 1024;
/// JSON nested deeper than this is not drawn (it cannot come from a log:
/// serde_json reads no deeper).
const MAX_JSON_DEPTH: usize = 128;

/// The icon of a kind: the id of a symbol in the page's sprite.
pub(crate) fn kind_icon(kind: ToolKind) -> &'static str {
    kind.as_str()
}

/// A chip: a short fact in a coloured pill.
pub(crate) fn chip(out: &mut String, class: &str, text: &str) {
    out.push_str("<span class=\"chip ");
    out.push_str(class);
    out.push_str("\">");
    line_text(out, text);
    out.push_str("</span>");
}

/// An `<svg>` using the sprite's symbol for `icon`.
pub(crate) fn icon(out: &mut String, icon: &str) {
    out.push_str("<svg class=\"ic\" aria-hidden=\"true\"><use href=\"#i-");
    out.push_str(icon);
    out.push_str("\"/></svg>");
}

// ---------------------------------------------------------------------------
// Call cards
// ---------------------------------------------------------------------------

/// The icon a call card gets: a generic card's kind, else its tag's.
pub(crate) fn call_icon(card: &CallCard) -> &'static str {
    match card {
        CallCard::Generic(GenericCall { kind, .. }) => kind_icon(kind.unwrap_or_default()),
        CallCard::Terminal(_) => kind_icon(ToolKind::Execute),
        CallCard::Diff(_) => kind_icon(ToolKind::Edit),
    }
}

/// A call card's title.
pub(crate) fn call_title(card: &CallCard) -> &str {
    match card {
        CallCard::Generic(GenericCall { title, .. })
        | CallCard::Terminal(TerminalCall { title, .. })
        | CallCard::Diff(DiffCall { title, .. }) => title,
    }
}

/// The head of a call card: icon and title (a command is set as one).
pub(crate) fn call_head(out: &mut String, card: &CallCard) {
    icon(out, call_icon(card));
    match card {
        CallCard::Terminal(TerminalCall { title, .. }) => {
            out.push_str("<code class=\"ttl cmd\"><span class=\"ps\">$ </span>");
            line_text(out, title);
            out.push_str("</code>");
        }
        _ => {
            out.push_str("<span class=\"ttl\">");
            line_text(out, call_title(card));
            out.push_str("</span>");
        }
    }
}

/// The body of a call card; nothing when it has nothing beyond its head.
pub(crate) fn call_body(out: &mut String, card: &CallCard) {
    match card {
        CallCard::Generic(GenericCall {
            title: _,
            kind: _, // the head's icon
            raw_input,
            content,
            locations,
        }) => {
            let start = out.len();
            // A few short scalar arguments fit on one line, with the locations.
            let inline = raw_input.as_ref().and_then(Value::as_object).filter(|map| {
                !map.is_empty()
                    && map.len() <= 8
                    && map.iter().all(|(key, value)| is_short(key, value))
            });
            if locations.as_ref().is_some_and(|l| !l.is_empty()) || inline.is_some() {
                out.push_str("<div class=\"facts\">");
                locations_list(out, locations.as_deref());
                for (key, value) in inline.into_iter().flatten() {
                    out.push_str("<span class=\"arg\"><span class=\"k\">");
                    line_text(out, key);
                    out.push_str("</span> ");
                    scalar(out, value);
                    out.push_str("</span>");
                }
                out.push_str("</div>");
            }
            if let Some(input) = raw_input.as_ref().filter(|_| inline.is_none()) {
                input_block(out, input);
            }
            if let Some(content) = content {
                content_blocks(out, content);
            }
            wrap_body(out, start);
        }
        CallCard::Terminal(TerminalCall {
            title: _,
            description,
            cwd,
        }) => {
            let start = out.len();
            if description.is_some() || cwd.is_some() {
                out.push_str("<div class=\"facts\">");
                if let Some(cwd) = cwd {
                    out.push_str("<span class=\"cwd\"><span class=\"k\">in</span> <code>");
                    line_text(out, cwd);
                    out.push_str("</code></span>");
                }
                if let Some(description) = description {
                    out.push_str("<span class=\"desc\">");
                    line_text(out, description);
                    out.push_str("</span>");
                }
                out.push_str("</div>");
            }
            wrap_body(out, start);
        }
        CallCard::Diff(DiffCall {
            title: _,
            diffs,
            locations,
        }) => {
            let start = out.len();
            // A location that only names a file of the diff says nothing new.
            let locations: Vec<Location> = locations
                .iter()
                .flatten()
                .filter(|l| l.line.is_some() || !diffs.iter().any(|d| d.path == l.path))
                .cloned()
                .collect();
            if !locations.is_empty() {
                out.push_str("<div class=\"facts\">");
                locations_list(out, Some(&locations));
                out.push_str("</div>");
            }
            file_diffs(out, diffs);
            wrap_body(out, start);
        }
    }
}

/// Wraps what was written since `start` in the body's `<div>`, if anything was.
fn wrap_body(out: &mut String, start: usize) {
    if out.len() > start {
        out.insert_str(start, "<div class=\"bd\">");
        out.push_str("</div>");
    }
}

fn locations_list(out: &mut String, locations: Option<&[Location]>) {
    for location in locations.unwrap_or_default() {
        out.push_str("<code class=\"loc\">");
        line_text(out, &location.path);
        if let Some(line) = location.line {
            out.push(':');
            out.push_str(&line.to_string());
        }
        out.push_str("</code>");
    }
}

/// A whole call card, standalone.
pub(crate) fn call_card(out: &mut String, card: &CallCard) {
    out.push_str("<section class=\"tp card call t-");
    out.push_str(card.tag());
    out.push_str("\"><div class=\"hd\">");
    call_head(out, card);
    out.push_str("<span class=\"tag\">");
    out.push_str(card.tag());
    out.push_str("</span></div>");
    call_body(out, card);
    out.push_str("</section>");
}

// ---------------------------------------------------------------------------
// Result cards
// ---------------------------------------------------------------------------

/// What the page knows of a result beyond its card: the persisted content
/// the model read (for the timed-out mark) and whether it failed.
#[derive(Clone, Copy, Default)]
pub(crate) struct ResultContext<'a> {
    pub content: &'a [ContentBlock],
    pub error_code: Option<&'a str>,
    /// The call card's title, drawn just above: a result title equal to it
    /// is not drawn twice.
    pub call_title: Option<&'a str>,
}

impl ResultContext<'_> {
    fn says_timed_out(&self) -> bool {
        self.error_code == Some("TIMEOUT")
            || self.content.iter().any(|block| match block {
                ContentBlock::Text { text } => says_timed_out(text),
                _ => false,
            })
    }
}

/// Whether a terminal result timed out: its output, or the content the
/// model read, has a bracketed status line saying "timed out"
/// (`[timed out after 300 ms; …]`), or the call ended with `TIMEOUT`.
fn timed_out(card: &TerminalResult, cx: &ResultContext<'_>) -> bool {
    card.output.as_deref().is_some_and(says_timed_out) || cx.says_timed_out()
}

/// The one fact a collapsed call shows about its result: class and text.
pub(crate) fn result_status(card: &ResultCard, cx: &ResultContext<'_>) -> (&'static str, String) {
    match card {
        ResultCard::Terminal(t) => {
            let timed = timed_out(t, cx);
            match (&t.status, timed) {
                (_, true) => ("bad", "timed out".to_owned()),
                (Some(ExitStatus::Code(0)), _) => ("good", "exit 0".to_owned()),
                (Some(ExitStatus::Code(code)), _) => ("warn", format!("exit {code}")),
                (Some(ExitStatus::Signal(signal)), _) => ("bad", signal.clone()),
                (None, _) => ("muted", "no exit status".to_owned()),
            }
        }
        ResultCard::Search(s) => {
            let shown = s.shape().shown() as u64;
            if s.truncated() {
                (
                    "warn",
                    format!("{} of {}", thousands(shown), thousands(s.total())),
                )
            } else {
                ("good", format!("{} found", thousands(shown)))
            }
        }
        ResultCard::Read(r) => ("good", window_label(r)),
        ResultCard::Web(WebResult::Fetch { status_code, .. }) => {
            (status_class(*status_code), format!("HTTP {status_code}"))
        }
        ResultCard::Web(WebResult::Search { sources, .. }) => {
            ("good", plural(sources.len() as u64, "source", "sources"))
        }
        ResultCard::Diff(DiffResult { diffs, .. }) => {
            let (added, removed) = diff_counts(diffs);
            ("good", format!("+{added} −{removed}"))
        }
        ResultCard::Generic(_) => ("good", "ok".to_owned()),
    }
}

fn status_class(code: u16) -> &'static str {
    match code {
        200..=299 => "good",
        300..=399 => "info",
        400..=499 => "warn",
        _ => "bad",
    }
}

/// `lines 1–12 of 44`.
fn window_label(r: &ReadResult) -> String {
    let shown = r.lines.len() as u64;
    if shown == 0 {
        return format!(
            "no lines from line {} of {}",
            thousands(r.offset),
            thousands(r.total_lines)
        );
    }
    let last = r.offset.saturating_add(shown - 1);
    format!(
        "lines {}–{} of {}",
        thousands(r.offset),
        thousands(last),
        thousands(r.total_lines)
    )
}

fn diff_counts(diffs: &[FileDiff]) -> (usize, usize) {
    diffs.iter().fold((0, 0), |(a, r), d| {
        let (da, dr) = match &d.old_text {
            None => (super::text::line_count(&d.new_text), 0),
            Some(old) => {
                let diff = diff::diff(old, &d.new_text);
                (diff.added, diff.removed)
            }
        };
        (a + da, r + dr)
    })
}

/// The title a result card shows.
fn result_title(card: &ResultCard) -> Option<&str> {
    match card {
        ResultCard::Generic(GenericResult { title, .. })
        | ResultCard::Terminal(TerminalResult { title, .. })
        | ResultCard::Diff(DiffResult { title, .. })
        | ResultCard::Read(ReadResult { title, .. })
        | ResultCard::Web(WebResult::Fetch { title, .. })
        | ResultCard::Web(WebResult::Search { title, .. }) => title.as_deref(),
        ResultCard::Search(s) => s.title(),
    }
}

/// A whole result card: head (title and facts) and body.
pub(crate) fn result_card(out: &mut String, card: &ResultCard, cx: &ResultContext<'_>) {
    out.push_str("<section class=\"tp card result t-");
    out.push_str(card.tag());
    if cx.error_code.is_some() {
        out.push_str(" err");
    }
    out.push_str("\"><div class=\"hd\">");
    if let Some(code) = cx.error_code {
        icon(out, "error");
        chip(out, "bad code", code);
    }
    let title = result_title(card).filter(|t| Some(*t) != cx.call_title);
    match card {
        ResultCard::Read(r) => {
            out.push_str("<code class=\"ttl path\">");
            line_text(out, &r.path);
            out.push_str("</code>");
            if let Some(title) = title.filter(|t| *t != r.path) {
                out.push_str("<span class=\"sub\">");
                line_text(out, title);
                out.push_str("</span>");
            }
        }
        ResultCard::Web(WebResult::Fetch { url, .. }) => {
            out.push_str("<code class=\"ttl url\">");
            line_text(out, url);
            out.push_str("</code>");
            if let Some(title) = title.filter(|t| t != url) {
                out.push_str("<span class=\"sub\">");
                line_text(out, title);
                out.push_str("</span>");
            }
        }
        ResultCard::Terminal(_) => {
            if let Some(title) = title {
                out.push_str("<code class=\"ttl sub\">");
                line_text(out, title);
                out.push_str("</code>");
            }
        }
        _ => match title {
            Some(title) => {
                out.push_str("<span class=\"ttl\">");
                line_text(out, title);
                out.push_str("</span>");
            }
            None if matches!(card, ResultCard::Generic(_)) && cx.error_code.is_none() => {
                out.push_str("<span class=\"ttl muted\">result</span>");
            }
            None => {}
        },
    }
    out.push_str("<span class=\"facts\">");
    result_facts(out, card, cx);
    out.push_str("</span><span class=\"tag\">");
    out.push_str(card.tag());
    out.push_str("</span></div>");
    let start = out.len();
    result_body(out, card);
    wrap_body(out, start);
    out.push_str("</section>");
}

/// The key facts of a result as chips.
fn result_facts(out: &mut String, card: &ResultCard, cx: &ResultContext<'_>) {
    match card {
        ResultCard::Generic(_) => {}
        ResultCard::Terminal(t) => {
            match &t.status {
                Some(ExitStatus::Code(code)) => {
                    let class = if *code == 0 { "good exit" } else { "bad exit" };
                    chip(out, class, &format!("exit code {code}"));
                }
                Some(ExitStatus::Signal(signal)) => {
                    chip(out, "bad signal", &format!("killed by {signal}"))
                }
                None => chip(out, "muted exit", "no exit status"),
            }
            if timed_out(t, cx) {
                chip(out, "bad timedout", "timed out");
            }
        }
        ResultCard::Diff(DiffResult { diffs, .. }) => {
            let (added, removed) = diff_counts(diffs);
            chip(out, "add", &format!("+{added}"));
            chip(out, "del", &format!("−{removed}"));
            chip(out, "muted", &plural(diffs.len() as u64, "file", "files"));
        }
        ResultCard::Search(s) => search_count(out, s),
        ResultCard::Read(r) => {
            out.push_str("<span class=\"win\" title=\"");
            escape_attr(out, &window_label(r));
            out.push_str("\"><span class=\"bar\"><span style=\"");
            let total = r.total_lines.max(1) as f64;
            let first = r.offset.saturating_sub(1) as f64;
            let shown = r.lines.len() as f64;
            let left = (first / total * 100.0).clamp(0.0, 100.0);
            let width = (shown / total * 100.0).clamp(0.0, 100.0 - left);
            out.push_str(&format!("left:{left:.1}%;width:{width:.1}%"));
            out.push_str("\"></span></span><span class=\"wl\">");
            escape(out, &window_label(r));
            out.push_str("</span></span>");
            if let Some(lang) = &r.lang {
                chip(out, "muted lang", lang);
            }
        }
        ResultCard::Web(WebResult::Fetch {
            status_code,
            truncated,
            ..
        }) => {
            let reason = reason_phrase(*status_code);
            let text = if reason.is_empty() {
                format!("HTTP {status_code}")
            } else {
                format!("HTTP {status_code} {reason}")
            };
            chip(
                out,
                &format!("{} status", status_class(*status_code)),
                &text,
            );
            if *truncated {
                chip(out, "warn trunc", "truncated");
            }
        }
        ResultCard::Web(WebResult::Search {
            sources, truncated, ..
        }) => {
            chip(
                out,
                "muted",
                &plural(sources.len() as u64, "source", "sources"),
            );
            if *truncated {
                chip(out, "warn trunc", "truncated: more sources exist");
            }
        }
    }
}

fn search_count(out: &mut String, s: &SearchResult) {
    let shown = s.shape().shown() as u64;
    let what = match s.shape() {
        SearchShape::Matches(_) => ("match", "matches"),
        SearchShape::Paths(_) => ("path", "paths"),
    };
    if s.truncated() {
        chip(
            out,
            "warn trunc",
            &format!("{} shown of {}", thousands(shown), thousands(s.total())),
        );
    } else {
        chip(
            out,
            "good",
            &format!("all {} shown", plural(shown, what.0, what.1)),
        );
    }
}

fn reason_phrase(code: u16) -> &'static str {
    match code {
        200 => "OK",
        201 => "Created",
        204 => "No Content",
        206 => "Partial Content",
        301 => "Moved Permanently",
        302 => "Found",
        304 => "Not Modified",
        307 => "Temporary Redirect",
        308 => "Permanent Redirect",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        409 => "Conflict",
        410 => "Gone",
        413 => "Content Too Large",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        _ => "",
    }
}

fn result_body(out: &mut String, card: &ResultCard) {
    match card {
        ResultCard::Generic(GenericResult { content, .. }) => match content {
            Some(content) if !content.is_empty() => content_blocks(out, content),
            _ => out.push_str("<p class=\"none\">no content</p>"),
        },
        ResultCard::Terminal(TerminalResult { output, .. }) => match output {
            Some(output) if !output.is_empty() => text_block(out, "out term", output),
            _ => out.push_str("<p class=\"none\">no output</p>"),
        },
        ResultCard::Diff(DiffResult { diffs, .. }) => file_diffs(out, diffs),
        ResultCard::Search(s) => search_body(out, s),
        ResultCard::Read(r) => read_body(out, r),
        // The URL, status and truncation are all in the head.
        ResultCard::Web(WebResult::Fetch { .. }) => {}
        ResultCard::Web(WebResult::Search {
            sources,
            answer,
            truncated,
            ..
        }) => {
            if let Some(answer) = answer {
                out.push_str("<div class=\"lbl\">answer</div>");
                text_block(out, "answer", answer);
            }
            if sources.is_empty() {
                out.push_str("<p class=\"none\">no sources</p>");
            } else {
                out.push_str("<ol class=\"sources\">");
                let mut budget = Budget::new();
                let mut stopped = None;
                for (i, source) in sources.iter().enumerate() {
                    let len = source.url.len()
                        + source.title.as_ref().map_or(0, String::len)
                        + source.snippet.as_ref().map_or(0, String::len);
                    if !budget.take_row(len.min(3 * MAX_LINE_BYTES)) {
                        stopped = Some(i);
                        break;
                    }
                    out.push_str("<li>");
                    if let Some(title) = &source.title {
                        out.push_str("<span class=\"st\">");
                        line_text(out, title);
                        out.push_str("</span>");
                    }
                    url_text(out, &source.url);
                    if let Some(date) = &source.published_at {
                        out.push_str("<span class=\"date\">");
                        line_text(out, date);
                        out.push_str("</span>");
                    }
                    if let Some(snippet) = &source.snippet {
                        out.push_str("<p class=\"snip\">");
                        line_text(out, snippet);
                        out.push_str("</p>");
                    }
                    out.push_str("</li>");
                }
                out.push_str("</ol>");
                if let Some(i) = stopped {
                    not_drawn(out, sources.len() - i, "source", "sources");
                }
            }
            if *truncated {
                out.push_str(
                    "<p class=\"cut\">The search found more sources than the card holds.</p>",
                );
            }
        }
    }
}

/// A URL as text: never a link, so no URL from a log can be followed or
/// run (`javascript:` included).
fn url_text(out: &mut String, url: &str) {
    out.push_str("<code class=\"url\">");
    line_text(out, url);
    out.push_str("</code>");
}

/// One line of text, cut at [`MAX_LINE_BYTES`] with the cut said.
pub(crate) fn line_text(out: &mut String, text: &str) {
    let drawn = super::text::cut(text, MAX_LINE_BYTES);
    escape(out, drawn);
    if drawn.len() < text.len() {
        out.push_str("<span class=\"more-inline\">… ");
        out.push_str(&bytes((text.len() - drawn.len()) as u64));
        out.push_str(" more in this line, not drawn</span>");
    }
}

fn search_body(out: &mut String, s: &SearchResult) {
    let mut budget = Budget::new();
    match s.shape() {
        SearchShape::Matches(files) => {
            if files.is_empty() {
                out.push_str("<p class=\"none\">no matches</p>");
            }
            // One fold for the whole body: past the fold point, the rest
            // of the file and every later file are under it.
            let total = s.shape().shown();
            let fold_at = fold_point(total, PREVIEW_LINES, SEARCH_HEAD_ROWS);
            let mut fold_label_at = None;
            let mut rows = 0usize;
            let mut stopped = None;
            'files: for (i, file) in files.iter().enumerate() {
                if rows >= fold_at && fold_label_at.is_none() {
                    open_fold(out, &mut fold_label_at);
                }
                out.push_str("<div class=\"file\"><div class=\"fh\"><code class=\"path\">");
                line_text(out, &file.path);
                out.push_str("</code>");
                chip(
                    out,
                    "muted",
                    &plural(file.matches.len() as u64, "match", "matches"),
                );
                out.push_str("</div><table class=\"src\">");
                out.push_str(Table::columns("src"));
                for (j, m) in file.matches.iter().enumerate() {
                    if !budget.take_row(m.line.len()) {
                        out.push_str("</table></div>");
                        stopped = Some((i, j));
                        break 'files;
                    }
                    if rows == fold_at && fold_label_at.is_none() {
                        out.push_str("</table></div>");
                        open_fold(out, &mut fold_label_at);
                        out.push_str("<div class=\"file\"><table class=\"src\">");
                        out.push_str(Table::columns("src"));
                    }
                    out.push_str("<tr><td class=\"n\">");
                    out.push_str(&m.line_number.to_string());
                    out.push_str("</td><td class=\"x\">");
                    line_text(out, &m.line);
                    out.push_str("</td></tr>");
                    rows += 1;
                }
                out.push_str("</table></div>");
            }
            if let Some(at) = fold_label_at {
                out.push_str("</details>");
                let label = plural(
                    rows.saturating_sub(fold_at) as u64,
                    "more match",
                    "more matches",
                );
                out.insert_str(at, &label);
            }
            if let Some((i, j)) = stopped {
                let left: usize = files[i].matches.len() - j
                    + files[i + 1..]
                        .iter()
                        .map(|f| f.matches.len())
                        .sum::<usize>();
                not_drawn(out, left, "match", "matches");
            }
        }
        SearchShape::Paths(paths) => {
            if paths.is_empty() {
                out.push_str("<p class=\"none\">no paths</p>");
            }
            let fold_at = fold_point(paths.len(), PREVIEW_LINES, SEARCH_HEAD_ROWS);
            let mut table = Table::new(out, "src paths", fold_at, ("path", "paths"));
            let mut stopped = None;
            for (i, path) in paths.iter().enumerate() {
                if !budget.take_row(path.len()) {
                    stopped = Some(i);
                    break;
                }
                let row = table.row(i);
                row.push_str("<tr><td class=\"x\"><code class=\"path\">");
                line_text(row, path);
                row.push_str("</code></td></tr>");
            }
            let drawn = stopped.unwrap_or(paths.len());
            table.finish(drawn);
            if let Some(i) = stopped {
                not_drawn(out, paths.len() - i, "path", "paths");
            }
        }
    }
    if s.truncated() {
        let shown = s.shape().shown() as u64;
        out.push_str("<p class=\"cut\">");
        escape_fmt(
            out,
            format_args!(
                "{} shown of {}: the search found {} more that the card does not hold.",
                thousands(shown),
                thousands(s.total()),
                thousands(s.total() - shown)
            ),
        );
        out.push_str("</p>");
    }
}

fn read_body(out: &mut String, r: &ReadResult) {
    let mut budget = Budget::new();
    if r.lines.is_empty() && r.content.is_none() {
        out.push_str("<p class=\"none\">no lines in this window</p>");
    }
    if !r.lines.is_empty() {
        let fold_at = fold_point(r.lines.len(), READ_WHOLE_ROWS, READ_HEAD_ROWS);
        let mut table = Table::new(out, "src", fold_at, ("line", "lines"));
        let mut stopped = None;
        for (i, line) in r.lines.iter().enumerate() {
            if !budget.take_row(line.text.len()) {
                stopped = Some(i);
                break;
            }
            let row = table.row(i);
            row.push_str("<tr><td class=\"n\">");
            row.push_str(&line.number.to_string());
            row.push_str("</td><td class=\"x\">");
            line_text(row, &line.text);
            row.push_str("</td></tr>");
        }
        let drawn = stopped.unwrap_or(r.lines.len());
        table.finish(drawn);
        if let Some(i) = stopped {
            not_drawn(out, r.lines.len() - i, "line", "lines");
        }
    }
    if let Some(content) = &r.content {
        text_block(out, "out", content);
    }
    let shown = r.lines.len() as u64;
    let last = r.offset.saturating_add(shown).saturating_sub(1);
    if shown > 0 && last < r.total_lines {
        out.push_str("<p class=\"cut\">");
        escape_fmt(
            out,
            format_args!(
                "{} after line {} not in this window.",
                plural(r.total_lines - last, "more line", "more lines"),
                thousands(last)
            ),
        );
        out.push_str("</p>");
    }
}

// ---------------------------------------------------------------------------
// Shared pieces
// ---------------------------------------------------------------------------

/// How much of one body is drawn: [`MAX_ROWS`] rows and [`MAX_TEXT_BYTES`].
struct Budget {
    rows: usize,
    bytes: usize,
}

impl Budget {
    fn new() -> Self {
        Budget {
            rows: MAX_ROWS,
            bytes: MAX_TEXT_BYTES,
        }
    }

    /// Takes one row of `len` bytes; `false` when the budget is spent.
    fn take_row(&mut self, len: usize) -> bool {
        let len = len.min(MAX_LINE_BYTES);
        if self.rows == 0 || self.bytes < len {
            self.rows = 0;
            return false;
        }
        self.rows -= 1;
        self.bytes -= len;
        true
    }
}

/// "1,234 more lines not drawn": said where the page stops drawing.
fn not_drawn(out: &mut String, n: usize, one: &str, many: &str) {
    out.push_str("<p class=\"cut\">");
    escape_fmt(
        out,
        format_args!(
            "{} not drawn: the page draws at most {} rows and {} of text per card.",
            plural(n as u64, &format!("more {one}"), &format!("more {many}")),
            thousands(MAX_ROWS as u64),
            bytes(MAX_TEXT_BYTES as u64)
        ),
    );
    out.push_str("</p>");
}

/// Where a body of `total` rows folds: nowhere when it is short (up to
/// [`PREVIEW_LINES`], or `whole` when larger), else after `head` rows.
fn fold_point(total: usize, whole: usize, head: usize) -> usize {
    if total <= whole.max(PREVIEW_LINES) {
        usize::MAX
    } else {
        head
    }
}

/// A table whose rows from `fold_at` on fold under "N more …".
struct Table<'o> {
    out: &'o mut String,
    class: &'static str,
    fold_at: usize,
    unit: (&'static str, &'static str),
    /// Where the fold's label goes, once the fold is open.
    fold_label_at: Option<usize>,
}

impl<'o> Table<'o> {
    fn new(
        out: &'o mut String,
        class: &'static str,
        fold_at: usize,
        unit: (&'static str, &'static str),
    ) -> Self {
        out.push_str("<table class=\"");
        out.push_str(class);
        out.push_str("\">");
        out.push_str(Self::columns(class));
        Table {
            out,
            class,
            fold_at,
            unit,
            fold_label_at: None,
        }
    }

    /// The column widths (a fixed layout takes them from here, so a
    /// table split by its fold keeps its columns aligned).
    fn columns(class: &str) -> &'static str {
        match class {
            "diff" => {
                "<colgroup><col class=\"n\"><col class=\"n\"><col class=\"g\"><col></colgroup>"
            }
            "src" => "<colgroup><col class=\"n\"><col></colgroup>",
            _ => "",
        }
    }

    /// The buffer to write row `index` (0-based) into; opens the fold at
    /// the fold point.
    fn row(&mut self, index: usize) -> &mut String {
        if index == self.fold_at && self.fold_label_at.is_none() {
            self.out
                .push_str("</table><details class=\"more\"><summary>");
            self.fold_label_at = Some(self.out.len());
            self.out.push_str("</summary><table class=\"");
            self.out.push_str(self.class);
            self.out.push_str("\">");
            self.out.push_str(Self::columns(self.class));
        }
        self.out
    }

    /// Closes the table; `rows` is how many rows were written in all.
    fn finish(self, rows: usize) {
        self.out.push_str("</table>");
        if let Some(at) = self.fold_label_at {
            self.out.push_str("</details>");
            // The count is known only now; nothing before `at` moved.
            let (one, many) = self.unit;
            let label = plural(
                rows.saturating_sub(self.fold_at) as u64,
                &format!("more {one}"),
                &format!("more {many}"),
            );
            self.out.insert_str(at, &label);
        }
    }
}

/// Opens a fold: `<details>` whose label is written at `label_at` later.
fn open_fold(out: &mut String, label_at: &mut Option<usize>) {
    out.push_str("<details class=\"more\"><summary>");
    *label_at = Some(out.len());
    out.push_str("</summary>");
}

/// Lines of a long text shown before its fold.
const HEAD_LINES: usize = 12;
/// Lines of a long text shown after its fold: where status lines and
/// truncation notes usually are.
const TAIL_LINES: usize = 4;

/// Text in a box: shown whole up to [`PREVIEW_LINES`] lines; longer, its
/// first [`HEAD_LINES`] and last [`TAIL_LINES`] lines are shown and the
/// middle is folded under "N more lines". At most [`MAX_TEXT_BYTES`] of the
/// middle and [`MAX_LINE_BYTES`] per shown line are drawn; what is left out
/// is said.
pub(crate) fn text_block(out: &mut String, class: &str, text: &str) {
    out.push_str("<div class=\"tx ");
    out.push_str(class);
    out.push_str("\">");
    let total_lines = line_count(text);
    let tail_start = if total_lines > PREVIEW_LINES {
        before_last_lines(text, TAIL_LINES)
    } else {
        text.len()
    };
    let head_end = if total_lines > PREVIEW_LINES {
        after_line(text, HEAD_LINES).unwrap_or(text.len())
    } else {
        text.len()
    };
    if head_end >= tail_start {
        pre(out, text, MAX_TEXT_BYTES);
    } else {
        pre(out, &text[..head_end], HEAD_LINES * MAX_LINE_BYTES);
        let middle = &text[head_end..tail_start];
        out.push_str("<details class=\"more\"><summary>");
        let hidden = total_lines - HEAD_LINES - TAIL_LINES;
        out.push_str(&plural(hidden as u64, "more line", "more lines"));
        out.push_str("</summary>");
        pre(out, middle, MAX_TEXT_BYTES);
        out.push_str("</details>");
        pre(out, &text[tail_start..], TAIL_LINES * MAX_LINE_BYTES);
    }
    out.push_str("</div>");
}

/// One `<pre>` of at most `max` bytes of `text` (a last newline dropped);
/// past `max`, says how much is not drawn.
fn pre(out: &mut String, text: &str, max: usize) {
    let text = text.strip_suffix('\n').unwrap_or(text);
    let drawn = super::text::cut(text, max);
    out.push_str("<pre>");
    escape(out, drawn);
    out.push_str("</pre>");
    if drawn.len() < text.len() {
        out.push_str("<p class=\"cut\">");
        escape_fmt(
            out,
            format_args!(
                "… {} more here not drawn ({} lines): the page draws at most {} of a text's middle and {} of a line.",
                bytes((text.len() - drawn.len()) as u64),
                thousands(line_count(&text[drawn.len()..]) as u64),
                bytes(MAX_TEXT_BYTES as u64),
                bytes(MAX_LINE_BYTES as u64)
            ),
        );
        out.push_str("</p>");
    }
}

/// Byte offset where the last `n` lines of `text` start.
fn before_last_lines(text: &str, n: usize) -> usize {
    let body = text.strip_suffix('\n').unwrap_or(text);
    body.rmatch_indices('\n')
        .nth(n - 1)
        .map_or(0, |(i, _)| i + 1)
}

/// Content blocks: text as text, images as a labelled placeholder (the
/// page loads nothing, so an image is never drawn from its data).
pub(crate) fn content_blocks(out: &mut String, content: &[ContentBlock]) {
    for block in content {
        match block {
            ContentBlock::Text { text } => text_block(out, "out", text),
            ContentBlock::Image { mime_type, data } => {
                placeholder(out, "image", "an image", mime_type, data)
            }
            ContentBlock::Audio { mime_type, data } => {
                placeholder(out, "image", "audio", mime_type, data)
            }
            ContentBlock::Resource { resource } => match &resource.text {
                Some(text) => text_block(out, "out", text),
                None => placeholder(
                    out,
                    "image",
                    "a resource",
                    resource.mime_type.as_deref().unwrap_or("?"),
                    resource.blob.as_deref().unwrap_or(""),
                ),
            },
            ContentBlock::ResourceLink(link) => {
                text_block(out, "out", &format!("link: {} ({})", link.uri, link.name))
            }
        }
    }
}

fn placeholder(out: &mut String, icon_name: &str, what: &str, mime_type: &str, data: &str) {
    out.push_str("<div class=\"img\">");
    icon(out, icon_name);
    out.push_str("<span><b>");
    escape(out, what);
    out.push_str("</b> <code>");
    line_text(out, mime_type);
    out.push_str("</code> · ");
    let trimmed = data.trim_end_matches('=');
    let decoded = trimmed.len() as u64 * 3 / 4;
    escape(out, &bytes(decoded));
    out.push_str(
        " · not drawn: the page loads nothing, and its data stays in the log</span></div>",
    );
}

/// A call's input: an object as a grid of its keys and values (strings
/// as text, numbers and booleans as themselves, long or multi-line
/// strings and nested values as blocks); anything else as JSON.
fn input_block(out: &mut String, input: &Value) {
    let Value::Object(map) = input else {
        json_block(out, input);
        return;
    };
    if map.is_empty() {
        out.push_str("<p class=\"none\">no arguments</p>");
        return;
    }
    out.push_str("<dl class=\"kv\">");
    let mut budget = Budget::new();
    for (i, (key, value)) in map.iter().enumerate() {
        if !budget.take_row(key.len()) {
            out.push_str("</dl>");
            not_drawn(out, map.len() - i, "argument", "arguments");
            return;
        }
        out.push_str("<dt>");
        line_text(out, key);
        out.push_str("</dt><dd>");
        match value {
            Value::String(s) if s.len() > 200 || s.contains('\n') => text_block(out, "json", s),
            Value::Array(_) | Value::Object(_) => json_block(out, value),
            _ => scalar(out, value),
        }
        out.push_str("</dd>");
    }
    out.push_str("</dl>");
}

/// Whether an argument fits on a line: a short key and a number, a
/// boolean, null or a short one-line string.
fn is_short(key: &str, value: &Value) -> bool {
    key.len() <= 40
        && match value {
            Value::String(s) => s.len() <= 80 && !s.contains('\n'),
            Value::Number(_) | Value::Bool(_) | Value::Null => true,
            Value::Array(_) | Value::Object(_) => false,
        }
}

/// A scalar argument: a string as its text, anything else as JSON.
fn scalar(out: &mut String, value: &Value) {
    match value {
        Value::String(s) => {
            out.push_str("<code class=\"s\">");
            line_text(out, s);
        }
        other => {
            out.push_str("<code class=\"lit\">");
            line_text(out, &other.to_string());
        }
    }
    out.push_str("</code>");
}

/// A JSON value, pretty-printed as text.
fn json_block(out: &mut String, value: &Value) {
    if depth_exceeds(value, MAX_JSON_DEPTH) {
        out.push_str("<p class=\"cut\">The input nests deeper than ");
        out.push_str(&MAX_JSON_DEPTH.to_string());
        out.push_str(" levels: not drawn.</p>");
        return;
    }
    let text = serde_json::to_string_pretty(value).unwrap_or_else(|e| e.to_string());
    text_block(out, "json", &text);
}

/// Whether `value` nests deeper than `max`, checked without recursion.
pub(crate) fn depth_exceeds(value: &Value, max: usize) -> bool {
    let mut stack = vec![(value, 1usize)];
    while let Some((v, depth)) = stack.pop() {
        if depth > max {
            return true;
        }
        match v {
            Value::Array(items) => stack.extend(items.iter().map(|i| (i, depth + 1))),
            Value::Object(map) => stack.extend(map.values().map(|i| (i, depth + 1))),
            _ => {}
        }
    }
    false
}

/// Each file's diff: hunks with both line numbers, added and removed
/// lines marked; a created file (`oldText: null`) is all added.
fn file_diffs(out: &mut String, diffs: &[FileDiff]) {
    if diffs.is_empty() {
        out.push_str("<p class=\"none\">no files changed</p>");
    }
    for file in diffs {
        out.push_str("<div class=\"file\"><div class=\"fh\"><code class=\"path\">");
        line_text(out, &file.path);
        out.push_str("</code>");
        let old = file.old_text.as_deref();
        let d = diff::diff(old.unwrap_or(""), &file.new_text);
        if old.is_none() {
            chip(out, "info", "new file");
        }
        chip(out, "add", &format!("+{}", d.added));
        chip(out, "del", &format!("−{}", d.removed));
        out.push_str("</div>");
        if d.hunks.is_empty() {
            let text = if d.newline_at_end_changed {
                "Only the newline at the end of the file changed."
            } else if old.is_none() {
                "An empty file."
            } else {
                "No change."
            };
            out.push_str("<p class=\"none\">");
            out.push_str(text);
            out.push_str("</p></div>");
            continue;
        }
        if d.unaligned {
            out.push_str("<p class=\"cut\">Too large to align line by line: the changed part is shown as removed, then added.</p>");
        }
        let total: usize = d.hunks.iter().map(|h| h.lines.len() + 1).sum();
        let fold_at = fold_point(total, DIFF_WHOLE_ROWS, DIFF_HEAD_ROWS);
        let mut table = Table::new(out, "diff", fold_at, ("diff line", "diff lines"));
        let mut budget = Budget::new();
        let mut rows = 0usize;
        let mut stopped = false;
        'hunks: for hunk in &d.hunks {
            let row = table.row(rows);
            row.push_str("<tr class=\"hh\"><td colspan=\"4\">");
            row.push_str(&format!(
                "@@ -{},{} +{},{} @@",
                hunk.old_start, hunk.old_len, hunk.new_start, hunk.new_len
            ));
            row.push_str("</td></tr>");
            rows += 1;
            for line in &hunk.lines {
                let (class, old, new, sign, text) = match *line {
                    Line::Same { old, new, text } => ("ctx", Some(old), Some(new), " ", text),
                    Line::Removed { old, text } => ("del", Some(old), None, "-", text),
                    Line::Added { new, text } => ("add", None, Some(new), "+", text),
                };
                if !budget.take_row(text.len()) {
                    stopped = true;
                    break 'hunks;
                }
                let row = table.row(rows);
                row.push_str("<tr class=\"");
                row.push_str(class);
                row.push_str("\"><td class=\"n\">");
                if let Some(n) = old {
                    row.push_str(&n.to_string());
                }
                row.push_str("</td><td class=\"n\">");
                if let Some(n) = new {
                    row.push_str(&n.to_string());
                }
                row.push_str("</td><td class=\"g\">");
                row.push_str(sign);
                row.push_str("</td><td class=\"x\">");
                line_text(row, text);
                row.push_str("</td></tr>");
                rows += 1;
            }
        }
        table.finish(rows);
        if stopped {
            not_drawn(out, total - rows, "diff line", "diff lines");
        }
        if d.newline_at_end_changed {
            out.push_str("<p class=\"cut\">The newline at the end of the file changed too.</p>");
        }
        out.push_str("</div>");
    }
}
