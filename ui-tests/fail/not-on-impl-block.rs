use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolprism::tool;

#[derive(Clone, Deserialize, JsonSchema)]
pub struct ReadArgs {
    pub path: String,
}

#[derive(Serialize, Deserialize, JsonSchema)]
pub struct ReadValue {
    pub text: String,
}

/// Read a file.
#[tool]
pub struct ReadTool;

fn main() {}
