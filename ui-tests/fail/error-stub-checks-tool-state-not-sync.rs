//! On an attribute error, the stand-in `Tool` impl still checks the tool type:
//! state that is not `Sync` is one error at the type, none at `.tool(..)`.

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
    seen: std::cell::Cell<u32>,
}

/// Read a file.
#[tool(read_olny)]
impl ReadTool {
    fn execute(&self, args: ReadArgs) -> ReadValue {
        self.seen.set(1);
        ReadValue { text: args.path }
    }

    fn render(_args: &ReadArgs, value: &ReadValue) -> Vec<ContentBlock> {
        vec![ContentBlock::text(&value.text)]
    }
}

fn main() {
    let _ = Registry::builder().tool(ReadTool { seen: Default::default() }).build();
}
