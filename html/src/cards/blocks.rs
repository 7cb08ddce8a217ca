//! What every card draws with: text in boxes whose middle folds, rows
//! whose tail folds, the limits on what one card draws (always said where
//! they cut), content blocks and one-line text.

use super::{Limits, MAX_LINE_BYTES, PREVIEW_LINES};
use crate::text::{
    after_line, bytes, cut, escape, escape_fmt, is_spill_notice, line_count, plural,
};
use toolprism_core::ContentBlock;

/// How much of one body is still to be drawn: rows and bytes, from its
/// [`Limits`].
pub(super) struct Budget {
    rows: usize,
    bytes: usize,
}

impl Budget {
    pub(super) fn new(lim: Limits) -> Self {
        Budget {
            rows: lim.rows,
            bytes: lim.text,
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

/// "1,234 more lines not drawn": said where a card stops drawing.
pub(super) fn not_drawn(out: &mut String, n: usize, unit: (&str, &str), lim: Limits) {
    out.push_str("<p class=\"cut\">");
    escape_fmt(
        out,
        format_args!(
            "{} not drawn: {}.",
            plural(
                n as u64,
                &format!("more {}", unit.0),
                &format!("more {}", unit.1)
            ),
            lim.said()
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

/// Rows in a `<pre>`: numbered lines and paths one a line, diff lines one
/// a block; the rows from `fold_at` on fold under "N more …".
pub(super) struct Rows<'o> {
    out: &'o mut String,
    class: &'static str,
    fold_at: usize,
    unit: (&'static str, &'static str),
    /// Rows are lines of text (`true`), or blocks of their own.
    lines: bool,
    written: usize,
    /// Where the fold's label goes, once the fold is open.
    fold_label_at: Option<usize>,
}

impl<'o> Rows<'o> {
    /// Opens `<pre class="{class}">` for rows that are lines of text.
    pub(super) fn lines(
        out: &'o mut String,
        class: &'static str,
        fold_at: usize,
        unit: (&'static str, &'static str),
    ) -> Self {
        Self::open(out, class, fold_at, unit, true)
    }

    /// Opens `<pre class="{class}">` for rows that are blocks.
    pub(super) fn blocks(
        out: &'o mut String,
        class: &'static str,
        fold_at: usize,
        unit: (&'static str, &'static str),
    ) -> Self {
        Self::open(out, class, fold_at, unit, false)
    }

    fn open(
        out: &'o mut String,
        class: &'static str,
        fold_at: usize,
        unit: (&'static str, &'static str),
        lines: bool,
    ) -> Self {
        out.push_str("<pre class=\"");
        out.push_str(class);
        out.push_str("\">");
        Rows {
            out,
            class,
            fold_at,
            unit,
            lines,
            written: 0,
            fold_label_at: None,
        }
    }

    /// The buffer to write the next row into; opens the fold at the fold
    /// point.
    pub(super) fn row(&mut self) -> &mut String {
        if self.written == self.fold_at && self.fold_label_at.is_none() {
            self.out.push_str("</pre><details class=\"more\"><summary>");
            self.fold_label_at = Some(self.out.len());
            self.out.push_str("</summary><pre class=\"");
            self.out.push_str(self.class);
            self.out.push_str("\">");
        } else if self.lines && self.written > 0 {
            self.out.push('\n');
        }
        self.written += 1;
        self.out
    }

    /// Closes the rows.
    pub(super) fn finish(self) {
        self.out.push_str("</pre>");
        if let Some(at) = self.fold_label_at {
            self.out.push_str("</details>");
            // The count is known only now; nothing before `at` moved.
            let (one, many) = self.unit;
            let label = plural(
                self.written.saturating_sub(self.fold_at) as u64,
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
/// folds on either side of it. At most `lim.text` bytes of the middle and
/// [`MAX_LINE_BYTES`] of a line are drawn, always whole lines but for a
/// line longer than that; what is left out is said.
pub(crate) fn text_block(out: &mut String, class: &str, text: &str, lim: Limits) {
    let total_lines = line_count(text);
    if total_lines <= PREVIEW_LINES {
        out.push_str("<pre class=\"tx ");
        out.push_str(class);
        out.push_str("\">");
        let left = lines(out, text, lim.text);
        out.push_str("</pre>");
        left.say(out, lim);
        return;
    }
    out.push_str("<div class=\"tx ");
    out.push_str(class);
    out.push_str("\">");
    let head_end = after_line(text, HEAD_LINES).unwrap_or(text.len());
    let tail_start = before_last_lines(text, TAIL_LINES).max(head_end);
    pre(out, &text[..head_end], HEAD_LINES * MAX_LINE_BYTES, lim);
    let mut budget = lim.text;
    let mut middle = &text[head_end..tail_start];
    while let Some((before, notice, after)) = split_at_spill_notice(middle) {
        fold(out, before, &mut budget, lim);
        out.push_str("<pre class=\"note\">");
        line_text(out, notice);
        out.push_str("</pre>");
        middle = after;
    }
    fold(out, middle, &mut budget, lim);
    pre(out, &text[tail_start..], TAIL_LINES * MAX_LINE_BYTES, lim);
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
fn fold(out: &mut String, text: &str, budget: &mut usize, lim: Limits) {
    let n = line_count(text);
    if n == 0 {
        return;
    }
    out.push_str("<details class=\"more\"><summary>");
    out.push_str(&plural(n as u64, "more line", "more lines"));
    out.push_str("</summary>");
    *budget = budget.saturating_sub(pre(out, text, *budget, lim));
    out.push_str("</details>");
}

/// One `<pre>` of the lines of `text` that fit in `max` bytes, and what
/// was left out said; returns the bytes drawn.
fn pre(out: &mut String, text: &str, max: usize, lim: Limits) -> usize {
    out.push_str("<pre>");
    let left = lines(out, text, max);
    out.push_str("</pre>");
    left.say(out, lim);
    left.drawn
}

/// What [`lines`] drew and left out.
pub(super) struct Left {
    drawn: usize,
    lines: usize,
    bytes: usize,
}

impl Left {
    /// Says what was left out, if anything was.
    fn say(&self, out: &mut String, lim: Limits) {
        if self.lines == 0 {
            return;
        }
        out.push_str("<p class=\"cut\">");
        escape_fmt(
            out,
            format_args!(
                "… {} ({}) not drawn here: {}.",
                plural(self.lines as u64, "more line", "more lines"),
                bytes(self.bytes as u64),
                lim.said()
            ),
        );
        out.push_str("</p>");
    }
}

/// The lines of `text` (a last newline dropped), escaped, while they fit
/// in `max` bytes (the first always drawn), each cut at
/// [`MAX_LINE_BYTES`] (or `max`, when smaller) with the cut said.
pub(super) fn lines(out: &mut String, text: &str, max: usize) -> Left {
    let text = text.strip_suffix('\n').unwrap_or(text);
    let line_max = MAX_LINE_BYTES.min(max.max(1));
    let mut drawn = 0usize;
    let mut shown = 0usize;
    for line in text.split('\n') {
        let cost = line.len().min(line_max) + 1;
        if shown > 0 && drawn + cost > max {
            break;
        }
        if shown > 0 {
            out.push('\n');
        }
        line_text_max(out, line, line_max);
        drawn += cost;
        shown += 1;
    }
    let left_lines = line_count(text).saturating_sub(shown);
    let left_bytes = if left_lines > 0 {
        text.split('\n').skip(shown).map(|l| l.len() + 1).sum()
    } else {
        0
    };
    Left {
        drawn,
        lines: left_lines,
        bytes: left_bytes,
    }
}

/// Byte offset where the last `n` lines of `text` start.
fn before_last_lines(text: &str, n: usize) -> usize {
    let body = text.strip_suffix('\n').unwrap_or(text);
    body.rmatch_indices('\n')
        .nth(n - 1)
        .map_or(0, |(i, _)| i + 1)
}

/// Content blocks: text as text (an embedded text resource too); images,
/// audio and binary resources as a labelled placeholder (the page loads
/// nothing, so media is never drawn from its data); a resource link as its
/// URI, never a link.
pub(super) fn content_blocks(out: &mut String, content: &[ContentBlock], lim: Limits) {
    for block in content {
        match block {
            ContentBlock::Text { text } => text_block(out, "out", text, lim),
            ContentBlock::Image { mime_type, data } => placeholder(out, "image", mime_type, data),
            ContentBlock::Audio { mime_type, data } => placeholder(out, "audio", mime_type, data),
            ContentBlock::Resource { resource } => match &resource.text {
                Some(text) => text_block(out, "out", text, lim),
                None => placeholder(
                    out,
                    "resource",
                    resource.mime_type.as_deref().unwrap_or("?"),
                    resource.blob.as_deref().unwrap_or(""),
                ),
            },
            ContentBlock::ResourceLink(link) => {
                out.push_str("<div class=\"img\"><b>link</b> ");
                url_text(out, &link.uri);
                out.push_str(" · ");
                line_text(out, &link.name);
                out.push_str("</div>");
            }
        }
    }
}

/// A media block's placeholder: what it is, its type and size, never its data.
fn placeholder(out: &mut String, what: &str, mime_type: &str, data: &str) {
    out.push_str("<div class=\"img\"><b>");
    escape(out, what);
    out.push_str("</b> <code>");
    line_text(out, mime_type);
    out.push_str("</code> · ");
    escape(out, &image_size(data));
    out.push_str(" · not drawn: the page loads nothing, and its data stays in the log</div>");
}

/// An image's size from its base64 data: `12 bytes`.
fn image_size(data: &str) -> String {
    bytes(data.trim_end_matches('=').len() as u64 * 3 / 4)
}

/// Content blocks as one text: text blocks one after the other, an image
/// as `[image image/png · 12 bytes]`.
pub(crate) fn content_text(content: &[ContentBlock]) -> String {
    let mut text = String::new();
    for (i, block) in content.iter().enumerate() {
        if i > 0 {
            text.push('\n');
        }
        match block {
            ContentBlock::Text { text: t } => text.push_str(t),
            ContentBlock::Image { mime_type, data } => {
                text.push_str(&format!("[image {mime_type} · {}]", image_size(data)))
            }
            ContentBlock::Audio { mime_type, data } => {
                text.push_str(&format!("[audio {mime_type} · {}]", image_size(data)))
            }
            ContentBlock::Resource { resource } => match &resource.text {
                Some(t) => text.push_str(t),
                None => text.push_str(&format!(
                    "[resource {} · {}]",
                    resource.uri,
                    image_size(resource.blob.as_deref().unwrap_or(""))
                )),
            },
            ContentBlock::ResourceLink(link) => {
                text.push_str(&format!("[link {} · {}]", link.uri, link.name))
            }
        }
    }
    text
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
    line_text_max(out, text, MAX_LINE_BYTES);
}

/// One line of text, cut at `max` bytes with the cut said.
fn line_text_max(out: &mut String, text: &str, max: usize) {
    let drawn = cut(text, max);
    escape(out, drawn);
    if drawn.len() < text.len() {
        out.push_str("<span class=\"more-inline\">… ");
        out.push_str(&bytes((text.len() - drawn.len()) as u64));
        out.push_str(" more in this line, not drawn</span>");
    }
}

/// One part of a call's log, as text in the log's `<pre>`: its label, then
/// its lines while they fit in `max` bytes; what is left out is said.
pub(crate) fn log_part(out: &mut String, label: &str, text: &str, max: usize) {
    out.push_str("<b>");
    out.push_str(label);
    out.push_str("</b>\n");
    let left = lines(out, text, max);
    if left.lines > 0 {
        out.push_str("\n<i class=\"cut\">");
        escape_fmt(
            out,
            format_args!(
                "… {} ({}) not drawn here; the log holds them",
                plural(left.lines as u64, "more line", "more lines"),
                bytes(left.bytes as u64)
            ),
        );
        out.push_str("</i>");
    }
    out.push('\n');
}
