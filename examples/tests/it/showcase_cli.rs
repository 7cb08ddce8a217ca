//! The showcase binary is a `toolprism::cli` program: `cargo run -- list`,
//! `cargo run -- call read '{"path":"README.md"}'` and `cargo run -- replay
//! LOG` run the built-in tools through the same layer as any user's
//! binary, while `cargo run` alone still runs the showcase.

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;
use toolprism_examples::database::build_customers;

const BIN: &str = env!("CARGO_BIN_EXE_toolprism-examples");

/// Every tool the showcase's command line serves: the built-in ones and
/// the third-party example.
const TOOLS: [&str; 9] = [
    "read",
    "grep",
    "glob",
    "bash",
    "edit",
    "write",
    "web_fetch",
    "sql_query",
    "acme_ticket",
];

fn run_in(dir: &Path, args: &[&str]) -> Output {
    run_with(dir, args, &[])
}

fn run_with(dir: &Path, args: &[&str], env: &[(&str, &Path)]) -> Output {
    Command::new(BIN)
        .args(args)
        .current_dir(dir)
        .env_remove("RUST_BACKTRACE")
        .env_remove("TOOLPRISM_DATABASE")
        .envs(env.iter().copied())
        .output()
        .expect("the showcase binary runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn list_shows_the_built_in_tools() {
    let dir = tempfile::tempdir().unwrap();
    let out = run_in(dir.path(), &["list", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let listed: Value = serde_json::from_slice(&out.stdout).unwrap();
    let names: Vec<&str> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    for name in TOOLS {
        assert!(names.contains(&name), "{name} missing from {names:?}");
    }
    let out = run_in(dir.path(), &["list"]);
    let table = text(&out.stdout);
    assert!(table.starts_with("NAME"), "{table}");
    assert!(table.contains("read-only, idempotent"), "{table}");
}

#[test]
fn schema_prints_every_built_in_tool_in_every_dialect() {
    let dir = tempfile::tempdir().unwrap();
    for dialect in toolprism::dialect::Dialect::ALL {
        let out = run_in(dir.path(), &["schema", "--dialect", dialect.name()]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{dialect}: {}",
            text(&out.stderr)
        );
        let printed: Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{dialect}: not JSON ({e}): {}", text(&out.stdout)));
        let definitions = printed.as_array().expect("a JSON array");
        assert_eq!(definitions.len(), TOOLS.len(), "{dialect}: {printed:#}");
        for name in TOOLS {
            assert!(
                definitions
                    .iter()
                    .any(|d| d.to_string().contains(&format!("\"{name}\""))),
                "{dialect}: {name} missing"
            );
        }
    }
}

#[test]
fn sql_query_reads_the_database_under_the_root_or_the_one_named() {
    let dir = tempfile::tempdir().unwrap();
    let query = r#"{"sql":"SELECT COUNT(*) AS n FROM customers"}"#;

    // No database yet: an error result that says so, exit 1.
    let out = run_in(dir.path(), &["call", "sql_query", query, "--json"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let shown: Value = serde_json::from_slice(&out.stdout).unwrap();
    let message = shown.to_string();
    assert!(message.contains("toolprism.sqlite"), "{message}");
    assert!(message.contains("does not exist"), "{message}");

    // The default: toolprism.sqlite under --root.
    build_customers(&dir.path().join("toolprism.sqlite"), 7).unwrap();
    let out = run_in(dir.path(), &["call", "sql_query", query, "--json"]);
    assert_eq!(rows(&out), serde_json::json!([[7]]));

    // $TOOLPRISM_DATABASE names another file.
    let other = dir.path().join("other.db");
    build_customers(&other, 3).unwrap();
    let out = run_with(
        dir.path(),
        &["call", "sql_query", query, "--json"],
        &[("TOOLPRISM_DATABASE", &other)],
    );
    assert_eq!(rows(&out), serde_json::json!([[3]]));
}

/// The rows of a successful `call sql_query --json`.
#[track_caller]
fn rows(out: &Output) -> Value {
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let shown: Value = serde_json::from_slice(&out.stdout).unwrap();
    shown["value"]["rows"].clone()
}

#[test]
fn call_read_is_confined_to_the_root() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("README.md"), "# hello\nworld\n").unwrap();
    let out = run_in(dir.path(), &["call", "read", r#"{"path":"README.md"}"#]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let shown = text(&out.stdout);
    assert!(
        shown.contains("◀ [read] README.md · lines 1–2 of 2"),
        "{shown}"
    );
    assert!(shown.contains("│     2 │ world"), "{shown}");

    // Outside the root: an error result, exit 1.
    let inner = dir.path().join("inner");
    std::fs::create_dir(&inner).unwrap();
    let root = inner.to_str().unwrap();
    let out = run_in(
        dir.path(),
        &[
            "--root",
            root,
            "call",
            "read",
            r#"{"path":"../README.md"}"#,
            "--json",
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let object: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(object["error"]["code"], "OUTSIDE_WORKSPACE");
}

#[test]
fn the_showcase_log_replays_through_the_same_layer() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("session.jsonl");
    let log_arg = log.to_str().unwrap();
    let out = run_in(
        dir.path(),
        &["--scenario", "bash", "--json", "--log", log_arg],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let live: Vec<Value> = text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(live.len(), 4);

    let out = run_in(dir.path(), &["replay", log_arg]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stderr), "");
    let shown = text(&out.stdout);
    for (i, call) in live.iter().enumerate() {
        let head = format!("#{} {} · bash", i + 1, call["callId"].as_str().unwrap());
        assert!(shown.contains(&head), "no {head:?} in\n{shown}");
    }
    assert!(shown.contains("◀ [terminal] exit 3 ✗"), "{shown}");
    assert!(
        shown.contains("◀ [terminal] killed by SIGKILL ✗"),
        "{shown}"
    );
    assert!(
        shown.lines().last().unwrap().starts_with("─── 4 calls · "),
        "{shown}"
    );
}

#[test]
fn showcase_options_and_commands_do_not_mix() {
    let dir = tempfile::tempdir().unwrap();
    let out = run_in(dir.path(), &["--json", "list"]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("error: "), "{err}");
    let out = run_in(dir.path(), &["--root", "."]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("--root applies to the commands"));
}
