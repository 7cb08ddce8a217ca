//! The client of `call` (W8 and W9 in docs/contract.md), run as a real
//! process: a tool's logs on stderr, its forms and approvals asked at a
//! real pseudo-terminal (`tests/support/pty_session.py`, Python's standard
//! `pty` module: stdin and stderr are the terminal, stdout a pipe), and,
//! off a terminal, an answer at once that nobody can be asked.
//!
//! As in tests/cli.rs, the test binary is also the program under test:
//! started with `TOOLPRISM_CLI_TEST_BIN` set, its `main` runs the command
//! line over the tools below (`harness = false` in Cargo.toml).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Output, Stdio};
use std::time::{Duration, Instant};

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use toolprism::cli::Cli;
use toolprism::client::{ElicitRequest, ElicitResponse, LogLevel, SampleRequest};
use toolprism::{ContentBlock, Registry, ToolContext, ToolError, tool};

// ---------------------------------------------------------------------------
// The program under test
// ---------------------------------------------------------------------------

const AS_PROGRAM: &str = "TOOLPRISM_CLI_TEST_BIN";

#[derive(Clone, Deserialize, JsonSchema)]
struct EditArgs {
    /// The file.
    path: String,
    /// The new text.
    #[serde(default)]
    text: String,
}

struct Edit;

/// Edit a file (pretends to); asks first.
#[tool(name = "edit", kind = edit)]
impl Edit {
    fn execute(args: EditArgs) -> String {
        let new = if args.text.is_empty() {
            ""
        } else {
            " (new text)"
        };
        format!("edited {}{new}", args.path)
    }
    fn render(_: &EditArgs, value: &String) -> Vec<ContentBlock> {
        vec![ContentBlock::text(value)]
    }
    fn approval(args: &EditArgs) -> Option<String> {
        Some(format!("Let the agent edit {}?", args.path))
    }
}

#[derive(Clone, Deserialize, JsonSchema)]
struct SurveyArgs {
    /// What to ask.
    message: String,
}

struct Survey;

/// Ask the user a form of every kind of field; the value is what they did.
#[tool(name = "survey")]
impl Survey {
    async fn execute(&self, args: SurveyArgs, cx: &ToolContext<'_>) -> Result<Value, ToolError> {
        let form = ElicitRequest::new(
            args.message,
            json!({
                "type": "object",
                "properties": {
                    "age": {"type": "integer", "title": "Age", "minimum": 0, "maximum": 150, "default": 30},
                    "colour": {"type": "string", "title": "Colour", "oneOf": [
                        {"const": "r", "title": "Red"}, {"const": "g", "title": "Green"}
                    ], "default": "g"},
                    "name": {"type": "string", "title": "Name", "description": "What we call you", "minLength": 2},
                    "newsletter": {"type": "boolean", "title": "Newsletter", "default": false},
                    "ratio": {"type": "number", "title": "Ratio", "maximum": 1},
                    "snacks": {"type": "array", "title": "Snacks", "items": {"anyOf": [
                        {"const": "a", "title": "Apples"}, {"const": "b", "title": "Bread"}
                    ]}}
                },
                "required": ["age", "name"]
            }),
        );
        match cx.elicit(form).await {
            Ok(ElicitResponse::Accept(content)) => {
                Ok(json!({"action": "accept", "content": content}))
            }
            Ok(ElicitResponse::Decline) => Ok(json!({"action": "decline"})),
            Ok(ElicitResponse::Cancel) => Ok(json!({"action": "cancel"})),
            Err(e) => Err(ToolError::new(e.to_string()).with_code(e.code())),
        }
    }
    fn render(_: &SurveyArgs, value: &Value) -> Vec<ContentBlock> {
        vec![ContentBlock::text(value.to_string())]
    }
}

#[derive(Clone, Deserialize, JsonSchema)]
struct Empty {}

struct Chatty;

/// Log at four levels, then answer.
#[tool(name = "chatty")]
impl Chatty {
    async fn execute(&self, _: Empty, cx: &ToolContext<'_>) -> Result<String, ToolError> {
        cx.log(LogLevel::Debug, "the details");
        cx.log(LogLevel::Info, "step 1 \u{1b}[31mred\nsecond line");
        cx.log(LogLevel::Warning, json!({"disk": "low"}));
        cx.log(LogLevel::Error, "it broke");
        Ok("done".to_owned())
    }
    fn render(_: &Empty, value: &String) -> Vec<ContentBlock> {
        vec![ContentBlock::text(value)]
    }
}

struct AskModel;

/// Ask the client's model.
#[tool(name = "ask_model")]
impl AskModel {
    async fn execute(&self, _: Empty, cx: &ToolContext<'_>) -> Result<String, ToolError> {
        cx.sample(SampleRequest::text("Hello?", 10))
            .await
            .map(|answer| answer.model)
            .map_err(|e| ToolError::new(e.to_string()).with_code(e.code()))
    }
    fn render(_: &Empty, value: &String) -> Vec<ContentBlock> {
        vec![ContentBlock::text(value)]
    }
}

fn program() -> ExitCode {
    Cli::with_registry(
        Registry::builder()
            .tool(Edit)
            .tool(Survey)
            .tool(Chatty)
            .tool(AskModel)
            .build()
            .expect("the test tools build"),
    )
    .name("tools")
    .run()
}

// ---------------------------------------------------------------------------
// The harness
// ---------------------------------------------------------------------------

fn main() -> ExitCode {
    if std::env::var_os(AS_PROGRAM).is_some() {
        return program();
    }
    macro_rules! tests {
        ($($test:ident),* $(,)?) => { &[$((stringify!($test), $test as fn())),*] };
    }
    let tests: &[(&str, fn())] = tests![
        w9_the_terminal_asks_before_edit_runs_and_only_yes_runs_it,
        w9_off_a_terminal_an_approval_is_not_approved_at_once,
        w9_yes_approves_without_asking_and_the_log_keeps_the_decision,
        a_form_is_asked_field_by_field_and_every_answer_checked,
        a_form_can_be_declined_or_cancelled,
        off_a_terminal_forms_and_sampling_are_unavailable_at_once,
        logs_are_one_clean_line_each_at_or_above_the_level,
        call_help_documents_the_client_options,
    ];
    toolprism_testkit::harness::run(tests)
}

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

fn program_path() -> PathBuf {
    std::env::current_exe().expect("the test binary knows its path")
}

/// The program off a terminal: stdin `input` (a pipe), stdout and stderr
/// pipes.
fn run_piped(args: &[&str], input: &str) -> Output {
    let mut child = Command::new(program_path())
        .args(args)
        .env(AS_PROGRAM, "1")
        .env_remove("RUST_BACKTRACE")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the program runs");
    // The program may never read it: a closed pipe is fine.
    let _ = child.stdin.take().unwrap().write_all(input.as_bytes());
    child.wait_with_output().unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8(bytes.to_vec()).expect("UTF-8")
}

/// What a run at the terminal gave.
struct Session {
    terminal: String,
    stdout: String,
    code: i32,
}

impl Session {
    /// stdout, which must be exactly one JSON object on one line.
    fn json(&self) -> Value {
        assert_eq!(
            self.stdout.lines().count(),
            1,
            "stdout is not one line:\n{}\n--- terminal:\n{}",
            self.stdout,
            self.terminal
        );
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {}", self.stdout))
    }
}

enum Step<'a> {
    /// Wait until this shows on the terminal.
    Expect(&'a str),
    /// Type this.
    Send(&'a str),
}

/// Runs the program with `args` under a pseudo-terminal, playing `steps`.
fn at_a_terminal(args: &[&str], steps: &[Step<'_>]) -> Session {
    let mut argv = vec![program_path().display().to_string()];
    argv.extend(args.iter().map(|a| a.to_string()));
    let steps: Vec<Value> = steps
        .iter()
        .map(|step| match step {
            Step::Expect(text) => json!({"expect": text}),
            Step::Send(text) => json!({"send": text}),
        })
        .collect();
    let spec = json!({
        "argv": argv,
        "env": {AS_PROGRAM: "1", "TERM": "xterm"},
        "timeout": 30,
        "steps": steps,
    });
    let driver = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/support/pty_session.py");
    let mut child = Command::new("python3")
        .arg(driver)
        .env_remove("RUST_BACKTRACE")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python3 runs");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(spec.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "the driver failed: {}",
        text(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).expect("the driver prints JSON");
    let session = Session {
        terminal: report["terminal"].as_str().unwrap().to_owned(),
        stdout: report["stdout"].as_str().unwrap().to_owned(),
        code: report["code"].as_i64().unwrap() as i32,
    };
    assert!(
        report["error"].is_null(),
        "{}\n--- terminal:\n{}\n--- stdout:\n{}",
        report["error"],
        session.terminal,
        session.stdout
    );
    session
}

const EDIT_ARGS: &str = r#"{"path":"a.txt"}"#;
const EDIT_PROMPT: &str =
    "Let the agent edit a.txt? Allow `edit` to run with {\"path\":\"a.txt\"}? [y/N] ";

// ---------------------------------------------------------------------------
// The tests
// ---------------------------------------------------------------------------

fn w9_the_terminal_asks_before_edit_runs_and_only_yes_runs_it() {
    for (answer, approved) in [
        ("y", true),
        ("YES", true),
        ("n", false),
        ("", false),
        ("sure", false),
    ] {
        let typed = format!("{answer}\n");
        let session = at_a_terminal(
            &["call", "edit", EDIT_ARGS, "--json"],
            &[Step::Expect(EDIT_PROMPT), Step::Send(&typed)],
        );
        let object = session.json();
        assert!(
            !session.stdout.contains("Allow"),
            "a prompt on stdout: {}",
            session.stdout
        );
        if approved {
            assert_eq!(session.code, 0, "{answer:?}: {}", session.terminal);
            assert_eq!(object["value"], "edited a.txt", "{answer:?}");
            assert_eq!(object["content"][0]["text"], "edited a.txt");
            assert_eq!(
                object["approval"],
                json!({"question": "Let the agent edit a.txt?", "decision": "approved"})
            );
        } else {
            assert_eq!(session.code, 1, "{answer:?}: {}", session.terminal);
            assert_eq!(object["error"]["code"], "NOT_APPROVED", "{answer:?}");
            assert!(
                object["error"]["message"]
                    .as_str()
                    .unwrap()
                    .contains("the user did not approve this call of \"edit\""),
                "{object}"
            );
            assert!(object.get("value").is_none(), "{object}");
            assert_eq!(object["approval"]["decision"], "denied");
        }
    }
    // Arguments too long for one line are cut, and control characters in
    // them are shown escaped.
    let long =
        json!({"path": "b.txt", "text": format!("\u{1b}[2J{}", "x".repeat(500))}).to_string();
    let session = at_a_terminal(
        &["call", "edit", &long],
        &[Step::Expect("[y/N] "), Step::Send("y\n")],
    );
    assert_eq!(session.code, 0, "{}", session.terminal);
    let prompt = session
        .terminal
        .lines()
        .find(|l| l.contains("[y/N]"))
        .unwrap();
    assert!(
        prompt.starts_with("Let the agent edit b.txt? Allow `edit` to run with {"),
        "{prompt}"
    );
    assert!(prompt.contains(r"\u001b[2Jxxx"), "{prompt}");
    assert!(!prompt.contains('\u{1b}'), "{prompt:?}");
    assert!(prompt.contains("…? [y/N]"), "{prompt}");
    assert!(prompt.chars().count() < 220, "{prompt}");
    // The human view says what was decided.
    assert!(
        session
            .stdout
            .contains("asked   approved: Let the agent edit b.txt?\n"),
        "{}",
        session.stdout
    );
}

fn w9_off_a_terminal_an_approval_is_not_approved_at_once() {
    // A "y" on a pipe is no person: it is never read.
    let started = Instant::now();
    let out = run_piped(&["call", "edit", EDIT_ARGS, "--json"], "y\n");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let object: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(object["error"]["code"], "NOT_APPROVED");
    assert!(
        object["error"]["message"]
            .as_str()
            .unwrap()
            .contains("this client cannot ask the user; it did not run"),
        "{object}"
    );
    assert_eq!(object["approval"]["decision"], "unavailable");
    assert_eq!(text(&out.stderr), "", "nothing asked");
}

fn w9_yes_approves_without_asking_and_the_log_keeps_the_decision() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("s.jsonl");
    let out = run_piped(
        &[
            "call",
            "edit",
            EDIT_ARGS,
            "--yes",
            "--json",
            "--log",
            log.to_str().unwrap(),
        ],
        "",
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let object: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(object["value"], "edited a.txt");
    assert_eq!(object["approval"]["decision"], "approved");
    assert_eq!(
        text(&out.stderr),
        "approved (--yes): Let the agent edit a.txt? Allow `edit` to run with {\"path\":\"a.txt\"}?\n"
    );
    let events: Vec<Value> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let approval = events
        .iter()
        .find(|e| e["type"] == "tool/approval")
        .expect("the decision is logged");
    assert_eq!(approval["decision"], "approved");
    assert_eq!(approval["question"], "Let the agent edit a.txt?");
    // And replayed.
    let out = run_piped(&["replay", log.to_str().unwrap()], "");
    let shown = text(&out.stdout);
    assert!(
        shown.contains("\n  asked approved: Let the agent edit a.txt?\n"),
        "{shown}"
    );
}

fn a_form_is_asked_field_by_field_and_every_answer_checked() {
    let args = json!({"message": "Tell us about you \u{1b}[2J"}).to_string();
    let session = at_a_terminal(
        &["call", "survey", &args, "--json"],
        &[
            Step::Expect("? Tell us about you \\u{1b}[2J\n"),
            Step::Expect("`:decline` declines the form; Ctrl-D cancels it)"),
            Step::Expect("Age (an integer from 0 to 150) [30]: "),
            Step::Send("old\n"),
            Step::Expect("✗ \"old\" is not an integer; try again"),
            Step::Expect("Age (an integer from 0 to 150) [30]: "),
            Step::Send("200\n"),
            Step::Expect("✗ 200 is above the maximum, 150; try again"),
            Step::Expect("Age ("),
            Step::Send("\n"),
            Step::Expect("    1) Red\n    2) Green\n"),
            Step::Expect("Colour (a number or a value above; optional) [Green]: "),
            Step::Send("1\n"),
            Step::Expect("Name: What we call you\n"),
            Step::Expect("Name (text of at least 2 chars): "),
            Step::Send("\n"),
            Step::Expect("✗ an answer is required; try again"),
            Step::Send("A\n"),
            Step::Expect("✗ 1 chars, fewer than the 2 it needs; try again"),
            Step::Send("Ada\n"),
            Step::Expect("Newsletter (y/n; optional) [no]: "),
            Step::Send("\n"),
            Step::Expect("Ratio (a number of at most 1; optional): "),
            Step::Send("0.5\n"),
            Step::Expect("Snacks (numbers or values above, separated by commas; optional): "),
            Step::Send("2, apples\n"),
        ],
    );
    assert_eq!(session.code, 0, "{}", session.terminal);
    assert!(
        !session.terminal.contains('\u{1b}'),
        "{:?}",
        session.terminal
    );
    let object = session.json();
    assert_eq!(
        object["value"],
        json!({"action": "accept", "content": {
            "age": 30, "colour": "r", "name": "Ada", "newsletter": false, "ratio": 0.5, "snacks": ["b", "a"]
        }}),
        "{}",
        session.terminal
    );
}

fn a_form_can_be_declined_or_cancelled() {
    let args = r#"{"message":"Tell us"}"#;
    let session = at_a_terminal(
        &["call", "survey", args, "--json"],
        &[
            Step::Expect("Age ("),
            Step::Send("41\n"),
            Step::Expect("Colour ("),
            Step::Send(":decline\n"),
        ],
    );
    assert_eq!(session.code, 0, "{}", session.terminal);
    assert_eq!(session.json()["value"], json!({"action": "decline"}));
    // Ctrl-D at the start of a line: the end of input.
    let session = at_a_terminal(
        &["call", "survey", args, "--json"],
        &[Step::Expect("Age ("), Step::Send("\u{4}")],
    );
    assert_eq!(session.code, 0, "{}", session.terminal);
    assert_eq!(session.json()["value"], json!({"action": "cancel"}));
    // An approval ended the same way is no approval.
    let session = at_a_terminal(
        &["call", "edit", EDIT_ARGS, "--json"],
        &[Step::Expect("[y/N] "), Step::Send("\u{4}")],
    );
    assert_eq!(session.code, 1, "{}", session.terminal);
    let object = session.json();
    assert_eq!(object["error"]["code"], "NOT_APPROVED");
    // Dismissed, not answered: the log and the model are told so.
    assert_eq!(object["approval"]["decision"], "dismissed", "{object}");
    assert!(
        object["error"]["message"]
            .as_str()
            .unwrap()
            .contains("the user dismissed the approval of this call of \"edit\""),
        "{object}"
    );
}

fn off_a_terminal_forms_and_sampling_are_unavailable_at_once() {
    let started = Instant::now();
    let out = run_piped(
        &["call", "survey", r#"{"message":"Tell us"}"#, "--json"],
        "41\n",
    );
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let object: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(object["error"]["code"], "CLIENT_UNAVAILABLE", "{object}");
    let message = object["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("elicitation: stdin and stderr are not both a terminal"),
        "{message}"
    );
    assert_eq!(text(&out.stderr), "");

    // At a terminal too, a terminal has no model.
    let session = at_a_terminal(&["call", "ask_model", "{}", "--json"], &[]);
    let object = session.json();
    assert_eq!(object["error"]["code"], "CLIENT_UNAVAILABLE", "{object}");
    let message = object["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("sampling: the command line's terminal has no model"),
        "{message}"
    );
}

fn logs_are_one_clean_line_each_at_or_above_the_level() {
    let out = run_piped(&["call", "chatty", "{}", "--json"], "");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let object: Value = serde_json::from_slice(&out.stdout).expect("stdout is one JSON object");
    assert_eq!(object["value"], "done");
    assert_eq!(
        text(&out.stderr),
        "info chatty: step 1 \\u{1b}[31mred⏎second line\n\
         warning chatty: {\"disk\":\"low\"}\n\
         error chatty: it broke\n"
    );
    let out = run_piped(&["call", "chatty", "{}", "--log-level", "debug"], "");
    let err = text(&out.stderr);
    assert_eq!(err.lines().count(), 4, "{err}");
    assert_eq!(err.lines().next(), Some("debug chatty: the details"));
    let out = run_piped(&["call", "chatty", "{}", "--log-level", "error"], "");
    assert_eq!(text(&out.stderr), "error chatty: it broke\n");
    assert!(
        text(&out.stdout).starts_with("call    chatty {}\n"),
        "{}",
        text(&out.stdout)
    );
    let out = run_piped(&["call", "chatty", "{}", "--log-level", "loud"], "");
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(
        err.starts_with("error: ") && err.contains("warning"),
        "{err}"
    );
}

fn call_help_documents_the_client_options() {
    let out = run_piped(&["call", "--help"], "");
    let help = text(&out.stdout);
    for needle in [
        "--log-level <LEVEL>",
        "[default: info]",
        "--yes",
        "for scripts",
        "NOT_APPROVED",
    ] {
        assert!(help.contains(needle), "no {needle:?} in\n{help}");
    }
}
