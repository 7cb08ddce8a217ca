//! The tool is registered: an error type without `Display` is one error, at the type.

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

pub struct ReadTool;

#[derive(Debug)]
pub enum ReadError {
    NoPath,
}

/// Read a file.
#[tool]
impl ReadTool {
    fn execute(&self, args: ReadArgs) -> Result<ReadValue, ReadError> {
        if args.path.is_empty() {
            return Err(ReadError::NoPath);
        }
        Ok(ReadValue { text: args.path })
    }

    fn render(_args: &ReadArgs, value: &ReadValue) -> Vec<ContentBlock> {
        vec![ContentBlock::text(&value.text)]
    }
}

fn main() {
    let _ = Registry::builder().tool(ReadTool).build();
}
