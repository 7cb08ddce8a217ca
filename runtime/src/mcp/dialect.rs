//! Stand-in for `toolprism::dialect::mcp` (issue 12, branch `dialects`) until
//! it is merged: the same two functions, with the rules decided for it, so
//! the server can be written against their names. Replaced by
//! `crate::dialect::mcp` on merge.
//!
//! - `tool`: `{name, title?, description, inputSchema, outputSchema,
//!   annotations: {all four hints}, _meta: {"toolprism/kind"}}`, `$schema`
//!   and non-standard `format`s removed; an output schema whose root is not
//!   `type: "object"` is wrapped as `{"type":"object","properties":{"value":
//!   <schema>},"required":["value"],"additionalProperties":false}` with
//!   `_meta["toolprism/wrapped"] = "value"` for protocol versions before
//!   `2026-07-28`.
//! - `structured_content`: the value, or `{"value": v}` when `tool` wrapped
//!   the schema for that version.

use serde_json::{Map, Value, json};

use crate::ToolDefinition;

/// The first protocol version whose output schemas may have any root.
const ANY_ROOT_SINCE: &str = "2026-07-28";

/// The formats JSON Schema 2020-12 defines; schemars' `uint32`, `int64`,
/// `double`… are not among them and make Ajv-based clients warn.
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

/// Whether `protocol_version` needs an object root (every version before
/// 2026-07-28; versions are dates, so they compare as strings).
fn needs_object_root(protocol_version: &str) -> bool {
    protocol_version < ANY_ROOT_SINCE
}

fn has_object_root(schema: &Value) -> bool {
    schema.get("type").and_then(Value::as_str) == Some("object")
}

/// The `tools/list` entry of `def` for a client on `protocol_version`.
pub(crate) fn tool(def: &ToolDefinition, protocol_version: &str) -> Value {
    let input = clean(def.input_schema.clone());
    let mut output = clean(def.output_schema.clone());
    let mut meta = Map::new();
    meta.insert("toolprism/kind".into(), json!(def.kind.as_str()));
    if needs_object_root(protocol_version) && !has_object_root(&output) {
        output = wrap(output);
        meta.insert("toolprism/wrapped".into(), json!("value"));
    }
    let mut entry = Map::new();
    entry.insert("name".into(), json!(def.name));
    if let Some(title) = &def.title {
        entry.insert("title".into(), json!(title));
    }
    entry.insert("description".into(), json!(def.description));
    entry.insert("inputSchema".into(), input);
    entry.insert("outputSchema".into(), output);
    entry.insert(
        "annotations".into(),
        json!({
            "readOnlyHint": def.annotations.read_only,
            "destructiveHint": def.annotations.destructive,
            "idempotentHint": def.annotations.idempotent,
            "openWorldHint": def.annotations.open_world,
        }),
    );
    entry.insert("_meta".into(), Value::Object(meta));
    Value::Object(entry)
}

/// The `structuredContent` of a successful call of `def` returning `value`.
pub(crate) fn structured_content(
    def: &ToolDefinition,
    value: Value,
    protocol_version: &str,
) -> Value {
    if needs_object_root(protocol_version) && !has_object_root(&def.output_schema) {
        json!({ "value": value })
    } else {
        value
    }
}

/// `schema` under `properties.value`, its `$defs` kept at the root so that
/// `#/$defs/…` references still resolve.
fn wrap(mut schema: Value) -> Value {
    let defs = schema.as_object_mut().and_then(|o| o.remove("$defs"));
    let mut wrapper = json!({
        "type": "object",
        "properties": { "value": schema },
        "required": ["value"],
        "additionalProperties": false,
    });
    if let Some(defs) = defs {
        wrapper["$defs"] = defs;
    }
    wrapper
}

/// Removes `$schema` and non-standard `format`s from every subschema.
fn clean(mut schema: Value) -> Value {
    if let Some(root) = schema.as_object_mut() {
        root.remove("$schema");
    }
    clean_subschema(&mut schema);
    schema
}

fn clean_subschema(schema: &mut Value) {
    let Some(object) = schema.as_object_mut() else {
        return;
    };
    if object
        .get("format")
        .and_then(Value::as_str)
        .is_some_and(|f| !STANDARD_FORMATS.contains(&f))
    {
        object.remove("format");
    }
    for (key, child) in object.iter_mut() {
        match key.as_str() {
            "properties" | "patternProperties" | "$defs" | "definitions" | "dependentSchemas" => {
                if let Some(map) = child.as_object_mut() {
                    map.values_mut().for_each(clean_subschema);
                }
            }
            "items" | "prefixItems" | "anyOf" | "oneOf" | "allOf" => match child {
                Value::Array(list) => list.iter_mut().for_each(clean_subschema),
                other => clean_subschema(other),
            },
            "additionalProperties"
            | "unevaluatedProperties"
            | "unevaluatedItems"
            | "additionalItems"
            | "contains"
            | "propertyNames"
            | "not"
            | "if"
            | "then"
            | "else" => clean_subschema(child),
            _ => {}
        }
    }
}
