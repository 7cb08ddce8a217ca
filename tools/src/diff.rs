//! Line diffs for `edit` and `write`, from the `similar` crate: hunks with
//! three lines of context, as card [`FileDiff`]s (each with the lines it
//! starts at, so a card numbers them as the file does) and as unified text.
//! Pure functions: the diff runs without a deadline, so the same inputs
//! always give the same hunks.

use serde::{Deserialize, Serialize};
use similar::TextDiff;
use toolprism::card::FileDiff;

use crate::text::cap_bytes;

/// Lines of context around each hunk.
pub(crate) const CONTEXT: usize = 3;
/// Largest total hunk text kept in meta.
pub(crate) const MAX_META_DIFF_BYTES: usize = 32 * 1024;
/// Largest unified diff shown in content.
pub(crate) const MAX_RENDERED_DIFF_BYTES: usize = 8 * 1024;

/// The meta of `edit` and `write`: hunks, bounded in size.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DiffMeta {
    /// One entry per hunk: `oldText` is `null` for a pure insertion.
    pub diffs: Vec<FileDiff>,
    /// Hunks left out to keep meta small.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub omitted_hunks: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// The hunks turning `before` into `after`, whole hunks only, until the
/// budget is spent; the rest are counted in `omitted_hunks`.
pub(crate) fn diff_meta(path: &str, before: &str, after: &str) -> DiffMeta {
    let diff = TextDiff::from_lines(before, after);
    let mut diffs = Vec::new();
    let mut omitted_hunks = 0;
    let mut spent = 0;
    for group in diff.grouped_ops(CONTEXT) {
        let (Some(first), Some(last)) = (group.first(), group.last()) else {
            continue;
        };
        let old = first.old_range().start..last.old_range().end;
        let new = first.new_range().start..last.new_range().end;
        let old_text: String = old.clone().filter_map(|i| diff.old_slice(i)).collect();
        let new_text: String = new.clone().filter_map(|i| diff.new_slice(i)).collect();
        let cost = old_text.len() + new_text.len() + path.len();
        if spent + cost > MAX_META_DIFF_BYTES {
            omitted_hunks += 1;
            continue;
        }
        spent += cost;
        // Where the hunk sits in the file, so a card numbers its lines
        // right (ranges are 0-based; card lines 1-based).
        let old_start = (!old.is_empty()).then_some(old.start as u64 + 1);
        diffs.push(
            FileDiff::new(path, (!old.is_empty()).then_some(old_text), new_text)
                .with_starts(old_start, Some(new.start as u64 + 1)),
        );
    }
    DiffMeta {
        diffs,
        omitted_hunks,
    }
}

/// A unified diff with `a/` and `b/` headers, cut to a readable size.
pub(crate) fn unified(path: &str, before: &str, after: &str) -> String {
    let diff = TextDiff::from_lines(before, after);
    let text = diff
        .unified_diff()
        .context_radius(CONTEXT)
        .header(&format!("a/{path}"), &format!("b/{path}"))
        .to_string();
    match cap_bytes(&text, MAX_RENDERED_DIFF_BYTES) {
        (all, false) => all.trim_end().to_owned(),
        (head, true) => format!(
            "{head}\n… (diff cut at {MAX_RENDERED_DIFF_BYTES} bytes; read the file to see the rest)"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hunks_have_three_lines_of_context() {
        let before: String = (1..=20).map(|i| format!("l{i}\n")).collect();
        let after = before
            .replace("l10\n", "L10\n")
            .replace("l20\n", "l20\nnew\n");
        let meta = diff_meta("f.txt", &before, &after);
        assert_eq!(meta.diffs.len(), 2);
        assert_eq!(
            meta.diffs[0].old_text.as_deref(),
            Some("l7\nl8\nl9\nl10\nl11\nl12\nl13\n")
        );
        assert_eq!(meta.diffs[0].new_text, "l7\nl8\nl9\nL10\nl11\nl12\nl13\n");
        assert_eq!(meta.diffs[1].old_text.as_deref(), Some("l18\nl19\nl20\n"));
        assert_eq!(meta.diffs[1].new_text, "l18\nl19\nl20\nnew\n");
        // Each hunk says where it starts, on both sides.
        let starts: Vec<_> = meta
            .diffs
            .iter()
            .map(|d| (d.old_start, d.new_start))
            .collect();
        assert_eq!(starts, [(Some(7), Some(7)), (Some(18), Some(18))]);
        let u = unified("f.txt", &before, &after);
        assert!(u.starts_with("--- a/f.txt\n+++ b/f.txt\n@@"), "{u}");
        assert!(u.contains("-l10\n+L10"));
    }

    #[test]
    fn a_pure_insertion_into_an_empty_file_has_no_old_text() {
        let meta = diff_meta("n.txt", "", "hello\n");
        assert_eq!(meta.diffs.len(), 1);
        assert_eq!(meta.diffs[0].old_text, None);
        assert_eq!(meta.diffs[0].new_text, "hello\n");
        assert_eq!(
            (meta.diffs[0].old_start, meta.diffs[0].new_start),
            (None, Some(1))
        );
    }

    #[test]
    fn large_hunks_are_omitted_whole_and_counted() {
        let before = "a\n".repeat(10);
        let after = format!("{}{}", "b\n".repeat(30_000), "a\n".repeat(10));
        let meta = diff_meta("big.txt", &before, &after);
        assert!(meta.diffs.is_empty());
        assert_eq!(meta.omitted_hunks, 1);
        assert!(unified("big.txt", &before, &after).contains("diff cut at"));
    }
}
