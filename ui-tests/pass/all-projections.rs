//! A tool with every optional projection: meta, call card, result card.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolprism::card::{NumberedLine, ReadResult};
use toolprism::{
    CallCard, ContentBlock, Registry, ResultCard, Tool, ToolCall, ToolContext, ToolError, ToolKind,
    ToolResult, tool,
};

#[derive(Clone, Deserialize, JsonSchema)]
pub struct ReadArgs {
    pub path: String,
    #[serde(default)]
    pub offset: Option<u64>,
}

#[derive(Serialize, Deserialize, JsonSchema)]
pub struct ReadValue {
    pub lines: Vec<String>,
    pub total_lines: u64,
}

#[derive(Serialize, Deserialize)]
pub struct ReadMeta {
    pub offset: u64,
    pub total_lines: u64,
}

#[derive(Default)]
pub struct ReadTool;

/// # Read file
///
/// Read a text file as numbered lines.
#[tool(name = "read", kind = read, read_only, idempotent, timeout_ms = 5000, spill = never)]
impl ReadTool {
    async fn execute(&self, args: ReadArgs, _cx: &ToolContext<'_>) -> Result<ReadValue, ToolError> {
        if args.path.is_empty() {
            return Err(ToolError::new("the path is empty"));
        }
        Ok(ReadValue {
            lines: vec!["fn main() {}".to_owned(), "".to_owned()],
            total_lines: 2,
        })
    }

    fn render(args: &ReadArgs, value: &ReadValue) -> Vec<ContentBlock> {
        let first = args.offset.unwrap_or(1);
        let text: Vec<String> = value
            .lines
            .iter()
            .zip(first..)
            .map(|(line, n)| format!("{n:>4} {line}"))
            .collect();
        vec![ContentBlock::text(text.join("\n"))]
    }

    fn presentation_meta(args: &ReadArgs, value: &ReadValue) -> ReadMeta {
        ReadMeta {
            offset: args.offset.unwrap_or(1),
            total_lines: value.total_lines,
        }
    }

    fn present_call(args: &ReadArgs) -> CallCard {
        CallCard::generic(format!("Read {}", args.path), Some(ToolKind::Read), None)
    }

    fn present_result(args: &ReadArgs, result: &ToolResult<ReadMeta>) -> Option<ResultCard> {
        let meta = result.meta.as_ref()?;
        let text = result.content.first()?.as_text()?;
        let lines = text
            .lines()
            .zip(meta.offset..)
            .map(|(line, number)| NumberedLine::new(number, line.get(5..).unwrap_or("").to_owned()))
            .collect();
        Some(ResultCard::Read(ReadResult::new(
            args.path.clone(),
            meta.offset,
            lines,
            meta.total_lines,
        )))
    }
}

fn main() {
    let info = ReadTool::INFO;
    assert_eq!(info.name, "read");
    assert_eq!(info.title, Some("Read file"));
    assert_eq!(info.description, "Read a text file as numbered lines.");
    assert_eq!(info.kind, ToolKind::Read);
    assert!(info.annotations.read_only && info.annotations.idempotent);
    assert!(!info.annotations.destructive && !info.annotations.open_world);
    assert_eq!(info.timeout, Some(std::time::Duration::from_millis(5000)));
    assert_eq!(info.spill, toolprism::SpillBudget::Never);

    // The user's impl is still there: its methods can be called directly.
    let args = ReadArgs {
        path: "a.rs".into(),
        offset: None,
    };
    let value = ReadValue {
        lines: vec!["x".into()],
        total_lines: 1,
    };
    assert_eq!(
        ReadTool::render(&args, &value),
        [ContentBlock::text("   1 x")]
    );

    let registry = Registry::builder().tool(ReadTool).build().unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let out = runtime.block_on(registry.call(ToolCall::new("c1", "read", r#"{"path": "a.rs"}"#)));
    assert!(!out.is_error(), "{:?}", out.content());
    assert_eq!(out.meta().unwrap()["total_lines"], 2);
    assert_eq!(out.call_card().unwrap().tag(), "generic");
    assert_eq!(out.result_card().unwrap().tag(), "read");

    // Replayed from what is persisted, the result card is the same.
    let mut persisted = out.result().clone();
    let replayed = registry.present_result("read", r#"{"path": "a.rs"}"#, &mut persisted);
    assert_eq!(&replayed, out.result_card().unwrap());
}
