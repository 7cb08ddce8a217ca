//! `run_code` end to end, with the real engine (P1–P5 in docs/contract.md):
//! programs over the built-in file tools in a temp workspace and a few test
//! tools; hostile programs, each an error result with its own code while
//! the next call still works; values that never reach a file; nested cards
//! drawn live equal to the replayed ones.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use toolprism::code::{CodeMode, Limits};
use toolprism::log::SessionLog;
use toolprism::replay::replay_log;
use toolprism::{
    CallOptions, CancellationToken, ContentBlock, Mode, Registry, ToolCall, ToolContext, ToolError,
    ToolOutcome, tool,
};
use toolprism_tools::Workspace;

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

#[derive(Clone, Deserialize, JsonSchema)]
struct Empty {}

#[derive(Clone, Deserialize, JsonSchema)]
struct Millis {
    ms: u64,
}

/// Panics.
#[tool(name = "boom", read_only)]
impl Boom {
    fn execute(_args: Empty) -> u32 {
        panic!("boom")
    }
    fn render(_: &Empty, v: &u32) -> Vec<ContentBlock> {
        vec![ContentBlock::text(v.to_string())]
    }
}
struct Boom;

/// Sleeps `ms`, past its own 200 ms timeout when asked to.
#[tool(name = "nap", read_only, timeout_ms = 200)]
impl Nap {
    async fn execute(&self, args: Millis, cx: &ToolContext<'_>) -> Result<u64, ToolError> {
        tokio::select! {
            () = tokio::time::sleep(Duration::from_millis(args.ms)) => {}
            () = cx.cancelled() => {}
        }
        Ok(args.ms)
    }
    fn render(_: &Millis, v: &u64) -> Vec<ContentBlock> {
        vec![ContentBlock::text(v.to_string())]
    }
}
struct Nap;

/// A value holding a secret a program reads.
#[derive(Serialize, Deserialize, JsonSchema)]
struct Secret {
    token: String,
}

/// Returns a secret.
#[tool(name = "secret", read_only)]
impl SecretTool {
    fn execute(_args: Empty) -> Secret {
        Secret {
            token: "CANARY-c0de-9f1e".to_owned(),
        }
    }
    fn render(_: &Empty, _v: &Secret) -> Vec<ContentBlock> {
        vec![ContentBlock::text("(a secret)")]
    }
}
struct SecretTool;

/// Counts its calls.
#[tool(name = "tick", read_only)]
impl Tick {
    async fn execute(&self, _args: Empty, _cx: &ToolContext<'_>) -> Result<usize, ToolError> {
        Ok(self.0.fetch_add(1, Ordering::SeqCst) + 1)
    }
    fn render(_: &Empty, v: &usize) -> Vec<ContentBlock> {
        vec![ContentBlock::text(v.to_string())]
    }
}
struct Tick(Arc<AtomicUsize>);

struct Fixture {
    _dir: tempfile::TempDir,
    registry: Registry,
    ticks: Arc<AtomicUsize>,
    log: std::path::PathBuf,
}

fn fixture(limits: Limits) -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("work");
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(
        root.join("src/main.rs"),
        "fn main() {\n    // TODO: greet\n    println!(\"hi\");\n}\n",
    )
    .unwrap();
    std::fs::write(root.join("src/lib.rs"), "// TODO: docs\npub fn f() {}\n").unwrap();
    std::fs::write(root.join("notes.md"), "# Notes\n").unwrap();
    for i in 0..50 {
        std::fs::write(root.join(format!("src/f{i}.txt")), format!("line {i}\n")).unwrap();
    }
    let log = dir.path().join("session.jsonl");
    let workspace = Workspace::new(&root).unwrap();
    let ticks = Arc::new(AtomicUsize::new(0));
    let registry = toolprism_tools::register_in(Registry::builder(), &workspace)
        .tool(Boom)
        .tool(Nap)
        .tool(SecretTool)
        .tool(Tick(ticks.clone()))
        .log(SessionLog::create(&log).unwrap())
        .code_mode_with(Mode::Both, limits)
        .build()
        .unwrap();
    Fixture {
        _dir: dir,
        registry,
        ticks,
        log,
    }
}

fn run(registry: &Registry, code: &str) -> ToolOutcome {
    let args = json!({"code": code, "description": "a test program"}).to_string();
    runtime().block_on(registry.call(ToolCall::new("r1", "run_code", args)))
}

/// The registry still serves: a good program right after.
fn still_serving(registry: &Registry) {
    let out = run(registry, "return (await tools.tick({})) > 0;");
    assert_eq!(out.value().unwrap()["result"], true, "{out:?}");
}

fn expect(registry: &Registry, code: &str, error: &str) -> String {
    let out = run(registry, code);
    assert!(out.is_error(), "{code} → {out:?}");
    assert_eq!(out.code().unwrap(), error, "{code} → {out:?}");
    still_serving(registry);
    out.error().unwrap().message.clone()
}

#[test]
fn p2_a_program_globs_greps_and_reads_in_one_call() {
    let f = fixture(Limits::default());
    let program = r#"
        const files = await tools.glob({ pattern: "src/*.rs" });
        const hits = await tools.grep({ pattern: "TODO" });
        const first = hits.matches[0];
        const text = await tools.read({ path: first.path });
        console.log(`${files.paths.length} files, ${hits.matches.length} TODOs`);
        return { first: first.path, lines: text.totalLines };
    "#;
    let out = run(&f.registry, program);
    assert!(!out.is_error(), "{out:?}");
    let value = out.value().unwrap();
    assert_eq!(value["logs"], json!(["2 files, 2 TODOs"]), "{value}");
    assert!(value["result"]["lines"].as_u64().unwrap() > 0);
    // One nested call per tool call, each with its own persisted result.
    let names: Vec<&str> = out.nested_calls().iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["glob", "grep", "read"]);
    // The model reads the logs, then the result.
    let text = toolprism::content_text(out.content());
    assert!(text.starts_with("2 files, 2 TODOs\n{"), "{text}");
}

#[test]
fn p4_values_never_reach_a_file_and_nested_cards_replay_as_they_were_drawn_live() {
    let f = fixture(Limits::default());
    let out = run(
        &f.registry,
        "const s = await tools.secret({}); const r = await tools.read({path: 'notes.md'}); return s.token.length + r.totalLines;",
    );
    assert!(!out.is_error(), "{out:?}");
    let text = std::fs::read_to_string(&f.log).unwrap();
    assert!(!text.contains("CANARY"), "a value reached the log: {text}");
    let replayed = replay_log(&f.log, &f.registry).unwrap();
    let nested: Vec<_> = replayed.entries.iter().filter(|e| e.nested).collect();
    assert_eq!(nested.len(), out.nested_calls().len());
    for (live, entry) in out.nested_calls().iter().zip(nested) {
        let mut result = live.result.clone();
        assert_eq!(
            entry.call_card,
            f.registry.present_call(&live.name, &live.arguments)
        );
        assert_eq!(
            entry.result_card.as_ref(),
            Some(
                &f.registry
                    .present_result(&live.name, &live.arguments, &mut result)
            )
        );
        assert_eq!(entry.parent_call_id.as_deref(), Some("r1"));
        assert_eq!(entry.meta, live.result.meta);
    }
    // The read's card is a read card, drawn from its meta.
    assert_eq!(
        replayed
            .entries
            .iter()
            .filter(|e| e.nested)
            .nth(1)
            .unwrap()
            .result_card
            .as_ref()
            .unwrap()
            .tag(),
        "read"
    );
}

#[test]
fn p5_hostile_programs_each_end_with_their_own_code() {
    let mut limits = Limits::default();
    limits.compute = Duration::from_secs(2);
    limits.wall = Duration::from_secs(6);
    limits.max_calls = 1000;
    limits.memory_bytes = 64 << 20;
    let f = fixture(limits);
    let r = &f.registry;
    expect(r, "while (true) {}", "COMPUTE_LIMIT");
    // A hot loop dies while a slow tool is pending.
    expect(r, "tools.nap({ms: 150}); while (true) {}", "COMPUTE_LIMIT");
    expect(
        r,
        "const a = new Array(1e9).fill(0); return a.length;",
        "MEMORY_LIMIT",
    );
    expect(
        r,
        "function f(n) { return f(n + 1) + 1; } return f(0);",
        "STACK_LIMIT",
    );
    expect(r, "await new Promise(() => {});", "STALLED");
    expect(
        r,
        "for (let i = 0; i < 100000; i++) { await tools.tick({}); }",
        "CALL_LIMIT",
    );
    expect(r, "const a = {}; a.self = a; return a;", "INVALID_RESULT");
    expect(r, "return 10n;", "INVALID_RESULT");
    let message = expect(r, "throw new Error('bad ' + 'x'.repeat(10));", "EXCEPTION");
    assert!(message.contains("line 1"), "{message}");
    expect(r, "return (", "SYNTAX_ERROR");
}

#[test]
fn p3_arguments_that_are_not_lossless_json_never_reach_a_tool() {
    let f = fixture(Limits::default());
    for arg in [
        "-0",
        "NaN",
        "Infinity",
        "10n",
        "undefined",
        "[1,,3]",
        "() => 1",
        "Symbol('x')",
    ] {
        let program = format!(
            "try {{ await tools.tick({{ n: {arg} }}); return 'called'; }} catch (e) {{ return [e instanceof ToolCallError, e.code, e.message]; }}"
        );
        let out = run(&f.registry, &program);
        let result = &out.value().unwrap()["result"];
        assert_eq!(result[0], true, "{arg}: {result}");
        assert!(
            result[2].as_str().unwrap().contains("args.n"),
            "{arg}: {result}"
        );
    }
    assert_eq!(f.ticks.load(Ordering::SeqCst), 0, "no tool ran");
}

#[test]
fn p2_failures_reject_with_a_real_tool_call_error() {
    let f = fixture(Limits::default());
    let program = r#"
        const seen = [];
        for (const [name, args] of [["boom", {}], ["nap", {ms: 1000}], ["nope", {}], ["read", {path: "../etc/passwd"}], ["read", {}]]) {
            try { await tools[name](args); seen.push("ok"); }
            catch (e) { seen.push([e instanceof ToolCallError, e.toolName, e.code]); }
        }
        return seen;
    "#;
    let out = run(&f.registry, program);
    let seen = &out.value().unwrap()["result"];
    assert_eq!(seen[0], json!([true, "boom", "TOOL_FAILED"]));
    assert_eq!(seen[1], json!([true, "nap", "TIMEOUT"]));
    assert_eq!(seen[2], json!([true, "nope", "UNKNOWN_TOOL"]));
    assert_eq!(seen[3][0], true);
    assert_eq!(seen[4], json!([true, "read", "INVALID_ARGS"]));
}

#[test]
fn p1_tampering_with_globals_changes_nothing_the_boundary_does() {
    let f = fixture(Limits::default());
    let program = r#"
        Object.prototype.toJSON = () => "hijacked";
        JSON.stringify = () => "hijacked";
        JSON.parse = () => ({});
        Array.isArray = () => false;
        Object.keys = () => [];
        try { tools.__proto__ = null; } catch (e) {}
        const r = await tools.read({ path: "notes.md" });
        return { lines: r.totalLines, isArray: Array.isArray([]), first: r.lines[0] };
    "#;
    let out = run(&f.registry, program);
    assert!(!out.is_error(), "{out:?}");
    let result = &out.value().unwrap()["result"];
    assert_eq!(result["lines"], 1);
    assert_eq!(result["isArray"], false);
}

#[test]
fn p5_cancelling_run_code_stops_the_program_and_every_pending_call() {
    let f = fixture(Limits::default());
    let cancel = CancellationToken::new();
    let options = CallOptions::new().with_cancel(cancel.clone());
    let program = "const reads = []; for (let i = 0; i < 50; i++) { reads.push(tools.nap({ms: 5000})); } await Promise.all(reads); return 'done';";
    let args = json!({"code": program, "description": "wait"}).to_string();
    let rt = runtime();
    let start = Instant::now();
    let out = rt.block_on(async {
        let stop = cancel.clone();
        // Well before the naps' own 200 ms timeout: a cancellation racing
        // that timeout could lose it on a loaded machine.
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(60)).await;
            stop.cancel();
        });
        f.registry
            .call_with(ToolCall::new("c", "run_code", args), &options)
            .await
    });
    assert_eq!(out.code().unwrap(), "ABORTED", "{out:?}");
    assert!(
        start.elapsed() < Duration::from_secs(4),
        "{:?}",
        start.elapsed()
    );
    // Nothing is logged after run_code settles: its result is the last event.
    let text = std::fs::read_to_string(&f.log).unwrap();
    let last: Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    assert_eq!(last["type"], "tool/result", "{last}");
    assert_eq!(last["callId"], "c");
    still_serving(&f.registry);
}

#[test]
fn p2_read_only_calls_overlap_and_others_run_alone() {
    let f = fixture(Limits::default());
    // Ten naps of 150 ms under Promise.all take about one nap, not ten.
    let start = Instant::now();
    let out = run(
        &f.registry,
        "await Promise.all(Array.from({length: 10}, () => tools.nap({ms: 150}))); return 1;",
    );
    assert!(!out.is_error(), "{out:?}");
    assert!(
        start.elapsed() < Duration::from_millis(1200),
        "{:?}",
        start.elapsed()
    );
}

#[test]
fn p5_a_thrown_100_mb_string_is_a_bounded_error() {
    let mut limits = Limits::default();
    limits.memory_bytes = 512 << 20;
    let f = fixture(limits);
    let message = expect(
        &f.registry,
        "const s = 'x'.repeat(100 * 1024 * 1024); throw s;",
        "EXCEPTION",
    );
    assert!(message.len() < 16 * 1024, "{} bytes", message.len());
}

use crate::support;

#[test]
fn p6_the_sdk_of_the_built_in_tools_type_checks_programs_that_then_run() {
    let f = fixture(Limits::default());
    let sdk = toolprism::code::sdk(&f.registry);
    assert!(sdk.contains("\"read\""), "{sdk}");
    assert!(
        !sdk.contains("\"run_code\""),
        "a program cannot call run_code"
    );
    let right = "const r = await tools.read({ path: \"notes.md\" });\nreturn r.totalLines;";
    let wrong = "const r = await tools.read({ path: \"notes.md\" });\nreturn r.total_lines;";
    support::check("builtin-right", &sdk, right).unwrap_or_else(|e| panic!("{e}"));
    let refused = support::check("builtin-wrong", &sdk, wrong).unwrap_err();
    assert!(refused.contains("total_lines"), "{refused}");
    // And the same programs run: the right one reads the field; the wrong
    // one reads `undefined` and returns nothing, which only the types caught.
    assert_eq!(run(&f.registry, right).value().unwrap()["result"], 1);
    let out = run(&f.registry, wrong);
    assert_eq!(out.value().unwrap(), &json!({"logs": []}));
    assert_eq!(
        toolprism::content_text(out.content()),
        "(the program returned nothing)"
    );
}

/// With the `typescript` feature, erasable annotations run, and an error
/// still points at the program's own line and column.
#[cfg(feature = "typescript")]
#[test]
fn p1_typescript_annotations_run_and_errors_keep_their_place() {
    let f = fixture(Limits::default());
    let program = "interface Hit { path: string }\nconst r: ToolOutputMap[\"read\"] = await tools.read({ path: \"notes.md\" });\nconst n = r.totalLines as number;\nreturn n;";
    let out = run(&f.registry, program);
    assert_eq!(out.value().unwrap()["result"], 1, "{out:?}");
    let broken = "const a: number = 1;\nconst b: string = (a as any).nope.deeper;\nreturn b;";
    let message = expect(&f.registry, broken, "EXCEPTION");
    assert!(message.contains("line 2"), "{message}");
}
