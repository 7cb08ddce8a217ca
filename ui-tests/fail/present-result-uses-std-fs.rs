use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolprism::{ContentBlock, tool};

#[derive(Clone, Deserialize, JsonSchema)]
pub struct ReadArgs {
    pub path: String,
}

#[derive(Serialize, Deserialize, JsonSchema)]
pub struct ReadValue {
    pub text: String,
}

pub struct ReadTool;

/// Read a file.
#[tool]
impl ReadTool {
    fn execute(&self, args: ReadArgs) -> ReadValue {
        ReadValue { text: args.path }
    }

    fn render(_args: &ReadArgs, value: &ReadValue) -> Vec<ContentBlock> {
        vec![ContentBlock::text(&value.text)]
    }

    fn present_result(
        args: &ReadArgs,
        result: &toolprism::ToolResult<toolprism::NoMeta>,
    ) -> toolprism::ResultCard {
        let now = std::fs::read_to_string(&args.path).unwrap_or_default();
        toolprism::ResultCard::generic(Some(now), result.content.clone())
    }
}

fn main() {}
