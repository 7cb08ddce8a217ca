//! Shared schema helpers for the dialects: visiting subschemas, cleaning
//! the canonical schema, resolving local `$ref`s, finding recursion.
//!
//! Every walker here carries a depth guard ([`MAX_SCHEMA_DEPTH`]): the
//! schemas come from Rust types, but a hand-built or imported
//! [`ToolDefinition`](toolprism_core::ToolDefinition) may hold anything.

use serde_json::{Map, Value};

/// Subschemas nested deeper than this are an error, never a stack overflow.
pub(crate) const MAX_SCHEMA_DEPTH: usize = 128;

/// Keywords whose value is one subschema.
pub(crate) const SINGLE: &[&str] = &[
    "items",
    "additionalProperties",
    "contains",
    "propertyNames",
    "not",
    "if",
    "then",
    "else",
    "unevaluatedItems",
    "unevaluatedProperties",
    "additionalItems",
];
/// Keywords whose value is an array of subschemas.
pub(crate) const ARRAYS: &[&str] = &["prefixItems", "allOf", "anyOf", "oneOf"];
/// Keywords whose value maps names to subschemas.
pub(crate) const MAPS: &[&str] = &[
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
];

/// The formats JSON Schema 2020-12 defines; schemars also writes its own
/// (`uint32`, `int64`, `double`, …), which validators and clients do not know.
pub(crate) const STANDARD_FORMATS: &[&str] = &[
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

/// The schema grew deeper than [`MAX_SCHEMA_DEPTH`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TooDeep(pub(crate) String);

impl TooDeep {
    pub(crate) fn message(&self) -> String {
        format!(
            "the schema nests deeper than {MAX_SCHEMA_DEPTH} levels at `{}`",
            self.0
        )
    }
}

/// Visits every subschema object of `schema` (the schema itself first),
/// passing its path (`properties.a.items`), so `f` can edit it in place.
/// `f` runs before the children are visited, so it may rewrite them.
pub(crate) fn visit_mut(
    schema: &mut Value,
    f: &mut dyn FnMut(&str, &mut Map<String, Value>),
) -> Result<(), TooDeep> {
    visit_inner(schema, &mut String::new(), 0, f)
}

fn visit_inner(
    schema: &mut Value,
    path: &mut String,
    depth: usize,
    f: &mut dyn FnMut(&str, &mut Map<String, Value>),
) -> Result<(), TooDeep> {
    if depth > MAX_SCHEMA_DEPTH {
        return Err(TooDeep(path.clone()));
    }
    let Value::Object(map) = schema else {
        return Ok(());
    };
    f(path, map);
    let len = path.len();
    for (key, child) in map.iter_mut() {
        let key = key.as_str();
        if SINGLE.contains(&key) {
            push(path, key);
            visit_inner(child, path, depth + 1, f)?;
            path.truncate(len);
        } else if ARRAYS.contains(&key) {
            if let Value::Array(items) = child {
                for (i, item) in items.iter_mut().enumerate() {
                    push(path, &format!("{key}[{i}]"));
                    visit_inner(item, path, depth + 1, f)?;
                    path.truncate(len);
                }
            }
        } else if MAPS.contains(&key)
            && let Value::Object(entries) = child
        {
            for (name, item) in entries.iter_mut() {
                push(path, &format!("{key}.{name}"));
                visit_inner(item, path, depth + 1, f)?;
                path.truncate(len);
            }
        }
    }
    Ok(())
}

fn push(path: &mut String, segment: &str) {
    if !path.is_empty() {
        path.push('.');
    }
    path.push_str(segment);
}

/// A path for messages: `(root)` for the root.
pub(crate) fn shown(path: &str) -> String {
    if path.is_empty() {
        "(root)".to_owned()
    } else {
        path.to_owned()
    }
}

/// `$schema` removed from the root, and every `format` that JSON Schema
/// does not define removed (their numeric bounds stay).
pub(crate) fn clean(schema: &Value) -> Result<Value, TooDeep> {
    let mut out = schema.clone();
    if let Value::Object(root) = &mut out {
        root.remove("$schema");
    }
    visit_mut(&mut out, &mut |_, node| {
        if node
            .get("format")
            .and_then(Value::as_str)
            .is_some_and(|f| !STANDARD_FORMATS.contains(&f))
        {
            node.remove("format");
        }
    })?;
    Ok(out)
}

/// Resolves a local reference (`#`, `#/$defs/Name`, any JSON pointer into
/// the root). `None` for remote or dangling references.
pub(crate) fn resolve<'a>(root: &'a Value, reference: &str) -> Option<&'a Value> {
    let pointer = reference.strip_prefix('#')?;
    if pointer.is_empty() {
        return Some(root);
    }
    // JSON pointers in a URI fragment may be percent-encoded.
    root.pointer(&percent_decode(pointer)?)
}

fn percent_decode(s: &str) -> Option<String> {
    if !s.contains('%') {
        return Some(s.to_owned());
    }
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = s.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// Every `$ref` string in the schema.
pub(crate) fn refs(schema: &Value) -> Result<Vec<String>, TooDeep> {
    let mut out = Vec::new();
    let mut copy = schema.clone();
    visit_mut(&mut copy, &mut |_, node| {
        if let Some(r) = node.get("$ref").and_then(Value::as_str) {
            out.push(r.to_owned());
        }
    })?;
    Ok(out)
}

/// Whether some `$ref` can reach itself again (recursion). Walks the
/// reference graph from the root; references that do not resolve are
/// ignored here (each dialect reports them).
pub(crate) fn is_recursive(root: &Value) -> Result<bool, TooDeep> {
    // Nodes are the reference strings; the root is "#".
    let mut state: std::collections::HashMap<String, u8> = Default::default();
    // Iterative DFS: (reference, its outgoing references, next index).
    let mut stack: Vec<(String, Vec<String>, usize)> = Vec::new();
    let start = "#".to_owned();
    let edges = |r: &str| -> Result<Vec<String>, TooDeep> {
        match resolve(root, r) {
            Some(target) => {
                // The root's own subschemas include `$defs`; only refs that
                // are reachable matter, so skip the `$defs` table itself.
                let mut t = target.clone();
                if let Value::Object(m) = &mut t {
                    m.remove("$defs");
                    m.remove("definitions");
                }
                refs(&t)
            }
            None => Ok(Vec::new()),
        }
    };
    state.insert(start.clone(), 1);
    stack.push((start.clone(), edges(&start)?, 0));
    while let Some((_, out, next)) = stack.last_mut() {
        if *next >= out.len() {
            let (node, _, _) = stack.pop().expect("non-empty");
            state.insert(node, 2);
            continue;
        }
        let target = out[*next].clone();
        *next += 1;
        match state.get(&target) {
            Some(1) => return Ok(true),
            Some(_) => {}
            None => {
                state.insert(target.clone(), 1);
                let e = edges(&target)?;
                stack.push((target, e, 0));
            }
        }
    }
    Ok(false)
}

/// The JSON type names a schema's `type` allows (empty: not stated).
pub(crate) fn types(node: &Map<String, Value>) -> Vec<&str> {
    match node.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

/// Whether a schema accepts `null`, following local references.
pub(crate) fn accepts_null(schema: &Value, root: &Value) -> bool {
    let mut stack = vec![(schema, 0usize)];
    while let Some((node, depth)) = stack.pop() {
        if depth > MAX_SCHEMA_DEPTH {
            continue;
        }
        let node = match node {
            Value::Bool(b) => {
                if *b {
                    return true;
                }
                continue;
            }
            Value::Object(m) => m,
            _ => continue,
        };
        if let Some(r) = node.get("$ref").and_then(Value::as_str) {
            if let Some(target) = resolve(root, r) {
                stack.push((target, depth + 1));
            }
            continue;
        }
        let ts = types(node);
        let type_ok = ts.is_empty() || ts.contains(&"null");
        let enum_ok = node
            .get("enum")
            .and_then(Value::as_array)
            .is_none_or(|e| e.contains(&Value::Null));
        let const_ok = node.get("const").is_none_or(Value::is_null);
        if !(type_ok && enum_ok && const_ok) {
            continue;
        }
        let branches: Vec<&Value> = ["anyOf", "oneOf"]
            .iter()
            .filter_map(|k| node.get(*k).and_then(Value::as_array))
            .flatten()
            .collect();
        if branches.is_empty() {
            return true;
        }
        for b in branches {
            stack.push((b, depth + 1));
        }
    }
    false
}

/// Appends `extra` to a schema's description (creating it when missing).
pub(crate) fn append_description(node: &mut Map<String, Value>, extra: &str) {
    let text = match node.get("description").and_then(Value::as_str) {
        Some(d) if !d.is_empty() => format!("{d} ({extra})"),
        _ => format!("({extra})"),
    };
    node.insert("description".to_owned(), Value::String(text));
}

/// Keywords that describe a value and never constrain it.
pub(crate) const ANNOTATIONS: &[&str] = &[
    "title",
    "description",
    "default",
    "examples",
    "deprecated",
    "readOnly",
    "writeOnly",
    "$comment",
];

/// The object keywords a flattened parent shares with its branches.
const OBJECT_KEYWORDS: &[&str] = &[
    "properties",
    "required",
    "additionalProperties",
    "patternProperties",
    "minProperties",
    "maxProperties",
    "propertyNames",
];

/// serde's `flatten` of an enum gives an object with its own `properties`
/// *and* `oneOf`/`anyOf` branches (the variants). Dialects that close
/// objects (`additionalProperties: false`) or forbid keywords beside
/// `oneOf` need each branch to carry the parent's properties instead:
/// `{properties: P, oneOf: [B1, B2]}` becomes `{oneOf: [P∪B1, P∪B2]}`,
/// which accepts exactly the same values. Returns `Ok(false)` when the
/// node is not such an object, `Err` when a branch is not an object.
pub(crate) fn distribute(node: &mut Map<String, Value>, root: &Value) -> Result<bool, String> {
    let Some(key) = ["oneOf", "anyOf"]
        .into_iter()
        .find(|k| node.get(*k).is_some_and(Value::is_array))
    else {
        return Ok(false);
    };
    let has_object_keywords = OBJECT_KEYWORDS.iter().any(|k| node.contains_key(*k));
    if !has_object_keywords {
        return Ok(false);
    }
    let branches = node
        .get(key)
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let mut merged = Vec::with_capacity(branches.len());
    for (i, branch) in branches.iter().enumerate() {
        let mut b = match branch {
            Value::Object(b) => b.clone(),
            _ => return Err(format!("`{key}[{i}]` is not an object schema")),
        };
        if let Some(target) = b
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| resolve(root, r))
        {
            let Value::Object(t) = target.clone() else {
                return Err(format!(
                    "`{key}[{i}]` refers to a schema that is not an object"
                ));
            };
            b.remove("$ref");
            for (k, v) in t {
                b.entry(k).or_insert(v);
            }
        }
        let ts = types(&b);
        if !(ts == ["object"] || (ts.is_empty() && b.contains_key("properties"))) {
            return Err(format!("`{key}[{i}]` is not an object schema"));
        }
        b.insert("type".into(), "object".into());
        let mut props = node
            .get("properties")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        if let Some(Value::Object(own)) = b.remove("properties") {
            props.extend(own);
        }
        b.insert("properties".into(), Value::Object(props));
        let mut required: Vec<Value> = Vec::new();
        for r in [node.get("required"), b.get("required")]
            .into_iter()
            .flatten()
        {
            for n in r.as_array().into_iter().flatten() {
                if !required.contains(n) {
                    required.push(n.clone());
                }
            }
        }
        b.insert("required".into(), Value::Array(required));
        for k in OBJECT_KEYWORDS {
            if let Some(v) = node.get(*k) {
                b.entry(*k).or_insert_with(|| v.clone());
            }
        }
        merged.push(Value::Object(b));
    }
    for k in OBJECT_KEYWORDS {
        node.remove(*k);
    }
    node.remove("type");
    node.insert(key.to_owned(), Value::Array(merged));
    Ok(true)
}

/// Every local `$ref` replaced by a copy of what it points at (its own
/// keywords beside the `$ref` kept on top), and `$defs` dropped. The
/// schema must not be recursive (check [`is_recursive`] first); a
/// dangling or remote reference is an error.
pub(crate) fn inline_refs(schema: &Value) -> Result<Value, String> {
    let mut out = inline_node(schema, schema, 0, &mut String::new())?;
    if let Value::Object(m) = &mut out {
        m.remove("$defs");
        m.remove("definitions");
    }
    Ok(out)
}

fn inline_node(
    node: &Value,
    root: &Value,
    depth: usize,
    path: &mut String,
) -> Result<Value, String> {
    if depth > MAX_SCHEMA_DEPTH {
        return Err(TooDeep(path.clone()).message());
    }
    let Value::Object(map) = node else {
        return Ok(node.clone());
    };
    let mut out = Map::new();
    if let Some(r) = map.get("$ref").and_then(Value::as_str) {
        let target = resolve(root, r)
            .ok_or_else(|| format!("the reference `{r}` at `{}` does not resolve", shown(path)))?;
        if let Value::Object(t) = inline_node(target, root, depth + 1, path)? {
            out = t;
            out.remove("$defs");
            out.remove("definitions");
        }
    }
    let len = path.len();
    for (key, child) in map {
        let k = key.as_str();
        if k == "$ref" || (depth == 0 && (k == "$defs" || k == "definitions")) {
            continue;
        }
        let value = if SINGLE.contains(&k) {
            push(path, k);
            let v = inline_node(child, root, depth + 1, path)?;
            path.truncate(len);
            v
        } else if ARRAYS.contains(&k) && child.is_array() {
            let mut items = Vec::new();
            for (i, item) in child.as_array().into_iter().flatten().enumerate() {
                push(path, &format!("{k}[{i}]"));
                items.push(inline_node(item, root, depth + 1, path)?);
                path.truncate(len);
            }
            Value::Array(items)
        } else if MAPS.contains(&k) && child.is_object() {
            let mut entries = Map::new();
            for (name, item) in child.as_object().into_iter().flatten() {
                push(path, &format!("{k}.{name}"));
                entries.insert(name.clone(), inline_node(item, root, depth + 1, path)?);
                path.truncate(len);
            }
            Value::Object(entries)
        } else {
            child.clone()
        };
        out.insert(key.clone(), value);
    }
    Ok(Value::Object(out))
}

/// The scalar values a schema pins its instances to (`const`, `enum`).
fn pinned(node: &Map<String, Value>) -> Option<Vec<&Value>> {
    if let Some(c) = node.get("const") {
        return Some(vec![c]);
    }
    node.get("enum")
        .and_then(Value::as_array)
        .map(|e| e.iter().collect())
}

/// The JSON types a schema's instances can have: its `type`, else the
/// union of its branches' types, else the types of its pinned values;
/// empty when unknown (any type).
fn effective_types(node: &Map<String, Value>, depth: usize) -> Vec<&str> {
    let own = types(node);
    if !own.is_empty() || depth > 8 {
        return own;
    }
    for key in ["oneOf", "anyOf"] {
        if let Some(branches) = node.get(key).and_then(Value::as_array) {
            let mut out: Vec<&str> = Vec::new();
            for b in branches {
                let Some(m) = b.as_object() else {
                    return Vec::new();
                };
                let t = effective_types(m, depth + 1);
                if t.is_empty() {
                    return Vec::new();
                }
                for x in t {
                    if !out.contains(&x) {
                        out.push(x);
                    }
                }
            }
            return out;
        }
    }
    if let Some(vals) = pinned(node) {
        let mut out = Vec::new();
        for v in vals {
            let t = match v {
                Value::Null => "null",
                Value::Bool(_) => "boolean",
                Value::Number(n) if n.is_f64() => "number",
                Value::Number(_) => "integer",
                Value::String(_) => "string",
                Value::Array(_) => "array",
                Value::Object(_) => "object",
            };
            if !out.contains(&t) {
                out.push(t);
            }
        }
        return out;
    }
    Vec::new()
}

/// Whether no value can match both schemas (inlined, no `$ref`): their
/// types do not meet, their pinned values differ, or as objects one
/// requires a property the other pins to other values or does not allow.
/// Conservative: `false` means "could overlap".
pub(crate) fn disjoint(a: &Value, b: &Value) -> bool {
    let (Value::Object(a), Value::Object(b)) = (a, b) else {
        return false;
    };
    let (ta, tb) = (effective_types(a, 0), effective_types(b, 0));
    if !ta.is_empty() && !tb.is_empty() {
        let meets = ta.iter().any(|x| {
            tb.iter().any(|y| {
                x == y || (*x == "number" && *y == "integer") || (*x == "integer" && *y == "number")
            })
        });
        if !meets {
            return true;
        }
    }
    if let (Some(pa), Some(pb)) = (pinned(a), pinned(b))
        && !pa.iter().any(|v| pb.contains(v))
    {
        return true;
    }
    let object =
        |m: &Map<String, Value>| types(m).contains(&"object") || m.contains_key("properties");
    if object(a) && object(b) {
        let req = |m: &Map<String, Value>| -> Vec<String> {
            m.get("required")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect()
        };
        let prop =
            |m: &Map<String, Value>, k: &str| m.get("properties").and_then(|p| p.get(k)).cloned();
        let closed =
            |m: &Map<String, Value>| m.get("additionalProperties") == Some(&Value::Bool(false));
        for (x, y) in [(a, b), (b, a)] {
            for r in req(x) {
                match prop(y, &r) {
                    None if closed(y) => return true,
                    Some(py) => {
                        let both_required = req(y).contains(&r);
                        if both_required
                            && let Some(px) = prop(x, &r)
                            && disjoint(&px, &py)
                        {
                            return true;
                        }
                    }
                    None => {}
                }
            }
        }
    }
    false
}

/// Compact JSON for descriptions, cut at 200 characters.
pub(crate) fn compact(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() <= 200 {
        s
    } else {
        let mut cut: String = s.chars().take(200).collect();
        cut.push('…');
        cut
    }
}

/// Keywords that belong to one JSON type (moved into that type's branch
/// when a type array is split).
pub(crate) fn keyword_type(k: &str) -> Option<&'static str> {
    Some(match k {
        "minLength" | "maxLength" | "pattern" | "contentEncoding" | "contentMediaType" => "string",
        "minimum" | "maximum" | "exclusiveMinimum" | "exclusiveMaximum" | "multipleOf" => "number",
        "items" | "prefixItems" | "minItems" | "maxItems" | "uniqueItems" | "contains"
        | "additionalItems" | "unevaluatedItems" => "array",
        "properties"
        | "required"
        | "additionalProperties"
        | "patternProperties"
        | "minProperties"
        | "maxProperties"
        | "propertyNames"
        | "unevaluatedProperties"
        | "dependentRequired"
        | "dependentSchemas" => "object",
        _ => return None,
    })
}

/// `{"type": [A, B], …}` as `{"anyOf": [{"type": A, …A's keywords}, {"type": B, …}], …annotations}`.
pub(crate) fn split_type_array(node: &mut Map<String, Value>) {
    let Some(Value::Array(ts)) = node.get("type").cloned() else {
        return;
    };
    let ts: Vec<String> = ts
        .iter()
        .filter_map(|t| t.as_str().map(str::to_owned))
        .collect();
    if ts.len() == 1 {
        node.insert("type".into(), ts[0].clone().into());
        return;
    }
    node.remove("type");
    let mut branches = Vec::new();
    for t in &ts {
        let mut b = Map::new();
        b.insert("type".into(), t.clone().into());
        for (k, v) in node.iter() {
            if ANNOTATIONS.contains(&k.as_str()) {
                continue;
            }
            let applies = match keyword_type(k) {
                Some("number") => t == "number" || t == "integer",
                Some(kt) => kt == t,
                None => k == "format" && t != "null",
            };
            if applies {
                b.insert(k.clone(), v.clone());
            }
        }
        if let Some(Value::Array(e)) = node.get("enum") {
            let vals: Vec<Value> = e.iter().filter(|v| value_type_is(v, t)).cloned().collect();
            if vals.is_empty() {
                continue;
            }
            b.insert("enum".into(), Value::Array(vals));
        }
        if let Some(c) = node.get("const") {
            if !value_type_is(c, t) {
                continue;
            }
            b.insert("const".into(), c.clone());
        }
        branches.push(Value::Object(b));
    }
    node.retain(|k, _| ANNOTATIONS.contains(&k.as_str()));
    node.insert("anyOf".into(), Value::Array(branches));
}

/// Whether `v` is of JSON Schema type `t`.
fn value_type_is(v: &Value, t: &str) -> bool {
    match v {
        Value::Null => t == "null",
        Value::Bool(_) => t == "boolean",
        Value::Number(n) => t == "number" || (t == "integer" && (n.is_i64() || n.is_u64())),
        Value::String(_) => t == "string",
        Value::Array(_) => t == "array",
        Value::Object(_) => t == "object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn clean_drops_unknown_formats_only() {
        let s = json!({"$schema": "x", "type": "object", "properties": {
            "a": {"type": "integer", "format": "uint32", "minimum": 0},
            "b": {"type": "string", "format": "date-time"}}});
        let c = clean(&s).unwrap();
        assert_eq!(
            c,
            json!({"type": "object", "properties": {
            "a": {"type": "integer", "minimum": 0},
            "b": {"type": "string", "format": "date-time"}}})
        );
    }

    #[test]
    fn recursion_is_found_through_root_and_defs() {
        assert!(is_recursive(&json!({"properties": {"c": {"items": {"$ref": "#"}}}})).unwrap());
        assert!(
            is_recursive(&json!({"properties": {"a": {"$ref": "#/$defs/A"}},
            "$defs": {"A": {"properties": {"b": {"$ref": "#/$defs/B"}}}, "B": {"items": {"$ref": "#/$defs/A"}}}}))
            .unwrap()
        );
        assert!(
            !is_recursive(
                &json!({"properties": {"a": {"$ref": "#/$defs/A"}, "b": {"$ref": "#/$defs/A"}},
            "$defs": {"A": {"type": "string"}}})
            )
            .unwrap()
        );
    }

    #[test]
    fn null_acceptance_follows_refs_and_branches() {
        let root = json!({"$defs": {"N": {"type": "null"}}});
        assert!(accepts_null(&json!({"type": ["string", "null"]}), &root));
        assert!(accepts_null(
            &json!({"anyOf": [{"type": "string"}, {"$ref": "#/$defs/N"}]}),
            &root
        ));
        assert!(!accepts_null(&json!({"type": "string"}), &root));
        assert!(!accepts_null(
            &json!({"type": ["string", "null"], "enum": ["a"]}),
            &root
        ));
        assert!(accepts_null(&json!(true), &root));
        assert!(!accepts_null(
            &json!({"oneOf": [{"const": "a", "type": "string"}]}),
            &root
        ));
    }

    #[test]
    fn deep_schemas_are_an_error_not_a_crash() {
        let mut s = json!({"type": "string"});
        for _ in 0..(MAX_SCHEMA_DEPTH + 10) {
            s = json!({"items": s});
        }
        let e = clean(&s).unwrap_err();
        assert!(e.message().contains("deeper than 128"), "{}", e.message());
    }
}
