//! The `execute_tool` span of every call, as OpenTelemetry's GenAI
//! semantic conventions name it.
//!
//! Each call through the pipeline (top-level, nested, a Code Mode
//! program's, an unknown tool's) runs inside one [`tracing`] span named
//! `execute_tool`, of kind internal, whose OpenTelemetry name is
//! `execute_tool {gen_ai.tool.name}` (the `otel.name` field, which
//! `tracing-opentelemetry` exports as the span's name):
//!
//! | field | value |
//! |---|---|
//! | [`GEN_AI_OPERATION_NAME`] | `execute_tool`, set when the span opens (a sampler may read it) |
//! | [`GEN_AI_TOOL_NAME`] | the tool's name, as called |
//! | [`GEN_AI_TOOL_CALL_ID`] | the call's id |
//! | [`GEN_AI_TOOL_TYPE`] | `function`: a tool the application runs itself |
//! | [`GEN_AI_TOOL_DESCRIPTION`] | the tool's description, cut at 1 KiB (none for an unknown tool) |
//! | [`ERROR_TYPE`] | a failed call's error code (`INVALID_ARGS`, `TIMEOUT`…), and `otel.status_code` `error` |
//! | [`GEN_AI_TOOL_CALL_ARGUMENTS`] | opt-in ([`RegistryBuilder::trace_content`](crate::RegistryBuilder::trace_content)): the arguments as the model sent them, cut at 16 KiB |
//! | [`GEN_AI_TOOL_CALL_RESULT`] | opt-in, successes only: the content the model reads, as JSON, cut at 16 KiB |
//!
//! The canonical value is never recorded, opted in or not: only what the
//! session log keeps. A nested call's span (a tool calling another, a
//! program's calls, also from spawned tasks, blocking tools and Code
//! Mode's engine thread) is a child of its parent call's span.
//!
//! The names are constants here: the `opentelemetry-semantic-conventions`
//! crate has them only as deprecated items, since the GenAI conventions
//! moved to a repository of their own (their status: development).
//!
//! **Transports.** A transport that traces the request itself (the MCP
//! server) does not open a second span around the tool: it opens this one
//! with its own attributes added and hands it to the call
//! ([`CallOptions::with_span`](crate::CallOptions::with_span)); the
//! pipeline records its fields into it. Such a span declares every field
//! of [`FIELDS`] (empty where the transport has no value).
//!
//! Without a subscriber the span costs one interest check per call.
//!
//! ```
//! use toolprism::telemetry;
//! assert_eq!(telemetry::GEN_AI_TOOL_NAME, "gen_ai.tool.name");
//! assert!(telemetry::FIELDS.contains(&telemetry::ERROR_TYPE));
//! ```

use serde_json::Value;
use tracing::Span;
use tracing::field::Empty;

use crate::content::ContentBlock;
use crate::result::ToolOutcome;
use crate::text::cap;

/// `gen_ai.operation.name`: always [`EXECUTE_TOOL`].
pub const GEN_AI_OPERATION_NAME: &str = "gen_ai.operation.name";
/// `gen_ai.tool.name`: the tool's name.
pub const GEN_AI_TOOL_NAME: &str = "gen_ai.tool.name";
/// `gen_ai.tool.call.id`: the call's id.
pub const GEN_AI_TOOL_CALL_ID: &str = "gen_ai.tool.call.id";
/// `gen_ai.tool.type`: [`TOOL_TYPE_FUNCTION`].
pub const GEN_AI_TOOL_TYPE: &str = "gen_ai.tool.type";
/// `gen_ai.tool.description`: the tool's description.
pub const GEN_AI_TOOL_DESCRIPTION: &str = "gen_ai.tool.description";
/// `gen_ai.tool.call.arguments` (opt-in): the arguments as sent.
pub const GEN_AI_TOOL_CALL_ARGUMENTS: &str = "gen_ai.tool.call.arguments";
/// `gen_ai.tool.call.result` (opt-in): the content the model reads.
pub const GEN_AI_TOOL_CALL_RESULT: &str = "gen_ai.tool.call.result";
/// `error.type`: the error code of a failed call.
pub const ERROR_TYPE: &str = "error.type";
/// `otel.name`: the span's OpenTelemetry name, `execute_tool {tool}`.
pub const OTEL_NAME: &str = "otel.name";
/// `otel.kind`: the span's kind (`internal`).
pub const OTEL_KIND: &str = "otel.kind";
/// `otel.status_code`: `error` for a failed call.
pub const OTEL_STATUS_CODE: &str = "otel.status_code";
/// The operation, and the span's `tracing` name.
pub const EXECUTE_TOOL: &str = "execute_tool";
/// The tool type of every registry tool: the application runs it.
pub const TOOL_TYPE_FUNCTION: &str = "function";

/// Every field the pipeline sets or records on its span: a span a
/// transport hands in declares them all.
pub const FIELDS: [&str; 11] = [
    OTEL_NAME,
    OTEL_KIND,
    OTEL_STATUS_CODE,
    GEN_AI_OPERATION_NAME,
    GEN_AI_TOOL_NAME,
    GEN_AI_TOOL_CALL_ID,
    GEN_AI_TOOL_TYPE,
    GEN_AI_TOOL_DESCRIPTION,
    GEN_AI_TOOL_CALL_ARGUMENTS,
    GEN_AI_TOOL_CALL_RESULT,
    ERROR_TYPE,
];

/// The most of a description, or of opted-in arguments and results, a
/// span holds.
const MAX_DESCRIPTION: usize = 1024;
const MAX_CONTENT: usize = 16 * 1024;

/// What the pipeline knows of a call when it opens its span.
pub(crate) struct Opening<'a> {
    pub(crate) name: &'a str,
    pub(crate) call_id: &'a str,
    pub(crate) description: Option<&'a str>,
    /// The arguments as logged, when content is traced.
    pub(crate) arguments: Option<&'a str>,
}

/// The call's span: the transport's (`given`), or a new one, a child of
/// `parent` when one is set and enabled, else of the current span.
pub(crate) fn open(opening: Opening<'_>, given: Option<&Span>, parent: Option<&Span>) -> Span {
    if let Some(span) = given {
        if !span.is_disabled() {
            span.record(GEN_AI_TOOL_CALL_ID, opening.call_id);
            fill(span, &opening);
        }
        return span.clone();
    }
    let span = match parent.filter(|p| p.id().is_some()) {
        Some(parent) => tracing::info_span!(
            parent: parent,
            "execute_tool",
            otel.name = Empty,
            otel.kind = "internal",
            otel.status_code = Empty,
            gen_ai.operation.name = EXECUTE_TOOL,
            gen_ai.tool.name = opening.name,
            gen_ai.tool.call.id = opening.call_id,
            gen_ai.tool.type = TOOL_TYPE_FUNCTION,
            gen_ai.tool.description = Empty,
            gen_ai.tool.call.arguments = Empty,
            gen_ai.tool.call.result = Empty,
            error.type = Empty,
        ),
        None => tracing::info_span!(
            "execute_tool",
            otel.name = Empty,
            otel.kind = "internal",
            otel.status_code = Empty,
            gen_ai.operation.name = EXECUTE_TOOL,
            gen_ai.tool.name = opening.name,
            gen_ai.tool.call.id = opening.call_id,
            gen_ai.tool.type = TOOL_TYPE_FUNCTION,
            gen_ai.tool.description = Empty,
            gen_ai.tool.call.arguments = Empty,
            gen_ai.tool.call.result = Empty,
            error.type = Empty,
        ),
    };
    if !span.is_disabled() {
        span.record(OTEL_NAME, format!("{EXECUTE_TOOL} {}", opening.name));
        fill(&span, &opening);
    }
    span
}

fn fill(span: &Span, opening: &Opening<'_>) {
    if let Some(description) = opening.description {
        span.record(GEN_AI_TOOL_DESCRIPTION, &*cap(description, MAX_DESCRIPTION));
    }
    if let Some(arguments) = opening.arguments {
        span.record(GEN_AI_TOOL_CALL_ARGUMENTS, &*cap(arguments, MAX_CONTENT));
    }
}

/// Records how the call ended: its error code, or (content traced) the
/// content the model reads.
pub(crate) fn close(span: &Span, outcome: &ToolOutcome, content: bool) {
    if span.is_disabled() {
        return;
    }
    match outcome.code() {
        Some(code) => {
            span.record(ERROR_TYPE, code.as_str());
            span.record(OTEL_STATUS_CODE, "error");
        }
        None if content => {
            let json = content_json(outcome.content());
            span.record(GEN_AI_TOOL_CALL_RESULT, &*cap(&json, MAX_CONTENT));
        }
        None => {}
    }
}

fn content_json(content: &[ContentBlock]) -> String {
    serde_json::to_string(content).unwrap_or_else(|e| Value::String(e.to_string()).to_string())
}
