//! The crate's one text module: escaping, cutting on a char boundary,
//! lines, and the number and size formats every card uses (`12,345`,
//! `1 line`, `14.2 KB`: one format everywhere). Everything from a log goes
//! through [`escape`] before it reaches the page, so it is data, never
//! markup.

use std::fmt::Write;

/// Appends `text` to `out` as element content: `&`, `<` and `>` escaped,
/// which is all a text node needs (quotes are plain text there).
pub(crate) fn escape(out: &mut String, text: &str) {
    escape_with(out, text, false);
}

/// Appends `text` to `out` as a quoted attribute's value: `&`, `<`, `>`,
/// `"` and `'` escaped.
pub(crate) fn escape_attr(out: &mut String, text: &str) {
    escape_with(out, text, true);
}

fn escape_with(out: &mut String, text: &str, quotes: bool) {
    let mut start = 0;
    for (i, b) in text.bytes().enumerate() {
        let entity = match b {
            b'&' => "&amp;",
            b'<' => "&lt;",
            b'>' => "&gt;",
            b'"' if quotes => "&quot;",
            b'\'' if quotes => "&#39;",
            _ => continue,
        };
        // The escaped bytes are ASCII, so `i` is a char boundary.
        out.push_str(&text[start..i]);
        out.push_str(entity);
        start = i + 1;
    }
    out.push_str(&text[start..]);
}

/// `12,345`.
pub(crate) fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `1 line`, `3 lines` (with thousands separators).
pub(crate) fn plural(n: u64, one: &str, many: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{} {many}", thousands(n))
    }
}

/// A byte count for people: `812 bytes`, `14.2 KB`, `3.1 MB`.
pub(crate) fn bytes(n: u64) -> String {
    const KB: f64 = 1024.0;
    let f = n as f64;
    if n < 1024 {
        plural(n, "byte", "bytes")
    } else if f < KB * KB {
        format!("{:.1} KB", f / KB)
    } else if f < KB * KB * KB {
        format!("{:.1} MB", f / (KB * KB))
    } else {
        format!("{:.1} GB", f / (KB * KB * KB))
    }
}

/// The longest prefix of `text` of at most `max` bytes that ends on a char
/// boundary.
pub(crate) fn cut(text: &str, max: usize) -> &str {
    &text[..text.floor_char_boundary(max)]
}

/// Lines of `text`: split on `\n`, without a last empty line for a trailing
/// newline. An empty text has no lines.
pub(crate) fn lines(text: &str) -> impl Iterator<Item = &str> {
    text.split_inclusive('\n')
        .map(|l| l.strip_suffix('\n').unwrap_or(l))
}

/// Number of lines as [`lines`] counts them.
pub(crate) fn line_count(text: &str) -> usize {
    if text.is_empty() {
        return 0;
    }
    let newlines = text.bytes().filter(|&b| b == b'\n').count();
    if text.ends_with('\n') {
        newlines
    } else {
        newlines + 1
    }
}

/// Byte offset just past the `n`th newline of `text`, or `None` when it has
/// fewer.
pub(crate) fn after_line(text: &str, n: usize) -> Option<usize> {
    if n == 0 {
        return Some(0);
    }
    text.bytes()
        .enumerate()
        .filter(|&(_, b)| b == b'\n')
        .nth(n - 1)
        .map(|(i, _)| i + 1)
}

/// Whether `line` is the notice spill writes where it cut content (C15):
/// `(Omitted N of M bytes. The full result (M bytes) is stored at: PATH. …)`.
/// The page keeps it in view; it decides nothing else.
pub(crate) fn is_spill_notice(line: &str) -> bool {
    let line = line.trim();
    line.starts_with("(Omitted ") && line.ends_with(')') && line.contains(" is stored at: ")
}

/// Writes `format_args!` output escaped.
pub(crate) fn escape_fmt(out: &mut String, args: std::fmt::Arguments<'_>) {
    match args.as_str() {
        Some(s) => escape(out, s),
        None => {
            let mut s = String::new();
            let _ = s.write_fmt(args);
            escape(out, &s);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup_in_text_and_quotes_too_in_attributes() {
        let mut text = String::new();
        escape(&mut text, "<a href=\"x\">'&'</a> é ✓");
        assert_eq!(text, "&lt;a href=\"x\"&gt;'&amp;'&lt;/a&gt; é ✓");
        let mut attr = String::new();
        escape_attr(&mut attr, "<a href=\"x\">'&'</a> é ✓");
        assert_eq!(
            attr,
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt; é ✓"
        );
    }

    #[test]
    fn formats() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(1234567), "1,234,567");
        assert_eq!(plural(1, "line", "lines"), "1 line");
        assert_eq!(plural(4986, "line", "lines"), "4,986 lines");
        assert_eq!(bytes(1), "1 byte");
        assert_eq!(bytes(1023), "1,023 bytes");
        assert_eq!(bytes(14 * 1024 + 200), "14.2 KB");
        assert_eq!(bytes(3 * 1024 * 1024), "3.0 MB");
        assert_eq!(cut("aé", 2), "a");
        assert_eq!(cut("aé", 3), "aé");
        assert_eq!(cut("abc", 9), "abc");
        assert_eq!(cut("✓✓", 4), "✓");
    }

    #[test]
    fn knows_the_spill_notice_and_nothing_else() {
        assert!(is_spill_notice(
            "(Omitted 4350 of 16456 bytes. The full result (16456 bytes) is stored at: /s/x.txt. Read that file in pages to see the rest.)"
        ));
        assert!(!is_spill_notice("(Omitted on purpose)"));
        assert!(!is_spill_notice("the result is stored at: /x"));
    }

    #[test]
    fn counts_lines_like_an_editor() {
        for (text, n) in [("", 0), ("a", 1), ("a\n", 1), ("a\nb", 2), ("\n\n", 2)] {
            assert_eq!(line_count(text), n, "{text:?}");
            assert_eq!(lines(text).count(), n, "{text:?}");
        }
        assert_eq!(after_line("a\nb\nc", 2), Some(4));
        assert_eq!(after_line("a\nb", 2), None);
    }
}
