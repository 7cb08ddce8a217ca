//! A `builtin` tool, found by `Registry::builtin()`: the missing derive is one error.

use schemars::JsonSchema;
use serde::Deserialize;
use toolprism::{ContentBlock, Registry, tool};

#[derive(Clone, Deserialize, JsonSchema)]
pub struct ReadArgs {
    pub path: String,
}

#[derive(Deserialize, JsonSchema)]
pub struct ReadValue {
    pub text: String,
}

#[derive(Default)]
pub struct ReadTool;

/// Read a file.
#[tool(builtin)]
impl ReadTool {
    fn execute(&self, args: ReadArgs) -> ReadValue {
        ReadValue { text: args.path }
    }

    fn render(_args: &ReadArgs, value: &ReadValue) -> Vec<ContentBlock> {
        vec![ContentBlock::text(&value.text)]
    }
}

fn main() {
    let _ = Registry::builtin().build();
}
