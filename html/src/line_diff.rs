//! A small line diff for diff cards: the runtime does not depend on
//! `similar`, and a card needs only lines, hunks and line numbers.
//!
//! The common prefix and suffix are set aside first (an edit usually
//! touches a few lines of a file), then the rest is aligned by a longest
//! common subsequence. When the rest is too big for that
//! ([`MAX_CELLS`]), it is shown as all removed then all added: still a
//! correct diff, only not the shortest, and the cost stays bounded on
//! hostile input.

use crate::text::lines;

/// The largest `old × new` middle aligned line by line (about 4 MB of table).
pub(crate) const MAX_CELLS: usize = 2_000_000;

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
    /// Whether the middle was too big to align (shown removed then added).
    pub unaligned: bool,
}

/// The diff of `old` and `new`, line by line, with [`CONTEXT`] lines of
/// context.
pub(crate) fn diff<'a>(old: &'a str, new: &'a str) -> Diff<'a> {
    let a: Vec<&str> = lines(old).collect();
    let b: Vec<&str> = lines(new).collect();
    let prefix = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let suffix = a[prefix..]
        .iter()
        .rev()
        .zip(b[prefix..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let (mid_a, mid_b) = (&a[prefix..a.len() - suffix], &b[prefix..b.len() - suffix]);

    let mut ops: Vec<Line<'a>> = Vec::with_capacity(a.len().max(b.len()) + 1);
    for (i, text) in a[..prefix].iter().enumerate() {
        ops.push(Line::Same {
            old: i + 1,
            new: i + 1,
            text,
        });
    }
    let cells = (mid_a.len() + 1).saturating_mul(mid_b.len() + 1);
    let unaligned = cells > MAX_CELLS && !mid_a.is_empty() && !mid_b.is_empty();
    if unaligned {
        for (i, text) in mid_a.iter().enumerate() {
            ops.push(Line::Removed {
                old: prefix + i + 1,
                text,
            });
        }
        for (j, text) in mid_b.iter().enumerate() {
            ops.push(Line::Added {
                new: prefix + j + 1,
                text,
            });
        }
    } else {
        align(mid_a, mid_b, prefix, &mut ops);
    }
    for k in 0..suffix {
        let (i, j) = (a.len() - suffix + k, b.len() - suffix + k);
        ops.push(Line::Same {
            old: i + 1,
            new: j + 1,
            text: a[i],
        });
    }
    let added = ops
        .iter()
        .filter(|l| matches!(l, Line::Added { .. }))
        .count();
    let removed = ops
        .iter()
        .filter(|l| matches!(l, Line::Removed { .. }))
        .count();
    let newline_at_end_changed =
        !old.is_empty() && !new.is_empty() && old.ends_with('\n') != new.ends_with('\n');
    Diff {
        hunks: hunks(ops),
        added,
        removed,
        newline_at_end_changed,
        unaligned,
    }
}

/// Aligns two middles by their longest common subsequence; lines are
/// numbered from `offset + 1`.
fn align<'a>(a: &[&'a str], b: &[&'a str], offset: usize, ops: &mut Vec<Line<'a>>) {
    let (n, m) = (a.len(), b.len());
    // lcs[i][j]: the LCS length of a[i..] and b[j..]. It is at most
    // min(n, m), and n·m ≤ MAX_CELLS keeps that under u16::MAX.
    let width = m + 1;
    let mut lcs = vec![0u16; (n + 1) * width];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[i * width + j] = if a[i] == b[j] {
                lcs[(i + 1) * width + j + 1] + 1
            } else {
                lcs[(i + 1) * width + j].max(lcs[i * width + j + 1])
            };
        }
    }
    let (mut i, mut j) = (0, 0);
    while i < n || j < m {
        if i < n && j < m && a[i] == b[j] {
            ops.push(Line::Same {
                old: offset + i + 1,
                new: offset + j + 1,
                text: a[i],
            });
            i += 1;
            j += 1;
        } else if i < n && (j == m || lcs[(i + 1) * width + j] >= lcs[i * width + j + 1]) {
            // On a tie, removing first puts a change's removed lines
            // before its added ones, as people read a change.
            ops.push(Line::Removed {
                old: offset + i + 1,
                text: a[i],
            });
            i += 1;
        } else {
            ops.push(Line::Added {
                new: offset + j + 1,
                text: b[j],
            });
            j += 1;
        }
    }
}

/// Groups the changed lines into hunks with their context; changes closer
/// than twice the context share a hunk.
fn hunks(ops: Vec<Line<'_>>) -> Vec<Hunk<'_>> {
    let changed: Vec<usize> = ops
        .iter()
        .enumerate()
        .filter(|(_, l)| !matches!(l, Line::Same { .. }))
        .map(|(i, _)| i)
        .collect();
    let mut ranges: Vec<(usize, usize)> = Vec::new();
    for &i in &changed {
        let start = i.saturating_sub(CONTEXT);
        let end = (i + CONTEXT + 1).min(ops.len());
        match ranges.last_mut() {
            Some((_, last_end)) if start <= *last_end => *last_end = end,
            _ => ranges.push((start, end)),
        }
    }
    // Line numbers before each op, to name a hunk that starts with an
    // addition (old side) or a removal (new side).
    let mut hunks = Vec::with_capacity(ranges.len());
    let (mut old_seen, mut new_seen, mut at) = (0usize, 0usize, 0usize);
    for (start, end) in ranges {
        while at < start {
            match ops[at] {
                Line::Same { .. } => {
                    old_seen += 1;
                    new_seen += 1;
                }
                Line::Removed { .. } => old_seen += 1,
                Line::Added { .. } => new_seen += 1,
            }
            at += 1;
        }
        let lines: Vec<Line<'_>> = ops[start..end].to_vec();
        let old_len = lines
            .iter()
            .filter(|l| !matches!(l, Line::Added { .. }))
            .count();
        let new_len = lines
            .iter()
            .filter(|l| !matches!(l, Line::Removed { .. }))
            .count();
        // As in unified diffs: an empty side is numbered by the line before it.
        let old_start = if old_len == 0 { old_seen } else { old_seen + 1 };
        let new_start = if new_len == 0 { new_seen } else { new_seen + 1 };
        hunks.push(Hunk {
            old_start,
            old_len,
            new_start,
            new_len,
            lines,
        });
    }
    hunks
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
    fn a_huge_middle_is_shown_removed_then_added_in_bounded_time() {
        let old: String = (0..5_000).map(|i| format!("old {i}\n")).collect();
        let new: String = (0..5_000).map(|i| format!("new {i}\n")).collect();
        let d = diff(&old, &new);
        assert!(d.unaligned);
        assert_eq!((d.added, d.removed), (5_000, 5_000));
        assert_eq!(d.hunks.len(), 1);
    }
}
