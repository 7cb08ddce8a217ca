//! Line diffs for diff cards, from `similar` (Myers, the algorithm the
//! built-in `edit` and `write` tools diff with, so a card shows the hunks
//! their unified diff shows): lines, hunks with [`CONTEXT`] lines of
//! context, and line numbers on either side.
//!
//! Lines are compared without their newline, so a text that only gained or
//! lost the newline at its end is no change of any line
//! ([`Diff::newline_at_end_changed`]). Myers' search is bounded on hostile
//! input (a work limit past which it takes a good split rather than the
//! best one), so every change is aligned line by line: a few lines changed
//! in a large text are drawn as those lines, whatever the size.

use similar::{Algorithm, DiffOp};

use crate::text::lines;

/// Lines of context around a change.
pub(crate) const CONTEXT: usize = 3;

/// One line of a diff, with its numbers (1-based) on either side.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Line<'a> {
    /// In both texts.
    Same {
        old: usize,
        new: usize,
        text: &'a str,
    },
    /// Only in the old text.
    Removed { old: usize, text: &'a str },
    /// Only in the new text.
    Added { new: usize, text: &'a str },
}

/// A run of changes with its context.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Hunk<'a> {
    /// First old line and how many (`@@ -start,len`).
    pub old_start: usize,
    pub old_len: usize,
    /// First new line and how many (`+start,len @@`).
    pub new_start: usize,
    pub new_len: usize,
    pub lines: Vec<Line<'a>>,
}

/// The diff of two texts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Diff<'a> {
    pub hunks: Vec<Hunk<'a>>,
    pub added: usize,
    pub removed: usize,
    /// Whether the texts differ only in the newline at the end.
    pub newline_at_end_changed: bool,
}

/// The diff of `old` and `new`, line by line, with [`CONTEXT`] lines of
/// context.
pub(crate) fn diff<'a>(old: &'a str, new: &'a str) -> Diff<'a> {
    let a: Vec<&'a str> = lines(old).collect();
    let b: Vec<&'a str> = lines(new).collect();
    let ops = similar::capture_diff_slices(Algorithm::Myers, &a, &b);
    let (mut added, mut removed) = (0, 0);
    for op in &ops {
        if !matches!(op, DiffOp::Equal { .. }) {
            removed += op.old_range().len();
            added += op.new_range().len();
        }
    }
    let hunks = similar::group_diff_ops(ops, CONTEXT)
        .iter()
        .filter_map(|group| hunk(group, &a, &b))
        .collect();
    let newline_at_end_changed =
        !old.is_empty() && !new.is_empty() && old.ends_with('\n') != new.ends_with('\n');
    Diff {
        hunks,
        added,
        removed,
        newline_at_end_changed,
    }
}

/// One group of operations (a change and its context) as a hunk: in each
/// replaced run, its removed lines before its added ones, as people read a
/// change. (`similar` makes no empty group.)
fn hunk<'a>(group: &[DiffOp], a: &[&'a str], b: &[&'a str]) -> Option<Hunk<'a>> {
    let (first, last) = (group.first()?, group.last()?);
    let old = first.old_range().start..last.old_range().end;
    let new = first.new_range().start..last.new_range().end;
    let mut lines = Vec::with_capacity(old.len() + new.len());
    for op in group {
        let (old_range, new_range) = (op.old_range(), op.new_range());
        if let DiffOp::Equal { .. } = op {
            for (i, j) in old_range.zip(new_range) {
                lines.push(Line::Same {
                    old: i + 1,
                    new: j + 1,
                    text: a[i],
                });
            }
            continue;
        }
        for i in old_range {
            lines.push(Line::Removed {
                old: i + 1,
                text: a[i],
            });
        }
        for j in new_range {
            lines.push(Line::Added {
                new: j + 1,
                text: b[j],
            });
        }
    }
    // As in unified diffs: an empty side is numbered by the line before it
    // (the ranges are 0-based, so that is the range's start).
    let start = |range: &std::ops::Range<usize>| range.start + usize::from(!range.is_empty());
    Some(Hunk {
        old_start: start(&old),
        old_len: old.len(),
        new_start: start(&new),
        new_len: new.len(),
        lines,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(d: &Diff<'_>) -> String {
        let mut out = String::new();
        for h in &d.hunks {
            out.push_str(&format!(
                "@@ -{},{} +{},{} @@\n",
                h.old_start, h.old_len, h.new_start, h.new_len
            ));
            for l in &h.lines {
                match l {
                    Line::Same { old, new, text } => {
                        out.push_str(&format!(" {old}:{new} {text}\n"))
                    }
                    Line::Removed { old, text } => out.push_str(&format!("-{old} {text}\n")),
                    Line::Added { new, text } => out.push_str(&format!("+{new} {text}\n")),
                }
            }
        }
        out
    }

    #[test]
    fn one_changed_line_with_context() {
        let old = "a\nb\nc\nd\ne\nf\ng\nh\n";
        let new = "a\nb\nc\nd\nE\nf\ng\nh\n";
        let d = diff(old, new);
        assert_eq!((d.added, d.removed), (1, 1));
        assert_eq!(
            render(&d),
            "@@ -2,7 +2,7 @@\n 2:2 b\n 3:3 c\n 4:4 d\n-5 e\n+5 E\n 6:6 f\n 7:7 g\n 8:8 h\n"
        );
    }

    #[test]
    fn a_create_is_all_added_and_equal_texts_have_no_hunk() {
        let d = diff("", "x\ny\n");
        assert_eq!(render(&d), "@@ -0,0 +1,2 @@\n+1 x\n+2 y\n");
        let same = diff("a\nb\n", "a\nb\n");
        assert!(same.hunks.is_empty());
        assert_eq!((same.added, same.removed), (0, 0));
    }

    #[test]
    fn far_apart_changes_make_two_hunks_and_insertions_align() {
        let old: String = (1..=20).map(|i| format!("line {i}\n")).collect();
        let new = old
            .replace("line 2\n", "line 2\nnew\n")
            .replace("line 18\n", "");
        let d = diff(&old, &new);
        assert_eq!(d.hunks.len(), 2, "{}", render(&d));
        assert_eq!((d.added, d.removed), (1, 1));
        assert_eq!(
            (
                d.hunks[0].old_start,
                d.hunks[0].old_len,
                d.hunks[0].new_start,
                d.hunks[0].new_len
            ),
            (1, 5, 1, 6)
        );
        assert!(render(&d).contains("+3 new\n"));
        assert!(render(&d).contains("-18 line 18\n"));
    }

    #[test]
    fn only_the_trailing_newline_changed() {
        let d = diff("a\nb\n", "a\nb");
        assert!(d.newline_at_end_changed);
        assert!(d.hunks.is_empty());
    }

    #[test]
    fn a_few_changed_lines_in_large_texts_are_drawn_as_those_lines() {
        // 5,000 lines each, three changed far apart (the old line diff
        // gave up past 2 million cells and drew all 4,990 lines between
        // the first and last change as removed, then added).
        let old: String = (1..=5_000).map(|i| format!("line {i}\n")).collect();
        let new = old
            .replace("line 10\n", "line ten\n")
            .replace("line 2500\n", "")
            .replace("line 4990\n", "line 4990\nextra\n");
        let d = diff(&old, &new);
        assert_eq!((d.added, d.removed), (2, 2));
        assert_eq!(d.hunks.len(), 3, "{}", render(&d));
        let changed: Vec<String> = render(&d)
            .lines()
            .filter(|l| l.starts_with(['-', '+']))
            .map(str::to_owned)
            .collect();
        assert_eq!(
            changed,
            [
                "-10 line 10",
                "+10 line ten",
                "-2500 line 2500",
                "+4990 extra"
            ]
        );
        // Each hunk is its change and three lines either side.
        let sizes: Vec<(usize, usize, usize, usize)> = d
            .hunks
            .iter()
            .map(|h| (h.old_start, h.old_len, h.new_start, h.new_len))
            .collect();
        assert_eq!(
            sizes,
            [(7, 7, 7, 7), (2497, 7, 2497, 6), (4988, 6, 4987, 7)]
        );
    }

    #[test]
    fn texts_with_no_line_in_common_are_all_removed_then_all_added() {
        let old: String = (0..5_000).map(|i| format!("old {i}\n")).collect();
        let new: String = (0..5_000).map(|i| format!("new {i}\n")).collect();
        let d = diff(&old, &new);
        assert_eq!((d.added, d.removed), (5_000, 5_000));
        assert_eq!(d.hunks.len(), 1);
        let lines = &d.hunks[0].lines;
        assert!(
            lines[..5_000]
                .iter()
                .all(|l| matches!(l, Line::Removed { .. }))
        );
        assert!(
            lines[5_000..]
                .iter()
                .all(|l| matches!(l, Line::Added { .. }))
        );
    }

    #[test]
    fn a_replaced_run_shows_its_removed_lines_before_its_added_ones() {
        let d = diff("a\nb\nc\nz\n", "a\nB\nC\nz\n");
        assert_eq!(
            render(&d),
            "@@ -1,4 +1,4 @@\n 1:1 a\n-2 b\n-3 c\n+2 B\n+3 C\n 4:4 z\n"
        );
    }
}
