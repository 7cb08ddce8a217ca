//! Small text helpers shared by the tools and the showcase. All pure.

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
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    (&s[..end], true)
}

/// `s` cut to `max` chars with `…` appended when cut; for display.
pub(crate) fn ellipsize(s: &str, max: usize) -> String {
    match cap_chars(s, max) {
        (head, false) => head.into_owned(),
        (head, true) => format!("{head}…"),
    }
}

/// `n` followed by `one` or `many`: `1 line`, `3 lines`.
pub(crate) fn plural(n: u64, one: &str, many: &str) -> String {
    if n == 1 {
        format!("{n} {one}")
    } else {
        format!("{n} {many}")
    }
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
        assert_eq!(ellipsize("abcdef", 3), "abc…");
        assert_eq!(plural(1, "line", "lines"), "1 line");
        assert_eq!(plural(0, "line", "lines"), "0 lines");
    }
}
