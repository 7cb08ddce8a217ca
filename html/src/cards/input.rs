//! A call's arguments: an object as a grid of keys and values, a few short
//! ones on one line, text that was not JSON as sent, anything else as
//! pretty JSON.

use serde_json::Value;

use super::blocks::{Budget, not_drawn, text_block};
use super::{Limits, line_text};

/// JSON nested deeper than this is not drawn (it cannot come from a log:
/// serde_json reads no deeper).
pub(crate) const MAX_JSON_DEPTH: usize = 128;

/// A call's input: an object as a grid of its keys and values (strings
/// as text, numbers and booleans as themselves, long or multi-line
/// strings and nested values as blocks); a string (arguments that were not
/// JSON) as the text sent; anything else as JSON.
pub(super) fn input_block(out: &mut String, input: &Value, lim: Limits) {
    let map = match input {
        Value::Object(map) => map,
        // Arguments that were not JSON arrive as their text: shown as
        // sent, never as a JSON string with its quotes and escapes.
        Value::String(text) => return text_block(out, "json", text, lim),
        _ => return json_block(out, input, lim),
    };
    if map.is_empty() {
        out.push_str("<p class=\"none\">no arguments</p>");
        return;
    }
    out.push_str("<dl class=\"kv\">");
    let mut budget = Budget::new(lim);
    for (i, (key, value)) in map.iter().enumerate() {
        if !budget.take_row(key.len()) {
            out.push_str("</dl>");
            not_drawn(out, map.len() - i, ("argument", "arguments"), lim);
            return;
        }
        out.push_str("<dt>");
        line_text(out, key);
        out.push_str("</dt><dd>");
        match value {
            Value::String(s) if s.len() > 200 || s.contains('\n') => {
                text_block(out, "json", s, lim)
            }
            Value::Array(_) | Value::Object(_) => json_block(out, value, lim),
            _ => scalar(out, None, value),
        }
        out.push_str("</dd>");
    }
    out.push_str("</dl>");
}

/// Whether an argument fits on a line: a short key and a number, a
/// boolean, null or a short one-line string.
pub(super) fn is_short(key: &str, value: &Value) -> bool {
    key.len() <= 40
        && match value {
            Value::String(s) => s.len() <= 80 && !s.contains('\n'),
            Value::Number(_) | Value::Bool(_) | Value::Null => true,
            Value::Array(_) | Value::Object(_) => false,
        }
}

/// A scalar argument, after its key when it has one: a string as its
/// text, anything else as JSON (`<code class="arg lit"><b>limit</b> 5</code>`).
pub(super) fn scalar(out: &mut String, key: Option<&str>, value: &Value) {
    out.push_str(match value {
        Value::String(_) => "<code class=\"arg s\">",
        _ => "<code class=\"arg lit\">",
    });
    if let Some(key) = key {
        out.push_str("<b>");
        line_text(out, key);
        out.push_str("</b> ");
    }
    match value {
        Value::String(s) => line_text(out, s),
        other => line_text(out, &other.to_string()),
    }
    out.push_str("</code>");
}

/// A JSON value, pretty-printed as text.
fn json_block(out: &mut String, value: &Value, lim: Limits) {
    if depth_exceeds(value, MAX_JSON_DEPTH) {
        out.push_str("<p class=\"cut\">The input nests deeper than ");
        out.push_str(&MAX_JSON_DEPTH.to_string());
        out.push_str(" levels: not drawn.</p>");
        return;
    }
    let text = serde_json::to_string_pretty(value).unwrap_or_else(|e| e.to_string());
    text_block(out, "json", &text, lim);
}

/// Whether `value` nests deeper than `max`, checked without recursion.
pub(crate) fn depth_exceeds(value: &Value, max: usize) -> bool {
    let mut stack = vec![(value, 1usize)];
    while let Some((v, depth)) = stack.pop() {
        if depth > max {
            return true;
        }
        match v {
            Value::Array(items) => stack.extend(items.iter().map(|i| (i, depth + 1))),
            Value::Object(map) => stack.extend(map.values().map(|i| (i, depth + 1))),
            _ => {}
        }
    }
    false
}
