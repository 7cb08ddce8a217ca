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

    fn render(args: &ReadArgs, value: &ReadValue) -> Vec<ContentBlock> {
        let _ = args;
        let mut answer = String::new();
        let _ = std::io::stdin().read_line(&mut answer);
        vec![ContentBlock::text(format!("{}{answer}", value.text))]
    }
}

fn main() {}
