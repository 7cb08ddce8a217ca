//! Cutting text on char boundaries: the one place this crate shortens a
//! string.

use std::borrow::Cow;

/// At most `max` bytes of `s`, cut on a char boundary, with `…` when cut.
pub(crate) fn cap(s: &str, max: usize) -> Cow<'_, str> {
    if s.len() <= max {
        return s.into();
    }
    format!("{}…", cut(s, max)).into()
}

/// The last `max` bytes of `s` at most, cut on a char boundary, with `…`
/// in front when cut: the end of a log is what explains a failure.
pub(crate) fn cap_tail(s: &str, max: usize) -> Cow<'_, str> {
    if s.len() <= max {
        return s.into();
    }
    format!("…{}", &s[s.ceil_char_boundary(s.len() - max)..]).into()
}

/// The longest prefix of `s` of at most `max` bytes that ends on a char
/// boundary.
pub(crate) fn cut(s: &str, max: usize) -> &str {
    &s[..s.floor_char_boundary(max)]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_fall_on_char_boundaries_at_either_end() {
        assert_eq!(cap("héllo", 2), "h…");
        assert_eq!(cap_tail("héllo", 4), "…llo");
        assert_eq!(cap_tail("日本語", 4), "…語");
        assert_eq!(cap_tail("ok", 4), "ok");
        assert_eq!(cut("日本語", 4), "日");
    }
}
