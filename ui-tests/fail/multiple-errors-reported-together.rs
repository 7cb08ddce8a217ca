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
#[tool(name = "read file", kind = reed)]
impl ReadTool {
    fn execute(&self, args: ReadArgs) -> ReadValue {
        ReadValue { text: args.path }
    }

    fn render(&self, args: &ReadArgs, value: &ReadValue) -> Vec<ContentBlock> {
        println!("{}", args.path);
        vec![ContentBlock::text(&value.text)]
    }

    async fn present_call(args: &ReadArgs) -> toolprism::CallCard {
        toolprism::CallCard::generic(&args.path, None, None)
    }
}

fn main() {}
