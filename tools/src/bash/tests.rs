//! `bash` against real processes.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use super::*;
use toolprism::card::TerminalSandbox;
use toolprism::{CallOptions, CancellationToken, Registry, ToolCall, ToolOutcome};

fn setup() -> (tempfile::TempDir, Registry) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    std::fs::write(dir.path().join("sub/hello.txt"), "hi").unwrap();
    let registry = Registry::builder()
        .tool(BashTool::new(Workspace::new(dir.path()).unwrap()))
        .build()
        .unwrap();
    (dir, registry)
}

async fn call(registry: &Registry, args: serde_json::Value) -> ToolOutcome {
    registry
        .call(ToolCall::new("c", "bash", args.to_string()))
        .await
}

fn terminal(out: &ToolOutcome) -> &TerminalResult {
    match out.result_card().unwrap() {
        ResultCard::Terminal(t) => t,
        other => panic!("not a terminal card: {other:?}"),
    }
}

#[tokio::test]
async fn exit_codes_streams_and_cwd() {
    let (_d, registry) = setup();
    let out = call(
        &registry,
        serde_json::json!({"command": "cat hello.txt; echo oops >&2; exit 3", "cwd": "sub"}),
    )
    .await;
    assert!(!out.is_error(), "{out:?}");
    let v = out.value_as::<BashValue>().unwrap();
    assert_eq!(v.exit_code, Some(3));
    assert_eq!(v.signal, None);
    assert_eq!(v.stdout.text, "hi");
    assert_eq!(v.stderr.text, "oops\n");
    assert_eq!(
        out.content(),
        [
            ContentBlock::text("hi\n[stderr]\noops"),
            ContentBlock::text("[exit code: 3]")
        ]
    );
    assert_eq!(
        out.meta().unwrap(),
        &serde_json::json!({"exitCode": 3, "timedOut": false,
            "sandbox": {"mode": "workspace-write", "network": false, "denied": false}})
    );
    let card = terminal(&out);
    assert_eq!(card.status, Some(CardExitStatus::Code(3)));
    assert_eq!(card.output.as_deref(), Some("hi\n[stderr]\noops"));
    let CallCard::Terminal(call) = out.call_card().unwrap() else {
        panic!()
    };
    assert_eq!(call.cwd.as_deref(), Some("sub"));
    assert_eq!(call.title, "cat hello.txt; echo oops >&2; exit 3");
}

#[tokio::test]
async fn a_signal_is_reported_as_a_signal() {
    let (_d, registry) = setup();
    let out = call(&registry, serde_json::json!({"command": "kill -TERM $$"})).await;
    let v = out.value_as::<BashValue>().unwrap();
    assert_eq!((v.exit_code, v.signal.as_deref()), (None, Some("SIGTERM")));
    assert_eq!(
        terminal(&out).status,
        Some(CardExitStatus::Signal("SIGTERM".into()))
    );
    assert_eq!(
        out.content()[1].as_text(),
        Some("[killed by signal: SIGTERM]")
    );
}

#[tokio::test]
async fn a_timeout_kills_the_whole_tree() {
    let (dir, registry) = setup();
    let started = Instant::now();
    let out = call(
        &registry,
        serde_json::json!({"command": "(sleep 30; touch late.txt) & sleep 30", "timeoutMs": 300}),
    )
    .await;
    assert!(started.elapsed() < Duration::from_secs(10));
    let v = out.value_as::<BashValue>().unwrap();
    assert!(v.timed_out);
    assert_eq!(v.signal.as_deref(), Some("SIGKILL"));
    assert_eq!(
        out.meta().unwrap(),
        &serde_json::json!({"signal": "SIGKILL", "timedOut": true,
            "sandbox": {"mode": "workspace-write", "network": false, "denied": false}})
    );
    assert!(
        out.content()[1]
            .as_text()
            .unwrap()
            .contains("[timed out after 300 ms")
    );
    std::thread::sleep(Duration::from_millis(200));
    assert!(!dir.path().join("late.txt").exists());
}

#[tokio::test]
async fn output_is_capped_and_the_status_survives_rewritten_content() {
    let (_d, registry) = setup();
    let out = call(&registry, serde_json::json!({"command": "seq 1 100000"})).await;
    let v = out.value_as::<BashValue>().unwrap();
    assert!(v.stdout.truncated);
    assert_eq!(v.stdout.text.len(), MAX_STREAM_BYTES);
    assert_eq!(v.exit_code, Some(0));
    // A policy or spill that rewrites the content cannot change the status.
    let args: BashArgs = serde_json::from_value(serde_json::json!({"command": "x"})).unwrap();
    let rewritten = ToolResult::ok(vec![ContentBlock::text("[exit code: 0] (output pruned)")])
        .with_meta(BashMeta {
            exit_code: Some(2),
            signal: None,
            timed_out: false,
            sandbox: None,
        });
    let Some(ResultCard::Terminal(card)) = BashTool::present_result(&args, &rewritten) else {
        panic!()
    };
    assert_eq!(card.status, Some(CardExitStatus::Code(2)));
    assert_eq!(
        card.output.as_deref(),
        Some("[exit code: 0] (output pruned)")
    );
}

/// A way a command's process leaves bash's process group or its parent.
/// Each writes its own pid to `p.<name>` and then sleeps (or loops).
const ESCAPES: [(&str, &str); 4] = [
    (
        "setsid",
        "setsid bash -c 'echo $$ > p.setsid; exec sleep 60' &",
    ),
    (
        "double-fork",
        "( bash -c 'echo $$ > p.double-fork; exec sleep 60' & )",
    ),
    (
        "nohup",
        "nohup bash -c 'echo $$ > p.nohup; exec sleep 60' > /dev/null 2>&1 &",
    ),
    (
        "ignores-sigterm",
        "bash -c 'trap \"\" TERM HUP INT; echo $$ > p.ignores-sigterm; while :; do sleep 1; done' &",
    ),
];

#[derive(Debug, Clone, Copy)]
enum End {
    /// `timeoutMs` of the tool itself.
    ToolTimeout,
    /// `CallOptions::timeout` of the registry.
    RegistryTimeout,
    /// `CallOptions::cancel`, fired once the pid file is written.
    Cancellation,
}

/// The command: start the escape, wait until its pid file is written, then
/// sleep far past every timeout.
fn command(escape: &str, name: &str) -> String {
    format!("{escape}\nwhile [ ! -s p.{name} ]; do sleep 0.01; done\nsleep 60")
}

fn pid_in(dir: &Path, name: &str) -> Option<u32> {
    std::fs::read_to_string(dir.join(format!("p.{name}")))
        .ok()?
        .trim()
        .parse()
        .ok()
}

fn is_running(pid: u32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
}

async fn run_escape(
    registry: Arc<Registry>,
    dir: PathBuf,
    name: &'static str,
    escape: &str,
    end: End,
) {
    let mut args = serde_json::json!({ "command": command(escape, name) });
    let mut options = CallOptions::new();
    match end {
        End::ToolTimeout => args["timeoutMs"] = serde_json::json!(1500),
        End::RegistryTimeout => options = options.with_timeout(Duration::from_millis(1500)),
        End::Cancellation => {
            let token = CancellationToken::new();
            options = options.with_cancel(token.clone());
            let dir = dir.clone();
            tokio::spawn(async move {
                while pid_in(&dir, name).is_none() {
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
                token.cancel();
            });
        }
    }
    let out = registry
        .call_with(ToolCall::new(name, "bash", args.to_string()), &options)
        .await;
    // Checked at once: the kill must be over when the result is out.
    let pid = pid_in(&dir, name).unwrap_or_else(|| panic!("{name} {end:?}: no pid file; {out:?}"));
    assert!(
        !is_running(pid),
        "{name} {end:?}: pid {pid} still runs after {out:?}"
    );
    match end {
        End::ToolTimeout => {
            let v = out.value_as::<BashValue>().unwrap();
            assert!(v.timed_out, "{name}: {v:?}");
            assert_eq!(v.signal.as_deref(), Some("SIGKILL"));
        }
        End::RegistryTimeout => assert_eq!(out.error().unwrap().code.as_str(), "TIMEOUT"),
        End::Cancellation => assert_eq!(out.error().unwrap().code.as_str(), "ABORTED"),
    }
}

/// `setsid`, a double fork, `nohup … &` and a process ignoring SIGTERM,
/// each ended by the tool's timeout, a registry timeout and a cancellation:
/// after the result, none of them runs (checked in `/proc` with the pid
/// each wrote).
#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nothing_the_command_started_outlives_a_timeout_or_a_cancellation() {
    let mut runs = tokio::task::JoinSet::new();
    let mut dirs = Vec::new();
    for end in [End::ToolTimeout, End::RegistryTimeout, End::Cancellation] {
        // One workspace per way of ending, so the pid files do not mix.
        let (dir, registry) = setup();
        let registry = Arc::new(registry);
        for (name, escape) in ESCAPES {
            runs.spawn(run_escape(
                registry.clone(),
                dir.path().to_path_buf(),
                name,
                escape,
                end,
            ));
        }
        dirs.push(dir);
    }
    while let Some(run) = runs.join_next().await {
        run.unwrap();
    }
}

/// A command that ends on its own takes what it started with it.
#[cfg(target_os = "linux")]
#[tokio::test]
async fn a_command_that_ends_leaves_nothing_running() {
    let (dir, registry) = setup();
    let out = call(
        &registry,
        serde_json::json!({"command": "setsid sleep 60 & echo $! > p.bg; nohup sleep 60 >/dev/null 2>&1 & echo $! > p.nohup; echo done"}),
    )
    .await;
    let v = out.value_as::<BashValue>().unwrap();
    assert_eq!((v.exit_code, v.stdout.text.as_str()), (Some(0), "done\n"));
    for name in ["bg", "nohup"] {
        let pid = pid_in(dir.path(), name).unwrap();
        assert!(!is_running(pid), "{name}: {pid}");
    }
}

#[tokio::test]
async fn bad_input_is_a_clear_error_result() {
    let (_d, registry) = setup();
    let out = call(
        &registry,
        serde_json::json!({"command": "ls", "cwd": "../.."}),
    )
    .await;
    assert_eq!(out.error().unwrap().code.as_str(), "OUTSIDE_WORKSPACE");
    let out = call(&registry, serde_json::json!({"command": "  "})).await;
    assert_eq!(out.error().unwrap().code.as_str(), "EMPTY_COMMAND");
    let out = call(
        &registry,
        serde_json::json!({"command": "ls", "timeoutMs": 0}),
    )
    .await;
    assert_eq!(out.error().unwrap().code.as_str(), "INVALID_ARGS");
    assert_eq!(out.result_card().unwrap().tag(), "generic");
}

#[test]
fn signal_names() {
    assert_eq!(signal_name(libc::SIGKILL), "SIGKILL");
    assert_eq!(signal_name(64), "SIG64");
}

#[tokio::test]
async fn a_capped_stream_shows_whole_lines_and_the_status_once() {
    let (_d, registry) = setup();
    let out = call(&registry, serde_json::json!({"command": "seq 1 100000"})).await;
    let v = out.value_as::<BashValue>().unwrap();
    // The value keeps every byte captured, the split last line included.
    assert_eq!(v.stdout.text.len(), MAX_STREAM_BYTES);
    assert!(!v.stdout.text.ends_with('\n'));
    // The model reads whole lines only: 1, 2, 3, … with none cut.
    let shown = out.content()[0].as_text().unwrap();
    let numbers: Vec<u64> = shown.lines().map(|l| l.parse().unwrap()).collect();
    assert_eq!(numbers, (1..=numbers.len() as u64).collect::<Vec<_>>());
    assert!(v.stdout.text.starts_with(shown));
    let markers = out.content()[1].as_text().unwrap();
    assert!(
        markers.starts_with(
            "[stdout truncated: only the first 16384 bytes were kept; the line the cap split is left out]"
        ),
        "{markers}"
    );
    // The card says the exit status once (as its status), and keeps the
    // truncation marker as text.
    let card = terminal(&out);
    assert_eq!(card.status, Some(CardExitStatus::Code(0)));
    let output = card.output.as_deref().unwrap();
    assert!(
        output.ends_with("the line the cap split is left out]"),
        "{output}"
    );
    assert!(!output.contains("[exit code"), "{output}");
}

#[test]
fn a_spilled_preview_keeps_its_notice_and_loses_only_the_status_line() {
    let args: BashArgs =
        serde_json::from_value(serde_json::json!({"command": "seq 1 5000"})).unwrap();
    // What spill leaves: one block, head, notice, tail, the markers last.
    let preview = "1\n2\n\n\n(Omitted 4350 of 16456 bytes. The full result (16456 bytes) is stored at: /s/x.txt. Read that file in pages to see the rest.)\n\n3497\n3498\n[stdout truncated: only the first 16384 bytes were kept]\n[exit code: 0]";
    let spilled = ToolResult::ok(vec![ContentBlock::text(preview)]).with_meta(BashMeta {
        exit_code: Some(0),
        signal: None,
        timed_out: false,
        sandbox: None,
    });
    let Some(ResultCard::Terminal(card)) = BashTool::present_result(&args, &spilled) else {
        panic!()
    };
    assert_eq!(card.status, Some(CardExitStatus::Code(0)));
    let output = card.output.unwrap();
    assert!(output.contains("is stored at: /s/x.txt"), "{output}");
    assert!(
        output.ends_with("3498\n[stdout truncated: only the first 16384 bytes were kept]"),
        "{output}"
    );
    // A timed-out command keeps its timeout marker in the card's output.
    let timed = ToolResult::ok(vec![
            ContentBlock::text("(no output)"),
            ContentBlock::text(
                "[timed out after 300 ms; every process it started was killed]\n[killed by signal: SIGKILL]",
            ),
        ]).with_meta(BashMeta {
            exit_code: None,
            signal: Some("SIGKILL".into()),
            timed_out: true,
            sandbox: None,
        });
    let Some(ResultCard::Terminal(card)) = BashTool::present_result(&args, &timed) else {
        panic!()
    };
    assert_eq!(
        card.output.as_deref(),
        Some("(no output)\n[timed out after 300 ms; every process it started was killed]")
    );
}

/// A person at the other end: approves or not, and keeps every question.
struct Person {
    yes: bool,
    asked: std::sync::Mutex<Vec<String>>,
}

impl toolprism::client::Client for Person {
    fn approve(
        &self,
        request: toolprism::client::ApprovalRequest,
    ) -> toolprism::client::ClientFuture<'_, toolprism::client::ApprovalAnswer> {
        self.asked.lock().unwrap().push(request.question);
        let yes = self.yes;
        Box::pin(async move { Ok(yes.into()) })
    }
}

fn read_only() -> (tempfile::TempDir, Workspace) {
    let dir = tempfile::tempdir().unwrap();
    let ws = Workspace::new(dir.path())
        .unwrap()
        .with_sandbox(SandboxPolicy::new(SandboxMode::ReadOnly));
    (dir, ws)
}

#[tokio::test]
async fn the_marker_and_the_card_carry_the_sandbox() {
    let (dir, ws) = read_only();
    let registry = Registry::builder().tool(BashTool::new(ws)).build().unwrap();
    let out = call(&registry, serde_json::json!({"command": "touch inside"})).await;
    assert!(!dir.path().join("inside").exists());
    let v = out.value_as::<BashValue>().unwrap();
    assert_eq!(v.sandbox.mode, ModeName::ReadOnly);
    assert!(v.sandbox.denied && !v.sandbox.network && !v.sandbox.can_escalate);
    let markers = toolprism::content_text(&out.content()[1..]);
    assert!(
        markers.starts_with("[sandbox: the sandbox may have stopped this command (read-only mode: writing any file is refused; the network is off); do not try to work around it.]"),
        "{markers}"
    );
    assert!(markers.ends_with("[exit code: 1]"), "{markers}");
    assert!(!markers.contains("escalate"), "not offered: {markers}");
    let card = terminal(&out);
    assert_eq!(
        card.sandbox,
        Some(TerminalSandbox::new("read-only", false, true))
    );
    // The card keeps the marker (only the exit status line is the card's).
    assert!(card.output.as_deref().unwrap().contains("[sandbox:"));
    // A command that did nothing wrong has no marker.
    let out = call(&registry, serde_json::json!({"command": "echo fine"})).await;
    assert!(!toolprism::content_text(out.content()).contains("[sandbox:"));
    assert_eq!(
        terminal(&out).sandbox,
        Some(TerminalSandbox::new("read-only", false, false))
    );
}

#[tokio::test]
async fn escalation_is_asked_and_widens_one_call_only() {
    let (dir, ws) = read_only();
    let registry = Registry::builder()
        .tool(BashTool::new(ws).with_escalation())
        .build()
        .unwrap();
    let schema = &registry.definition("bash").unwrap().input_schema;
    assert!(schema["properties"]["escalate"].is_object(), "{schema}");
    let run = |person: Option<Arc<Person>>, args: serde_json::Value| {
        let registry = &registry;
        async move {
            let mut options = CallOptions::new();
            if let Some(person) = person {
                options = options.with_client(person);
            }
            registry
                .call_with(ToolCall::new("c", "bash", args.to_string()), &options)
                .await
        }
    };
    let escalated = |file: &str| {
        serde_json::json!({"command": format!("touch {file}"), "escalate": {
            "mode": "workspace-write", "justification": "the build writes its output"}})
    };
    // Refused first, and told that it may ask.
    let yes = Arc::new(Person {
        yes: true,
        asked: Default::default(),
    });
    let out = run(
        Some(yes.clone()),
        serde_json::json!({"command": "touch first"}),
    )
    .await;
    assert!(!dir.path().join("first").exists());
    assert!(toolprism::content_text(out.content()).contains("call bash again with `escalate`"));
    assert!(
        yes.asked.lock().unwrap().is_empty(),
        "a plain call asks nothing"
    );
    // Approved: this one call runs widened.
    let out = run(Some(yes.clone()), escalated("approved")).await;
    assert!(!out.is_error(), "{out:?}");
    assert!(dir.path().join("approved").exists());
    let v = out.value_as::<BashValue>().unwrap();
    assert_eq!(v.sandbox.mode, ModeName::WorkspaceWrite);
    assert!(v.sandbox.widened);
    let asked = yes.asked.lock().unwrap().clone();
    assert_eq!(
        asked,
        [
            "Let the agent run `touch approved` with the sandbox widened to workspace-write? It says: the build writes its output"
        ]
    );
    // The next call is confined again.
    let _ = run(
        Some(yes.clone()),
        serde_json::json!({"command": "touch after"}),
    )
    .await;
    assert!(!dir.path().join("after").exists());
    // Declined, or nobody to ask: NOT_APPROVED, nothing ran.
    let no = Arc::new(Person {
        yes: false,
        asked: Default::default(),
    });
    for person in [Some(no), None] {
        let out = run(person, escalated("declined")).await;
        assert_eq!(
            out.error().unwrap().code.as_str(),
            "NOT_APPROVED",
            "{out:?}"
        );
        assert!(!dir.path().join("declined").exists());
    }
}
