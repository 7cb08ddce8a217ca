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
        vec![
            ContentBlock::text(Self::header(args)),
            ContentBlock::text(&value.text),
        ]
    }

    fn header(args: &ReadArgs) -> String {
        let size = std::fs::metadata(&args.path).map(|m| m.len()).unwrap_or(0);
        format!("{} ({size} bytes)", args.path)
    }
}

fn main() {}
