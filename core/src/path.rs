//! JSON paths in messages, written one way everywhere: `value.rows[3].score`,
//! `arguments["a b"]`, and, where an object key is data that must not be
//! persisted, `value.scores.{entry 2}`.
//!
//! Error messages are content, and content is persisted. A path into
//! *arguments* may name every key (the arguments are in the session log
//! already). A path into a *value* or *meta* names only what the type
//! declares (struct fields, enum variants, the schema's property names);
//! any other object key is named by its position in its object, so no key
//! of the value reaches the disk through an error.

use std::collections::BTreeSet;
use std::fmt::Write as _;

/// How object keys that the type does not declare are written.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Keys<'a> {
    /// Every key is written (arguments, and the public lossless helpers).
    Shown,
    /// Only these names are written; any other key by its position.
    Declared(&'a BTreeSet<String>),
    /// No map key is written, only positions (meta, which has no schema).
    Hidden,
}

impl Keys<'_> {
    fn shows(&self, key: &str) -> bool {
        match self {
            Keys::Shown => true,
            Keys::Declared(names) => names.contains(key),
            Keys::Hidden => false,
        }
    }
}

/// A path being written, from its root label (`arguments`, `value`, `meta`).
#[derive(Debug, Clone)]
pub(crate) struct JsonPath {
    text: String,
}

impl JsonPath {
    pub(crate) fn new(root: &str) -> Self {
        JsonPath {
            text: root.to_owned(),
        }
    }

    /// A name the type itself declares (a struct field, an enum variant):
    /// always written.
    pub(crate) fn field(&mut self, name: &str) {
        if is_identifier(name) {
            self.text.push('.');
            self.text.push_str(name);
        } else {
            self.text.push('[');
            // Writing a `String` as JSON cannot fail.
            let _ = write!(self.text, "{}", serde_json::Value::String(name.to_owned()));
            self.text.push(']');
        }
    }

    /// An object key at `position` (0-based) in its object: written when
    /// `keys` shows it, else as `{entry N}`.
    pub(crate) fn key(&mut self, key: Option<&str>, position: usize, keys: Keys<'_>) {
        match key {
            Some(key) if keys.shows(key) => self.field(key),
            _ => {
                let _ = write!(self.text, ".{{entry {position}}}");
            }
        }
    }

    /// An array element.
    pub(crate) fn index(&mut self, index: usize) {
        let _ = write!(self.text, "[{index}]");
    }

    pub(crate) fn into_string(self) -> String {
        self.text
    }
}

/// `true` when `name` can follow a `.`: an ASCII identifier.
fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_indices_and_quoted_keys() {
        let mut p = JsonPath::new("value");
        p.field("rows");
        p.index(3);
        p.field("a b");
        p.field("ok_1");
        p.field("1st");
        assert_eq!(p.into_string(), r#"value.rows[3]["a b"].ok_1["1st"]"#);
    }

    #[test]
    fn undeclared_keys_are_written_by_position() {
        let declared: BTreeSet<String> = ["rows".to_owned()].into();
        let mut p = JsonPath::new("value");
        p.key(Some("rows"), 0, Keys::Declared(&declared));
        p.key(Some("secret"), 2, Keys::Declared(&declared));
        p.key(Some("rows"), 1, Keys::Hidden);
        p.key(None, 4, Keys::Shown);
        assert_eq!(p.into_string(), "value.rows.{entry 2}.{entry 1}.{entry 4}");
        let mut p = JsonPath::new("arguments");
        p.key(Some("secret"), 2, Keys::Shown);
        assert_eq!(p.into_string(), "arguments.secret");
    }
}
