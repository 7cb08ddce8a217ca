//! `flaky_render`: a tool whose `render` has a bug and panics. The runtime
//! catches the panic: the call ends as an error result with code
//! `INVALID_TOOL_OUTPUT` (`output.render failed: …`), no value, and the
//! generic card. The process goes on.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolprism::{ContentBlock, ToolContext, ToolError, tool};

/// The text of the panic, so the showcase can keep it off the terminal.
pub const PANIC_TEXT: &str = "flaky_render: the headline index is out of range";

/// Arguments of `flaky_render`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FlakyArgs {
    /// Which headline to show (1-based). Default 4, one past the end.
    #[serde(default)]
    pub headline: Option<usize>,
}

/// The value: three headlines.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Headlines {
    /// The headlines.
    pub items: Vec<String>,
}

/// A tool with a buggy render.
#[derive(Debug, Clone, Copy, Default)]
pub struct FlakyRenderTool;

/// Show one of today's headlines.
#[tool(name = "flaky_render")]
impl FlakyRenderTool {
    async fn execute(
        &self,
        _args: FlakyArgs,
        _cx: &ToolContext<'_>,
    ) -> Result<Headlines, ToolError> {
        Ok(Headlines {
            items: vec![
                "Rust 1.95 released".to_owned(),
                "Local bakery wins award".to_owned(),
                "Tides higher than usual".to_owned(),
            ],
        })
    }

    fn render(args: &FlakyArgs, value: &Headlines) -> Vec<ContentBlock> {
        // The bug: no bounds check on a number the model chose.
        let index = args.headline.unwrap_or(4).saturating_sub(1);
        let Some(headline) = value.items.get(index) else {
            panic!("{PANIC_TEXT} ({index} of {})", value.items.len());
        };
        vec![ContentBlock::text(headline.clone())]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolprism::{Registry, ToolCall};

    #[tokio::test]
    async fn a_render_panic_is_an_invalid_output_error_with_a_generic_card() {
        let registry = Registry::builder().tool(FlakyRenderTool).build().unwrap();
        let out = registry
            .call(ToolCall::new("c", "flaky_render", r#"{"headline": 1}"#))
            .await;
        assert!(!out.is_error());
        let out = registry
            .call(ToolCall::new("c", "flaky_render", "{}"))
            .await;
        assert!(out.is_error());
        let error = out.error().unwrap();
        assert_eq!(error.code.as_str(), "INVALID_TOOL_OUTPUT");
        assert!(
            error.message.contains("output.render failed"),
            "{}",
            error.message
        );
        assert!(error.message.contains(PANIC_TEXT));
        assert!(out.value().is_none());
        assert_eq!(out.result_card().unwrap().tag(), "generic");
        assert_eq!(out.call_card().unwrap().tag(), "generic");
    }
}
