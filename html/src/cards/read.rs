//! Read result cards: a window of a file as numbered lines, where the
//! window sits in the file, and how much of the file is not in it.

use super::blocks::{Budget, Rows, fold_point, not_drawn, text_block};
use super::search::numbered;
use super::{Limits, chip};
use crate::text::{escape, escape_fmt, plural, thousands};
use toolprism_core::card::ReadResult;

/// A read window is shown whole up to this many lines…
const READ_WHOLE_ROWS: usize = 40;
/// …else its first lines this many.
const READ_HEAD_ROWS: usize = 20;

/// `lines 1–12 of 44`.
pub(super) fn window_label(r: &ReadResult) -> String {
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

/// The window as `lines 1–12 of 44` over a bar of its place in the file
/// (drawn by the stylesheet from `--l` and `--w`), and the language.
pub(super) fn facts(out: &mut String, r: &ReadResult) {
    let total = r.total_lines.max(1) as f64;
    let first = r.offset.saturating_sub(1) as f64;
    let shown = r.lines.len() as f64;
    let left = (first / total * 100.0).clamp(0.0, 100.0);
    let width = (shown / total * 100.0).clamp(0.0, 100.0 - left);
    out.push_str(&format!(
        "<span class=\"wl\" style=\"--l:{left:.1}%;--w:{width:.1}%\">"
    ));
    escape(out, &window_label(r));
    out.push_str("</span>");
    if let Some(lang) = &r.lang {
        chip(out, "muted lang", lang);
    }
}

/// The numbered lines (folded past the first rows), the text the card
/// holds instead or besides, and the lines after the window.
pub(super) fn body(out: &mut String, r: &ReadResult, lim: Limits) {
    let mut budget = Budget::new(lim);
    if r.lines.is_empty() && r.content.is_none() {
        out.push_str("<p class=\"none\">no lines in this window</p>");
    }
    if !r.lines.is_empty() {
        let fold_at = fold_point(r.lines.len(), READ_WHOLE_ROWS, READ_HEAD_ROWS);
        let mut rows = Rows::lines(out, "src", fold_at, ("line", "lines"));
        let mut stopped = None;
        for (i, line) in r.lines.iter().enumerate() {
            if !budget.take_row(line.text.len()) {
                stopped = Some(i);
                break;
            }
            numbered(rows.row(), line.number, &line.text);
        }
        rows.finish();
        if let Some(i) = stopped {
            not_drawn(out, r.lines.len() - i, ("line", "lines"), lim);
        }
    }
    if let Some(content) = &r.content {
        text_block(out, "out", content, lim);
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
