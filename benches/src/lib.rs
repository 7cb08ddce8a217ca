//! What toolprism's benchmarks share: the tools, the hand-written floors
//! they are measured against, a replay written over the public log API, and
//! the ratio report printed at the end of each benchmark run.
//!
//! Every figure is a ratio of two functions measured side by side in one
//! criterion run (see `benches/RESULTS.md`):
//!
//! | benchmark | numerator | denominator | target |
//! |---|---|---|---|
//! | `echo` | `Registry::call` | the floor: parse, body, `to_value`, render | ≤ 1.5 |
//! | `echo` | the contract floor: the floor with both schema checks | the floor | (a lower bound) |
//! | `echo` | `Registry::call` | the contract floor | — |
//! | `echo` | `Registry::call` | rmcp's `ToolRouter::call` | < 1 |
//! | `large` | `Registry::call` on a 1 MB value | its floor | ≤ 1.3 |
//! | `replay` | cards drawn from a 100,000-event log | a JSON-lines parse into `Value` | ≤ 2 |

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use toolprism::ContentBlock;

pub mod replay;
pub mod report;

// ---------------------------------------------------------------------------
// echo: the trivial tool
// ---------------------------------------------------------------------------

/// The arguments of `echo`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct EchoArgs {
    /// The text to echo.
    pub text: String,
}

/// The value of `echo`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Echoed {
    /// The text.
    pub text: String,
    /// Its length in bytes.
    pub len: usize,
}

/// The body of `echo`, shared by every side of the comparison.
pub fn echo_body(args: EchoArgs) -> Echoed {
    Echoed {
        len: args.text.len(),
        text: args.text,
    }
}

/// The content of `echo`: `"{text} ({len})"`.
pub fn echo_render(value: &Echoed) -> Vec<ContentBlock> {
    vec![ContentBlock::text(format!(
        "{} ({})",
        value.text, value.len
    ))]
}

/// The arguments every `echo` benchmark sends.
pub const ECHO_ARGUMENTS: &str = r#"{"text":"the quick brown fox jumps over the lazy dog"}"#;

/// The floor of one `echo` call: the same work written by hand, with no
/// framework. Parse the arguments, run the body, turn the value into JSON
/// (what a program reads), render the content (what the model reads).
pub fn echo_floor(arguments: &str) -> Result<(Value, Vec<ContentBlock>), serde_json::Error> {
    let args: EchoArgs = serde_json::from_str(arguments)?;
    let value = echo_body(args);
    let json = serde_json::to_value(&value)?;
    let content = echo_render(&value);
    Ok((json, content))
}

/// The floor plus the checks the contract makes on every call and a
/// framework cannot skip, written by hand with the same crates: the
/// arguments parsed into a `Value` and checked against the input schema,
/// then deserialized from it; the value's JSON checked against the output
/// schema. It leaves out what toolprism adds beyond them (the lossless
/// parse's duplicate-key and `-0` checks, the panic guards, the outcome, the
/// cards, the span), so it is a lower bound on any pipeline that validates
/// both schemas with `jsonschema`.
pub struct EchoContractFloor {
    input: jsonschema::Validator,
    output: jsonschema::Validator,
}

impl EchoContractFloor {
    /// Compiles the two schemas toolprism derives for `echo`.
    pub fn new() -> Self {
        let compile =
            |schema: &Value| jsonschema::validator_for(schema).expect("the schema compiles");
        Self {
            input: compile(&toolprism::schema::input_schema::<EchoArgs>()),
            output: compile(&toolprism::schema::output_schema::<Echoed>()),
        }
    }

    /// One call: what [`echo_floor`] does, with both schema checks.
    pub fn call(&self, arguments: &str) -> Result<(Value, Vec<ContentBlock>), String> {
        let args: Value = serde_json::from_str(arguments).map_err(|e| e.to_string())?;
        if !self.input.is_valid(&args) {
            return Err("the arguments break the input schema".to_owned());
        }
        let args: EchoArgs = serde_json::from_value(args).map_err(|e| e.to_string())?;
        let value = echo_body(args);
        let json = serde_json::to_value(&value).map_err(|e| e.to_string())?;
        if !self.output.is_valid(&json) {
            return Err("the value breaks the output schema".to_owned());
        }
        let content = echo_render(&value);
        Ok((json, content))
    }
}

impl Default for EchoContractFloor {
    fn default() -> Self {
        Self::new()
    }
}

/// `echo` as a toolprism tool, written with `#[tool]`.
pub mod echo_tool {
    use super::*;
    use toolprism::{ToolError, tool};

    /// Echo the text back.
    pub struct EchoTool;

    /// Echo the text back.
    #[tool(name = "echo")]
    impl EchoTool {
        async fn execute(&self, args: EchoArgs) -> Result<Echoed, ToolError> {
            Ok(echo_body(args))
        }

        fn render(_args: &EchoArgs, value: &Echoed) -> Vec<ContentBlock> {
            echo_render(value)
        }
    }
}
pub use echo_tool::EchoTool;

// ---------------------------------------------------------------------------
// grep: a large value
// ---------------------------------------------------------------------------

/// The arguments of the grep-like tool: what to look for and how many
/// matches to produce.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct GrepArgs {
    /// The pattern.
    pub pattern: String,
    /// How many matching lines to produce.
    pub matches: usize,
}

/// One matching line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct GrepMatch {
    /// The file.
    pub path: String,
    /// 1-based line number.
    pub line: u64,
    /// The line's text.
    pub text: String,
}

/// The value of the grep-like tool: every match.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct GrepValue {
    /// The pattern searched for.
    pub pattern: String,
    /// Every matching line.
    pub matches: Vec<GrepMatch>,
    /// How many files had a match.
    pub files: u64,
}

/// How many matches the large-value benchmark produces.
pub const GREP_MATCHES: usize = 10_000;

/// The arguments of the large-value benchmark.
pub fn grep_arguments() -> String {
    format!(r#"{{"pattern":"config","matches":{GREP_MATCHES}}}"#)
}

/// The body of the grep-like tool: builds `args.matches` matches, about
/// 100 bytes of JSON each.
pub fn grep_body(args: GrepArgs) -> GrepValue {
    let matches = (0..args.matches)
        .map(|i| GrepMatch {
            path: format!("src/module_{:03}/file_{:02}.rs", i / 50, i % 50),
            line: (i as u64 * 7) % 997 + 1,
            text: format!(
                "    let {}_{i} = load(&{}, \"key\");",
                args.pattern, args.pattern
            ),
        })
        .collect();
    GrepValue {
        files: args.matches.div_ceil(50) as u64,
        pattern: args.pattern,
        matches,
    }
}

/// How many matches the grep-like tool's content shows.
pub const GREP_SHOWN: usize = 100;

/// The content of the grep-like tool: the first 100 matches, then a count.
pub fn grep_render(value: &GrepValue) -> Vec<ContentBlock> {
    let mut text = String::with_capacity(GREP_SHOWN * 64);
    for m in value.matches.iter().take(GREP_SHOWN) {
        text.push_str(&m.path);
        text.push(':');
        text.push_str(&m.line.to_string());
        text.push(':');
        text.push_str(&m.text);
        text.push('\n');
    }
    if value.matches.len() > GREP_SHOWN {
        text.push_str(&format!(
            "… and {} more matches",
            value.matches.len() - GREP_SHOWN
        ));
    }
    vec![ContentBlock::text(text)]
}

/// The floor of one grep call, like [`echo_floor`].
pub fn grep_floor(arguments: &str) -> Result<(Value, Vec<ContentBlock>), serde_json::Error> {
    let args: GrepArgs = serde_json::from_str(arguments)?;
    let value = grep_body(args);
    let json = serde_json::to_value(&value)?;
    let content = grep_render(&value);
    Ok((json, content))
}

/// The grep-like tool as a toolprism tool.
pub mod grep_tool {
    use super::*;
    use toolprism::{ToolError, tool};

    /// Find lines matching a pattern.
    pub struct GrepTool;

    /// Find lines matching a pattern.
    #[tool(name = "grep", kind = search, read_only)]
    impl GrepTool {
        async fn execute(&self, args: GrepArgs) -> Result<GrepValue, ToolError> {
            Ok(grep_body(args))
        }

        fn render(_args: &GrepArgs, value: &GrepValue) -> Vec<ContentBlock> {
            grep_render(value)
        }
    }
}
pub use grep_tool::GrepTool;

// ---------------------------------------------------------------------------
// find: a tool with meta and presenters, for replay
// ---------------------------------------------------------------------------

/// The arguments of `find`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct FindArgs {
    /// A glob.
    pub pattern: String,
}

/// The value of `find`: every path found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Found {
    /// The paths.
    pub paths: Vec<String>,
}

/// The meta of `find`: the first paths and the total, enough for a card.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FindMeta {
    /// The first paths.
    pub paths: Vec<String>,
    /// Every path found.
    pub total: u64,
}

/// How many paths `find`'s content and meta show.
pub const FIND_SHOWN: usize = 3;

/// The body of `find`: eight paths derived from the pattern.
pub fn find_body(args: &FindArgs) -> Found {
    Found {
        paths: (0..8)
            .map(|i| format!("src/{i}/{}", args.pattern.replace('*', "mod")))
            .collect(),
    }
}

/// `find` as a toolprism tool with meta and both presenters.
pub mod find_tool {
    use super::*;
    use toolprism::card::SearchResult;
    use toolprism::{CallCard, ResultCard, ToolError, ToolKind, ToolResult, tool};

    /// Find paths matching a glob.
    pub struct FindTool;

    /// Find paths matching a glob.
    #[tool(name = "find", kind = search, read_only)]
    impl FindTool {
        async fn execute(&self, args: FindArgs) -> Result<Found, ToolError> {
            Ok(find_body(&args))
        }

        fn render(_args: &FindArgs, value: &Found) -> Vec<ContentBlock> {
            vec![ContentBlock::text(value.paths[..FIND_SHOWN].join("\n"))]
        }

        fn presentation_meta(_args: &FindArgs, value: &Found) -> FindMeta {
            FindMeta {
                paths: value.paths[..FIND_SHOWN].to_vec(),
                total: value.paths.len() as u64,
            }
        }

        fn present_call(args: &FindArgs) -> CallCard {
            CallCard::generic(
                format!("find {}", args.pattern),
                Some(ToolKind::Search),
                None,
            )
        }

        fn present_result(args: &FindArgs, result: &ToolResult<FindMeta>) -> ResultCard {
            let shown = result
                .meta
                .as_ref()
                .and_then(|meta| SearchResult::paths(meta.paths.clone(), meta.total).ok());
            match shown {
                Some(card) => ResultCard::Search(card.with_title(format!("find {}", args.pattern))),
                None => ResultCard::generic(
                    Some(format!("find {}", args.pattern)),
                    result.content.clone(),
                ),
            }
        }
    }
}
pub use find_tool::FindTool;
