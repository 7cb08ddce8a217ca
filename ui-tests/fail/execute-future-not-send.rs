use std::rc::Rc;

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
    async fn execute(&self, args: ReadArgs) -> ReadValue {
        // An `Rc` held across an `.await`: the future is not `Send`.
        let path = Rc::new(args.path);
        tokio::task::yield_now().await;
        ReadValue {
            text: path.to_string(),
        }
    }

    fn render(_args: &ReadArgs, value: &ReadValue) -> Vec<ContentBlock> {
        vec![ContentBlock::text(&value.text)]
    }
}

fn main() {}
