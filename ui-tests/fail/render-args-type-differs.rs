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

#[derive(Clone, Deserialize, JsonSchema)]
pub struct FetchArgs {
    pub url: String,
}

/// Read a file.
#[tool]
impl ReadTool {
    fn execute(&self, args: ReadArgs) -> ReadValue {
        ReadValue { text: args.path }
    }

    fn render(args: &FetchArgs, value: &ReadValue) -> Vec<ContentBlock> {
        vec![ContentBlock::text(format!("{}: {}", args.url, value.text))]
    }
}

fn main() {}
