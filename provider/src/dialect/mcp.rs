//! The Model Context Protocol: what a `tools/list` entry carries, and the
//! `structuredContent` of a `tools/call` result.
//!
//! Pure functions of the canonical [`ToolDefinition`]; the MCP server
//! (feature `mcp`) and `schema --dialect mcp` both use them.
//!
//! # Rules, and where each comes from
//!
//! - **Fields.** `{name, title?, description, inputSchema, outputSchema,
//!   annotations, _meta}` (MCP specification, *Server features → Tools →
//!   Tool*; `title` and `outputSchema` since protocol 2025-06-18; unknown
//!   fields are ignored by older clients).
//! - **All four hints sent explicitly.** `annotations` always carries
//!   `readOnlyHint`, `destructiveHint`, `idempotentHint` and
//!   `openWorldHint`, plus `title` when the tool has one. MCP's defaults
//!   for a missing `destructiveHint` and `openWorldHint` are `true`
//!   (specification, *ToolAnnotations*), toolprism's are `false`, so
//!   leaving them out would tell a client the opposite of what the tool
//!   declared.
//! - **Icon.** A tool's [`icon`](toolprism_core::ToolInfo::icon) (`#[tool(icon =
//!   "…")]`) goes as `icons: [{src, mimeType?}]` (specification
//!   2025-11-25, *Icon*; SEP-973), with the media type a `data:` URI
//!   names; older clients ignore the field.
//! - **Kind.** The tool's [`ToolKind`](toolprism_core::ToolKind) goes under the
//!   namespaced key `_meta["toolprism/kind"]` (specification, *General
//!   fields → `_meta`*: keys carry a prefix; MCP has no tool kind).
//! - **Task support.** A tool whose calls may run as tasks
//!   ([`TaskSupport`](toolprism_core::TaskSupport), `#[tool(task = "optional")]`)
//!   says so under `_meta["toolprism/taskSupport"]` (`"optional"` or
//!   `"required"`). Not as `execution.taskSupport`: that field belonged to
//!   the tasks of protocol 2025-11-25, which the tasks extension of
//!   2026-07-28 (SEP-2663) replaced with tasks the server decides on, and a
//!   2025-11-25 client reading it would ask for a task in a way no longer
//!   served. Tools that never run as tasks carry no key.
//! - **Schemas.** The canonical schema with `$schema` removed (it trips
//!   some clients: openclaw #67123) and every `format` JSON Schema does
//!   not define removed (schemars writes `uint32`, `int64`, `uint`,
//!   `double`, …; Ajv-based clients such as the MCP Inspector reject or
//!   warn on unknown formats: mempal PR #84, longbridge/developers #1264).
//!   Numeric bounds stay, so `u32` is still `minimum: 0`. Recursive types
//!   keep their `$defs`/`$ref`, which MCP's JSON Schema 2020-12 allows.
//! - **Output schemas whose root is not `type: object`.** Protocol
//!   versions before [`ANY_OUTPUT_ROOT`] (e.g. `2025-11-25`,
//!   `2025-06-18`) require an object root (rmcp #532; the TypeScript
//!   SDK's `ToolSchema` types `outputSchema` as `type: "object"`), so for
//!   them the schema is wrapped as
//!   `{"type":"object","properties":{"value":S},"required":["value"],"additionalProperties":false}`
//!   and the tool is marked `_meta["toolprism/wrapped"] = "value"`; `$defs`
//!   move to the wrapper's root and references into the old root
//!   (`#`, `#/properties/…`) are rewritten to `#/properties/value…`, so
//!   every `$ref` still resolves. From [`ANY_OUTPUT_ROOT`] on (SEP-2106),
//!   any schema is sent as is. [`structured_content`] wraps the value
//!   (`{"value": v}`) exactly when the schema was wrapped.
//! - **Versions** compare as dates (`YYYY-MM-DD`); a version that is not
//!   such a date is treated as the oldest (wrapping is the form every
//!   client accepts).
//!
//! ```
//! use toolprism::dialect::mcp;
//! # let def = toolprism::ToolDefinition::new(
//! #     "count", "Count.",
//! #     serde_json::json!({"type": "object"}),
//! #     serde_json::json!({"type": "integer", "format": "uint32", "minimum": 0}),
//! # ).with_kind(toolprism::ToolKind::Read);
//! // `def.output_schema` is `{"type": "integer", "format": "uint32", "minimum": 0}`.
//! let old = mcp::tool(&def, "2025-11-25");
//! assert_eq!(old["outputSchema"]["properties"]["value"], serde_json::json!({"type": "integer", "minimum": 0}));
//! assert_eq!(old["_meta"]["toolprism/wrapped"], "value");
//! assert_eq!(old["annotations"]["destructiveHint"], false);
//! assert_eq!(mcp::structured_content(&def, 7.into(), "2025-11-25"), serde_json::json!({"value": 7}));
//!
//! let new = mcp::tool(&def, "2026-07-28");
//! assert_eq!(new["outputSchema"], serde_json::json!({"type": "integer", "minimum": 0}));
//! assert_eq!(mcp::structured_content(&def, 7.into(), "2026-07-28"), serde_json::json!(7));
//! ```

use serde_json::{Map, Value, json};

use super::walk;
use toolprism_core::ToolDefinition;

/// The first protocol version whose output schemas may have any root.
pub const ANY_OUTPUT_ROOT: &str = "2026-07-28";

/// The version [`definition`](super::definition) projects for: the one
/// most clients negotiate today (its output roots must be objects).
pub const DEFAULT_PROTOCOL_VERSION: &str = "2025-11-25";

/// The `_meta` key holding the tool's kind.
pub const META_KIND: &str = "toolprism/kind";

/// The `_meta` key present (value `"value"`) when the output schema, and
/// so every `structuredContent`, is wrapped in an object.
pub const META_WRAPPED: &str = "toolprism/wrapped";

/// The `_meta` key naming a tool's [`TaskSupport`](toolprism_core::TaskSupport)
/// (`"optional"` or `"required"`), present only when calls may run as MCP
/// tasks.
pub const META_TASK_SUPPORT: &str = "toolprism/taskSupport";

/// The property a wrapped value lives under.
pub const WRAP_KEY: &str = "value";

/// The `tools/list` entry for `def` in `protocol_version`.
pub fn tool(def: &ToolDefinition, protocol_version: &str) -> Value {
    let mut out = Map::new();
    out.insert("name".into(), def.name.clone().into());
    if let Some(title) = &def.title {
        out.insert("title".into(), title.clone().into());
    }
    if let Some(icon) = &def.icon {
        out.insert("icons".into(), json!([icon_entry(icon)]));
    }
    out.insert("description".into(), def.description.clone().into());
    out.insert("inputSchema".into(), input_schema(def));
    let (output, wrapped) = output_schema(def, protocol_version);
    if declares_output(def) {
        out.insert("outputSchema".into(), output);
    }
    let mut annotations = Map::new();
    if let Some(title) = &def.title {
        annotations.insert("title".into(), title.clone().into());
    }
    let a = def.annotations;
    annotations.insert("readOnlyHint".into(), a.read_only.into());
    annotations.insert("destructiveHint".into(), a.destructive.into());
    annotations.insert("idempotentHint".into(), a.idempotent.into());
    annotations.insert("openWorldHint".into(), a.open_world.into());
    out.insert("annotations".into(), Value::Object(annotations));
    let mut meta = Map::new();
    meta.insert(META_KIND.into(), def.kind.as_str().into());
    if wrapped {
        meta.insert(META_WRAPPED.into(), WRAP_KEY.into());
    }
    if !def.task.is_forbidden() {
        meta.insert(META_TASK_SUPPORT.into(), def.task.as_str().into());
    }
    out.insert("_meta".into(), Value::Object(meta));
    Value::Object(out)
}

/// The advertised input schema: the canonical one, cleaned (see the
/// module docs).
pub fn input_schema(def: &ToolDefinition) -> Value {
    cleaned(&def.input_schema)
}

/// The advertised output schema, and whether it was wrapped.
pub fn output_schema(def: &ToolDefinition, protocol_version: &str) -> (Value, bool) {
    let schema = cleaned(&def.output_schema);
    if !wraps(&def.output_schema, protocol_version) {
        return (schema, false);
    }
    (wrap_schema(schema), true)
}

/// Whether `def` is listed with `outputSchema` and answers with
/// `structuredContent`: every tool written in Rust is. A tool whose value
/// is its content ([`content_value_schema`](toolprism_core::content_value_schema):
/// a tool imported from a server that declares no output schema) and a
/// dynamic tool that declares none (the schema `true`) are listed without
/// it, and their results carry no `structuredContent`: the content is
/// what they return.
pub fn declares_output(def: &ToolDefinition) -> bool {
    def.output_schema != Value::Bool(true)
        && def.output_schema != *toolprism_core::content_value_schema()
}

/// Whether `def`'s output is wrapped as `{"value": …}` in `protocol_version`.
pub fn wraps_output(def: &ToolDefinition, protocol_version: &str) -> bool {
    wraps(&def.output_schema, protocol_version)
}

/// The `structuredContent` of a successful call whose value is `value`:
/// `{"value": value}` when the output schema is wrapped, else `value`.
pub fn structured_content(def: &ToolDefinition, value: Value, protocol_version: &str) -> Value {
    if wraps(&def.output_schema, protocol_version) {
        json!({ WRAP_KEY: value })
    } else {
        value
    }
}

fn wraps(output_schema: &Value, protocol_version: &str) -> bool {
    let object_root = output_schema.get("type").and_then(Value::as_str) == Some("object");
    !object_root && !allows_any_root(protocol_version)
}

/// Whether `protocol_version` accepts output schemas of any root type.
pub fn allows_any_root(protocol_version: &str) -> bool {
    match (date(protocol_version), date(ANY_OUTPUT_ROOT)) {
        (Some(v), Some(first)) => v >= first,
        _ => false,
    }
}

/// `YYYY-MM-DD` as a comparable number; `None` when it is not one.
fn date(v: &str) -> Option<u32> {
    let b = v.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    let num = |r: std::ops::Range<usize>| -> Option<u32> {
        let s = &v[r];
        s.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| s.parse().ok())
            .flatten()
    };
    let (y, m, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    ((1..=12).contains(&m) && (1..=31).contains(&d)).then_some(y * 10_000 + m * 100 + d)
}

/// An `Icon` of MCP: the source, and the media type a `data:` URI names.
fn icon_entry(src: &str) -> Value {
    let mime = src
        .strip_prefix("data:")
        .and_then(|rest| rest.split([';', ',']).next())
        .filter(|mime| !mime.is_empty());
    match mime {
        Some(mime) => json!({"src": src, "mimeType": mime}),
        None => json!({"src": src}),
    }
}

fn cleaned(schema: &Value) -> Value {
    // A schema too deep to walk is sent as it is, minus `$schema`: MCP has
    // no refusal, and the registry's own validation still applies.
    walk::clean(schema).unwrap_or_else(|_| {
        let mut s = schema.clone();
        if let Value::Object(m) = &mut s {
            m.remove("$schema");
        }
        s
    })
}

/// Wraps a (cleaned) schema as the object `{"value": schema}`.
fn wrap_schema(mut schema: Value) -> Value {
    let defs = match &mut schema {
        Value::Object(m) => m.remove("$defs"),
        _ => None,
    };
    // References into the old root now point under `properties.value`;
    // `#/$defs/…` stays valid because `$defs` moves to the wrapper.
    let mut rebase = |_: &str, node: &mut Map<String, Value>| {
        if let Some(Value::String(r)) = node.get_mut("$ref")
            && let Some(pointer) = r.strip_prefix('#')
            && !pointer.starts_with("/$defs/")
        {
            *r = format!("#/properties/{WRAP_KEY}{pointer}");
        }
    };
    let _ = walk::visit_mut(&mut schema, &mut rebase);
    let mut defs = defs;
    if let Some(Value::Object(d)) = &mut defs {
        for def in d.values_mut() {
            let _ = walk::visit_mut(def, &mut rebase);
        }
    }
    let mut out = Map::new();
    out.insert("type".into(), "object".into());
    let mut props = Map::new();
    props.insert(WRAP_KEY.into(), schema);
    out.insert("properties".into(), Value::Object(props));
    out.insert("required".into(), json!([WRAP_KEY]));
    out.insert("additionalProperties".into(), false.into());
    if let Some(d) = defs {
        out.insert("$defs".into(), d);
    }
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolprism_core::{ToolAnnotations, ToolKind};

    fn def(output: Value) -> ToolDefinition {
        ToolDefinition::new(
            "t",
            "d",
            json!({"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object"}),
            output,
        )
        .with_title("T")
        .with_kind(ToolKind::Search)
        .with_annotations(ToolAnnotations::NONE.with_read_only(true))
    }

    #[test]
    fn dates_compare_and_garbage_is_oldest() {
        assert!(allows_any_root("2026-07-28"));
        assert!(allows_any_root("2027-01-01"));
        assert!(!allows_any_root("2025-11-25"));
        assert!(!allows_any_root("2025-06-18"));
        for bad in [
            "",
            "latest",
            "2026-7-28",
            "2026-13-01",
            "２０２６-07-28",
            "2026-07-28x",
        ] {
            assert!(!allows_any_root(bad), "{bad}");
        }
    }

    #[test]
    fn an_icon_goes_with_the_media_type_a_data_uri_names() {
        let mut d = def(json!({"type": "object"}));
        d.icon = Some("data:image/svg+xml;base64,PHN2Zy8+".into());
        assert_eq!(
            tool(&d, "2025-11-25")["icons"],
            json!([{"src": "data:image/svg+xml;base64,PHN2Zy8+", "mimeType": "image/svg+xml"}])
        );
        d.icon = Some("https://example.com/icon.png".into());
        assert_eq!(
            tool(&d, "2025-11-25")["icons"],
            json!([{"src": "https://example.com/icon.png"}])
        );
    }

    #[test]
    fn task_support_is_meta_only_when_calls_may_be_tasks() {
        let mut d = def(json!({"type": "object"}));
        assert!(
            tool(&d, "2026-07-28")["_meta"]
                .get(META_TASK_SUPPORT)
                .is_none()
        );
        for (support, word) in [
            (toolprism_core::TaskSupport::Optional, "optional"),
            (toolprism_core::TaskSupport::Required, "required"),
        ] {
            d.task = support;
            for version in ["2025-11-25", "2026-07-28"] {
                let t = tool(&d, version);
                assert_eq!(t["_meta"][META_TASK_SUPPORT], word);
                assert!(t.get("execution").is_none());
            }
        }
    }

    #[test]
    fn every_field_and_hint_is_sent() {
        let t = tool(&def(json!({"type": "object"})), "2025-11-25");
        assert_eq!(
            t,
            json!({
                "name": "t", "title": "T", "description": "d",
                "inputSchema": {"type": "object"},
                "outputSchema": {"type": "object"},
                "annotations": {"title": "T", "readOnlyHint": true, "destructiveHint": false,
                    "idempotentHint": false, "openWorldHint": false},
                "_meta": {"toolprism/kind": "search"}
            })
        );
    }

    #[test]
    fn wrapping_keeps_recursive_refs_resolvable() {
        // A recursive enum at the root: `#` refers to the root itself.
        let out = json!({"oneOf": [{"type": "null"}, {"type": "array", "items": {"$ref": "#"}},
            {"$ref": "#/$defs/Leaf"}], "$defs": {"Leaf": {"type": "object", "properties": {"up": {"$ref": "#"}}}}});
        let (s, wrapped) = output_schema(&def(out), "2025-06-18");
        assert!(wrapped);
        assert_eq!(
            s["properties"]["value"]["oneOf"][1]["items"]["$ref"],
            "#/properties/value"
        );
        assert_eq!(s["properties"]["value"]["oneOf"][2]["$ref"], "#/$defs/Leaf");
        assert_eq!(
            s["$defs"]["Leaf"]["properties"]["up"]["$ref"],
            "#/properties/value"
        );
        assert!(s["properties"]["value"].get("$defs").is_none());
        assert_eq!(
            walk::resolve(&s, "#/properties/value").unwrap()["oneOf"][0]["type"],
            "null"
        );
    }
}
