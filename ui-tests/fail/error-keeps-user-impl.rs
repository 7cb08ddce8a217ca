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
#[tool(read_olny)]
impl ReadTool {
    fn execute(&self, args: ReadArgs) -> ReadValue {
        ReadValue { text: args.path }
    }

    fn render(_args: &ReadArgs, value: &ReadValue) -> Vec<ContentBlock> {
        vec![ContentBlock::text(&value.text)]
    }
}

// The impl block is still emitted, and so is a stand-in `Tool` impl: the
// only error is the attribute's.
fn main() {
    let args = ReadArgs {
        path: "a.txt".into(),
    };
    let value = ReadTool.execute(args.clone());
    let content = ReadTool::render(&args, &value);
    assert_eq!(content.len(), 1);
    let _registry = toolprism::Registry::builder().tool(ReadTool).build();
}
