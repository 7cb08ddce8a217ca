//! The showcase binary, end to end: the human run, `--json`, one scenario,
//! and bad usage.

use std::path::Path;
use std::process::{Command, Output};

use toolprism::{CallCard, ResultCard};

const BIN: &str = env!("CARGO_BIN_EXE_toolprism-examples");

/// The scenarios, written out here on purpose (not taken from the
/// showcase's own list) so the test fails if one goes missing.
const SCENARIOS: [&str; 13] = [
    "read",
    "grep",
    "glob",
    "bash",
    "sandbox",
    "edit",
    "web_fetch",
    "sql_query",
    "third-party",
    "render-panic",
    "redaction",
    "code-mode",
    "agent",
];

fn run(args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .env_remove("RUST_BACKTRACE")
        .output()
        .expect("the showcase binary runs")
}

fn log_arg(dir: &Path) -> String {
    dir.join("session.jsonl").display().to_string()
}

#[test]
fn the_human_run_prints_every_scenario_and_passes_every_check() {
    let dir = tempfile::tempdir().unwrap();
    let log = log_arg(dir.path());
    let out = run(&["--log", &log]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "stdout:\n{stdout}\nstderr:\n{stderr}");
    for name in SCENARIOS {
        assert!(
            stdout.contains(&format!("━━ {name} · ")),
            "scenario {name} missing:\n{stdout}"
        );
    }
    for label in ["value", "model", "ui", "persisted", "checks"] {
        assert!(
            stdout.contains(&format!("  {label:<10}")),
            "no {label} line"
        );
    }
    assert!(
        stdout.contains("28 of 28 redrawn from the log equal the live ones ✓"),
        "{stdout}"
    );
    assert!(
        stdout.contains("all checks passed: 28 calls in 13 scenarios"),
        "{stdout}"
    );
    assert!(!stdout.contains("checks    ✗"), "{stdout}");
    assert!(!stdout.contains("FAILED"), "{stdout}");
    // The deliberate render panic is caught and kept off the terminal.
    assert!(!stderr.contains("panicked"), "{stderr}");
    // The log is where it said, and holds no value.
    let text = std::fs::read_to_string(&log).unwrap();
    // Two events a call, and two for each of the program's three calls.
    assert_eq!(text.lines().count(), 62);
    assert!(!text.contains("\"value\""));
    assert!(!text.contains("GREP-VALUE-ONLY-200"));
    assert!(stdout.contains(&log));
}

#[test]
fn json_mode_prints_one_valid_object_per_call_and_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    let log = log_arg(dir.path());
    let out = run(&["--json", "--log", &log]);
    let stdout = String::from_utf8(out.stdout).unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "stderr:\n{stderr}");
    let mut scenarios = Vec::new();
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 28, "{stdout}");
    for line in lines {
        let object: serde_json::Value = serde_json::from_str(line).expect("each line is JSON");
        let call: CallCard = serde_json::from_value(object["callCard"].clone()).unwrap();
        let result: ResultCard = serde_json::from_value(object["resultCard"].clone()).unwrap();
        assert_eq!(serde_json::to_value(&call).unwrap(), object["callCard"]);
        assert_eq!(serde_json::to_value(&result).unwrap(), object["resultCard"]);
        let persisted = object["persisted"].as_array().unwrap();
        // The call, a pair of events for each call its program made, the result.
        let last = persisted.len() - 1;
        assert_eq!(persisted.len() % 2, 0);
        assert_eq!(persisted[0]["type"], "tool/call");
        assert_eq!(persisted[last]["type"], "tool/result");
        for nested in &persisted[1..last] {
            assert!(
                nested["type"].as_str().unwrap().starts_with("tool/nested-"),
                "{nested}"
            );
        }
        assert!(persisted.iter().all(|e| e.get("value").is_none()));
        let scenario = object["scenario"].as_str().unwrap().to_owned();
        if scenarios.last() != Some(&scenario) {
            scenarios.push(scenario);
        }
    }
    assert_eq!(scenarios, SCENARIOS);
    assert!(stderr.contains("all checks passed"), "{stderr}");
}

#[test]
fn one_scenario_runs_alone_and_replays() {
    let dir = tempfile::tempdir().unwrap();
    let log = log_arg(dir.path());
    let out = run(&["--scenario", "bash", "--log", &log, "--json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(stdout.lines().count(), 4);
    assert!(stdout.lines().all(|l| l.contains(r#""scenario":"bash""#)));
    let cards: Vec<serde_json::Value> = stdout
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["resultCard"].clone())
        .collect();
    assert_eq!(cards[1]["exitCode"], 3);
    assert_eq!(cards[2]["signal"], "SIGKILL");
    assert!(cards[2].get("exitCode").is_none());
    assert!(String::from_utf8_lossy(&out.stderr).contains("4 of 4 redrawn"));
}

#[test]
fn the_agent_scenario_loops_against_a_scripted_model_and_replays() {
    let dir = tempfile::tempdir().unwrap();
    let log = log_arg(dir.path());
    let out = run(&["--scenario", "agent", "--log", &log]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("all checks passed: 3 calls in 1 scenarios"),
        "{stdout}"
    );
    // The model read the file through the loop, and quoted its first line.
    assert!(
        stdout.contains("The first line I read: // generated"),
        "{stdout}"
    );
    assert!(
        stdout.contains("3 of 3 redrawn from the log equal the live ones"),
        "{stdout}"
    );
    let logged = std::fs::read_to_string(&log).unwrap();
    assert_eq!(
        logged.matches(r#""dialect":"anthropic""#).count(),
        3,
        "{logged}"
    );
    for id in ["agent-1", "agent-2", "agent-3"] {
        assert!(logged.contains(&format!(r#""callId":"{id}""#)), "{logged}");
    }
}

#[test]
fn agent_help_names_the_four_providers() {
    let out = run(&["agent", "--help"]);
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{help}");
    for provider in ["anthropic", "openai-chat", "openai-responses", "gemini"] {
        assert!(help.contains(provider), "{provider}: {help}");
    }
    // Without TLS a provider's own https endpoint is refused at once;
    // this build has it, so an unreachable http endpoint is the failure.
    let out = run(&[
        "agent",
        "--provider",
        "gemini",
        "--model",
        "m",
        "--url",
        "http://127.0.0.1:9/x",
        "hi",
    ]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("POST http://127.0.0.1:9/x"), "{stderr}");
}

#[test]
fn help_and_bad_usage() {
    let out = run(&["--help"]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("--scenario <NAME>"));
    let out = run(&["--scenario", "nope"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("there is no scenario \"nope\""));
    let out = run(&["--bogus"]);
    assert_eq!(out.status.code(), Some(2));
    // A log path that already holds a log is not appended to.
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("old.jsonl");
    std::fs::write(&log, "{}\n").unwrap();
    let out = run(&["--log", log.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("already holds a log"));
    assert_eq!(std::fs::read_to_string(&log).unwrap(), "{}\n");
}
