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

// Stands in for the `reqwest` crate, which this test crate does not depend on.
mod reqwest {
    pub mod blocking {
        pub fn get(_url: &str) -> String {
            String::new()
        }
    }
}

/// Read a file.
#[tool]
impl ReadTool {
    fn execute(&self, args: ReadArgs) -> ReadValue {
        ReadValue { text: args.path }
    }

    fn render(args: &ReadArgs, value: &ReadValue) -> Vec<ContentBlock> {
        let page = reqwest::blocking::get(&args.path);
        vec![ContentBlock::text(format!("{}{page}", value.text))]
    }
}

fn main() {}
