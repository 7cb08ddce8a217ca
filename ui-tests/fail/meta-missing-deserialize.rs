//! The tool is registered: the missing derive is still one error, at the type.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolprism::{ContentBlock, Registry, tool};

#[derive(Clone, Deserialize, JsonSchema)]
pub struct ReadArgs {
    pub path: String,
}

#[derive(Serialize, Deserialize, JsonSchema)]
pub struct ReadValue {
    pub text: String,
}

#[derive(Serialize)]
pub struct ReadMeta {
    pub bytes: usize,
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

    fn presentation_meta(_args: &ReadArgs, value: &ReadValue) -> ReadMeta {
        ReadMeta {
            bytes: value.text.len(),
        }
    }
}

fn main() {
    let _ = Registry::builder().tool(ReadTool).build();
}
