//! Values across the boundary as lossless JSON, both ways.

pub(crate) mod from_json;
pub(crate) mod path;
pub(crate) mod to_json;

use rquickjs::Atom;
use serde_json::Value as Json;

/// The deepest nesting of arrays and objects accepted either way: 127
/// levels, toolprism's `MAX_DEPTH` (the deepest JSON `serde_json` reads back).
pub const MAX_DEPTH: usize = 127;

/// The text of a property key, `None` when it holds a lone UTF-16
/// surrogate (which has no UTF-8 form).
///
/// Goes through a JavaScript string: `Atom::to_string` stops at the first
/// NUL and does not check UTF-8.
pub(crate) fn key_text(key: &Atom<'_>) -> Option<String> {
    key.to_js_string().ok()?.to_string().ok()
}

/// Drops `value` without recursion: a value the host returned may be nested
/// deeper than the stack can take in `serde_json`'s recursive `Drop`.
pub(crate) fn drop_deep(value: Json) {
    let mut stack = vec![value];
    while let Some(value) = stack.pop() {
        match value {
            Json::Array(items) => stack.extend(items),
            Json::Object(map) => stack.extend(map.into_iter().map(|(_, v)| v)),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drops_a_value_deeper_than_the_stack() {
        let mut deep = Json::Null;
        for _ in 0..1_000_000 {
            deep = Json::Array(vec![deep]);
        }
        drop_deep(deep);
    }
}
