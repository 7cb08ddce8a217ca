//! The names a tool gets: the tool's own (what the model calls), the
//! module's, and the prefix of its Rust types.

use crate::text::ellipsize;

/// A tool's names, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Names {
    /// What the model calls: `[A-Za-z0-9_-]{1,64}`.
    pub(crate) tool: String,
    /// The module: snake case, `-` as `_`.
    pub(crate) module: String,
    /// The prefix of the types: `WebFetch` for `web_fetch`.
    pub(crate) types: String,
}

/// Rust's keywords, strict and reserved, in every edition: none can name a
/// module.
const KEYWORDS: &[&str] = &[
    "abstract", "as", "async", "await", "become", "box", "break", "const", "continue", "crate",
    "do", "dyn", "else", "enum", "extern", "false", "final", "fn", "for", "gen", "if", "impl",
    "in", "let", "loop", "macro", "match", "mod", "move", "mut", "override", "priv", "pub", "ref",
    "return", "self", "static", "struct", "super", "trait", "true", "try", "type", "typeof",
    "union", "unsafe", "unsized", "use", "virtual", "where", "while", "yield",
];

/// Crates every Rust program can name: a module of that name at the crate
/// root would make `use std::…` ambiguous.
const BUILTIN_CRATES: &[&str] = &["std", "core", "alloc", "proc_macro", "test"];

/// Whether `name` is a tool name: `[A-Za-z0-9_-]{1,64}` (K9). The
/// registry (`toolprism-core`) and `#[tool]` (`toolprism-macros`) check the
/// same rule, each in its own crate; `name_rule`'s test pins the three equal.
pub(crate) fn is_tool_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

impl Names {
    /// Checks `tool` and derives the other names from it.
    pub(crate) fn new(tool: &str) -> Result<Names, String> {
        let shown = ellipsize(tool, 70).escape_debug().to_string();
        if !is_tool_name(tool) {
            return Err(format!(
                "\"{shown}\" is not a tool name: use 1 to 64 characters from A-Z, a-z, 0-9, `_` and `-`"
            ));
        }
        let module = snake_case(tool);
        if module.starts_with(|c: char| c.is_ascii_digit()) {
            return Err(format!(
                "\"{shown}\" cannot name a Rust module (`{module}` starts with a digit): start the name with a letter"
            ));
        }
        if module.chars().all(|c| c == '_') {
            return Err(format!(
                "\"{shown}\" cannot name a Rust module: it needs a letter or a digit"
            ));
        }
        if KEYWORDS.contains(&module.as_str()) {
            return Err(format!(
                "\"{shown}\" cannot name a Rust module: `{module}` is a Rust keyword; pick another name"
            ));
        }
        if BUILTIN_CRATES.contains(&module.as_str()) {
            return Err(format!(
                "\"{shown}\" cannot name a module at the crate root: `{module}` is a crate every program can name"
            ));
        }
        Ok(Names {
            tool: tool.to_owned(),
            types: camel_case(&module),
            module,
        })
    }
}

/// `WebFetch` → `web_fetch`, `web-fetch` → `web_fetch`, `HTTPGet` →
/// `http_get`.
fn snake_case(name: &str) -> String {
    let chars: Vec<char> = name.chars().collect();
    let mut out = String::with_capacity(name.len() + 4);
    for (i, &c) in chars.iter().enumerate() {
        if c == '-' {
            out.push('_');
            continue;
        }
        if c.is_ascii_uppercase() && i > 0 {
            let prev = chars[i - 1];
            let next_lower = chars.get(i + 1).is_some_and(|n| n.is_ascii_lowercase());
            if prev.is_ascii_lowercase()
                || prev.is_ascii_digit()
                || (prev.is_ascii_uppercase() && next_lower)
            {
                out.push('_');
            }
        }
        out.push(c.to_ascii_lowercase());
    }
    out
}

/// `web_fetch` → `WebFetch`; `v2_api` → `V2Api`.
fn camel_case(module: &str) -> String {
    module
        .split('_')
        .filter(|part| !part.is_empty())
        .map(|part| {
            let mut chars = part.chars();
            match chars.next() {
                Some(first) => first.to_ascii_uppercase().to_string() + chars.as_str(),
                None => String::new(),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn derives_module_and_type_names() {
        let names = Names::new("web-fetch").unwrap();
        assert_eq!(
            (
                names.tool.as_str(),
                names.module.as_str(),
                names.types.as_str()
            ),
            ("web-fetch", "web_fetch", "WebFetch")
        );
        assert_eq!(Names::new("HTTPGet").unwrap().module, "http_get");
        assert_eq!(Names::new("readFile").unwrap().module, "read_file");
        assert_eq!(Names::new("v2_api").unwrap().types, "V2Api");
        assert_eq!(Names::new("_private").unwrap().types, "Private");
        assert_eq!(Names::new(&"a".repeat(64)).unwrap().module.len(), 64);
    }

    #[test]
    fn refuses_what_cannot_be_a_tool_or_a_module() {
        for (name, why) in [
            ("", "not a tool name"),
            ("has space", "not a tool name"),
            ("dot.ted", "not a tool name"),
            ("émoji", "not a tool name"),
            ("9lives", "starts with a digit"),
            ("__", "needs a letter"),
            ("-", "needs a letter"),
            ("type", "keyword"),
            ("Self", "keyword"),
            ("std", "every program can name"),
        ] {
            let err = Names::new(name).unwrap_err();
            assert!(err.contains(why), "{name:?}: {err}");
        }
        assert!(
            Names::new(&"a".repeat(65))
                .unwrap_err()
                .contains("not a tool name")
        );
        let err = Names::new(&"a".repeat(10_000)).unwrap_err();
        assert!(
            err.contains("not a tool name") && err.contains('…'),
            "{err}"
        );
        assert!(err.len() < 200, "{err}");
    }
}
