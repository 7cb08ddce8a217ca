//! `call NAME [JSON]`: one call, shown as the model, a program and a UI see
//! it.

use std::io::{self, Read, Write};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::Value;

use clap::builder::{PossibleValuesParser, TypedValueParser};

use super::progress::{self, Bar};
use super::prompt::Terminal;
use super::terminal::{Style, draw_call, draw_result};
use super::text::{clean, ellipsize, one_line, plural};
use super::{Failure, Status};
use toolprism_core::ContentBlock;
use toolprism_core::ToolOutcome;
use toolprism_core::client::LogLevel;
use toolprism_core::log::SessionLog;
use toolprism_core::{CallOptions, Registry, ToolCall};
use toolprism_provider::dialect::Dialect;

/// Options of `call`.
#[derive(Debug, clap::Args)]
pub(crate) struct CallArgs {
    /// The tool's name (see `list`).
    #[arg(value_name = "NAME")]
    name: String,
    /// The arguments: one JSON object, or `-` to read it from stdin [default: {}].
    #[arg(value_name = "JSON")]
    arguments: Option<String>,
    /// Print one JSON object: {callId, name, content, isError, meta?, value?,
    /// error?, callCard, resultCard, approval?, warnings?}.
    #[arg(long)]
    json: bool,
    /// Append the call and its result to this session log, as the registry
    /// logs a call (created if missing; `replay` reads it).
    #[arg(long, value_name = "FILE")]
    log: Option<PathBuf>,
    /// End the call after this many seconds (overrides the tool's timeout).
    #[arg(long, value_name = "SECONDS", value_parser = seconds, allow_negative_numbers = true)]
    timeout: Option<Duration>,
    /// The call's id [default: cli-<milliseconds since 1970>-<process id>].
    #[arg(long, value_name = "ID")]
    id: Option<String>,
    /// The arguments are as a model speaking this dialect sends them (OpenAI
    /// strict mode's nulls for optional fields are removed before validation).
    #[arg(long, value_name = "DIALECT", value_parser = super::schema::dialects())]
    dialect: Option<Dialect>,
    /// Show the tool's log messages at or above this level, one line each on
    /// stderr (as MCP's logging/setLevel).
    #[arg(long, value_name = "LEVEL", default_value = "info", value_parser = log_levels())]
    log_level: LogLevel,
    /// Approve every call that asks for approval, without a prompt (for
    /// scripts; each approval is still said on stderr and logged). Without
    /// it, a call that needs approval asks on the terminal ([y/N]), and is
    /// NOT_APPROVED when stdin or stderr is not one.
    #[arg(long)]
    yes: bool,
}

/// The levels of `--log-level`, lowest first.
fn log_levels() -> impl TypedValueParser<Value = LogLevel> {
    PossibleValuesParser::new([
        "debug",
        "info",
        "notice",
        "warning",
        "error",
        "critical",
        "alert",
        "emergency",
    ])
    .try_map(|name| serde_json::from_value::<LogLevel>(Value::String(name)))
}

/// The most arguments read from stdin: as much as one log line may hold.
const MAX_STDIN_BYTES: u64 = toolprism_core::log::MAX_LINE_BYTES as u64;

fn seconds(text: &str) -> Result<Duration, String> {
    let n: f64 = text
        .parse()
        .map_err(|_| format!("\"{text}\" is not a number of seconds"))?;
    if !(n.is_finite() && n > 0.0 && n <= 365.0 * 86_400.0) {
        return Err(format!(
            "{text} seconds is not a timeout: give a positive number up to a year"
        ));
    }
    Ok(Duration::from_secs_f64(n))
}

pub(crate) fn run(
    registry: &Registry,
    args: CallArgs,
    runtime: &tokio::runtime::Runtime,
    out: &mut dyn Write,
) -> Result<Status, Failure> {
    if registry.definition(&args.name).is_none() {
        return Err(super::unknown_tool(registry, &args.name));
    }
    let arguments = match args.arguments.as_deref() {
        None => String::new(),
        Some("-") => stdin_arguments()?,
        Some(text) => text.to_owned(),
    };
    let log = match &args.log {
        Some(path) => Some(
            SessionLog::create(path)
                .map_err(|e| Failure::Usage(format!("--log {}: {e}", path.display())))?,
        ),
        None => None,
    };
    let call_id = args.id.clone().unwrap_or_else(new_call_id);

    let mut options = CallOptions::new();
    if let Some(timeout) = args.timeout {
        options = options.with_timeout(timeout);
    }
    if let Some(dialect) = args.dialect {
        options = options.with_dialect(dialect);
    }
    let bar = progress::on_terminal().then(|| Arc::new(Mutex::new(Bar::new(args.name.clone()))));
    if let Some(bar) = &bar {
        let bar = Arc::clone(bar);
        options = options.with_progress(move |p| {
            let note = p.message.as_deref().map(one_line).unwrap_or_default();
            bar.lock().unwrap_or_else(PoisonError::into_inner).update(
                p.done,
                p.total,
                &ellipsize(&note, 60),
                false,
            );
        });
    }

    // The person at the terminal is the call's client: its logs, forms and
    // approvals go to stderr, never to stdout.
    options = options.with_client(Arc::new(Terminal::new(
        args.log_level,
        args.yes,
        bar.clone(),
    )));

    // The pipeline writes the call (and every call it makes) to the log;
    // the command line never writes events itself (W1).
    if let Some(log) = log {
        options = options.with_log(log);
    }
    let call = ToolCall::new(call_id.clone(), args.name.clone(), arguments.clone());
    let outcome = runtime.block_on(registry.call_with(call, &options));
    if let Some(bar) = &bar {
        bar.lock().unwrap_or_else(PoisonError::into_inner).finish();
    }
    let warnings: Vec<String> = outcome.warnings().to_vec();

    if args.json {
        let mut object = serde_json::to_value(&outcome).map_err(io::Error::from)?;
        if let Value::Object(map) = &mut object {
            map.insert("callCard".into(), json(outcome.call_card()));
            map.insert("resultCard".into(), json(outcome.result_card()));
            if !outcome.nested_calls().is_empty() {
                let nested: Vec<Value> = outcome
                    .nested_calls()
                    .iter()
                    .map(|call| {
                        let (call_card, result_card) = nested_cards(registry, call);
                        serde_json::json!({
                            "callId": call.call_id,
                            "name": call.name,
                            "callCard": json(call_card),
                            "resultCard": json(result_card),
                        })
                    })
                    .collect();
                map.insert("nested".into(), Value::Array(nested));
            }
            if let Some(approval) = outcome.approval() {
                map.insert("approval".into(), json(approval));
            }
            if !warnings.is_empty() {
                map.insert("warnings".into(), json(&warnings));
            }
        }
        serde_json::to_writer(&mut *out, &object).map_err(io::Error::from)?;
        writeln!(out)?;
    } else {
        show(out, registry, &args.name, &arguments, &outcome, &warnings)?;
    }
    Ok(if outcome.is_error() {
        Status::Failed
    } else {
        Status::Ok
    })
}

/// The cards of a call a program made, drawn from what the log keeps of it.
fn nested_cards(
    registry: &Registry,
    call: &toolprism_core::NestedCall,
) -> (toolprism_core::CallCard, toolprism_core::ResultCard) {
    let mut result = call.result.clone();
    (
        registry.present_call(&call.name, &call.arguments),
        registry.present_result(&call.name, &call.arguments, &mut result),
    )
}

fn json<T: serde::Serialize>(value: T) -> Value {
    serde_json::to_value(value).unwrap_or_else(|e| Value::String(format!("<not JSON: {e}>")))
}

/// The arguments from stdin: UTF-8, at most [`MAX_STDIN_BYTES`].
fn stdin_arguments() -> Result<String, Failure> {
    let mut bytes = Vec::new();
    io::stdin()
        .lock()
        .take(MAX_STDIN_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Failure::Usage(format!("cannot read the arguments from stdin: {e}")))?;
    if bytes.len() as u64 > MAX_STDIN_BYTES {
        return Err(Failure::Usage(format!(
            "the arguments on stdin are over {} MiB",
            MAX_STDIN_BYTES >> 20
        )));
    }
    String::from_utf8(bytes)
        .map_err(|e| Failure::Usage(format!("the arguments on stdin are not UTF-8: {e}")))
}

/// `cli-<ms since 1970>-<pid>`: unique enough that calls appended to one
/// log by several runs do not share an id.
fn new_call_id() -> String {
    let ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    format!("cli-{ms}-{}", std::process::id())
}

/// The width of the labels.
const LABEL: usize = 8;
/// Lines shown of the content and of the value.
const MAX_LINES: usize = 40;
/// Chars shown of a line.
const WIDTH: usize = 160;

/// The call as the showcase shows it: the model's view, the value, the
/// meta, and both cards.
pub(crate) fn show(
    out: &mut dyn Write,
    registry: &Registry,
    name: &str,
    arguments: &str,
    outcome: &ToolOutcome,
    warnings: &[String],
) -> io::Result<()> {
    let args = if arguments.trim().is_empty() {
        "{}"
    } else {
        arguments
    };
    labelled(
        out,
        "call",
        &format!("{name} {}", ellipsize(&one_line(args), WIDTH)),
    )?;
    labelled(out, "model", &capped(&content(outcome.content())))?;
    match (outcome.value(), outcome.error()) {
        (Some(value), _) => {
            let pretty = serde_json::to_string_pretty(value).unwrap_or_else(|e| e.to_string());
            labelled(out, "value", &capped(&pretty))?;
        }
        (None, Some(error)) => labelled(
            out,
            "error",
            &format!(
                "{}: {}",
                error.code,
                ellipsize(&one_line(&error.message), 400)
            ),
        )?,
        (None, None) => labelled(out, "value", "(none)")?,
    }
    if let Some(meta) = outcome.meta() {
        labelled(out, "meta", &ellipsize(&meta.to_string(), 400))?;
    }
    if let Some(approval) = outcome.approval() {
        labelled(
            out,
            "asked",
            &format!(
                "{}: {}",
                approval.decision.as_str(),
                ellipsize(&one_line(&approval.question), 400)
            ),
        )?;
    }
    let style = Style::default();
    let mut ui = String::new();
    if let Some(card) = outcome.call_card() {
        ui.push_str(&draw_call(card, style));
        ui.push('\n');
    }
    if let Some(card) = outcome.result_card() {
        ui.push_str(&draw_result(card, style));
    }
    labelled(out, "ui", &ui)?;
    // The calls a program made: a pair of cards each, drawn as replay
    // draws them.
    let mut nested = String::new();
    for call in outcome.nested_calls() {
        let (call_card, result_card) = nested_cards(registry, call);
        nested.push_str(&draw_call(&call_card, style));
        nested.push('\n');
        nested.push_str(&draw_result(&result_card, style));
        nested.push('\n');
    }
    if !nested.is_empty() {
        labelled(out, "nested", nested.trim_end())?;
    }
    for warning in warnings {
        labelled(out, "warning", &one_line(warning))?;
    }
    Ok(())
}

/// The content as text; an image as a one-line note.
fn content(blocks: &[ContentBlock]) -> String {
    let parts: Vec<String> = blocks
        .iter()
        .map(|block| match block {
            ContentBlock::Text { text } => text.clone(),
            ContentBlock::Image { mime_type, data } => {
                format!("[{mime_type} image, {} base64 chars]", data.len())
            }
            ContentBlock::Audio { mime_type, data } => {
                format!("[{mime_type} audio, {} base64 chars]", data.len())
            }
            other => toolprism_core::content_text(std::slice::from_ref(other)),
        })
        .collect();
    parts.join("\n")
}

/// The first [`MAX_LINES`] lines, each cut to [`WIDTH`], and what was left
/// out.
fn capped(text: &str) -> String {
    let mut lines: Vec<String> = text
        .lines()
        .take(MAX_LINES)
        .map(|l| ellipsize(l, WIDTH))
        .collect();
    let more = text.lines().count().saturating_sub(MAX_LINES);
    if more > 0 {
        lines.push(format!(
            "… {} (--json shows everything)",
            plural(more as u64, "more line", "more lines")
        ));
    }
    if lines.is_empty() {
        lines.push("(empty)".to_owned());
    }
    lines.join("\n")
}

/// `label` then the first line, the other lines under it; every line made
/// safe for the terminal.
fn labelled(out: &mut dyn Write, label: &str, text: &str) -> io::Result<()> {
    for (i, line) in text.lines().enumerate() {
        let label = if i == 0 { label } else { "" };
        writeln!(out, "{label:<LABEL$}{}", clean(line))?;
    }
    Ok(())
}
