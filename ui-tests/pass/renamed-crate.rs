//! With `crate = ::tp`, the expansion reaches the runtime only through that
//! path. Here `toolprism` is rebound to `core`, so a stray `::toolprism::...`
//! in the expansion would not compile.

extern crate core as toolprism;
extern crate toolprism as tp;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tp::{ContentBlock, Registry, ToolCall};

#[derive(Clone, Deserialize, JsonSchema)]
pub struct Args {
    pub text: String,
}

#[derive(Serialize, Deserialize, JsonSchema)]
pub struct Reversed {
    pub text: String,
}

#[derive(Serialize, Deserialize)]
pub struct Meta {
    pub len: usize,
}

#[derive(Default)]
pub struct ReverseTool;

/// Reverse the text.
#[tp::tool(crate = ::tp, builtin, kind = edit, timeout_ms = 1000)]
impl ReverseTool {
    async fn execute(
        &self,
        args: Args,
        _cx: &tp::ToolContext<'_>,
    ) -> Result<Reversed, tp::ToolError> {
        Ok(Reversed {
            text: args.text.chars().rev().collect(),
        })
    }

    fn render(_args: &Args, value: &Reversed) -> Vec<ContentBlock> {
        vec![ContentBlock::text(&value.text)]
    }

    fn presentation_meta(_args: &Args, value: &Reversed) -> Meta {
        Meta {
            len: value.text.len(),
        }
    }

    fn present_call(args: &Args) -> tp::CallCard {
        tp::CallCard::generic(&args.text, None, None)
    }

    fn present_result(_args: &Args, result: &tp::ToolResult<Meta>) -> Option<tp::ResultCard> {
        let meta = result.meta.as_ref()?;
        Some(tp::ResultCard::generic(
            Some(meta.len.to_string()),
            result.content.clone(),
        ))
    }
}

fn main() {
    let _: Option<u8> = toolprism::option::Option::None;
    let registry = Registry::builtin().build().unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let out = runtime.block_on(registry.call(ToolCall::new("c1", "reverse", r#"{"text":"abc"}"#)));
    assert_eq!(out.content(), [ContentBlock::text("cba")]);
    assert_eq!(out.meta().unwrap()["len"], 3);
}
