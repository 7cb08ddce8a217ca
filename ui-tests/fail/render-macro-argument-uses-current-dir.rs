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
        // Arguments of nested macros are parsed and walked as expressions.
        vec![ContentBlock::text(format!(
            "{} (in {})",
            value.text,
            std::env::current_dir().unwrap_or_default().display()
        ))]
    }
}

fn main() {}
