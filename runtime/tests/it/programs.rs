//! The core's side of programs (P2, P4 in docs/contract.md), with a program
//! tool written in Rust, so these hold whatever engine runs the model's
//! programs: a program's call goes through the whole pipeline, computes its
//! meta (unlike a Rust nested call, C5/C14), is logged with its meta and
//! never its value, and is listed on the program tool's outcome so its
//! cards are drawn live exactly as replay draws them; and the registry's
//! mode decides what the model is offered, while programs reach every tool
//! but the program tool.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use toolprism::card::GenericResult;
use toolprism::log::SessionLog;
use toolprism::replay::replay_log;
use toolprism::{
    ContentBlock, Mode, PROGRAM_TOOL, Registry, ResultCard, ToolCall, ToolContext, ToolError,
    ToolResult, tool,
};

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

#[derive(Clone, Deserialize, JsonSchema)]
struct LineArgs {
    text: String,
}

/// The value of `lines`: a canary no file may ever hold.
#[derive(Serialize, Deserialize, JsonSchema)]
struct Lines {
    count: usize,
    secret: String,
}

#[derive(Serialize, Deserialize)]
struct LinesMeta {
    count: usize,
}

struct LinesTool;

/// Counts lines.
#[tool(name = "lines", read_only)]
impl LinesTool {
    fn execute(args: LineArgs) -> Lines {
        Lines {
            count: args.text.lines().count(),
            secret: "CANARY-7f3a".to_owned(),
        }
    }
    fn render(_: &LineArgs, v: &Lines) -> Vec<ContentBlock> {
        vec![ContentBlock::text(format!("{} lines", v.count))]
    }
    fn presentation_meta(_: &LineArgs, v: &Lines) -> LinesMeta {
        LinesMeta { count: v.count }
    }
    fn present_result(_: &LineArgs, r: &ToolResult<LinesMeta>) -> Option<ResultCard> {
        // Drawn from the meta only: a card without meta would differ.
        let meta = r.meta.as_ref()?;
        Some(ResultCard::generic(
            Some(format!("{} counted", meta.count)),
            Vec::new(),
        ))
    }
}

#[derive(Clone, Deserialize, JsonSchema)]
struct ProgramArgs {
    /// The texts to count, one call each; a name to call instead of `lines`.
    texts: Vec<String>,
    #[serde(default)]
    tool: Option<String>,
}

/// What the Rust program returns: the counts, or the first error's code.
#[derive(Serialize, Deserialize, JsonSchema)]
struct ProgramValue {
    counts: Vec<u64>,
    error: Option<String>,
}

struct ProgramTool;

/// Runs a tiny program: counts each text with a program call.
#[tool(name = "run_code")]
impl ProgramTool {
    async fn execute(
        &self,
        args: ProgramArgs,
        cx: &ToolContext<'_>,
    ) -> Result<ProgramValue, ToolError> {
        let program = cx.program();
        let name = args.tool.unwrap_or_else(|| "lines".to_owned());
        let mut counts = Vec::new();
        for text in args.texts {
            let cancel = program.cancellation().child_token();
            match program.call(&name, json!({"text": text}), cancel).await {
                Ok(value) => counts.push(value["count"].as_u64().unwrap()),
                Err(error) => {
                    return Ok(ProgramValue {
                        counts,
                        error: Some(error.code.to_string()),
                    });
                }
            }
        }
        Ok(ProgramValue {
            counts,
            error: None,
        })
    }
    fn render(_: &ProgramArgs, v: &ProgramValue) -> Vec<ContentBlock> {
        vec![ContentBlock::text(format!("{:?}", v.counts))]
    }
}

fn registry(mode: Mode, log: Option<SessionLog>) -> Registry {
    let mut builder = Registry::builder()
        .tool(LinesTool)
        .program(ProgramTool, |defs| {
            let names: Vec<&str> = defs.iter().map(|d| d.name.as_str()).collect();
            format!("Runs a program over: {}", names.join(", "))
        })
        .mode(mode);
    if let Some(log) = log {
        builder = builder.log(log);
    }
    builder.build().unwrap()
}

fn names<'a>(defs: impl Iterator<Item = &'a toolprism::ToolDefinition>) -> Vec<&'a str> {
    defs.map(|d| d.name.as_str()).collect()
}

#[test]
fn p4_program_calls_compute_meta_are_logged_without_values_and_draw_the_same_cards_live_and_replayed()
 {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("session.jsonl");
    let registry = registry(Mode::Both, Some(SessionLog::create(&path).unwrap()));
    let out = runtime().block_on(registry.call(ToolCall::new(
        "p1",
        PROGRAM_TOOL,
        r#"{"texts":["a\nb","c"]}"#,
    )));
    assert!(!out.is_error(), "{out:?}");
    assert_eq!(out.value().unwrap()["counts"], json!([2, 1]));

    // Listed on the outcome, in order, with their meta.
    let nested = out.nested_calls();
    assert_eq!(nested.len(), 2);
    for (i, (call, count)) in nested.iter().zip([2, 1]).enumerate() {
        assert_eq!(call.call_id, format!("p1:nested:{}", i + 1));
        assert_eq!(call.name, "lines");
        assert_eq!(call.result.meta, Some(json!({"count": count})));
        assert_eq!(call.error, None);
    }

    // In the log as nested events with their meta, tied to the program
    // call; the value's canary is nowhere in the file.
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(!text.contains("CANARY"), "{text}");
    let events: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let kinds: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        [
            "tool/call",
            "tool/nested-call",
            "tool/nested-result",
            "tool/nested-call",
            "tool/nested-result",
            "tool/result"
        ]
    );
    assert_eq!(events[2]["parentCallId"], "p1");
    assert_eq!(events[2]["meta"], json!({"count": 2}));

    // Live cards, drawn from the records, equal the replayed ones.
    let replayed = replay_log(&path, &registry).unwrap();
    let replayed_nested: Vec<_> = replayed.entries.iter().filter(|e| e.nested).collect();
    assert_eq!(replayed_nested.len(), 2);
    for (call, entry) in nested.iter().zip(replayed_nested) {
        let mut result = call.result.clone();
        let live_call = registry.present_call(&call.name, &call.arguments);
        let live_result = registry.present_result(&call.name, &call.arguments, &mut result);
        assert_eq!(entry.call_card, live_call);
        assert_eq!(entry.result_card.as_ref(), Some(&live_result));
        assert_eq!(entry.parent_call_id.as_deref(), Some("p1"));
        // Drawn from the meta (the presenter's own card, not the generic one).
        let ResultCard::Generic(GenericResult { title, .. }) = &live_result else {
            panic!("{live_result:?}");
        };
        assert!(title.as_deref().unwrap().ends_with("counted"), "{title:?}");
    }
}

#[test]
fn p2_a_program_call_that_fails_keeps_its_code_and_is_recorded() {
    let registry = registry(Mode::Both, None);
    // `lines` with a bad argument type: INVALID_ARGS, through the pipeline.
    let out = runtime().block_on(registry.call(ToolCall::new(
        "p2",
        PROGRAM_TOOL,
        r#"{"texts":["a"],"tool":"nope"}"#,
    )));
    assert_eq!(out.value().unwrap()["error"], "UNKNOWN_TOOL");
    assert_eq!(out.nested_calls().len(), 1);
    assert_eq!(
        out.nested_calls()[0].error.as_ref().map(|c| c.as_str()),
        Some("UNKNOWN_TOOL")
    );
}

#[test]
fn p2_programs_never_reach_the_program_tool() {
    let registry = registry(Mode::Both, None);
    let out = runtime().block_on(registry.call(ToolCall::new(
        "p3",
        PROGRAM_TOOL,
        r#"{"texts":["a"],"tool":"run_code"}"#,
    )));
    assert_eq!(out.value().unwrap()["error"], "UNKNOWN_TOOL");
    assert!(registry.program_definition(PROGRAM_TOOL).is_none());
    assert_eq!(names(registry.program_definitions()), ["lines"]);
}

#[test]
fn p6_the_mode_decides_what_the_model_is_offered() {
    let native = Registry::builder().tool(LinesTool).build().unwrap();
    assert_eq!(native.mode(), Mode::Native);
    assert_eq!(names(native.definitions()), ["lines"]);

    let code = registry(Mode::Code, None);
    assert_eq!(names(code.definitions()), [PROGRAM_TOOL]);
    assert_eq!(
        code.definition(PROGRAM_TOOL).unwrap().description,
        "Runs a program over: lines"
    );
    // The model cannot call a tool it is not offered; a program can.
    let direct = runtime().block_on(code.call(ToolCall::new("d", "lines", r#"{"text":"x"}"#)));
    assert_eq!(direct.code().unwrap(), "UNKNOWN_TOOL");
    assert!(
        direct
            .error()
            .unwrap()
            .message
            .ends_with("the available tools are: run_code"),
        "{direct:?}"
    );
    let via = runtime().block_on(code.call(ToolCall::new("p", PROGRAM_TOOL, r#"{"texts":["x"]}"#)));
    assert_eq!(via.value().unwrap()["counts"], json!([1]));

    let both = registry(Mode::Both, None);
    assert_eq!(names(both.definitions()), ["lines", PROGRAM_TOOL]);

    // Native with a program tool registered: not offered, not callable.
    let off = registry(Mode::Native, None);
    assert_eq!(names(off.definitions()), ["lines"]);
    let call = runtime().block_on(off.call(ToolCall::new("o", PROGRAM_TOOL, "{}")));
    assert_eq!(call.code().unwrap(), "UNKNOWN_TOOL");
}

#[test]
fn p6_run_code_is_reserved_and_code_mode_needs_a_program_tool() {
    // A user tool cannot take the name.
    let err = Registry::builder().tool(ProgramTool).build().unwrap_err();
    assert!(
        err.problems()[0].contains("\"run_code\" is reserved for Code Mode"),
        "{err}"
    );
    // A program tool must be named run_code.
    let err = Registry::builder()
        .program(LinesTool, |_| String::new())
        .build()
        .unwrap_err();
    assert!(
        err.problems()[0].contains("must be named \"run_code\""),
        "{err}"
    );
    // Code mode without one is a build error that says what to do.
    let err = Registry::builder()
        .tool(LinesTool)
        .mode(Mode::Code)
        .build()
        .unwrap_err();
    assert!(err.problems()[0].contains("feature `code`"), "{err}");
    // A describer that panics is a registry problem, not a crash.
    let err = Registry::builder()
        .program(ProgramTool, |_| panic!("no SDK today"))
        .mode(Mode::Both)
        .build()
        .unwrap_err();
    assert!(err.problems()[0].contains("no SDK today"), "{err}");
}
