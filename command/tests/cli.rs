//! `toolprism::cli` run as a real process.
//!
//! This test binary is also the program under test: started with
//! `TOOLPRISM_CLI_TEST_BIN` set, its `main` hands a registry of a few test
//! tools to the command line instead of running the tests. The tests start
//! it that way and check stdout, stderr and the exit status; one runs it
//! under a pseudo-terminal (`script`) to see the progress bar.
//!
//! A test binary of its own (`harness = false` in Cargo.toml), so it needs
//! no separate program to be built first; it prints libtest's summary line.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Output, Stdio};
use std::time::{Duration, Instant};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use toolprism::card::{ExitStatus, TerminalCall, TerminalResult};
use toolprism::cli::Cli;
use toolprism::{
    CallCard, ContentBlock, Registry, ResultCard, ToolContext, ToolError, ToolResult, tool,
};

// ---------------------------------------------------------------------------
// The program under test
// ---------------------------------------------------------------------------

const AS_PROGRAM: &str = "TOOLPRISM_CLI_TEST_BIN";

#[derive(Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct EchoArgs {
    /// The text to echo.
    text: String,
}

#[derive(Serialize, Deserialize, JsonSchema)]
struct Echoed {
    text: String,
    chars: usize,
}

#[derive(Serialize, Deserialize)]
struct EchoMeta {
    chars: usize,
}

struct Echo;

/// Echo the text back.
///
/// The second paragraph is not in the table.
#[tool(name = "echo", read_only, idempotent)]
impl Echo {
    fn execute(args: EchoArgs) -> Echoed {
        Echoed {
            chars: args.text.chars().count(),
            text: args.text,
        }
    }
    fn render(_: &EchoArgs, value: &Echoed) -> Vec<ContentBlock> {
        vec![ContentBlock::text(format!("echo: {}", value.text))]
    }
    fn presentation_meta(_: &EchoArgs, value: &Echoed) -> EchoMeta {
        EchoMeta { chars: value.chars }
    }
    fn present_result(_: &EchoArgs, result: &ToolResult<EchoMeta>) -> Option<ResultCard> {
        let meta = result.meta.as_ref()?;
        Some(ResultCard::generic(
            Some(format!("{} chars", meta.chars)),
            result.content.clone(),
        ))
    }
}

#[derive(Clone, Deserialize, JsonSchema)]
struct ExitArgs {
    /// The exit code.
    code: i32,
}

#[derive(Serialize, Deserialize, JsonSchema)]
struct Exited {
    code: i32,
}

struct Exit;

/// Report an exit code, as a terminal shows it.
#[tool(name = "exit", kind = execute)]
impl Exit {
    fn execute(args: ExitArgs) -> Exited {
        Exited { code: args.code }
    }
    fn render(_: &ExitArgs, value: &Exited) -> Vec<ContentBlock> {
        vec![ContentBlock::text(format!("exit code {}", value.code))]
    }
    fn presentation_meta(_: &ExitArgs, value: &Exited) -> Exited {
        Exited { code: value.code }
    }
    fn present_call(args: &ExitArgs) -> CallCard {
        CallCard::Terminal(TerminalCall::new(format!("exit {}", args.code)))
    }
    fn present_result(_: &ExitArgs, result: &ToolResult<Exited>) -> Option<ResultCard> {
        let meta = result.meta.as_ref()?;
        Some(ResultCard::Terminal(TerminalResult::new(
            None,
            Some(format!("exit code {}", meta.code)),
            Some(ExitStatus::Code(meta.code)),
        )))
    }
}

#[derive(Clone, Deserialize, JsonSchema)]
struct FailArgs {
    /// Why.
    why: String,
}

struct Fail;

/// Fail with the reason given.
#[tool(name = "fail")]
impl Fail {
    fn execute(args: FailArgs) -> Result<String, ToolError> {
        Err(ToolError::new(args.why).with_code("NOPE"))
    }
    fn render(_: &FailArgs, value: &String) -> Vec<ContentBlock> {
        vec![ContentBlock::text(value)]
    }
}

#[derive(Clone, Deserialize, JsonSchema)]
struct Empty {}

struct Boom;

/// A tool whose render panics.
#[tool(name = "boom")]
impl Boom {
    fn execute(_: Empty) -> u32 {
        1
    }
    fn render(_: &Empty, _: &u32) -> Vec<ContentBlock> {
        panic!("render fell over")
    }
}

#[derive(Clone, Deserialize, JsonSchema)]
struct SleepArgs {
    /// How long, in milliseconds.
    ms: u64,
}

struct Sleep;

/// Wait, then say so.
#[tool(name = "sleep")]
impl Sleep {
    async fn execute(args: SleepArgs) -> String {
        tokio::time::sleep(Duration::from_millis(args.ms)).await;
        "slept".to_owned()
    }
    fn render(_: &SleepArgs, value: &String) -> Vec<ContentBlock> {
        vec![ContentBlock::text(value)]
    }
}

#[derive(Clone, Deserialize, JsonSchema)]
struct Node {
    name: String,
    #[serde(default)]
    children: Vec<Node>,
}

#[derive(Clone, Deserialize, JsonSchema)]
struct TreeArgs {
    /// The tree.
    root: Node,
    /// Count this many levels only (0: all).
    #[serde(default)]
    max_depth: u32,
}

struct Tree;

/// Count the nodes of a tree.
#[tool(name = "tree", read_only)]
impl Tree {
    fn execute(args: TreeArgs) -> u64 {
        fn count(node: &Node, depth: u32, max: u32) -> u64 {
            if max != 0 && depth >= max {
                return 0;
            }
            1 + node
                .children
                .iter()
                .map(|c| count(c, depth + 1, max))
                .sum::<u64>()
        }
        count(&args.root, 0, args.max_depth)
    }
    fn render(args: &TreeArgs, n: &u64) -> Vec<ContentBlock> {
        vec![ContentBlock::text(format!(
            "{n} nodes under {}",
            args.root.name
        ))]
    }
}

struct Ls {
    root: PathBuf,
}

#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(transparent)]
struct Names(Vec<String>);

/// List the names in the root directory.
#[tool(name = "ls", kind = read, read_only)]
impl Ls {
    async fn execute(&self, _args: Empty, _cx: &ToolContext<'_>) -> Result<Names, ToolError> {
        let mut names = Vec::new();
        for entry in std::fs::read_dir(&self.root)? {
            names.push(entry?.file_name().to_string_lossy().into_owned());
        }
        names.sort();
        Ok(Names(names))
    }
    fn render(_: &Empty, names: &Names) -> Vec<ContentBlock> {
        vec![ContentBlock::text(names.0.join("\n"))]
    }
}

fn program() -> ExitCode {
    Cli::new(|globals| {
        Registry::builder()
            .tool(Echo)
            .tool(Exit)
            .tool(Fail)
            .tool(Boom)
            .tool(Sleep)
            .tool(Tree)
            .tool(Ls {
                root: globals.root().to_owned(),
            })
            .build()
    })
    .name("tools")
    .about("The test tools.")
    .example_call("echo", r#"{"text":"hi"}"#)
    .run()
}

// ---------------------------------------------------------------------------
// The harness
// ---------------------------------------------------------------------------

fn main() -> ExitCode {
    if std::env::var_os(AS_PROGRAM).is_some() {
        return program();
    }
    // Every test function, by name; one left out here is dead code, which
    // the workspace's `clippy -D warnings` refuses.
    macro_rules! tests {
        ($($test:ident),* $(,)?) => { &[$((stringify!($test), $test as fn())),*] };
    }
    let tests: &[(&str, fn())] = tests![
        help_shows_an_example_per_command,
        no_command_prints_the_help_and_exits_2,
        usage_errors_are_one_line_and_exit_2,
        list_prints_a_table_or_json,
        schema_prints_definitions_in_each_dialect,
        call_reads_a_dialects_arguments,
        call_shows_the_four_views,
        call_json_is_one_object,
        error_results_exit_1,
        a_panic_is_one_line_and_an_error_result,
        call_reads_arguments_from_stdin,
        timeout_ends_the_call,
        root_confines_the_tools,
        terminal_controls_are_shown_escaped,
        call_log_replays,
        replay_reports_problems_and_bad_paths,
        replay_writes_an_html_page,
        replay_progress_only_on_a_terminal,
        replay_reads_several_logs_as_one_session,
        serve_store_that_cannot_be_used_is_a_usage_error,
        hostile_input_is_a_result_or_a_problem,
        a_closed_pipe_is_not_an_error,
    ];
    toolprism_testkit::harness::run(tests)
}

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

fn program_path() -> PathBuf {
    std::env::current_exe().expect("the test binary knows its path")
}

fn tools() -> Command {
    let mut command = Command::new(program_path());
    command
        .env(AS_PROGRAM, "1")
        .env_remove("RUST_BACKTRACE")
        .stdin(Stdio::null());
    command
}

fn run(args: &[&str]) -> Output {
    tools().args(args).output().expect("the program runs")
}

fn stdout(out: &Output) -> String {
    String::from_utf8(out.stdout.clone()).expect("stdout is UTF-8")
}

fn stderr(out: &Output) -> String {
    String::from_utf8(out.stderr.clone()).expect("stderr is UTF-8")
}

fn code(out: &Output) -> i32 {
    out.status.code().expect("the program exited")
}

/// Exit 2, nothing on stdout, one `error: ` line on stderr; returns it.
fn usage_error(args: &[&str]) -> String {
    let out = run(args);
    let err = stderr(&out);
    assert_eq!(code(&out), 2, "{args:?}: {err}");
    assert_eq!(stdout(&out), "", "{args:?}");
    assert_eq!(err.lines().count(), 1, "{args:?}: not one line: {err:?}");
    assert!(err.starts_with("error: "), "{args:?}: {err}");
    err
}

// ---------------------------------------------------------------------------
// The tests
// ---------------------------------------------------------------------------

fn help_shows_an_example_per_command() {
    let out = run(&["--help"]);
    assert_eq!(code(&out), 0);
    let help = stdout(&out);
    for needle in [
        "The test tools.",
        "Usage: tools [OPTIONS] <COMMAND>",
        "list",
        "schema",
        "call",
        "replay",
        "--root <DIR>",
        "Exit status: 0 ok, 1 the call returned an error result, 2 bad usage.",
        "tools call echo '{\"text\":\"hi\"}'",
    ] {
        assert!(help.contains(needle), "no {needle:?} in\n{help}");
    }
    for (command, example) in [
        ("list", "tools list --json"),
        ("schema", "tools schema --dialect anthropic --tool echo"),
        ("call", "tools call echo '{\"text\":\"hi\"}'"),
        ("replay", "tools replay session.jsonl --html session.html"),
    ] {
        let out = run(&[command, "--help"]);
        assert_eq!(code(&out), 0);
        let help = stdout(&out);
        assert!(help.contains("Example:"), "{command}: {help}");
        assert!(
            help.contains(example),
            "{command}: no {example:?} in\n{help}"
        );
    }
    assert!(stdout(&run(&["call", "--help"])).contains("Exit status: 0 the call succeeded"));
}

fn no_command_prints_the_help_and_exits_2() {
    let out = run(&[]);
    assert_eq!(code(&out), 2);
    assert_eq!(stdout(&out), "");
    assert!(stderr(&out).contains("Usage: tools"), "{}", stderr(&out));
}

fn usage_errors_are_one_line_and_exit_2() {
    let err = usage_error(&["frobnicate"]);
    assert!(
        err.contains("unrecognized subcommand 'frobnicate'"),
        "{err}"
    );
    assert!(err.contains("see 'tools --help'"), "{err}");
    let err = usage_error(&["list", "--jsn"]);
    assert!(err.contains("--jsn"), "{err}");
    assert!(
        err.contains("tip: a similar argument exists: '--json'"),
        "{err}"
    );
    let err = usage_error(&["call"]);
    assert!(err.contains("<NAME>"), "{err}");
    let err = usage_error(&["call", "nope", "{}"]);
    assert!(
        err.contains(
            "no tool \"nope\" is registered; the tools are: echo, exit, fail, boom, sleep, tree, ls"
        ),
        "{err}"
    );
    let err = usage_error(&["--root", "/no/such/dir", "list"]);
    assert!(err.contains("--root /no/such/dir"), "{err}");
    let file = tempfile::NamedTempFile::new().unwrap();
    let err = usage_error(&["list", "--root", file.path().to_str().unwrap()]);
    assert!(err.contains("not a directory"), "{err}");
    for bad in ["0", "-1", "NaN", "soon", "1e300"] {
        let err = usage_error(&["call", "sleep", r#"{"ms":1}"#, "--timeout", bad]);
        assert!(err.contains("--timeout"), "{err}");
    }
    let err = usage_error(&["replay"]);
    assert!(err.contains("<LOG>"), "{err}");
    // A huge unknown tool name is not echoed whole.
    let long = "x".repeat(10_000);
    let err = usage_error(&["call", &long]);
    assert!(err.len() < 400, "{}", err.len());
}

fn list_prints_a_table_or_json() {
    let out = run(&["list"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(stderr(&out), "");
    let table = stdout(&out);
    let lines: Vec<&str> = table.lines().collect();
    assert_eq!(lines.len(), 8, "{table}");
    let header: Vec<&str> = lines[0].split_whitespace().collect();
    assert_eq!(header, ["NAME", "KIND", "HINTS", "DESCRIPTION"]);
    let row = |name: &str| {
        lines
            .iter()
            .find(|l| l.split_whitespace().next() == Some(name))
            .unwrap_or_else(|| panic!("no row for {name}:\n{table}"))
            .to_string()
    };
    let echo = row("echo");
    assert!(echo.contains("other"), "{echo}");
    assert!(echo.contains("read-only, idempotent"), "{echo}");
    assert!(echo.ends_with("Echo the text back."), "{echo}");
    assert!(!table.contains("second paragraph"));
    assert!(row("exit").contains("execute"));
    assert!(row("fail").contains(" - "), "{}", row("fail"));
    // Columns line up.
    let at = lines[0].find("KIND").unwrap();
    assert!(lines.iter().skip(1).all(|l| l[at - 1..].starts_with(' ')));

    let out = run(&["list", "--json"]);
    assert_eq!(code(&out), 0);
    let text = stdout(&out);
    assert_eq!(text.lines().count(), 1);
    let listed: Value = serde_json::from_str(&text).expect("list --json is JSON");
    let names: Vec<&str> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["echo", "exit", "fail", "boom", "sleep", "tree", "ls"]
    );
    assert_eq!(
        listed[0],
        json!({
            "name": "echo",
            "description": "Echo the text back.\n\nThe second paragraph is not in the table.",
            "kind": "other",
            "annotations": {"readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false}
        })
    );
    assert_eq!(listed[1]["kind"], "execute");
}

fn schema_prints_definitions_in_each_dialect() {
    // Canonical: every definition with both schemas.
    let out = run(&["schema"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(stderr(&out), "");
    let all: Value = serde_json::from_str(&stdout(&out)).expect("schema prints JSON");
    let all = all.as_array().unwrap();
    assert_eq!(all.len(), 7);
    assert_eq!(all[0]["name"], "echo");
    assert_eq!(all[0]["inputSchema"]["required"], json!(["text"]));
    assert_eq!(
        all[0]["outputSchema"]["properties"]["chars"]["type"],
        "integer"
    );
    assert_eq!(all[0]["annotations"]["readOnlyHint"], true);

    // One tool: one object.
    let out = run(&["schema", "--tool", "exit"]);
    assert_eq!(code(&out), 0);
    let exit: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(exit["name"], "exit");
    assert_eq!(exit["kind"], "execute");

    // Every dialect prints valid JSON for the tools it can express.
    for dialect in toolprism::dialect::Dialect::ALL {
        let out = run(&["schema", "--dialect", dialect.name(), "--tool", "echo"]);
        assert_eq!(code(&out), 0, "{dialect}: {}", stderr(&out));
        let one: Value = serde_json::from_str(&stdout(&out)).unwrap();
        let expected = toolprism::dialect::definition(
            dialect,
            &Registry::builder()
                .tool(Echo)
                .build()
                .unwrap()
                .definition("echo")
                .unwrap()
                .clone(),
        )
        .unwrap();
        assert_eq!(&one, expected.json(), "{dialect}");
    }
    let out = run(&["schema", "--dialect", "openai"]);
    let tools: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(tools.as_array().unwrap().len(), 7);
    assert_eq!(tools[0]["type"], "function");

    // A tool the dialect cannot express: the others are printed, the
    // refusal is one line on stderr, exit 1.
    let out = run(&["schema", "--dialect", "gemini-openapi"]);
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    let tools: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let names: Vec<&str> = tools
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(
        !names.contains(&"tree") && names.contains(&"echo"),
        "{names:?}"
    );
    let err = stderr(&out);
    let refusals: Vec<&str> = err.lines().filter(|l| l.starts_with("error: ")).collect();
    assert_eq!(refusals.len(), 1, "{err}");
    assert!(
        refusals[0].contains("\"tree\"") && refusals[0].contains("recursive"),
        "{err}"
    );
    let out = run(&["schema", "--dialect", "gemini-openapi", "--tool", "tree"]);
    assert_eq!(code(&out), 1);
    assert_eq!(stdout(&out), "");
    assert_eq!(stderr(&out).lines().count(), 1, "{}", stderr(&out));

    let err = usage_error(&["schema", "--dialect", "openia"]);
    assert!(
        err.contains("openai") && err.contains("anthropic-strict"),
        "{err}"
    );
    let err = usage_error(&["schema", "--tool", "nope"]);
    assert!(err.contains("no tool \"nope\""), "{err}");
}

fn call_reads_a_dialects_arguments() {
    // OpenAI strict mode makes every field required and sends null for the
    // optional ones: read as the dialect, the null is the default.
    let args = r#"{"root":{"name":"a","children":[{"name":"b","children":[]}]},"max_depth":null}"#;
    let out = run(&["call", "tree", args, "--dialect", "openai", "--json"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    let object: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(object["value"], 2);
    // Read as canonical arguments, the same null breaks the schema.
    let out = run(&["call", "tree", args, "--json"]);
    assert_eq!(code(&out), 1);
    let object: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(object["error"]["code"], "INVALID_ARGS");
    // The log keeps the dialect, so replay reads the arguments the same way.
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("s.jsonl");
    let log_arg = log.to_str().unwrap();
    let out = run(&[
        "call",
        "tree",
        args,
        "--dialect",
        "openai",
        "--log",
        log_arg,
    ]);
    assert_eq!(code(&out), 0);
    assert!(
        std::fs::read_to_string(&log)
            .unwrap()
            .contains(r#""dialect":"openai""#)
    );
    let out = run(&["replay", log_arg]);
    assert_eq!(code(&out), 0);
    assert!(stdout(&out).contains("2 nodes"), "{}", stdout(&out));
}

fn call_shows_the_four_views() {
    let out = run(&["call", "echo", r#"{"text":"héllo"}"#]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(stderr(&out), "");
    let text = stdout(&out);
    let expected = [
        r#"call    echo {"text":"héllo"}"#,
        "model   echo: héllo",
        "value   {",
        r#"          "chars": 5,"#,
        r#"          "text": "héllo""#,
        "        }",
        r#"meta    {"chars":5}"#,
        "ui      ▶ [generic] echo (other)",
        r#"          │ input: {"text":"héllo"}"#,
        "        ◀ [generic] 5 chars",
        "          │ echo: héllo",
    ];
    assert_eq!(text.lines().collect::<Vec<_>>(), expected, "{text}");

    let out = run(&["call", "exit", r#"{"code":3}"#]);
    assert_eq!(code(&out), 0, "a call that reports exit 3 still succeeded");
    let text = stdout(&out);
    assert!(text.contains("ui      ▶ [terminal] $ exit 3"), "{text}");
    assert!(text.contains("◀ [terminal] exit 3 ✗"), "{text}");
}

fn call_json_is_one_object() {
    let out = run(&["call", "exit", r#"{"code":0}"#, "--json", "--id", "c-7"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let text = stdout(&out);
    assert_eq!(text.lines().count(), 1);
    let object: Value = serde_json::from_str(&text).expect("call --json is JSON");
    assert_eq!(
        object,
        json!({
            "callId": "c-7",
            "name": "exit",
            "content": [{"type": "text", "text": "exit code 0"}],
            "isError": false,
            "meta": {"code": 0},
            "value": {"code": 0},
            "callCard": {"card": "terminal", "title": "exit 0"},
            "resultCard": {"card": "terminal", "output": "exit code 0", "exitCode": 0}
        })
    );
    // The cards parse as cards.
    serde_json::from_value::<CallCard>(object["callCard"].clone()).unwrap();
    serde_json::from_value::<ResultCard>(object["resultCard"].clone()).unwrap();
}

fn error_results_exit_1() {
    let out = run(&["call", "fail", r#"{"why":"the disk is full"}"#]);
    assert_eq!(code(&out), 1);
    assert_eq!(stderr(&out), "");
    let text = stdout(&out);
    assert!(text.contains("model   Error: the disk is full"), "{text}");
    assert!(text.contains("error   NOPE: the disk is full"), "{text}");
    assert!(!text.contains("value "), "{text}");

    let out = run(&["call", "fail", r#"{"why":"no"}"#, "--json"]);
    assert_eq!(code(&out), 1);
    let object: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(object["isError"], true);
    assert_eq!(object["error"]["code"], "NOPE");
    assert!(object.get("value").is_none());
    assert_eq!(object["resultCard"]["card"], "generic");

    // Arguments that break the schema, or are not JSON: INVALID_ARGS, exit 1.
    for args in [
        r#"{"text":5}"#,
        "{not json",
        "[1,2]",
        r#"{"text":"a","extra":1}"#,
    ] {
        let out = run(&["call", "echo", args, "--json"]);
        assert_eq!(code(&out), 1, "{args}");
        let object: Value = serde_json::from_str(&stdout(&out)).unwrap();
        assert_eq!(object["error"]["code"], "INVALID_ARGS", "{args}");
    }
    // No arguments at all means {}.
    let out = run(&["call", "echo"]);
    assert_eq!(code(&out), 1);
    assert!(stdout(&out).contains("INVALID_ARGS"));
    assert!(stdout(&out).contains("text"), "{}", stdout(&out));
}

fn a_panic_is_one_line_and_an_error_result() {
    let out = run(&["call", "boom", "{}"]);
    assert_eq!(code(&out), 1);
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("panic in thread '"), "{err}");
    assert!(err.contains("render fell over"), "{err}");
    assert!(
        stdout(&out).contains("INVALID_TOOL_OUTPUT"),
        "{}",
        stdout(&out)
    );
    // RUST_BACKTRACE brings Rust's own report back.
    let out = tools()
        .args(["call", "boom", "{}"])
        .env("RUST_BACKTRACE", "0")
        .output()
        .unwrap();
    assert!(stderr(&out).contains("panicked at"), "{}", stderr(&out));
}

fn call_reads_arguments_from_stdin() {
    let big = "x".repeat(3 << 20);
    let mut child = tools()
        .args(["call", "echo", "-", "--json"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let payload = json!({ "text": big }).to_string();
    let writer = std::thread::spawn(move || stdin.write_all(payload.as_bytes()));
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let object: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(object["value"]["chars"], 3 << 20);

    let mut child = tools()
        .args(["call", "echo", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"{\"text\":\"\xff\"}")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(code(&out), 2);
    assert!(stderr(&out).contains("not UTF-8"), "{}", stderr(&out));
}

fn timeout_ends_the_call() {
    let started = Instant::now();
    let out = run(&[
        "call",
        "sleep",
        r#"{"ms":30000}"#,
        "--timeout",
        "0.3",
        "--json",
    ]);
    assert!(started.elapsed() < Duration::from_secs(10));
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    let object: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(object["error"]["code"], "TIMEOUT");
}

fn root_confines_the_tools() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "a").unwrap();
    std::fs::write(dir.path().join("b.txt"), "b").unwrap();
    let root = dir.path().to_str().unwrap();
    for args in [
        vec!["--root", root, "call", "ls", "{}", "--json"],
        vec!["call", "ls", "{}", "--json", "--root", root],
    ] {
        let out = run(&args);
        assert_eq!(code(&out), 0, "{}", stderr(&out));
        let object: Value = serde_json::from_str(&stdout(&out)).unwrap();
        assert_eq!(object["value"], json!(["a.txt", "b.txt"]));
    }
    // Without --root: the current directory.
    let out = tools()
        .args(["call", "ls", "{}", "--json"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    let object: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(object["value"], json!(["a.txt", "b.txt"]));
}

fn terminal_controls_are_shown_escaped() {
    let out = run(&[
        "call",
        "echo",
        r#"{"text":"red \u001b[31m alert \r over \u202e"}"#,
    ]);
    assert_eq!(code(&out), 0);
    let text = stdout(&out);
    assert!(!text.contains('\x1b'), "{text:?}");
    assert!(!text.contains('\r'), "{text:?}");
    assert!(!text.contains('\u{202e}'), "{text:?}");
    assert!(
        text.contains(r"red \u{1b}[31m alert \u{d} over \u{202e}"),
        "{text}"
    );
    // The JSON keeps the text as it is (escaped as JSON).
    let out = run(&["call", "echo", r#"{"text":"\u001b"}"#, "--json"]);
    let object: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(object["value"]["text"], "\x1b");
}

fn call_log_replays() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("session.jsonl");
    let log_arg = log.to_str().unwrap();
    let calls: [&[&str]; 3] = [
        &[
            "call",
            "echo",
            r#"{"text":"one"}"#,
            "--log",
            log_arg,
            "--id",
            "a",
        ],
        &[
            "call",
            "exit",
            r#"{"code":2}"#,
            "--log",
            log_arg,
            "--id",
            "b",
        ],
        &[
            "call",
            "fail",
            r#"{"why":"nope"}"#,
            "--log",
            log_arg,
            "--id",
            "c",
        ],
    ];
    for args in calls {
        run(args);
    }
    let text = std::fs::read_to_string(&log).unwrap();
    assert_eq!(text.lines().count(), 6, "{text}");
    assert!(!text.contains("\"value\""), "{text}");

    let out = run(&["replay", log_arg]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(stderr(&out), "", "no progress bar when piped, and no error");
    let shown = stdout(&out);
    let expected = [
        "#1 a · echo",
        "  ▶ [generic] echo (other)",
        r#"    │ input: {"text":"one"}"#,
        "  ◀ [generic] 3 chars",
        "    │ echo: one",
        "#2 b · exit",
        "  ▶ [terminal] $ exit 2",
        "  ◀ [terminal] exit 2 ✗",
        "    │ exit code 2",
        "#3 c · fail · ✗ NOPE",
        "  ▶ [generic] fail (other)",
        r#"    │ input: {"why":"nope"}"#,
        "  ◀ [generic] fail",
        "    │ Error: nope",
    ];
    let lines: Vec<&str> = shown.lines().collect();
    assert_eq!(lines[..expected.len()], expected, "{shown}");
    assert_eq!(lines.len(), expected.len() + 1, "{shown}");
    assert!(
        lines.last().unwrap().starts_with("─── 3 calls · "),
        "{shown}"
    );

    // The live cards and the replayed ones are the same.
    let live = run(&["call", "exit", r#"{"code":2}"#]);
    let live = stdout(&live);
    assert!(live.contains("◀ [terminal] exit 2 ✗\n"), "{live}");
}

fn replay_reports_problems_and_bad_paths() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("torn.jsonl");
    std::fs::write(
        &log,
        concat!(
            r#"{"type":"tool/call","callId":"1","name":"echo","arguments":"{\"text\":\"hi\"}"}"#,
            "\n",
            r#"{"type":"tool/result","callId":"9","content":[],"isError":false}"#,
            "\n",
            r#"{"type":"tool/call","callId":"2","name":"gone","arguments":"{}"}"#,
            "\n",
            r#"{"type":"tool/result","callId":"2","content":[{"type":"text","text":"old"}],"isError":false}"#,
            "\n",
            r#"{"type":"tool/call","callId":"3","na"#,
        ),
    )
    .unwrap();
    let out = run(&["replay", log.to_str().unwrap()]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let shown = stdout(&out);
    let lines: Vec<&str> = shown.lines().collect();
    assert_eq!(lines[0], "#1 1 · echo", "{shown}");
    assert_eq!(
        lines[3], "  (no result in the log: the session ended before it came)",
        "{shown}"
    );
    assert!(
        lines[4].starts_with("! line 2: a result for call id \"9\""),
        "{shown}"
    );
    assert_eq!(lines[5], "#2 2 · gone", "{shown}");
    assert!(lines.iter().any(|l| l.starts_with("! line 5: ")), "{shown}");
    assert!(
        lines
            .last()
            .unwrap()
            .starts_with("─── 2 calls, 1 without a result, 2 problems · "),
        "{shown}"
    );

    let err = usage_error(&["replay", dir.path().join("missing.jsonl").to_str().unwrap()]);
    assert!(err.contains("missing.jsonl"), "{err}");
    let err = usage_error(&["replay", dir.path().to_str().unwrap()]);
    assert!(err.contains("is a directory"), "{err}");
}

/// W16: the logs of the replicas of one server, read as one session: the
/// events in the order they were written (`timeMs`), a result joined to its
/// call whichever log holds each, each entry and problem naming its log.
fn replay_reads_several_logs_as_one_session() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, lines: &[&str]| {
        let path = dir.path().join(name);
        std::fs::write(&path, lines.join("\n") + "\n").unwrap();
        path.to_str().unwrap().to_owned()
    };
    let a = write(
        "a.jsonl",
        &[
            r#"{"type":"tool/call","callId":"r1","name":"echo","arguments":"{\"text\":\"first\"}","timeMs":100}"#,
            r#"{"type":"tool/result","callId":"r1","content":[{"type":"text","text":"echo: first"}],"isError":false,"meta":{"chars":5},"timeMs":110}"#,
            r#"{"type":"tool/call","callId":"r3","name":"echo","arguments":"{\"text\":\"third\"}","timeMs":300}"#,
        ],
    );
    let b = write(
        "b.jsonl",
        &[
            r#"{"type":"tool/call","callId":"r2","name":"echo","arguments":"{\"text\":\"second\"}","timeMs":200}"#,
            r#"{"type":"tool/result","callId":"r2","content":[{"type":"text","text":"echo: second"}],"isError":false,"meta":{"chars":6},"timeMs":250}"#,
            "not an event",
        ],
    );
    let c = write(
        "c.jsonl",
        &[
            r#"{"type":"tool/result","callId":"r3","content":[{"type":"text","text":"echo: third"}],"isError":false,"meta":{"chars":5},"timeMs":350}"#,
        ],
    );
    let out = run(&["replay", &c, &b, &a]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let shown = stdout(&out);
    let lines: Vec<&str> = shown.lines().collect();
    assert!(
        lines[0].starts_with("! ") && lines[0].contains("b.jsonl line 3: not a valid event"),
        "{shown}"
    );
    let heads: Vec<&str> = lines
        .iter()
        .copied()
        .filter(|l| l.starts_with('#'))
        .collect();
    assert_eq!(heads.len(), 3, "{shown}");
    assert!(
        heads[0].starts_with("#1 r1 · echo · in ") && heads[0].ends_with("a.jsonl"),
        "{shown}"
    );
    assert!(
        heads[1].starts_with("#2 r2 · echo · in ") && heads[1].ends_with("b.jsonl"),
        "{shown}"
    );
    assert!(
        heads[2].starts_with("#3 r3 · echo · in ") && heads[2].ends_with("a.jsonl"),
        "{shown}"
    );
    // The call on one replica drawn whole with its result from another.
    assert!(
        shown.contains("  ◀ [generic] 5 chars\n    │ echo: third"),
        "{shown}"
    );
    assert!(!shown.contains("no result in the log"), "{shown}");
    let last = lines.last().unwrap();
    assert!(last.starts_with("─── 3 calls, 1 problem · "), "{shown}");
    assert!(last.contains(" + "), "{shown}");

    let page = dir.path().join("session.html");
    let out = run(&["replay", &a, &b, &c, "--html", page.to_str().unwrap()]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(
        stdout(&out).contains("(3 calls, 1 problem)"),
        "{}",
        stdout(&out)
    );
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.contains("a.jsonl + b.jsonl + c.jsonl"),
        "the page names its logs"
    );

    let err = usage_error(&[
        "replay",
        &a,
        dir.path().join("gone.jsonl").to_str().unwrap(),
    ]);
    assert!(err.contains("gone.jsonl"), "{err}");
}

/// `serve --store`: a store that cannot be reached (or a build without
/// Redis) is a one-line usage error naming the option; `--lease` needs
/// `--store`, which needs `--http`.
fn serve_store_that_cannot_be_used_is_a_usage_error() {
    let err = usage_error(&[
        "serve",
        "--http",
        "127.0.0.1:0",
        "--store",
        "redis://127.0.0.1:1",
    ]);
    assert!(err.contains("--store"), "{err}");
    assert!(
        err.contains("could not be reached") || err.contains("built without Redis support"),
        "{err}"
    );
    let err = usage_error(&["serve", "--http", "127.0.0.1:0", "--store", "not a url"]);
    assert!(err.contains("--store"), "{err}");
    let out = run(&["serve", "--store", "redis://127.0.0.1:1"]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(stderr(&out).contains("--http"), "{}", stderr(&out));
    let out = run(&["serve", "--http", "127.0.0.1:0", "--lease", "5"]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(stderr(&out).contains("--store"), "{}", stderr(&out));
}

fn replay_writes_an_html_page() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("session.jsonl");
    let log_arg = log.to_str().unwrap();
    for args in [
        r#"{"text":"<script>alert(1)</script>"}"#,
        r#"{"text":"two"}"#,
    ] {
        run(&["call", "echo", args, "--log", log_arg]);
    }
    let page = dir.path().join("session.html");
    let out = run(&["replay", log_arg, "--html", page.to_str().unwrap()]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        format!("wrote {} (2 calls)\n", page.display())
    );
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"), "{}", &html[..100]);
    assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(!html.contains("<script>alert(1)"));

    // Never over the log itself.
    let err = usage_error(&["replay", log_arg, "--html", log_arg]);
    assert!(err.contains("the session log itself"), "{err}");
    assert!(
        std::fs::read_to_string(&log)
            .unwrap()
            .starts_with("{\"type\":\"tool/call\"")
    );
    // A page that cannot be written: exit 1, one line.
    let out = run(&[
        "replay",
        log_arg,
        "--html",
        dir.path().join("no/such/dir/p.html").to_str().unwrap(),
    ]);
    assert_eq!(code(&out), 1);
    assert_eq!(stderr(&out).lines().count(), 1, "{}", stderr(&out));
}

/// A log of `calls` echo calls, each with its result: `2 × calls` events.
fn big_log(path: &Path, calls: usize) {
    let mut text = String::with_capacity(calls * 220);
    for i in 0..calls {
        text.push_str(&format!(
            "{{\"type\":\"tool/call\",\"callId\":\"c{i}\",\"name\":\"echo\",\"arguments\":\"{{\\\"text\\\":\\\"line {i}\\\"}}\"}}\n\
             {{\"type\":\"tool/result\",\"callId\":\"c{i}\",\"content\":[{{\"type\":\"text\",\"text\":\"echo: line {i}\"}}],\"isError\":false,\"meta\":{{\"chars\":{}}}}}\n",
            format!("line {i}").len()
        ));
    }
    std::fs::write(path, text).unwrap();
}

/// Runs `shell_command` under a pseudo-terminal with `script`: stdout and
/// stderr of the command are the terminal, captured in the output.
fn under_a_terminal(shell_command: &str) -> Output {
    Command::new("script")
        .args(["-qec", shell_command, "/dev/null"])
        .env(AS_PROGRAM, "1")
        .env("TERM", "xterm")
        .env_remove("RUST_BACKTRACE")
        .stdin(Stdio::null())
        .output()
        .expect("`script` (util-linux) runs")
}

fn quoted(path: &Path) -> String {
    format!("'{}'", path.display().to_string().replace('\'', r"'\''"))
}

fn replay_progress_only_on_a_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("big.jsonl");
    big_log(&log, 50_000);
    assert!(std::fs::metadata(&log).unwrap().len() > 256 * 1024);

    // Piped: no bar, and every call drawn.
    let out = run(&["replay", log.to_str().unwrap()]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(stderr(&out), "", "a bar was drawn on a pipe");
    let shown = stdout(&out);
    assert!(shown.contains("#50000 c49999 · echo\n"));
    assert!(shown.ends_with(&format!("─── 50000 calls · {}\n", log.display())));

    // On a terminal (stdout sent to a file, stderr the terminal): a bar.
    let drawn = dir.path().join("drawn.txt");
    let out = under_a_terminal(&format!(
        "{} replay {} > {}",
        quoted(&program_path()),
        quoted(&log),
        quoted(&drawn)
    ));
    let terminal = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{terminal}");
    assert!(terminal.contains("replaying "), "no bar: {terminal:?}");
    assert!(terminal.contains("█"), "no bar: {terminal:?}");
    assert!(terminal.contains("calls"), "{terminal:?}");
    assert!(
        terminal.contains("\r\x1b[2K"),
        "the bar is not redrawn in place"
    );
    // It ends erased, so the terminal is left clean.
    assert!(
        terminal.trim_end_matches(['\r', '\n']).ends_with("\x1b[2K"),
        "{terminal:?}"
    );
    assert_eq!(std::fs::read_to_string(&drawn).unwrap(), shown);

    // A small log on a terminal: no bar.
    let small = dir.path().join("small.jsonl");
    big_log(&small, 10);
    let out = under_a_terminal(&format!(
        "{} replay {} > /dev/null",
        quoted(&program_path()),
        quoted(&small)
    ));
    let terminal = String::from_utf8_lossy(&out.stdout);
    assert!(!terminal.contains("replaying"), "{terminal:?}");
}

fn hostile_input_is_a_result_or_a_problem() {
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let dir = tempfile::tempdir().unwrap();
    let args_file = dir.path().join("deep.json");
    std::fs::write(&args_file, format!(r#"{{"text":{deep}}}"#)).unwrap();
    let out = tools()
        .args(["call", "echo", "-", "--json"])
        .stdin(std::fs::File::open(&args_file).unwrap())
        .output()
        .unwrap();
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    let object: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(object["error"]["code"], "INVALID_ARGS");
    assert!(object["error"]["message"].as_str().unwrap().len() < 1024);
    // The human view stays short.
    let out = tools()
        .args(["call", "echo", "-"])
        .stdin(std::fs::File::open(&args_file).unwrap())
        .output()
        .unwrap();
    assert_eq!(code(&out), 1);
    assert!(stdout(&out).len() < 4096, "{} bytes", stdout(&out).len());

    // 10 MB in, a capped view out; the JSON has all of it.
    let big = "a line of text\n".repeat(700_000);
    let args_file = dir.path().join("args.json");
    std::fs::write(&args_file, json!({ "text": big }).to_string()).unwrap();
    let out = tools()
        .args(["call", "echo", "-"])
        .stdin(std::fs::File::open(&args_file).unwrap())
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(stdout(&out).len() < 8192, "{} bytes", stdout(&out).len());

    // A log with a deep line, a 10 MB result, bytes that are not UTF-8, and
    // a torn end: every problem said, every call drawn, output bounded.
    let log = dir.path().join("hostile.jsonl");
    let mut bytes = Vec::new();
    bytes.extend_from_slice(
        format!(
            "{}\n{}\n",
            json!({"type": "tool/call", "callId": "1", "name": "echo", "arguments": deep}),
            json!({"type": "tool/result", "callId": "1", "content": [{"type": "text", "text": big}], "isError": false}),
        )
        .as_bytes(),
    );
    bytes.extend_from_slice(
        format!(r#"{{"type":"tool/call","callId":"2","name":{deep}}}"#).as_bytes(),
    );
    bytes.extend_from_slice(b"\n{\"type\":\"tool/call\",\"callId\":\"\xff\xfe\"}\n");
    bytes.extend_from_slice(br#"{"type":"tool/result","callId":"1","con"#);
    std::fs::write(&log, bytes).unwrap();
    let out = run(&["replay", log.to_str().unwrap()]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let shown = stdout(&out);
    assert!(shown.len() < 8192, "{} bytes", shown.len());
    assert!(shown.starts_with("#1 1 · echo\n"), "{shown}");
    assert!(shown.contains("more lines"), "{shown}");
    let problems: Vec<&str> = shown.lines().filter(|l| l.starts_with("! line ")).collect();
    assert_eq!(problems.len(), 3, "{shown}");
    assert!(
        shown
            .lines()
            .last()
            .unwrap()
            .starts_with("─── 1 call, 3 problems · "),
        "{shown}"
    );
}

fn a_closed_pipe_is_not_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("big.jsonl");
    big_log(&log, 5_000);
    let out = Command::new("bash")
        .args([
            "-c",
            &format!(
                "set -o pipefail; {} replay {} | head -n 1",
                quoted(&program_path()),
                quoted(&log)
            ),
        ])
        .env(AS_PROGRAM, "1")
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "#1 c0 · echo\n");
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
    assert_eq!(out.status.code(), Some(0));
}
