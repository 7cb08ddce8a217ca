//! Search result cards: matches grouped by file with their line numbers,
//! or a list of paths; how many are shown of how many found, always.

use super::blocks::{Budget, Rows, fold_point, not_drawn, open_fold};
use super::{Limits, PREVIEW_LINES, chip, line_text};
use crate::text::{escape_fmt, plural, thousands};
use toolprism_core::card::{SearchResult, SearchShape};

/// Rows of a long search card shown before its fold.
const SEARCH_HEAD_ROWS: usize = 8;

/// The count as a chip: `100 shown of 243`, or `all 3 paths shown`.
pub(super) fn facts(out: &mut String, s: &SearchResult) {
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

/// The matches by file, or the paths, folded past the first rows; what the
/// card does not hold is said.
pub(super) fn body(out: &mut String, s: &SearchResult, lim: Limits) {
    let mut budget = Budget::new(lim);
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
                out.push_str("</div><pre class=\"src\">");
                let mut first = true;
                for (j, m) in file.matches.iter().enumerate() {
                    if !budget.take_row(m.line.len()) {
                        out.push_str("</pre></div>");
                        stopped = Some((i, j));
                        break 'files;
                    }
                    if rows == fold_at && fold_label_at.is_none() {
                        out.push_str("</pre></div>");
                        open_fold(out, &mut fold_label_at);
                        out.push_str("<div class=\"file\"><pre class=\"src\">");
                        first = true;
                    }
                    if !first {
                        out.push('\n');
                    }
                    first = false;
                    numbered(out, m.line_number, &m.line);
                    rows += 1;
                }
                out.push_str("</pre></div>");
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
                not_drawn(out, left, ("match", "matches"), lim);
            }
        }
        SearchShape::Paths(paths) => {
            if paths.is_empty() {
                out.push_str("<p class=\"none\">no paths</p>");
            }
            let fold_at = fold_point(paths.len(), PREVIEW_LINES, SEARCH_HEAD_ROWS);
            let mut rows = Rows::lines(out, "src paths", fold_at, ("path", "paths"));
            let mut stopped = None;
            for (i, path) in paths.iter().enumerate() {
                if !budget.take_row(path.len()) {
                    stopped = Some(i);
                    break;
                }
                line_text(rows.row(), path);
            }
            rows.finish();
            if let Some(i) = stopped {
                not_drawn(out, paths.len() - i, ("path", "paths"), lim);
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

/// A numbered line in a `<pre>`: `<i>12</i> text`.
pub(super) fn numbered(out: &mut String, number: u64, text: &str) {
    out.push_str("<i>");
    out.push_str(&number.to_string());
    out.push_str("</i> ");
    line_text(out, text);
}
