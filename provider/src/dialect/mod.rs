//! Provider dialects: each tool's definition in the exact request shape a
//! model API or protocol expects, as pure functions of the canonical
//! [`ToolDefinition`] (no I/O, nothing cached).
//!
//! | [`Dialect`] | module | shape |
//! |---|---|---|
//! | `openai` | [`openai`] | Chat Completions `{"type":"function","function":{name, description, parameters, strict}}` |
//! | `openai-responses` | [`openai`] | Responses `{"type":"function", name, description, parameters, strict}` |
//! | `anthropic` | [`anthropic`] | `{name, description, input_schema}` |
//! | `anthropic-strict` | [`anthropic`] | `{name, description, input_schema, strict: true}` |
//! | `gemini` | [`gemini`] | a `functionDeclarations` entry with `parametersJsonSchema` |
//! | `gemini-openapi` | [`gemini`] | a `functionDeclarations` entry with the OpenAPI-subset `parameters` |
//! | `mcp` | [`mcp`] | a `tools/list` entry |
//! | `dsh` | [`dsh`] | the reference system's `{name, description, parameters, output: {schema}}` |
//!
//! Each module's docs list its rules and where each comes from. A
//! projection either succeeds, with [notes](Projected::notes) for every
//! place it had to loosen the schema (never silently), or is refused with
//! a [`DialectError`] naming the tool and every reason.
//!
//! **The way back.** OpenAI's strict mode makes every property required,
//! so a model sends `null` for a field that was optional.
//! [`restore_arguments`] removes exactly those nulls before the registry
//! validates and deserializes the arguments (`CallOptions::with_dialect`).
//!
//! ```
//! use toolprism::dialect::{self, Dialect};
//!
//! #[derive(Clone, serde::Deserialize, schemars::JsonSchema)]
//! struct Args { path: String, #[serde(default)] limit: u32 }
//!
//! # let def = toolprism::ToolDefinition::new(
//! #     "read", "Read a file.",
//! #     toolprism::schema::input_schema::<Args>(),
//! #     serde_json::json!({"type": "string"}),
//! # ).with_kind(toolprism::ToolKind::Read);
//! let openai = dialect::definition(Dialect::OpenAi, &def).unwrap();
//! let params = &openai.json()["function"]["parameters"];
//! assert_eq!(params["required"], serde_json::json!(["limit", "path"]));
//! assert_eq!(params["properties"]["limit"]["type"], serde_json::json!(["integer", "null"]));
//!
//! // The model answers with `null` for the optional field; the reverse
//! // step removes it, so `limit` gets its default.
//! let sent = serde_json::json!({"path": "a.txt", "limit": null});
//! let restored = dialect::restore_arguments(Dialect::OpenAi, &def.input_schema, sent);
//! assert_eq!(restored, serde_json::json!({"path": "a.txt"}));
//! ```

use std::fmt;
use std::str::FromStr;

use serde_json::Value;

use toolprism_core::ToolDefinition;

pub mod anthropic;
pub mod dsh;
pub mod gemini;
pub mod mcp;
pub mod openai;
mod restore;
mod walk;

pub use restore::restore_arguments;

/// A provider's tool-definition format.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Dialect {
    /// OpenAI Chat Completions function tools, strict where possible.
    OpenAi,
    /// OpenAI Responses function tools, strict where possible.
    OpenAiResponses,
    /// Anthropic Messages tools, the canonical schema as is.
    Anthropic,
    /// Anthropic strict tool use.
    AnthropicStrict,
    /// Gemini function declarations with `parametersJsonSchema`.
    Gemini,
    /// Gemini function declarations with the OpenAPI-subset `parameters`.
    GeminiOpenApi,
    /// A Model Context Protocol `tools/list` entry.
    Mcp,
    /// The reference system's (DSH) schema subset.
    Dsh,
}

impl Dialect {
    /// Every dialect.
    pub const ALL: [Dialect; 8] = [
        Dialect::OpenAi,
        Dialect::OpenAiResponses,
        Dialect::Anthropic,
        Dialect::AnthropicStrict,
        Dialect::Gemini,
        Dialect::GeminiOpenApi,
        Dialect::Mcp,
        Dialect::Dsh,
    ];

    /// Its kebab-case name, as `schema --dialect` takes it.
    pub const fn name(self) -> &'static str {
        match self {
            Dialect::OpenAi => "openai",
            Dialect::OpenAiResponses => "openai-responses",
            Dialect::Anthropic => "anthropic",
            Dialect::AnthropicStrict => "anthropic-strict",
            Dialect::Gemini => "gemini",
            Dialect::GeminiOpenApi => "gemini-openapi",
            Dialect::Mcp => "mcp",
            Dialect::Dsh => "dsh",
        }
    }
}

impl fmt::Display for Dialect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A dialect name that is not one of [`Dialect::ALL`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownDialect(String);

impl fmt::Display for UnknownDialect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut shown: String = self.0.chars().take(40).collect();
        if shown.len() < self.0.len() {
            shown.push('…');
        }
        write!(f, "unknown dialect {shown:?}: use one of ")?;
        for (i, d) in Dialect::ALL.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            f.write_str(d.name())?;
        }
        Ok(())
    }
}

impl std::error::Error for UnknownDialect {}

impl FromStr for Dialect {
    type Err = UnknownDialect;

    /// ```
    /// use toolprism::dialect::Dialect;
    /// assert_eq!("openai-responses".parse::<Dialect>().unwrap(), Dialect::OpenAiResponses);
    /// assert!("OpenAI".parse::<Dialect>().is_err());
    /// ```
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Dialect::ALL
            .into_iter()
            .find(|d| d.name() == s)
            .ok_or_else(|| UnknownDialect(s.to_owned()))
    }
}

/// One tool's definition in a dialect, and what the projection had to
/// give up to get there.
#[derive(Debug, Clone, PartialEq)]
pub struct Projected {
    json: Value,
    notes: Vec<String>,
}

impl Projected {
    pub(crate) fn new(json: Value, notes: Vec<String>) -> Self {
        Projected { json, notes }
    }

    /// The request-shaped JSON.
    pub fn json(&self) -> &Value {
        &self.json
    }

    /// The JSON, owned.
    pub fn into_json(self) -> Value {
        self.json
    }

    /// Every place the dialect loosened the schema or fell back (for
    /// example OpenAI's `strict: false`), one sentence each. Empty when
    /// the projection is exact.
    pub fn notes(&self) -> &[String] {
        &self.notes
    }
}

/// A tool the dialect cannot express, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DialectError {
    dialect: Dialect,
    tool: String,
    reasons: Vec<String>,
}

impl DialectError {
    pub(crate) fn new(dialect: Dialect, tool: &str, reasons: Vec<String>) -> Self {
        DialectError {
            dialect,
            tool: tool.to_owned(),
            reasons,
        }
    }

    /// The dialect that refused.
    pub fn dialect(&self) -> Dialect {
        self.dialect
    }

    /// The tool's name.
    pub fn tool(&self) -> &str {
        &self.tool
    }

    /// Every reason, one sentence each.
    pub fn reasons(&self) -> &[String] {
        &self.reasons
    }
}

impl fmt::Display for DialectError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "tool \"{}\" cannot be expressed in the {} dialect: {}",
            self.tool,
            self.dialect,
            self.reasons.join("; ")
        )
    }
}

impl std::error::Error for DialectError {}

/// `def` in `dialect`'s request shape, or why it cannot be expressed.
///
/// Every dialect needs an object root for the arguments (a model always
/// sends a JSON object); [`Registry`](toolprism_core::Registry) guarantees it for
/// registered tools, and a hand-built definition without one is refused.
pub fn definition(dialect: Dialect, def: &ToolDefinition) -> Result<Projected, DialectError> {
    let root = def.input_schema.get("type").and_then(Value::as_str);
    if root != Some("object") {
        return Err(DialectError::new(
            dialect,
            &def.name,
            vec![format!(
                "the input schema's root must be `type: object` (a model always sends an object), not {}",
                root.map_or_else(|| "untyped".to_owned(), |t| format!("`{t}`"))
            )],
        ));
    }
    let result = match dialect {
        Dialect::OpenAi => openai::chat_completions(def),
        Dialect::OpenAiResponses => openai::responses(def),
        Dialect::Anthropic => anthropic::tool(def),
        Dialect::AnthropicStrict => anthropic::strict_tool(def),
        Dialect::Gemini => gemini::declaration(def),
        Dialect::GeminiOpenApi => gemini::openapi_declaration(def),
        Dialect::Mcp => Ok(Projected::new(
            mcp::tool(def, mcp::DEFAULT_PROTOCOL_VERSION),
            Vec::new(),
        )),
        Dialect::Dsh => dsh::definition(def),
    };
    result.map_err(|reasons| DialectError::new(dialect, &def.name, reasons))
}

/// Several tools in one dialect: what `schema --dialect X` prints.
#[derive(Debug, Clone, PartialEq)]
pub struct Definitions {
    tools: Vec<Value>,
    notes: Vec<String>,
    refused: Vec<DialectError>,
}

impl Definitions {
    /// The JSON array of every tool the dialect could express, in order.
    pub fn json(&self) -> Value {
        Value::Array(self.tools.clone())
    }

    /// The expressed tools' JSON.
    pub fn tools(&self) -> &[Value] {
        &self.tools
    }

    /// Every note, each starting with the tool it is about (`tool "x": …`),
    /// then any note about the tools together (a provider's per-request
    /// limits).
    pub fn notes(&self) -> &[String] {
        &self.notes
    }

    /// The tools the dialect refused.
    pub fn refused(&self) -> &[DialectError] {
        &self.refused
    }
}

/// Projects every definition; a refused tool is left out of the array and
/// listed in [`Definitions::refused`], so one tool never hides the others.
pub fn definitions<'a, I>(dialect: Dialect, defs: I) -> Definitions
where
    I: IntoIterator<Item = &'a ToolDefinition>,
{
    let mut out = Definitions {
        tools: Vec::new(),
        notes: Vec::new(),
        refused: Vec::new(),
    };
    for def in defs {
        match definition(dialect, def) {
            Ok(p) => {
                out.notes.extend(
                    p.notes
                        .iter()
                        .map(|n| format!("tool \"{}\": {n}", def.name)),
                );
                out.tools.push(p.json);
            }
            Err(e) => out.refused.push(e),
        }
    }
    if dialect == Dialect::AnthropicStrict {
        out.notes.extend(anthropic::request_limits(&out.tools));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for d in Dialect::ALL {
            assert_eq!(d.name().parse::<Dialect>().unwrap(), d);
            assert_eq!(d.to_string(), d.name());
        }
        let e = "gpt".parse::<Dialect>().unwrap_err().to_string();
        assert!(e.contains("openai-responses") && e.contains("dsh"), "{e}");
        let long = "x"
            .repeat(10_000)
            .parse::<Dialect>()
            .unwrap_err()
            .to_string();
        assert!(long.len() < 300, "{}", long.len());
    }

    #[test]
    fn a_non_object_root_is_refused_by_every_dialect() {
        let def = ToolDefinition::new(
            "t",
            "d",
            serde_json::json!({"type": "string"}),
            serde_json::json!({}),
        );
        for d in Dialect::ALL {
            let e = definition(d, &def).unwrap_err();
            assert_eq!(e.tool(), "t");
            assert!(e.to_string().contains("`string`"), "{e}");
        }
    }
}
