//! One checker per dialect: its documented rules, written again here
//! (independently of the transforms) and run on every snapshot, so a
//! transform bug fails a test instead of only changing a snapshot.

#![allow(dead_code)]

use serde_json::{Map, Value};

/// Every subschema of `schema` with its path (iterative).
pub(crate) fn subschemas(schema: &Value) -> Vec<(String, &Value)> {
    const SINGLE: &[&str] = &[
        "items",
        "additionalProperties",
        "not",
        "if",
        "then",
        "else",
        "contains",
        "propertyNames",
        "unevaluatedItems",
        "unevaluatedProperties",
        "additionalItems",
    ];
    const LISTS: &[&str] = &["anyOf", "oneOf", "allOf", "prefixItems"];
    const MAPS: &[&str] = &[
        "properties",
        "$defs",
        "definitions",
        "patternProperties",
        "dependentSchemas",
    ];
    let mut out = Vec::new();
    let mut stack = vec![(String::from("(root)"), schema)];
    while let Some((path, node)) = stack.pop() {
        out.push((path.clone(), node));
        let Value::Object(m) = node else { continue };
        for (k, v) in m {
            if SINGLE.contains(&k.as_str()) {
                // `additionalProperties: false` is a rule, not a schema to check.
                if k == "additionalProperties" && v.is_boolean() {
                    continue;
                }
                stack.push((format!("{path}.{k}"), v));
            } else if LISTS.contains(&k.as_str()) {
                for (i, b) in v.as_array().into_iter().flatten().enumerate() {
                    stack.push((format!("{path}.{k}[{i}]"), b));
                }
            } else if MAPS.contains(&k.as_str()) {
                for (n, b) in v.as_object().into_iter().flatten() {
                    stack.push((format!("{path}.{k}.{n}"), b));
                }
            }
        }
    }
    out
}

fn obj(v: &Value) -> Option<&Map<String, Value>> {
    v.as_object()
}

fn resolves(root: &Value, r: &str) -> bool {
    match r.strip_prefix('#') {
        Some("") => true,
        Some(p) => root.pointer(p).is_some(),
        None => false,
    }
}

fn has_recursion(root: &Value) -> bool {
    subschemas(root).iter().any(|(_, s)| {
        let Some(r) = s.get("$ref").and_then(Value::as_str) else {
            return false;
        };
        if r == "#" {
            return true;
        }
        // A definition that refers to itself, directly or not.
        let mut seen = vec![r.to_owned()];
        let mut todo = vec![r.to_owned()];
        while let Some(t) = todo.pop() {
            let Some(target) = root.pointer(t.trim_start_matches('#')) else {
                continue;
            };
            for (_, s2) in subschemas(target) {
                if let Some(r2) = s2.get("$ref").and_then(Value::as_str) {
                    if r2 == r || r2 == "#" {
                        return true;
                    }
                    if !seen.contains(&r2.to_owned()) {
                        seen.push(r2.to_owned());
                        todo.push(r2.to_owned());
                    }
                }
            }
        }
        false
    })
}

const STANDARD_FORMATS: &[&str] = &[
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

fn common_json_schema_rules(schema: &Value, out: &mut Vec<String>, who: &str) {
    if schema.get("$schema").is_some() {
        out.push(format!("{who}: `$schema` left in"));
    }
    for (path, s) in subschemas(schema) {
        if let Some(f) = s.get("format").and_then(Value::as_str)
            && !STANDARD_FORMATS.contains(&f)
        {
            out.push(format!("{who}: {path}: non-standard format {f}"));
        }
        if let Some(r) = s.get("$ref").and_then(Value::as_str)
            && !resolves(schema, r)
        {
            out.push(format!("{who}: {path}: $ref {r} does not resolve"));
        }
    }
}

/// OpenAI (both shapes): strict views obey Structured Outputs' rules;
/// `strict: false` always comes with a note.
pub(crate) fn openai(function: &Value, notes: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let params = &function["parameters"];
    for k in ["name", "description", "parameters", "strict"] {
        if function.get(k).is_none() {
            out.push(format!("openai: missing `{k}`"));
        }
    }
    common_json_schema_rules(params, &mut out, "openai");
    if function["strict"] == Value::Bool(false) {
        if !notes
            .iter()
            .any(|n| n.starts_with("strict: false, because "))
        {
            out.push("openai: strict: false without a note saying why".into());
        }
        return out;
    }
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
        "format",
        "multipleOf",
        "maximum",
        "exclusiveMaximum",
        "minimum",
        "exclusiveMinimum",
        "minItems",
        "maxItems",
    ];
    const FORMATS: &[&str] = &[
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
    if params["type"] != "object" || params.get("anyOf").is_some() {
        out.push("openai: the root is not a plain object".into());
    }
    let mut properties = 0;
    let mut enums = 0;
    for (path, s) in subschemas(params) {
        let Some(m) = obj(s) else {
            out.push(format!("openai: {path}: a boolean schema"));
            continue;
        };
        for k in m.keys() {
            if !SUPPORTED.contains(&k.as_str()) {
                out.push(format!("openai: {path}: unsupported keyword {k}"));
            }
            if k == "$defs" && path != "(root)" {
                out.push(format!("openai: {path}: nested $defs"));
            }
        }
        if let Some(f) = m.get("format").and_then(Value::as_str)
            && !FORMATS.contains(&f)
        {
            out.push(format!("openai: {path}: format {f} not supported"));
        }
        if m.contains_key("$ref") && m.len() > 1 {
            out.push(format!("openai: {path}: $ref with siblings"));
        }
        let is_object = m.get("type").is_some_and(|t| {
            t == "object" || t.as_array().is_some_and(|a| a.contains(&"object".into()))
        }) || m.contains_key("properties");
        if is_object {
            if m.get("additionalProperties") != Some(&Value::Bool(false)) {
                out.push(format!(
                    "openai: {path}: object without additionalProperties: false"
                ));
            }
            let props: Vec<&String> = m
                .get("properties")
                .and_then(Value::as_object)
                .map(|p| p.keys().collect())
                .unwrap_or_default();
            properties += props.len();
            let req: Vec<&str> = m
                .get("required")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            let mut a: Vec<&str> = props.iter().map(|s| s.as_str()).collect();
            let mut b = req.clone();
            a.sort();
            b.sort();
            if a != b {
                out.push(format!(
                    "openai: {path}: required {b:?} is not every property {a:?}"
                ));
            }
        }
        if let Some(e) = m.get("enum").and_then(Value::as_array) {
            enums += e.len();
        }
    }
    if properties > 5000 {
        out.push("openai: over 5000 properties".into());
    }
    if enums > 1000 {
        out.push("openai: over 1000 enum values".into());
    }
    out
}

/// Anthropic: an object root; strict views closed, single-typed, without
/// the keywords strict tool use lacks, and not recursive.
pub(crate) fn anthropic(tool: &Value, strict: bool) -> Vec<String> {
    let mut out = Vec::new();
    let schema = &tool["input_schema"];
    if schema["type"] != "object" {
        out.push("anthropic: input_schema root is not an object".into());
    }
    if !tool["name"].is_string() || !tool["description"].is_string() {
        out.push("anthropic: name/description missing".into());
    }
    common_json_schema_rules(schema, &mut out, "anthropic");
    if !strict {
        return out;
    }
    if tool["strict"] != Value::Bool(true) {
        out.push("anthropic-strict: strict is not true".into());
    }
    if has_recursion(schema) {
        out.push("anthropic-strict: recursive".into());
    }
    const FORBIDDEN: &[&str] = &[
        "oneOf",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "minLength",
        "maxLength",
        "maxItems",
        "uniqueItems",
        "prefixItems",
        "not",
        "if",
        "patternProperties",
        "default",
        "examples",
        "pattern",
    ];
    const FORMATS: &[&str] = &[
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
    for (path, s) in subschemas(schema) {
        let Some(m) = obj(s) else {
            out.push(format!("anthropic-strict: {path}: a boolean schema"));
            continue;
        };
        for k in FORBIDDEN {
            if m.contains_key(*k) {
                out.push(format!("anthropic-strict: {path}: {k}"));
            }
        }
        if m.get("type").is_some_and(Value::is_array) {
            out.push(format!("anthropic-strict: {path}: a type array"));
        }
        if m.get("type") == Some(&Value::String("object".into()))
            && (m.get("additionalProperties") != Some(&Value::Bool(false))
                || !m.contains_key("properties"))
        {
            out.push(format!("anthropic-strict: {path}: object not closed"));
        }
        if let Some(n) = m.get("minItems")
            && n.as_u64().is_none_or(|n| n > 1)
        {
            out.push(format!("anthropic-strict: {path}: minItems {n}"));
        }
        if let Some(f) = m.get("format").and_then(Value::as_str)
            && !FORMATS.contains(&f)
        {
            out.push(format!("anthropic-strict: {path}: format {f}"));
        }
        if m.contains_key("$ref") && m.len() > 1 {
            out.push(format!("anthropic-strict: {path}: $ref with siblings"));
        }
        for v in m
            .get("enum")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if v.is_object() || v.is_array() {
                out.push(format!(
                    "anthropic-strict: {path}: non-primitive enum value"
                ));
            }
        }
    }
    out
}

/// Gemini `parametersJsonSchema`: only the documented keywords.
pub(crate) fn gemini(decl: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let schema = &decl["parametersJsonSchema"];
    if schema["type"] != "object" {
        out.push("gemini: root not an object".into());
    }
    if decl.get("parameters").is_some() {
        out.push("gemini: both parameters and parametersJsonSchema".into());
    }
    common_json_schema_rules(schema, &mut out, "gemini");
    const SUPPORTED: &[&str] = &[
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
    for (path, s) in subschemas(schema) {
        let Some(m) = obj(s) else {
            if path.ends_with("additionalProperties") {
                continue;
            }
            out.push(format!("gemini: {path}: a boolean schema"));
            continue;
        };
        for k in m.keys() {
            if !SUPPORTED.contains(&k.as_str()) {
                out.push(format!("gemini: {path}: unsupported keyword {k}"));
            }
        }
        for v in m
            .get("enum")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if !(v.is_string() || v.is_number()) {
                out.push(format!(
                    "gemini: {path}: enum value {v} is not a string or number"
                ));
            }
        }
        if m.contains_key("$ref") && m.keys().any(|k| !k.starts_with('$')) {
            out.push(format!("gemini: {path}: non-$ keywords beside $ref"));
        }
    }
    out
}

/// Gemini OpenAPI `parameters`: the `Schema` object's fields only.
pub(crate) fn gemini_openapi(decl: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let schema = &decl["parameters"];
    if schema["type"] != "OBJECT" {
        out.push("gemini-openapi: root not OBJECT".into());
    }
    const FIELDS: &[&str] = &[
        "type",
        "format",
        "title",
        "description",
        "nullable",
        "enum",
        "maxItems",
        "minItems",
        "properties",
        "required",
        "minProperties",
        "maxProperties",
        "minLength",
        "maxLength",
        "pattern",
        "example",
        "anyOf",
        "propertyOrdering",
        "default",
        "items",
        "minimum",
        "maximum",
    ];
    const TYPES: &[&str] = &[
        "STRING", "NUMBER", "INTEGER", "BOOLEAN", "ARRAY", "OBJECT", "NULL",
    ];
    for (path, s) in subschemas(schema) {
        let Some(m) = obj(s) else {
            out.push(format!("gemini-openapi: {path}: a boolean schema"));
            continue;
        };
        for k in m.keys() {
            if !FIELDS.contains(&k.as_str()) {
                out.push(format!("gemini-openapi: {path}: field {k}"));
            }
        }
        if let Some(t) = m.get("type")
            && !t.as_str().is_some_and(|t| TYPES.contains(&t))
        {
            out.push(format!("gemini-openapi: {path}: type {t}"));
        }
        for v in m
            .get("enum")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if !v.is_string() {
                out.push(format!(
                    "gemini-openapi: {path}: enum value {v} not a string"
                ));
            }
        }
        if m.get("nullable").is_some_and(|n| !n.is_boolean()) {
            out.push(format!("gemini-openapi: {path}: nullable not a boolean"));
        }
        if let Some(f) = m.get("format")
            && f != "date-time"
        {
            out.push(format!("gemini-openapi: {path}: format {f}"));
        }
    }
    out
}

/// MCP: every field, all four hints, the kind, clean schemas, an object
/// output root before 2026-07-28 and the wrap marker to match.
pub(crate) fn mcp(tool: &Value, version_requires_object: bool) -> Vec<String> {
    let mut out = Vec::new();
    for k in [
        "name",
        "description",
        "inputSchema",
        "outputSchema",
        "annotations",
        "_meta",
    ] {
        if tool.get(k).is_none() {
            out.push(format!("mcp: missing {k}"));
        }
    }
    for h in [
        "readOnlyHint",
        "destructiveHint",
        "idempotentHint",
        "openWorldHint",
    ] {
        if !tool["annotations"][h].is_boolean() {
            out.push(format!("mcp: hint {h} not sent"));
        }
    }
    if !tool["_meta"]["toolprism/kind"].is_string() {
        out.push("mcp: no kind under _meta".into());
    }
    common_json_schema_rules(&tool["inputSchema"], &mut out, "mcp input");
    common_json_schema_rules(&tool["outputSchema"], &mut out, "mcp output");
    if tool["inputSchema"]["type"] != "object" {
        out.push("mcp: input root not an object".into());
    }
    let wrapped = tool["_meta"].get("toolprism/wrapped").is_some();
    if version_requires_object && tool["outputSchema"]["type"] != "object" {
        out.push("mcp: output root not an object for a version that requires one".into());
    }
    if !version_requires_object && wrapped {
        out.push("mcp: wrapped although the version takes any root".into());
    }
    if wrapped {
        let o = &tool["outputSchema"];
        if o["required"] != serde_json::json!(["value"]) || o["additionalProperties"] != false {
            out.push("mcp: the wrapper is not {value} closed".into());
        }
        if o["properties"]["value"].get("$defs").is_some() {
            out.push("mcp: $defs left inside the wrapped schema".into());
        }
    }
    out
}

/// DSH: the subset's rules (see `dsh-tool-contract.md`, "Schema subset").
pub(crate) fn dsh(def: &Value) -> Vec<String> {
    let mut out = Vec::new();
    for (label, schema) in [
        ("parameters", &def["parameters"]),
        ("output", &def["output"]["schema"]),
    ] {
        dsh_schema(schema, label, &mut out);
    }
    out
}

fn dsh_schema(schema: &Value, label: &str, out: &mut Vec<String>) {
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
    const TYPES: &[&str] = &[
        "object", "array", "string", "number", "integer", "boolean", "null",
    ];
    const CONSTRAINTS: &[&str] = &[
        "properties",
        "required",
        "additionalProperties",
        "items",
        "enum",
        "const",
    ];
    let scalar_type = |v: &Value| match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_f64() => "number",
        Value::Number(_) => "integer",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    };
    for (path, s) in subschemas(schema) {
        let at = format!("dsh {label}: {path}");
        let Some(m) = obj(s) else {
            out.push(format!("{at}: a boolean schema"));
            continue;
        };
        for k in m.keys() {
            if !ALLOWED.contains(&k.as_str()) {
                out.push(format!("{at}: keyword {k}"));
            }
        }
        let ty = m.get("type").and_then(Value::as_str);
        if m.get("type").is_some() && !ty.is_some_and(|t| TYPES.contains(&t)) {
            out.push(format!("{at}: type is not one type name"));
        }
        if let Some(o) = m.get("oneOf") {
            if ty.is_some() {
                out.push(format!("{at}: type and oneOf"));
            }
            if o.as_array().is_none_or(|a| a.len() < 2) {
                out.push(format!("{at}: oneOf of fewer than 2"));
            }
            if CONSTRAINTS.iter().any(|c| m.contains_key(*c)) {
                out.push(format!("{at}: constraint beside oneOf"));
            }
        } else if ty.is_none() && CONSTRAINTS.iter().any(|c| m.contains_key(*c)) {
            out.push(format!("{at}: constraints without type or oneOf"));
        }
        if m.get("additionalProperties")
            .is_some_and(|a| !a.is_boolean())
        {
            out.push(format!("{at}: additionalProperties not boolean"));
        }
        for k in ["properties", "required", "additionalProperties"] {
            if m.contains_key(k) && ty != Some("object") {
                out.push(format!("{at}: {k} on a non-object"));
            }
        }
        if m.contains_key("items") && ty != Some("array") {
            out.push(format!("{at}: items on a non-array"));
        }
        let props = m.get("properties").and_then(Value::as_object);
        for r in m
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if !r
                .as_str()
                .is_some_and(|r| props.is_some_and(|p| p.contains_key(r)))
            {
                out.push(format!("{at}: required {r} undeclared"));
            }
        }
        let type_ok = |v: &Value| {
            let vt = scalar_type(v);
            ty.is_none_or(|t| vt == t || (t == "number" && vt == "integer"))
                && !matches!(vt, "object" | "array")
        };
        if let Some(e) = m.get("enum") {
            match e.as_array() {
                Some(a) if !a.is_empty() => {
                    if !a.iter().all(type_ok) {
                        out.push(format!("{at}: enum values not scalars of the type"));
                    }
                }
                _ => out.push(format!("{at}: empty enum")),
            }
        }
        if let Some(c) = m.get("const") {
            if !type_ok(c) {
                out.push(format!("{at}: const not a scalar of the type"));
            }
            if m.get("enum")
                .and_then(Value::as_array)
                .is_some_and(|e| !e.contains(c))
            {
                out.push(format!("{at}: const outside enum"));
            }
        }
        if m.contains_key("$ref") || m.contains_key("$defs") {
            out.push(format!("{at}: references"));
        }
    }
}
