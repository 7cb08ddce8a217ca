//! [`SdkTool`]: what the SDK needs to know of one tool.

use serde_json::Value;

/// One tool as the SDK declares it: its name, its description, its input
/// and output JSON Schemas (as schemars derives them) and whether it only
/// reads, so that its calls may overlap.
///
/// ```
/// use serde_json::json;
/// use toolprism::code::sdk::{SdkTool, sdk};
///
/// let input = json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]});
/// let output = json!({"type": "integer", "format": "uint64", "minimum": 0});
/// let tool = SdkTool {
///     name: "size",
///     description: "The size of a file, in bytes.",
///     input_schema: &input,
///     output_schema: Some(&output),
///     read_only: true,
/// };
/// let text = sdk(&[tool]);
/// assert!(text.contains("  \"size\": { path: string };\n"));
/// assert!(text.contains("  /** @format uint64 */\n  \"size\": number;\n"));
/// ```
#[derive(Debug, Clone, Copy)]
pub struct SdkTool<'a> {
    /// The tool's name, the key of `tools` that calls it.
    pub name: &'a str,
    /// What the tool does, shown as its JSDoc.
    pub description: &'a str,
    /// The JSON Schema of its arguments.
    pub input_schema: &'a Value,
    /// The JSON Schema of the value its call resolves to; `None` types it
    /// `unknown`, and
    /// [`content_value_schema`](toolprism_core::content_value_schema)
    /// types it `{ content: ToolContent[] }`.
    pub output_schema: Option<&'a Value>,
    /// Whether the tool only reads: its calls may then overlap under
    /// `Promise.all`, where the others run one at a time.
    pub read_only: bool,
}
