//! Cutting text for messages and previews, on char boundaries: the one
//! place the core shortens a string.

use std::borrow::Cow;

/// At most `max` bytes of `s`, cut on a char boundary, with `…` when cut.
pub(crate) fn cap(s: &str, max: usize) -> Cow<'_, str> {
    if s.len() <= max {
        return s.into();
    }
    format!("{}…", cut(s, max)).into()
}

/// The longest prefix of `s` of at most `max` bytes that ends on a char
/// boundary.
pub(crate) fn cut(s: &str, max: usize) -> &str {
    &s[..s.floor_char_boundary(max)]
}

/// `s` after [`cap`], appended to `out`.
pub(crate) fn push_capped(out: &mut String, s: &str, max: usize) {
    out.push_str(&cap(s, max));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_fall_on_char_boundaries() {
        assert_eq!(cap("short", 10), "short");
        assert_eq!(cap("héllo", 2), "h…");
        assert_eq!(cap("héllo", 3), "hé…");
        assert_eq!(cut("日本語", 4), "日");
        assert_eq!(cut("abc", 0), "");
        let mut out = String::from(">");
        push_capped(&mut out, "ééé", 3);
        assert_eq!(out, ">é…");
    }
}
