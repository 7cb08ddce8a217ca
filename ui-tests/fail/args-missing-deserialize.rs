//! The tool is registered: the missing derive is still one error, at the type.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolprism::{ContentBlock, Registry, tool};

#[derive(Clone, JsonSchema)]
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
}

fn main() {
    let _ = Registry::builder().tool(ReadTool).build();
}
