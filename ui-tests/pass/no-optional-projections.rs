//! A tool with only `execute` and `render`: no meta, generic cards, and
//! defaults for everything the attribute leaves out.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolprism::{ContentBlock, Registry, SpillBudget, Tool, ToolCall, ToolKind, tool};

#[derive(Clone, Deserialize, JsonSchema)]
pub struct Args {
    pub text: String,
}

#[derive(Serialize, Deserialize, JsonSchema)]
pub struct Shouted {
    pub text: String,
}

pub struct WebShoutTool;

/// Upper-case the text.
///
/// The second paragraph stays in the description.
#[tool]
impl WebShoutTool {
    fn execute(args: Args) -> Shouted {
        Shouted {
            text: args.text.to_uppercase(),
        }
    }

    // Lifetime parameters are fine on a projection.
    fn render<'a>(_args: &'a Args, value: &'a Shouted) -> Vec<ContentBlock> {
        vec![ContentBlock::text(&value.text)]
    }
}

fn main() {
    let info = WebShoutTool::INFO;
    assert_eq!(info.name, "web_shout");
    assert_eq!(info.title, None);
    assert_eq!(
        info.description,
        "Upper-case the text.\n\nThe second paragraph stays in the description."
    );
    assert_eq!(info.kind, ToolKind::Other);
    assert_eq!(info.annotations, toolprism::ToolAnnotations::NONE);
    assert_eq!(info.timeout, None);
    assert_eq!(info.spill, SpillBudget::Default);

    let registry = Registry::builder().tool(WebShoutTool).build().unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let out = runtime.block_on(registry.call(ToolCall::new("c1", "web_shout", r#"{"text":"hi"}"#)));
    assert_eq!(out.content(), [ContentBlock::text("HI")]);
    assert!(out.meta().is_none());
    assert_eq!(out.call_card().unwrap().tag(), "generic");
    assert_eq!(out.result_card().unwrap().tag(), "generic");
}
