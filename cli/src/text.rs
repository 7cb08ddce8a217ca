//! The crate's one text module: `…` for display.

/// `s` cut to `max` chars with `…` appended when cut.
pub(crate) fn ellipsize(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        None => s.to_owned(),
        Some((end, _)) => format!("{}…", &s[..end]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_on_chars_and_says_so() {
        assert_eq!(ellipsize("abcdef", 3), "abc…");
        assert_eq!(ellipsize("héllo", 2), "hé…");
        assert_eq!(ellipsize("hé", 2), "hé");
        assert_eq!(ellipsize("", 0), "");
    }
}
