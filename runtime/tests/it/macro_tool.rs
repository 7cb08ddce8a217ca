//! `#[tool]` seen from the runtime: what each attribute key generates, the
//! execute shapes, builtin registration, and `toolprism::testing`.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::json;
use toolprism::card::TerminalCall;
use toolprism::testing::check_projections;
use toolprism::{
    CallCard, ContentBlock, NoMeta, Registry, ResultCard, SpillBudget, Tool, ToolAnnotations,
    ToolCall, ToolContext, ToolError, ToolKind, ToolResult, tool,
};

#[derive(Clone, Deserialize, schemars::JsonSchema)]
struct PathArgs {
    path: String,
    #[serde(default)]
    limit: Option<u32>,
}

#[derive(Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
struct Listing {
    entries: Vec<String>,
    #[serde(default)]
    truncated: bool,
}

#[derive(Serialize, Deserialize)]
struct ListingMeta {
    shown: usize,
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

#[derive(Default)]
struct ListDirTool;

/// # List directory
///
/// List the entries of a directory,
/// one per line.
#[tool(kind = search, read_only, idempotent, open_world, destructive, timeout_ms = 2500, spill = 65536, builtin)]
impl ListDirTool {
    async fn execute(&self, args: PathArgs, cx: &ToolContext<'_>) -> Result<Listing, ToolError> {
        if cx.is_cancelled() {
            return Err(ToolError::new("cancelled"));
        }
        let limit = args.limit.unwrap_or(3) as usize;
        let all = ["a", "b", "c", "d"];
        Ok(Listing {
            entries: all
                .iter()
                .take(limit)
                .map(|e| format!("{}/{e}", args.path))
                .collect(),
            truncated: limit < all.len(),
        })
    }

    fn render(_args: &PathArgs, value: &Listing) -> Vec<ContentBlock> {
        vec![ContentBlock::text(value.entries.join("\n"))]
    }

    fn presentation_meta(_args: &PathArgs, value: &Listing) -> ListingMeta {
        ListingMeta {
            shown: value.entries.len(),
        }
    }

    fn present_call(args: &PathArgs) -> CallCard {
        CallCard::Terminal(TerminalCall::new(format!("ls {}", args.path)))
    }

    fn present_result(_args: &PathArgs, result: &ToolResult<ListingMeta>) -> Option<ResultCard> {
        let meta = result.meta.as_ref()?;
        Some(ResultCard::generic(
            Some(format!("{} entries", meta.shown)),
            result.content.clone(),
        ))
    }
}

#[test]
fn every_key_reaches_tool_info() {
    let info = ListDirTool::INFO;
    assert_eq!(info.name, "list_dir");
    assert_eq!(info.title, Some("List directory"));
    assert_eq!(
        info.description,
        "List the entries of a directory,\none per line."
    );
    assert_eq!(info.kind, ToolKind::Search);
    assert_eq!(
        info.annotations,
        ToolAnnotations::NONE
            .with_read_only(true)
            .with_destructive(true)
            .with_idempotent(true)
            .with_open_world(true)
    );
    assert_eq!(info.timeout, Some(Duration::from_millis(2500)));
    assert_eq!(info.spill, SpillBudget::Bytes(65536));
}

#[test]
fn the_generated_tool_runs_the_pipeline() {
    let registry = Registry::builder().tool(ListDirTool).build().unwrap();
    let definition = registry.definition("list_dir").unwrap();
    assert_eq!(definition.title.as_deref(), Some("List directory"));
    assert_eq!(definition.input_schema["required"], json!(["path"]));
    // Output schema under the serialize contract: `truncated` is always there.
    assert_eq!(
        definition.output_schema["required"],
        json!(["entries", "truncated"])
    );

    let out =
        runtime().block_on(registry.call(ToolCall::new("c1", "list_dir", r#"{"path":"src"}"#)));
    assert!(!out.is_error(), "{out:?}");
    assert_eq!(out.content(), [ContentBlock::text("src/a\nsrc/b\nsrc/c")]);
    assert_eq!(out.meta(), Some(&json!({"shown": 3})));
    assert_eq!(out.call_card().unwrap().tag(), "terminal");
    let card = serde_json::to_value(out.result_card().unwrap()).unwrap();
    assert_eq!(card["title"], "3 entries");
    assert_eq!(
        out.value_as::<Listing>().unwrap().entries,
        ["src/a", "src/b", "src/c"]
    );

    let typed = runtime()
        .block_on(registry.call_typed::<ListDirTool>(json!({"path": "x", "limit": 1})))
        .unwrap();
    assert_eq!(
        typed,
        Listing {
            entries: vec!["x/a".into()],
            truncated: true
        }
    );
}

#[test]
fn builtin_tools_need_no_list() {
    let registry = Registry::builtin().build().unwrap();
    let names: Vec<&str> = registry.definitions().map(|d| d.name.as_str()).collect();
    assert_eq!(names, ["list_dir"]);
}

// -- execute shapes -----------------------------------------------------------

#[derive(Clone, Deserialize, schemars::JsonSchema)]
struct Empty {}

struct Constant;

/// Always 7, synchronously, with no receiver and no context.
#[tool]
impl Constant {
    fn execute(_args: Empty) -> u8 {
        7
    }

    fn render(_args: &Empty, value: &u8) -> Vec<ContentBlock> {
        vec![ContentBlock::text(value.to_string())]
    }
}

struct Failing;

/// Fails with an `io::Error`, which becomes the message.
#[tool(name = "failing")]
impl Failing {
    async fn execute(&self, _args: Empty) -> Result<u8, std::io::Error> {
        Err(std::io::Error::other("disk full"))
    }

    fn render(_args: &Empty, value: &u8) -> Vec<ContentBlock> {
        vec![ContentBlock::text(value.to_string())]
    }
}

#[test]
fn execute_shapes_and_errors() {
    let registry = Registry::builder()
        .tool(Constant)
        .tool(Failing)
        .build()
        .unwrap();
    let rt = runtime();
    let out = rt.block_on(registry.call(ToolCall::new("1", "constant", "{}")));
    assert_eq!(out.value(), Some(&json!(7)));
    let out = rt.block_on(registry.call(ToolCall::new("2", "failing", "")));
    let error = out.error().unwrap();
    assert_eq!(error.code.as_str(), "TOOL_FAILED");
    assert_eq!(error.message, "disk full");
    assert_eq!(out.content(), [ContentBlock::text("Error: disk full")]);
}

// -- toolprism::testing -------------------------------------------------------

#[test]
fn check_projections_accepts_pure_projections() {
    let value = Listing {
        entries: vec!["src/a".into()],
        truncated: false,
    };
    let report =
        check_projections::<ListDirTool>(json!({"path": "src", "limit": 1}), &value).unwrap();
    assert_eq!(report.content, [ContentBlock::text("src/a")]);
    assert_eq!(report.meta, Some(json!({"shown": 1})));
    assert_eq!(report.call_card.tag(), "terminal");
    assert_eq!(report.result_card.tag(), "generic");
    // Undeserializable arguments and meta gave the generic card.
    let case = |input: &str| {
        report
            .malformed
            .iter()
            .find(|c| c.input == input)
            .unwrap_or_else(|| panic!("no case {input:?} in {:#?}", report.malformed))
            .card
    };
    assert_eq!(
        case("present_call with arguments that are not JSON"),
        "generic"
    );
    assert_eq!(
        case("present_call with arguments missing `path`"),
        "generic"
    );
    assert_eq!(
        case("present_call with arguments missing `limit`"),
        "terminal"
    );
    assert_eq!(
        case("present_call with arguments with `path` of the wrong type"),
        "generic"
    );
    assert_eq!(
        case("present_result with meta of the wrong shape (42)"),
        "generic"
    );
    assert_eq!(
        case("present_result with an error result (isError: true)"),
        "generic"
    );
}

struct Fragile;

/// A presenter that assumes too much.
#[tool]
impl Fragile {
    fn execute(_args: Empty) -> u8 {
        1
    }

    fn render(_args: &Empty, value: &u8) -> Vec<ContentBlock> {
        vec![ContentBlock::text(value.to_string())]
    }

    fn present_result(_args: &Empty, result: &ToolResult<NoMeta>) -> ResultCard {
        // Panics on an empty result: presenters must be total.
        let first = result.content[0].clone();
        ResultCard::generic(None, vec![first])
    }
}

#[test]
fn check_projections_reports_presenters_that_panic() {
    let err = check_projections::<Fragile>(json!({}), &1).unwrap_err();
    assert!(
        err.problems()
            .iter()
            .any(|p| p.starts_with("`present_result` panicked on empty content")),
        "{err}"
    );
    assert!(
        err.problems()
            .iter()
            .any(|p| p
                .starts_with("`present_result` panicked on an error result with empty content")),
        "{err}"
    );
}

mod clock {
    use std::sync::atomic::{AtomicU64, Ordering};

    static TICKS: AtomicU64 = AtomicU64::new(0);

    /// Reads global state the compile-time check cannot see through.
    pub(crate) fn tick() -> u64 {
        TICKS.fetch_add(1, Ordering::Relaxed)
    }
}

struct Stamped;

/// Stamps its meta with a tick: not reproducible.
#[tool]
impl Stamped {
    fn execute(_args: Empty) -> u8 {
        1
    }

    fn render(_args: &Empty, value: &u8) -> Vec<ContentBlock> {
        vec![ContentBlock::text(value.to_string())]
    }

    fn presentation_meta(_args: &Empty, _value: &u8) -> u64 {
        clock::tick()
    }
}

#[test]
fn check_projections_catches_what_the_compiler_cannot_see() {
    let err = check_projections::<Stamped>(json!({}), &1).unwrap_err();
    assert_eq!(err.problems().len(), 1, "{err}");
    assert!(
        err.problems()[0].starts_with(
            "`presentation_meta` is not pure: two runs on the same inputs returned different output"
        ),
        "{err}"
    );
}

#[test]
fn check_projections_needs_arguments_of_the_right_type() {
    let err = check_projections::<ListDirTool>(
        json!({"path": 1}),
        &Listing {
            entries: vec![],
            truncated: false,
        },
    )
    .unwrap_err();
    assert!(err.problems()[0].contains("do not deserialize"), "{err}");
}
