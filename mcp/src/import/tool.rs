//! [`ImportedTool`]: one tool of an imported server as a
//! [`DynamicTool`]: its definition read from `tools/list`, its calls sent
//! through the connection, its answers read back into content and value.

use std::sync::Arc;

use rmcp::model::{
    CallToolResult, ContentBlock as McpContent, JsonObject, ResourceContents, Tool as McpTool,
    ToolAnnotations as McpAnnotations,
};
use serde_json::{Map, Value};

use toolprism_core::{
    CallCard, ContentBlock, DynamicDefinition, DynamicFuture, DynamicOutput, DynamicTool,
    EmbeddedResource, ResourceLink, ResultCard, ToolAnnotations, ToolContext, ToolError, ToolKind,
    ToolResult,
};

use super::connection::{Connection, Failure};
use super::presenter::Presenter;

/// `_meta` key of a toolprism server's error code (W4 in `docs/contract.md`).
pub const META_ERROR_CODE: &str = "toolprism/errorCode";
/// `_meta` key of a toolprism server's tool kind.
const META_KIND: &str = toolprism_provider::dialect::mcp::META_KIND;
/// `_meta` key a toolprism server sets (to `"value"`) when it wrapped a
/// tool's output schema and values in `{"value": …}` for an older protocol.
const META_WRAPPED: &str = toolprism_provider::dialect::mcp::META_WRAPPED;

/// What ends a collision of an imported tool's name with another tool's:
/// the import's options, in Rust and on a `toolprism::cli` command line
/// (an imported tool cannot take `#[tool(name = …)]`).
const COLLISION_REMEDIES: &str = "give the server's tools a prefix (`Import::prefix`; on the command line, `--mcp-config` names them `<server>__<tool>`), import only the tools needed (`Import::allow`; `includeTools` in `--mcp-config`), or rename it (`Import::rename`)";

/// The code of an `isError` result from a server that gives none.
pub const TOOL_ERROR: &str = "TOOL_ERROR";
/// The code of a call the server went away under (a crash, a closed
/// connection) after it was sent: whether it took effect is unknown. The
/// next call starts the server again.
pub const SERVER_GONE: &str = "SERVER_GONE";
/// The code of a call that could not be sent: the server is down and
/// could not be (re)started, or is waiting out its backoff.
pub const SERVER_UNAVAILABLE: &str = "SERVER_UNAVAILABLE";
/// The code of a call the server answered with a JSON-RPC error or with
/// something that is not a `tools/call` result.
pub const SERVER_ERROR: &str = "SERVER_ERROR";
/// The code of a call the server refused for its authorization, when no
/// new one could be had without a person: no token saved, a refresh token
/// the authorization server rejected, a scope still lacking after the
/// step-ups. The message says how to log in again; it never holds a token.
pub const SERVER_UNAUTHORIZED: &str = "SERVER_UNAUTHORIZED";

/// One tool of an imported server, as the registry runs it: a
/// [`DynamicTool`], so the pipeline checks its arguments before they are
/// sent and its value after (P7 in `docs/contract.md`). See the [module
/// docs](super) for the mapping.
#[derive(Clone)]
pub struct ImportedTool {
    definition: DynamicDefinition,
    remote: String,
    meta: Option<Map<String, Value>>,
    /// The server declared an output schema: its `structuredContent` is the value.
    structured: bool,
    /// A toolprism server wrapped the value in `{"value": …}`.
    wrapped: bool,
    presenter: Option<Arc<dyn Presenter>>,
    connection: Arc<Connection>,
}

impl std::fmt::Debug for ImportedTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ImportedTool")
            .field("name", &self.definition.name)
            .field("remote_name", &self.remote)
            .field("server", &self.connection.server)
            .field("presenter", &self.presenter.is_some())
            .finish_non_exhaustive()
    }
}

impl ImportedTool {
    pub(crate) fn new(
        tool: McpTool,
        name: String,
        kind: Option<ToolKind>,
        timeout: Option<std::time::Duration>,
        presenter: Option<Arc<dyn Presenter>>,
        connection: Arc<Connection>,
    ) -> ImportedTool {
        let meta = tool.meta.as_ref().map(|m| m.0.clone());
        let wrapped = meta
            .as_ref()
            .and_then(|m| m.get(META_WRAPPED))
            .and_then(Value::as_str)
            == Some(toolprism_provider::dialect::mcp::WRAP_KEY);
        let output_schema = tool.output_schema.as_deref().map(|schema| {
            let schema = Value::Object(schema.clone());
            if wrapped {
                unwrap_schema(schema)
            } else {
                schema
            }
        });
        let annotations = annotations(tool.annotations.as_ref());
        let kind = kind
            .or_else(|| {
                meta.as_ref()
                    .and_then(|m| m.get(META_KIND))
                    .and_then(|k| serde_json::from_value::<ToolKind>(k.clone()).ok())
            })
            .unwrap_or_else(|| kind_of(tool.annotations.as_ref()));
        let title = tool
            .title
            .clone()
            .or_else(|| tool.annotations.as_ref().and_then(|a| a.title.clone()));
        let structured = output_schema.is_some();
        // Without one, the value is the content: declared as such, so it is
        // checked and typed like any other (and still re-served without
        // `outputSchema`).
        let output_schema =
            output_schema.or_else(|| Some(toolprism_core::content_value_schema().clone()));
        ImportedTool {
            structured,
            wrapped,
            definition: {
                let mut definition = DynamicDefinition::new(
                    name,
                    tool.description.as_deref().unwrap_or_default(),
                    Value::Object((*tool.input_schema).clone()),
                )
                .with_kind(kind)
                .with_annotations(annotations);
                definition.title = title;
                definition.output_schema = output_schema;
                definition.timeout = timeout;
                definition
            },
            remote: tool.name.into_owned(),
            meta,
            presenter,
            connection,
        }
    }

    /// The tool's name on its server (the registry's name is
    /// [`definition`](DynamicTool::definition)`().name`).
    pub fn remote_name(&self) -> &str {
        &self.remote
    }

    /// The `_meta` of the server's `tools/list` entry, as it sent it (kept
    /// here, not re-served: see the [module docs](super#meta)).
    pub fn meta(&self) -> Option<&Map<String, Value>> {
        self.meta.as_ref()
    }

    /// The server it comes from: `the MCP server "fs" (npx …)`.
    pub fn server(&self) -> &str {
        &self.connection.server
    }

    /// The answer to one call: content and value, or the error.
    fn answer(&self, result: CallToolResult) -> Result<DynamicOutput, ToolError> {
        let content: Vec<ContentBlock> = result.content.iter().filter_map(content_block).collect();
        if result.is_error == Some(true) {
            let code = result
                .meta
                .as_ref()
                .and_then(|m| m.0.get(META_ERROR_CODE))
                .and_then(Value::as_str)
                .filter(|code| is_code(code))
                .unwrap_or(TOOL_ERROR)
                .to_owned();
            let text = toolprism_core::content_text(&content);
            let text = text.strip_prefix("Error: ").unwrap_or(&text);
            let message = if text.trim().is_empty() {
                format!(
                    "{} reported an error without a message",
                    self.connection.server
                )
            } else {
                text.to_owned()
            };
            return Err(ToolError::new(message).with_code(code));
        }
        let value = if self.structured {
            match result.structured_content {
                Some(Value::Object(mut object)) if self.wrapped => object
                    .remove(toolprism_provider::dialect::mcp::WRAP_KEY)
                    .unwrap_or(Value::Null),
                Some(value) => value,
                None => {
                    return Err(ToolError::new(format!(
                        "{} declares an output schema for \"{}\" and sent no structuredContent",
                        self.connection.server, self.remote
                    ))
                    .with_code("INVALID_TOOL_OUTPUT"));
                }
            }
        } else {
            toolprism_core::content_value(&content)
        };
        Ok(DynamicOutput::new(content, value))
    }
}

impl DynamicTool for ImportedTool {
    fn definition(&self) -> &DynamicDefinition {
        &self.definition
    }

    fn call<'a>(&'a self, arguments: Value, cx: &'a ToolContext<'_>) -> DynamicFuture<'a> {
        Box::pin(async move {
            // The pipeline checked them against the input schema, which
            // MCP requires to be an object.
            let arguments: JsonObject = match arguments {
                Value::Object(map) => map,
                _ => JsonObject::new(),
            };
            match self.connection.call(&self.remote, arguments, cx).await {
                Ok(result) => self.answer(result),
                Err(Failure::Gone(message)) => Err(ToolError::new(message).with_code(SERVER_GONE)),
                Err(Failure::Unavailable(message)) => {
                    Err(ToolError::new(message).with_code(SERVER_UNAVAILABLE))
                }
                Err(Failure::Protocol(message)) => Err(ToolError::new(format!(
                    "{}: {message}",
                    self.connection.server
                ))
                .with_code(SERVER_ERROR)),
                Err(Failure::Unauthorized(message)) => {
                    Err(ToolError::new(message).with_code(SERVER_UNAUTHORIZED))
                }
            }
        })
    }

    fn present_call(&self, arguments: &Value) -> Option<CallCard> {
        self.presenter.as_ref()?.present_call(arguments)
    }

    fn present_result(&self, arguments: &Value, result: &ToolResult) -> Option<ResultCard> {
        self.presenter.as_ref()?.present_result(arguments, result)
    }

    fn origin(&self) -> Option<String> {
        Some(format!(
            "the tool \"{}\" of {}",
            self.remote.escape_debug(),
            self.connection.server
        ))
    }

    /// The import's options, in Rust and on the command line (a prefix,
    /// an allow-list, a rename): an imported tool's name comes from its
    /// server and its import, not from an attribute.
    fn collision_remedy(&self) -> Option<String> {
        Some(COLLISION_REMEDIES.to_owned())
    }
}

/// Whether `code` looks like an error code (`[A-Z0-9_]`, at most 64):
/// anything else from a server is not passed on as one.
fn is_code(code: &str) -> bool {
    !code.is_empty()
        && code.len() <= 64
        && code
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
}

/// MCP's hints as toolprism's, keeping their meaning: a hint the server
/// leaves out takes MCP's default (`destructiveHint` and `openWorldHint`
/// default to true), since toolprism sends all four explicitly when it
/// serves the tool again, and a missing hint must not turn into a promise.
/// `destructiveHint` means nothing for a read-only tool: false there.
fn annotations(hints: Option<&McpAnnotations>) -> ToolAnnotations {
    let read_only = hints.and_then(|h| h.read_only_hint).unwrap_or(false);
    ToolAnnotations::NONE
        .with_read_only(read_only)
        .with_destructive(!read_only && hints.and_then(|h| h.destructive_hint).unwrap_or(true))
        .with_idempotent(hints.and_then(|h| h.idempotent_hint).unwrap_or(false))
        .with_open_world(hints.and_then(|h| h.open_world_hint).unwrap_or(true))
}

/// The kind, from the hints the server set (never from MCP's defaults,
/// which would make every tool without hints a destructive fetch).
fn kind_of(hints: Option<&McpAnnotations>) -> ToolKind {
    let set = |hint: Option<bool>| hint == Some(true);
    let Some(hints) = hints else {
        return ToolKind::Other;
    };
    if set(hints.read_only_hint) {
        if set(hints.open_world_hint) {
            ToolKind::Fetch
        } else {
            ToolKind::Read
        }
    } else if set(hints.destructive_hint) {
        ToolKind::Edit
    } else if set(hints.open_world_hint) {
        ToolKind::Fetch
    } else {
        ToolKind::Other
    }
}

/// One MCP content block as toolprism's. Annotations and the blocks' own
/// `_meta` have no place in [`ContentBlock`] and are dropped; a block kind
/// this version of rmcp does not know is left out.
fn content_block(block: &McpContent) -> Option<ContentBlock> {
    Some(match block {
        McpContent::Text(text) => ContentBlock::text(text.text.clone()),
        McpContent::Image(image) => {
            ContentBlock::image(image.mime_type.clone(), image.data.clone())
        }
        McpContent::Audio(audio) => {
            ContentBlock::audio(audio.mime_type.clone(), audio.data.clone())
        }
        McpContent::Resource(embedded) => ContentBlock::Resource {
            resource: match &embedded.resource {
                ResourceContents::TextResourceContents {
                    uri,
                    mime_type,
                    text,
                    ..
                } => {
                    let mut resource = EmbeddedResource::text(uri, text);
                    resource.mime_type = mime_type.clone();
                    resource
                }
                ResourceContents::BlobResourceContents {
                    uri,
                    mime_type,
                    blob,
                    ..
                } => {
                    let mut resource = EmbeddedResource::blob(uri, blob);
                    resource.mime_type = mime_type.clone();
                    resource
                }
                #[allow(unreachable_patterns)]
                _ => return None,
            },
        },
        McpContent::ResourceLink(link) => {
            let mut resource = ResourceLink::new(&link.uri, &link.name);
            resource.title = link.title.clone();
            resource.description = link.description.clone();
            resource.mime_type = link.mime_type.clone();
            resource.size = link.size;
            ContentBlock::ResourceLink(resource)
        }
        #[allow(unreachable_patterns)]
        _ => return None,
    })
}

/// The schema a toolprism server wrapped as `{"value": S}` (see
/// `toolprism_provider::dialect::mcp`), unwrapped: `S`, with the wrapper's
/// `$defs` back at its root and references into `#/properties/value`
/// pointing at the root again.
fn unwrap_schema(wrapper: Value) -> Value {
    let Value::Object(mut wrapper) = wrapper else {
        return wrapper;
    };
    let inner = wrapper
        .get_mut("properties")
        .and_then(Value::as_object_mut)
        .and_then(|p| p.remove(toolprism_provider::dialect::mcp::WRAP_KEY));
    let Some(mut inner) = inner else {
        return Value::Object(wrapper);
    };
    let prefix = format!(
        "#/properties/{}",
        toolprism_provider::dialect::mcp::WRAP_KEY
    );
    rebase(&mut inner, &prefix, 0);
    if let Some(mut defs) = wrapper.remove("$defs") {
        rebase(&mut defs, &prefix, 0);
        if let Value::Object(object) = &mut inner {
            object.insert("$defs".to_owned(), defs);
        }
    }
    inner
}

/// Rewrites every `$ref` under `node` that starts with `prefix` to start
/// with `#`. The schema came through serde_json, which reads at most 128
/// levels, so the recursion is bounded.
fn rebase(node: &mut Value, prefix: &str, depth: usize) {
    if depth > toolprism_core::MAX_DEPTH + 1 {
        return;
    }
    match node {
        Value::Object(object) => {
            for (key, value) in object.iter_mut() {
                if key == "$ref"
                    && let Value::String(reference) = value
                    && let Some(rest) = reference.strip_prefix(prefix)
                    && (rest.is_empty() || rest.starts_with('/'))
                {
                    *reference = format!("#{rest}");
                } else {
                    rebase(value, prefix, depth + 1);
                }
            }
        }
        Value::Array(items) => {
            for item in items {
                rebase(item, prefix, depth + 1);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn hints_keep_their_meaning_and_name_the_kind() {
        let hints = |v: Value| serde_json::from_value::<McpAnnotations>(v).unwrap();
        assert_eq!(
            annotations(None),
            ToolAnnotations::NONE
                .with_destructive(true)
                .with_open_world(true)
        );
        let read = hints(json!({"readOnlyHint": true}));
        assert_eq!(
            annotations(Some(&read)),
            ToolAnnotations::NONE
                .with_read_only(true)
                .with_open_world(true)
        );
        assert_eq!(kind_of(Some(&read)), ToolKind::Read);
        assert_eq!(kind_of(None), ToolKind::Other);
        let web = hints(json!({"readOnlyHint": true, "openWorldHint": true}));
        assert_eq!(kind_of(Some(&web)), ToolKind::Fetch);
        let write = hints(json!({"readOnlyHint": false, "destructiveHint": true}));
        assert_eq!(kind_of(Some(&write)), ToolKind::Edit);
        let add = hints(json!({"destructiveHint": false, "openWorldHint": false}));
        assert_eq!(kind_of(Some(&add)), ToolKind::Other);
        assert!(!annotations(Some(&add)).destructive);
    }

    #[test]
    fn a_wrapped_schema_unwraps_to_what_was_wrapped() {
        let def = toolprism_core::ToolDefinition::new(
            "t",
            "",
            json!({"type": "object"}),
            json!({"oneOf": [{"type": "null"}, {"type": "array", "items": {"$ref": "#"}},
                {"$ref": "#/$defs/Leaf"}], "$defs": {"Leaf": {"type": "object", "properties": {"up": {"$ref": "#"}}}}}),
        );
        let (wrapped, was) = toolprism_provider::dialect::mcp::output_schema(&def, "2025-11-25");
        assert!(was);
        assert_eq!(unwrap_schema(wrapped), def.output_schema);
    }

    #[test]
    fn codes_are_codes() {
        assert!(is_code("NOPE"));
        assert!(is_code("INVALID_ARGS"));
        assert!(!is_code("nope"));
        assert!(!is_code(""));
        assert!(!is_code("A B"));
        assert!(!is_code(&"A".repeat(65)));
    }
}
