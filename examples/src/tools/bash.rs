//! `bash`: run `bash -c <command>` in the workspace, with a timeout and caps
//! on captured output. Unix only.
//!
//! - **Process**: the command runs in its own process group with stdin
//!   closed. On timeout, or when the call is cancelled or dropped, the whole
//!   group gets `SIGKILL`; when the command ends, anything it left running in
//!   its group is killed too (this tool has no background jobs).
//! - **Value** [`BashValue`]: `{exitCode|null, signal|null, timedOut, timeoutMs,
//!   stdout:{text,truncated}, stderr:{text,truncated}}`; each stream keeps at
//!   most [`MAX_STREAM_BYTES`], the rest is drained and dropped.
//! - **Render**: two blocks: the output (stdout, then `[stderr]` and stderr),
//!   and the status markers (`[stdout truncated …]`, `[timed out …]`, and last
//!   `[killed by signal: S]` or `[exit code: N]`).
//! - **Meta** [`BashMeta`]: `{exitCode?, signal?, timedOut}`, copied from the value.
//! - **Cards**: a `terminal` call card (the command as title, description,
//!   cwd); a `terminal` result card whose exit code or signal comes from
//!   **meta**, never parsed back out of the text, so it stays right when a
//!   policy or spill rewrites the content. Its output is the content minus
//!   the status block when that block is still there, else the whole content.

use std::io::Read;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolprism::card::{ExitStatus, ResultCard, TerminalCall, TerminalResult};
use toolprism::{CallCard, ContentBlock, ToolContext, ToolError, ToolResult, tool};

use super::{blocking, generic_result_card};
use crate::text::ellipsize;
use crate::workspace::Workspace;

/// Bytes kept of each stream.
pub const MAX_STREAM_BYTES: usize = 16 * 1024;
/// The timeout when the call sets none.
pub const DEFAULT_TIMEOUT_MS: u64 = 10_000;
/// The longest timeout a call may ask for.
pub const MAX_TIMEOUT_MS: u64 = 120_000;

/// Arguments of `bash`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BashArgs {
    /// The command line, run with `bash -c`.
    pub command: String,
    /// What the command is for, in a few words (shown to the user).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The working directory, relative to the workspace root. Default: the root.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// Kill the command after this many milliseconds. Default 10000, at most 120000.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 120000))]
    pub timeout_ms: Option<u64>,
}

/// One captured stream.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Captured {
    /// What was captured, up to the cap (invalid UTF-8 replaced).
    pub text: String,
    /// Whether more was written than kept.
    pub truncated: bool,
}

/// The value of `bash`: how the command ended and what it printed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BashValue {
    /// The exit code, when the command exited.
    pub exit_code: Option<i32>,
    /// The signal that killed it (e.g. `SIGKILL`), when one did.
    pub signal: Option<String>,
    /// Whether the timeout killed it.
    pub timed_out: bool,
    /// The timeout in force.
    pub timeout_ms: u64,
    /// Standard output.
    pub stdout: Captured,
    /// Standard error.
    pub stderr: Captured,
}

/// The meta of `bash`: how the command ended, for the terminal card.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BashMeta {
    /// The exit code, when it exited.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// The signal, when one killed it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal: Option<String>,
    /// Whether the timeout killed it.
    pub timed_out: bool,
}

/// Runs commands inside its workspace.
#[derive(Debug, Clone)]
pub struct BashTool {
    workspace: Workspace,
}

impl BashTool {
    /// A `bash` whose commands start in `workspace`.
    pub fn new(workspace: Workspace) -> Self {
        BashTool { workspace }
    }
}

impl Default for BashTool {
    /// Commands start in the current directory.
    fn default() -> Self {
        BashTool::new(Workspace::current_dir())
    }
}

/// Sets a flag when dropped: the call's future was dropped (timeout,
/// cancellation), so the blocking worker must kill the process group.
struct KillOnDrop(Arc<AtomicBool>);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// Run a shell command with `bash -c` in the workspace (or `cwd` inside it).
/// Output is captured (16 KiB per stream); the command is killed after
/// `timeoutMs` (default 10 s). The result ends with the exit code or the
/// signal. Stdin is closed; do not start interactive programs.
#[tool(
    name = "bash",
    title = "Run a shell command",
    kind = execute,
    destructive,
    open_world,
    timeout_ms = 130000,
    builtin
)]
impl BashTool {
    async fn execute(&self, args: BashArgs, _cx: &ToolContext<'_>) -> Result<BashValue, ToolError> {
        let cwd = self
            .workspace
            .resolve_existing(args.cwd.as_deref().unwrap_or("."))?;
        if !cwd.is_dir() {
            return Err(ToolError::new(format!(
                "cwd \"{}\" is not a directory",
                self.workspace.display(&cwd)
            ))
            .with_code("NOT_A_DIRECTORY"));
        }
        if args.command.trim().is_empty() {
            return Err(ToolError::new("the command is empty").with_code("EMPTY_COMMAND"));
        }
        let timeout_ms = args
            .timeout_ms
            .unwrap_or(DEFAULT_TIMEOUT_MS)
            .clamp(1, MAX_TIMEOUT_MS);
        let dropped = Arc::new(AtomicBool::new(false));
        let _guard = KillOnDrop(dropped.clone());
        let command = args.command;
        blocking(move || run(&command, cwd, timeout_ms, &dropped)).await
    }

    fn render(_args: &BashArgs, value: &BashValue) -> Vec<ContentBlock> {
        let mut output = value.stdout.text.clone();
        if !value.stderr.text.is_empty() {
            if !output.is_empty() && !output.ends_with('\n') {
                output.push('\n');
            }
            output.push_str("[stderr]\n");
            output.push_str(&value.stderr.text);
        }
        if output.is_empty() {
            output.push_str("(no output)");
        }
        let mut markers = Vec::new();
        for (name, stream) in [("stdout", &value.stdout), ("stderr", &value.stderr)] {
            if stream.truncated {
                markers.push(format!(
                    "[{name} truncated: only the first {MAX_STREAM_BYTES} bytes were kept]"
                ));
            }
        }
        if value.timed_out {
            markers.push(format!(
                "[timed out after {} ms; the process group was killed]",
                value.timeout_ms
            ));
        }
        match (&value.signal, value.exit_code) {
            (Some(signal), _) => markers.push(format!("[killed by signal: {signal}]")),
            (None, Some(code)) => markers.push(format!("[exit code: {code}]")),
            (None, None) => {}
        }
        vec![
            ContentBlock::text(output.trim_end().to_owned()),
            ContentBlock::text(markers.join("\n")),
        ]
    }

    fn presentation_meta(_args: &BashArgs, value: &BashValue) -> BashMeta {
        BashMeta {
            exit_code: value.exit_code,
            signal: value.signal.clone(),
            timed_out: value.timed_out,
        }
    }

    fn present_call(args: &BashArgs) -> CallCard {
        CallCard::Terminal(TerminalCall {
            title: args.command.clone(),
            description: args.description.clone(),
            cwd: Some(args.cwd.clone().unwrap_or_else(|| ".".to_owned())),
        })
    }

    fn present_result(args: &BashArgs, result: &ToolResult<BashMeta>) -> ResultCard {
        let Some(meta) = result.meta.as_ref().filter(|_| !result.is_error) else {
            return generic_result_card("bash", result);
        };
        let status = match (meta.exit_code, &meta.signal) {
            (Some(_), Some(_)) => return generic_result_card("bash", result),
            (Some(code), None) => Some(ExitStatus::Code(code)),
            (None, Some(signal)) => Some(ExitStatus::Signal(signal.clone())),
            (None, None) => None,
        };
        let output = match result.content.as_slice() {
            [
                ContentBlock::Text { text: output },
                ContentBlock::Text { text: status },
            ] if status.starts_with('[') || status.is_empty() => output.clone(),
            content => toolprism::content_text(content),
        };
        ResultCard::Terminal(TerminalResult {
            title: Some(ellipsize(&args.command, 120)),
            output: Some(output),
            status,
        })
    }
}

/// A stream being drained by a thread: kept bytes, overflow flag.
struct Capture {
    buf: Arc<Mutex<(Vec<u8>, bool)>>,
    done: mpsc::Receiver<()>,
}

fn capture(mut stream: impl Read + Send + 'static) -> Capture {
    let buf = Arc::new(Mutex::new((Vec::new(), false)));
    let (tx, done) = mpsc::channel();
    let shared = buf.clone();
    std::thread::spawn(move || {
        let mut chunk = [0u8; 8192];
        loop {
            match stream.read(&mut chunk) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    let mut guard = shared.lock().unwrap_or_else(|p| p.into_inner());
                    let room = MAX_STREAM_BYTES.saturating_sub(guard.0.len());
                    if n > room {
                        guard.1 = true;
                    }
                    guard.0.extend_from_slice(&chunk[..n.min(room)]);
                }
            }
        }
        let _ = tx.send(());
    });
    Capture { buf, done }
}

impl Capture {
    /// What was captured, waiting at most until `deadline` for the stream to close.
    fn finish(self, deadline: Instant) -> Captured {
        let _ = self
            .done
            .recv_timeout(deadline.saturating_duration_since(Instant::now()));
        let guard = self.buf.lock().unwrap_or_else(|p| p.into_inner());
        let (bytes, truncated) = (&guard.0, guard.1);
        // A cut may split a UTF-8 sequence at the end: drop the partial char.
        let bytes = match std::str::from_utf8(bytes) {
            Err(e) if truncated && e.error_len().is_none() => &bytes[..e.valid_up_to()],
            _ => &bytes[..],
        };
        Captured {
            text: String::from_utf8_lossy(bytes).into_owned(),
            truncated,
        }
    }
}

fn kill_group(pgid: i32) {
    // SAFETY: killpg has no memory effects; a stale or empty group gives ESRCH, ignored.
    unsafe {
        libc::killpg(pgid, libc::SIGKILL);
    }
}

fn run(
    command: &str,
    cwd: PathBuf,
    timeout_ms: u64,
    dropped: &AtomicBool,
) -> Result<BashValue, ToolError> {
    let mut child = Command::new("bash")
        .arg("-c")
        .arg(command)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .map_err(|e| {
            ToolError::new(format!("could not start bash: {e}")).with_code("SPAWN_FAILED")
        })?;
    let pgid = child.id() as i32;
    let stdout = child.stdout.take().map(capture);
    let stderr = child.stderr.take().map(capture);
    let deadline = Instant::now() + Duration::from_millis(timeout_ms);
    let mut timed_out = false;
    let mut pause = Duration::from_millis(1);
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) => {}
            Err(e) => {
                kill_group(pgid);
                return Err(ToolError::new(format!("could not wait for bash: {e}")));
            }
        }
        if dropped.load(Ordering::SeqCst) || Instant::now() >= deadline {
            timed_out = !dropped.load(Ordering::SeqCst);
            kill_group(pgid);
            break child
                .wait()
                .map_err(|e| ToolError::new(format!("could not wait for bash: {e}")))?;
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(20));
    };
    // Whatever the command left running in its group goes too, so the pipes close.
    kill_group(pgid);
    let grace = Instant::now() + Duration::from_secs(2);
    let empty = || Captured {
        text: String::new(),
        truncated: false,
    };
    Ok(BashValue {
        exit_code: status.code(),
        signal: status.signal().map(signal_name),
        timed_out,
        timeout_ms,
        stdout: stdout.map_or_else(empty, |c| c.finish(grace)),
        stderr: stderr.map_or_else(empty, |c| c.finish(grace)),
    })
}

/// A signal's conventional name.
pub fn signal_name(signal: i32) -> String {
    let name = match signal {
        libc::SIGHUP => "SIGHUP",
        libc::SIGINT => "SIGINT",
        libc::SIGQUIT => "SIGQUIT",
        libc::SIGILL => "SIGILL",
        libc::SIGTRAP => "SIGTRAP",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGKILL => "SIGKILL",
        libc::SIGUSR1 => "SIGUSR1",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGUSR2 => "SIGUSR2",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGALRM => "SIGALRM",
        libc::SIGTERM => "SIGTERM",
        _ => return format!("SIG{signal}"),
    };
    name.to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolprism::{Registry, ToolCall, ToolOutcome};

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
            &serde_json::json!({"exitCode": 3, "timedOut": false})
        );
        let card = terminal(&out);
        assert_eq!(card.status, Some(ExitStatus::Code(3)));
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
            Some(ExitStatus::Signal("SIGTERM".into()))
        );
        assert_eq!(
            out.content()[1].as_text(),
            Some("[killed by signal: SIGTERM]")
        );
    }

    #[tokio::test]
    async fn a_timeout_kills_the_whole_group() {
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
            &serde_json::json!({"signal": "SIGKILL", "timedOut": true})
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
        let rewritten = ToolResult {
            content: vec![ContentBlock::text("[exit code: 0] (output pruned)")],
            is_error: false,
            meta: Some(BashMeta {
                exit_code: Some(2),
                signal: None,
                timed_out: false,
            }),
        };
        let ResultCard::Terminal(card) = BashTool::present_result(&args, &rewritten) else {
            panic!()
        };
        assert_eq!(card.status, Some(ExitStatus::Code(2)));
        assert_eq!(
            card.output.as_deref(),
            Some("[exit code: 0] (output pruned)")
        );
    }

    #[tokio::test]
    async fn a_dropped_call_kills_the_command() {
        let (dir, registry) = setup();
        let options = toolprism::CallOptions::new().with_timeout(Duration::from_millis(200));
        let out = registry
            .call_with(
                ToolCall::new(
                    "c",
                    "bash",
                    serde_json::json!({"command": "sleep 2; touch late.txt"}).to_string(),
                ),
                &options,
            )
            .await;
        assert_eq!(out.error().unwrap().code.as_str(), "TIMEOUT");
        std::thread::sleep(Duration::from_millis(2500));
        assert!(!dir.path().join("late.txt").exists());
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
}
