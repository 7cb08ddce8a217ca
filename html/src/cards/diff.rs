//! Diff cards' bodies: per file, hunks with old and new line numbers,
//! added and removed lines marked, and the counts.

use super::blocks::{Budget, Table, fold_point, not_drawn};
use super::{chip, line_text};
use crate::line_diff::{self, Line};
use toolprism_core::card::FileDiff;

/// A diff is shown whole up to this many rows (hunk headers included)…
const DIFF_WHOLE_ROWS: usize = 40;

/// …else its first rows this many.
const DIFF_HEAD_ROWS: usize = 24;

pub(super) fn diff_counts(diffs: &[FileDiff]) -> (usize, usize) {
    diffs.iter().fold((0, 0), |(a, r), d| {
        let (da, dr) = match &d.old_text {
            None => (crate::text::line_count(&d.new_text), 0),
            Some(old) => {
                let diff = line_diff::diff(old, &d.new_text);
                (diff.added, diff.removed)
            }
        };
        (a + da, r + dr)
    })
}

/// Each file's diff: hunks with both line numbers, added and removed
/// lines marked; a created file (`oldText: null`) is all added.
pub(super) fn file_diffs(out: &mut String, diffs: &[FileDiff]) {
    if diffs.is_empty() {
        out.push_str("<p class=\"none\">no files changed</p>");
    }
    for file in diffs {
        out.push_str("<div class=\"file\"><div class=\"fh\"><code class=\"path\">");
        line_text(out, &file.path);
        out.push_str("</code>");
        let old = file.old_text.as_deref();
        let d = line_diff::diff(old.unwrap_or(""), &file.new_text);
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
