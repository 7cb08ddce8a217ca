//! `run_code`: the tool that runs the model's program (P1–P5 in
//! `docs/contract.md`).
//!
//! Its arguments are the program and a few words describing it; its value
//! is what the program logged and returned. Each `tools.x(args)` of the
//! program is a call of this registry through
//! [`ToolContext::program`]: the whole pipeline, its meta computed, logged
//! with this call as its parent, and listed on this call's outcome, so
//! every nested call gets its own card under the program's, live and on
//! replay. The values a program reads stay in the sandbox: they are never
//! logged or spilled; only what it logs and returns reaches the model.

use std::fmt::Write as _;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio_util::sync::CancellationToken;
use toolprism_core::card::{CallCard, GenericCall, ResultCard};
use toolprism_core::{
    ContentBlock, NoMeta, ProgramCalls, ToolContext, ToolError, ToolKind, ToolResult,
};
use toolprism_macros::tool;

use crate::sandbox::{self, Host, HostError, HostFuture, Limits, RunError};

/// The arguments of `run_code`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunCodeArgs {
    /// The program: JavaScript, the body of an async function, so
    /// top-level `await` and `return` work. Call tools with
    /// `await tools.<name>(args)`; what it returns and logs with
    /// `console.log` is what you read back.
    pub code: String,
    /// A few words on what the program does, shown to the person watching.
    pub description: String,
}

/// The value of `run_code`: what the program logged and returned.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RunCodeValue {
    /// Every line the program logged (`console.log`, `info`, `warn`,
    /// `error`, `debug`), in order.
    pub logs: Vec<String>,
    /// What the program returned; absent when it returned nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
}

/// The most of a returned value's pretty JSON `render` shows; the rest is
/// cut with a note (the output ledger already bounds the whole).
pub const MAX_RENDERED_RESULT: usize = 64 * 1024;

/// The most of the logs an error message carries.
const MAX_LOGS_IN_ERROR: usize = 4 * 1024;

/// The tool. Registered by [`CodeMode`](crate::CodeMode), with the
/// registry's SDK as its description.
#[derive(Debug, Clone, Default)]
pub struct RunCode {
    limits: Limits,
}

impl RunCode {
    /// The tool with these limits for every run.
    pub fn new(limits: Limits) -> Self {
        RunCode { limits }
    }

    /// The limits of every run.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }
}

/// Runs a JavaScript program that calls the tools described in the SDK
/// below; what it logs and returns is the result.
#[tool(name = "run_code", kind = execute, crate = ::toolprism_core)]
impl RunCode {
    async fn execute(
        &self,
        args: RunCodeArgs,
        cx: &ToolContext<'_>,
    ) -> Result<RunCodeValue, ToolError> {
        let program = cx.program();
        let cancel = program.cancellation().clone();
        let host = Arc::new(Calls(program));
        #[cfg(feature = "typescript")]
        let code = crate::typescript::strip(&args.code).unwrap_or(args.code);
        #[cfg(not(feature = "typescript"))]
        let code = args.code;
        let outcome = sandbox::run(&code, &self.limits, host, cancel).await;
        match outcome.result {
            Ok(result) => Ok(RunCodeValue {
                logs: outcome.logs,
                result,
            }),
            Err(error) => Err(failure(&error, &outcome.logs)),
        }
    }

    fn render(_args: &RunCodeArgs, value: &RunCodeValue) -> Vec<ContentBlock> {
        let mut text = String::new();
        for line in &value.logs {
            text.push_str(line);
            text.push('\n');
        }
        match &value.result {
            None if value.logs.is_empty() => text.push_str("(the program returned nothing)"),
            None => {}
            Some(Value::String(s)) => text.push_str(s),
            Some(other) => text.push_str(&bounded_json(other)),
        }
        vec![ContentBlock::text(text.trim_end_matches('\n'))]
    }

    fn present_call(args: &RunCodeArgs) -> CallCard {
        CallCard::Generic(
            GenericCall::new(title(args))
                .with_kind(ToolKind::Execute)
                .with_content(vec![ContentBlock::text(&args.code)]),
        )
    }

    fn present_result(args: &RunCodeArgs, result: &ToolResult<NoMeta>) -> ResultCard {
        ResultCard::generic(Some(title(args)), result.content.clone())
    }
}

/// A card's title: the description, or the program's first line.
fn title(args: &RunCodeArgs) -> String {
    let description = args.description.trim();
    let text = if description.is_empty() {
        args.code.lines().next().unwrap_or("").trim()
    } else {
        description
    };
    crate::text::cap(text, 120).into_owned()
}

/// A program's failure as the model reads it: the kind's code, the
/// message (with the line and column in its source, when known), and what
/// it logged before.
fn failure(error: &RunError, logs: &[String]) -> ToolError {
    let mut message = error.message.clone();
    if !logs.is_empty() {
        let mut shown = String::new();
        for line in logs {
            shown.push_str(line);
            shown.push('\n');
        }
        let _ = write!(
            message,
            "\nThe program logged, before it ended:\n{}",
            crate::text::cap_tail(shown.trim_end(), MAX_LOGS_IN_ERROR)
        );
    }
    ToolError::new(message).with_code(error.code())
}

/// A value as pretty JSON, cut at [`MAX_RENDERED_RESULT`] bytes.
fn bounded_json(value: &Value) -> String {
    let text = serde_json::to_string_pretty(value).unwrap_or_else(|e| e.to_string());
    if text.len() <= MAX_RENDERED_RESULT {
        return text;
    }
    format!(
        "{}\n… ({} more bytes of the returned value not shown; return less, or log what you need)",
        crate::text::cut(&text, MAX_RENDERED_RESULT),
        text.len() - crate::text::cut(&text, MAX_RENDERED_RESULT).len()
    )
}

/// The sandbox's host: each nested call goes to the registry through the
/// program's calls.
struct Calls(ProgramCalls);

impl Host for Calls {
    fn call(&self, name: String, args: Value, cancel: CancellationToken) -> HostFuture {
        let calls = self.0.clone();
        Box::pin(async move {
            calls
                .call(&name, args, cancel)
                .await
                .map_err(|e| HostError::new(e.code.as_str(), e.message))
        })
    }

    fn concurrent(&self, name: &str) -> bool {
        self.0
            .definition(name)
            .is_some_and(|d| d.annotations.read_only)
    }
}
