//! The way back from a dialect, through the registry: arguments an OpenAI
//! strict model sends (a `null` for every field that was optional) are
//! accepted with `CallOptions::with_dialect`, the session log records the
//! dialect, and replay reads the raw arguments the same way, so the
//! replayed cards equal the live ones.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolprism::card::TerminalCall;
use toolprism::dialect::{Dialect, definition};
use toolprism::log::SessionLog;
use toolprism::replay::replay_log;
use toolprism::{CallCard, CallOptions, ContentBlock, Registry, ToolCall, tool};

#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
struct Search {
    query: String,
    #[serde(default)]
    limit: u32,
    lang: Option<String>,
}

#[derive(Serialize, Deserialize, JsonSchema)]
struct Found {
    query: String,
    limit: u32,
    lang: Option<String>,
}

struct Finder;

/// Finds things.
#[tool]
impl Finder {
    fn execute(args: Search) -> Found {
        Found {
            query: args.query,
            limit: args.limit,
            lang: args.lang,
        }
    }
    fn render(_: &Search, v: &Found) -> Vec<ContentBlock> {
        vec![ContentBlock::text(format!("{} ({})", v.query, v.limit))]
    }
    fn present_call(args: &Search) -> CallCard {
        let mut card = TerminalCall::new(format!("find {} (limit {})", args.query, args.limit));
        card.description = args.lang.clone();
        CallCard::Terminal(card)
    }
}

#[test]
fn openai_strict_nulls_are_accepted_logged_and_replayed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    let registry = Registry::builder()
        .tool(Finder)
        .log(SessionLog::create(&path).unwrap())
        .build()
        .unwrap();
    // The strict view makes every field required and nullable.
    let strict = definition(Dialect::OpenAi, registry.definition("finder").unwrap()).unwrap();
    let params = &strict.json()["function"]["parameters"];
    let mut required: Vec<&str> = params["required"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    required.sort_unstable();
    assert_eq!(required, ["lang", "limit", "query"]);

    let sent = r#"{"query":"prism","limit":null,"lang":null}"#;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    // Without the dialect, the nulls break the canonical schema.
    let plain = rt.block_on(registry.call(ToolCall::new("1", "finder", sent)));
    assert_eq!(plain.code().unwrap(), "INVALID_ARGS");
    // With it, they are the defaults they stood for.
    let options = CallOptions::new().with_dialect(Dialect::OpenAi);
    let live = rt.block_on(registry.call_with(ToolCall::new("2", "finder", sent), &options));
    assert!(!live.is_error(), "{live:?}");
    assert_eq!(
        live.value().unwrap(),
        &serde_json::json!({"query": "prism", "limit": 0, "lang": null})
    );
    assert_eq!(live.call_card().unwrap().tag(), "terminal");

    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains(r#""dialect":"openai""#), "{text}");
    let replayed = replay_log(&path, &registry).unwrap();
    assert!(replayed.problems.is_empty(), "{:?}", replayed.problems);
    let entry = replayed.entries.iter().find(|e| e.call_id == "2").unwrap();
    assert_eq!(
        entry.arguments, sent,
        "the raw arguments are what is logged"
    );
    assert_eq!(Some(&entry.call_card), live.call_card());
    assert_eq!(entry.result_card.as_ref(), live.result_card());
}
