//! Text for a terminal: cut to a width, and made safe to print.

use std::borrow::Cow;
use std::fmt::Write as _;

/// `s` cut to `max` chars with `…` appended when cut.
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

/// Whether printing `c` could change what the terminal shows beyond the
/// character itself: control characters (escape sequences, carriage
/// returns, backspaces, the C1 controls) and the bidirectional overrides
/// and isolates that reorder the text around them.
fn unsafe_char(c: char) -> bool {
    c.is_control() || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// `s` with every character that could act on the terminal shown escaped
/// (`\u{1b}`), and tabs as four spaces. Borrowed when there is none.
pub(crate) fn clean(s: &str) -> Cow<'_, str> {
    if !s.chars().any(unsafe_char) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\t' => out.push_str("    "),
            c if unsafe_char(c) => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// `s` on one line: each line break shown as `⏎`, then [`clean`].
pub(crate) fn one_line(s: &str) -> String {
    clean(&s.replace("\r\n", "⏎").replace('\n', "⏎")).into_owned()
}

/// `1,234,567`.
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

/// [`plural`] with the count's digits grouped as [`thousands`] does:
/// `9,876 matches`, the one format every count on a card uses.
pub(crate) fn plural_grouped(n: u64, one: &str, many: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{} {many}", thousands(n))
    }
}

/// Whether `line` is the notice spill writes where it cut content (C15):
/// `(Omitted N of M bytes. The full result (M bytes) is stored at: PATH. …)`.
/// A renderer keeps it in view; it decides nothing else.
pub(crate) fn is_spill_notice(line: &str) -> bool {
    let line = line.trim();
    line.starts_with("(Omitted ") && line.ends_with(')') && line.contains(" is stored at: ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_on_chars_and_says_so() {
        assert_eq!(ellipsize("abcdef", 3), "abc…");
        assert_eq!(ellipsize("héllo", 5), "héllo");
        assert_eq!(ellipsize("héllo", 2), "hé…");
        assert_eq!(plural(1, "line", "lines"), "1 line");
        assert_eq!(plural(0, "line", "lines"), "0 lines");
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(1234567), "1,234,567");
    }

    #[test]
    fn nothing_reaches_the_terminal_as_a_control() {
        assert!(matches!(clean("plain text"), Cow::Borrowed(_)));
        assert_eq!(clean("a\x1b[2Jb"), "a\\u{1b}[2Jb");
        assert_eq!(clean("over\rwrite"), "over\\u{d}write");
        assert_eq!(clean("\u{9b}31m"), "\\u{9b}31m");
        assert_eq!(clean("abc\u{202e}fed"), "abc\\u{202e}fed");
        assert_eq!(clean("a\tb"), "a    b");
        assert_eq!(one_line("a\nb\r\nc\x07"), "a⏎b⏎c\\u{7}");
    }
}
