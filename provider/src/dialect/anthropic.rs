//! Anthropic Messages API tools: the canonical schema as is, and the
//! strict variant (strict tool use, grammar-constrained sampling).
//!
//! # `anthropic`
//!
//! `{name, description, input_schema}` (Anthropic API reference,
//! *Messages → tools*: `input_schema` is JSON Schema 2020-12 with an
//! object root). The canonical input schema, cleaned as for
//! [MCP](super::mcp) (no `$schema`, no schemars-only formats). Never
//! refused (the object root is checked by [`definition`](super::definition)).
//!
//! # `anthropic-strict`
//!
//! `{name, description, input_schema, strict: true}`. Rules from
//! Anthropic's *Structured outputs → JSON Schema limitations* and *Strict
//! tool use* pages, and from the official Python SDK's
//! `anthropic.transform_schema` (2.10.0), the transform Anthropic applies
//! to schemas for this mode. The strict view is a fixed point of that
//! transform (tested), so the SDK would send it unchanged.
//!
//! - **Objects closed.** Every object gets `additionalProperties: false`
//!   and a `properties` map. Optional properties stay optional (strict
//!   tool use does not require every property), so no `null` is added and
//!   nothing needs [restoring](super::restore_arguments).
//! - **One `type` per schema.** Type arrays (`Option<T>` is
//!   `["T", "null"]`) become `anyOf` of single types, each branch keeping
//!   the keywords of its type; `oneOf` becomes `anyOf`. Beside an `enum`
//!   or `const` (primitive values only) the `type` is left out, as the SDK
//!   does.
//! - **`$ref` alone.** Local `$ref`/`$defs` are kept; a `$ref` with
//!   annotations beside it becomes `anyOf: [{"$ref": …}]`.
//! - **Loosened, with a note** (moved into the description, where the
//!   model still reads them; the registry still checks them): numeric
//!   bounds (`minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum`,
//!   `multipleOf`), string lengths and `pattern`, `maxItems`, `minItems`
//!   other than 0 or 1, `uniqueItems`, formats other than `date-time`,
//!   `time`, `date`, `duration`, `email`, `hostname`, `uri`, `ipv4`,
//!   `ipv6`, `uuid`, and `default`/`examples`.
//! - **Refused** (use `anthropic` for such tools): recursion ("recursive
//!   schemas are not supported"), maps and open objects
//!   (`additionalProperties` other than `false`), any JSON
//!   (`serde_json::Value`: strict mode needs a type), tuples
//!   (`prefixItems`), composition keywords other than `anyOf`/`allOf`, an
//!   `enum` of non-primitive values, a flattened enum at the root, and a
//!   single tool over the per-request limits: 24 optional parameters and
//!   16 parameters with union types (`anyOf` or type arrays) across all
//!   strict tools. [`definitions`](super::definitions) also notes when
//!   the tools together pass those limits or the 20 strict tools a
//!   request may carry.

use serde_json::{Map, Value, json};

use super::Projected;

use super::walk::{self, ANNOTATIONS, append_description, compact, split_type_array, types};
use toolprism_core::ToolDefinition;

/// The string formats strict tool use supports.
pub(crate) const STRICT_FORMATS: &[&str] = &[
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "uri",
    "ipv4",
    "ipv6",
    "uuid",
];

/// Strict tools per request.
pub(crate) const MAX_STRICT_TOOLS: usize = 20;
/// Optional parameters across all strict tools of a request.
pub(crate) const MAX_OPTIONAL: usize = 24;
/// Parameters with union types across all strict tools of a request.
pub(crate) const MAX_UNIONS: usize = 16;

/// Refused outright in strict mode.
const REFUSED: &[&str] = &[
    "not",
    "if",
    "then",
    "else",
    "dependentRequired",
    "dependentSchemas",
    "patternProperties",
    "propertyNames",
    "unevaluatedProperties",
    "unevaluatedItems",
    "contains",
    "prefixItems",
    "additionalItems",
    "$dynamicRef",
];

/// The `anthropic` tool: the canonical schema, cleaned.
pub(crate) fn tool(def: &ToolDefinition) -> Result<Projected, Vec<String>> {
    let schema = walk::clean(&def.input_schema).map_err(|e| vec![e.message()])?;
    Ok(Projected::new(
        json!({"name": def.name, "description": def.description, "input_schema": schema}),
        Vec::new(),
    ))
}

/// The `anthropic-strict` tool, or every reason it cannot be expressed.
pub(crate) fn strict_tool(def: &ToolDefinition) -> Result<Projected, Vec<String>> {
    let (schema, notes) = strict_schema(&def.input_schema)?;
    Ok(Projected::new(
        json!({"name": def.name, "description": def.description, "input_schema": schema, "strict": true}),
        notes,
    ))
}

/// The strict view of an input schema and its notes.
pub(crate) fn strict_schema(input_schema: &Value) -> Result<(Value, Vec<String>), Vec<String>> {
    let original = walk::clean(input_schema).map_err(|e| vec![e.message()])?;
    if walk::is_recursive(&original).map_err(|e| vec![e.message()])? {
        return Err(vec![
            "the type is recursive, and strict tool use does not support recursive schemas (use `anthropic`)".into(),
        ]);
    }
    let mut cx = Cx {
        root: &original,
        reasons: Vec::new(),
        moved: std::collections::BTreeMap::new(),
    };
    let mut out = original.clone();
    if let Value::Object(root) = &mut out {
        if ["oneOf", "anyOf"].iter().any(|k| root.contains_key(*k)) {
            cx.reasons.push(
                "the root combines its properties with enum variants (a `#[serde(flatten)]` enum); the root must be a plain object".into(),
            );
        }
        if let Some(Value::Object(defs)) = root.get_mut("$defs") {
            for (name, d) in defs.iter_mut() {
                cx.node(d, &format!("$defs.{name}"), 0);
            }
        }
    }
    cx.node(&mut out, "", 0);
    let (optional, unions) = count(&out);
    if optional > MAX_OPTIONAL {
        cx.reasons.push(format!(
            "it has {optional} optional parameters, and a request may have at most {MAX_OPTIONAL} across all strict tools"
        ));
    }
    if unions > MAX_UNIONS {
        cx.reasons.push(format!(
            "it has {unions} parameters with union types (`anyOf`, `Option`), and a request may have at most {MAX_UNIONS} across all strict tools"
        ));
    }
    if !cx.reasons.is_empty() {
        return Err(cx.reasons);
    }
    let mut notes = Vec::new();
    if !cx.moved.is_empty() {
        let list: Vec<String> = cx
            .moved
            .iter()
            .map(|(k, paths)| format!("`{k}` at {}", paths.join(", ")))
            .collect();
        notes.push(format!(
            "loosened: moved into descriptions (strict tool use does not support them; the registry still checks them): {}",
            list.join("; ")
        ));
    }
    Ok((out, notes))
}

/// Optional parameters and parameters with union types in a strict view.
pub(crate) fn count(schema: &Value) -> (usize, usize) {
    let mut optional = 0;
    let mut unions = 0;
    let mut copy = schema.clone();
    let _ = walk::visit_mut(&mut copy, &mut |_, node| {
        if let Some(p) = node.get("properties").and_then(Value::as_object) {
            let required: Vec<&str> = node
                .get("required")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            optional += p.keys().filter(|k| !required.contains(&k.as_str())).count();
        }
        if node.contains_key("anyOf") || node.get("type").is_some_and(Value::is_array) {
            unions += 1;
        }
    });
    (optional, unions)
}

/// Notes on strict tools that together pass a per-request limit.
pub(crate) fn request_limits(tools: &[Value]) -> Vec<String> {
    let mut out = Vec::new();
    if tools.len() > MAX_STRICT_TOOLS {
        out.push(format!(
            "{} strict tools: a request may carry at most {MAX_STRICT_TOOLS}; send a subset",
            tools.len()
        ));
    }
    let (mut optional, mut unions) = (0, 0);
    for t in tools {
        let (o, u) = count(&t["input_schema"]);
        optional += o;
        unions += u;
    }
    if optional > MAX_OPTIONAL {
        out.push(format!(
            "the strict tools have {optional} optional parameters together: a request may have at most {MAX_OPTIONAL}; send a subset"
        ));
    }
    if unions > MAX_UNIONS {
        out.push(format!(
            "the strict tools have {unions} parameters with union types together: a request may have at most {MAX_UNIONS}; send a subset"
        ));
    }
    out
}

struct Cx<'a> {
    root: &'a Value,
    reasons: Vec<String>,
    moved: std::collections::BTreeMap<String, Vec<String>>,
}

impl Cx<'_> {
    fn node(&mut self, schema: &mut Value, path: &str, depth: usize) {
        let shown = walk::shown(path);
        if depth > walk::MAX_SCHEMA_DEPTH {
            self.reasons.push(walk::TooDeep(path.to_owned()).message());
            return;
        }
        let node = match schema {
            Value::Bool(true) => {
                self.reasons.push(format!(
                    "`{shown}` accepts any JSON value (`serde_json::Value`), and strict tool use needs a type"
                ));
                return;
            }
            Value::Bool(false) => {
                self.reasons
                    .push(format!("`{shown}` accepts no value at all"));
                return;
            }
            Value::Object(m) => m,
            _ => return,
        };
        if let Some(v) = node.remove("oneOf") {
            if node.contains_key("anyOf") {
                self.reasons
                    .push(format!("`{shown}` has both `oneOf` and `anyOf`"));
                return;
            }
            node.insert("anyOf".into(), v);
        }
        if !path.is_empty()
            && let Err(e) = walk::distribute(node, self.root)
        {
            self.reasons.push(format!("`{shown}`: {e}"));
            return;
        }
        for k in REFUSED {
            if node.contains_key(*k) {
                let what = match *k {
                    "prefixItems" | "additionalItems" => "is a tuple (`prefixItems`)".to_owned(),
                    other => format!("uses `{other}`"),
                };
                self.reasons.push(format!(
                    "`{shown}` {what}, which strict tool use does not support"
                ));
            }
        }
        if node.contains_key("$ref") && node.keys().any(|k| k != "$ref" && k != "$defs") {
            let r = node.remove("$ref").expect("present");
            let rest: Vec<String> = node
                .keys()
                .filter(|k| !ANNOTATIONS.contains(&k.as_str()) && *k != "$defs")
                .cloned()
                .collect();
            if !rest.is_empty() {
                self.reasons.push(format!(
                    "`{shown}` has keywords beside `$ref`: {}",
                    rest.join(", ")
                ));
                return;
            }
            node.insert("anyOf".into(), json!([{"$ref": r}]));
        }
        split_type_array(node);
        if let Some(e) = node.get("enum").and_then(Value::as_array)
            && e.iter().any(|v| v.is_object() || v.is_array())
        {
            self.reasons.push(format!(
                "`{shown}` has an `enum` of objects or arrays; only primitive values are supported"
            ));
        }
        if node
            .get("const")
            .is_some_and(|c| c.is_object() || c.is_array())
        {
            self.reasons.push(format!(
                "`{shown}` has a `const` object or array; only primitive values are supported"
            ));
        }
        if node.contains_key("enum") || node.contains_key("const") {
            node.remove("type");
        }
        let is_object = types(node).contains(&"object");
        if is_object {
            match node.get("additionalProperties") {
                None | Some(Value::Bool(false)) => {}
                Some(Value::Bool(true)) => self.reasons.push(format!(
                    "`{shown}` is an open object (`additionalProperties: true`); only `false` is supported"
                )),
                Some(_) => self.reasons.push(format!(
                    "`{shown}` is a map (`additionalProperties` with a schema: a `HashMap`, `BTreeMap` or flattened map); only `additionalProperties: false` is supported"
                )),
            }
            node.insert("additionalProperties".into(), false.into());
            let mut props = match node.remove("properties") {
                Some(Value::Object(p)) => p,
                _ => Map::new(),
            };
            for (name, p) in props.iter_mut() {
                self.node(p, &join(path, &format!("properties.{name}")), depth + 1);
            }
            node.insert("properties".into(), Value::Object(props));
        }
        if types(node).contains(&"array")
            && let Some(items) = node.get_mut("items")
        {
            self.node(items, &join(path, "items"), depth + 1);
        }
        for k in ["anyOf", "allOf"] {
            if let Some(Value::Array(bs)) = node.get_mut(k) {
                for (i, b) in bs.iter_mut().enumerate() {
                    self.node(b, &join(path, &format!("{k}[{i}]")), depth + 1);
                }
            }
        }
        // What stays: as `anthropic.transform_schema` keeps it.
        let ty = node.get("type").and_then(Value::as_str).map(str::to_owned);
        let mut moved = Vec::new();
        let keys: Vec<String> = node.keys().cloned().collect();
        for k in keys {
            let keep = match k.as_str() {
                "type" | "description" | "title" | "anyOf" | "allOf" | "enum" | "const"
                | "$ref" => true,
                "$defs" => path.is_empty(),
                "properties" | "additionalProperties" | "required" => {
                    ty.as_deref() == Some("object")
                }
                "items" => ty.as_deref() == Some("array"),
                "minItems" => {
                    ty.as_deref() == Some("array")
                        && matches!(node.get("minItems").and_then(Value::as_u64), Some(0 | 1))
                }
                "format" => {
                    ty.as_deref() == Some("string")
                        && node
                            .get("format")
                            .and_then(Value::as_str)
                            .is_some_and(|f| STRICT_FORMATS.contains(&f))
                }
                other => REFUSED.contains(&other),
            };
            if keep {
                continue;
            }
            let v = node.remove(&k).expect("present");
            moved.push(format!("{k}: {}", compact(&v)));
            self.moved.entry(k).or_default().push(shown.clone());
        }
        if !moved.is_empty() {
            append_description(node, &moved.join(", "));
        }
    }
}

fn join(path: &str, segment: &str) -> String {
    if path.is_empty() {
        segment.to_owned()
    } else {
        format!("{path}.{segment}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_split_and_bounds_move() {
        let s = json!({"type": "object", "required": ["a"], "properties": {
            "a": {"type": "integer", "minimum": 0, "maximum": 9},
            "b": {"type": ["string", "null"], "maxLength": 1, "description": "B."},
            "c": {"type": "string", "enum": ["x", "y"]}}});
        let (out, notes) = strict_schema(&s).unwrap();
        assert_eq!(out["additionalProperties"], json!(false));
        assert_eq!(out["required"], json!(["a"]));
        assert_eq!(
            out["properties"]["a"],
            json!({"type": "integer", "description": "(maximum: 9, minimum: 0)"})
        );
        assert_eq!(
            out["properties"]["b"],
            json!({"description": "B.", "anyOf": [{"type": "string", "description": "(maxLength: 1)"}, {"type": "null"}]})
        );
        assert_eq!(out["properties"]["c"], json!({"enum": ["x", "y"]}));
        assert!(notes[0].contains("`maximum` at properties.a"), "{notes:?}");
    }

    #[test]
    fn maps_recursion_and_any_json_are_refused() {
        let r = strict_schema(&json!({"type": "object", "properties": {"n": {"$ref": "#"}}}))
            .unwrap_err();
        assert!(r[0].contains("recursive"), "{r:?}");
        let r = strict_schema(&json!({"type": "object", "properties": {
            "m": {"type": "object", "additionalProperties": {"type": "string"}}, "v": true}}))
        .unwrap_err();
        assert_eq!(r.len(), 2, "{r:?}");
    }

    #[test]
    fn per_request_limits_refuse_one_tool_and_note_many() {
        let mut props = Map::new();
        for i in 0..25 {
            props.insert(format!("p{i}"), json!({"type": "string"}));
        }
        let r = strict_schema(&json!({"type": "object", "properties": props})).unwrap_err();
        assert!(r[0].contains("25 optional parameters"), "{r:?}");
        let tool =
            json!({"input_schema": {"type": "object", "properties": {"a": {"type": "string"}}}});
        let notes = request_limits(&vec![tool; 25]);
        assert_eq!(notes.len(), 2, "{notes:?}");
    }
}
