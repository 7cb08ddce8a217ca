//! The tool is registered: its state that is not `Sync` is one error, at the type.

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

pub struct ReadTool {
    seen: std::cell::RefCell<Vec<String>>,
}

/// Read a file.
#[tool]
impl ReadTool {
    fn execute(&self, args: ReadArgs) -> ReadValue {
        self.seen.borrow_mut().push(args.path.clone());
        ReadValue { text: args.path }
    }

    fn render(_args: &ReadArgs, value: &ReadValue) -> Vec<ContentBlock> {
        vec![ContentBlock::text(&value.text)]
    }
}

fn main() {
    let tool = ReadTool {
        seen: Default::default(),
    };
    let _ = Registry::builder().tool(tool).build();
}
