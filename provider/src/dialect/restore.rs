//! The reverse step: arguments a model sent in a dialect, back to what the
//! canonical input schema expects.

use serde_json::{Map, Value};

use toolprism_core::ArgumentDialect;

use super::Dialect;
use super::walk::{self, accepts_null, resolve};

/// Arguments deeper than this are left as they are below it (the registry
/// refuses arguments deeper than [`MAX_DEPTH`](toolprism_core::MAX_DEPTH) before this runs).
const MAX_RESTORE_DEPTH: usize = 160;
/// At most this many `$ref`/`anyOf` steps resolve one schema position.
const MAX_RESOLVE_STEPS: usize = 64;

/// Undoes what `dialect` changed in the arguments a model sends, so the
/// registry can validate and deserialize them against the canonical
/// `input_schema`.
///
/// Only the OpenAI dialects change anything: strict mode makes every
/// property required and the formerly optional ones nullable, so a model
/// sends `null` where the Rust type expects the field to be absent (a
/// `#[serde(default)] limit: u32` would fail on `null`). This removes a
/// property whose value is `null` exactly when the canonical schema makes
/// it optional **and** does not accept `null` for it; a `null` the
/// canonical schema accepts (an `Option` field) is kept, and so is every
/// other value. It follows `properties`, `items`, `prefixItems`, map
/// values, `allOf`, the `anyOf`/`oneOf` branch the value matches (by
/// type, `const`/`enum` tags and required properties; the first such
/// branch, as serde's untagged enums do) and local `$ref`s. Such a `null`
/// could never have passed the canonical schema, so removing it only
/// turns a certain `INVALID_ARGS` into the default the type declares.
///
/// Every other dialect returns `arguments` unchanged. Pure and total: it
/// never fails, and below the registry's depth limit it never recurses
/// unboundedly (a depth guard stops it).
///
/// ```
/// use toolprism::dialect::{restore_arguments, Dialect};
/// use serde_json::json;
///
/// let schema = json!({"type": "object", "required": ["a"], "properties": {
///     "a": {"type": "string"},
///     "b": {"type": "integer"},
///     "c": {"type": ["string", "null"]}}});
/// let sent = json!({"a": "x", "b": null, "c": null});
/// assert_eq!(restore_arguments(Dialect::OpenAi, &schema, sent.clone()), json!({"a": "x", "c": null}));
/// assert_eq!(restore_arguments(Dialect::Anthropic, &schema, sent.clone()), sent);
/// ```
pub fn restore_arguments(dialect: Dialect, input_schema: &Value, arguments: Value) -> Value {
    match dialect {
        Dialect::OpenAi | Dialect::OpenAiResponses => {
            let mut arguments = arguments;
            strip(&mut arguments, input_schema, input_schema, 0);
            arguments
        }
        _ => arguments,
    }
}

/// A dialect is an [`ArgumentDialect`] of its own [name](Dialect::name):
/// a call made with `CallOptions::with_dialect(Dialect::OpenAi)` has its
/// arguments passed through [`restore_arguments`], and the session log
/// records `"dialect":"openai"`.
///
/// ```
/// use toolprism::ArgumentDialect;
/// use toolprism::dialect::Dialect;
/// use serde_json::json;
///
/// let schema = json!({"type": "object", "properties": {"b": {"type": "integer"}}});
/// assert_eq!(ArgumentDialect::name(&Dialect::OpenAi), "openai");
/// assert_eq!(Dialect::OpenAi.restore(&schema, json!({"b": null})), json!({}));
/// ```
impl ArgumentDialect for Dialect {
    fn name(&self) -> &str {
        Dialect::name(*self)
    }

    fn restore(&self, input_schema: &Value, arguments: Value) -> Value {
        restore_arguments(*self, input_schema, arguments)
    }
}

fn strip(value: &mut Value, schema: &Value, root: &Value, depth: usize) {
    if depth > MAX_RESTORE_DEPTH {
        return;
    }
    match value {
        Value::Object(object) => {
            let parts = effective(schema, &*object, root);
            strip_object(object, &parts, root, depth);
        }
        Value::Array(items) => {
            let parts = effective(schema, &Value::Array(Vec::new()), root);
            for (i, item) in items.iter_mut().enumerate() {
                if let Some(s) = item_schema(&parts, i) {
                    strip(item, s, root, depth + 1);
                }
            }
        }
        _ => {}
    }
}

fn strip_object(
    object: &mut Map<String, Value>,
    parts: &[&Map<String, Value>],
    root: &Value,
    depth: usize,
) {
    let required = |k: &str| {
        parts.iter().any(|p| {
            p.get("required")
                .and_then(Value::as_array)
                .is_some_and(|r| r.iter().any(|n| n.as_str() == Some(k)))
        })
    };
    let property = |k: &str| parts.iter().find_map(|p| p.get("properties")?.get(k));
    let introduced: Vec<String> = object
        .iter()
        .filter(|(k, v)| {
            v.is_null() && !required(k) && property(k).is_some_and(|s| !accepts_null(s, root))
        })
        .map(|(k, _)| k.clone())
        .collect();
    for k in introduced {
        object.remove(&k);
    }
    for (k, v) in object.iter_mut() {
        let sub = property(k).or_else(|| {
            parts
                .iter()
                .find_map(|p| p.get("additionalProperties").filter(|s| s.is_object()))
        });
        if let Some(s) = sub {
            strip(v, s, root, depth + 1);
        }
    }
}

fn item_schema<'a>(parts: &[&'a Map<String, Value>], i: usize) -> Option<&'a Value> {
    for p in parts {
        if let Some(s) = p
            .get("prefixItems")
            .and_then(Value::as_array)
            .and_then(|a| a.get(i))
        {
            return Some(s);
        }
    }
    parts
        .iter()
        .find_map(|p| p.get("items").filter(|s| s.is_object()))
}

/// The schema objects whose keywords all apply to `value` at this
/// position: `schema` itself, what its `$ref` and `allOf` point at, and
/// the first `anyOf`/`oneOf` branch `value` matches.
fn effective<'a, V: ValueView>(
    schema: &'a Value,
    value: &V,
    root: &'a Value,
) -> Vec<&'a Map<String, Value>> {
    let mut parts = Vec::new();
    let mut work = vec![schema];
    let mut steps = 0;
    while let Some(s) = work.pop() {
        steps += 1;
        if steps > MAX_RESOLVE_STEPS {
            break;
        }
        let Value::Object(node) = s else { continue };
        parts.push(node);
        if let Some(target) = node
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| resolve(root, r))
        {
            work.push(target);
        }
        if let Some(all) = node.get("allOf").and_then(Value::as_array) {
            work.extend(all.iter());
        }
        for key in ["anyOf", "oneOf"] {
            if let Some(branches) = node.get(key).and_then(Value::as_array)
                && let Some(b) = branches.iter().find(|b| matches(b, value, root, 0))
            {
                work.push(b);
            }
        }
    }
    parts
}

/// What branch selection needs to know about a value.
trait ValueView {
    fn kind(&self) -> &'static str;
    fn scalar(&self) -> Option<&Value>;
    fn object(&self) -> Option<&Map<String, Value>>;
}

impl ValueView for Value {
    fn kind(&self) -> &'static str {
        kind(self)
    }
    fn scalar(&self) -> Option<&Value> {
        (!self.is_object() && !self.is_array()).then_some(self)
    }
    fn object(&self) -> Option<&Map<String, Value>> {
        self.as_object()
    }
}

impl ValueView for Map<String, Value> {
    fn kind(&self) -> &'static str {
        "object"
    }
    fn scalar(&self) -> Option<&Value> {
        None
    }
    fn object(&self) -> Option<&Map<String, Value>> {
        Some(self)
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(n) if n.as_f64().is_some_and(|f| f.fract() == 0.0) => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Whether `value` may belong to `branch`: its type, its `const`/`enum`,
/// and, for an object, its tag properties, required properties and closed
/// property set agree. Nulls the dialect may have added are tolerated.
fn matches<V: ValueView>(branch: &Value, value: &V, root: &Value, depth: usize) -> bool {
    if depth > MAX_RESOLVE_STEPS {
        return true;
    }
    let node = match branch {
        Value::Bool(b) => return *b,
        Value::Object(node) => node,
        _ => return false,
    };
    if let Some(target) = node
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| resolve(root, r))
        && !matches(target, value, root, depth + 1)
    {
        return false;
    }
    let ts = walk::types(node);
    let k = value.kind();
    if !ts.is_empty()
        && !ts
            .iter()
            .any(|t| *t == k || (*t == "number" && k == "integer"))
    {
        return false;
    }
    if let Some(scalar) = value.scalar() {
        if node.get("const").is_some_and(|c| c != scalar) {
            return false;
        }
        if node
            .get("enum")
            .and_then(Value::as_array)
            .is_some_and(|e| !e.contains(scalar))
        {
            return false;
        }
    }
    if let Some(object) = value.object() {
        let props = node.get("properties").and_then(Value::as_object);
        if let Some(req) = node.get("required").and_then(Value::as_array)
            && req
                .iter()
                .filter_map(Value::as_str)
                .any(|r| !object.contains_key(r))
        {
            return false;
        }
        if let Some(props) = props {
            for (name, p) in props {
                let Some(v) = object.get(name) else { continue };
                if v.is_null() {
                    continue;
                }
                let tag = tag_schema(p, root);
                if let Some(c) = tag.and_then(|t| t.get("const"))
                    && c != v
                {
                    return false;
                }
                if let Some(e) = tag.and_then(|t| t.get("enum")).and_then(Value::as_array)
                    && !e.contains(v)
                {
                    return false;
                }
            }
        }
        if node.get("additionalProperties") == Some(&Value::Bool(false))
            && object
                .keys()
                .any(|key| !props.is_some_and(|p| p.contains_key(key)))
        {
            return false;
        }
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(bs) = node.get(key).and_then(Value::as_array)
            && !bs.iter().any(|b| matches(b, value, root, depth + 1))
        {
            return false;
        }
    }
    if let Some(all) = node.get("allOf").and_then(Value::as_array)
        && !all.iter().all(|b| matches(b, value, root, depth + 1))
    {
        return false;
    }
    true
}

/// A property schema, through one `$ref`, when it pins a value.
fn tag_schema<'a>(p: &'a Value, root: &'a Value) -> Option<&'a Map<String, Value>> {
    let node = p.as_object()?;
    match node.get("$ref").and_then(Value::as_str) {
        Some(r) => resolve(root, r)?.as_object(),
        None => Some(node),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn openai(schema: &Value, v: Value) -> Value {
        restore_arguments(Dialect::OpenAi, schema, v)
    }

    #[test]
    fn strips_through_branches_refs_and_items() {
        let schema = json!({
            "type": "object",
            "properties": {
                "list": {"type": "array", "items": {"$ref": "#/$defs/Row"}},
                "shape": {"oneOf": [
                    {"type": "object", "properties": {"kind": {"const": "a", "type": "string"}, "n": {"type": "integer"}}, "required": ["kind"]},
                    {"type": "object", "properties": {"kind": {"const": "b", "type": "string"}, "n": {"type": ["integer", "null"]}}, "required": ["kind"]}
                ]},
                "map": {"type": "object", "additionalProperties": {"$ref": "#/$defs/Row"}}
            },
            "$defs": {"Row": {"type": "object", "properties": {"x": {"type": "integer"}, "y": {"type": "string"}}, "required": ["x"]}}
        });
        let sent = json!({
            "list": [{"x": 1, "y": null}, {"x": 2, "y": "s"}],
            "shape": {"kind": "a", "n": null},
            "map": {"k": {"x": 3, "y": null}}
        });
        assert_eq!(
            openai(&schema, sent),
            json!({"list": [{"x": 1}, {"x": 2, "y": "s"}], "shape": {"kind": "a"}, "map": {"k": {"x": 3}}})
        );
        // Branch `b` accepts null for `n`: kept.
        let sent = json!({"shape": {"kind": "b", "n": null}});
        assert_eq!(openai(&schema, sent.clone()), sent);
    }

    #[test]
    fn required_nulls_and_unknown_keys_are_left_for_validation() {
        let schema =
            json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]});
        let sent = json!({"a": null, "zzz": null});
        assert_eq!(openai(&schema, sent.clone()), sent);
    }

    #[test]
    fn root_recursion_is_followed() {
        let schema = json!({"type": "object", "properties": {
            "v": {"type": "integer"},
            "next": {"anyOf": [{"$ref": "#"}, {"type": "null"}]}}, "required": []});
        let sent = json!({"v": null, "next": {"v": 1, "next": {"v": null, "next": null}}});
        assert_eq!(
            openai(&schema, sent),
            json!({"next": {"v": 1, "next": {"next": null}}})
        );
    }

    #[test]
    fn hostile_depth_does_not_overflow() {
        let schema =
            json!({"type": "object", "properties": {"a": {"$ref": "#"}, "b": {"type": "integer"}}});
        let mut v = json!({"b": null});
        for _ in 0..100_000 {
            // Not `json!`, which would serialize `v` recursively.
            let mut m = Map::new();
            m.insert("a".into(), v);
            m.insert("b".into(), Value::Null);
            v = Value::Object(m);
        }
        let out = openai(&schema, v);
        assert!(out.get("b").is_none());
        // serde_json drops deep values recursively; leak this one on purpose.
        std::mem::forget(out);
    }

    #[test]
    fn self_referencing_refs_terminate() {
        let schema = json!({"$defs": {"A": {"$ref": "#/$defs/A"}}, "type": "object",
            "properties": {"x": {"$ref": "#/$defs/A"}, "y": {"anyOf": [{"$ref": "#/$defs/A"}]}}});
        let sent = json!({"x": {"q": null}, "y": [null]});
        assert_eq!(openai(&schema, sent.clone()), sent);
    }
}
