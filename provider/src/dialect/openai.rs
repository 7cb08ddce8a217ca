//! OpenAI function tools, in strict mode wherever strict mode can say what
//! the canonical schema says.
//!
//! Two request shapes carry the same `parameters`:
//! `Dialect::OpenAi` (`{"type":"function","function":{name, description,
//! parameters, strict}}`) and `Dialect::OpenAiResponses` (`{"type":"function", name,
//! description, parameters, strict}`) (OpenAI API reference, *Chat
//! Completions → tools* and *Responses → tools → Function*).
//!
//! # Rules of the strict view, and where each comes from
//!
//! OpenAI, *Structured Outputs → Supported schemas* (the rules strict
//! function calling applies to `parameters`):
//!
//! - **Every object closed and fully required.** `additionalProperties:
//!   false` on every object, every property listed in `required`. A
//!   property the canonical schema leaves optional is made nullable
//!   (`type: [T, "null"]`, or `anyOf: [S, {"type": "null"}]`, with `null`
//!   added to an `enum`), unless it already accepts `null`; the model then
//!   sends `null` for it, which [`restore_arguments`](super::restore_arguments)
//!   removes again ("emulate optional parameters with a union with
//!   `null`").
//! - **`oneOf` → `anyOf`.** Only `anyOf` is supported. serde's tagged
//!   enums have disjoint variants, so `anyOf` accepts the same values;
//!   for `#[serde(untagged)]`, schemars already writes `anyOf`.
//! - **Supported keywords** are kept: `type`, `description`, `title`,
//!   `enum`, `const`, `anyOf`, `$ref`/`$defs` (also recursive, through
//!   `#`), `properties`, `required`, `additionalProperties`, `items`;
//!   strings `pattern` and `format` (`date-time`, `time`, `date`,
//!   `duration`, `email`, `hostname`, `ipv4`, `ipv6`, `uuid`); numbers
//!   `multipleOf`, `maximum`, `exclusiveMaximum`, `minimum`,
//!   `exclusiveMinimum`; arrays `minItems`, `maxItems`.
//! - **Other keywords are moved into the description** (`default`,
//!   `examples`, `minLength`, `maxLength`, `uniqueItems`, other formats,
//!   …) as `(minLength: 1, maxLength: 1)`, so the model still reads them;
//!   the registry still enforces them on the arguments it receives. A
//!   note lists them. schemars' own formats (`uint32`, `int64`, …) are
//!   dropped without a note: the bounds beside them say the same.
//! - **`$ref` takes no siblings.** A `$ref` with a description beside it
//!   becomes `anyOf: [{"$ref": …}]` with the description outside.
//! - **Limits** (same page): at most 5,000 object properties in all, 10
//!   levels of object nesting, 1,000 enum values in all, 120,000
//!   characters of property names, definition names, enum and const
//!   values together, and 15,000 characters of values for one string
//!   enum of more than 250 values.
//! - **The root** must be a plain object, not `anyOf`.
//!
//! # When strict mode cannot say it
//!
//! The tool is emitted with `strict: false` and the canonical schema
//! (cleaned as for [MCP](super::mcp): no `$schema`, no schemars-only
//! formats), and a note gives every reason. That happens for: maps
//! (`additionalProperties: {schema}`, `HashMap`/`BTreeMap` or a flattened
//! map), an open object (`additionalProperties: true`), any JSON
//! (`serde_json::Value`, the schema `true`), tuples (`prefixItems`),
//! composition keywords strict mode lacks (`allOf`, `not`, `if`/`then`/
//! `else`, `dependentSchemas`, `patternProperties`, …), a root that
//! combines its properties with enum variants (a flattened enum at the
//! root; nested, it is rewritten as one closed object per variant), and a
//! schema over a documented limit.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use super::Projected;
use super::walk::{self, accepts_null, append_description, compact, types};
use toolprism_core::ToolDefinition;

/// The string formats strict mode supports.
pub(crate) const STRICT_FORMATS: &[&str] = &[
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "uuid",
];

/// Keywords strict mode supports (besides `format`, checked on its value).
const SUPPORTED: &[&str] = &[
    "type",
    "description",
    "title",
    "enum",
    "const",
    "anyOf",
    "$ref",
    "$defs",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "pattern",
    "multipleOf",
    "maximum",
    "exclusiveMaximum",
    "minimum",
    "exclusiveMinimum",
    "minItems",
    "maxItems",
];

/// Keywords strict mode cannot express; their presence turns strict off.
const INEXPRESSIBLE: &[&str] = &[
    "allOf",
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
    "minContains",
    "maxContains",
    "prefixItems",
    "additionalItems",
    "definitions",
    "$dynamicRef",
    "$anchor",
    "$id",
];

/// Documented limits of a strict schema.
pub(crate) const MAX_PROPERTIES: usize = 5_000;
/// Levels of object nesting.
pub(crate) const MAX_NESTING: usize = 10;
/// Enum values across the schema.
pub(crate) const MAX_ENUM_VALUES: usize = 1_000;
/// Characters of property names, definition names, enum and const values.
pub(crate) const MAX_TOTAL_CHARS: usize = 120_000;
/// A string enum with more values than this has its own character limit…
pub(crate) const LARGE_ENUM: usize = 250;
/// …of this many characters.
pub(crate) const MAX_LARGE_ENUM_CHARS: usize = 15_000;

/// The Chat Completions tool: `{"type":"function","function":{…}}`.
pub(crate) fn chat_completions(def: &ToolDefinition) -> Result<Projected, Vec<String>> {
    let (function, notes) = function(def);
    Ok(Projected::new(
        json!({"type": "function", "function": Value::Object(function)}),
        notes,
    ))
}

/// The Responses tool: `{"type":"function", name, …}`.
pub(crate) fn responses(def: &ToolDefinition) -> Result<Projected, Vec<String>> {
    let (function, notes) = function(def);
    let mut out = Map::new();
    out.insert("type".into(), "function".into());
    out.extend(function);
    Ok(Projected::new(Value::Object(out), notes))
}

fn function(def: &ToolDefinition) -> (Map<String, Value>, Vec<String>) {
    let (parameters, strict, notes) = match strict_parameters(&def.input_schema) {
        Ok((p, notes)) => (p, true, notes),
        Err(reasons) => {
            let p = walk::clean(&def.input_schema).unwrap_or_else(|_| def.input_schema.clone());
            let note = format!("strict: false, because {}", reasons.join("; "));
            (p, false, vec![note])
        }
    };
    let mut f = Map::new();
    f.insert("name".into(), def.name.clone().into());
    f.insert("description".into(), def.description.clone().into());
    f.insert("parameters".into(), parameters);
    f.insert("strict".into(), strict.into());
    (f, notes)
}

/// The strict view of an input schema and its notes, or every reason
/// strict mode cannot express it.
pub(crate) fn strict_parameters(input_schema: &Value) -> Result<(Value, Vec<String>), Vec<String>> {
    let original = walk::clean(input_schema).map_err(|e| vec![e.message()])?;
    let mut cx = Cx {
        root: &original,
        reasons: Vec::new(),
        moved: BTreeMap::new(),
    };
    let mut out = original.clone();
    if let Value::Object(root) = &mut out {
        if ["oneOf", "anyOf"].iter().any(|k| root.contains_key(*k)) {
            cx.reasons.push(
                "the root combines its properties with enum variants (a `#[serde(flatten)]` enum), and a strict root must be a plain object"
                    .into(),
            );
        }
        if let Some(Value::Object(defs)) = root.get_mut("$defs") {
            for (name, d) in defs.iter_mut() {
                cx.node(d, &format!("$defs.{name}"), 0);
            }
        }
    }
    cx.node(&mut out, "", 0);
    if cx.reasons.is_empty() {
        cx.reasons.extend(limits(&out));
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
            "moved into descriptions (strict mode does not support them; the registry still checks them): {}",
            list.join("; ")
        ));
    }
    Ok((out, notes))
}

struct Cx<'a> {
    /// The canonical schema (cleaned), for `$ref` and null checks.
    root: &'a Value,
    reasons: Vec<String>,
    moved: BTreeMap<String, Vec<String>>,
}

impl Cx<'_> {
    fn node(&mut self, schema: &mut Value, path: &str, depth: usize) {
        if depth > walk::MAX_SCHEMA_DEPTH {
            self.reasons.push(walk::TooDeep(path.to_owned()).message());
            return;
        }
        let shown = walk::shown(path);
        let node = match schema {
            Value::Bool(true) => {
                self.reasons.push(format!(
                    "`{shown}` accepts any JSON value (`serde_json::Value`), which strict mode cannot express"
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
        if node.contains_key("oneOf") {
            if node.contains_key("anyOf") {
                self.reasons
                    .push(format!("`{shown}` has both `oneOf` and `anyOf`"));
                return;
            }
            let v = node.remove("oneOf").expect("present");
            node.insert("anyOf".into(), v);
        }
        if !path.is_empty() {
            match walk::distribute(node, self.root) {
                Ok(_) => {}
                Err(e) => {
                    self.reasons.push(format!(
                        "`{shown}` combines properties with variants strict mode cannot merge: {e}"
                    ));
                    return;
                }
            }
        }
        for k in INEXPRESSIBLE {
            if node.contains_key(*k) {
                let what = match *k {
                    "prefixItems" | "additionalItems" => {
                        "is a tuple (`prefixItems`), which strict mode cannot express".to_owned()
                    }
                    "patternProperties" | "propertyNames" => {
                        "is a map with key rules, which strict mode cannot express".to_owned()
                    }
                    other => format!("uses `{other}`, which strict mode does not support"),
                };
                self.reasons.push(format!("`{shown}` {what}"));
            }
        }
        // `$ref` takes no siblings: keep annotations outside an `anyOf`.
        if node.contains_key("$ref") && node.keys().any(|k| k != "$ref" && k != "$defs") {
            let r = node.remove("$ref").expect("present");
            let wrapped = json!({"$ref": r});
            match node.get_mut("anyOf") {
                Some(Value::Array(a)) => a.push(wrapped),
                _ => {
                    node.insert("anyOf".into(), json!([wrapped]));
                }
            }
        }
        let is_object = types(node).contains(&"object") || node.contains_key("properties");
        if is_object {
            match node.get("additionalProperties") {
                None | Some(Value::Bool(false)) => {}
                Some(Value::Bool(true)) => self.reasons.push(format!(
                    "`{shown}` is an open object (`additionalProperties: true`), which strict mode cannot express"
                )),
                Some(_) => self.reasons.push(format!(
                    "`{shown}` is a map (`additionalProperties` with a schema: a `HashMap`, `BTreeMap` or flattened map), which strict mode cannot express"
                )),
            }
            node.insert("additionalProperties".into(), false.into());
            let required: Vec<String> = node
                .get("required")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect();
            let mut props = match node.remove("properties") {
                Some(Value::Object(p)) => p,
                _ => Map::new(),
            };
            let mut all = Vec::with_capacity(props.len());
            for (name, prop) in props.iter_mut() {
                let child = join(path, &format!("properties.{name}"));
                let optional = !required.contains(name);
                let nullable = accepts_null(prop, self.root);
                self.node(prop, &child, depth + 1);
                if optional && !nullable {
                    make_nullable(prop);
                }
                all.push(Value::String(name.clone()));
            }
            // In the properties' order, as OpenAI's own strict converter
            // writes it (so the SDK leaves this view unchanged).
            node.insert("properties".into(), Value::Object(props));
            node.insert("required".into(), Value::Array(all));
        }
        if let Some(items) = node.get_mut("items") {
            self.node(items, &join(path, "items"), depth + 1);
        }
        if let Some(Value::Array(branches)) = node.get_mut("anyOf") {
            for (i, b) in branches.iter_mut().enumerate() {
                self.node(b, &join(path, &format!("anyOf[{i}]")), depth + 1);
            }
        }
        // Unsupported keywords into the description.
        let mut moved = Vec::new();
        let keys: Vec<String> = node.keys().cloned().collect();
        for k in keys {
            let keep = SUPPORTED.contains(&k.as_str())
                || INEXPRESSIBLE.contains(&k.as_str())
                || (k == "format"
                    && node
                        .get("format")
                        .and_then(Value::as_str)
                        .is_some_and(|f| STRICT_FORMATS.contains(&f)))
                || (k == "$defs" && path.is_empty());
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

/// Adds `null` to what a schema accepts (it does not accept it yet).
pub(crate) fn make_nullable(schema: &mut Value) {
    let Value::Object(node) = schema else {
        return;
    };
    let simple =
        !node.contains_key("anyOf") && !node.contains_key("$ref") && !node.contains_key("const");
    match node.get_mut("type") {
        Some(Value::String(t)) if simple => {
            let t = std::mem::take(t);
            node.insert("type".into(), json!([t, "null"]));
            if let Some(Value::Array(e)) = node.get_mut("enum") {
                e.push(Value::Null);
            }
            return;
        }
        Some(Value::Array(ts)) if simple => {
            ts.push("null".into());
            if let Some(Value::Array(e)) = node.get_mut("enum") {
                e.push(Value::Null);
            }
            return;
        }
        _ => {}
    }
    if node.contains_key("anyOf") && !node.contains_key("type") && !node.contains_key("$ref") {
        if let Some(Value::Array(a)) = node.get_mut("anyOf") {
            a.push(json!({"type": "null"}));
        }
        return;
    }
    // Anything else: `anyOf: [S, null]`, annotations kept outside.
    let mut outer = Map::new();
    for k in ["title", "description"] {
        if let Some(v) = node.remove(k) {
            outer.insert(k.into(), v);
        }
    }
    let inner = Value::Object(std::mem::take(node));
    outer.insert("anyOf".into(), json!([inner, {"type": "null"}]));
    *node = outer;
}

fn join(path: &str, segment: &str) -> String {
    if path.is_empty() {
        segment.to_owned()
    } else {
        format!("{path}.{segment}")
    }
}

/// The documented limits a strict schema breaks, one sentence each.
pub(crate) fn limits(schema: &Value) -> Vec<String> {
    let mut properties = 0usize;
    let mut enum_values = 0usize;
    let mut chars = 0usize;
    let mut large = Vec::new();
    if let Some(defs) = schema.get("$defs").and_then(Value::as_object) {
        chars += defs.keys().map(|k| k.chars().count()).sum::<usize>();
    }
    let mut copy = schema.clone();
    let _ = walk::visit_mut(&mut copy, &mut |path, node| {
        if let Some(p) = node.get("properties").and_then(Value::as_object) {
            properties += p.len();
            chars += p.keys().map(|k| k.chars().count()).sum::<usize>();
        }
        let text = |v: &Value| match v {
            Value::String(s) => s.chars().count(),
            other => other.to_string().chars().count(),
        };
        if let Some(e) = node.get("enum").and_then(Value::as_array) {
            enum_values += e.len();
            let n: usize = e.iter().map(text).sum();
            chars += n;
            if e.len() > LARGE_ENUM && e.iter().all(Value::is_string) && n > MAX_LARGE_ENUM_CHARS {
                large.push(format!(
                    "the enum at `{}` has {} string values of {n} characters in all (at most {MAX_LARGE_ENUM_CHARS} for an enum of more than {LARGE_ENUM} values)",
                    walk::shown(path),
                    e.len()
                ));
            }
        }
        if let Some(c) = node.get("const") {
            chars += text(c);
        }
    });
    let mut out = Vec::new();
    if properties > MAX_PROPERTIES {
        out.push(format!(
            "it has {properties} object properties (at most {MAX_PROPERTIES})"
        ));
    }
    let depth = nesting(schema);
    if depth > MAX_NESTING {
        out.push(format!(
            "it nests objects {depth} levels deep (at most {MAX_NESTING})"
        ));
    }
    if enum_values > MAX_ENUM_VALUES {
        out.push(format!(
            "it has {enum_values} enum values (at most {MAX_ENUM_VALUES})"
        ));
    }
    if chars > MAX_TOTAL_CHARS {
        out.push(format!(
            "its property names, definition names, enum and const values take {chars} characters (at most {MAX_TOTAL_CHARS})"
        ));
    }
    out.extend(large);
    out
}

/// Levels of object nesting: the root object is level 1; a `$ref` is
/// followed unless it is already open on the path (recursion counts once).
fn nesting(root: &Value) -> usize {
    // (schema, object depth so far, refs open on this path)
    let mut stack: Vec<(&Value, usize, Vec<String>)> = vec![(root, 0, Vec::new())];
    let mut max = 0;
    let mut visited = 0usize;
    while let Some((node, depth, open)) = stack.pop() {
        visited += 1;
        if visited > 100_000 {
            break;
        }
        let Value::Object(m) = node else { continue };
        let here = if types(m).contains(&"object") || m.contains_key("properties") {
            depth + 1
        } else {
            depth
        };
        max = max.max(here);
        if here > walk::MAX_SCHEMA_DEPTH {
            continue;
        }
        if let Some(r) = m.get("$ref").and_then(Value::as_str)
            && !open.iter().any(|o| o == r)
            && let Some(t) = walk::resolve(root, r)
        {
            let mut o = open.clone();
            o.push(r.to_owned());
            stack.push((t, depth, o));
        }
        if let Some(p) = m.get("properties").and_then(Value::as_object) {
            stack.extend(p.values().map(|v| (v, here, open.clone())));
        }
        if let Some(i) = m.get("items") {
            stack.push((i, here, open.clone()));
        }
        for k in ["anyOf", "oneOf", "allOf"] {
            if let Some(a) = m.get(k).and_then(Value::as_array) {
                stack.extend(a.iter().map(|v| (v, here, open.clone())));
            }
        }
    }
    max
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn optional_properties_become_required_and_nullable() {
        let s = json!({"type": "object", "required": ["a"], "properties": {
            "a": {"type": "string"},
            "b": {"type": "integer", "minimum": 0},
            "c": {"type": ["string", "null"]},
            "d": {"type": "string", "enum": ["x", "y"]},
            "e": {"$ref": "#/$defs/E"},
            "f": {"oneOf": [{"const": "p", "type": "string"}, {"const": "q", "type": "string"}]}},
            "$defs": {"E": {"type": "object", "properties": {"z": {"type": "boolean", "default": false}}}}});
        let (out, notes) = strict_parameters(&s).unwrap();
        assert_eq!(out["required"], json!(["a", "b", "c", "d", "e", "f"]));
        let (ordered, _) = strict_parameters(&json!({"type": "object", "required": ["z"],
            "properties": {"z": {"type": "string"}, "a": {"type": "string"}}}))
        .unwrap();
        assert_eq!(ordered["required"], json!(["a", "z"]));
        assert_eq!(out["additionalProperties"], json!(false));
        assert_eq!(
            out["properties"]["b"],
            json!({"type": ["integer", "null"], "minimum": 0})
        );
        assert_eq!(out["properties"]["c"], json!({"type": ["string", "null"]}));
        assert_eq!(
            out["properties"]["d"],
            json!({"type": ["string", "null"], "enum": ["x", "y", null]})
        );
        assert_eq!(
            out["properties"]["e"],
            json!({"anyOf": [{"$ref": "#/$defs/E"}, {"type": "null"}]})
        );
        assert_eq!(out["properties"]["f"]["anyOf"][2], json!({"type": "null"}));
        let e = &out["$defs"]["E"];
        assert_eq!(e["required"], json!(["z"]));
        assert_eq!(e["properties"]["z"]["description"], "(default: false)");
        assert!(
            notes[0].contains("`default` at $defs.E.properties.z"),
            "{notes:?}"
        );
    }

    #[test]
    fn maps_tuples_and_any_json_turn_strict_off_with_reasons() {
        let s = json!({"type": "object", "properties": {
            "m": {"type": "object", "additionalProperties": {"type": "string"}},
            "t": {"type": "array", "prefixItems": [{"type": "string"}]},
            "v": true}});
        let reasons = strict_parameters(&s).unwrap_err();
        assert_eq!(reasons.len(), 3, "{reasons:?}");
        assert!(reasons[0].contains("properties.m") && reasons[0].contains("map"));
        assert!(reasons[1].contains("tuple"));
        assert!(reasons[2].contains("serde_json::Value"));
    }

    #[test]
    fn limits_are_counted() {
        let mut props = Map::new();
        for i in 0..(MAX_PROPERTIES + 1) {
            props.insert(format!("p{i}"), json!({"type": "string"}));
        }
        let s = json!({"type": "object", "properties": props});
        let r = strict_parameters(&s).unwrap_err();
        assert!(
            r.iter().any(|r| r.contains("5001 object properties")),
            "{r:?}"
        );

        let mut deep = json!({"type": "string"});
        for _ in 0..MAX_NESTING {
            deep = json!({"type": "object", "properties": {"x": deep}, "required": ["x"]});
        }
        assert!(strict_parameters(&deep).is_ok());
        let deeper = json!({"type": "object", "properties": {"x": deep}, "required": ["x"]});
        let r = strict_parameters(&deeper).unwrap_err();
        assert!(r.iter().any(|r| r.contains("11 levels")), "{r:?}");

        let big: Vec<Value> = (0..300)
            .map(|i| Value::String(format!("{i:0>60}")))
            .collect();
        let s = json!({"type": "object", "properties": {"e": {"type": "string", "enum": big}}, "required": ["e"]});
        let r = strict_parameters(&s).unwrap_err();
        assert!(r.iter().any(|r| r.contains("300 string values")), "{r:?}");
    }
}
