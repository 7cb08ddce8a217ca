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
        // `matches!`'s second argument is a pattern, not an expression: its
        // tokens are scanned instead.
        let fresh = matches!(args.path.as_str(), p if std::fs::metadata(p).is_ok());
        vec![ContentBlock::text(format!("{} ({fresh})", value.text))]
    }
}

fn main() {}
