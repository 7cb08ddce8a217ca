//! The showcase: every example tool run for real, each call shown four
//! ways (the canonical value, the model's view, the UI's view, what was
//! persisted), then the session log replayed and checked.
//!
//! ```text
//! cargo run                          # every scenario, for a human
//! cargo run -- --scenario bash       # one scenario
//! cargo run -- --json                # one JSON object per call on stdout
//! cargo run -- --log /tmp/s.jsonl    # keep the session log there
//! cargo run -- replay /tmp/s.jsonl   # its cards, drawn again (toolprism::cli)
//! ```

pub mod fixtures;
mod replay;
pub mod scenarios;

use std::collections::BTreeMap;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use toolprism::cli::clap;
use toolprism::cli::terminal::{Style, draw_call, draw_result};
use toolprism::code::CodeMode;
use toolprism::log::SessionLog;
use toolprism::spill::SpillStore;
use toolprism::{Mode, Registry, ToolCall, ToolOutcome, content_text};

use crate::text::ellipsize;
use crate::tools::{
    AcmeTicketTool, FlakyRenderTool, mask_phone_numbers_in_content, redact_phone_column,
};
use fixtures::Fixtures;
use scenarios::{Expect, Scenario};
use toolprism_tools::sandbox::{SandboxMode, SandboxPolicy};
use toolprism_tools::{
    BashTool, EditTool, GlobTool, GrepTool, ReadTool, SqlQueryTool, WebFetchTool, WriteTool,
};

/// The content budget of the showcase registry: small, so a big output
/// shows spill at work.
pub const SPILL_BUDGET: usize = 12 * 1024;

/// What `--help` says of the showcase, which runs when no command is given.
pub const ABOUT: &str = "\
toolprism showcase: real tools, each call shown as value, content, card and log event,
then the session log replayed and every card compared with the live one.

With no command, runs the showcase: exit status 0 when every check passed, 1 when one
failed, 2 on bad usage. Needs no network: the HTTP server and the database are made on
the spot. The commands run the built-in tools, confined to --root (default: the current
directory); sql_query reads the SQLite file $TOOLPRISM_DATABASE (default: toolprism.sqlite
under --root).";

/// The showcase's options (`cargo run -- [OPTIONS]`, no command).
#[derive(Debug, Clone, Default, PartialEq, Eq, clap::Args)]
pub struct Options {
    /// Run one scenario: read, grep, glob, bash, sandbox, edit, web_fetch, sql_query,
    /// third-party, render-panic, redaction, code-mode, agent
    #[arg(long, value_name = "NAME", value_parser = scenario)]
    pub scenario: Option<String>,
    /// Print one JSON object per call on stdout ({scenario, callId, callCard,
    /// resultCard, persisted}); the report goes to stderr
    #[arg(long)]
    pub json: bool,
    /// Write the session log to PATH, which must not exist yet or be empty
    /// (default: toolprism-showcase/session.jsonl in the temp directory,
    /// replaced on every run); spilled content goes next to it, in the
    /// directory named like PATH without its extension, plus .spill
    #[arg(long, value_name = "PATH")]
    pub log: Option<PathBuf>,
    /// The sandbox of the showcase's tools (the global `--sandbox`,
    /// `--allow-write`, `--allow-network`, `--env`).
    #[arg(skip)]
    pub sandbox: toolprism_tools::sandbox::SandboxPolicy,
}

/// A scenario's name, or why it is not one.
fn scenario(name: &str) -> Result<String, String> {
    if scenarios::NAMES.contains(&name) {
        Ok(name.to_owned())
    } else {
        Err(format!(
            "there is no scenario \"{name}\"; the scenarios are: {}",
            scenarios::NAMES.join(", ")
        ))
    }
}

/// Where the log and spilled content go.
fn log_paths(options: &Options) -> io::Result<(PathBuf, PathBuf)> {
    match &options.log {
        Some(path) => {
            if std::fs::metadata(path).is_ok_and(|m| m.len() > 0) {
                return Err(io::Error::new(
                    io::ErrorKind::AlreadyExists,
                    format!(
                        "{} already holds a log; pass a new path to --log",
                        path.display()
                    ),
                ));
            }
            let spill = path.with_extension("spill");
            Ok((path.clone(), spill))
        }
        None => {
            let dir = std::env::temp_dir().join("toolprism-showcase");
            let log = dir.join("session.jsonl");
            let spill = dir.join("spill");
            let _ = std::fs::remove_file(&log);
            let _ = std::fs::remove_dir_all(&spill);
            Ok((log, spill))
        }
    }
}

/// The registries the scenarios use, all writing to one session log.
struct Registries {
    main: Registry,
    mask_content: Registry,
    redact_value: Registry,
    confined: Registry,
    read_only: Registry,
}

impl Registries {
    fn build(fixtures: &Fixtures, log: &Path, spill: &Path) -> io::Result<Self> {
        let ws = &fixtures.workspace;
        let fail = |e: toolprism::RegistryError| io::Error::other(e.to_string());
        let main = Registry::builder()
            .tool(ReadTool::new(ws.clone()))
            .tool(GrepTool::new(ws.clone()))
            .tool(GlobTool::new(ws.clone()))
            .tool(BashTool::new(ws.clone()))
            .tool(EditTool::new(ws.clone()))
            .tool(WriteTool::new(ws.clone()))
            .tool(WebFetchTool::new())
            .tool(SqlQueryTool::new(&fixtures.database))
            .tool(AcmeTicketTool::default())
            .tool(FlakyRenderTool)
            .code_mode(Mode::Both)
            .log(SessionLog::create(log)?)
            .spill(SpillStore::new(spill)?)
            .spill_budget(SPILL_BUDGET)
            .build()
            .map_err(fail)?;
        let mask_content = Registry::builder()
            .tool(SqlQueryTool::new(&fixtures.database))
            .post_execute(mask_phone_numbers_in_content)
            .log(SessionLog::create(log)?)
            .build()
            .map_err(fail)?;
        let redact_value = Registry::builder()
            .tool(SqlQueryTool::new(&fixtures.database))
            .post_execute(redact_phone_column)
            .log(SessionLog::create(log)?)
            .build()
            .map_err(fail)?;
        // The sandbox scenario's own: the default policy and read-only,
        // whatever `--sandbox` gave the main registry.
        let under = |mode| -> io::Result<Registry> {
            let ws = ws.clone().with_sandbox(SandboxPolicy::new(mode));
            Registry::builder()
                .tool(BashTool::new(ws.clone()))
                .tool(WriteTool::new(ws))
                .log(SessionLog::create(log)?)
                .build()
                .map_err(fail)
        };
        Ok(Registries {
            main,
            mask_content,
            redact_value,
            confined: under(SandboxMode::WorkspaceWrite)?,
            read_only: under(SandboxMode::ReadOnly)?,
        })
    }

    fn get(&self, which: scenarios::Registry) -> &Registry {
        match which {
            scenarios::Registry::Main => &self.main,
            scenarios::Registry::MaskContent => &self.mask_content,
            scenarios::Registry::RedactValue => &self.redact_value,
            scenarios::Registry::Confined => &self.confined,
            scenarios::Registry::ReadOnly => &self.read_only,
        }
    }
}

/// One live call, kept for the checks after the run.
pub(crate) struct Record {
    pub scenario: &'static str,
    pub call_id: String,
    pub outcome: ToolOutcome,
    /// The log lines this call appended.
    pub persisted: Vec<String>,
    pub expect: Vec<Expect>,
}

/// The sandbox as the header shows it: the policy, and what the kernel
/// enforces of it here (or why it cannot).
fn sandbox_line(policy: &toolprism_tools::sandbox::SandboxPolicy) -> String {
    use toolprism_tools::sandbox::Confinement;
    let root = std::env::temp_dir();
    match Confinement::prepare(policy, &root) {
        Ok(c) if c.is_confined() => {
            let e = c.enforcement();
            let scoped = if e.scoped { ", signals scoped" } else { "" };
            format!(
                "{} (Landlock ABI {}{scoped}, seccomp)",
                policy.summary(),
                e.landlock_abi.unwrap_or(0)
            )
        }
        Ok(_) => format!("{} (nothing confined)", policy.summary()),
        Err(why) => format!(
            "{} (cannot be enforced here: {why}; bash refuses to run)",
            policy.summary()
        ),
    }
}

/// Runs the showcase. Human output (or JSON lines) goes to `out`; in JSON
/// mode the report goes to `report`. Returns whether every check passed.
pub async fn run(
    options: &Options,
    out: &mut dyn Write,
    report: &mut dyn Write,
) -> io::Result<bool> {
    let fixtures = Fixtures::build(options.sandbox.clone())?;
    let (log_path, spill_dir) = log_paths(options)?;
    let registries = Registries::build(&fixtures, &log_path, &spill_dir)?;
    let selected: Vec<Scenario> = scenarios::all(&fixtures)
        .into_iter()
        .filter(|s| {
            options
                .scenario
                .as_deref()
                .is_none_or(|name| name == s.name)
        })
        .collect();

    let human: &mut dyn Write = if options.json { report } else { out };
    writeln!(human, "toolprism showcase")?;
    writeln!(
        human,
        "  workspace  {}",
        fixtures.workspace.root().display()
    )?;
    writeln!(
        human,
        "  database   {} (1,200 customers)",
        fixtures.database.display()
    )?;
    writeln!(human, "  server     {}", fixtures.server.url("/"))?;
    writeln!(
        human,
        "  sandbox    {}",
        sandbox_line(fixtures.workspace.sandbox())
    )?;
    writeln!(human, "  log        {}", log_path.display())?;
    writeln!(
        human,
        "  spill      {} (budget {} bytes)",
        spill_dir.display(),
        SPILL_BUDGET
    )?;

    let mut records = Vec::new();
    let mut failures = Vec::new();
    for scenario in &selected {
        if !options.json {
            writeln!(out)?;
            writeln!(
                out,
                "{}",
                rule(&format!("{} · {}", scenario.name, scenario.about))
            )?;
            if scenario.name == "code-mode" {
                print_program(out, &registries.main)?;
            }
        }
        if scenario.name == "agent" {
            let (agent_records, agent_failures) =
                run_agent(&registries.main, scenario, &log_path, options.json, out).await?;
            failures.extend(agent_failures);
            records.extend(agent_records);
            continue;
        }
        for (i, call) in scenario.calls.iter().enumerate() {
            let call_id = format!("{}-{}", scenario.name, i + 1);
            let arguments = call.args.to_string();
            let before = file_len(&log_path);
            let registry = registries.get(call.registry);
            let outcome = registry
                .call(ToolCall::new(&call_id, call.tool, &arguments))
                .await;
            let persisted = appended_lines(&log_path, before)?;
            let record = Record {
                scenario: scenario.name,
                call_id,
                outcome,
                persisted,
                expect: call.expect.clone(),
            };
            let problems = check_call(&record);
            if options.json {
                writeln!(out, "{}", json_line(&record))?;
            } else {
                print_call(out, registry, call, &arguments, &record, &problems)?;
            }
            failures.extend(
                problems
                    .into_iter()
                    .map(|p| format!("{}: {p}", record.call_id)),
            );
            records.push(record);
        }
    }

    let human: &mut dyn Write = if options.json { report } else { out };
    let log_bytes = std::fs::read(&log_path)?;
    let log_text = String::from_utf8_lossy(&log_bytes);
    for record in &records {
        for expect in &record.expect {
            if let Expect::LogLacks(marker) = expect
                && log_text.contains(&json_escaped(marker))
            {
                failures.push(format!(
                    "{}: the session log holds \"{marker}\", which only the value should hold",
                    record.call_id
                ));
            }
        }
    }
    let summary = replay::check(&registries.main, &log_path, &records, &log_text)?;
    failures.extend(summary.failures.iter().cloned());
    writeln!(human)?;
    writeln!(
        human,
        "{}",
        rule("replay · the log alone, drawn again with the presenters registered now")
    )?;
    for line in &summary.lines {
        writeln!(human, "  {line}")?;
    }
    writeln!(human)?;
    if failures.is_empty() {
        writeln!(
            human,
            "all checks passed: {} calls in {} scenarios; log at {}",
            records.len(),
            selected.len(),
            log_path.display()
        )?;
    } else {
        writeln!(human, "{} checks FAILED:", failures.len())?;
        for failure in &failures {
            writeln!(human, "  ✗ {failure}")?;
        }
    }
    Ok(failures.is_empty())
}

/// The `agent` scenario: the loop against the scripted model on loopback,
/// each of its calls checked and drawn like a scenario's call.
async fn run_agent(
    registry: &Registry,
    scenario: &Scenario,
    log_path: &Path,
    json: bool,
    out: &mut dyn Write,
) -> io::Result<(Vec<Record>, Vec<String>)> {
    use toolprism::cli::agent::HttpModel;
    use toolprism::provider::{Agent, End, Provider};

    let server = crate::model_server::ModelServer::start()?;
    let model = HttpModel::new(Provider::Anthropic, server.url())
        .with_header("anthropic-version", "2023-06-01")
        .with_body(json!({"model": "showcase-scripted", "max_tokens": 1024}));
    let prompt = Provider::Anthropic
        .user_message("What does the first Rust file of the workspace start with?");
    let before = file_len(log_path);
    let mut failures = Vec::new();
    let run = match Agent::new(registry, Provider::Anthropic)
        .run(&model, vec![prompt])
        .await
    {
        Ok(run) => run,
        Err(e) => {
            failures.push(format!("agent: the loop failed: {e}"));
            e.into_run()
        }
    };
    let persisted = appended_lines(log_path, before)?;
    if run.end() != &End::Answered || run.turns() != 3 {
        failures.push(format!(
            "agent: expected an answer after 3 turns, got {:?} after {}",
            run.end(),
            run.turns()
        ));
    }
    let answer = run.text().to_owned();
    if !answer.starts_with("The first line I read: ")
        || answer.len() <= "The first line I read: ".len()
    {
        failures.push(format!(
            "agent: the answer does not quote the file: {answer:?}"
        ));
    }
    let messages = run.messages().len();
    let calls = run.into_calls();
    if calls.len() != scenario.calls.len() {
        failures.push(format!(
            "agent: expected {} calls, the model made {}",
            scenario.calls.len(),
            calls.len()
        ));
    }
    let mut records = Vec::new();
    for (made, planned) in calls.into_iter().zip(&scenario.calls) {
        if made.call.name != planned.tool {
            failures.push(format!(
                "agent: expected a call to {}, got {}",
                planned.tool, made.call.name
            ));
        }
        let id = json_escaped(&format!("\"callId\":\"{}\"", made.call.id));
        let record = Record {
            scenario: scenario.name,
            call_id: made.call.id.clone(),
            outcome: made.outcome,
            persisted: persisted
                .iter()
                .filter(|l| {
                    l.contains(&format!("\"callId\":\"{}\"", made.call.id)) || l.contains(&id)
                })
                .cloned()
                .collect(),
            expect: planned.expect.clone(),
        };
        let problems = check_call(&record);
        if json {
            writeln!(out, "{}", json_line(&record))?;
        } else {
            print_call(
                out,
                registry,
                planned,
                &made.call.arguments,
                &record,
                &problems,
            )?;
        }
        failures.extend(
            problems
                .into_iter()
                .map(|p| format!("{}: {p}", record.call_id)),
        );
        records.push(record);
    }
    if !json {
        writeln!(out)?;
        labelled(out, "answer", &answer)?;
        labelled(
            out,
            "turns",
            &format!(
                "3 requests to {}; {messages} messages in the conversation",
                server.url()
            ),
        )?;
    }
    Ok((records, failures))
}

fn file_len(path: &Path) -> u64 {
    std::fs::metadata(path).map_or(0, |m| m.len())
}

fn appended_lines(path: &Path, from: u64) -> io::Result<Vec<String>> {
    let bytes = std::fs::read(path)?;
    let tail = bytes.get(from as usize..).unwrap_or_default();
    Ok(String::from_utf8_lossy(tail)
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(str::to_owned)
        .collect())
}

/// `s` as it appears inside a JSON string.
pub(crate) fn json_escaped(s: &str) -> String {
    let quoted = Value::String(s.to_owned()).to_string();
    quoted[1..quoted.len() - 1].to_owned()
}

fn check_call(record: &Record) -> Vec<String> {
    let outcome = &record.outcome;
    let value = outcome.value().map(Value::to_string).unwrap_or_default();
    let content = content_text(outcome.content());
    let meta = outcome.meta().map(Value::to_string).unwrap_or_default();
    let persisted = record.persisted.join("\n");
    let mut problems = Vec::new();
    let mut fail = |ok: bool, what: String| {
        if !ok {
            problems.push(what);
        }
    };
    for expect in &record.expect {
        match expect {
            Expect::Success => fail(
                !outcome.is_error(),
                format!("expected a success, got {:?}", outcome.error()),
            ),
            Expect::Error(code) => fail(
                outcome.error().is_some_and(|e| e.code.as_str() == *code),
                format!("expected error {code}, got {:?}", outcome.error()),
            ),
            Expect::ValueHas(s) => fail(
                value.contains(s.as_str()),
                format!("the value lacks \"{s}\""),
            ),
            Expect::ValueLacks(s) => fail(
                !value.contains(s.as_str()),
                format!("the value holds \"{s}\""),
            ),
            Expect::ContentHas(s) => fail(
                content.contains(s.as_str()),
                format!("the content lacks \"{s}\""),
            ),
            Expect::ContentLacks(s) => fail(
                !content.contains(s.as_str()),
                format!("the content holds \"{s}\""),
            ),
            Expect::MetaLacks(s) => fail(
                !meta.contains(s.as_str()),
                format!("the meta holds \"{s}\""),
            ),
            Expect::PersistedLacks(s) => fail(
                !persisted.contains(&json_escaped(s)),
                format!("the persisted events hold \"{s}\""),
            ),
            Expect::LogLacks(_) => {}
            Expect::ResultCard(tag) => fail(
                outcome.result_card().is_some_and(|c| c.tag() == *tag),
                format!(
                    "expected a {tag} result card, got {:?}",
                    outcome.result_card().map(|c| c.tag())
                ),
            ),
            Expect::NestedCalls(n) => fail(
                outcome.nested_calls().len() == *n,
                format!(
                    "expected {n} nested calls, got {}",
                    outcome.nested_calls().len()
                ),
            ),
        }
    }
    // tool/call and tool/result, and a pair for each call a program made.
    let expected = 2 + 2 * outcome.nested_calls().len();
    if record.persisted.len() != expected {
        problems.push(format!(
            "expected {expected} log events (tool/call, tool/result and a pair per nested call), found {}",
            record.persisted.len()
        ));
    }
    problems
}

/// One line of `--json`: a call's cards and what was persisted.
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct JsonLine<'a> {
    scenario: &'a str,
    call_id: &'a str,
    call_card: Option<&'a toolprism::CallCard>,
    result_card: Option<&'a toolprism::ResultCard>,
    persisted: Vec<Persisted>,
}

/// A log line as written (field order kept), or raw JSON if it is not an event.
#[derive(serde::Serialize)]
#[serde(untagged)]
enum Persisted {
    Event(toolprism::log::LogEvent),
    Raw(Value),
}

fn json_line(record: &Record) -> String {
    let line = JsonLine {
        scenario: record.scenario,
        call_id: &record.call_id,
        call_card: record.outcome.call_card(),
        result_card: record.outcome.result_card(),
        persisted: record
            .persisted
            .iter()
            .map(|line| match serde_json::from_str(line) {
                Ok(event) => Persisted::Event(event),
                Err(_) => Persisted::Raw(
                    serde_json::from_str(line).unwrap_or_else(|_| Value::String(line.clone())),
                ),
            })
            .collect(),
    };
    serde_json::to_string(&line).unwrap_or_else(|e| json!({ "error": e.to_string() }).to_string())
}

const LABEL: usize = 10;

fn rule(title: &str) -> String {
    let head = format!("━━ {title} ");
    let pad = 96usize.saturating_sub(head.chars().count());
    format!("{head}{}", "━".repeat(pad))
}

fn labelled(out: &mut dyn Write, label: &str, text: &str) -> io::Result<()> {
    for (i, line) in text.lines().enumerate() {
        let label = if i == 0 { label } else { "" };
        writeln!(out, "  {label:<LABEL$}{line}")?;
    }
    Ok(())
}

fn trimmed_value(value: &Value) -> String {
    let text = value.to_string();
    let chars = text.chars().count();
    if chars <= 300 {
        text
    } else {
        format!("{} ({} bytes in all)", ellipsize(&text, 300), text.len())
    }
}

fn trimmed_lines(text: &str, max_lines: usize, width: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let mut out: Vec<String> = lines
        .iter()
        .take(max_lines)
        .map(|l| ellipsize(l, width))
        .collect();
    if lines.len() > max_lines {
        out.push(format!("… {}", more_lines(lines.len() - max_lines)));
    }
    if out.is_empty() {
        out.push("(empty)".to_owned());
    }
    out.join("\n")
}

/// What the model is given to write a program (an excerpt of `run_code`'s
/// description, the SDK) and the program it wrote.
fn print_program(out: &mut dyn Write, registry: &Registry) -> io::Result<()> {
    let sdk = toolprism::code::sdk(registry);
    let wanted = [
        "interface ToolOutputMap {",
        "  \"glob\": {",
        "  \"grep\": {",
    ];
    let mut excerpt: Vec<&str> = Vec::new();
    let mut lines = sdk.lines().peekable();
    while let Some(line) = lines.next() {
        if wanted.iter().any(|w| line.starts_with(w)) {
            excerpt.push(line);
            if line.ends_with('{') {
                for inner in lines.by_ref() {
                    excerpt.push(inner);
                    if inner.starts_with("  }") || inner.starts_with('}') {
                        break;
                    }
                }
            }
        }
    }
    writeln!(out)?;
    labelled(
        out,
        "sdk",
        &format!(
            "{} lines of TypeScript from the tools' schemas (`cargo run -- sdk`); an excerpt:\n{}",
            sdk.lines().count(),
            trimmed_lines(&excerpt.join("\n"), 24, 110)
        ),
    )?;
    labelled(out, "program", scenarios::CODE_MODE_PROGRAM)
}

fn print_call(
    out: &mut dyn Write,
    registry: &Registry,
    call: &scenarios::Call,
    arguments: &str,
    record: &Record,
    problems: &[String],
) -> io::Result<()> {
    let outcome = &record.outcome;
    writeln!(out)?;
    writeln!(out, "▸ {} · {}", record.call_id, call.note)?;
    labelled(
        out,
        "call",
        &format!("{} {}", call.tool, ellipsize(arguments, 160)),
    )?;
    let value = match (outcome.value(), outcome.error()) {
        (Some(value), _) => trimmed_value(value),
        (None, Some(error)) => format!(
            "none: error {} ({})",
            error.code,
            ellipsize(&error.message, 160)
        ),
        (None, None) => "none".to_owned(),
    };
    labelled(out, "value", &value)?;
    let content = content_text(outcome.content());
    labelled(out, "model", &trimmed_lines(&content, 7, 110))?;
    // Spill replaced the content with a preview: show its note, which the
    // first lines do not reach.
    if let Some(note) = content.lines().find(|l| l.starts_with("(Omitted ")) {
        labelled(out, "spilled", &ellipsize(note, 200))?;
    }
    if let Some(meta) = outcome.meta() {
        labelled(out, "meta", &ellipsize(&meta.to_string(), 200))?;
    }
    let style = Style {
        max_lines: 6,
        width: 100,
    };
    let mut ui = String::new();
    if let Some(card) = outcome.call_card() {
        ui.push_str(&draw_call(card, style));
        ui.push('\n');
    }
    if let Some(card) = outcome.result_card() {
        ui.push_str(&draw_result(card, style));
    }
    labelled(out, "ui", &ui)?;
    // A program's calls: one pair of cards each, drawn from what the
    // outcome lists with the presenters replay uses.
    let mut nested = String::new();
    for call in outcome.nested_calls() {
        let mut result = call.result.clone();
        nested.push_str(&draw_call(
            &registry.present_call(&call.name, &call.arguments),
            style,
        ));
        nested.push('\n');
        nested.push_str(&draw_result(
            &registry.present_result(&call.name, &call.arguments, &mut result),
            style,
        ));
        nested.push('\n');
    }
    if !nested.is_empty() {
        labelled(out, "nested", nested.trim_end())?;
    }
    let persisted: Vec<String> = record
        .persisted
        .iter()
        .map(|line| ellipsize(line, 150))
        .collect();
    labelled(out, "persisted", &persisted.join("\n"))?;
    for warning in outcome.warnings() {
        labelled(out, "warning", warning)?;
    }
    if problems.is_empty() {
        labelled(
            out,
            "checks",
            &format!("✓ {} passed", record.expect.len() + 1),
        )?;
    } else {
        for problem in problems {
            labelled(out, "checks", &format!("✗ {problem}"))?;
        }
    }
    Ok(())
}

/// `1 more line`, `3 more lines`.
pub(crate) fn more_lines(n: usize) -> String {
    crate::text::plural(n as u64, "more line", "more lines")
}

/// Every record by call id, for replay.
pub(crate) fn by_call_id(records: &[Record]) -> BTreeMap<&str, &Record> {
    records.iter().map(|r| (r.call_id.as_str(), r)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(clap::Parser)]
    struct Showcase {
        #[command(flatten)]
        options: Options,
    }

    fn parse(args: &[&str]) -> Result<Options, String> {
        use clap::Parser as _;
        Showcase::try_parse_from(std::iter::once("showcase").chain(args.iter().copied()))
            .map(|s| s.options)
            .map_err(|e| e.to_string())
    }

    #[test]
    fn parses_flags() {
        assert_eq!(
            parse(&["--json", "--scenario", "bash", "--log=/tmp/x.jsonl"]),
            Ok(Options {
                scenario: Some("bash".into()),
                json: true,
                log: Some("/tmp/x.jsonl".into()),
                sandbox: Default::default(),
            })
        );
        assert!(
            parse(&["--scenario", "nope"])
                .unwrap_err()
                .contains("redaction")
        );
        assert!(parse(&["--log"]).is_err());
        assert!(parse(&["--frobnicate"]).is_err());
    }

    #[test]
    fn escapes_like_json() {
        assert_eq!(json_escaped("a\"b\n"), "a\\\"b\\n");
        assert_eq!(json_escaped("plain"), "plain");
    }
}
