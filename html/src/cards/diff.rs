//! Diff cards' bodies: per file, hunks with old and new line numbers where
//! the card says where they are, added and removed lines marked, and the
//! counts.

use super::blocks::{Budget, Rows, fold_point, not_drawn};
use super::{Limits, chip, line_text};
use crate::line_diff::{self, Line};
use crate::text::{escape, plural, thousands};
use toolprism_core::card::FileDiff;

/// A diff is shown whole up to this many rows (hunk headers included)…
const DIFF_WHOLE_ROWS: usize = 40;

/// …else its first rows this many.
const DIFF_HEAD_ROWS: usize = 24;

/// Lines added and removed across `diffs`.
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

/// Each file's diff: hunks, added and removed lines marked; a created
/// file (`oldText: null`) is all added.
///
/// Lines are numbered only when the card says where its texts start in
/// the file (`oldStart`, `newStart`): a diff's texts are often an excerpt,
/// and numbering an excerpt from 1 would show line numbers the card does
/// not hold. Without them, the hunks are drawn unnumbered, with the
/// unchanged lines of the excerpt between them counted.
pub(super) fn file_diffs(out: &mut String, diffs: &[FileDiff], lim: Limits) {
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
        chip(out, "add", &format!("+{}", thousands(d.added as u64)));
        chip(out, "del", &format!("−{}", thousands(d.removed as u64)));
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
        let place = Place::of(file);
        let lines: usize = d.hunks.iter().map(|h| h.lines.len()).sum();
        // Rows, hunk headers counted.
        let total = lines + d.hunks.len();
        let fold_at = fold_point(total, DIFF_WHOLE_ROWS, DIFF_HEAD_ROWS);
        let class = if place.is_some() { "diff" } else { "diff bare" };
        let mut table = Rows::blocks(out, class, fold_at, ("diff line", "diff lines"));
        let mut budget = Budget::new(lim);
        let mut drawn = 0usize;
        let mut stopped = false;
        let mut old_seen = 0usize;
        'hunks: for hunk in &d.hunks {
            let header = match place {
                Some(place) => Some(format!(
                    "@@ -{},{} +{},{} @@",
                    place.old_line(hunk.old_start),
                    hunk.old_len,
                    place.new_line(hunk.new_start),
                    hunk.new_len
                )),
                None => {
                    // The excerpt's unchanged lines before this hunk (the
                    // same count on both sides).
                    let before = if hunk.old_len == 0 {
                        hunk.old_start
                    } else {
                        hunk.old_start - 1
                    };
                    let skipped = before - old_seen;
                    (skipped > 0).then(|| {
                        format!(
                            "⋯ {}",
                            plural(skipped as u64, "unchanged line", "unchanged lines")
                        )
                    })
                }
            };
            old_seen = if hunk.old_len == 0 {
                hunk.old_start
            } else {
                hunk.old_start - 1 + hunk.old_len
            };
            if let Some(header) = header {
                let row = table.row();
                row.push_str("<span class=\"r hh\">");
                escape(row, &header);
                row.push_str("</span>");
            }
            for line in &hunk.lines {
                let (class, old, new, sign, text) = match *line {
                    Line::Same { old, new, text } => ("r", Some(old), Some(new), "  ", text),
                    Line::Removed { old, text } => ("r del", Some(old), None, "- ", text),
                    Line::Added { new, text } => ("r add", None, Some(new), "+ ", text),
                };
                if !budget.take_row(text.len()) {
                    stopped = true;
                    break 'hunks;
                }
                let row = table.row();
                row.push_str("<span class=\"");
                row.push_str(class);
                row.push_str("\">");
                if let Some(place) = place {
                    row.push_str("<i>");
                    if let Some(n) = old {
                        row.push_str(&place.old_line(n).to_string());
                    }
                    row.push_str("</i><i>");
                    if let Some(n) = new {
                        row.push_str(&place.new_line(n).to_string());
                    }
                    row.push_str("</i>");
                }
                row.push_str(sign);
                line_text(row, text);
                row.push_str("</span>");
                drawn += 1;
            }
        }
        table.finish();
        if stopped {
            not_drawn(out, lines - drawn, ("diff line", "diff lines"), lim);
        }
        if d.newline_at_end_changed {
            out.push_str("<p class=\"cut\">The newline at the end of the file changed too.</p>");
        }
        out.push_str("</div>");
    }
}

/// Where a diff's texts sit in the file: the line numbers its excerpt's
/// first old and new lines have. Known only from the card.
#[derive(Clone, Copy)]
struct Place {
    old_first: usize,
    new_first: usize,
}

impl Place {
    /// The place the card gives, when it gives one for each side that has
    /// lines (a created file's empty old side needs none).
    fn of(file: &FileDiff) -> Option<Place> {
        let old_empty = file.old_text.as_deref().is_none_or(str::is_empty);
        let old_first = match file.old_start {
            Some(n) => n,
            None if old_empty => 1,
            None => return None,
        };
        let new_first = file.new_start?;
        Some(Place {
            old_first: usize::try_from(old_first).ok()?,
            new_first: usize::try_from(new_first).ok()?,
        })
    }

    /// The file's line number of the excerpt's old line `n` (1-based; 0,
    /// a hunk header's "before the first line", stays before it).
    fn old_line(self, n: usize) -> usize {
        (n + self.old_first).saturating_sub(1)
    }

    /// The same for the new side.
    fn new_line(self, n: usize) -> usize {
        (n + self.new_first).saturating_sub(1)
    }
}
