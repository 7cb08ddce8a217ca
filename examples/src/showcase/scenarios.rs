//! The scenarios: which calls the showcase makes, and what each must show.

use serde_json::{Value, json};

use super::fixtures::{EDIT_MARKER, Fixtures, GLOB_MARKER, GREP_MARKER, WEB_MARKER};
use crate::database::{notes_marker, phone_of};

/// Which registry runs a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Registry {
    /// Every tool, no policy.
    Main,
    /// `sql_query` with the content-masking policy.
    MaskContent,
    /// `sql_query` with the phone-column redaction policy.
    RedactValue,
    /// `bash` and `write` under the default sandbox (`workspace-write`,
    /// network off), whatever `--sandbox` says.
    Confined,
    /// `bash` and `write` under `read-only`.
    ReadOnly,
}

/// Something a call must show; checked right after it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expect {
    /// A success.
    Success,
    /// An error with this code.
    Error(&'static str),
    /// The value's JSON holds this text.
    ValueHas(String),
    /// The value's JSON does not hold this text.
    ValueLacks(String),
    /// The content does not hold this text.
    ContentLacks(String),
    /// The content holds this text.
    ContentHas(String),
    /// The meta does not hold this text.
    MetaLacks(String),
    /// The session log does not hold this text anywhere (checked after the run).
    LogLacks(String),
    /// This call's own persisted events do not hold this text.
    PersistedLacks(String),
    /// The result card has this tag.
    ResultCard(&'static str),
    /// A program made this many calls, each with its own cards.
    NestedCalls(usize),
}

/// Text that is in the value but nowhere persisted: not in content, not in
/// meta, not in the log.
pub fn value_only(marker: impl Into<String>) -> Vec<Expect> {
    let m = marker.into();
    vec![
        Expect::ValueHas(m.clone()),
        Expect::ContentLacks(m.clone()),
        Expect::MetaLacks(m.clone()),
        Expect::LogLacks(m),
    ]
}

/// One call of a scenario.
#[derive(Debug, Clone)]
pub struct Call {
    /// Which registry runs it.
    pub registry: Registry,
    /// The tool's name.
    pub tool: &'static str,
    /// The arguments.
    pub args: Value,
    /// What it demonstrates, in a line.
    pub note: &'static str,
    /// What must hold.
    pub expect: Vec<Expect>,
}

/// A named group of calls.
#[derive(Debug, Clone)]
pub struct Scenario {
    /// Its name (`--scenario NAME`).
    pub name: &'static str,
    /// What it shows.
    pub about: &'static str,
    /// Its calls, in order.
    pub calls: Vec<Call>,
}

fn call(tool: &'static str, args: Value, note: &'static str, expect: Vec<Expect>) -> Call {
    Call {
        registry: Registry::Main,
        tool,
        args,
        note,
        expect,
    }
}

fn with(mut expect: Vec<Expect>, more: impl IntoIterator<Item = Expect>) -> Vec<Expect> {
    expect.extend(more);
    expect
}

/// The program of the `code-mode` scenario: what a model would send to
/// `run_code`, written against the SDK (`cargo run -- sdk`).
pub const CODE_MODE_PROGRAM: &str = r#"const rust = await tools.glob({ pattern: "src/**/*.rs" });
const todos = await tools.grep({ pattern: "TODO" });
// Beyond the 100 matches the model would read: only the value has them.
const late = todos.matches.filter((m) => m.line.includes("VALUE-ONLY")).length;
const first = await tools.read({ path: todos.matches[0].path, limit: 3 });
console.log(`${rust.paths.length} Rust files, ${todos.matches.length} TODOs`);
return { todos: todos.matches.length, late, first: first.path, lines: first.lines.map((l) => l.text) };"#;

/// The names of every scenario, in order.
pub const NAMES: [&str; 13] = [
    "read",
    "grep",
    "glob",
    "bash",
    "sandbox",
    "edit",
    "web_fetch",
    "sql_query",
    "third-party",
    "render-panic",
    "redaction",
    "code-mode",
    "agent",
];

/// Every scenario, in order, over `fixtures`.
pub fn all(fixtures: &Fixtures) -> Vec<Scenario> {
    use Expect::*;
    let sql = "SELECT id, name, phone, city, notes FROM customers ORDER BY id";
    let phones = "SELECT id, name, phone FROM customers ORDER BY id LIMIT 3";
    vec![
        Scenario {
            name: "read",
            about: "a window of a file as numbered lines; the workspace root is a wall",
            calls: vec![
                call(
                    "read",
                    json!({"path": "src/lib.rs", "offset": 1, "limit": 12}),
                    "lines 1-12 of a 44-line file: the footer says where to continue",
                    vec![Success, ResultCard("read")],
                ),
                call(
                    "read",
                    json!({"path": "../outside.txt"}),
                    "a path that climbs out of the workspace is refused",
                    vec![
                        Error("OUTSIDE_WORKSPACE"),
                        ContentLacks("not for the model".into()),
                    ],
                ),
            ],
        },
        Scenario {
            name: "grep",
            about: "ripgrep's engine; the value keeps every match, the model and the card see 100",
            calls: vec![call(
                "grep",
                json!({"pattern": "TODO"}),
                "243 matches (files in .gitignore skipped): 100 shown, truncated: true, total: 243",
                with(value_only(GREP_MARKER), [Success, ResultCard("search")]),
            )],
        },
        Scenario {
            name: "glob",
            about: "paths by pattern; the search card cannot hide that it is truncated",
            calls: vec![call(
                "glob",
                json!({"pattern": "src/**/*.rs"}),
                "123 files, 100 shown",
                with(value_only(GLOB_MARKER), [Success, ResultCard("search")]),
            )],
        },
        Scenario {
            name: "bash",
            about: "a real process; the exit code or signal comes from meta, not from the text",
            calls: vec![
                call(
                    "bash",
                    json!({"command": "echo \"in $(basename \"$PWD\")\"; ls src | head -3; echo 'a warning' >&2",
                           "description": "look around"}),
                    "stdout, stderr and exit code 0",
                    vec![
                        Success,
                        ResultCard("terminal"),
                        ContentHas("[exit code: 0]".into()),
                    ],
                ),
                call(
                    "bash",
                    json!({"command": "grep -c discount src/lib.rs; exit 3"}),
                    "a non-zero exit is a result, not an error",
                    vec![Success, ContentHas("[exit code: 3]".into())],
                ),
                call(
                    "bash",
                    json!({"command": "sleep 5", "timeoutMs": 300}),
                    "the timeout kills every process the command started: signal SIGKILL, timedOut: true",
                    vec![Success, ContentHas("[killed by signal: SIGKILL]".into())],
                ),
                call(
                    "bash",
                    json!({"command": "seq 1 5000"}),
                    "24 KB of output: 16 KiB kept, then spilled to a file; the card's exit code still comes from meta",
                    vec![
                        Success,
                        ContentHas("is stored at".into()),
                        ContentHas("[stdout truncated".into()),
                        ResultCard("terminal"),
                    ],
                ),
            ],
        },
        sandbox(fixtures),
        Scenario {
            name: "edit",
            about: "edit and write; diff cards with 3 lines of context from `similar`",
            calls: vec![
                call(
                    "edit",
                    json!({"path": "config/app.toml", "oldText": "port = 8080\n", "newText": "port = 9090\n"}),
                    "one exact replacement; the whole file is in the value only",
                    with(value_only(EDIT_MARKER), [Success, ResultCard("diff")]),
                ),
                call(
                    "edit",
                    json!({"path": "src/lib.rs", "oldText": "// TODO", "newText": "// DONE"}),
                    "oldText occurs twice: a clear error, nothing written",
                    vec![Error("AMBIGUOUS_MATCH")],
                ),
                call(
                    "write",
                    json!({"path": "notes/plan.md", "content": "# Plan\n\n- discounts\n- tests for remove\n"}),
                    "a new file: the diff card falls back to the arguments",
                    vec![Success, ResultCard("diff")],
                ),
            ],
        },
        Scenario {
            name: "web_fetch",
            about: "HTTP GET against the showcase's own server on 127.0.0.1",
            calls: vec![
                call(
                    "web_fetch",
                    json!({"url": fixtures.server.url("/article")}),
                    "14 KB fetched whole, 10,000 chars read: the card says truncated",
                    with(value_only(WEB_MARKER), [Success, ResultCard("web")]),
                ),
                call(
                    "web_fetch",
                    json!({"url": fixtures.server.url("/missing")}),
                    "a 404 is a value with statusCode 404, not a tool error",
                    vec![Success, ResultCard("web")],
                ),
            ],
        },
        Scenario {
            name: "sql_query",
            about: "read-only SQLite; the value keeps 50 of 1,200 rows and the total",
            calls: vec![
                call(
                    "sql_query",
                    json!({ "sql": sql }),
                    "50 of 1,200 rows; long notes are cut in the table, whole in the value",
                    with(
                        value_only(notes_marker(1)),
                        [Success, ResultCard("generic")],
                    ),
                ),
                call(
                    "sql_query",
                    json!({"sql": "DELETE FROM customers WHERE id = 1"}),
                    "a statement that writes is refused before it runs",
                    vec![Error("NOT_READ_ONLY")],
                ),
            ],
        },
        Scenario {
            name: "third-party",
            about: "a tool with no presenters: generic cards, replayed the same",
            calls: vec![call(
                "acme_ticket",
                json!({"id": "ACME-42"}),
                "generic call card (name + raw input), generic result card (content)",
                vec![Success, ResultCard("generic")],
            )],
        },
        Scenario {
            name: "render-panic",
            about: "a tool whose render panics: an error result, never a crash",
            calls: vec![call(
                "flaky_render",
                json!({}),
                "INVALID_TOOL_OUTPUT: output.render failed, no value, generic card",
                vec![Error("INVALID_TOOL_OUTPUT"), ResultCard("generic")],
            )],
        },
        Scenario {
            name: "redaction",
            about: "post-execute policies: replacing content is presentation, replacing the value is redaction",
            calls: vec![
                Call {
                    registry: Registry::MaskContent,
                    tool: "sql_query",
                    args: json!({ "sql": phones }),
                    note: "content replaced: the model reads [phone], a program still gets the numbers",
                    expect: vec![
                        Success,
                        ContentLacks(phone_of(1)),
                        ValueHas(phone_of(1)),
                        PersistedLacks(phone_of(1)),
                    ],
                },
                Call {
                    registry: Registry::RedactValue,
                    tool: "sql_query",
                    args: json!({ "sql": phones }),
                    note: "value replaced: the phone column is gone from value, content and meta",
                    expect: vec![
                        Success,
                        ValueLacks(phone_of(1)),
                        ValueLacks("phone".into()),
                        ContentLacks(phone_of(1)),
                        ContentLacks("phone".into()),
                        MetaLacks("phone".into()),
                        PersistedLacks(phone_of(1)),
                    ],
                },
            ],
        },
        Scenario {
            name: "code-mode",
            about: "one program answers one question: glob, grep and read in a single call; the values stay in the program",
            calls: vec![call(
                "run_code",
                json!({"description": "count the Rust files and the TODOs, and show the first TODO's file",
                       "code": CODE_MODE_PROGRAM}),
                "3 nested calls, each with its own card; only what the program logs and returns reaches the model",
                vec![
                    Success,
                    NestedCalls(3),
                    ValueHas("\"todos\":243".into()),
                    ContentHas("123 Rust files, 243 TODOs".into()),
                    LogLacks(GREP_MARKER.into()),
                    ResultCard("generic"),
                ],
            )],
        },
        agent(),
    ]
}

/// The `sandbox` scenario: what the kernel refuses a command, and the file
/// tools in `read-only` mode. Where this machine's kernel cannot enforce
/// the sandbox, every `bash` call is `SANDBOX_UNAVAILABLE` instead, and
/// the scenario says so.
fn sandbox(fixtures: &Fixtures) -> Scenario {
    use Expect::*;
    let enforced = toolprism_tools::sandbox::Confinement::prepare(
        &toolprism_tools::sandbox::SandboxPolicy::default(),
        fixtures.workspace.root(),
    )
    .is_ok();
    let refused = |more: &[&str]| -> Vec<Expect> {
        if !enforced {
            return vec![Error("SANDBOX_UNAVAILABLE")];
        }
        let mut expect = vec![
            Success,
            ResultCard("terminal"),
            ContentHas("[sandbox:".into()),
        ];
        expect.extend(more.iter().map(|m| ContentHas((*m).into())));
        expect
    };
    let port = fixtures
        .server
        .url("/")
        .split(':')
        .nth(2)
        .unwrap_or("80")
        .trim_end_matches('/')
        .to_owned();
    let bash = |registry, command: String, note, expect| Call {
        registry,
        tool: "bash",
        args: json!({ "command": command }),
        note,
        expect,
    };
    Scenario {
        name: "sandbox",
        about: "bash confined by the kernel (Landlock, seccomp), a chosen environment, the file tools under the same policy",
        calls: vec![
            bash(
                Registry::Confined,
                "echo changed >> ../outside.txt; touch ~/.toolprism-showcase; echo kept > inside.txt && cat inside.txt".to_owned(),
                "workspace-write: writes outside the root are refused, inside it they land; the model is told",
                refused(&["Permission denied", "kept"]),
            ),
            bash(
                Registry::Confined,
                format!("exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected"),
                "the network is off: even the showcase's own server on 127.0.0.1 is out of reach",
                refused(&["Operation not permitted", "the network is off"]),
            ),
            bash(
                Registry::Confined,
                "env | cut -d= -f1 | sort | tr '\\n' ' '".to_owned(),
                "a chosen environment: PATH, HOME, LANG… but none of the CARGO_* variables `cargo run` set",
                if enforced {
                    vec![Success, ContentHas("PATH".into()), ContentLacks("CARGO_PKG".into())]
                } else {
                    vec![Error("SANDBOX_UNAVAILABLE")]
                },
            ),
            bash(
                Registry::ReadOnly,
                "echo no > new-in-read-only.txt".to_owned(),
                "read-only: not even the root is writable",
                refused(&["read-only mode"]),
            ),
            Call {
                registry: Registry::ReadOnly,
                tool: "write",
                args: json!({"path": "notes/plan.md", "content": "no"}),
                note: "read-only: the file tools refuse too, with their own code",
                expect: vec![Error("SANDBOX_DENIED")],
            },
        ],
    }
}

/// The `agent` scenario: a scripted model (Anthropic's Messages API, on
/// loopback: `model_server.rs`) drives the calls through
/// `toolprism::provider::Agent`. Its calls are the model's, in order; the
/// arguments here are what the script asks for.
fn agent() -> Scenario {
    use Expect::*;
    Scenario {
        name: "agent",
        about: "a model's loop: its tool_use blocks read, run through the pipeline, answered as tool_result blocks",
        calls: vec![
            call(
                "glob",
                json!({"pattern": "src/**/*.rs"}),
                "turn 1, with grep: two read-only calls run together",
                vec![Success, ResultCard("search")],
            ),
            call(
                "grep",
                json!({"pattern": "TODO"}),
                "turn 1: the results go back in one user message, tool_result blocks first",
                vec![Success, ResultCard("search")],
            ),
            call(
                "read",
                json!({"path": "<the first file glob found>", "limit": 3}),
                "turn 2: the model chose the path from the glob result it read",
                vec![Success, ResultCard("read")],
            ),
        ],
    }
}
