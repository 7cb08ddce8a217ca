//! The card app for MCP Apps hosts (the extension
//! `io.modelcontextprotocol/ui`): one `ui://` resource that draws every
//! tool's call and result cards, offered only to clients that declare the
//! extension.
//!
//! A client declares it in `initialize`
//! (`capabilities.extensions["io.modelcontextprotocol/ui"]`, an object; when
//! it lists `mimeTypes`, they must include `text/html;profile=mcp-app`), or,
//! at `2026-07-28`, in the capabilities of each request
//! (`_meta["io.modelcontextprotocol/clientCapabilities"]`). For such a
//! client, and only for it:
//!
//! - the `initialize` answer declares the extension and `resources`;
//! - every `tools/list` entry carries `_meta.ui.resourceUri` =
//!   [`CARD_APP_URI`] (`ui://toolprism/card`);
//! - `resources/list` holds the app, `resources/read` returns it
//!   (`text/html;profile=mcp-app`, with `_meta.ui.csp` declaring no
//!   outside origin and `prefersBorder: false`);
//! - every `tools/call` result carries the drawn cards under
//!   `_meta["toolprism/view"]` ([`toolprism_html::card_view`]), which the
//!   app builds as elements; the text content is unchanged, so a host that
//!   does not draw the app shows what any client shows.
//!
//! Other clients see none of this: the same `tools/list`, no resources,
//! results without the view.

use std::sync::OnceLock;

use rmcp::RoleServer;
use rmcp::model::{
    InitializeRequestParams, InitializeResult, JsonObject, ListResourcesResult, MetaObject,
    ReadResourceResult, Tool as McpTool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, model::ClientCapabilities};
use serde_json::{Value, json};

use toolprism_core::ToolOutcome;
pub(crate) use toolprism_html::{CARD_APP_MIME, CARD_APP_URI, VIEW_KEY};

/// The MCP Apps extension's identifier.
pub(crate) const EXTENSION: &str = "io.modelcontextprotocol/ui";

/// The `_meta` key of a `2026-07-28` request that carries the client's
/// capabilities.
const CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";

/// Whether the extension's settings (`{"mimeTypes": [...]}`) accept the app.
fn accepts(settings: &Value) -> bool {
    match settings.get("mimeTypes") {
        None => settings.is_object(),
        Some(Value::Array(types)) => types.iter().any(|t| t == CARD_APP_MIME),
        Some(_) => false,
    }
}

fn declared_in(capabilities: &ClientCapabilities) -> bool {
    capabilities
        .extensions
        .as_ref()
        .and_then(|extensions| extensions.get(EXTENSION))
        .is_some_and(|settings| accepts(&Value::Object(settings.clone())))
}

/// Whether the client of this request declared the extension: in the
/// request's capabilities (`2026-07-28`), else in its `initialize`.
pub(crate) fn declared(context: &RequestContext<RoleServer>) -> bool {
    if let Some(capabilities) = context.meta.get(CLIENT_CAPABILITIES) {
        return capabilities
            .get("extensions")
            .and_then(|extensions| extensions.get(EXTENSION))
            .is_some_and(accepts);
    }
    context
        .peer
        .peer_info()
        .is_some_and(|info| declared_in(&info.capabilities))
}

/// The `initialize` answer for a client that declared the extension: the
/// extension and `resources` declared too.
pub(crate) fn answer_initialize(request: &InitializeRequestParams, result: &mut InitializeResult) {
    if !declared_in(&request.capabilities) {
        return;
    }
    let capabilities = &mut result.capabilities;
    capabilities
        .extensions
        .get_or_insert_with(Default::default)
        .insert(EXTENSION.to_owned(), JsonObject::new());
    if capabilities.resources.is_none() {
        capabilities.resources = Some(Default::default());
    }
}

/// `tools` with `_meta.ui.resourceUri` naming the app on each.
pub(crate) fn with_app(tools: &[McpTool]) -> Vec<McpTool> {
    tools
        .iter()
        .map(|tool| {
            let mut tool = tool.clone();
            let meta = tool
                .meta
                .get_or_insert_with(|| MetaObject(JsonObject::new()));
            meta.0
                .insert("ui".to_owned(), json!({ "resourceUri": CARD_APP_URI }));
            tool
        })
        .collect()
}

/// `resources/list`: the app for a client that declared the extension,
/// nothing otherwise.
pub(crate) fn list_resources(declared: bool) -> ListResourcesResult {
    let resources = if declared {
        json!([{
            "uri": CARD_APP_URI,
            "name": "toolprism-card",
            "title": "toolprism card",
            "description": "Draws the call card and the result card of any toolprism tool call.",
            "mimeType": CARD_APP_MIME,
            "_meta": resource_meta(),
        }])
    } else {
        json!([])
    };
    serde_json::from_value(json!({ "resources": resources })).expect("a resource list rmcp reads")
}

/// `resources/read` of `uri`: the app, or an error naming the one resource.
pub(crate) fn read_resource(uri: &str) -> Result<ReadResourceResult, ErrorData> {
    if uri != CARD_APP_URI {
        return Err(ErrorData::resource_not_found(
            format!("no resource {uri:?}; this server has {CARD_APP_URI}"),
            Some(json!({ "uri": uri })),
        ));
    }
    static PAGE: OnceLock<String> = OnceLock::new();
    let text = PAGE.get_or_init(toolprism_html::card_app);
    Ok(serde_json::from_value(json!({
        "contents": [{
            "uri": CARD_APP_URI,
            "mimeType": CARD_APP_MIME,
            "text": text,
            "_meta": resource_meta(),
        }]
    }))
    .expect("a resource rmcp reads"))
}

/// The resource's `_meta.ui`: no outside origin, and the cards draw their
/// own border.
fn resource_meta() -> Value {
    json!({ "ui": { "csp": { "connectDomains": [], "resourceDomains": [] }, "prefersBorder": false } })
}

/// The drawn cards of `outcome` for the app, when it has a call card.
pub(crate) fn view(outcome: &ToolOutcome) -> Option<Value> {
    let call = outcome.call_card()?;
    let code = outcome
        .is_error()
        .then(|| outcome.error().map_or("(no code)", |e| e.code.as_str()));
    Some(toolprism_html::card_view(call, outcome.result_card(), code))
}
