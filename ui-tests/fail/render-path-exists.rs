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

use std::path::Path;

/// Read a file.
#[tool]
impl ReadTool {
    fn execute(&self, args: ReadArgs) -> ReadValue {
        ReadValue { text: args.path }
    }

    fn render(args: &ReadArgs, value: &ReadValue) -> Vec<ContentBlock> {
        let exists = Path::new(&args.path).exists();
        vec![ContentBlock::text(format!(
            "{} (still there: {exists})",
            value.text
        ))]
    }
}

fn main() {}
