//! Paths into a value, for error messages: `args.items[2]`, `result["a b"]`.
//!
//! Written as the project writes them (`toolprism::path`): a key that is an
//! ASCII identifier follows a `.`, any other key is quoted as JSON in
//! brackets, an array index is `[n]`. Keys longer than [`KEY_CAP`] bytes
//! are cut.

use std::fmt::Write as _;

/// The longest key written whole in a path, in bytes.
pub(crate) const KEY_CAP: usize = 64;

/// One step down into an array or object.
#[derive(Debug, Clone)]
pub(crate) enum Step {
    /// An object key.
    Key(String),
    /// An array index.
    Index(u32),
}

/// Renders `root` followed by `steps`.
pub(crate) fn render(root: &str, steps: &[Step]) -> String {
    let mut out = root.to_owned();
    for step in steps {
        match step {
            Step::Index(i) => {
                let _ = write!(out, "[{i}]");
            }
            Step::Key(key) if is_identifier(key) && key.len() <= KEY_CAP => {
                out.push('.');
                out.push_str(key);
            }
            Step::Key(key) => {
                let mut shown = key.as_str();
                let mut cut = false;
                if shown.len() > KEY_CAP {
                    let mut end = KEY_CAP;
                    while !shown.is_char_boundary(end) {
                        end -= 1;
                    }
                    shown = &shown[..end];
                    cut = true;
                }
                out.push('[');
                out.push_str(&serde_json::Value::String(shown.to_owned()).to_string());
                if cut {
                    out.push('…');
                }
                out.push(']');
            }
        }
    }
    out
}

/// `true` when `name` can follow a `.`: an ASCII identifier.
fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == '$')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_indices_and_quoted_keys() {
        let steps = [
            Step::Key("items".into()),
            Step::Index(2),
            Step::Key("a b".into()),
            Step::Key("$ok_1".into()),
            Step::Key("1st".into()),
        ];
        assert_eq!(
            render("args", &steps),
            r#"args.items[2]["a b"].$ok_1["1st"]"#
        );
    }

    #[test]
    fn long_keys_are_cut() {
        let key = "k".repeat(100);
        let path = render("args", &[Step::Key(key)]);
        assert_eq!(path, format!("args[\"{}\"…]", "k".repeat(KEY_CAP)));
    }
}
