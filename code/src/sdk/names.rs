//! Names in the TypeScript text: identifiers, quoted property keys and
//! string literals, and [`Names`], which hands out unique identifiers for
//! the tools' namespaces and the named types.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

/// Words that cannot name a type alias, an interface or a namespace (or
/// that would read confusingly as one): JavaScript's reserved words,
/// TypeScript's built-in type names and its contextual keywords.
const RESERVED: &[&str] = &[
    "abstract",
    "accessor",
    "any",
    "as",
    "asserts",
    "async",
    "await",
    "bigint",
    "boolean",
    "break",
    "case",
    "catch",
    "class",
    "const",
    "continue",
    "debugger",
    "declare",
    "default",
    "delete",
    "do",
    "else",
    "enum",
    "export",
    "extends",
    "false",
    "finally",
    "for",
    "from",
    "function",
    "get",
    "global",
    "if",
    "implements",
    "import",
    "in",
    "infer",
    "instanceof",
    "interface",
    "intrinsic",
    "is",
    "keyof",
    "let",
    "module",
    "namespace",
    "never",
    "new",
    "null",
    "number",
    "object",
    "of",
    "out",
    "package",
    "private",
    "protected",
    "public",
    "readonly",
    "require",
    "return",
    "satisfies",
    "set",
    "static",
    "string",
    "super",
    "switch",
    "symbol",
    "this",
    "throw",
    "true",
    "try",
    "type",
    "typeof",
    "undefined",
    "unique",
    "unknown",
    "var",
    "void",
    "while",
    "with",
    "yield",
];

/// Whether `s` is an ASCII JavaScript identifier name: usable unquoted as
/// a property name (reserved words are fine there).
pub(crate) fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == '$')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
}

/// `s` as a double-quoted TypeScript string literal (JSON's escapes, plus
/// U+2028 and U+2029, which older parsers take for line ends).
pub(crate) fn string_literal(s: &str) -> String {
    Value::String(s.to_owned())
        .to_string()
        .replace('\u{2028}', "\\u2028")
        .replace('\u{2029}', "\\u2029")
}

/// `s` as a property key: bare when it is an identifier, quoted otherwise.
pub(crate) fn property_key(s: &str) -> String {
    if is_identifier(s) {
        s.to_owned()
    } else {
        string_literal(s)
    }
}

/// `s` made into an identifier that can name a type or a namespace: other
/// characters become `_`, a leading digit gets a `_` before it, a reserved
/// word a `_` after it.
fn sanitize(s: &str) -> String {
    let mut out: String = s
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '$' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if out.is_empty() || out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert(0, '_');
    }
    if RESERVED.contains(&out.as_str()) {
        out.push('_');
    }
    out
}

/// Hands out unique identifiers within one scope: the wanted name made an
/// identifier, with `_2`, `_3`, … added when it is already taken.
#[derive(Debug, Default)]
pub(crate) struct Names {
    taken: HashSet<String>,
    /// The next suffix to try for each base, so that many names on one
    /// base cost no more than distinct ones.
    next: HashMap<String, usize>,
}

impl Names {
    /// An identifier for `wanted`, unique among those handed out so far.
    pub(crate) fn allocate(&mut self, wanted: &str) -> String {
        let base = sanitize(wanted);
        if self.taken.insert(base.clone()) {
            return base;
        }
        let n = self.next.entry(base.clone()).or_insert(2);
        loop {
            let name = format!("{base}_{n}");
            *n += 1;
            if self.taken.insert(name.clone()) {
                return name;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers() {
        assert!(is_identifier("path"));
        assert!(is_identifier("_x$1"));
        assert!(is_identifier("type"));
        assert!(!is_identifier(""));
        assert!(!is_identifier("1st"));
        assert!(!is_identifier("max-len"));
        assert!(!is_identifier("é"));
    }

    #[test]
    fn keys_are_quoted_only_when_needed() {
        assert_eq!(property_key("filePath"), "filePath");
        assert_eq!(property_key("default"), "default");
        assert_eq!(property_key("max-len"), "\"max-len\"");
        assert_eq!(property_key(""), "\"\"");
        assert_eq!(property_key("a\"b"), "\"a\\\"b\"");
    }

    #[test]
    fn string_literals_escape_line_ends() {
        assert_eq!(string_literal("a\nb"), "\"a\\nb\"");
        assert_eq!(string_literal("x\u{2028}y"), "\"x\\u2028y\"");
        assert_eq!(string_literal("*/"), "\"*/\"");
    }

    #[test]
    fn allocation_makes_identifiers_and_keeps_them_unique() {
        let mut names = Names::default();
        assert_eq!(names.allocate("Root"), "Root");
        assert_eq!(names.allocate("Root"), "Root_2");
        assert_eq!(names.allocate("web-fetch"), "web_fetch");
        assert_eq!(names.allocate("web_fetch"), "web_fetch_2");
        assert_eq!(names.allocate("1st"), "_1st");
        assert_eq!(names.allocate("string"), "string_");
        assert_eq!(names.allocate(""), "_");
        assert_eq!(names.allocate("Page<Point>"), "Page_Point_");
    }
}
