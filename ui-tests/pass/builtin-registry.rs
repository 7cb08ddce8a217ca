//! `builtin` tools are found by `Registry::builtin()`, with no list kept by hand.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolprism::{ContentBlock, Registry, ToolCall, tool};

#[derive(Clone, Deserialize, JsonSchema)]
pub struct Text {
    pub text: String,
}

#[derive(Serialize, Deserialize, JsonSchema)]
pub struct Count {
    pub count: usize,
}

#[derive(Default)]
pub struct WordCountTool {
    separator: Option<char>,
}

/// Count the words in the text.
#[tool(builtin, read_only)]
impl WordCountTool {
    fn execute(&self, args: Text) -> Count {
        let count = match self.separator {
            Some(c) => args.text.split(c).filter(|w| !w.is_empty()).count(),
            None => args.text.split_whitespace().count(),
        };
        Count { count }
    }

    fn render(_args: &Text, value: &Count) -> Vec<ContentBlock> {
        vec![ContentBlock::text(format!("{} words", value.count))]
    }
}

#[derive(Default)]
pub struct CharCountTool;

/// Count the characters in the text.
#[tool(builtin)]
impl CharCountTool {
    fn execute(args: Text) -> Count {
        Count {
            count: args.text.chars().count(),
        }
    }

    fn render(_args: &Text, value: &Count) -> Vec<ContentBlock> {
        vec![ContentBlock::text(format!("{} characters", value.count))]
    }
}

/// Not builtin: only registered by hand.
pub struct Hidden;

/// A tool nobody listed.
#[tool]
impl Hidden {
    fn execute(args: Text) -> Count {
        Count {
            count: args.text.len(),
        }
    }

    fn render(_args: &Text, value: &Count) -> Vec<ContentBlock> {
        vec![ContentBlock::text(value.count.to_string())]
    }
}

fn main() {
    let registry = Registry::builtin().build().unwrap();
    let names: Vec<&str> = registry.definitions().map(|d| d.name.as_str()).collect();
    assert_eq!(names, ["char_count", "word_count"]);

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let out =
        runtime.block_on(registry.call(ToolCall::new("c1", "word_count", r#"{"text":"a b  c"}"#)));
    assert_eq!(out.content(), [ContentBlock::text("3 words")]);

    // A builtin registry can take more tools.
    let registry = Registry::builtin().tool(Hidden).build().unwrap();
    assert_eq!(registry.definitions().len(), 3);
}
