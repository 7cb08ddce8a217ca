//! A tool for the HTML tests whose presenters draw whatever cards a log
//! holds: the call card from its arguments (`{"callCard": …}`) and the
//! result card from its meta. So a log written by hand replays into any
//! card, hostile ones included, through the real replay path.

#![allow(dead_code)]

use serde_json::{Value, json};
use toolprism::{
    CallCard, ContentBlock, Registry, ResultCard, Tool, ToolContext, ToolError, ToolInfo,
    ToolResult,
};

/// The tool's name in logs.
pub(crate) const ECHO: &str = "echo_cards";

#[derive(Clone, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct EchoArgs {
    #[serde(default)]
    call_card: Option<Value>,
}

pub(crate) struct EchoCards;

impl Tool for EchoCards {
    type Args = EchoArgs;
    type Value = String;
    type Meta = ResultCard;
    const INFO: ToolInfo = ToolInfo::new(ECHO, "Draws the cards its log holds.");

    async fn execute(&self, _: EchoArgs, _: &ToolContext<'_>) -> Result<String, ToolError> {
        Ok(String::new())
    }

    fn render(_: &EchoArgs, value: &String) -> Vec<ContentBlock> {
        vec![ContentBlock::text(value)]
    }

    fn present_call(args: &EchoArgs) -> Option<CallCard> {
        serde_json::from_value(args.call_card.clone()?).ok()
    }

    fn present_result(_: &EchoArgs, result: &ToolResult<ResultCard>) -> Option<ResultCard> {
        result.meta.clone()
    }
}

/// A registry with [`EchoCards`] only.
pub(crate) fn registry() -> Registry {
    Registry::builder().tool(EchoCards).build().unwrap()
}

/// The two log lines of one call of `name` whose cards are `call_card`
/// and `result_card` (as JSON), with `content` and, for a failure, `code`.
pub(crate) fn call_lines(
    id: &str,
    name: &str,
    call_card: &Value,
    result_card: &Value,
    content: &[Value],
    code: Option<&str>,
) -> String {
    let arguments = json!({ "callCard": call_card }).to_string();
    let call = json!({"type": "tool/call", "callId": id, "name": name, "arguments": arguments});
    let mut result = json!({
        "type": "tool/result", "callId": id, "content": content,
        "isError": code.is_some(), "meta": result_card,
    });
    if let Some(code) = code {
        result["error"] = json!({ "code": code });
    }
    format!("{call}\n{result}\n")
}
