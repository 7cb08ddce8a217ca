//! JSDoc comments: [`Doc`], the lines of one comment, built from free text
//! and from a schema's annotations (`title`, `description`, `default`,
//! `examples`, `format`, bounds, `deprecated`), and written so that no
//! text can end the comment early.

use serde_json::{Map, Value};

/// `@default` and `@example` values longer than this many chars are cut.
const MAX_VALUE_CHARS: usize = 120;

/// Formats that say nothing a `number` does not: schemars writes them for
/// `f64` and `f32`.
const SILENT_FORMATS: &[&str] = &["double", "float"];

/// The lines of one JSDoc comment, not yet escaped.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub(crate) struct Doc {
    lines: Vec<String>,
}

impl Doc {
    /// A comment holding `text` (which may be empty).
    pub(crate) fn text(text: &str) -> Doc {
        let mut doc = Doc::default();
        doc.paragraph(text);
        doc
    }

    /// Whether there is nothing to write.
    pub(crate) fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }

    /// Adds `text` as a paragraph, after a blank line when the comment
    /// already has text. Line ends are normalized, blank lines at either end
    /// and trailing white space dropped, control characters removed.
    pub(crate) fn paragraph(&mut self, text: &str) {
        let text = text
            .replace("\r\n", "\n")
            .replace(['\r', '\u{2028}', '\u{2029}'], "\n");
        let lines: Vec<String> = text
            .split('\n')
            .map(|line| {
                line.chars()
                    .filter(|c| !c.is_control() || *c == '\t')
                    .collect::<String>()
                    .trim_end()
                    .to_owned()
            })
            .collect();
        let Some(first) = lines.iter().position(|l| !l.is_empty()) else {
            return;
        };
        let last = lines.iter().rposition(|l| !l.is_empty()).unwrap_or(first);
        if !self.lines.is_empty() {
            self.lines.push(String::new());
        }
        self.lines.extend(lines[first..=last].iter().cloned());
    }

    /// Adds a `@name value` line.
    fn tag(&mut self, name: &str, value: &str) {
        let value: String = value.chars().filter(|c| !c.is_control()).collect();
        if value.is_empty() {
            self.lines.push(format!("@{name}"));
        } else {
            self.lines.push(format!("@{name} {value}"));
        }
    }

    /// Writes the comment, each line indented by `indent` spaces and ending
    /// with a line end: `/** one line */`, or a `/** … */` block.
    pub(crate) fn write(&self, indent: usize, out: &mut String) {
        let pad = " ".repeat(indent);
        match self.lines.as_slice() {
            [] => {}
            [line] => {
                out.push_str(&pad);
                out.push_str("/** ");
                out.push_str(&escape(line));
                out.push_str(" */\n");
            }
            lines => {
                out.push_str(&pad);
                out.push_str("/**\n");
                for line in lines {
                    out.push_str(&pad);
                    if line.is_empty() {
                        out.push_str(" *\n");
                    } else {
                        out.push_str(" * ");
                        out.push_str(&escape(line));
                        out.push('\n');
                    }
                }
                out.push_str(&pad);
                out.push_str(" */\n");
            }
        }
    }
}

/// A comment line that cannot end the comment: `*/` becomes `*\/`.
fn escape(line: &str) -> String {
    line.replace("*/", "*\\/")
}

/// How [`schema_doc`] treats the schema's `title`.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Title<'a> {
    /// Shown as the first paragraph.
    Keep,
    /// Not shown (a root's title is its Rust type's name).
    Drop,
    /// Not shown when it equals this name (the named type it documents).
    Unless(&'a str),
}

/// The text of a schema node's JSDoc: its `title` (as `title` says), then
/// its `description`.
pub(crate) fn text_doc(m: &Map<String, Value>, title: Title<'_>) -> Doc {
    let mut doc = Doc::default();
    if let Some(Value::String(t)) = m.get("title") {
        let keep = match title {
            Title::Keep => true,
            Title::Drop => false,
            Title::Unless(name) => t != name,
        };
        if keep {
            doc.paragraph(t);
        }
    }
    if let Some(Value::String(d)) = m.get("description") {
        doc.paragraph(d);
    }
    doc
}

/// The JSDoc of a schema node: its [`text_doc`], then one tag per
/// annotation or bound: `@default`, `@example`, `@format` (but for
/// `double` and `float`), `@minimum` … `@maxProperties`, `@deprecated`.
/// A bound that the `format` already implies (schemars writes `minimum: 0`
/// for every unsigned integer) is left out, and so are `minItems` and
/// `maxItems` when `sized` (the array became a tuple, which shows them).
pub(crate) fn schema_doc(m: &Map<String, Value>, title: Title<'_>, sized: bool) -> Doc {
    let mut doc = text_doc(m, title);
    if let Some(v) = m.get("default") {
        doc.tag("default", &value_text(v));
    }
    if let Some(Value::Array(examples)) = m.get("examples") {
        for v in examples.iter().take(3) {
            doc.tag("example", &value_text(v));
        }
    }
    let format = m.get("format").and_then(Value::as_str);
    if let Some(f) = format.filter(|f| !SILENT_FORMATS.contains(f)) {
        doc.tag("format", f);
    }
    let implied = format.and_then(implied_bounds);
    for key in [
        "minimum",
        "exclusiveMinimum",
        "maximum",
        "exclusiveMaximum",
        "multipleOf",
    ] {
        let Some(Value::Number(n)) = m.get(key) else {
            continue;
        };
        let as_int = n
            .as_i64()
            .map(i128::from)
            .or_else(|| n.as_u64().map(i128::from));
        let implied_here = match (key, implied, as_int) {
            ("minimum", Some((lo, _)), Some(v)) => v == lo,
            ("maximum", Some((_, hi)), Some(v)) => v == hi,
            _ => false,
        };
        if !implied_here {
            doc.tag(key, &n.to_string());
        }
    }
    for key in [
        "minLength",
        "maxLength",
        "pattern",
        "minItems",
        "maxItems",
        "minProperties",
        "maxProperties",
    ] {
        if sized && (key == "minItems" || key == "maxItems") {
            continue;
        }
        match m.get(key) {
            Some(Value::Number(n)) => doc.tag(key, &n.to_string()),
            Some(Value::String(s)) => doc.tag(key, s),
            _ => {}
        }
    }
    if m.get("uniqueItems") == Some(&Value::Bool(true)) {
        doc.tag("uniqueItems", "");
    }
    if m.get("deprecated") == Some(&Value::Bool(true)) {
        doc.tag("deprecated", "");
    }
    doc
}

/// A JSON value as compact text, cut at [`MAX_VALUE_CHARS`].
fn value_text(v: &Value) -> String {
    let text = v.to_string();
    if text.chars().count() <= MAX_VALUE_CHARS {
        text
    } else {
        let mut cut: String = text.chars().take(MAX_VALUE_CHARS).collect();
        cut.push('…');
        cut
    }
}

/// The range a schemars integer `format` implies: `uint8` is 0..=255,
/// `int16` is -32768..=32767, `uint`/`int` are 64-bit.
fn implied_bounds(format: &str) -> Option<(i128, i128)> {
    let (signed, bits) = match format {
        "uint" => (false, 64),
        "int" => (true, 64),
        f => {
            if let Some(b) = f.strip_prefix("uint") {
                (false, b.parse::<u32>().ok()?)
            } else {
                (true, f.strip_prefix("int")?.parse::<u32>().ok()?)
            }
        }
    };
    if !matches!(bits, 8 | 16 | 32 | 64) {
        return None;
    }
    Some(if signed {
        (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
    } else {
        (0, (1i128 << bits) - 1)
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn written(doc: &Doc, indent: usize) -> String {
        let mut out = String::new();
        doc.write(indent, &mut out);
        out
    }

    fn of(schema: Value) -> Doc {
        schema_doc(schema.as_object().unwrap(), Title::Keep, false)
    }

    #[test]
    fn one_line_and_block_forms() {
        assert_eq!(written(&Doc::text("The path."), 2), "  /** The path. */\n");
        assert_eq!(
            written(&Doc::text("Search.\r\n\r\nCase-insensitive.  "), 0),
            "/**\n * Search.\n *\n * Case-insensitive.\n */\n"
        );
        assert_eq!(written(&Doc::text("  \n\n "), 0), "");
    }

    #[test]
    fn text_cannot_close_the_comment() {
        let out = written(&Doc::text("a */ b **/ c\u{2028}*/"), 0);
        assert_eq!(out, "/**\n * a *\\/ b **\\/ c\n * *\\/\n */\n");
        assert_eq!(out.matches("*/").count(), 1);
    }

    #[test]
    fn control_characters_are_removed() {
        assert_eq!(
            written(&Doc::text("a\u{0}b\u{1b}[31m"), 0),
            "/** ab[31m */\n"
        );
    }

    #[test]
    fn annotations_become_tags() {
        let doc = of(json!({
            "title": "Limit", "description": "How many.", "default": 10,
            "format": "uint8", "minimum": 1, "maximum": 255, "deprecated": true
        }));
        assert_eq!(
            written(&doc, 0),
            "/**\n * Limit\n *\n * How many.\n * @default 10\n * @format uint8\n * @minimum 1\n * @deprecated\n */\n"
        );
    }

    #[test]
    fn bounds_implied_by_the_format_are_left_out() {
        let doc = of(json!({"format": "uint32", "minimum": 0}));
        assert_eq!(written(&doc, 0), "/** @format uint32 */\n");
        let doc = of(json!({"format": "int16", "minimum": -32768, "maximum": 32767}));
        assert_eq!(written(&doc, 0), "/** @format int16 */\n");
        let doc = of(json!({"format": "int16", "minimum": -1, "maximum": 32767}));
        assert_eq!(
            written(&doc, 0),
            "/**\n * @format int16\n * @minimum -1\n */\n"
        );
    }

    #[test]
    fn titles_follow_the_rule() {
        let m = json!({"title": "Point", "description": "A point."});
        let m = m.as_object().unwrap();
        assert_eq!(
            written(&schema_doc(m, Title::Drop, false), 0),
            "/** A point. */\n"
        );
        assert_eq!(
            written(&schema_doc(m, Title::Unless("Point"), false), 0),
            "/** A point. */\n"
        );
        assert_eq!(
            written(&schema_doc(m, Title::Unless("Other"), false), 0),
            "/**\n * Point\n *\n * A point.\n */\n"
        );
    }

    #[test]
    fn long_defaults_are_cut_and_sized_arrays_drop_their_bounds() {
        let long = "x".repeat(500);
        let doc = of(json!({ "default": long }));
        let out = written(&doc, 0);
        assert!(out.ends_with("… */\n"), "{out}");
        assert!(out.chars().count() < 140);
        let m = json!({"minItems": 3, "maxItems": 3, "uniqueItems": true});
        let doc = schema_doc(m.as_object().unwrap(), Title::Keep, true);
        assert_eq!(written(&doc, 0), "/** @uniqueItems */\n");
    }

    #[test]
    fn implied_ranges() {
        assert_eq!(implied_bounds("uint8"), Some((0, 255)));
        assert_eq!(implied_bounds("int8"), Some((-128, 127)));
        assert_eq!(implied_bounds("uint"), Some((0, u64::MAX as i128)));
        assert_eq!(implied_bounds("int128"), None);
        assert_eq!(implied_bounds("double"), None);
        assert_eq!(implied_bounds("email"), None);
    }
}
