//! Spill through the registry (C15, docs/contract.md): over budget, the
//! full text goes to an owner-only file and the model reads a preview with
//! the location and the full size; value and meta are untouched; nested
//! calls and tools that opt out never spill; a failed write keeps the
//! content and warns; the spill directory is the user's own.

use crate::persist_common;

use std::fs;
use std::path::{Path, PathBuf};

use persist_common::*;
use serde_json::json;
use toolprism::log::{LogEvent, SessionLog, read_log};
use toolprism::spill::SpillStore;
use toolprism::{
    CallOptions, ContentBlock, DEFAULT_SPILL_BUDGET, PostDecision, PostExecute, Registry,
    RegistryBuilder, SpillBudget, Tool, ToolCall, ToolContext, ToolError, ToolInfo, ToolOutcome,
};

/// `plain` with its own budget of 100 bytes.
struct Tight;

impl Tool for Tight {
    type Args = PlainArgs;
    type Value = PlainValue;
    type Meta = toolprism::NoMeta;
    const INFO: ToolInfo = ToolInfo::new("tight", "Repeat some text; spills over 100 bytes.")
        .with_spill(SpillBudget::Bytes(100));
    async fn execute(
        &self,
        args: PlainArgs,
        cx: &ToolContext<'_>,
    ) -> Result<PlainValue, ToolError> {
        Plain.execute(args, cx).await
    }
    fn render(args: &PlainArgs, value: &PlainValue) -> Vec<ContentBlock> {
        Plain::render(args, value)
    }
}

/// `plain` with its own budget of 100,000 bytes.
struct Roomy;

impl Tool for Roomy {
    type Args = PlainArgs;
    type Value = PlainValue;
    type Meta = toolprism::NoMeta;
    const INFO: ToolInfo = ToolInfo::new("roomy", "Repeat some text; spills over 100,000 bytes.")
        .with_spill(SpillBudget::Bytes(100_000));
    async fn execute(
        &self,
        args: PlainArgs,
        cx: &ToolContext<'_>,
    ) -> Result<PlainValue, ToolError> {
        Plain.execute(args, cx).await
    }
    fn render(args: &PlainArgs, value: &PlainValue) -> Vec<ContentBlock> {
        Plain::render(args, value)
    }
}

fn tools() -> RegistryBuilder {
    Registry::builder()
        .tool(Plain)
        .tool(Grep)
        .tool(ReadFile)
        .tool(Shell)
        .tool(Tight)
        .tool(Roomy)
}

fn call(registry: &Registry, name: &str, args: serde_json::Value) -> ToolOutcome {
    runtime().block_on(registry.call(ToolCall::new("c", name, args.to_string())))
}

fn text(out: &ToolOutcome) -> &str {
    assert_eq!(out.content().len(), 1, "{:?}", out.content());
    out.content()[0].as_text().unwrap()
}

/// The spill file a preview names, if any.
fn spilled_to(out: &ToolOutcome) -> Option<PathBuf> {
    let text = out.content().first()?.as_text()?;
    let path = text
        .split_once("is stored at: ")?
        .1
        .split_once(". Read that file")?
        .0;
    Some(PathBuf::from(path))
}

fn files_in(dir: &Path) -> Vec<PathBuf> {
    match fs::read_dir(dir) {
        Ok(entries) => entries.map(|e| e.unwrap().path()).collect(),
        Err(_) => Vec::new(),
    }
}

#[test]
fn over_budget_content_becomes_a_preview_with_location_and_size() {
    let dir = tempfile::tempdir().unwrap();
    let spill = dir.path().join("spill");
    let registry = tools()
        .spill(SpillStore::new(&spill).unwrap())
        .spill_budget(1000)
        .build()
        .unwrap();
    let out = call(
        &registry,
        "plain",
        json!({"text": "0123456789abcdef\n", "times": 600}),
    );
    assert!(!out.is_error());
    assert!(out.warnings().is_empty(), "{:?}", out.warnings());
    let full = "0123456789abcdef\n".repeat(600);

    // The preview: head and tail within budget, the location and full size.
    let preview = text(&out);
    assert!(preview.len() <= 1000, "{}", preview.len());
    assert!(preview.starts_with("0123456789abcdef\n0123"));
    assert!(preview.ends_with("0123456789abcdef\n"));
    assert!(preview.contains(&format!(
        "The full result ({} bytes) is stored at: ",
        full.len()
    )));
    // The file holds the full text, owner-only, in the store.
    let path = spilled_to(&out).unwrap();
    assert_eq!(path.parent().unwrap(), spill);
    assert_eq!(fs::read_to_string(&path).unwrap(), full);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(
            fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o600
        );
        assert_eq!(
            fs::metadata(&spill).unwrap().permissions().mode() & 0o777,
            0o700
        );
    }
    // The value is untouched.
    assert_eq!(out.value().unwrap()["text"], full);
    assert_eq!(out.value_as::<PlainValue>().unwrap().len, full.len());
    // The result card shows what the model read.
    assert_eq!(
        out.result_card().unwrap(),
        &toolprism::ResultCard::generic(Some("plain".into()), out.content().to_vec())
    );

    // The same call again: another file, named by neither the input nor the first.
    let again = call(
        &registry,
        "plain",
        json!({"text": "0123456789abcdef\n", "times": 600}),
    );
    let path2 = spilled_to(&again).unwrap();
    assert_ne!(path, path2);
    for p in [&path, &path2] {
        let name = p.file_name().unwrap().to_str().unwrap();
        assert!(name.starts_with("spill-") && !name.contains("0123") && !name.contains("plain"));
    }
    assert_eq!(files_in(&spill).len(), 2);
}

#[test]
fn spill_never_touches_meta() {
    let dir = tempfile::tempdir().unwrap();
    let with = tools()
        .spill(SpillStore::new(dir.path()).unwrap())
        .spill_budget(500)
        .build()
        .unwrap();
    let without = tools().build().unwrap();
    // 30 characters of pattern: 90 hits, several KiB of content and of meta.
    let args = json!({"pattern": "abcdefghijklmnopqrstuvwxyz0123"});
    let spilled = call(&with, "grep", args.clone());
    let whole = call(&without, "grep", args);
    assert!(spilled_to(&spilled).is_some());
    assert!(spilled_to(&whole).is_none());
    assert!(serde_json::to_string(whole.meta().unwrap()).unwrap().len() > 500);
    assert_eq!(spilled.meta(), whole.meta());
    assert_eq!(spilled.value(), whole.value());
    // The search card comes from meta: the same with or without spill.
    assert_eq!(spilled.result_card(), whole.result_card());
    assert_eq!(spilled.result_card().unwrap().tag(), "search");
    assert_eq!(
        fs::read_to_string(spilled_to(&spilled).unwrap()).unwrap(),
        text(&whole)
    );
}

#[test]
fn nested_calls_never_spill() {
    let dir = tempfile::tempdir().unwrap();
    let registry = tools()
        .spill(SpillStore::new(dir.path()).unwrap())
        .spill_budget(100)
        .build()
        .unwrap();
    let big = json!({"text": "nested ", "times": 1000});
    let out = runtime().block_on(registry.call_nested_with(
        "plain",
        big.clone(),
        &CallOptions::default(),
    ));
    assert!(!out.is_error());
    assert_eq!(text(&out), "nested ".repeat(1000));
    assert!(out.warnings().is_empty());
    let value = runtime()
        .block_on(registry.call_nested("tight", big.clone()))
        .unwrap();
    assert_eq!(value["len"], 7000);
    let typed = runtime()
        .block_on(registry.call_typed::<Plain>(big))
        .unwrap();
    assert_eq!(typed.len, 7000);
    assert!(files_in(dir.path()).is_empty());
}

#[test]
fn tools_that_opt_out_never_spill() {
    let dir = tempfile::tempdir().unwrap();
    let registry = tools()
        .spill(SpillStore::new(dir.path()).unwrap())
        .spill_budget(100)
        .build()
        .unwrap();
    // read_file is SpillBudget::Never: 2000 lines stay whole.
    let out = call(&registry, "read_file", json!({"path": "big.txt"}));
    assert!(text(&out).len() > 40_000);
    assert!(text(&out).ends_with("line 2000 of big.txt"));
    assert!(spilled_to(&out).is_none());
    assert_eq!(out.result_card().unwrap().tag(), "read");
    assert!(files_in(dir.path()).is_empty());
}

#[test]
fn errors_and_blocks_never_spill() {
    let dir = tempfile::tempdir().unwrap();
    let feedback = "blocked: ".repeat(500);
    let fb = feedback.clone();
    let registry = tools()
        .post_execute(move |r: &PostExecute<'_>| {
            if r.tool == "shell" {
                PostDecision::block(fb.clone())
            } else {
                PostDecision::Accept
            }
        })
        .spill(SpillStore::new(dir.path()).unwrap())
        .spill_budget(100)
        .build()
        .unwrap();
    let out = call(&registry, "shell", json!({"command": "echo hi"}));
    assert!(out.is_error());
    assert_eq!(text(&out), feedback);
    let out = call(&registry, "grep", json!({"pattern": "("}));
    assert!(out.is_error());
    assert!(files_in(dir.path()).is_empty());
}

#[test]
fn replaced_content_is_what_spills() {
    let dir = tempfile::tempdir().unwrap();
    let registry = tools()
        .post_execute(|r: &PostExecute<'_>| {
            if r.tool == "shell" {
                PostDecision::ReplaceContent(vec![ContentBlock::text("replaced\n".repeat(100))])
            } else {
                PostDecision::Accept
            }
        })
        .spill(SpillStore::new(dir.path()).unwrap())
        .spill_budget(300)
        .build()
        .unwrap();
    let out = call(&registry, "shell", json!({"command": "echo hi"}));
    let path = spilled_to(&out).unwrap();
    assert_eq!(fs::read_to_string(path).unwrap(), "replaced\n".repeat(100));
    assert_eq!(out.value().unwrap()["stdout"], "hi\n");
    assert_eq!(out.meta().unwrap()["exit_code"], 0);
}

#[test]
fn the_registry_default_budget_and_a_tools_own_budget() {
    let dir = tempfile::tempdir().unwrap();
    let five_kib = json!({"text": "x", "times": 5 * 1024});
    let fifty_kib_and_one = json!({"text": "y", "times": DEFAULT_SPILL_BUDGET + 1});
    let at_default = json!({"text": "y", "times": DEFAULT_SPILL_BUDGET});

    // Registry default: DEFAULT_SPILL_BUDGET (50 KiB).
    let registry = tools()
        .spill(SpillStore::new(dir.path().join("a")).unwrap())
        .build()
        .unwrap();
    assert!(spilled_to(&call(&registry, "plain", five_kib.clone())).is_none());
    assert!(spilled_to(&call(&registry, "plain", at_default.clone())).is_none());
    assert!(spilled_to(&call(&registry, "plain", fifty_kib_and_one.clone())).is_some());
    // A tool's own budget wins, smaller or larger.
    assert!(
        spilled_to(&call(
            &registry,
            "tight",
            json!({"text": "z", "times": 100})
        ))
        .is_none()
    );
    assert!(
        spilled_to(&call(
            &registry,
            "tight",
            json!({"text": "z", "times": 1000})
        ))
        .is_some()
    );
    assert!(spilled_to(&call(&registry, "roomy", fifty_kib_and_one.clone())).is_none());

    // A registry budget of 1 KiB: the default tool spills 5 KiB, roomy still does not.
    let registry = tools()
        .spill(SpillStore::new(dir.path().join("b")).unwrap())
        .spill_budget(1024)
        .build()
        .unwrap();
    assert!(spilled_to(&call(&registry, "plain", five_kib.clone())).is_some());
    assert!(spilled_to(&call(&registry, "roomy", five_kib.clone())).is_none());
    assert!(
        spilled_to(&call(
            &registry,
            "roomy",
            json!({"text": "r", "times": 100_001})
        ))
        .is_some()
    );

    // No store: nothing spills, whatever the budget.
    let registry = tools().spill_budget(10).build().unwrap();
    let out = call(&registry, "tight", five_kib);
    assert_eq!(text(&out).len(), 5 * 1024);
    assert!(out.warnings().is_empty());
}

#[test]
fn a_failed_spill_keeps_the_content_and_reports_it() {
    let dir = tempfile::tempdir().unwrap();
    let spill = dir.path().join("spill");
    let log = dir.path().join("session.jsonl");
    let registry = tools()
        .spill(SpillStore::new(&spill).unwrap())
        .spill_budget(100)
        .log(SessionLog::create(&log).unwrap())
        .build()
        .unwrap();
    let big = json!({"text": "keep me whole ", "times": 100});
    let whole = "keep me whole ".repeat(100);

    // The store's directory is gone (root ignores permissions, so remove it).
    fs::remove_dir(&spill).unwrap();
    let out = call(&registry, "plain", big.clone());
    assert!(!out.is_error());
    assert_eq!(text(&out), whole);
    assert_eq!(out.warnings().len(), 1, "{:?}", out.warnings());
    assert!(out.warnings()[0].starts_with("spill failed, the full content was kept"));
    assert!(out.warnings()[0].contains(spill.to_str().unwrap()));
    assert_eq!(out.value().unwrap()["text"], whole);

    // Now a file stands where the directory was.
    fs::write(&spill, "not a directory").unwrap();
    let out = call(&registry, "plain", big);
    assert_eq!(text(&out), whole);
    assert!(
        out.warnings()[0].starts_with("spill failed"),
        "{:?}",
        out.warnings()
    );
    assert_eq!(fs::read_to_string(&spill).unwrap(), "not a directory");

    // The log holds what the model read: the whole content.
    let read = read_log(&log).unwrap();
    let contents: Vec<_> = read
        .events
        .iter()
        .filter_map(|e| match e {
            LogEvent::Result { content, .. } => Some(content.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(contents, vec![vec![ContentBlock::text(&whole)]; 2]);
}

#[test]
fn the_log_holds_the_preview_not_the_spilled_text() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("session.jsonl");
    let registry = tools()
        .spill(SpillStore::new(dir.path().join("spill")).unwrap())
        .spill_budget(2000)
        .log(SessionLog::create(&log).unwrap())
        .build()
        .unwrap();
    let out = call(&registry, "shell", json!({"command": "yes 5000"}));
    let path = spilled_to(&out).unwrap();
    let full = fs::read_to_string(path).unwrap();
    assert!(full.contains("y 2500\n"));
    let logged = fs::read_to_string(&log).unwrap();
    assert!(!logged.contains("y 2500\\n"));
    assert!(logged.contains("is stored at: "));
    // Replay draws the live card from the logged preview.
    let replayed = toolprism::replay::replay_log(&log, &registry).unwrap();
    assert_eq!(replayed.entries[0].result_card.as_ref(), out.result_card());
    assert_eq!(replayed.entries[0].content, out.content());
}

#[cfg(unix)]
#[test]
fn c15_an_existing_spill_directory_is_tightened_and_a_symlink_refused() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let spill = dir.path().join("spill");
    std::fs::create_dir(&spill).unwrap();
    std::fs::set_permissions(&spill, std::fs::Permissions::from_mode(0o755)).unwrap();
    SpillStore::new(&spill).unwrap();
    let mode = std::fs::metadata(&spill).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o700);
    let link = dir.path().join("link");
    std::os::unix::fs::symlink(&spill, &link).unwrap();
    let err = SpillStore::new(&link).unwrap_err();
    assert!(err.to_string().contains("symlink"), "{err}");
    // Nothing of the probe is left behind.
    assert_eq!(std::fs::read_dir(&spill).unwrap().count(), 0);
}
