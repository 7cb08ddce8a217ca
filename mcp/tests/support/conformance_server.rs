//! The fixture server of the official MCP conformance suite
//! (`@modelcontextprotocol/conformance`), written the way a user writes
//! tools: `#[tool]` and toolprism's [`McpServer`]. `tests/conformance.rs`
//! runs the suite against it; it is a fixture, not packaged (the crate
//! excludes `tests/`).
//!
//! ```text
//! cargo run -p toolprism-mcp --example mcp_conformance_server -- --http 127.0.0.1:0
//! ```
//!
//! The bound address is announced on stderr as `listening on
//! http://ADDR/mcp`. Each tool is the suite's fixture of the same name,
//! with the texts, media and forms its scenarios expect (read from the
//! suite's sources, `src/scenarios/server/*.ts` at v0.1.16).

use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolprism::client::{ElicitRequest, ElicitResponse, LogLevel, SampleRequest};
use toolprism::mcp::{McpServer, StreamableHttpServerConfig};
use toolprism::{ContentBlock, Registry, ToolContext, ToolError, tool};

/// A 1×1 PNG.
const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
/// A WAV file with no samples.
const WAV: &str = "UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQAAAAA=";

/// No arguments.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
struct NoArgs {}

/// What most fixtures return: a line of text.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
struct Said {
    text: String,
}

fn said(text: impl Into<String>) -> Said {
    Said { text: text.into() }
}

/// The text as one text block.
fn text_block(value: &Said) -> Vec<ContentBlock> {
    vec![ContentBlock::text(&value.text)]
}

struct SimpleText;

/// A simple text response.
#[tool(name = "test_simple_text", read_only)]
impl SimpleText {
    async fn execute(&self, _args: NoArgs, _cx: &ToolContext<'_>) -> Result<Said, ToolError> {
        Ok(said("This is a simple text response for testing."))
    }
    fn render(_args: &NoArgs, value: &Said) -> Vec<ContentBlock> {
        text_block(value)
    }
}

struct ImageContent;

/// An image: a 1×1 PNG.
#[tool(name = "test_image_content", read_only)]
impl ImageContent {
    async fn execute(&self, _args: NoArgs, _cx: &ToolContext<'_>) -> Result<Said, ToolError> {
        Ok(said("a 1x1 PNG"))
    }
    fn render(_args: &NoArgs, _value: &Said) -> Vec<ContentBlock> {
        vec![ContentBlock::image("image/png", PNG)]
    }
}

struct AudioContent;

/// A sound: an empty WAV file.
#[tool(name = "test_audio_content", read_only)]
impl AudioContent {
    async fn execute(&self, _args: NoArgs, _cx: &ToolContext<'_>) -> Result<Said, ToolError> {
        Ok(said("an empty WAV"))
    }
    fn render(_args: &NoArgs, _value: &Said) -> Vec<ContentBlock> {
        vec![ContentBlock::audio("audio/wav", WAV)]
    }
}

struct EmbeddedResource;

/// An embedded text resource.
#[tool(name = "test_embedded_resource", read_only)]
impl EmbeddedResource {
    async fn execute(&self, _args: NoArgs, _cx: &ToolContext<'_>) -> Result<Said, ToolError> {
        Ok(said("This is an embedded resource content."))
    }
    fn render(_args: &NoArgs, value: &Said) -> Vec<ContentBlock> {
        vec![ContentBlock::embedded_text(
            "test://embedded-resource",
            "text/plain",
            &value.text,
        )]
    }
}

struct MultipleContentTypes;

/// Text, an image and an embedded resource, in one result.
#[tool(name = "test_multiple_content_types", read_only)]
impl MultipleContentTypes {
    async fn execute(&self, _args: NoArgs, _cx: &ToolContext<'_>) -> Result<Said, ToolError> {
        Ok(said("Multiple content types test:"))
    }
    fn render(_args: &NoArgs, value: &Said) -> Vec<ContentBlock> {
        vec![
            ContentBlock::text(&value.text),
            ContentBlock::image("image/png", PNG),
            ContentBlock::embedded_text(
                "test://mixed-content-resource",
                "application/json",
                r#"{"test":"data","value":123}"#,
            ),
        ]
    }
}

struct ToolWithLogging;

/// Logs three messages at info level, 50 ms apart.
#[tool(name = "test_tool_with_logging", read_only)]
impl ToolWithLogging {
    async fn execute(&self, _args: NoArgs, cx: &ToolContext<'_>) -> Result<Said, ToolError> {
        for (i, message) in [
            "Tool execution started",
            "Tool processing data",
            "Tool execution completed",
        ]
        .into_iter()
        .enumerate()
        {
            if i > 0 {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            cx.log(LogLevel::Info, message);
        }
        Ok(said("Logged 3 messages."))
    }
    fn render(_args: &NoArgs, value: &Said) -> Vec<ContentBlock> {
        text_block(value)
    }
}

struct ErrorHandling;

/// Always fails.
#[tool(name = "test_error_handling", read_only)]
impl ErrorHandling {
    async fn execute(&self, _args: NoArgs, _cx: &ToolContext<'_>) -> Result<Said, ToolError> {
        Err(ToolError::new(
            "This tool intentionally returns an error for testing",
        ))
    }
    fn render(_args: &NoArgs, value: &Said) -> Vec<ContentBlock> {
        text_block(value)
    }
}

struct ToolWithProgress;

/// Reports progress 0, 50 and 100 of 100, 50 ms apart.
#[tool(name = "test_tool_with_progress", read_only)]
impl ToolWithProgress {
    async fn execute(&self, _args: NoArgs, cx: &ToolContext<'_>) -> Result<Said, ToolError> {
        for (i, done) in [0, 50, 100].into_iter().enumerate() {
            if i > 0 {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            cx.report_progress(done, Some(100), None);
        }
        Ok(said("Progress done."))
    }
    fn render(_args: &NoArgs, value: &Said) -> Vec<ContentBlock> {
        text_block(value)
    }
}

/// Arguments of `test_sampling`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
struct SamplingArgs {
    /// What to ask the client's model.
    prompt: String,
}

struct Sampling;

/// Asks the client's model (MCP sampling) and says what it answered.
#[tool(name = "test_sampling", read_only)]
impl Sampling {
    async fn execute(&self, args: SamplingArgs, cx: &ToolContext<'_>) -> Result<Said, ToolError> {
        let answer = cx
            .sample(SampleRequest::text(args.prompt, 100))
            .await
            .map_err(|e| ToolError::new(e.to_string()).with_code(e.code()))?;
        let text = answer.content.as_text().unwrap_or_default();
        Ok(said(format!("LLM response: {text}")))
    }
    fn render(_args: &SamplingArgs, value: &Said) -> Vec<ContentBlock> {
        text_block(value)
    }
}

/// Asks the user to fill `schema`, and says what came back.
async fn elicit(
    cx: &ToolContext<'_>,
    message: String,
    schema: serde_json::Value,
) -> Result<Said, ToolError> {
    let form = ElicitRequest::new(message, schema);
    let response = cx
        .elicit(form)
        .await
        .map_err(|e| ToolError::new(e.to_string()).with_code(e.code()))?;
    Ok(said(match response {
        ElicitResponse::Accept(content) => {
            format!("User response: action=accept, content={content}")
        }
        ElicitResponse::Decline => "User response: action=decline".to_owned(),
        ElicitResponse::Cancel => "User response: action=cancel".to_owned(),
    }))
}

/// Arguments of `test_elicitation`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
struct ElicitationArgs {
    /// The form's message.
    message: String,
}

struct Elicitation;

/// Asks the user for a name and an e-mail address (MCP elicitation).
#[tool(name = "test_elicitation", read_only)]
impl Elicitation {
    async fn execute(
        &self,
        args: ElicitationArgs,
        cx: &ToolContext<'_>,
    ) -> Result<Said, ToolError> {
        let schema = serde_json::json!({
            "type": "object",
            "properties": {
                "username": {"type": "string", "description": "User's response"},
                "email": {"type": "string", "description": "User's email address"}
            },
            "required": ["username", "email"]
        });
        elicit(cx, args.message, schema).await
    }
    fn render(_args: &ElicitationArgs, value: &Said) -> Vec<ContentBlock> {
        text_block(value)
    }
}

struct ElicitationDefaults;

/// A form whose every field has a default (SEP-1034).
#[tool(name = "test_elicitation_sep1034_defaults", read_only)]
impl ElicitationDefaults {
    async fn execute(&self, _args: NoArgs, cx: &ToolContext<'_>) -> Result<Said, ToolError> {
        let schema = serde_json::json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "default": "John Doe"},
                "age": {"type": "integer", "default": 30},
                "score": {"type": "number", "default": 95.5},
                "status": {"type": "string", "enum": ["active", "inactive", "pending"], "default": "active"},
                "verified": {"type": "boolean", "default": true}
            }
        });
        elicit(cx, "Please review your information".to_owned(), schema).await
    }
    fn render(_args: &NoArgs, value: &Said) -> Vec<ContentBlock> {
        text_block(value)
    }
}

struct ElicitationEnums;

/// A form with the five shapes of enum (SEP-1330).
#[tool(name = "test_elicitation_sep1330_enums", read_only)]
impl ElicitationEnums {
    async fn execute(&self, _args: NoArgs, cx: &ToolContext<'_>) -> Result<Said, ToolError> {
        let schema = serde_json::json!({
            "type": "object",
            "properties": {
                "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
                "titledSingle": {"type": "string", "oneOf": [
                    {"const": "value1", "title": "First Option"},
                    {"const": "value2", "title": "Second Option"}
                ]},
                "legacyEnum": {"type": "string", "enum": ["opt1", "opt2", "opt3"],
                    "enumNames": ["Option One", "Option Two", "Option Three"]},
                "untitledMulti": {"type": "array", "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
                "titledMulti": {"type": "array", "items": {"anyOf": [
                    {"const": "value1", "title": "First Choice"},
                    {"const": "value2", "title": "Second Choice"}
                ]}}
            }
        });
        elicit(cx, "Please select options".to_owned(), schema).await
    }
    fn render(_args: &NoArgs, value: &Said) -> Vec<ContentBlock> {
        text_block(value)
    }
}

/// An address (a `$defs` entry of the input schema).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[schemars(rename = "address")]
struct Address {
    street: Option<String>,
    city: Option<String>,
}

/// Arguments of `json_schema_2020_12_tool`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct SchemaArgs {
    name: Option<String>,
    address: Option<Address>,
}

struct JsonSchema202012;

/// Tool with JSON Schema 2020-12 features
#[tool(name = "json_schema_2020_12_tool", read_only)]
impl JsonSchema202012 {
    async fn execute(&self, args: SchemaArgs, _cx: &ToolContext<'_>) -> Result<Said, ToolError> {
        let (street, city) = args
            .address
            .map(|a| (a.street.unwrap_or_default(), a.city.unwrap_or_default()))
            .unwrap_or_default();
        Ok(said(format!(
            "{} {street} {city}",
            args.name.unwrap_or_default()
        )))
    }
    fn render(_args: &SchemaArgs, value: &Said) -> Vec<ContentBlock> {
        text_block(value)
    }
}

fn main() -> std::process::ExitCode {
    let mut args = std::env::args().skip(1);
    let addr = match (args.next().as_deref(), args.next()) {
        (Some("--http"), Some(addr)) => addr,
        _ => {
            eprintln!("usage: mcp_conformance_server --http ADDR");
            return std::process::ExitCode::from(2);
        }
    };
    let registry = Registry::builder()
        .tool(SimpleText)
        .tool(ImageContent)
        .tool(AudioContent)
        .tool(EmbeddedResource)
        .tool(MultipleContentTypes)
        .tool(ToolWithLogging)
        .tool(ErrorHandling)
        .tool(ToolWithProgress)
        .tool(Sampling)
        .tool(Elicitation)
        .tool(ElicitationDefaults)
        .tool(ElicitationEnums)
        .tool(JsonSchema202012)
        .build()
        .expect("the fixture tools register");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let server = McpServer::new(registry).with_server_info("toolprism-conformance", "0.0.0");
    let result = runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(&addr).await?;
        eprintln!("listening on http://{}/mcp", listener.local_addr()?);
        server
            .serve_http(listener, StreamableHttpServerConfig::default())
            .await
    });
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
