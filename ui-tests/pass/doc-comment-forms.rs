//! Where the name, title and description come from: the type name, the
//! `title` key, a `# Heading` line, `#[doc = include_str!(..)]`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolprism::{ContentBlock, Tool, tool};

#[derive(Clone, Deserialize, JsonSchema)]
pub struct Args {}

#[derive(Serialize, Deserialize, JsonSchema)]
pub struct Done {}

fn nothing(_: &Args, _: &Done) -> Vec<ContentBlock> {
    Vec::new()
}

pub struct GrepTool;

#[doc = include_str!("doc-comment-forms.md")]
#[tool(kind = search)]
impl GrepTool {
    fn execute(_args: Args) -> Done {
        Done {}
    }
    fn render(args: &Args, value: &Done) -> Vec<ContentBlock> {
        nothing(args, value)
    }
}

pub struct Titled;

/// # A heading that stays
///
/// With `title` set, the doc comment is all description.
#[tool(title = "Titled tool")]
impl Titled {
    fn execute(_args: Args) -> Done {
        Done {}
    }
    fn render(args: &Args, value: &Done) -> Vec<ContentBlock> {
        nothing(args, value)
    }
}

pub struct Undocumented;

#[tool(name = "undocumented-1")]
impl Undocumented {
    fn execute(_args: Args) -> Done {
        Done {}
    }
    fn render(args: &Args, value: &Done) -> Vec<ContentBlock> {
        nothing(args, value)
    }
}

pub struct HTTPGetTool;

/**
 * Block comments work too.
 */
#[tool]
impl HTTPGetTool {
    fn execute(_args: Args) -> Done {
        Done {}
    }
    fn render(args: &Args, value: &Done) -> Vec<ContentBlock> {
        nothing(args, value)
    }
}

fn main() {
    assert_eq!(GrepTool::INFO.name, "grep");
    assert_eq!(GrepTool::INFO.title, Some("Grep"));
    assert_eq!(
        GrepTool::INFO.description,
        "Search file contents with a regular expression."
    );

    assert_eq!(Titled::INFO.name, "titled");
    assert_eq!(Titled::INFO.title, Some("Titled tool"));
    assert_eq!(
        Titled::INFO.description,
        "# A heading that stays\n\nWith `title` set, the doc comment is all description."
    );

    assert_eq!(Undocumented::INFO.name, "undocumented-1");
    assert_eq!(Undocumented::INFO.description, "");

    assert_eq!(HTTPGetTool::INFO.name, "http_get");
    assert!(
        HTTPGetTool::INFO
            .description
            .contains("Block comments work too.")
    );
}
