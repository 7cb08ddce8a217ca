//! The title and description of a tool's doc comment, split in `const fn`s
//! after `concat!` has joined its lines (so `#[doc = include_str!(..)]`
//! works too).

/// The title in a doc comment: its first line, when it is `# Heading`.
pub const fn doc_title(doc: &'static str) -> Option<&'static str> {
    match split_heading(doc) {
        Some((title, _)) => Some(title),
        None => None,
    }
}

/// The description in a doc comment: the text after a `# Heading`
/// line (or all of it), trimmed.
pub const fn doc_description(doc: &'static str) -> &'static str {
    match split_heading(doc) {
        Some((_, rest)) => rest,
        None => doc.trim_ascii(),
    }
}

/// A doc comment, trimmed (when `title = ".."` is set, the doc comment
/// is all description).
pub const fn doc_text(doc: &'static str) -> &'static str {
    doc.trim_ascii()
}

const fn split_heading(doc: &'static str) -> Option<(&'static str, &'static str)> {
    let bytes = doc.trim_ascii_start().as_bytes();
    if bytes.len() < 3 || bytes[0] != b'#' || bytes[1] != b' ' {
        return None;
    }
    let mut end = 2;
    while end < bytes.len() && bytes[end] != b'\n' {
        end += 1;
    }
    let (line, rest) = bytes.split_at(end);
    let (_, title) = line.split_at(2);
    match (::core::str::from_utf8(title), ::core::str::from_utf8(rest)) {
        (Ok(title), Ok(rest)) if !title.trim_ascii().is_empty() => {
            Some((title.trim_ascii(), rest.trim_ascii()))
        }
        _ => None,
    }
}
