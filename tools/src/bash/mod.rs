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
//! ## The sandbox
//!
//! Every command runs under the [`SandboxPolicy`] of the tool's
//! [`Workspace`] (`workspace-write` with the network off by default),
//! enforced by the kernel in the command's own process before `bash` is
//! executed, and inherited by everything it starts: see
//! [`toolprism_sandbox`] for what is enforced on which kernel. The command
//! starts from a chosen environment ([`toolprism_sandbox::BASE_ENV`], `LC_*`
//! and the names the policy passes), never the server's whole one, and in
//! its working directory opened beneath the root's descriptor.
//!
//! - Where the kernel cannot enforce the policy, nothing runs: the call is
//!   `SANDBOX_UNAVAILABLE`, with the reason.
//! - A result that looks like the sandbox stopped the command (a refused
//!   write or socket, death by `SIGSYS`) gets a `[sandbox: …]` marker that
//!   tells the model so and not to work around it.
//! - The value, meta and the terminal card carry the mode and whether the
//!   network was on, so the card (live or replayed) shows them.
//! - [`EscalatingBashTool`] (from [`BashTool::with_escalation`], for a
//!   registry that can ask a person) also takes `escalate`: one command run
//!   with a wider mode, after the user approved it with its justification;
//!   a denial is `NOT_APPROVED` and nothing runs. [`BashTool`] offers no
//!   such field.
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
use toolprism::card::{
    ExitStatus as CardExitStatus, ResultCard, TerminalCall, TerminalResult, TerminalSandbox,
};
use toolprism::{CallCard, ContentBlock, ToolContext, ToolError, ToolResult, tool};
use toolprism_sandbox::{
    Confinement, SANDBOX_UNAVAILABLE, SandboxMode, SandboxPolicy, environment, likely_denied,
};

use crate::text::{ellipsize, lossy_head};
use crate::workspace::{OpenFor, Want, Workspace};
use process::{Launch, ProcessTree, read_status};

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

/// Arguments of `bash` when the registry can ask a person
/// ([`EscalatingBashTool`]): [`BashArgs`] and an optional request for a
/// wider sandbox.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EscalatingBashArgs {
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
    /// Only after the sandbox stopped this command: ask the user to run
    /// this one command with more access. The user sees the command and
    /// the justification and decides; nothing runs if they refuse.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub escalate: Option<Escalation>,
}

impl EscalatingBashArgs {
    fn split(self) -> (BashArgs, Option<Escalation>) {
        (
            BashArgs {
                command: self.command,
                description: self.description,
                cwd: self.cwd,
                timeout_ms: self.timeout_ms,
            },
            self.escalate,
        )
    }
}

/// A request to run one command with a wider sandbox.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Escalation {
    /// The mode to run this one command in.
    pub mode: WiderMode,
    /// Also turn the network on for this one command.
    #[serde(default)]
    pub network: bool,
    /// Why the command needs it, in one sentence for the user.
    #[schemars(length(min = 1, max = 500))]
    pub justification: String,
}

/// A mode a command may ask to be run in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum WiderMode {
    /// Write in the workspace and the temp directories too.
    WorkspaceWrite,
    /// Nothing confined.
    FullAccess,
}

impl From<WiderMode> for SandboxMode {
    fn from(mode: WiderMode) -> SandboxMode {
        match mode {
            WiderMode::WorkspaceWrite => SandboxMode::WorkspaceWrite,
            WiderMode::FullAccess => SandboxMode::FullAccess,
        }
    }
}

/// The sandbox a command ran in, as its value and meta carry it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ModeName {
    /// `read-only`.
    ReadOnly,
    /// `workspace-write`.
    WorkspaceWrite,
    /// `full-access`.
    FullAccess,
}

impl From<SandboxMode> for ModeName {
    fn from(mode: SandboxMode) -> ModeName {
        match mode {
            SandboxMode::ReadOnly => ModeName::ReadOnly,
            SandboxMode::WorkspaceWrite => ModeName::WorkspaceWrite,
            SandboxMode::FullAccess => ModeName::FullAccess,
        }
    }
}

impl ModeName {
    fn mode(self) -> SandboxMode {
        match self {
            ModeName::ReadOnly => SandboxMode::ReadOnly,
            ModeName::WorkspaceWrite => SandboxMode::WorkspaceWrite,
            ModeName::FullAccess => SandboxMode::FullAccess,
        }
    }
}

/// How the sandbox stood for one command.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SandboxState {
    /// The mode the command ran in.
    pub mode: ModeName,
    /// Whether the network was on.
    pub network: bool,
    /// Whether the result looks like the sandbox stopped something (a
    /// refused write or socket, death by `SIGSYS`): a heuristic.
    pub denied: bool,
    /// Whether this run was wider than the policy, by an approved request.
    pub widened: bool,
    /// Whether the model may ask for a wider run (`escalate`).
    pub can_escalate: bool,
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
    /// The sandbox the command ran in.
    pub sandbox: SandboxState,
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
    /// The sandbox it ran in (absent in logs written before it existed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<SandboxMeta>,
}

/// The sandbox in the meta of `bash`: what the terminal card shows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SandboxMeta {
    /// The mode.
    pub mode: ModeName,
    /// Whether the network was on.
    pub network: bool,
    /// Whether the sandbox likely stopped something.
    pub denied: bool,
}

/// Runs commands inside its workspace (`Default`: the current directory),
/// confined by the workspace's sandbox policy.
#[derive(Debug, Clone, Default)]
pub struct BashTool {
    workspace: Workspace,
}

impl BashTool {
    /// A `bash` whose commands start in `workspace`, under its sandbox.
    pub fn new(workspace: Workspace) -> Self {
        BashTool { workspace }
    }

    /// The same tool, offering `escalate` (one command with a wider
    /// sandbox, after a person approves it). Register it where the registry
    /// can ask a person (a client that elicits, the terminal's prompt);
    /// elsewhere every request is `NOT_APPROVED`.
    pub fn with_escalation(self) -> EscalatingBashTool {
        EscalatingBashTool {
            workspace: self.workspace,
        }
    }
}

/// `bash` with `escalate`: see [`BashTool::with_escalation`].
#[derive(Debug, Clone)]
pub struct EscalatingBashTool {
    workspace: Workspace,
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
        execute(&self.workspace, args, None, false).await
    }

    fn render(_args: &BashArgs, value: &BashValue) -> Vec<ContentBlock> {
        render(value)
    }

    fn presentation_meta(_args: &BashArgs, value: &BashValue) -> BashMeta {
        meta(value)
    }

    fn present_call(args: &BashArgs) -> CallCard {
        call_card(
            &args.command,
            args.description.as_deref(),
            args.cwd.as_deref(),
            None,
        )
    }

    fn present_result(args: &BashArgs, result: &ToolResult<BashMeta>) -> Option<ResultCard> {
        result_card(&args.command, result)
    }
}

/// Run a shell command with `bash -c` in the workspace (or `cwd` inside it).
/// Output is captured (16 KiB per stream); the command is killed after
/// `timeoutMs` (default 10 s). The result ends with the exit code or the
/// signal. Stdin is closed; do not start interactive programs. Commands run
/// in a sandbox; when it stops one, the result says so, and `escalate` asks
/// the user to run that one command with more access.
#[tool(
    name = "bash",
    title = "Run a shell command",
    kind = execute,
    destructive,
    open_world,
    timeout_ms = 130000
)]
impl EscalatingBashTool {
    async fn execute(
        &self,
        args: EscalatingBashArgs,
        _cx: &ToolContext<'_>,
    ) -> Result<BashValue, ToolError> {
        // The pipeline asked the person first (`approval` below): reaching
        // here with `escalate` means they approved this one call.
        let (args, escalation) = args.split();
        execute(&self.workspace, args, escalation, true).await
    }

    fn approval(args: &EscalatingBashArgs) -> Option<String> {
        let escalation = args.escalate.as_ref()?;
        let mode = SandboxMode::from(escalation.mode);
        let network = if escalation.network {
            ", the network on"
        } else {
            ""
        };
        Some(format!(
            "Let the agent run `{}` with the sandbox widened to {mode}{network}? It says: {}",
            ellipsize(&args.command, 200),
            ellipsize(&escalation.justification, 300)
        ))
    }

    fn render(_args: &EscalatingBashArgs, value: &BashValue) -> Vec<ContentBlock> {
        render(value)
    }

    fn presentation_meta(_args: &EscalatingBashArgs, value: &BashValue) -> BashMeta {
        meta(value)
    }

    fn present_call(args: &EscalatingBashArgs) -> CallCard {
        call_card(
            &args.command,
            args.description.as_deref(),
            args.cwd.as_deref(),
            args.escalate.as_ref(),
        )
    }

    fn present_result(
        args: &EscalatingBashArgs,
        result: &ToolResult<BashMeta>,
    ) -> Option<ResultCard> {
        result_card(&args.command, result)
    }
}

/// One call of either tool: the policy (widened by an approved request),
/// the working directory opened beneath the root, the confinement prepared
/// (or `SANDBOX_UNAVAILABLE`), then the run.
async fn execute(
    workspace: &Workspace,
    args: BashArgs,
    escalation: Option<Escalation>,
    can_escalate: bool,
) -> Result<BashValue, ToolError> {
    if args.command.trim().is_empty() {
        return Err(ToolError::new("the command is empty").with_code("EMPTY_COMMAND"));
    }
    let cwd_arg = args.cwd.as_deref().unwrap_or(".");
    let (cwd, cwd_dir) = workspace
        .opened(cwd_arg, Want::Existing, |resolved| {
            workspace.open_resolved(resolved, OpenFor::Dir)
        })
        .map_err(|e| {
            if e.message().contains("Not a directory") {
                ToolError::new(format!(
                    "cwd \"{}\" is not a directory",
                    ellipsize(cwd_arg, 300)
                ))
                .with_code("NOT_A_DIRECTORY")
            } else {
                e
            }
        })?;
    let policy = match &escalation {
        Some(request) => workspace
            .sandbox()
            .widened(request.mode.into(), request.network),
        None => workspace.sandbox().clone(),
    };
    let confinement = Confinement::prepare(&policy, workspace.root())
        .map_err(|why| unavailable(&policy, &why))?;
    let timeout_ms = args
        .timeout_ms
        .unwrap_or(DEFAULT_TIMEOUT_MS)
        .clamp(1, MAX_TIMEOUT_MS);
    let launch = Launch {
        command: &args.command,
        cwd: cwd_dir.into(),
        env: environment(&policy, std::env::vars_os()),
        confinement,
    };
    let _ = cwd;
    let mut value = run(launch, timeout_ms, &policy).await?;
    value.sandbox.widened = policy.is_wider_than(workspace.sandbox());
    value.sandbox.can_escalate = can_escalate;
    Ok(value)
}

/// The error of a call that cannot run confined: nothing ran.
fn unavailable(policy: &SandboxPolicy, why: &toolprism_sandbox::Unavailable) -> ToolError {
    ToolError::new(format!(
        "bash cannot run here: the sandbox ({}) cannot be enforced on this machine: {why}. Nothing ran. \
         Do not retry; tell the user. The person running the server can give the kernel what it needs, \
         or choose to run commands unconfined (`--sandbox full-access`, or SandboxMode::FullAccess on the workspace)",
        policy.summary()
    ))
    .with_code(SANDBOX_UNAVAILABLE)
}

/// What the model reads of a command's value.
fn render(value: &BashValue) -> Vec<ContentBlock> {
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
    if value.sandbox.denied {
        markers.push(sandbox_marker(&value.sandbox));
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

/// The marker of a command the sandbox likely stopped.
fn sandbox_marker(state: &SandboxState) -> String {
    let mode = state.mode.mode();
    let network = if state.network {
        "the network is on"
    } else {
        "the network is off"
    };
    let ask = if state.can_escalate && mode != SandboxMode::FullAccess {
        " If the task truly needs it, call bash again with `escalate` ({\"mode\": \"workspace-write\" or \"full-access\", \"network\": true|false, \"justification\": \"…\"}): the user decides."
    } else {
        ""
    };
    format!(
        "[sandbox: the sandbox may have stopped this command ({mode} mode: {}; {network}); do not try to work around it.{ask}]",
        mode.writes()
    )
}

fn meta(value: &BashValue) -> BashMeta {
    BashMeta {
        exit_code: value.exit_code,
        signal: value.signal.clone(),
        timed_out: value.timed_out,
        sandbox: Some(SandboxMeta {
            mode: value.sandbox.mode,
            network: value.sandbox.network,
            denied: value.sandbox.denied,
        }),
    }
}

fn call_card(
    command: &str,
    description: Option<&str>,
    cwd: Option<&str>,
    escalation: Option<&Escalation>,
) -> CallCard {
    let description = match (description, escalation) {
        (d, None) => d.map(str::to_owned),
        (d, Some(e)) => {
            let asked = format!(
                "asks for {}{}: {}",
                SandboxMode::from(e.mode),
                if e.network { " with the network" } else { "" },
                e.justification
            );
            Some(match d {
                Some(d) => format!("{d} ({asked})"),
                None => asked,
            })
        }
    };
    let mut card = TerminalCall::new(command).with_cwd(cwd.unwrap_or("."));
    card.description = description;
    CallCard::Terminal(card)
}

/// The terminal result card: the status from meta, never parsed back out
/// of the text, and the output the model read without the status line the
/// card already shows.
fn result_card(command: &str, result: &ToolResult<BashMeta>) -> Option<ResultCard> {
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
    let mut card = TerminalResult::new(Some(ellipsize(command, 120)), Some(output), status);
    if let Some(sandbox) = &meta.sandbox {
        card = card.with_sandbox(TerminalSandbox::new(
            sandbox.mode.mode().as_str(),
            sandbox.network,
            sandbox.denied,
        ));
    }
    Some(ResultCard::Terminal(card))
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
    launch: Launch<'_>,
    timeout_ms: u64,
    policy: &SandboxPolicy,
) -> Result<BashValue, ToolError> {
    let started = ProcessTree::spawn(launch).map_err(|e| match Confinement::spawn_error(&e) {
        Some(why) => unavailable(policy, &why),
        None => ToolError::new(format!("could not start bash: {e}")).with_code("SPAWN_FAILED"),
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
    let stdout = tokio::time::timeout(PIPE_GRACE, stdout)
        .await
        .ok()
        .and_then(Result::ok)
        .unwrap_or_else(empty);
    let stderr = tokio::time::timeout(PIPE_GRACE, stderr)
        .await
        .ok()
        .and_then(Result::ok)
        .unwrap_or_else(empty);
    let denied = !timed_out
        && likely_denied(
            policy,
            status.code(),
            status.signal(),
            &stdout.text,
            &stderr.text,
        );
    Ok(BashValue {
        exit_code: status.code(),
        signal: status.signal().map(signal_name),
        timed_out,
        timeout_ms,
        stdout,
        stderr,
        sandbox: SandboxState {
            mode: policy.mode().into(),
            network: policy.network(),
            denied,
            widened: false,
            can_escalate: false,
        },
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
        libc::SIGSYS => "SIGSYS",
        _ => return format!("SIG{signal}"),
    };
    name.to_owned()
}

#[cfg(test)]
mod tests;
