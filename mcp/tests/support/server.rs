//! The MCP server the `mcp*` tests run as a real process: a few tools that
//! exercise every branch of the mapping, served over stdio (default) or
//! Streamable HTTP.
//!
//! ```text
//! cargo run -p toolprism --features mcp --example mcp_test_server -- \
//!     [--http ADDR] [--stateless] [--log PATH] [--server-log PATH] [--cards on-request|always|never]
//!     [--token-env NAME | --verifier] [--authorization-server URL] [--insecure-no-auth]
//!     [--canary PATH] [--max-requests N] [--max-sessions N] [--max-calls-per-session N]
//!     [--idle-timeout-ms MS]
//! ```
//!
//! `--log` gives the registry a session log of its own;
//! `--server-log` gives one to the server instead
//! ([`McpServer::with_log`]); `--cards` is [`McpServer::with_cards`].
//!
//! With `--http`, the bound address is announced on stderr as
//! `listening on http://ADDR/mcp` (pass port 0 to get a free port), once
//! [`McpServer::check_address`] has let it through; else the refusal is
//! printed and the server exits with status 1.
//!
//! Authentication (W3): `--token-env NAME` requires the [`StaticToken`] in
//! that variable (its caller: `token`, with the scope `canary`); `--verifier` requires tokens of [`Expiring`], a verifier
//! of this fixture's own; `--authorization-server` names one in the
//! metadata; `--insecure-no-auth` is
//! [`McpServer::allow_unauthenticated_network`]. `--canary PATH` adds the
//! tool `canary`, which appends its caller's subject to PATH, and a policy
//! that lets only callers holding the scope `canary` run it. The limits are
//! the [`McpServer`] settings of the same names.
//!
//! | tool | value | what it exercises |
//! |---|---|---|
//! | `echo` | `{text, len}` | a success with meta and a presenter's card |
//! | `fail` | — | `execute` returning an error with its own code |
//! | `slow` | `{slept_ms}` | a long call that a cancellation ends |
//! | `numbers` | a bare array | an output schema whose root is not an object |
//! | `word` | a bare string | the same, for a string |
//! | `picture` | `{width, height}` | an image content block |
//! | `whoami` | `{pid}` | which process served a call |
//! | `steps` | `{steps}` | progress reports (`step i of n`), 5 ms apart |
//! | `ask_model` | `{model, text}` | sampling (`ToolContext::sample`); a client error is the tool's error, with its code |
//! | `ask_model_blocking` | the same | sampling from a blocking tool, on another thread |
//! | `ask_user` | `{action, content?}` | elicitation, form mode, with defaults and an enum |
//! | `chatty` | `{logged}` | one log message at each of debug, info, warning and error |
//! | `guarded` | `{ran}` | approval (`#[tool(approval = …)]`) |
//! | `media` | `{blocks}` | content blocks of every kind: text, image, audio, embedded text and blob, resource link |
//! | `canary` (with `--canary`) | `{by}` | a run anyone can see: a line in a file |
//! | `long` (with `--tasks`) | `{steps}` | a long call, `task = "optional"`: `steps` steps of `step_ms`, progress after each |
//! | `long_required` (with `--tasks`) | `{steps}` | the same, `task = "required"` |
//! | `confirm` (with `--tasks`) | `{action}` | elicitation from a task, `task = "optional"` |
//!
//! `--tasks PATH` adds the three task tools; `long` and `long_required`
//! append a line to PATH when their call's future is dropped:
//! `<call id> cancelled` if the call's cancellation token had fired by
//! then, else `<call id> done`. `--task-ttl-ms N` is
//! [`McpServer::with_task_ttl`].
//!
//! `--client-timeout-ms N` is [`McpServer::with_client_timeout`];
//! `--approval-timeout-ms N` the registry's approval timeout.
//!
//! `--then-write N`: once serving over stdio has ended, write `N` bytes to
//! stdout (exit status 3 if that fails).
//!
//! `--store URL` is [`McpServer::with_store`] with [`Store::redis`] (a
//! replica sharing its tasks, input requests and sessions); `--lease-ms N`
//! is [`McpServer::with_lease`].

use std::io::Write;
use std::path::PathBuf;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolprism::card::ResultCard;
use toolprism::client::{ClientError, ElicitRequest, ElicitResponse, LogLevel, SampleRequest};
use toolprism::log::SessionLog;
use toolprism::mcp::{
    Authenticator, BearerAuth, Cards, McpServer, Refusal, StaticToken, Store,
    StreamableHttpServerConfig,
};
use toolprism::{
    Caller, ContentBlock, PreDecision, PreExecute, Registry, ToolContext, ToolError, ToolResult,
    tool,
};
use toolprism::{EmbeddedResource, ResourceLink};

/// Arguments of `echo`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct EchoArgs {
    /// The text to echo.
    #[schemars(length(max = 1000))]
    text: String,
}

/// The value of `echo`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
struct Echoed {
    text: String,
    len: u32,
}

/// The meta of `echo`.
#[derive(Debug, Serialize, Deserialize)]
struct EchoMeta {
    chars: usize,
}

struct EchoTool;

/// Echo the text back.
#[tool(name = "echo", title = "Echo", read_only, idempotent)]
impl EchoTool {
    async fn execute(&self, args: EchoArgs, _cx: &ToolContext<'_>) -> Result<Echoed, ToolError> {
        Ok(Echoed {
            len: args.text.len() as u32,
            text: args.text,
        })
    }

    fn render(_args: &EchoArgs, value: &Echoed) -> Vec<ContentBlock> {
        vec![ContentBlock::text(format!("echo: {}", value.text))]
    }

    fn presentation_meta(_args: &EchoArgs, value: &Echoed) -> EchoMeta {
        EchoMeta {
            chars: value.text.chars().count(),
        }
    }

    fn present_result(_args: &EchoArgs, result: &ToolResult<EchoMeta>) -> ResultCard {
        let chars = result.meta.as_ref().map_or(0, |m| m.chars);
        ResultCard::generic(
            Some(format!("Echoed {chars} chars")),
            result.content.clone(),
        )
    }
}

/// Arguments of `fail`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
struct FailArgs {
    /// What to fail with.
    message: String,
}

struct FailTool;

/// Always fails, with code `NOPE`.
#[tool(name = "fail")]
impl FailTool {
    async fn execute(&self, args: FailArgs, _cx: &ToolContext<'_>) -> Result<Echoed, ToolError> {
        Err(ToolError::new(args.message).with_code("NOPE"))
    }

    fn render(_args: &FailArgs, value: &Echoed) -> Vec<ContentBlock> {
        vec![ContentBlock::text(&value.text)]
    }
}

/// Arguments of `twice`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
struct TwiceArgs {
    /// The text to echo twice.
    text: String,
}

/// The value of `twice`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
struct Echoes {
    echoes: Vec<Echoed>,
}

struct TwiceTool;

/// Echoes the text twice through `echo`, as two nested calls.
#[tool(name = "twice", read_only)]
impl TwiceTool {
    async fn execute(&self, args: TwiceArgs, cx: &ToolContext<'_>) -> Result<Echoes, ToolError> {
        let mut echoes = Vec::new();
        for _ in 0..2 {
            let text = serde_json::json!({"text": args.text});
            echoes.push(cx.call_typed::<EchoTool>(text).await?);
        }
        Ok(Echoes { echoes })
    }

    fn render(_args: &TwiceArgs, value: &Echoes) -> Vec<ContentBlock> {
        vec![ContentBlock::text(format!("{} echoes", value.echoes.len()))]
    }
}

/// Arguments of `slow`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
struct SlowArgs {
    /// How long to work, in milliseconds.
    ms: u64,
}

/// The value of `slow`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
struct Slept {
    slept_ms: u64,
}

struct SlowTool;

/// Works for `ms` milliseconds in steps of 10 ms; a cancellation ends it.
#[tool(name = "slow", kind = execute, read_only)]
impl SlowTool {
    async fn execute(&self, args: SlowArgs, _cx: &ToolContext<'_>) -> Result<Slept, ToolError> {
        let mut slept = 0;
        while slept < args.ms {
            let step = (args.ms - slept).min(10);
            tokio::time::sleep(Duration::from_millis(step)).await;
            slept += step;
        }
        Ok(Slept { slept_ms: slept })
    }

    fn render(_args: &SlowArgs, value: &Slept) -> Vec<ContentBlock> {
        vec![ContentBlock::text(format!("slept {} ms", value.slept_ms))]
    }
}

/// Arguments of `numbers`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
struct NumbersArgs {
    /// How many numbers, at most 100.
    #[schemars(range(max = 100))]
    count: u32,
}

struct NumbersTool;

/// The numbers 1 to `count`, as a bare array.
#[tool(name = "numbers", read_only)]
impl NumbersTool {
    async fn execute(
        &self,
        args: NumbersArgs,
        _cx: &ToolContext<'_>,
    ) -> Result<Vec<u32>, ToolError> {
        Ok((1..=args.count).collect())
    }

    // A projection takes `&Value`, here `&Vec<u32>`.
    #[allow(clippy::ptr_arg)]
    fn render(_args: &NumbersArgs, value: &Vec<u32>) -> Vec<ContentBlock> {
        vec![ContentBlock::text(format!("{} numbers", value.len()))]
    }
}

/// Arguments of `word` (none).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
struct NoArgs {}

struct WordTool;

/// A bare string.
#[tool(name = "word", read_only)]
impl WordTool {
    async fn execute(&self, _args: NoArgs, _cx: &ToolContext<'_>) -> Result<String, ToolError> {
        Ok("prism".to_owned())
    }

    fn render(_args: &NoArgs, value: &String) -> Vec<ContentBlock> {
        vec![ContentBlock::text(format!("the word is {value}"))]
    }
}

/// The value of `picture`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
struct Picture {
    width: u32,
    height: u32,
}

struct PictureTool;

/// A 1×1 PNG, as an image block after a caption.
#[tool(name = "picture", read_only)]
impl PictureTool {
    async fn execute(&self, _args: NoArgs, _cx: &ToolContext<'_>) -> Result<Picture, ToolError> {
        Ok(Picture {
            width: 1,
            height: 1,
        })
    }

    fn render(_args: &NoArgs, value: &Picture) -> Vec<ContentBlock> {
        const PIXEL: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
        vec![
            ContentBlock::text(format!("a {}x{} picture", value.width, value.height)),
            ContentBlock::image("image/png", PIXEL),
        ]
    }
}

/// The value of `whoami`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
struct Process {
    pid: u32,
}

struct WhoamiTool;

/// The id of the server process that answered.
#[tool(name = "whoami", read_only)]
impl WhoamiTool {
    async fn execute(&self, _args: NoArgs, _cx: &ToolContext<'_>) -> Result<Process, ToolError> {
        Ok(Process {
            pid: std::process::id(),
        })
    }

    fn render(_args: &NoArgs, value: &Process) -> Vec<ContentBlock> {
        vec![ContentBlock::text(format!("pid {}", value.pid))]
    }
}

/// Arguments of `steps`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
struct StepsArgs {
    /// How many steps, at most 50.
    #[schemars(range(max = 50))]
    count: u64,
}

/// The value of `steps`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
struct Stepped {
    steps: u64,
}

struct StepsTool;

/// Takes `count` steps of 5 ms, reporting progress after each.
#[tool(name = "steps", read_only)]
impl StepsTool {
    async fn execute(&self, args: StepsArgs, cx: &ToolContext<'_>) -> Result<Stepped, ToolError> {
        for step in 1..=args.count {
            tokio::time::sleep(Duration::from_millis(5)).await;
            let message = format!("step {step} of {}", args.count);
            cx.report_progress(step, Some(args.count), Some(&message));
        }
        Ok(Stepped { steps: args.count })
    }

    fn render(_args: &StepsArgs, value: &Stepped) -> Vec<ContentBlock> {
        vec![ContentBlock::text(format!("{} steps", value.steps))]
    }
}

/// Arguments of `ask_model` and `ask_model_blocking`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
struct PromptArgs {
    /// What to ask the client's model.
    prompt: String,
}

/// The value of `ask_model`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
struct Answer {
    model: String,
    text: String,
}

/// A client's failure as the tool's error, with its code.
fn client_failed(e: ClientError) -> ToolError {
    ToolError::new(e.to_string()).with_code(e.code())
}

fn answer_of(response: toolprism::client::SampleResponse) -> Answer {
    Answer {
        model: response.model,
        text: response.content.as_text().unwrap_or_default().to_owned(),
    }
}

struct AskModelTool;

/// Asks the client's model, through MCP sampling.
#[tool(name = "ask_model", read_only)]
impl AskModelTool {
    async fn execute(&self, args: PromptArgs, cx: &ToolContext<'_>) -> Result<Answer, ToolError> {
        let response = cx
            .sample(SampleRequest::text(args.prompt, 100))
            .await
            .map_err(client_failed)?;
        Ok(answer_of(response))
    }

    fn render(_args: &PromptArgs, value: &Answer) -> Vec<ContentBlock> {
        vec![ContentBlock::text(format!(
            "{} says: {}",
            value.model, value.text
        ))]
    }
}

struct AskModelBlockingTool;

/// Asks the client's model from a blocking tool (another thread).
#[tool(name = "ask_model_blocking", read_only, blocking)]
impl AskModelBlockingTool {
    fn execute(&self, args: PromptArgs, cx: &ToolContext<'_>) -> Result<Answer, ToolError> {
        let asked = cx.sample(SampleRequest::text(args.prompt, 100));
        let response = tokio::runtime::Handle::current()
            .block_on(asked)
            .map_err(client_failed)?;
        Ok(answer_of(response))
    }

    fn render(_args: &PromptArgs, value: &Answer) -> Vec<ContentBlock> {
        vec![ContentBlock::text(format!(
            "{} says: {}",
            value.model, value.text
        ))]
    }
}

/// Arguments of `ask_user`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
struct QuestionArgs {
    /// The form's message.
    message: String,
}

/// The value of `ask_user`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
struct Filled {
    action: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    content: Option<serde_json::Map<String, serde_json::Value>>,
}

struct AskUserTool;

/// Asks the user to fill a form, through MCP elicitation.
#[tool(name = "ask_user", read_only)]
impl AskUserTool {
    async fn execute(&self, args: QuestionArgs, cx: &ToolContext<'_>) -> Result<Filled, ToolError> {
        let form = ElicitRequest::new(
            args.message,
            serde_json::json!({
                "type": "object",
                "properties": {
                    "name": {"type": "string", "description": "Your name", "default": "Ada"},
                    "color": {"type": "string", "enum": ["red", "green", "blue"], "default": "green"},
                    "sure": {"type": "boolean", "default": true}
                },
                "required": ["name"]
            }),
        );
        let filled = match cx.elicit(form).await.map_err(client_failed)? {
            ElicitResponse::Accept(content) => Filled {
                action: "accept".into(),
                content: content.as_object().cloned(),
            },
            ElicitResponse::Decline => Filled {
                action: "decline".into(),
                content: None,
            },
            ElicitResponse::Cancel => Filled {
                action: "cancel".into(),
                content: None,
            },
        };
        Ok(filled)
    }

    fn render(_args: &QuestionArgs, value: &Filled) -> Vec<ContentBlock> {
        vec![ContentBlock::text(format!(
            "the user chose to {}",
            value.action
        ))]
    }
}

/// Arguments of `long` and `long_required`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
struct LongArgs {
    /// How many steps.
    steps: u64,
    /// How long each step takes, in milliseconds.
    step_ms: u64,
}

/// The value of `long` and `long_required`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
struct Worked {
    steps: u64,
}

/// Writes, when dropped, whether the call's cancellation token fired.
struct Mark {
    path: PathBuf,
    call: String,
    token: tokio_util::sync::CancellationToken,
}

impl Drop for Mark {
    fn drop(&mut self) {
        let how = if self.token.is_cancelled() {
            "cancelled"
        } else {
            "done"
        };
        if let Ok(mut file) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.path)
        {
            let _ = writeln!(file, "{} {how}", self.call);
        }
    }
}

async fn work(marks: &std::path::Path, args: LongArgs, cx: &ToolContext<'_>) -> Worked {
    let _mark = Mark {
        path: marks.to_owned(),
        call: cx.call_id().to_owned(),
        token: cx.cancellation().clone(),
    };
    for step in 1..=args.steps {
        tokio::time::sleep(Duration::from_millis(args.step_ms)).await;
        let message = format!("step {step} of {}", args.steps);
        cx.report_progress(step, Some(args.steps), Some(&message));
    }
    Worked { steps: args.steps }
}

struct LongTool {
    marks: PathBuf,
}

/// Works `steps` steps of `step_ms` milliseconds, reporting progress.
#[tool(name = "long", kind = execute, read_only, task = "optional", timeout_ms = 600000)]
impl LongTool {
    async fn execute(&self, args: LongArgs, cx: &ToolContext<'_>) -> Result<Worked, ToolError> {
        Ok(work(&self.marks, args, cx).await)
    }

    fn render(_args: &LongArgs, value: &Worked) -> Vec<ContentBlock> {
        vec![ContentBlock::text(format!("worked {} steps", value.steps))]
    }

    fn presentation_meta(_args: &LongArgs, value: &Worked) -> Stepped {
        Stepped { steps: value.steps }
    }
}

struct LongRequiredTool {
    marks: PathBuf,
}

/// `long`, but only ever as a task.
#[tool(name = "long_required", kind = execute, read_only, task = "required", timeout_ms = 600000)]
impl LongRequiredTool {
    async fn execute(&self, args: LongArgs, cx: &ToolContext<'_>) -> Result<Worked, ToolError> {
        Ok(work(&self.marks, args, cx).await)
    }

    fn render(_args: &LongArgs, value: &Worked) -> Vec<ContentBlock> {
        vec![ContentBlock::text(format!("worked {} steps", value.steps))]
    }
}

/// The value of `confirm`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
struct Confirmed {
    action: String,
}

struct ConfirmTool;

/// Asks the user to confirm, through elicitation; a task when it can be.
#[tool(name = "confirm", read_only, task = "optional")]
impl ConfirmTool {
    async fn execute(&self, _args: NoArgs, cx: &ToolContext<'_>) -> Result<Confirmed, ToolError> {
        let form = ElicitRequest::new(
            "Go on?",
            serde_json::json!({
                "type": "object",
                "properties": {"sure": {"type": "boolean"}},
                "required": ["sure"]
            }),
        );
        let action = match cx.elicit(form).await.map_err(client_failed)? {
            ElicitResponse::Accept(content) => format!("accept {content}"),
            ElicitResponse::Decline => "decline".into(),
            ElicitResponse::Cancel => "cancel".into(),
        };
        Ok(Confirmed { action })
    }

    fn render(_args: &NoArgs, value: &Confirmed) -> Vec<ContentBlock> {
        vec![ContentBlock::text(format!("confirmed: {}", value.action))]
    }
}

/// The value of `chatty`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
struct Logged {
    logged: u32,
}

struct ChattyTool;

/// Logs one message at each of debug, info, warning and error.
#[tool(name = "chatty", read_only)]
impl ChattyTool {
    async fn execute(&self, _args: NoArgs, cx: &ToolContext<'_>) -> Result<Logged, ToolError> {
        for level in [
            LogLevel::Debug,
            LogLevel::Info,
            LogLevel::Warning,
            LogLevel::Error,
        ] {
            cx.log(level, serde_json::json!({"said": level.to_string()}));
        }
        Ok(Logged { logged: 4 })
    }

    fn render(_args: &NoArgs, value: &Logged) -> Vec<ContentBlock> {
        vec![ContentBlock::text(format!(
            "logged {} messages",
            value.logged
        ))]
    }
}

/// The value of `guarded`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
struct Guarded {
    ran: bool,
}

struct GuardedTool;

/// Runs only when the user approves.
#[tool(name = "guarded", approval = "Let the guarded tool run?")]
impl GuardedTool {
    async fn execute(&self, _args: NoArgs, _cx: &ToolContext<'_>) -> Result<Guarded, ToolError> {
        Ok(Guarded { ran: true })
    }

    fn render(_args: &NoArgs, _value: &Guarded) -> Vec<ContentBlock> {
        vec![ContentBlock::text("it ran")]
    }
}

/// The value of `media`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
struct Blocks {
    blocks: u32,
}

struct MediaTool;

/// One content block of every kind.
#[tool(name = "media", read_only)]
impl MediaTool {
    async fn execute(&self, _args: NoArgs, _cx: &ToolContext<'_>) -> Result<Blocks, ToolError> {
        Ok(Blocks { blocks: 6 })
    }

    fn render(_args: &NoArgs, _value: &Blocks) -> Vec<ContentBlock> {
        const PIXEL: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
        const WAV: &str = "UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQAAAAA=";
        vec![
            ContentBlock::text("every kind"),
            ContentBlock::image("image/png", PIXEL),
            ContentBlock::audio("audio/wav", WAV),
            ContentBlock::embedded_text("test://notes", "text/markdown", "# Notes"),
            ContentBlock::Resource {
                resource: EmbeddedResource::blob("test://pixel", PIXEL).with_mime_type("image/png"),
            },
            ContentBlock::ResourceLink(
                ResourceLink::new("test://report", "report")
                    .with_title("The report")
                    .with_description("A linked resource")
                    .with_mime_type("text/plain")
                    .with_size(42),
            ),
        ]
    }
}

/// The value of `canary`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
struct Ran {
    by: String,
}

struct CanaryTool {
    path: PathBuf,
}

/// Appends the caller's subject (`-` for none) to the canary file.
#[tool(name = "canary", kind = edit)]
impl CanaryTool {
    async fn execute(&self, _args: NoArgs, cx: &ToolContext<'_>) -> Result<Ran, ToolError> {
        let by = cx.caller().map_or("-", Caller::subject).to_owned();
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.path)
            .map_err(|e| ToolError::new(e.to_string()))?;
        writeln!(file, "{by}").map_err(|e| ToolError::new(e.to_string()))?;
        Ok(Ran { by })
    }

    fn render(_args: &NoArgs, value: &Ran) -> Vec<ContentBlock> {
        vec![ContentBlock::text(format!("ran for {}", value.by))]
    }
}

/// Lets a verified caller run `canary` only when it holds the scope
/// `canary`.
fn canary_needs_its_scope(call: &PreExecute<'_>) -> PreDecision {
    match call.caller {
        Some(caller) if call.tool == "canary" && !caller.has_scope("canary") => {
            PreDecision::deny(format!("{} may not run canary", caller.subject()))
        }
        _ => PreDecision::Allow,
    }
}

/// Tokens `<subject>.<expiry, Unix seconds>.<scopes joined by +>`, checked
/// after a millisecond's pause, as a call to an introspection endpoint
/// would take: a verifier of the fixture's own, unsigned.
struct Expiring;

impl Authenticator for Expiring {
    async fn verify(&self, token: &str) -> Result<Caller, Refusal> {
        tokio::time::sleep(Duration::from_millis(1)).await;
        let mut fields = token.splitn(3, '.');
        let (Some(subject), Some(expiry)) = (fields.next(), fields.next()) else {
            return Err(Refusal::invalid_token("malformed token"));
        };
        let expiry: u64 = expiry
            .parse()
            .map_err(|_| Refusal::invalid_token("malformed token"))?;
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        if expiry <= now {
            return Err(Refusal::invalid_token("the token expired"));
        }
        let scopes = fields.next().unwrap_or("");
        Ok(Caller::new(subject).with_scopes(scopes.split('+').filter(|s| !s.is_empty())))
    }
}

struct Options {
    http: Option<String>,
    stateless: bool,
    log: Option<String>,
    server_log: Option<String>,
    cards: Cards,
    client_timeout: Option<Duration>,
    approval_timeout: Option<Duration>,
    token_env: Option<String>,
    verifier: bool,
    authorization_server: Option<String>,
    insecure_no_auth: bool,
    canary: Option<PathBuf>,
    tasks: Option<PathBuf>,
    task_ttl: Option<Duration>,
    max_requests: Option<usize>,
    max_sessions: Option<usize>,
    max_calls_per_session: Option<usize>,
    idle_timeout_ms: Option<u64>,
    store: Option<String>,
    lease: Option<Duration>,
    then_write: Option<usize>,
}

fn millis(value: Option<String>, flag: &str) -> Result<Duration, String> {
    value
        .and_then(|v| v.parse().ok())
        .map(Duration::from_millis)
        .ok_or_else(|| format!("{flag} needs a number of milliseconds"))
}

fn parse_args() -> Result<Options, String> {
    let mut options = Options {
        http: None,
        stateless: false,
        log: None,
        server_log: None,
        cards: Cards::default(),
        client_timeout: None,
        approval_timeout: None,
        token_env: None,
        verifier: false,
        authorization_server: None,
        insecure_no_auth: false,
        canary: None,
        tasks: None,
        task_ttl: None,
        then_write: None,
        max_requests: None,
        max_sessions: None,
        max_calls_per_session: None,
        idle_timeout_ms: None,
        store: None,
        lease: None,
    };
    let mut args = std::env::args().skip(1);
    let number = |args: &mut std::iter::Skip<std::env::Args>, flag: &str| -> Result<u64, String> {
        args.next()
            .and_then(|n| n.parse().ok())
            .ok_or(format!("{flag} needs a number"))
    };
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--token-env" => {
                options.token_env = Some(args.next().ok_or("--token-env needs a name")?);
            }
            "--verifier" => options.verifier = true,
            "--authorization-server" => {
                options.authorization_server =
                    Some(args.next().ok_or("--authorization-server needs a URL")?);
            }
            "--insecure-no-auth" => options.insecure_no_auth = true,
            "--canary" => {
                options.canary = Some(args.next().ok_or("--canary needs a path")?.into());
            }
            "--tasks" => {
                options.tasks = Some(args.next().ok_or("--tasks needs a path")?.into());
            }
            "--task-ttl-ms" => {
                options.task_ttl = Some(millis(args.next(), "--task-ttl-ms")?);
            }
            "--max-requests" => {
                options.max_requests = Some(number(&mut args, "--max-requests")? as usize);
            }
            "--max-sessions" => {
                options.max_sessions = Some(number(&mut args, "--max-sessions")? as usize);
            }
            "--max-calls-per-session" => {
                options.max_calls_per_session =
                    Some(number(&mut args, "--max-calls-per-session")? as usize);
            }
            "--idle-timeout-ms" => {
                options.idle_timeout_ms = Some(number(&mut args, "--idle-timeout-ms")?);
            }
            "--store" => options.store = Some(args.next().ok_or("--store needs a URL")?),
            "--lease-ms" => options.lease = Some(millis(args.next(), "--lease-ms")?),
            "--http" => options.http = Some(args.next().ok_or("--http needs an address")?),
            "--log" => options.log = Some(args.next().ok_or("--log needs a path")?),
            "--server-log" => {
                options.server_log = Some(args.next().ok_or("--server-log needs a path")?);
            }
            "--cards" => {
                options.cards = match args.next().as_deref() {
                    Some("on-request") => Cards::OnRequest,
                    Some("always") => Cards::Always,
                    Some("never") => Cards::Never,
                    _ => return Err("--cards needs on-request, always or never".into()),
                }
            }
            "--stateless" => options.stateless = true,
            "--then-write" => {
                options.then_write = Some(number(&mut args, "--then-write")? as usize)
            }
            "--client-timeout-ms" => {
                options.client_timeout = Some(millis(args.next(), "--client-timeout-ms")?);
            }
            "--approval-timeout-ms" => {
                options.approval_timeout = Some(millis(args.next(), "--approval-timeout-ms")?);
            }
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    Ok(options)
}

fn main() -> std::process::ExitCode {
    let options = match parse_args() {
        Ok(options) => options,
        Err(e) => {
            eprintln!("error: {e}");
            return std::process::ExitCode::from(2);
        }
    };
    let mut builder = Registry::builder()
        .tool(EchoTool)
        .tool(FailTool)
        .tool(SlowTool)
        .tool(NumbersTool)
        .tool(WordTool)
        .tool(PictureTool)
        .tool(WhoamiTool)
        .tool(StepsTool)
        .tool(TwiceTool)
        .tool(AskModelTool)
        .tool(AskModelBlockingTool)
        .tool(AskUserTool)
        .tool(ChattyTool)
        .tool(GuardedTool)
        .tool(MediaTool);
    if let Some(timeout) = options.approval_timeout {
        builder = builder.approval_timeout(timeout);
    }
    if let Some(path) = &options.canary {
        builder = builder
            .tool(CanaryTool { path: path.clone() })
            .pre_execute(canary_needs_its_scope);
    }
    if let Some(marks) = &options.tasks {
        builder = builder
            .tool(LongTool {
                marks: marks.clone(),
            })
            .tool(LongRequiredTool {
                marks: marks.clone(),
            })
            .tool(ConfirmTool);
    }
    if let Some(path) = &options.log {
        match SessionLog::create(path) {
            Ok(log) => builder = builder.log(log),
            Err(e) => {
                eprintln!("error: cannot open the session log {path}: {e}");
                return std::process::ExitCode::FAILURE;
            }
        }
    }
    let registry = match builder.build() {
        Ok(registry) => registry,
        Err(e) => {
            eprintln!("error: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let mut server = McpServer::new(registry)
        .with_server_info("toolprism-test", "0.0.0")
        .with_cards(options.cards);
    if let Some(timeout) = options.client_timeout {
        server = server.with_client_timeout(timeout);
    }
    if let Some(ttl) = options.task_ttl {
        server = server.with_task_ttl(ttl);
    }
    if let Some(lease) = options.lease {
        server = server.with_lease(lease);
    }
    if let Some(url) = &options.store {
        match runtime.block_on(Store::redis(url)) {
            Ok(store) => server = server.with_store(store),
            Err(e) => {
                eprintln!("error: {e}");
                return std::process::ExitCode::FAILURE;
            }
        }
    }
    let auth = match (&options.token_env, options.verifier) {
        (Some(name), _) => match StaticToken::from_env(name) {
            Ok(token) => Some(BearerAuth::new(
                token.with_caller(Caller::new("token").with_scopes(["canary"])),
            )),
            Err(e) => {
                eprintln!("error: {e}");
                return std::process::ExitCode::FAILURE;
            }
        },
        (None, true) => Some(BearerAuth::new(Expiring)),
        (None, false) => None,
    };
    if let Some(mut auth) = auth {
        if let Some(url) = &options.authorization_server {
            auth = auth.with_authorization_servers([url.clone()]);
        }
        server = server.with_auth(auth);
    }
    if options.insecure_no_auth {
        server = server.allow_unauthenticated_network();
    }
    if let Some(n) = options.max_requests {
        server = server.with_max_requests(n);
    }
    if let Some(n) = options.max_sessions {
        server = server.with_max_sessions(n);
    }
    if let Some(n) = options.max_calls_per_session {
        server = server.with_max_calls_per_session(n);
    }
    if let Some(ms) = options.idle_timeout_ms {
        server = server.with_session_idle_timeout(Duration::from_millis(ms));
    }
    if let Some(path) = &options.server_log {
        match SessionLog::create(path) {
            Ok(log) => server = server.with_log(log),
            Err(e) => {
                eprintln!("error: cannot open the session log {path}: {e}");
                return std::process::ExitCode::FAILURE;
            }
        }
    }
    let result = runtime.block_on(async move {
        match &options.http {
            None => server.serve_stdio().await,
            Some(addr) => {
                let listener = tokio::net::TcpListener::bind(addr).await?;
                server.check_address(listener.local_addr()?)?;
                eprintln!("listening on http://{}/mcp", listener.local_addr()?);
                let config = StreamableHttpServerConfig::default()
                    .with_legacy_session_mode(!options.stateless);
                server.serve_http(listener, config).await
            }
        }
    });
    // Do not wait for a blocked stdin read on the way out.
    runtime.shutdown_background();
    if let (Ok(()), Some(bytes)) = (&result, options.then_write) {
        // Stdout as a program writes it after serving: blocking again, so a
        // full pipe waits for its reader instead of failing (`WouldBlock`).
        let written = std::io::stdout()
            .lock()
            .write_all(&vec![b'x'; bytes])
            .and_then(|()| std::io::stdout().flush());
        if let Err(e) = written {
            eprintln!("error: writing to stdout after serving: {e}");
            return std::process::ExitCode::from(3);
        }
    }
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
