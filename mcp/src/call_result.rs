//! A call's [`ToolOutcome`] as an MCP `CallToolResult` (the mapping in the
//! [module docs](super)).

use rmcp::model::{
    CallToolResult, ContentBlock as McpContent, JsonObject, MetaObject, Resource, ResourceContents,
};
use serde_json::Value;

use toolprism_core::{ContentBlock, ToolDefinition, ToolOutcome};
use toolprism_provider::dialect::mcp as dialect;

/// `_meta` key of the presentation meta.
pub(crate) const META: &str = "toolprism/meta";
/// `_meta` key of the call card.
pub(crate) const CALL_CARD: &str = "toolprism/callCard";
/// `_meta` key of the result card.
pub(crate) const RESULT_CARD: &str = "toolprism/resultCard";
/// `_meta` key of the error code.
pub(crate) const ERROR_CODE: &str = "toolprism/errorCode";

/// The `tools/call` result of `outcome`, a call of `definition`, for a
/// client whose protocol version the dialect knows as `protocol_version`;
/// with the cards when `cards`, with the drawn cards for the card app when
/// `app`.
pub(crate) fn call_tool_result(
    definition: &ToolDefinition,
    mut outcome: ToolOutcome,
    protocol_version: &str,
    cards: bool,
    app: bool,
) -> CallToolResult {
    let content = outcome.content().iter().map(content_block).collect();
    let mut meta = JsonObject::new();
    if let Some(presentation) = outcome.meta() {
        meta.insert(META.into(), presentation.clone());
    }
    if let Some(code) = outcome.error().map(|e| e.code.as_str()) {
        meta.insert(ERROR_CODE.into(), Value::String(code.to_owned()));
    }
    if app && let Some(view) = crate::app::view(&outcome) {
        meta.insert(crate::app::VIEW_KEY.into(), view);
    }
    if cards {
        let call_card = outcome
            .take_call_card()
            .and_then(|c| serde_json::to_value(c).ok());
        if let Some(card) = call_card {
            meta.insert(CALL_CARD.into(), card);
        }
        let result_card = outcome
            .result_card()
            .and_then(|c| serde_json::to_value(c).ok());
        if let Some(card) = result_card {
            meta.insert(RESULT_CARD.into(), card);
        }
    }
    let is_error = outcome.is_error();
    let mut result = if is_error {
        CallToolResult::error(content)
    } else {
        let mut result = CallToolResult::success(content);
        // A success always has its value; `into_value` moves it out. A
        // tool that declares no output schema sends its content alone.
        if dialect::declares_output(definition)
            && let Ok(value) = outcome.into_value()
        {
            result.structured_content = Some(dialect::structured_content(
                definition,
                value,
                protocol_version,
            ));
        }
        result
    };
    if !meta.is_empty() {
        result.meta = Some(MetaObject(meta));
    }
    result
}

fn content_block(block: &ContentBlock) -> McpContent {
    match block {
        ContentBlock::Text { text } => McpContent::text(text.clone()),
        ContentBlock::Image { mime_type, data } => {
            McpContent::image(data.clone(), mime_type.clone())
        }
        ContentBlock::Audio { mime_type, data } => {
            McpContent::audio(data.clone(), mime_type.clone())
        }
        ContentBlock::Resource { resource } => {
            let contents = match (&resource.text, &resource.blob) {
                (Some(text), _) => ResourceContents::text(text.clone(), resource.uri.clone()),
                (None, blob) => {
                    ResourceContents::blob(blob.clone().unwrap_or_default(), resource.uri.clone())
                }
            };
            McpContent::resource(match &resource.mime_type {
                Some(mime) => contents.with_mime_type(mime.clone()),
                None => contents,
            })
        }
        ContentBlock::ResourceLink(link) => {
            let mut resource = Resource::new(link.uri.clone(), link.name.clone());
            if let Some(title) = &link.title {
                resource = resource.with_title(title.clone());
            }
            if let Some(description) = &link.description {
                resource = resource.with_description(description.clone());
            }
            if let Some(mime) = &link.mime_type {
                resource = resource.with_mime_type(mime.clone());
            }
            if let Some(size) = link.size {
                resource = resource.with_size(size);
            }
            McpContent::resource_link(resource)
        }
    }
}
