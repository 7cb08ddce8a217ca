//! `bash`: run `bash -c <command>` in the workspace, with a timeout and caps
//! on captured output. Unix only.
//!
//! - **Process**: stdin is closed. The command runs under a supervisor
//!   process that keeps everything it starts in one tree, even what calls
//!   `setsid`, double-forks or runs under `nohup … &` (see [what holds
//!   where](#what-holds-where)). When the command ends, on its own
//!   timeout, or when the call's future is dropped (a registry timeout or a
//!   cancellation), every process of the tree gets `SIGKILL` and the tool
//!   waits until none is left: the kill runs in `Drop`, synchronously, so it
//!   has finished before the registry returns its `TIMEOUT` or `ABORTED`
//!   result. This tool has no background jobs: nothing a command starts
//!   outlives its call.
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
//!   the last status line when that line says what the card's status says
//!   (so the status is shown once); the other markers stay, as text.
//! - A stream the cap cut is rendered up to its last line end, so no line
//!   reaches the model (or a card) cut in the middle; the value keeps every
//!   byte captured.
//! - `execute` is async and owns the process tree, so that dropping its
//!   future kills the tree; the waiting is done by threads that read the
//!   pipes, never by the runtime's workers.
//!
//! ## What holds where
//!
//! `bash -c <command>` is not the tool's child: its child is a small
//! **supervisor**, forked before `exec`, which forks `bash` and then only
//! reaps children until none is left. It writes the command's wait status
//! to a pipe when the command ends and exits when the last process below it
//! is gone. It runs nothing but a few system calls and holds no file
//! descriptor but that pipe, so the output pipes close when the command's
//! processes are gone.
//!
//! **Linux.** The supervisor makes itself a *child subreaper*
//! (`prctl(PR_SET_CHILD_SUBREAPER)`, Linux 3.4+, no privileges needed): a
//! process below it whose parent dies is re-parented to the supervisor, not
//! to init. `setsid`, `nohup … &`, a double fork or a daemon therefore never
//! leave the supervisor's tree. The kill reads `/proc`,
//! finds every process below the supervisor, sends each `SIGKILL` (which
//! cannot be caught or ignored) through a pidfd opened on exactly the
//! process it saw (same pid and start time, so a recycled pid is never hit),
//! and repeats until nothing is left below the supervisor; the supervisor
//! then exits and is reaped. When the kill returns, no process the
//! command started is running.
//!
//! - *Without privileges* this holds for every process that keeps the
//!   caller's user id. A process that changes it (a set-user-id program
//!   such as `sudo` or `ping`) cannot be signalled and survives.
//! - *As root* (or with `CAP_KILL`) it holds for set-user-id programs too.
//!
//! Limits on any Linux: a command that keeps creating processes faster
//! than they are killed for more than 5 seconds is left running; a command that kills the supervisor itself (its parent,
//! `$PPID`) takes the subreaper away and what it started then goes to init;
//! work handed to another daemon (cron, `at`, `systemd-run`, `ssh`) was
//! never in the tree. Only an OS sandbox closes those (a container, or a
//! PID namespace with its own `/proc`). This module uses no PID namespace
//! or cgroup itself: a PID namespace needs privileges (or an unprivileged
//! user namespace, which many systems disable), makes `bash` see other pids
//! than `ps` and `/proc` show unless `/proc` is mounted again (more
//! privileges), and a cgroup needs a delegated, writable cgroup tree,
//! which a library cannot count on; the subreaper works for any user.
//!
//! **Other Unix (macOS, the BSDs).** There is no subreaper: the command and
//! its supervisor run in their own process group, and the kill sends the
//! group `SIGKILL` (and waits for the supervisor). A process that leaves the group (`setsid`, `setpgid`)
//! escapes it.

pub(crate) mod process;

use std::io::Read;
use std::os::unix::process::ExitStatusExt;
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tokio::sync::oneshot;
use toolprism::card::{ExitStatus as CardExitStatus, ResultCard, TerminalCall, TerminalResult};
use toolprism::{CallCard, ContentBlock, ToolContext, ToolError, ToolResult, tool};

use crate::text::{ellipsize, lossy_head};
use crate::workspace::Workspace;
use process::{ProcessTree, read_status};

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

/// Runs commands inside its workspace (`Default`: the current directory).
#[derive(Debug, Clone, Default)]
pub struct BashTool {
    workspace: Workspace,
}

impl BashTool {
    /// A `bash` whose commands start in `workspace`.
    pub fn new(workspace: Workspace) -> Self {
        BashTool { workspace }
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
        // A dropped call drops this future, and with it the process tree
        // `run` owns: that kills it (see the module docs).
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
        run(&args.command, &cwd, timeout_ms).await
    }

    fn render(_args: &BashArgs, value: &BashValue) -> Vec<ContentBlock> {
        let (stdout, stdout_cut) = whole_lines(&value.stdout);
        let (stderr, stderr_cut) = whole_lines(&value.stderr);
        let mut output = stdout.to_owned();
        if !stderr.is_empty() {
            if !output.is_empty() && !output.ends_with('\n') {
                output.push('\n');
            }
            output.push_str("[stderr]\n");
            output.push_str(stderr);
        }
        if output.is_empty() {
            output.push_str("(no output)");
        }
        let mut markers = Vec::new();
        for (name, stream, cut) in [
            ("stdout", &value.stdout, stdout_cut),
            ("stderr", &value.stderr, stderr_cut),
        ] {
            if stream.truncated {
                let partial = if cut {
                    "; the line the cap split is left out"
                } else {
                    ""
                };
                markers.push(format!(
                    "[{name} truncated: only the first {MAX_STREAM_BYTES} bytes were kept{partial}]"
                ));
            }
        }
        if value.timed_out {
            markers.push(format!(
                "[timed out after {} ms; every process it started was killed]",
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

    fn present_result(args: &BashArgs, result: &ToolResult<BashMeta>) -> Option<ResultCard> {
        let meta = result.meta.as_ref().filter(|_| !result.is_error)?;
        let status = match (meta.exit_code, &meta.signal) {
            (Some(_), Some(_)) => return None,
            (Some(code), None) => Some(CardExitStatus::Code(code)),
            (None, Some(signal)) => Some(CardExitStatus::Signal(signal.clone())),
            (None, None) => None,
        };
        // The output as the model read it, without the last status line
        // when it is the one the card's status already says (from meta):
        // the other markers (truncation, timeout) stay, as text.
        let said = match &status {
            Some(CardExitStatus::Code(code)) => format!("[exit code: {code}]"),
            Some(CardExitStatus::Signal(signal)) => format!("[killed by signal: {signal}]"),
            None => String::new(),
        };
        let without_status = |text: &str| -> String {
            match text.strip_suffix(said.as_str()) {
                Some(rest) if !said.is_empty() && (rest.is_empty() || rest.ends_with('\n')) => {
                    rest.strip_suffix('\n').unwrap_or(rest).to_owned()
                }
                _ => text.to_owned(),
            }
        };
        let output = match result.content.as_slice() {
            [
                ContentBlock::Text { text: output },
                ContentBlock::Text { text: markers },
            ] if markers.starts_with('[') || markers.is_empty() => match without_status(markers) {
                rest if rest.is_empty() => output.clone(),
                rest => format!("{output}\n{rest}"),
            },
            // Rewritten content (spill's preview, a policy): the status
            // line, when it is still last, is dropped the same way.
            content => without_status(&toolprism::content_text(content)),
        };
        Some(ResultCard::Terminal(TerminalResult {
            title: Some(ellipsize(&args.command, 120)),
            output: Some(output),
            status,
        }))
    }
}

/// The text of a captured stream to show: when the cap cut it, up to its
/// last line end, so no line is shown cut in the middle (the value keeps
/// every byte captured). The flag says whether a partial line was left out.
fn whole_lines(stream: &Captured) -> (&str, bool) {
    if !stream.truncated || stream.text.ends_with('\n') {
        return (&stream.text, false);
    }
    match stream.text.rfind('\n') {
        Some(end) => (&stream.text[..=end], true),
        // One line longer than the cap: shown as kept, the marker says it.
        None => (&stream.text, false),
    }
}

/// Drains `stream` in a thread, keeping the first [`MAX_STREAM_BYTES`];
/// the receiver yields what was kept when the stream closes.
fn capture(mut stream: impl Read + Send + 'static) -> oneshot::Receiver<Captured> {
    let (tx, rx) = oneshot::channel();
    std::thread::spawn(move || {
        let mut kept = Vec::new();
        let mut truncated = false;
        let mut chunk = [0u8; 8192];
        loop {
            match stream.read(&mut chunk) {
                Ok(0) => break,
                Ok(n) => {
                    let room = MAX_STREAM_BYTES - kept.len();
                    truncated |= n > room;
                    kept.extend_from_slice(&chunk[..n.min(room)]);
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(_) => break,
            }
        }
        let _ = tx.send(Captured {
            text: lossy_head(&kept, truncated),
            truncated,
        });
    });
    rx
}

/// How long the output pipes may stay open after the tree was killed (a
/// process that escaped the tree may hold them).
const PIPE_GRACE: Duration = Duration::from_secs(2);

async fn run(
    command: &str,
    cwd: &std::path::Path,
    timeout_ms: u64,
) -> Result<BashValue, ToolError> {
    let started = ProcessTree::spawn(command, cwd).map_err(|e| {
        ToolError::new(format!("could not start bash: {e}")).with_code("SPAWN_FAILED")
    })?;
    // Owned by this future: dropped (and the tree killed) if the call is.
    let mut tree = started.tree;
    let stdout = capture(started.stdout);
    let stderr = capture(started.stderr);
    let (status_tx, mut status_rx) = oneshot::channel();
    let status_pipe = started.status;
    std::thread::spawn(move || {
        let _ = status_tx.send(read_status(status_pipe));
    });
    let limit = Duration::from_millis(timeout_ms);
    let (status, timed_out) = match tokio::time::timeout(limit, &mut status_rx).await {
        Ok(status) => (status.ok().flatten(), false),
        Err(_) => {
            tree.kill_all();
            (status_rx.await.ok().flatten(), true)
        }
    };
    // Whatever the command left running goes too, so the pipes close.
    tree.kill_all();
    let status = status.ok_or_else(|| {
        ToolError::new("the command's supervisor ended without reporting how the command ended (was it killed from outside?)")
    })?;
    let empty = || Captured {
        text: String::new(),
        truncated: false,
    };
    let stdout = tokio::time::timeout(PIPE_GRACE, stdout).await;
    let stderr = tokio::time::timeout(PIPE_GRACE, stderr).await;
    Ok(BashValue {
        exit_code: status.code(),
        signal: status.signal().map(signal_name),
        timed_out,
        timeout_ms,
        stdout: stdout.ok().and_then(Result::ok).unwrap_or_else(empty),
        stderr: stderr.ok().and_then(Result::ok).unwrap_or_else(empty),
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
mod tests;
