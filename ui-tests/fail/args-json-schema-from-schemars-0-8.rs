//! A user on schemars 0.8: `#[derive(schemars::JsonSchema)]` there writes an
//! impl of schemars 0.8's `JsonSchema` like the one below, which is another
//! trait than the `JsonSchema` of schemars 1 that toolprism needs. (Written
//! by hand here: schemars 0.8's derive would compile a second `syn`.)

use serde::{Deserialize, Serialize};
use toolprism::{ContentBlock, Registry, tool};

#[derive(Clone, Deserialize)]
pub struct ReadArgs {
    pub path: String,
}

impl schemars08::JsonSchema for ReadArgs {
    fn schema_name() -> String {
        "ReadArgs".to_owned()
    }

    fn json_schema(_: &mut schemars08::r#gen::SchemaGenerator) -> schemars08::schema::Schema {
        schemars08::schema::Schema::Bool(true)
    }
}

#[derive(Serialize, Deserialize, schemars::JsonSchema)]
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

    fn render(_args: &ReadArgs, value: &ReadValue) -> Vec<ContentBlock> {
        vec![ContentBlock::text(&value.text)]
    }
}

fn main() {
    let _ = Registry::builder().tool(ReadTool).build();
}
