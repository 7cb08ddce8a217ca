//! What every card draws with: text in boxes whose middle folds, tables
//! whose rows fold, the page's own limits on what one card draws (always
//! said where they cut), content blocks and one-line text.

use super::{MAX_LINE_BYTES, MAX_ROWS, MAX_TEXT_BYTES, PREVIEW_LINES, icon};
use crate::text::{
    after_line, bytes, escape, escape_fmt, is_spill_notice, line_count, plural, thousands,
};
use toolprism_core::ContentBlock;

/// How much of one body is drawn: [`MAX_ROWS`] rows and [`MAX_TEXT_BYTES`].
pub(super) struct Budget {
    rows: usize,
    bytes: usize,
}
impl Budget {
    pub(super) fn new() -> Self {
        Budget {
            rows: MAX_ROWS,
            bytes: MAX_TEXT_BYTES,
        }
    }

    /// Takes one row of `len` bytes; `false` when the budget is spent.
    pub(super) fn take_row(&mut self, len: usize) -> bool {
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
pub(super) fn not_drawn(out: &mut String, n: usize, one: &str, many: &str) {
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
pub(super) fn fold_point(total: usize, whole: usize, head: usize) -> usize {
    if total <= whole.max(PREVIEW_LINES) {
        usize::MAX
    } else {
        head
    }
}

/// A table whose rows from `fold_at` on fold under "N more …".
pub(super) struct Table<'o> {
    out: &'o mut String,
    class: &'static str,
    fold_at: usize,
    unit: (&'static str, &'static str),
    /// Where the fold's label goes, once the fold is open.
    fold_label_at: Option<usize>,
}
impl<'o> Table<'o> {
    pub(super) fn new(
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
    pub(super) fn columns(class: &str) -> &'static str {
        match class {
            "diff" => {
                "<colgroup><col class=\"n\"><col class=\"n\"><col class=\"g\"><col></colgroup>"
            }
            "diff bare" => "<colgroup><col class=\"g\"><col></colgroup>",
            "src" => "<colgroup><col class=\"n\"><col></colgroup>",
            _ => "",
        }
    }

    /// The buffer to write row `index` (0-based) into; opens the fold at
    /// the fold point.
    pub(super) fn row(&mut self, index: usize) -> &mut String {
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
    pub(super) fn finish(self, rows: usize) {
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
pub(super) fn open_fold(out: &mut String, label_at: &mut Option<usize>) {
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
/// middle is folded under "N more lines". A spill notice (C15: where the
/// full text was stored) in the middle is never folded away: the middle
/// folds on either side of it. At most [`MAX_TEXT_BYTES`] of the middle
/// and [`MAX_LINE_BYTES`] per line are drawn, always whole lines but for
/// a line longer than that; what is left out is said.
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
        let mut budget = MAX_TEXT_BYTES;
        let mut middle = &text[head_end..tail_start];
        while let Some((before, notice, after)) = split_at_spill_notice(middle) {
            fold(out, before, &mut budget);
            out.push_str("<pre class=\"note\">");
            line_text(out, notice);
            out.push_str("</pre>");
            middle = after;
        }
        fold(out, middle, &mut budget);
        pre(out, &text[tail_start..], TAIL_LINES * MAX_LINE_BYTES);
    }
    out.push_str("</div>");
}

/// The text before the first spill notice line of `text`, that line, and
/// the text after it; `None` when it has none.
fn split_at_spill_notice(text: &str) -> Option<(&str, &str, &str)> {
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        let bare = line.strip_suffix('\n').unwrap_or(line);
        if is_spill_notice(bare) {
            return Some((&text[..at], bare, &text[at + line.len()..]));
        }
        at += line.len();
    }
    None
}

/// Lines folded under "N more lines", drawn from what is left of `budget`.
fn fold(out: &mut String, text: &str, budget: &mut usize) {
    let lines = line_count(text);
    if lines == 0 {
        return;
    }
    out.push_str("<details class=\"more\"><summary>");
    out.push_str(&plural(lines as u64, "more line", "more lines"));
    out.push_str("</summary>");
    *budget = budget.saturating_sub(pre(out, text, *budget));
    out.push_str("</details>");
}

/// One `<pre>` of the lines of `text` (a last newline dropped), while they
/// fit in `max` bytes, each cut at [`MAX_LINE_BYTES`] with the cut said;
/// past `max`, says how many lines are not drawn. Returns the bytes drawn.
fn pre(out: &mut String, text: &str, max: usize) -> usize {
    let text = text.strip_suffix('\n').unwrap_or(text);
    out.push_str("<pre>");
    let mut drawn = 0usize;
    let mut shown = 0usize;
    for (i, line) in text.split('\n').enumerate() {
        let cost = line.len().min(MAX_LINE_BYTES) + 1;
        if i > 0 && drawn + cost > max {
            break;
        }
        if i > 0 {
            out.push('\n');
        }
        line_text(out, line);
        drawn += cost;
        shown += 1;
    }
    out.push_str("</pre>");
    let left = line_count(text).saturating_sub(shown);
    if left > 0 {
        let rest = text
            .split('\n')
            .skip(shown)
            .map(|l| l.len() + 1)
            .sum::<usize>();
        out.push_str("<p class=\"cut\">");
        escape_fmt(
            out,
            format_args!(
                "… {} ({}) not drawn here: the page draws at most {} of a text and {} of a line.",
                plural(left as u64, "more line", "more lines"),
                bytes(rest as u64),
                bytes(MAX_TEXT_BYTES as u64),
                bytes(MAX_LINE_BYTES as u64)
            ),
        );
        out.push_str("</p>");
    }
    drawn
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
            ContentBlock::Image { mime_type, data } => image_placeholder(out, mime_type, data),
        }
    }
}

fn image_placeholder(out: &mut String, mime_type: &str, data: &str) {
    out.push_str("<div class=\"img\">");
    icon(out, "image");
    out.push_str("<span><b>image</b> <code>");
    line_text(out, mime_type);
    out.push_str("</code> · ");
    let trimmed = data.trim_end_matches('=');
    let decoded = trimmed.len() as u64 * 3 / 4;
    escape(out, &bytes(decoded));
    out.push_str(
        " · not drawn: the page loads nothing, and an image's data stays in the log</span></div>",
    );
}

/// A URL as text: never a link, so no URL from a log can be followed or
/// run (`javascript:` included).
pub(super) fn url_text(out: &mut String, url: &str) {
    out.push_str("<code class=\"url\">");
    line_text(out, url);
    out.push_str("</code>");
}

/// One line of text, cut at [`MAX_LINE_BYTES`] with the cut said.
pub(crate) fn line_text(out: &mut String, text: &str) {
    let drawn = crate::text::cut(text, MAX_LINE_BYTES);
    escape(out, drawn);
    if drawn.len() < text.len() {
        out.push_str("<span class=\"more-inline\">… ");
        out.push_str(&bytes((text.len() - drawn.len()) as u64));
        out.push_str(" more in this line, not drawn</span>");
    }
}
