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

use std::sync::atomic::{AtomicU64, Ordering};

static RENDERS: AtomicU64 = AtomicU64::new(0);

/// Read a file.
#[tool]
impl ReadTool {
    fn execute(&self, args: ReadArgs) -> ReadValue {
        ReadValue { text: args.path }
    }

    fn render(args: &ReadArgs, value: &ReadValue) -> Vec<ContentBlock> {
        let _ = args;
        let n = RENDERS.fetch_add(1, Ordering::Relaxed);
        vec![ContentBlock::text(format!("{} (render {n})", value.text))]
    }
}

fn main() {}
