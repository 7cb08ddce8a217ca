//! Shared schema helpers for the dialects: visiting subschemas, cleaning
//! the canonical schema, resolving local `$ref`s, finding recursion.
//!
//! Every walker here carries a depth guard ([`MAX_SCHEMA_DEPTH`]): the
//! schemas come from Rust types, but a hand-built [`ToolDefinition`]
//! (crate::ToolDefinition) may hold anything.

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
