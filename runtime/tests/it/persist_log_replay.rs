//! The session log and replay (C12, C13, docs/contract.md): lines never
//! interleave, torn and corrupt lines are reported and skipped, events of
//! a kind replay does not know are skipped with a note, and every card
//! drawn live is drawn again, identical, from the log alone (a `null` meta
//! included).

use crate::common;
use crate::persist_common;

use std::collections::{HashMap, HashSet};
use std::fs;
use std::path::Path;
use std::sync::Arc;

use persist_common::*;
use serde_json::{Value, json};
use toolprism::card::{CallCard, ResultCard, TerminalCall};
use toolprism::log::{LogEvent, LogProblemKind, PersistedError, SessionLog, read_log};
use toolprism::replay::{Replay, ReplayItem, ReplayProblemKind, Replayed, replay_log};
use toolprism::spill::SpillStore;
use toolprism::{
    ContentBlock, ErrorCode, PostDecision, PostExecute, PreDecision, PreExecute, Registry,
    RegistryBuilder, Tool, ToolCall, ToolContext, ToolError, ToolInfo, ToolOutcome, ToolResult,
};

fn all_tools() -> RegistryBuilder {
    Registry::builder()
        .tool(Grep)
        .tool(Shell)
        .tool(ReadFile)
        .tool(Plain)
        .tool(Panicky)
}

/// Every tool, a denial, a block, a content replacement, a small spill budget.
fn full_registry(log: &Path, spill: &Path) -> Registry {
    all_tools()
        .pre_execute(|c: &PreExecute<'_>| {
            match c.arguments.get("command").and_then(Value::as_str) {
                Some(cmd) if cmd.contains("rm -rf") => PreDecision::deny("no rm -rf, ask a human"),
                _ => PreDecision::Allow,
            }
        })
        .post_execute(|r: &PostExecute<'_>| {
            match r.arguments.get("command").and_then(Value::as_str) {
                Some(cmd) if cmd.starts_with("echo blocked") => {
                    PostDecision::block("this output is not for you")
                }
                Some(cmd) if cmd.starts_with("echo quiet") => {
                    PostDecision::ReplaceContent(vec![ContentBlock::text("(output hidden)")])
                }
                _ => PostDecision::Accept,
            }
        })
        .log(SessionLog::create(log).unwrap())
        .spill(SpillStore::new(spill).unwrap())
        .spill_budget(2000)
        .build()
        .unwrap()
}

/// Calls covering every card kind and outcome the pipeline has.
fn scenario() -> Vec<ToolCall> {
    let calls: &[(&str, &str)] = &[
        ("grep", r#"{"pattern":"needle"}"#),
        ("grep", r#"{"pattern":"ab","limit":2}"#),
        // Deserializes, but breaks the schema (limit >= 1): INVALID_ARGS, generic cards.
        ("grep", r#"{"pattern":"ab","limit":0}"#),
        ("grep", r#"{"pattern":"("}"#),
        ("grep", r#"{"pattern":"#),
        ("grep", r#"{}"#),
        ("grep", r#"[1,2]"#),
        ("grep", ""),
        ("shell", r#"{"command":"echo hello","cwd":"/tmp"}"#),
        ("shell", r#"{"command":"fail"}"#),
        ("shell", r#"{"command":"crash"}"#),
        ("shell", r#"{"command":"rm -rf /"}"#),
        ("shell", r#"{"command":"echo blocked output"}"#),
        ("shell", r#"{"command":"echo quiet please"}"#),
        ("shell", r#"{"command":"yes 1000"}"#),
        ("shell", "  "),
        (
            "read_file",
            r#"{"path":"src/main.rs","offset":10,"limit":5}"#,
        ),
        ("read_file", r#"{"path":"big.txt"}"#),
        ("read_file", r#"{"path":"missing.txt"}"#),
        ("plain", r#"{"text":"hi"}"#),
        ("plain", r#"{"text":"0123456789","times":500}"#),
        ("plain", r#"{"text":"é","times":3000}"#),
        ("panicky", r#"{"mode":"calm"}"#),
        ("panicky", r#"{"mode":"call"}"#),
        ("panicky", r#"{"mode":"result"}"#),
        ("no_such_tool", r#"{"x":1}"#),
        ("no_such_tool", "not json"),
    ];
    calls
        .iter()
        .enumerate()
        .map(|(i, (name, args))| ToolCall::new(format!("call-{i}"), *name, *args))
        .collect()
}

fn card_json<T: serde::Serialize>(card: Option<&T>) -> Value {
    serde_json::to_value(card).unwrap()
}

/// What a UI sees of an outcome, as JSON.
fn live_view(out: &ToolOutcome) -> Value {
    json!({
        "callCard": card_json(out.call_card()),
        "resultCard": card_json(out.result_card()),
        "content": out.content(),
        "isError": out.is_error(),
        "errorCode": out.error().map(|e| e.code.as_str()),
        "meta": out.meta(),
    })
}

fn replayed_view(e: &toolprism::replay::ReplayedEntry) -> Value {
    json!({
        "callCard": card_json(Some(&e.call_card)),
        "resultCard": card_json(e.result_card.as_ref()),
        "content": e.content,
        "isError": e.is_error,
        "errorCode": e.error_code.as_ref().map(|c| c.as_str()),
        "meta": e.meta,
    })
}

async fn run_all(registry: &Registry, calls: Vec<ToolCall>) -> Vec<ToolOutcome> {
    let mut outcomes = Vec::new();
    for call in calls {
        let out = registry.call(call).await;
        assert!(out.warnings().is_empty(), "{:?}", out.warnings());
        outcomes.push(out);
    }
    outcomes
}

#[test]
fn live_cards_equal_replayed_cards_for_every_tool() {
    quiet_panics();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("session.jsonl");
    let registry = full_registry(&log, &dir.path().join("spill"));
    let outcomes = runtime().block_on(run_all(&registry, scenario()));

    // The scenario reaches every card kind and a spill.
    let tags: HashSet<&str> = outcomes
        .iter()
        .flat_map(|o| [o.call_card().unwrap().tag(), o.result_card().unwrap().tag()])
        .collect();
    for tag in ["generic", "terminal", "search", "read"] {
        assert!(tags.contains(tag), "no {tag} card in {tags:?}");
    }
    let spilled = outcomes
        .iter()
        .filter(|o| {
            o.content()
                .iter()
                .any(|b| b.as_text().is_some_and(|t| t.contains("stored at: ")))
        })
        .count();
    assert!(spilled >= 2, "{spilled}");
    let codes: HashSet<&str> = outcomes
        .iter()
        .filter_map(|o| o.error().map(|e| e.code.as_str()))
        .collect();
    for code in [
        "INVALID_ARGS",
        "TOOL_FAILED",
        "DENIED",
        "BLOCKED",
        "UNKNOWN_TOOL",
        "BAD_PATTERN",
        "ENOENT",
    ] {
        assert!(codes.contains(code), "no {code} in {codes:?}");
    }

    // Replay with the same registry, and with a fresh one holding the same
    // tools (a new process): every view is identical to the live one.
    let fresh = all_tools().build().unwrap();
    for replayer in [&registry, &fresh] {
        let replayed = replay_log(&log, replayer).unwrap();
        assert!(replayed.problems.is_empty(), "{:?}", replayed.problems);
        assert_eq!(replayed.entries.len(), outcomes.len());
        for (live, entry) in outcomes.iter().zip(&replayed.entries) {
            assert_eq!(live.call_id(), entry.call_id);
            assert_eq!(live.name(), entry.name);
            assert_eq!(
                live_view(live),
                replayed_view(entry),
                "call {} ({})",
                entry.call_id,
                entry.arguments
            );
        }
    }
}

#[test]
fn parallel_calls_never_interleave_inside_a_line() {
    const TASKS: usize = 8;
    const CALLS: usize = 200;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("session.jsonl");
    let registry = Arc::new(
        all_tools()
            .log(SessionLog::create(&path).unwrap())
            .build()
            .unwrap(),
    );
    let rt = runtime();
    let mut live: HashMap<String, Value> = HashMap::new();
    rt.block_on(async {
        let tasks: Vec<_> = (0..TASKS)
            .map(|task| {
                let registry = registry.clone();
                tokio::spawn(async move {
                    let mut views = Vec::new();
                    for i in 0..CALLS {
                        // Lines of a few KiB, different in every task.
                        let args =
                            json!({"text": format!("task {task} call {i} "), "times": 200 + i});
                        let id = format!("t{task}-c{i}");
                        let out = registry
                            .call(ToolCall::new(id.clone(), "plain", args.to_string()))
                            .await;
                        assert!(!out.is_error());
                        views.push((id, live_view(&out)));
                        tokio::task::yield_now().await;
                    }
                    views
                })
            })
            .collect();
        for task in tasks {
            live.extend(task.await.unwrap());
        }
    });

    // Every line is one whole event.
    let bytes = fs::read(&path).unwrap();
    assert_eq!(bytes.last(), Some(&b'\n'));
    let mut calls = HashSet::new();
    let mut results = HashSet::new();
    for (n, line) in bytes
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .enumerate()
    {
        let event: LogEvent = serde_json::from_slice(line)
            .unwrap_or_else(|e| panic!("line {} does not parse: {e}", n + 1));
        match event {
            LogEvent::Call { call_id, .. } => assert!(calls.insert(call_id)),
            LogEvent::Result {
                call_id, content, ..
            } => {
                let (task, call) = call_id[1..].split_once("-c").unwrap();
                let expected = format!("task {task} call {call} ");
                let text = content[0].as_text().unwrap();
                assert!(text.starts_with(&expected) && text.ends_with(&expected));
                assert!(calls.contains(&call_id), "result before call {call_id}");
                assert!(results.insert(call_id));
            }
            other => panic!("no nested calls were made: {other:?}"),
        }
    }
    assert_eq!(calls.len(), TASKS * CALLS);
    assert_eq!(results, calls);

    // And it replays whole, to the live cards.
    let replayed = replay_log(&path, &registry).unwrap();
    assert!(replayed.problems.is_empty());
    assert_eq!(replayed.entries.len(), TASKS * CALLS);
    for entry in &replayed.entries {
        assert_eq!(live[&entry.call_id], replayed_view(entry));
    }
}

/// Runs a few calls with a log and returns the log's lines.
fn small_log(path: &Path, calls: usize) -> Vec<String> {
    let registry = all_tools()
        .log(SessionLog::create(path).unwrap())
        .build()
        .unwrap();
    runtime().block_on(async {
        for i in 0..calls {
            let call = match i % 3 {
                0 => ToolCall::new(format!("c{i}"), "grep", format!(r#"{{"pattern":"p{i}"}}"#)),
                1 => ToolCall::new(
                    format!("c{i}"),
                    "shell",
                    format!(r#"{{"command":"echo {i}"}}"#),
                ),
                _ => ToolCall::new(format!("c{i}"), "read_file", r#"{"path":"a.rs","limit":3}"#),
            };
            registry.call(call).await;
        }
    });
    fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect()
}

#[test]
fn a_torn_last_line_and_a_corrupt_middle_line_are_reported_and_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    let lines = small_log(&path, 6);
    assert_eq!(lines.len(), 12);
    let original = read_log(&path).unwrap().events;

    // Line 6 becomes garbage between lines 5 and 7; the last line is cut in half.
    let mut damaged = String::new();
    for (i, line) in lines.iter().enumerate() {
        if i == 5 {
            damaged.push_str("{\"type\":\"tool/result\",\"callId\": garbage\n");
        }
        if i == lines.len() - 1 {
            damaged.push_str(&line[..line.len() / 2]);
        } else {
            damaged.push_str(line);
            damaged.push('\n');
        }
    }
    fs::write(&path, damaged).unwrap();

    let read = read_log(&path).unwrap();
    assert_eq!(read.problems.len(), 2, "{:?}", read.problems);
    assert_eq!(read.problems[0].line, 6);
    assert_eq!(read.problems[0].kind, LogProblemKind::Corrupt);
    assert!(
        read.problems[0].reason.contains("not a valid event"),
        "{}",
        read.problems[0]
    );
    assert_eq!(read.problems[1].line, 13);
    assert_eq!(read.problems[1].kind, LogProblemKind::Torn);
    assert!(
        read.problems[1].reason.contains("torn"),
        "{}",
        read.problems[1]
    );
    // Every complete event before and after the corrupt line is kept.
    assert_eq!(read.events, original[..original.len() - 1]);

    // Replay: the same problems, and the last call with no result.
    let registry = all_tools().build().unwrap();
    let replayed = replay_log(&path, &registry).unwrap();
    let kinds: Vec<_> = replayed.problems.iter().map(|p| (p.line, p.kind)).collect();
    assert_eq!(
        kinds,
        [
            (6, ReplayProblemKind::CorruptLine),
            (13, ReplayProblemKind::TornLine)
        ]
    );
    assert_eq!(replayed.entries.len(), 6);
    assert!(
        replayed.entries[..5]
            .iter()
            .all(|e| e.result_card.is_some())
    );
    let last = &replayed.entries[5];
    assert!(last.result_card.is_none() && !last.has_result() && last.content.is_empty());
    assert_eq!(last.call_card.tag(), "generic"); // read_file has no present_call
}

#[test]
fn a_log_cut_in_the_middle_of_any_line_replays_every_complete_event() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    let lines = small_log(&path, 9);
    let registry = all_tools().build().unwrap();
    let full = replay_log(&path, &registry).unwrap();
    let events = read_log(&path).unwrap().events;
    let cut_path = dir.path().join("cut.jsonl");

    let mut offset = 0;
    for (i, line) in lines.iter().enumerate() {
        for cut in [1, line.len() / 2, line.len() - 1] {
            let bytes = fs::read(&path).unwrap();
            fs::write(&cut_path, &bytes[..offset + cut]).unwrap();

            let read = read_log(&cut_path).unwrap();
            assert_eq!(read.events, events[..i], "cut in line {}", i + 1);
            assert_eq!(read.problems.len(), 1);
            assert_eq!(read.problems[0].line, i + 1);
            assert_eq!(read.problems[0].kind, LogProblemKind::Torn);

            let replayed = replay_log(&cut_path, &registry).unwrap();
            // A call's entry exists once its call line is whole; its result
            // card once its result line is whole.
            assert_eq!(replayed.entries.len(), i.div_ceil(2));
            for (got, want) in replayed.entries.iter().zip(&full.entries) {
                if want.result_line.is_some_and(|l| l <= i) {
                    assert_eq!(got, want);
                } else {
                    assert_eq!(got.call_card, want.call_card);
                    assert!(got.result_card.is_none());
                }
            }
        }
        offset += line.len() + 1;
    }
}

#[test]
fn fsync_option_writes_every_event() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("synced.jsonl");
    let log = SessionLog::create(&path).unwrap().with_fsync(true);
    assert!(log.fsyncs());
    let registry = all_tools().log(log).build().unwrap();
    let outcomes = runtime().block_on(async {
        let mut out = Vec::new();
        for i in 0..20 {
            out.push(
                registry
                    .call(ToolCall::new(
                        format!("s{i}"),
                        "shell",
                        format!(r#"{{"command":"echo {i}"}}"#),
                    ))
                    .await,
            );
        }
        out
    });
    assert!(outcomes.iter().all(|o| o.warnings().is_empty()));
    let read = read_log(&path).unwrap();
    assert_eq!(read.events.len(), 40);
    assert!(read.problems.is_empty());
    assert_eq!(registry.session_log().unwrap().path(), path);
}

#[test]
fn a_log_write_failure_is_a_warning_not_a_failure() {
    // /dev/full fails every write with "no space left on device".
    let Ok(log) = SessionLog::create("/dev/full") else {
        return;
    };
    let registry = all_tools().log(log).build().unwrap();
    let out =
        runtime().block_on(registry.call(ToolCall::new("1", "shell", r#"{"command":"echo x"}"#)));
    assert!(!out.is_error());
    assert_eq!(out.value().unwrap()["stdout"], "x\n");
    assert_eq!(out.warnings().len(), 2, "{:?}", out.warnings());
    assert!(out.warnings()[0].contains("tool/call"));
    assert!(out.warnings()[1].contains("tool/result"));
}

#[test]
fn a_resumed_log_after_a_crash_keeps_every_event() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    let lines = small_log(&path, 2);
    // The crash: the last line loses its end.
    let text = fs::read_to_string(&path).unwrap();
    fs::write(&path, &text[..text.len() - 10]).unwrap();
    // The session goes on in the same file.
    small_log(&path, 3);
    let read = read_log(&path).unwrap();
    assert_eq!(read.problems.len(), 1);
    assert_eq!(read.problems[0].line, lines.len());
    assert_eq!(read.events.len(), lines.len() - 1 + 6);
}

// ---------------------------------------------------------------------------
// Replay with the presenters registered now
// ---------------------------------------------------------------------------

/// grep v2: the arguments changed (`query`, not `pattern`).
struct GrepV2;

#[derive(Clone, serde::Deserialize, schemars::JsonSchema)]
struct GrepV2Args {
    #[allow(dead_code)]
    query: String,
}

impl Tool for GrepV2 {
    type Args = GrepV2Args;
    type Value = GrepValue;
    type Meta = GrepMeta;
    const INFO: ToolInfo = ToolInfo::new("grep", "Search.").with_kind(toolprism::ToolKind::Search);
    async fn execute(&self, _: GrepV2Args, _: &ToolContext<'_>) -> Result<GrepValue, ToolError> {
        unreachable!()
    }
    fn render(_: &GrepV2Args, _: &GrepValue) -> Vec<ContentBlock> {
        unreachable!()
    }
    fn present_call(_: &GrepV2Args) -> Option<CallCard> {
        unreachable!("its arguments never parse from the old log")
    }
}

/// shell v2: same arguments, new meta type (`exit_code` is now a string).
struct ShellV2;

#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
struct ShellV2Meta {
    exit_code: String,
}

impl Tool for ShellV2 {
    type Args = ShellArgs;
    type Value = ShellValue;
    type Meta = ShellV2Meta;
    const INFO: ToolInfo = ToolInfo::new("shell", "Run a command.");
    async fn execute(&self, _: ShellArgs, _: &ToolContext<'_>) -> Result<ShellValue, ToolError> {
        unreachable!()
    }
    fn render(_: &ShellArgs, _: &ShellValue) -> Vec<ContentBlock> {
        unreachable!()
    }
    fn present_call(args: &ShellArgs) -> Option<CallCard> {
        Some(CallCard::Terminal(
            TerminalCall::new(format!("$ {}", args.command)).with_description("v2"),
        ))
    }
    fn present_result(_: &ShellArgs, r: &ToolResult<ShellV2Meta>) -> Option<ResultCard> {
        // Called for results without meta only: old meta does not parse.
        assert!(r.meta.is_none());
        Some(ResultCard::generic(
            Some("v2 error".into()),
            r.content.clone(),
        ))
    }
}

#[test]
fn tools_gone_or_changed_replay_as_generic_cards_and_new_presenters_apply() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    let registry = full_registry(&path, &dir.path().join("spill"));
    let outcomes = runtime().block_on(run_all(
        &registry,
        vec![
            ToolCall::new("g", "grep", r#"{"pattern":"x","limit":1}"#),
            ToolCall::new("s", "shell", r#"{"command":"echo hi"}"#),
            ToolCall::new("f", "shell", r#"{"command":"crash"}"#),
        ],
    ));
    assert_eq!(outcomes[0].result_card().unwrap().tag(), "search");

    // No tools at all: generic cards, title = name, raw input = the arguments.
    let empty = Registry::builder().build().unwrap();
    let replayed = replay_log(&path, &empty).unwrap();
    assert!(replayed.problems.is_empty());
    let g = &replayed.entries[0];
    assert_eq!(
        serde_json::to_value(&g.call_card).unwrap(),
        json!({"card": "generic", "title": "grep", "rawInput": {"pattern": "x", "limit": 1}})
    );
    assert_eq!(
        serde_json::to_value(&g.result_card).unwrap(),
        json!({"card": "generic", "title": "grep", "content": outcomes[0].content()})
    );
    // The persisted data is all there.
    assert_eq!(g.meta.as_ref(), outcomes[0].meta());
    assert_eq!(g.content, outcomes[0].content());

    // Changed tools: grep's arguments and shell's meta no longer parse.
    let changed = Registry::builder()
        .tool(GrepV2)
        .tool(ShellV2)
        .build()
        .unwrap();
    let replayed = replay_log(&path, &changed).unwrap();
    let [g, s, f] = &replayed.entries[..] else {
        panic!()
    };
    assert_eq!(
        serde_json::to_value(&g.call_card).unwrap(),
        json!({"card": "generic", "title": "grep", "kind": "search", "rawInput": {"pattern": "x", "limit": 1}})
    );
    assert_eq!(g.result_card.as_ref().unwrap().tag(), "generic");
    // shell's arguments still parse: the new call presenter draws the call.
    assert_eq!(
        serde_json::to_value(&s.call_card).unwrap(),
        json!({"card": "terminal", "title": "$ echo hi", "description": "v2"})
    );
    // Its old meta does not parse: generic result card.
    assert_eq!(
        serde_json::to_value(&s.result_card).unwrap(),
        json!({"card": "generic", "title": "shell", "content": [{"type": "text", "text": "hi\n[exit code 0]"}]})
    );
    // A failure has no meta: the new presenter draws it.
    assert_eq!(
        f.result_card,
        Some(ResultCard::generic(
            Some("v2 error".into()),
            f.content.clone()
        ))
    );
    assert_eq!(f.error_code, Some(ErrorCode::ToolFailed));
}

#[test]
fn results_without_calls_and_duplicate_call_ids_are_problems_not_crashes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    let log = SessionLog::create(&path).unwrap();
    let call = |id: &str, cmd: &str| LogEvent::Call {
        call_id: id.into(),
        name: "shell".into(),
        arguments: json!({"command": cmd}).to_string(),
        dialect: None,
    };
    let result = |id: &str, text: &str| LogEvent::Result {
        call_id: id.into(),
        content: vec![ContentBlock::text(text)],
        is_error: false,
        error: None,
        meta: Some(json!({"exit_code": 0})),
    };
    let events = [
        call("a", "first a"),        // 1
        result("a", "a done"),       // 2
        result("b", "orphan"),       // 3  result without call
        call("c", "first c"),        // 4
        call("c", "second c"),       // 5  duplicate id while open
        result("c", "c done"),       // 6  goes to the second c
        result("a", "a again"),      // 7  second result
        call("a", "a reused"),       // 8  id reused after its result
        result("a", "reused done"),  // 9
        call("d", "never answered"), // 10
    ];
    for e in &events {
        log.record_event(e).unwrap();
    }
    fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .and_then(|mut f| {
            std::io::Write::write_all(&mut f, b"{\"type\":\"tool/result\",\"callId\":\"d\"")
        })
        .unwrap();
    let registry = all_tools().build().unwrap();
    let Replayed {
        entries, problems, ..
    } = replay_log(&path, &registry).unwrap();

    let got: Vec<_> = problems
        .iter()
        .map(|p| (p.line, p.kind, p.call_id.as_deref()))
        .collect();
    assert_eq!(
        got,
        [
            (3, ReplayProblemKind::ResultWithoutCall, Some("b")),
            (5, ReplayProblemKind::DuplicateCallId, Some("c")),
            (7, ReplayProblemKind::DuplicateResult, Some("a")),
            (8, ReplayProblemKind::DuplicateCallId, Some("a")),
            (11, ReplayProblemKind::TornLine, None),
        ]
    );
    for p in &problems {
        assert!(
            p.to_string().starts_with(&format!("line {}: ", p.line)),
            "{p}"
        );
    }
    let got: Vec<_> = entries
        .iter()
        .map(|e| {
            let title = match &e.call_card {
                CallCard::Terminal(t) => t.title.clone(),
                other => panic!("{other:?}"),
            };
            (
                e.call_id.as_str(),
                title,
                e.content
                    .first()
                    .and_then(|b| b.as_text().map(str::to_owned)),
                e.call_line,
                e.result_line,
            )
        })
        .collect();
    let s = |t: &str| Some(t.to_owned());
    assert_eq!(
        got,
        [
            ("a", "first a".to_owned(), s("a done"), 1, Some(2)),
            ("c", "first c".to_owned(), None, 4, None),
            ("c", "second c".to_owned(), s("c done"), 5, Some(6)),
            ("a", "a reused".to_owned(), s("reused done"), 8, Some(9)),
            ("d", "never answered".to_owned(), None, 10, None),
        ]
    );
}

#[test]
fn the_stream_yields_entries_as_results_arrive() {
    let log = [
        json!({"type": "tool/call", "callId": "1", "name": "plain", "arguments": r#"{"text":"a"}"#}),
        json!({"type": "tool/call", "callId": "2", "name": "plain", "arguments": r#"{"text":"b"}"#}),
        json!({"type": "tool/call", "callId": "3", "name": "plain", "arguments": r#"{"text":"c"}"#}),
        json!({"type": "tool/result", "callId": "2", "content": [], "isError": false}),
        json!({"type": "tool/result", "callId": "1", "content": [], "isError": true, "error": {"code": "TIMEOUT"}}),
    ]
    .iter()
    .map(|e| format!("{e}\n"))
    .collect::<String>();
    let registry = all_tools().build().unwrap();
    let ids: Vec<(String, bool)> = Replay::new(log.as_bytes(), &registry)
        .map(|item| match item.unwrap() {
            ReplayItem::Entry(e) => (e.call_id.clone(), e.has_result()),
            ReplayItem::Problem(p) => panic!("{p}"),
        })
        .collect();
    // Completion order, then the call with no result.
    assert_eq!(
        ids,
        [("2".into(), true), ("1".into(), true), ("3".into(), false)]
    );
    // The whole-log form is in call order.
    let replayed = Replay::new(log.as_bytes(), &registry)
        .into_replayed()
        .unwrap();
    let ids: Vec<&str> = replayed
        .entries
        .iter()
        .map(|e| e.call_id.as_str())
        .collect();
    assert_eq!(ids, ["1", "2", "3"]);
    assert_eq!(replayed.entries[0].error_code, Some(ErrorCode::Timeout));
    // The persisted error is only a code.
    let LogEvent::Result { error, .. } =
        serde_json::from_str::<LogEvent>(log.lines().nth(4).unwrap()).unwrap()
    else {
        panic!()
    };
    assert_eq!(error, Some(PersistedError::new(ErrorCode::Timeout)));
}

#[test]
fn a_replayed_entry_serializes_for_a_ui() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    let registry = all_tools()
        .log(SessionLog::create(&path).unwrap())
        .build()
        .unwrap();
    runtime().block_on(registry.call(ToolCall::new("x", "shell", r#"{"command":"fail"}"#)));
    let entry = &replay_log(&path, &registry).unwrap().entries[0];
    let json = serde_json::to_value(entry).unwrap();
    // When the call was logged: the log's clock, in ms since the epoch.
    let time = json["timeMs"].as_u64().expect("the call's time");
    assert_eq!(entry.time_ms, Some(time));
    assert_eq!(
        json,
        json!({
            "callId": "x",
            "name": "shell",
            "arguments": r#"{"command":"fail"}"#,
            "callCard": {"card": "terminal", "title": "fail"},
            "resultCard": {"card": "terminal", "output": "it failed\n[exit code 1]", "exitCode": 1},
            "content": [{"type": "text", "text": "it failed\n[exit code 1]"}],
            "isError": false,
            "meta": {"exit_code": 1},
            "callLine": 1,
            "resultLine": 2,
            "timeMs": time,
        })
    );
    let back: toolprism::replay::ReplayedEntry = serde_json::from_value(json).unwrap();
    assert_eq!(&back, entry);
}

// ---------------------------------------------------------------------------
// C13: what the log holds replays as it was live
// ---------------------------------------------------------------------------

/// A unit-struct meta: its JSON is `null`.
#[derive(serde::Serialize, serde::Deserialize, Debug, PartialEq)]
struct Marker;

struct NullMeta;

impl Tool for NullMeta {
    type Args = common::N;
    type Value = u32;
    type Meta = Marker;
    const INFO: ToolInfo = ToolInfo::new("null_meta", "Its meta is null.");
    async fn execute(&self, _: common::N, _: &ToolContext<'_>) -> Result<u32, ToolError> {
        Ok(1)
    }
    fn render(_: &common::N, _: &u32) -> Vec<ContentBlock> {
        vec![ContentBlock::text("1")]
    }
    fn presentation_meta(_: &common::N, _: &u32) -> Option<Marker> {
        Some(Marker)
    }
    fn present_result(_: &common::N, result: &ToolResult<Marker>) -> Option<toolprism::ResultCard> {
        let title = if result.meta.is_some() {
            "marked"
        } else {
            "unmarked"
        };
        Some(toolprism::ResultCard::generic(
            Some(title.to_owned()),
            vec![],
        ))
    }
}

#[test]
fn c13_a_null_meta_replays_as_it_was_live() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    let registry = Registry::builder()
        .tool(NullMeta)
        .log(SessionLog::create(&path).unwrap())
        .build()
        .unwrap();
    let live = common::call(&registry, "null_meta", r#"{"n":1}"#);
    assert_eq!(live.meta(), Some(&Value::Null));
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains("\"meta\":null"), "{text}");
    let replayed = replay_log(&path, &registry).unwrap();
    assert_eq!(replayed.entries[0].result_card.as_ref(), live.result_card());
    assert_eq!(replayed.entries[0].meta, Some(Value::Null));
    match live.result_card().unwrap() {
        toolprism::ResultCard::Generic(card) => assert_eq!(card.title.as_deref(), Some("marked")),
        other => panic!("{other:?}"),
    }
}

#[test]
fn c13_an_unknown_event_type_is_skipped_with_a_note() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    std::fs::write(
        &path,
        concat!(
            r#"{"type":"tool/call","callId":"1","name":"ok","arguments":"{\"n\":1}"}"#, "\n",
            r#"{"type":"tool/handoff","callId":"1","to":"a person"}"#, "\n",
            r#"{"type":"tool/result","callId":"1","content":[{"type":"text","text":"1"}],"isError":false}"#, "\n",
        ),
    )
    .unwrap();
    let registry = Registry::builder().tool(common::Ok_).build().unwrap();
    let replayed = replay_log(&path, &registry).unwrap();
    assert_eq!(replayed.entries.len(), 1);
    assert!(replayed.entries[0].has_result());
    assert_eq!(replayed.problems.len(), 1);
    assert_eq!(replayed.problems[0].kind, ReplayProblemKind::UnknownEvent);
}

#[test]
fn a_missing_log_is_an_io_error() {
    let registry = all_tools().build().unwrap();
    let err = replay_log("/nonexistent/session.jsonl", &registry).unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::NotFound);
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty.jsonl");
    fs::write(&empty, "").unwrap();
    assert_eq!(replay_log(&empty, &registry).unwrap(), Replayed::default());
}

// ---------------------------------------------------------------------------
// W16: the logs of several replicas, one session
// ---------------------------------------------------------------------------

/// Two processes' logs (two registries, each with its own), and a third
/// holding the result of a call the first logged: read together, they are
/// one session in the order the calls were made, each call drawn whole
/// with the cards it had live, each entry and problem naming its log.
#[test]
fn w16_several_logs_replay_as_one_session_in_the_order_written() {
    let dir = tempfile::tempdir().unwrap();
    let paths: Vec<std::path::PathBuf> = ["a", "b", "c"]
        .iter()
        .map(|name| dir.path().join(format!("{name}.jsonl")))
        .collect();
    let a = all_tools()
        .log(SessionLog::create(&paths[0]).unwrap())
        .build()
        .unwrap();
    let b = all_tools()
        .log(SessionLog::create(&paths[1]).unwrap())
        .build()
        .unwrap();
    let mut live = Vec::new();
    for (i, registry) in [&a, &b, &a, &b, &b].into_iter().enumerate() {
        let id = format!("{}-{i}", if std::ptr::eq(registry, &a) { "a" } else { "b" });
        let command = format!(r#"{{"command":"echo {i}"}}"#);
        let out = runtime().block_on(registry.call(ToolCall::new(&id, "shell", &command)));
        live.push((id, out));
        // Each call in a millisecond of its own.
        std::thread::sleep(std::time::Duration::from_millis(3));
    }
    // A call logged by the first process, whose result the third wrote.
    let late = SessionLog::create(&paths[0]).unwrap();
    late.record_call("moved", "plain", r#"{"text":"hi"}"#)
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(3));
    let third = SessionLog::create(&paths[2]).unwrap();
    let result: ToolResult = ToolResult::ok(vec![ContentBlock::text("hi")]);
    third.record_result("moved", &result, None).unwrap();
    // And a call id both processes used: a problem, named in its log.
    std::thread::sleep(std::time::Duration::from_millis(3));
    runtime().block_on(b.call(ToolCall::new("a-0", "shell", r#"{"command":"echo again"}"#)));

    let registry = all_tools().build().unwrap();
    let replayed = toolprism::replay::replay_logs(&paths, &registry).unwrap();
    let order: Vec<(&str, usize)> = replayed
        .entries
        .iter()
        .map(|e| (e.call_id.as_str(), e.log))
        .collect();
    assert_eq!(
        order[..6],
        [
            ("a-0", 0),
            ("b-1", 1),
            ("a-2", 0),
            ("b-3", 1),
            ("b-4", 1),
            ("moved", 0)
        ],
        "{order:?}"
    );
    for (entry, (id, out)) in replayed.entries.iter().zip(&live) {
        assert_eq!(&entry.call_id, id);
        assert_eq!(Some(&entry.call_card), out.call_card(), "{id}");
        assert_eq!(entry.result_card.as_ref(), out.result_card(), "{id}");
    }
    let moved = &replayed.entries[5];
    assert!(
        moved.has_result(),
        "joined by call id across logs: {moved:?}"
    );
    assert_eq!(moved.content, [ContentBlock::text("hi")]);
    assert!(
        replayed
            .entries
            .windows(2)
            .all(|w| w[0].time_ms <= w[1].time_ms)
    );
    let problems: Vec<(ReplayProblemKind, usize)> =
        replayed.problems.iter().map(|p| (p.kind, p.log)).collect();
    assert_eq!(
        problems,
        [(ReplayProblemKind::DuplicateCallId, 1)],
        "{:?}",
        replayed.problems
    );

    // Streamed, each entry comes out as its result is read, across logs.
    let logs = paths
        .iter()
        .map(|p| toolprism::log::LogEvents::open(p).unwrap())
        .collect();
    let streamed: Vec<String> = Replay::merged(logs, &registry)
        .filter_map(|item| match item.unwrap() {
            ReplayItem::Entry(entry) => Some(entry.call_id),
            ReplayItem::Problem(_) => None,
        })
        .collect();
    assert_eq!(
        streamed,
        ["a-0", "b-1", "a-2", "b-3", "b-4", "moved", "a-0"]
    );
}
