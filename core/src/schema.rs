//! Input and output JSON Schemas, derived once per tool type, and the
//! validators compiled from them.
//!
//! Inputs use schemars' *deserialize* contract (what the model may send);
//! outputs use the *serialize* contract (what `execute` produces): a field
//! with `#[serde(default)]` is optional in the input schema but always
//! present, hence required, in the output schema (C1 in `docs/contract.md`).
//!
//! ```
//! #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
//! struct Out { count: u32, #[serde(default)] pages: u32 }
//!
//! let input = toolprism::schema::input_schema::<Out>();
//! let output = toolprism::schema::output_schema::<Out>();
//! assert_eq!(input["required"], serde_json::json!(["count"]));
//! assert_eq!(output["required"], serde_json::json!(["count", "pages"]));
//! ```

use std::collections::BTreeSet;
use std::fmt::Write;

use jsonschema::Validator;
use jsonschema::error::ValidationErrorKind;
use jsonschema::paths::LocationSegment;
use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde_json::Value;

use crate::definition::{ToolDefinition, ToolInfo};
use crate::path::{JsonPath, Keys};
use crate::text::push_capped;

fn settings() -> SchemaSettings {
    SchemaSettings::draft2020_12().with(|s| {
        // Many clients choke on `$ref`; recursive types still use `$defs`.
        s.inline_subschemas = true;
    })
}

/// The JSON Schema of `T` as an input (deserialize contract).
pub fn input_schema<T: JsonSchema>() -> Value {
    let schema = settings()
        .for_deserialize()
        .into_generator()
        .into_root_schema_for::<T>();
    schema.to_value()
}

/// The JSON Schema of `T` as an output (serialize contract).
pub fn output_schema<T: JsonSchema>() -> Value {
    let schema = settings()
        .for_serialize()
        .into_generator()
        .into_root_schema_for::<T>();
    schema.to_value()
}

/// A tool's schemas and compiled validators, built once per tool type.
pub(crate) struct Compiled {
    pub(crate) definition: ToolDefinition,
    pub(crate) input: Validator,
    pub(crate) output: Validator,
    /// The property names the output schema declares: the only keys a path
    /// into a value may show.
    pub(crate) output_names: BTreeSet<String>,
}

/// A tool's schemas compiled: `input_schema` (of the arguments type named
/// `args_type`) must have an object root, since a model always sends an
/// object.
pub(crate) fn compile(
    info: &ToolInfo,
    args_type: &str,
    input_schema: Value,
    output_schema: Value,
) -> Result<Compiled, String> {
    compile_definition(
        ToolDefinition {
            name: info.name.to_owned(),
            title: info.title.map(str::to_owned),
            icon: info.icon.map(str::to_owned),
            description: info.description.to_owned(),
            input_schema,
            output_schema,
            kind: info.kind,
            annotations: info.annotations,
            task: info.task,
        },
        args_type,
    )
}

/// [`compile`] for a definition that is data (a dynamic tool's): its
/// arguments type is named `args_type` in messages.
pub(crate) fn compile_definition(
    definition: ToolDefinition,
    args_type: &str,
) -> Result<Compiled, String> {
    let info = &definition;
    let input_schema = &definition.input_schema;
    let output_schema = &definition.output_schema;
    let root_type = input_schema.get("type").and_then(Value::as_str);
    if root_type != Some("object") {
        return Err(format!(
            "tool \"{}\": the arguments type `{}` must be a struct or map (its input schema root is {}, but a model always sends a JSON object)",
            info.name,
            args_type,
            root_type.map_or_else(|| "untyped".to_owned(), |t| format!("`{t}`"))
        ));
    }
    let input = jsonschema::validator_for(input_schema).map_err(|e| {
        format!(
            "tool \"{}\": its input schema does not compile: {e}",
            info.name
        )
    })?;
    let output = jsonschema::validator_for(output_schema).map_err(|e| {
        format!(
            "tool \"{}\": its output schema does not compile: {e}",
            info.name
        )
    })?;
    let output_names = declared_names(output_schema);
    Ok(Compiled {
        output_names,
        definition,
        input,
        output,
    })
}

/// At most this many violations are named in one message.
const MAX_VIOLATIONS: usize = 8;
/// A violation message is cut at this many bytes, so a huge input is never echoed.
const MAX_VIOLATION_LEN: usize = 240;

/// Every violation of `instance` against `validator`, as one message, or
/// `None` when it is valid. Paths are rooted at `root` (`arguments` or
/// `value`), like `value.rows[3].phone`, and write object keys as `keys`
/// says: a value's own keys never appear in a message about it (see
/// [`crate::path`]), nor do the undeclared keys an `additionalProperties`
/// violation lists.
pub(crate) fn violations(
    validator: &Validator,
    instance: &Value,
    root: &str,
    keys: Keys<'_>,
) -> Option<String> {
    if validator.is_valid(instance) {
        return None;
    }
    let mut out = String::new();
    let mut count = 0usize;
    for error in validator.iter_errors(instance) {
        count += 1;
        if count > MAX_VIOLATIONS {
            continue;
        }
        if count > 1 {
            out.push_str("; ");
        }
        let path = instance_path(root, instance, error.instance_path().iter(), keys);
        let quoted = format!("\"{path}\"");
        let message = match (error.kind(), keys) {
            (_, Keys::Shown) => error.masked_with(quoted.as_str()).to_string(),
            (
                ValidationErrorKind::AdditionalProperties { unexpected }
                | ValidationErrorKind::UnevaluatedProperties { unexpected },
                _,
            ) => format!(
                "{quoted} has {} propert{} the schema does not declare, which it does not allow",
                unexpected.len(),
                if unexpected.len() == 1 { "y" } else { "ies" }
            ),
            (ValidationErrorKind::PropertyNames { .. }, _) => {
                format!("{quoted} has a property name that the schema's `propertyNames` refuses")
            }
            _ => error.masked_with(quoted.as_str()).to_string(),
        };
        if !message.contains(&quoted) {
            let _ = write!(out, "at {quoted}: ");
        }
        push_capped(&mut out, &message, MAX_VIOLATION_LEN);
    }
    if count > MAX_VIOLATIONS {
        let _ = write!(out, "; and {} more", count - MAX_VIOLATIONS);
    }
    Some(out)
}

/// The path of a violation, following `instance` to find each key's
/// position in its object.
fn instance_path<'a>(
    root: &str,
    instance: &Value,
    segments: impl Iterator<Item = LocationSegment<'a>>,
    keys: Keys<'_>,
) -> String {
    let mut path = JsonPath::new(root);
    let mut at = Some(instance);
    for segment in segments {
        match segment {
            LocationSegment::Index(i) => {
                path.index(i);
                at = at.and_then(|v| v.get(i));
            }
            LocationSegment::Property(p) => {
                let position = match at {
                    Some(Value::Object(map)) => map.keys().position(|k| k == &*p).unwrap_or(0),
                    _ => 0,
                };
                path.key(Some(&p), position, keys);
                at = at.and_then(|v| v.get(&*p));
            }
        }
    }
    path.into_string()
}

/// Every property name a schema declares anywhere (`properties` keys and
/// `required` entries): the names a path into a value may show.
fn declared_names(schema: &Value) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let mut stack = vec![schema];
    while let Some(node) = stack.pop() {
        match node {
            Value::Object(map) => {
                if let Some(Value::Object(props)) = map.get("properties") {
                    names.extend(props.keys().cloned());
                }
                if let Some(Value::Array(required)) = map.get("required") {
                    names.extend(required.iter().filter_map(Value::as_str).map(str::to_owned));
                }
                stack.extend(map.values());
            }
            Value::Array(items) => stack.extend(items),
            _ => {}
        }
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
    struct Row {
        name: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        phone: Option<String>,
    }

    #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
    struct Rows {
        rows: Vec<Row>,
        #[serde(default)]
        total: u32,
    }

    #[test]
    fn violations_name_paths_rooted_at_the_label() {
        let schema = output_schema::<Rows>();
        let v = jsonschema::validator_for(&schema).unwrap();
        let msg = violations(
            &v,
            &json!({"rows": [{"name": "a"}, {"name": 3}], "total": 1}),
            "value",
            Keys::Shown,
        )
        .unwrap();
        assert!(msg.contains("\"value.rows[1].name\""), "{msg}");
        let msg = violations(&v, &json!({"rows": []}), "value", Keys::Shown).unwrap();
        assert!(msg.contains("total"), "{msg}");
        assert!(violations(&v, &json!({"rows": [], "total": 0}), "value", Keys::Shown).is_none());
    }

    #[test]
    fn messages_never_echo_a_huge_input() {
        let schema = input_schema::<Rows>();
        let v = jsonschema::validator_for(&schema).unwrap();
        let huge = "x".repeat(100_000);
        let msg = violations(&v, &json!({"rows": huge}), "arguments", Keys::Shown).unwrap();
        assert!(msg.len() < 1_000, "{}", msg.len());
    }

    #[test]
    fn a_values_keys_stay_out_of_messages() {
        #[derive(serde::Serialize, schemars::JsonSchema)]
        #[serde(deny_unknown_fields)]
        struct Scores {
            by_name: std::collections::BTreeMap<String, u32>,
        }
        let schema = output_schema::<Scores>();
        let names = declared_names(&schema);
        let v = jsonschema::validator_for(&schema).unwrap();
        let value = json!({"by_name": {"alpha": 1, "secret-canary": "x"}, "leak-key": 1});
        let msg = violations(&v, &value, "value", Keys::Declared(&names)).unwrap();
        assert!(!msg.contains("secret") && !msg.contains("leak"), "{msg}");
        assert!(msg.contains("\"value.by_name.{entry 1}\""), "{msg}");
        assert!(
            msg.contains("1 property the schema does not declare"),
            "{msg}"
        );
        // Arguments are already in the log: their keys are named.
        let msg = violations(&v, &value, "arguments", Keys::Shown).unwrap();
        assert!(
            msg.contains("secret-canary") && msg.contains("leak-key"),
            "{msg}"
        );
    }
}
