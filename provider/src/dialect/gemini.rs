//! Gemini function declarations: a `functionDeclarations` entry with the
//! arguments as JSON Schema (`parametersJsonSchema`), or, for models and
//! clients that only take the OpenAPI subset, as `parameters`.
//!
//! # `gemini`
//!
//! `{name, description, parametersJsonSchema}` (Gemini API reference,
//! *FunctionDeclaration*: `parametersJsonSchema` is JSON Schema with an
//! object root, exclusive with `parameters`). Rules from the reference's
//! list of supported JSON Schema keywords (*GenerationConfig →
//! responseJsonSchema*, which `parametersJsonSchema` shares):
//!
//! - **Kept**: `$id`, `$defs`, `$ref`, `$anchor`, `type`, `format`,
//!   `title`, `description`, `enum` (strings and numbers), `items`,
//!   `prefixItems`, `minItems`, `maxItems`, `minimum`, `maximum`,
//!   `anyOf`, `properties`, `additionalProperties`, `required`.
//! - **Rewritten exactly**: `oneOf` → `anyOf` (Gemini reads `oneOf` as
//!   `anyOf`; serde's tagged variants are disjoint, so nothing changes);
//!   `const` → a one-value `enum`; an `enum` holding `null` → `anyOf` of
//!   the enum and `{"type": "null"}`; `true` (any JSON) → `{}`; a `$ref`
//!   with other keywords beside it (only `$`-keywords may stand there) →
//!   `anyOf: [{"$ref": …}]` with the keywords outside.
//! - **Loosened, with a note**: other keywords (`default`, `examples`,
//!   `minLength`, `maxLength`, `pattern`, `uniqueItems`,
//!   `exclusiveMinimum`, `multipleOf`, …) are moved into the description
//!   (Gemini ignores them; the registry still checks them), and so is an
//!   `enum` or `const` of booleans.
//! - **Recursion**: "cyclic references are unrolled to a limited degree
//!   and may only be used within non-required properties". A cycle that
//!   passes through at least one optional property (`Option<Box<Self>>`,
//!   a `#[serde(default)]` field) is kept; a cycle through required
//!   properties only (`children: Vec<Self>` without a default) is refused,
//!   with the fix in the message.
//!
//! # `gemini-openapi`
//!
//! `{name, description, parameters}` with `parameters` in the OpenAPI 3.0
//! subset Gemini's `Schema` object takes (Gemini API reference,
//! *Schema*; the official `google-genai` SDK's `types.Schema` model, which
//! rejects unknown fields, is the outside check):
//!
//! - **One `type`, upper case** (`STRING`, `INTEGER`, `NUMBER`,
//!   `BOOLEAN`, `ARRAY`, `OBJECT`, `NULL`), plus `nullable: true` where
//!   the schema accepts `null` (a type array with `"null"`, an `anyOf`
//!   branch `{"type": "null"}`, `null` in an `enum`). Several non-null
//!   types become `anyOf`.
//! - **`const` → `enum`**; `enum` values must be strings: a non-string
//!   `enum`/`const` moves into the description (loosened, noted).
//! - **`$ref` inlined**, `$defs` dropped. **Recursion is refused**: the
//!   subset has no references (use `gemini`).
//! - **`additionalProperties` dropped.** A map's value schema moves into
//!   the description (loosened, noted); `false` is dropped silently (the
//!   registry still refuses unknown fields for `deny_unknown_fields`).
//! - **`oneOf` → `anyOf`**; a flattened enum (properties beside `oneOf`)
//!   becomes one object per variant.
//! - **Kept**: `format` (only `date-time` for strings, as the Gemini
//!   Developer API requires; others are noted), `title`, `description`,
//!   `default`, `enum`, `items`, `minItems`, `maxItems`, `minLength`,
//!   `maxLength`, `pattern`, `minimum`, `maximum`, `minProperties`,
//!   `maxProperties`, `properties`, `required`, `anyOf`.
//! - **Tuples** (`prefixItems`) become `items: {anyOf: [...]}` with the
//!   exact length kept (loosened, noted); any JSON (`serde_json::Value`)
//!   becomes a schema without a type (noted). Anything else is moved into
//!   the description (noted).

use std::collections::{BTreeMap, HashMap};

use serde_json::{Map, Value, json};

use super::Projected;
use super::walk::compact;
use super::walk::{self, ANNOTATIONS, append_description, types};
use toolprism_core::ToolDefinition;

/// Keywords `parametersJsonSchema` supports.
const JSON_SUPPORTED: &[&str] = &[
    "$id",
    "$defs",
    "$ref",
    "$anchor",
    "type",
    "format",
    "title",
    "description",
    "enum",
    "items",
    "prefixItems",
    "minItems",
    "maxItems",
    "minimum",
    "maximum",
    "anyOf",
    "properties",
    "additionalProperties",
    "required",
    "propertyOrdering",
];

/// The `gemini` declaration (`parametersJsonSchema`).
pub(crate) fn declaration(def: &ToolDefinition) -> Result<Projected, Vec<String>> {
    let (schema, notes) = json_schema(&def.input_schema)?;
    Ok(Projected::new(
        json!({"name": def.name, "description": def.description, "parametersJsonSchema": schema}),
        notes,
    ))
}

/// The `gemini-openapi` declaration (`parameters`).
pub(crate) fn openapi_declaration(def: &ToolDefinition) -> Result<Projected, Vec<String>> {
    let (schema, notes) = openapi_schema(&def.input_schema)?;
    Ok(Projected::new(
        json!({"name": def.name, "description": def.description, "parameters": schema}),
        notes,
    ))
}

/// Notes, grouped: what was moved, and where.
#[derive(Default)]
struct Notes {
    moved: BTreeMap<String, Vec<String>>,
    other: Vec<String>,
}

impl Notes {
    fn moved(&mut self, keyword: &str, path: &str) {
        self.moved
            .entry(keyword.to_owned())
            .or_default()
            .push(walk::shown(path));
    }

    fn finish(self, why: &str) -> Vec<String> {
        let mut out = self.other;
        if !self.moved.is_empty() {
            let list: Vec<String> = self
                .moved
                .iter()
                .map(|(k, paths)| format!("`{k}` at {}", paths.join(", ")))
                .collect();
            out.push(format!(
                "loosened: moved into descriptions ({why}; the registry still checks them): {}",
                list.join("; ")
            ));
        }
        out
    }
}

/// The `parametersJsonSchema` view of an input schema and its notes.
pub(crate) fn json_schema(input_schema: &Value) -> Result<(Value, Vec<String>), Vec<String>> {
    let mut out = walk::clean(input_schema).map_err(|e| vec![e.message()])?;
    let bad = required_cycles(&out);
    if !bad.is_empty() {
        return Err(bad);
    }
    let mut notes = Notes::default();
    let mut reasons = Vec::new();
    let result = walk::visit_mut(&mut out, &mut |path, node| {
        json_node(path, node, &mut notes, &mut reasons);
    });
    if let Err(e) = result {
        reasons.push(e.message());
    }
    // `true` subschemas (any JSON) as `{}`: same meaning, and Gemini
    // documents object schemas only.
    replace_true(&mut out);
    if !reasons.is_empty() {
        return Err(reasons);
    }
    Ok((out, notes.finish("Gemini ignores them")))
}

fn replace_true(schema: &mut Value) {
    let _ = walk::visit_mut(schema, &mut |_, node| {
        for (k, v) in node.iter_mut() {
            let single = walk::SINGLE.contains(&k.as_str()) && k != "additionalProperties";
            if single && *v == Value::Bool(true) {
                *v = json!({});
            }
            if walk::MAPS.contains(&k.as_str())
                && let Value::Object(m) = v
            {
                for s in m.values_mut() {
                    if *s == Value::Bool(true) {
                        *s = json!({});
                    }
                }
            }
            if walk::ARRAYS.contains(&k.as_str())
                && let Value::Array(a) = v
            {
                for s in a.iter_mut() {
                    if *s == Value::Bool(true) {
                        *s = json!({});
                    }
                }
            }
        }
    });
}

fn json_node(
    path: &str,
    node: &mut Map<String, Value>,
    notes: &mut Notes,
    reasons: &mut Vec<String>,
) {
    let shown = walk::shown(path);
    if let Some(v) = node.remove("oneOf") {
        match node.get_mut("anyOf") {
            Some(_) => {
                reasons.push(format!("`{shown}` has both `oneOf` and `anyOf`"));
                return;
            }
            None => {
                node.insert("anyOf".into(), v);
            }
        }
    }
    if let Some(c) = node.remove("const") {
        node.insert("enum".into(), json!([c]));
    }
    if let Some(Value::Array(e)) = node.get("enum") {
        if e.iter()
            .any(|v| v.is_boolean() || v.is_object() || v.is_array())
        {
            let v = node.remove("enum").expect("present");
            append_description(node, &format!("enum: {}", compact(&v)));
            notes.moved("enum", path);
        } else if e.contains(&Value::Null) {
            // `null` leaves the enum for an `anyOf` branch of its own.
            let mut inner = std::mem::take(node);
            let mut outer = Map::new();
            for k in ["title", "description"] {
                if let Some(v) = inner.remove(k) {
                    outer.insert(k.into(), v);
                }
            }
            if let Some(Value::Array(e)) = inner.get_mut("enum") {
                e.retain(|v| !v.is_null());
            }
            match inner.get_mut("type") {
                Some(Value::Array(ts)) => {
                    ts.retain(|t| t != "null");
                    if ts.len() == 1 {
                        let t = ts[0].clone();
                        inner.insert("type".into(), t);
                    }
                }
                Some(Value::String(t)) if t == "null" => {
                    inner.remove("type");
                }
                _ => {}
            }
            outer.insert("anyOf".into(), json!([inner, {"type": "null"}]));
            *node = outer;
            // The inner schema is visited next as an `anyOf` branch.
            return;
        }
    }
    if node.contains_key("$ref") && node.keys().any(|k| !k.starts_with('$')) {
        let r = node.remove("$ref").expect("present");
        match node.get_mut("anyOf") {
            Some(Value::Array(a)) => a.push(json!({"$ref": r})),
            _ => {
                node.insert("anyOf".into(), json!([{"$ref": r}]));
            }
        }
    }
    if node.get("items") == Some(&Value::Bool(false)) && node.contains_key("prefixItems") {
        node.remove("items");
    }
    let mut moved = Vec::new();
    let keys: Vec<String> = node.keys().cloned().collect();
    for k in keys {
        if JSON_SUPPORTED.contains(&k.as_str()) {
            continue;
        }
        let v = node.remove(&k).expect("present");
        moved.push(format!("{k}: {}", compact(&v)));
        notes.moved(&k, path);
    }
    if !moved.is_empty() {
        append_description(node, &moved.join(", "));
    }
}

/// Every cycle of references that only passes through required
/// properties, as a refusal; empty when every cycle can end.
fn required_cycles(root: &Value) -> Vec<String> {
    // Nodes: reference strings ("#" is the root). Edges: the `$ref`s
    // inside a node's schema, each marked optional when the path to it
    // passes a property its object does not require.
    let mut edges: HashMap<String, Vec<(String, bool)>> = HashMap::new();
    let mut todo = vec!["#".to_owned()];
    while let Some(r) = todo.pop() {
        if edges.contains_key(&r) {
            continue;
        }
        let mut out = Vec::new();
        if let Some(target) = walk::resolve(root, &r) {
            ref_sites(target, false, 0, &mut out);
        }
        for (t, _) in &out {
            todo.push(t.clone());
        }
        edges.insert(r, out);
    }
    // A cycle made of required edges only?
    let mut state: HashMap<&str, u8> = HashMap::new();
    let mut found = Vec::new();
    let names: Vec<&String> = edges.keys().collect();
    for start in names {
        if state.contains_key(start.as_str()) {
            continue;
        }
        let mut stack: Vec<(&str, usize)> = vec![(start.as_str(), 0)];
        state.insert(start.as_str(), 1);
        while let Some((node, i)) = stack.pop() {
            let out = &edges[node];
            if i >= out.len() {
                state.insert(node, 2);
                continue;
            }
            stack.push((node, i + 1));
            let (next, optional) = &out[i];
            if *optional || !edges.contains_key(next) {
                continue;
            }
            match state.get(next.as_str()) {
                Some(1) => {
                    let name = if next == "#" {
                        "the root type".to_owned()
                    } else {
                        format!("`{next}`")
                    };
                    found.push(format!(
                        "{name} refers to itself through required properties only, and Gemini can only unroll a cycle through an optional property (make the recursive field an `Option`, or give it `#[serde(default)]`)"
                    ));
                }
                Some(_) => {}
                None => {
                    state.insert(next.as_str(), 1);
                    stack.push((next.as_str(), 0));
                }
            }
        }
    }
    found.sort();
    found.dedup();
    found
}

fn ref_sites(node: &Value, optional: bool, depth: usize, out: &mut Vec<(String, bool)>) {
    if depth > walk::MAX_SCHEMA_DEPTH {
        return;
    }
    let Value::Object(m) = node else { return };
    if let Some(r) = m.get("$ref").and_then(Value::as_str) {
        out.push((r.to_owned(), optional));
    }
    let required: Vec<&str> = m
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    for (k, v) in m {
        match k.as_str() {
            "$defs" | "definitions" => {}
            "properties" => {
                for (name, p) in v.as_object().into_iter().flatten() {
                    let opt = optional || !required.contains(&name.as_str());
                    ref_sites(p, opt, depth + 1, out);
                }
            }
            k if walk::SINGLE.contains(&k) => ref_sites(v, optional, depth + 1, out),
            k if walk::ARRAYS.contains(&k) => {
                for b in v.as_array().into_iter().flatten() {
                    ref_sites(b, optional, depth + 1, out);
                }
            }
            k if walk::MAPS.contains(&k) => {
                for b in v.as_object().into_iter().flatten().map(|(_, b)| b) {
                    ref_sites(b, optional, depth + 1, out);
                }
            }
            _ => {}
        }
    }
}

/// Keywords the OpenAPI `Schema` object keeps as they are.
const OPENAPI_KEPT: &[&str] = &[
    "title",
    "description",
    "default",
    "minItems",
    "maxItems",
    "minLength",
    "maxLength",
    "pattern",
    "minimum",
    "maximum",
    "minProperties",
    "maxProperties",
    "required",
];

/// The OpenAPI-subset `parameters` view of an input schema and its notes.
pub(crate) fn openapi_schema(input_schema: &Value) -> Result<(Value, Vec<String>), Vec<String>> {
    let cleaned = walk::clean(input_schema).map_err(|e| vec![e.message()])?;
    if walk::is_recursive(&cleaned).map_err(|e| vec![e.message()])? {
        return Err(vec![
            "the type is recursive, and Gemini's OpenAPI schema subset has no references to express it (use the `gemini` dialect, whose parametersJsonSchema keeps `$ref`)".into(),
        ]);
    }
    if ["oneOf", "anyOf"].iter().any(|k| cleaned.get(*k).is_some()) {
        return Err(vec![
            "the root combines its properties with enum variants (a `#[serde(flatten)]` enum), and the OpenAPI subset's `parameters` must be one `OBJECT` (use the `gemini` dialect)".into(),
        ]);
    }
    let inlined = walk::inline_refs(&cleaned).map_err(|e| vec![e])?;
    let mut cx = OpenApi {
        notes: Notes::default(),
        reasons: Vec::new(),
    };
    let out = cx.node(&inlined, "", 0);
    if !cx.reasons.is_empty() {
        return Err(cx.reasons);
    }
    Ok((out, cx.notes.finish("the OpenAPI subset cannot state them")))
}

struct OpenApi {
    notes: Notes,
    reasons: Vec<String>,
}

fn upper(t: &str) -> String {
    t.to_ascii_uppercase()
}

impl OpenApi {
    fn node(&mut self, schema: &Value, path: &str, depth: usize) -> Value {
        let shown = walk::shown(path);
        if depth > walk::MAX_SCHEMA_DEPTH {
            self.reasons.push(walk::TooDeep(path.to_owned()).message());
            return json!({});
        }
        let mut node = match schema {
            Value::Bool(true) => {
                self.notes.other.push(format!(
                    "`{shown}` accepts any JSON value (`serde_json::Value`); the OpenAPI subset cannot say so, so it is sent without a type"
                ));
                return json!({});
            }
            Value::Bool(false) => {
                self.reasons
                    .push(format!("`{shown}` accepts no value at all"));
                return json!({});
            }
            Value::Object(m) => m.clone(),
            _ => return json!({}),
        };
        if node.contains_key("oneOf") && !node.contains_key("anyOf") {
            let v = node.remove("oneOf").expect("present");
            node.insert("anyOf".into(), v);
        }
        if let Err(e) = walk::distribute(&mut node, &Value::Null) {
            self.reasons.push(format!("`{shown}`: {e}"));
            return json!({});
        }
        let mut out = Map::new();
        let mut extra: Vec<String> = Vec::new();
        let mut nullable = false;
        // Branches.
        if let Some(Value::Array(branches)) = node.get("anyOf") {
            let mut kept = Vec::new();
            for (i, b) in branches.iter().enumerate() {
                if b.get("type").and_then(Value::as_str) == Some("null")
                    && b.as_object().is_some_and(|m| m.len() == 1)
                {
                    nullable = true;
                    continue;
                }
                kept.push(self.node(b, &join(path, &format!("anyOf[{i}]")), depth + 1));
            }
            let own_type = node.contains_key("type");
            if kept.len() == 1 && !own_type {
                let Value::Object(only) = kept.pop().expect("one") else {
                    return json!({});
                };
                out = only;
            } else if !kept.is_empty() {
                out.insert("anyOf".into(), Value::Array(kept));
            }
        }
        // Types.
        let ts: Vec<String> = types(&node).iter().map(|t| (*t).to_owned()).collect();
        if ts.iter().any(|t| t == "null") {
            nullable = true;
        }
        let non_null: Vec<&String> = ts.iter().filter(|t| *t != "null").collect();
        match non_null.len() {
            0 if !ts.is_empty() => {
                out.insert("type".into(), "NULL".into());
                nullable = false;
            }
            0 => {}
            1 => {
                out.insert("type".into(), upper(non_null[0]).into());
            }
            _ => {
                // Several types: split, then convert the branches.
                let mut split = node.clone();
                super::walk::split_type_array(&mut split);
                return self.node(&Value::Object(split), path, depth + 1);
            }
        }
        let ty = non_null.first().map(|t| t.as_str());
        // Pinned values.
        let mut values: Option<Vec<Value>> = None;
        if let Some(c) = node.get("const") {
            values = Some(vec![c.clone()]);
        }
        if let Some(Value::Array(e)) = node.get("enum") {
            values = Some(e.clone());
        }
        if let Some(mut vals) = values {
            if vals.contains(&Value::Null) {
                nullable = true;
                vals.retain(|v| !v.is_null());
            }
            if vals.iter().all(Value::is_string) {
                if !vals.is_empty() {
                    out.insert("enum".into(), Value::Array(vals));
                    if ty.is_none() {
                        out.insert("type".into(), "STRING".into());
                    }
                }
            } else {
                extra.push(format!("one of: {}", compact(&Value::Array(vals))));
                self.notes.moved("enum", path);
            }
        }
        // Objects.
        if let Some(Value::Object(props)) = node.get("properties") {
            let mut converted = Map::new();
            for (name, p) in props {
                converted.insert(
                    name.clone(),
                    self.node(p, &join(path, &format!("properties.{name}")), depth + 1),
                );
            }
            out.insert("properties".into(), Value::Object(converted));
            if ty.is_none() {
                out.insert("type".into(), "OBJECT".into());
            }
        }
        match node.get("additionalProperties") {
            None | Some(Value::Bool(_)) => {}
            Some(s) => {
                let value_type = s
                    .get("type")
                    .map(compact)
                    .unwrap_or_else(|| "any JSON".to_owned());
                extra.push(format!("a map: any keys; values: {value_type}"));
                self.notes.other.push(format!(
                    "`{shown}` is a map; the OpenAPI subset cannot state its values' schema, so only the description does"
                ));
            }
        }
        // Arrays.
        if let Some(Value::Array(prefix)) = node.get("prefixItems") {
            let mut branches: Vec<Value> = Vec::new();
            for (i, p) in prefix.iter().enumerate() {
                let c = self.node(p, &join(path, &format!("prefixItems[{i}]")), depth + 1);
                if !branches.contains(&c) {
                    branches.push(c);
                }
            }
            let items = if branches.len() == 1 {
                branches.pop().expect("one")
            } else {
                json!({"anyOf": branches})
            };
            out.insert("items".into(), items);
            self.notes.other.push(format!(
                "`{shown}` is a tuple; the OpenAPI subset has no `prefixItems`, so each position accepts any of the tuple's types (the length is kept)"
            ));
        } else if let Some(items) = node.get("items")
            && items.is_object()
        {
            let c = self.node(items, &join(path, "items"), depth + 1);
            out.insert("items".into(), c);
        }
        // Formats.
        if let Some(f) = node.get("format").and_then(Value::as_str) {
            if ty == Some("string") && f == "date-time" {
                out.insert("format".into(), f.into());
            } else {
                extra.push(format!("format: {f}"));
                self.notes.moved("format", path);
            }
        }
        // The rest.
        for (k, v) in &node {
            let handled = matches!(
                k.as_str(),
                "type"
                    | "anyOf"
                    | "const"
                    | "enum"
                    | "properties"
                    | "additionalProperties"
                    | "prefixItems"
                    | "items"
                    | "format"
                    | "description"
            );
            if handled {
                continue;
            }
            if OPENAPI_KEPT.contains(&k.as_str()) {
                out.insert(k.clone(), v.clone());
                continue;
            }
            if ANNOTATIONS.contains(&k.as_str()) && k != "examples" {
                continue;
            }
            extra.push(format!("{k}: {}", compact(v)));
            self.notes.moved(k, path);
        }
        // The schema's own description wins over a merged branch's.
        let own = node.get("description").and_then(Value::as_str);
        let merged = out.get("description").and_then(Value::as_str);
        let base = match (own, merged) {
            (Some(a), Some(b)) if a != b => Some(format!("{a} {b}")),
            (Some(a), _) => Some(a.to_owned()),
            (None, b) => b.map(str::to_owned),
        };
        match base {
            Some(b) => {
                out.insert("description".into(), b.into());
            }
            None => {
                out.remove("description");
            }
        }
        if !extra.is_empty() {
            append_description(&mut out, &extra.join(", "));
        }
        if nullable {
            out.insert("nullable".into(), true.into());
        }
        Value::Object(out)
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
    fn openapi_uses_single_types_and_nullable() {
        let s = json!({"type": "object", "required": ["a"], "properties": {
            "a": {"type": ["string", "null"]},
            "b": {"anyOf": [{"$ref": "#/$defs/P"}, {"type": "null"}]},
            "c": {"oneOf": [{"const": "x", "type": "string"}, {"const": "y", "type": "string"}]},
            "m": {"type": "object", "additionalProperties": {"type": "integer"}}},
            "$defs": {"P": {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]}}});
        let (out, notes) = openapi_schema(&s).unwrap();
        assert_eq!(out["type"], "OBJECT");
        assert_eq!(
            out["properties"]["a"],
            json!({"type": "STRING", "nullable": true})
        );
        assert_eq!(
            out["properties"]["b"],
            json!({"type": "OBJECT", "properties": {"x": {"type": "INTEGER"}}, "required": ["x"], "nullable": true})
        );
        assert_eq!(
            out["properties"]["c"],
            json!({"anyOf": [{"type": "STRING", "enum": ["x"]}, {"type": "STRING", "enum": ["y"]}]})
        );
        assert_eq!(
            out["properties"]["m"],
            json!({"type": "OBJECT", "description": "(a map: any keys; values: \"integer\")"})
        );
        assert!(
            notes.iter().any(|n| n.contains("properties.m")),
            "{notes:?}"
        );
    }

    #[test]
    fn recursion_is_refused_by_openapi_and_only_through_required_by_json() {
        let tree = json!({"type": "object", "required": ["children"], "properties": {
            "children": {"type": "array", "items": {"$ref": "#"}}}});
        assert!(openapi_schema(&tree).unwrap_err()[0].contains("recursive"));
        let e = json_schema(&tree).unwrap_err();
        assert!(e[0].contains("required properties only"), "{e:?}");
        let list = json!({"type": "object", "properties": {
            "next": {"anyOf": [{"$ref": "#"}, {"type": "null"}]}}});
        assert!(json_schema(&list).is_ok());
    }

    #[test]
    fn json_view_rewrites_const_and_null_enums() {
        let s = json!({"type": "object", "properties": {
            "k": {"const": "a", "type": "string"},
            "e": {"type": ["string", "null"], "enum": ["x", null], "description": "E."},
            "d": {"type": "integer", "default": 3}}});
        let (out, notes) = json_schema(&s).unwrap();
        assert_eq!(
            out["properties"]["k"],
            json!({"enum": ["a"], "type": "string"})
        );
        assert_eq!(
            out["properties"]["e"],
            json!({"description": "E.", "anyOf": [{"type": "string", "enum": ["x"]}, {"type": "null"}]})
        );
        assert_eq!(
            out["properties"]["d"],
            json!({"type": "integer", "description": "(default: 3)"})
        );
        assert_eq!(notes.len(), 1);
    }
}
