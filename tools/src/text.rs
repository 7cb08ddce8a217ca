//! The crate's one text module: caps that cut on a char boundary (by chars
//! or by bytes, and bytes that were cut mid-char), `…` for display,
//! `plural` and digit grouping. All pure, so the projections (C4–C6) may
//! call them.

// Each feature uses some of these.
#![cfg_attr(
    not(all(feature = "fs", feature = "shell", feature = "web", feature = "sql")),
    allow(dead_code)
)]

use std::borrow::Cow;

/// At most `max` chars of `s`; the second item says whether it was cut.
pub(crate) fn cap_chars(s: &str, max: usize) -> (Cow<'_, str>, bool) {
    match s.char_indices().nth(max) {
        None => (Cow::Borrowed(s), false),
        Some((end, _)) => (Cow::Borrowed(&s[..end]), true),
    }
}

/// At most `max` bytes of `s`, cut on a char boundary; the second item says
/// whether it was cut.
pub(crate) fn cap_bytes(s: &str, max: usize) -> (&str, bool) {
    if s.len() <= max {
        return (s, false);
    }
    (&s[..s.floor_char_boundary(max)], true)
}

/// `bytes` as text, invalid UTF-8 replaced. When `cut` (the bytes are the
/// head of a longer stream), a char split by the cut at the very end is
/// dropped rather than shown as `�`.
pub(crate) fn lossy_head(bytes: &[u8], cut: bool) -> String {
    let whole = match std::str::from_utf8(bytes) {
        Ok(text) => return text.to_owned(),
        // `error_len() == None`: the input ends inside a char.
        Err(e) if cut && e.error_len().is_none() => &bytes[..e.valid_up_to()],
        Err(_) => bytes,
    };
    String::from_utf8_lossy(whole).into_owned()
}

/// `s` cut to `max` chars with `…` appended when cut; for display.
pub(crate) fn ellipsize(s: &str, max: usize) -> String {
    match cap_chars(s, max) {
        (head, false) => head.into_owned(),
        (head, true) => format!("{head}…"),
    }
}

/// `n` followed by `one` or `many`: `1 line`, `3 lines`, `9,876 matches`
/// (digits grouped as [`thousands`] does, like every count a card shows).
pub(crate) fn plural(n: u64, one: &str, many: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{} {many}", thousands(n))
    }
}

/// `n` with its digits grouped by three: `1,234,567`.
pub(crate) fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, d) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(d);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caps_respect_char_boundaries() {
        assert_eq!(cap_chars("héllo", 2), (Cow::Borrowed("hé"), true));
        assert_eq!(cap_chars("hé", 2), (Cow::Borrowed("hé"), false));
        assert_eq!(cap_bytes("hé", 2), ("h", true));
        assert_eq!(cap_bytes("hé", 3), ("hé", false));
        // A 4-byte char: every cut inside it falls back to its start.
        for max in 1..=4 {
            assert_eq!(cap_bytes("a🦀b", max), ("a", true), "{max}");
        }
        assert_eq!(cap_bytes("a🦀b", 5), ("a🦀", true));
        assert_eq!(cap_bytes("", 0), ("", false));
        assert_eq!(ellipsize("abcdef", 3), "abc…");
        assert_eq!(plural(1, "line", "lines"), "1 line");
        assert_eq!(plural(0, "line", "lines"), "0 lines");
        assert_eq!(plural(9876, "match", "matches"), "9,876 matches");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1_000), "1,000");
        assert_eq!(thousands(1_234_567), "1,234,567");
    }

    #[test]
    fn a_head_drops_only_the_char_its_cut_split() {
        let crab = "a🦀".as_bytes();
        // Cut inside the crab: dropped, not shown as a replacement char.
        assert_eq!(lossy_head(&crab[..3], true), "a");
        // Not cut: the same bytes are broken input, and say so.
        assert_eq!(lossy_head(&crab[..3], false), "a\u{fffd}");
        // Broken bytes before the end stay visible either way.
        assert_eq!(lossy_head(b"a\xffb", true), "a\u{fffd}b");
        assert_eq!(lossy_head(crab, true), "a🦀");
    }

    #[test]
    fn groups_digits_by_three() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(1_234_567), "1,234,567");
        assert_eq!(thousands(u64::MAX), "18,446,744,073,709,551,615");
    }
}
