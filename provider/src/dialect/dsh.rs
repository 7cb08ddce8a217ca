//! The reference system (DeepSeek Harness, DSH): its JSON Schema subset,
//! for the arguments **and** the value (DSH validates every value against
//! the tool's output schema).
//!
//! Shape: `{name, description, parameters, output: {schema}}`, DSH's
//! `ToolDefinition` minus its functions (`execute`, `render`, … are the
//! harness adapter's to supply).
//!
//! # The subset (DSH's tool contract, "Schema subset"; W5 in `docs/contract.md`)
//!
//! Stated here in full: this module is where the project keeps it.
//!
//! Keywords: `type` (one of `object`, `array`, `string`, `number`,
//! `integer`, `boolean`, `null`), `oneOf`, `properties`, `required`,
//! boolean `additionalProperties`, `items`, `enum`, `const`, and the
//! annotations `description`, `title`, `default`, `examples`. Rules:
//! `type` and `oneOf` are exclusive; `oneOf` has at least two branches
//! and no sibling constraint keywords; constraint keywords need a `type`
//! or a `oneOf`; object keywords only on `object`, `items` only on
//! `array`, `enum`/`const` only on scalars and type-correct, `enum` not
//! empty, `const` within `enum` when both appear; every `required` name
//! is a declared property; no cycles. DSH collects every violation before
//! it refuses a schema, and so does this module.
//!
//! # How the canonical schema gets there
//!
//! - **Exact rewrites** (validation unchanged): `$ref` inlined and `$defs`
//!   dropped; a type array becomes `oneOf` of single types, each with its
//!   own keywords (`Option<u8>` → `oneOf: [{integer}, {null}]`); `anyOf`
//!   becomes `oneOf` when its branches are disjoint (different types,
//!   different tags, a required property the other branch forbids: serde's
//!   untagged enums of distinct shapes and every `Option`); a flattened
//!   enum's properties move into each variant; `true` becomes `{}`; a
//!   `type` beside `oneOf` that every branch already states is dropped;
//!   pure annotations DSH lacks (`format`, which 2020-12 does not assert,
//!   `$comment`, `deprecated`, `readOnly`, `writeOnly`, `content*`) are
//!   dropped.
//! - **Loosened, with a note**: bounds the subset cannot state
//!   (`minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum`,
//!   `multipleOf`, `minLength`, `maxLength`, `pattern`, `minItems`,
//!   `maxItems`, `uniqueItems`, `minProperties`, `maxProperties`) move
//!   into the description. They only narrow a type, and toolprism's
//!   registry still enforces them on both sides (the arguments before
//!   `execute`, the value on every call), so the contract holds end to
//!   end; without this, every `u32` (`minimum: 0`) would be refused.
//! - **Refused**, every violation listed: recursion, maps
//!   (`additionalProperties` with a schema), tuples (`prefixItems`),
//!   `anyOf` whose branches may overlap (an untagged enum with look-alike
//!   variants: DSH's `oneOf` would reject a value matching two),
//!   composition keywords (`allOf`, `not`, `if`/`then`/`else`, …), `enum`
//!   or `const` of objects or arrays, and anything else outside the subset.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use super::Projected;
use super::walk::compact;
use super::walk::split_type_array;
use super::walk::{self, append_description, disjoint, types};
use toolprism_core::ToolDefinition;

/// The subset's types.
pub(crate) const TYPES: &[&str] = &[
    "object", "array", "string", "number", "integer", "boolean", "null",
];

/// Pure annotations DSH lacks; dropping them changes no validation.
const DROPPED: &[&str] = &[
    "format",
    "$comment",
    "deprecated",
    "readOnly",
    "writeOnly",
    "contentEncoding",
    "contentMediaType",
    "$id",
    "$anchor",
    "$schema",
];

/// Bounds moved into the description.
const LOOSENED: &[&str] = &[
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "pattern",
    "minItems",
    "maxItems",
    "uniqueItems",
    "minProperties",
    "maxProperties",
];

/// The DSH definition: both schemas in the subset, or every violation.
pub(crate) fn definition(def: &ToolDefinition) -> Result<Projected, Vec<String>> {
    let input = schema(&def.input_schema);
    let output = schema(&def.output_schema);
    match (input, output) {
        (Ok((p, mut notes)), Ok((o, out_notes))) => {
            for n in &mut notes {
                n.insert_str(0, "parameters: ");
            }
            notes.extend(out_notes.into_iter().map(|n| format!("output: {n}")));
            Ok(Projected::new(
                json!({"name": def.name, "description": def.description, "parameters": p, "output": {"schema": o}}),
                notes,
            ))
        }
        (i, o) => {
            let mut reasons = Vec::new();
            if let Err(r) = i {
                reasons.extend(r.into_iter().map(|r| format!("parameters: {r}")));
            }
            if let Err(r) = o {
                reasons.extend(r.into_iter().map(|r| format!("output: {r}")));
            }
            Err(reasons)
        }
    }
}

/// One schema in the subset and its notes, or every violation.
pub(crate) fn schema(canonical: &Value) -> Result<(Value, Vec<String>), Vec<String>> {
    let cleaned = walk::clean(canonical).map_err(|e| vec![e.message()])?;
    if walk::is_recursive(&cleaned).map_err(|e| vec![e.message()])? {
        return Err(vec![
            "the type is recursive; the subset has no references and refuses cycles".into(),
        ]);
    }
    let inlined = walk::inline_refs(&cleaned).map_err(|e| vec![e])?;
    let mut cx = Cx::default();
    let out = cx.node(inlined, "", 0);
    if cx.violations.is_empty() {
        // Our own output must obey the subset; a miss here is a bug, and
        // it is refused rather than sent.
        cx.violations.extend(check(&out));
    }
    if !cx.violations.is_empty() {
        return Err(cx.violations);
    }
    let mut notes = Vec::new();
    if !cx.moved.is_empty() {
        let list: Vec<String> = cx
            .moved
            .iter()
            .map(|(k, paths)| format!("`{k}` at {}", paths.join(", ")))
            .collect();
        notes.push(format!(
            "loosened: moved into descriptions (the subset cannot state them; toolprism's registry still checks them): {}",
            list.join("; ")
        ));
    }
    Ok((out, notes))
}

#[derive(Default)]
struct Cx {
    violations: Vec<String>,
    moved: BTreeMap<String, Vec<String>>,
}

fn join(path: &str, segment: &str) -> String {
    if path.is_empty() {
        segment.to_owned()
    } else {
        format!("{path}.{segment}")
    }
}

fn is_scalar(v: &Value) -> bool {
    !v.is_object() && !v.is_array()
}

impl Cx {
    fn violation(&mut self, path: &str, what: String) {
        self.violations
            .push(format!("`{}` {what}", walk::shown(path)));
    }

    fn node(&mut self, schema: Value, path: &str, depth: usize) -> Value {
        if depth > walk::MAX_SCHEMA_DEPTH {
            self.violations
                .push(walk::TooDeep(path.to_owned()).message());
            return json!({});
        }
        let mut node = match schema {
            Value::Bool(true) => return json!({}),
            Value::Bool(false) => {
                self.violation(path, "accepts no value at all".into());
                return json!({});
            }
            Value::Object(m) => m,
            _ => {
                self.violation(path, "is not a schema".into());
                return json!({});
            }
        };
        if let Err(e) = walk::distribute(&mut node, &Value::Null) {
            self.violation(path, format!("cannot be rewritten: {e}"));
        }
        split_type_array(&mut node);
        if let Some(any) = node.remove("anyOf") {
            if node.contains_key("oneOf") {
                self.violation(path, "has both `anyOf` and `oneOf`".into());
            }
            let branches = any.as_array().cloned().unwrap_or_default();
            let mut overlap = None;
            'pairs: for (i, a) in branches.iter().enumerate() {
                for (j, b) in branches.iter().enumerate().skip(i + 1) {
                    if !disjoint(a, b) {
                        overlap = Some((i, j));
                        break 'pairs;
                    }
                }
            }
            if let Some((i, j)) = overlap {
                self.violation(
                    path,
                    format!(
                        "is an `anyOf` whose branches {i} and {j} may both match (an untagged enum with overlapping variants); the subset's `oneOf` needs exactly one"
                    ),
                );
            }
            node.insert("oneOf".into(), Value::Array(branches));
        }
        if let Some(Value::Array(branches)) = node.get("oneOf").cloned() {
            // A `type` every branch already states is redundant.
            if let Some(t) = node.get("type").and_then(Value::as_str).map(str::to_owned) {
                let covered = branches.iter().all(|b| {
                    let bt = b.as_object().map(types).unwrap_or_default();
                    !bt.is_empty()
                        && bt
                            .iter()
                            .all(|x| *x == t || (t == "number" && *x == "integer"))
                });
                if covered {
                    node.remove("type");
                } else {
                    self.violation(path, "has both `type` and `oneOf`".into());
                }
            }
            if branches.len() == 1 {
                let only = branches[0].clone();
                node.remove("oneOf");
                if let Value::Object(b) = only {
                    for (k, v) in b {
                        if k == "description" && node.contains_key("description") {
                            continue;
                        }
                        node.insert(k, v);
                    }
                }
                return self.node(Value::Object(node), path, depth + 1);
            }
        }
        let mut out = Map::new();
        let mut moved = Vec::new();
        let ty = node.get("type").and_then(Value::as_str).map(str::to_owned);
        for (k, v) in node {
            match k.as_str() {
                "type" => {
                    if !v.as_str().is_some_and(|t| TYPES.contains(&t)) {
                        self.violation(path, format!("has an unknown `type` {}", compact(&v)));
                    }
                    out.insert(k, v);
                }
                "oneOf" => {
                    let mut branches = Vec::new();
                    for (i, b) in v
                        .as_array()
                        .cloned()
                        .unwrap_or_default()
                        .into_iter()
                        .enumerate()
                    {
                        branches.push(self.node(b, &join(path, &format!("oneOf[{i}]")), depth + 1));
                    }
                    out.insert(k, Value::Array(branches));
                }
                "properties" => {
                    let mut props = Map::new();
                    for (name, p) in v.as_object().cloned().unwrap_or_default() {
                        let c = self.node(p, &join(path, &format!("properties.{name}")), depth + 1);
                        props.insert(name, c);
                    }
                    out.insert(k, Value::Object(props));
                }
                "items" => {
                    if v.is_boolean() {
                        if v == Value::Bool(false) {
                            self.violation(path, "forbids array items (`items: false`)".into());
                        }
                        continue;
                    }
                    let c = self.node(v, &join(path, "items"), depth + 1);
                    out.insert(k, c);
                }
                "additionalProperties" => {
                    if v.is_boolean() {
                        out.insert(k, v);
                    } else {
                        self.violation(
                            path,
                            "is a map (`additionalProperties` with a schema: a `HashMap`, `BTreeMap` or flattened map); the subset only has a boolean `additionalProperties`".into(),
                        );
                    }
                }
                "prefixItems" => self.violation(
                    path,
                    "is a tuple (`prefixItems`), which the subset cannot express".into(),
                ),
                "enum" => {
                    let vals = v.as_array().cloned().unwrap_or_default();
                    if !vals.iter().all(is_scalar) {
                        self.violation(
                            path,
                            "has an `enum` of objects or arrays; the subset allows scalars only"
                                .into(),
                        );
                    }
                    if ty.as_deref() == Some("null") && vals == [Value::Null] {
                        continue;
                    }
                    out.insert(k, v);
                }
                "const" => {
                    if !is_scalar(&v) {
                        self.violation(
                            path,
                            "has a `const` object or array; the subset allows scalars only".into(),
                        );
                    }
                    out.insert(k, v);
                }
                "required" | "description" | "title" | "default" | "examples" => {
                    out.insert(k, v);
                }
                other if DROPPED.contains(&other) => {}
                other if LOOSENED.contains(&other) => {
                    moved.push(format!("{other}: {}", compact(&v)));
                    self.moved.entry(k).or_default().push(walk::shown(path));
                }
                other => self.violation(
                    path,
                    format!("uses `{other}`, which the subset does not have"),
                ),
            }
        }
        // `enum`/`const` without a type: state it when every value agrees.
        if !out.contains_key("type") && !out.contains_key("oneOf") {
            let pinned: Vec<&Value> = match (out.get("const"), out.get("enum")) {
                (Some(c), _) => vec![c],
                (None, Some(Value::Array(e))) => e.iter().collect(),
                _ => Vec::new(),
            };
            if let Some(first) = pinned.first() {
                let t = scalar_type(first);
                if pinned.iter().all(|v| scalar_type(v) == t) {
                    out.insert("type".into(), t.into());
                }
            }
        }
        if !moved.is_empty() {
            append_description(&mut out, &moved.join(", "));
        }
        Value::Object(out)
    }
}

fn scalar_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn type_correct(v: &Value, t: &str) -> bool {
    let vt = scalar_type(v);
    vt == t || (t == "number" && vt == "integer")
}

/// Every way `schema` breaks the subset's rules (empty: it is in the
/// subset). Iterative, so hostile depth cannot overflow the stack.
pub(crate) fn check(schema: &Value) -> Vec<String> {
    const ALLOWED: &[&str] = &[
        "type",
        "oneOf",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "enum",
        "const",
        "description",
        "title",
        "default",
        "examples",
    ];
    const CONSTRAINTS: &[&str] = &[
        "properties",
        "required",
        "additionalProperties",
        "items",
        "enum",
        "const",
    ];
    let mut out = Vec::new();
    let mut stack = vec![(schema, String::new())];
    while let Some((node, path)) = stack.pop() {
        let shown = walk::shown(&path);
        let Value::Object(m) = node else {
            out.push(format!("`{shown}` is not a schema object"));
            continue;
        };
        for k in m.keys() {
            if !ALLOWED.contains(&k.as_str()) {
                out.push(format!("`{shown}` uses `{k}`"));
            }
        }
        let ty = match m.get("type") {
            None => None,
            Some(Value::String(t)) if TYPES.contains(&t.as_str()) => Some(t.as_str()),
            Some(other) => {
                out.push(format!("`{shown}` has `type` {other}, not one type name"));
                None
            }
        };
        if let Some(o) = m.get("oneOf") {
            if ty.is_some() {
                out.push(format!("`{shown}` has both `type` and `oneOf`"));
            }
            match o.as_array() {
                Some(b) if b.len() >= 2 => {
                    for (i, s) in b.iter().enumerate() {
                        stack.push((s, join(&path, &format!("oneOf[{i}]"))));
                    }
                }
                _ => out.push(format!(
                    "`{shown}` has a `oneOf` of fewer than two branches"
                )),
            }
            for c in CONSTRAINTS {
                if m.contains_key(*c) {
                    out.push(format!("`{shown}` has `{c}` beside `oneOf`"));
                }
            }
        } else if ty.is_none() && CONSTRAINTS.iter().any(|c| m.contains_key(*c)) {
            out.push(format!(
                "`{shown}` has constraint keywords but no `type` or `oneOf`"
            ));
        }
        let object_only = ["properties", "required", "additionalProperties"];
        for k in object_only {
            if m.contains_key(k) && ty.is_some() && ty != Some("object") {
                out.push(format!(
                    "`{shown}` has `{k}` on a `{}`",
                    ty.unwrap_or_default()
                ));
            }
        }
        if m.contains_key("items") && ty.is_some() && ty != Some("array") {
            out.push(format!(
                "`{shown}` has `items` on a `{}`",
                ty.unwrap_or_default()
            ));
        }
        if let Some(a) = m.get("additionalProperties")
            && !a.is_boolean()
        {
            out.push(format!(
                "`{shown}` has a non-boolean `additionalProperties`"
            ));
        }
        if let Some(Value::Object(p)) = m.get("properties") {
            for (name, s) in p {
                stack.push((s, join(&path, &format!("properties.{name}"))));
            }
            for r in m
                .get("required")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                if !r.as_str().is_some_and(|r| p.contains_key(r)) {
                    out.push(format!(
                        "`{shown}` requires {r}, which is not a declared property"
                    ));
                }
            }
        } else if let Some(r) = m.get("required").and_then(Value::as_array)
            && !r.is_empty()
        {
            out.push(format!("`{shown}` requires properties it does not declare"));
        }
        if let Some(i) = m.get("items") {
            stack.push((i, join(&path, "items")));
        }
        if ty.is_some_and(|t| t == "object" || t == "array")
            && (m.contains_key("enum") || m.contains_key("const"))
        {
            out.push(format!("`{shown}` has `enum`/`const` on a non-scalar type"));
        }
        if let Some(e) = m.get("enum") {
            match e.as_array() {
                Some(vals) if !vals.is_empty() => {
                    for v in vals {
                        if !is_scalar(v) || ty.is_some_and(|t| !type_correct(v, t)) {
                            out.push(format!(
                                "`{shown}` has the enum value {} of the wrong type",
                                compact(v)
                            ));
                        }
                    }
                }
                _ => out.push(format!("`{shown}` has an empty or malformed `enum`")),
            }
        }
        if let Some(c) = m.get("const") {
            if !is_scalar(c) || ty.is_some_and(|t| !type_correct(c, t)) {
                out.push(format!(
                    "`{shown}` has the const {} of the wrong type",
                    compact(c)
                ));
            }
            if let Some(Value::Array(e)) = m.get("enum")
                && !e.contains(c)
            {
                out.push(format!("`{shown}` has a `const` outside its `enum`"));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_become_one_of_and_bounds_move() {
        let s = json!({"$schema": "x", "type": "object", "required": ["a"], "properties": {
            "a": {"type": "integer", "format": "uint32", "minimum": 0},
            "b": {"type": ["string", "null"], "description": "B."},
            "c": {"anyOf": [{"$ref": "#/$defs/P"}, {"type": "null"}]}},
            "$defs": {"P": {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]}}});
        let (out, notes) = schema(&s).unwrap();
        assert_eq!(
            out["properties"]["a"],
            json!({"type": "integer", "description": "(minimum: 0)"})
        );
        assert_eq!(
            out["properties"]["b"],
            json!({"description": "B.", "oneOf": [{"type": "string"}, {"type": "null"}]})
        );
        assert_eq!(out["properties"]["c"]["oneOf"][0]["required"], json!(["x"]));
        assert!(out.get("$defs").is_none());
        assert!(notes[0].contains("`minimum` at properties.a"), "{notes:?}");
        assert!(check(&out).is_empty());
    }

    #[test]
    fn every_violation_is_listed() {
        let s = json!({"type": "object", "properties": {
            "m": {"type": "object", "additionalProperties": {"type": "string"}},
            "t": {"type": "array", "prefixItems": [{"type": "string"}]},
            "u": {"anyOf": [{"type": "integer"}, {"type": "number"}]},
            "n": {"not": {"type": "string"}}}});
        let r = schema(&s).unwrap_err();
        assert_eq!(r.len(), 4, "{r:?}");
        let r = schema(&json!({"type": "object", "properties": {"a": {"$ref": "#"}}})).unwrap_err();
        assert!(r[0].contains("recursive"));
    }

    #[test]
    fn the_checker_knows_the_rules() {
        let bad = json!({"type": "object", "oneOf": [{"type": "string"}], "required": ["x"],
            "properties": {"e": {"type": "string", "enum": [1]}, "k": {"type": "array", "const": "a"}}});
        let v = check(&bad);
        assert!(v.len() >= 5, "{v:?}");
    }
}
