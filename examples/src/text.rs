//! The showcase's one text module: `…` for display and `plural`. All pure.
//! (The terminal renderer has its own, in `toolprism::cli`.)

/// `s` cut to `max` chars with `…` appended when cut; for display.
pub(crate) fn ellipsize(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        None => s.to_owned(),
        Some((end, _)) => format!("{}…", &s[..end]),
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
    fn ellipsize_and_plural() {
        assert_eq!(ellipsize("héllo", 2), "hé…");
        assert_eq!(ellipsize("hé", 2), "hé");
        assert_eq!(plural(1, "line", "lines"), "1 line");
        assert_eq!(plural(0, "line", "lines"), "0 lines");
    }
}
