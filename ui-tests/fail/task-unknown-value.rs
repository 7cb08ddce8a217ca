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
#[tool(task = "sometimes")]
impl ReadTool {
    fn execute(&self, args: ReadArgs) -> ReadValue {
        ReadValue { text: args.path }
    }

    fn render(_args: &ReadArgs, value: &ReadValue) -> Vec<ContentBlock> {
        vec![ContentBlock::text(&value.text)]
    }
}

fn main() {}
