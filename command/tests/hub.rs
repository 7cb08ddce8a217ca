//! A `toolprism::cli` program as a hub: `serve --import … --mcp-config …
//! --mode both`, run as a real process and driven by the unmodified PyPI
//! `mcp` client (`tests/support/hub_client.py`), over two real servers
//! (toolprism's test server, and the tiny hand-written server of the mcp
//! crate's tests). Checks what the client saw, what the hub's session log
//! holds, what the server behind it recorded, and that the log replays to
//! the cards the client was sent.
//!
//! A test binary of its own (`harness = false`), which is also the program
//! under test: started with `TOOLPRISM_HUB_TEST_BIN` set, its `main` runs
//! the command line instead of the tests.

#[path = "../../mcp/tests/support/import_env.rs"]
mod import_env;
#[path = "../../mcp/tests/support/oauth_server.rs"]
mod oauth_server;
#[path = "../../mcp/tests/support/tls.rs"]
mod tls;

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use toolprism::cli::Cli;
use toolprism::code::CodeMode;
use toolprism::mcp::import::{Import, Imports};
use toolprism::replay::replay_log;
use toolprism::{ContentBlock, Registry, tool};

const AS_PROGRAM: &str = "TOOLPRISM_HUB_TEST_BIN";
/// Set with [`AS_PROGRAM`]: build the registry without the imports.
const FORGETFUL: &str = "TOOLPRISM_HUB_TEST_FORGETS_IMPORTS";

#[derive(Clone, Deserialize, JsonSchema)]
struct ShoutArgs {
    /// The text to shout.
    text: String,
}

struct Shout;

/// Upper-case the text: a native tool next to the imported ones.
#[tool(name = "shout", read_only)]
impl Shout {
    fn execute(args: ShoutArgs) -> String {
        args.text.to_uppercase()
    }
    fn render(_: &ShoutArgs, value: &String) -> Vec<ContentBlock> {
        vec![ContentBlock::text(value)]
    }
}

#[derive(Clone, Deserialize, JsonSchema)]
struct WhisperArgs {
    /// The text to whisper.
    text: String,
}

struct Whisper;

/// Lower-case the text: the tool of the servers behind HTTPS and OAuth.
#[tool(name = "whisper", read_only)]
impl Whisper {
    fn execute(args: WhisperArgs) -> String {
        args.text.to_lowercase()
    }
    fn render(_: &WhisperArgs, value: &String) -> Vec<ContentBlock> {
        vec![ContentBlock::text(value)]
    }
}

fn whispering() -> Registry {
    Registry::builder().tool(Whisper).build().unwrap()
}

/// The hub: its own tool, the imported ones, Code Mode over all of them.
fn program() -> ExitCode {
    Cli::new(|globals| {
        let builder = Registry::builder().tool(Shout);
        let builder = if std::env::var_os(FORGETFUL).is_some() {
            builder
        } else {
            globals.imports().register_in(builder)
        };
        builder.code_mode(globals.mode()).build()
    })
    .name("hub")
    .run()
}

fn main() -> ExitCode {
    if std::env::var_os(AS_PROGRAM).is_some() {
        return program();
    }
    let tests: &[(&str, fn())] = &[
        (
            "p7_the_hub_serves_imported_tools_to_the_python_client",
            p7_the_hub_serves_imported_tools_to_the_python_client,
        ),
        (
            "imports_that_fail_are_usage_errors",
            imports_that_fail_are_usage_errors,
        ),
        (
            "the_hub_is_transparent_for_the_everything_servers_logs_elicitation_and_list_changed",
            the_hub_is_transparent_for_the_everything_servers_logs_elicitation_and_list_changed,
        ),
        (
            "an_https_import_is_trusted_with_its_ca",
            an_https_import_is_trusted_with_its_ca,
        ),
        (
            "import_login_keeps_tokens_that_imports_then_use",
            import_login_keeps_tokens_that_imports_then_use,
        ),
    ];
    toolprism_testkit::harness::run(tests)
}

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

fn python() -> toolprism_testkit::PythonEnv {
    toolprism_testkit::python_env("mcp-import", &import_env::import_python())
}

/// toolprism's MCP test server (the mcp crate's example), built when
/// missing.
fn test_server() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let profile = exe.parent().unwrap().parent().unwrap();
    let server = profile.join("examples").join("mcp_test_server");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let mut build = Command::new(cargo);
    // Not the variables cargo set for this test (CARGO_MANIFEST_DIR,
    // CARGO_PKG_NAME, …): build scripts that watch them (ring's) would run
    // again, and the next outer build would undo it.
    for (key, _) in std::env::vars_os() {
        if let Some(key) = key.to_str()
            && key.starts_with("CARGO_")
            && key != "CARGO_HOME"
            && key != "CARGO_TARGET_DIR"
        {
            build.env_remove(key);
        }
    }
    let status = build
        .args([
            "build",
            "-p",
            "toolprism-mcp",
            "--example",
            "mcp_test_server",
            "--target-dir",
        ])
        .arg(profile.parent().unwrap())
        .status()
        .unwrap();
    assert!(status.success(), "building mcp_test_server failed");
    server
}

fn hub() -> Command {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command.env(AS_PROGRAM, "1");
    command
}

fn lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

fn quoted(path: &Path) -> String {
    format!("'{}'", path.display())
}

// ---------------------------------------------------------------------------
// The tests
// ---------------------------------------------------------------------------

fn p7_the_hub_serves_imported_tools_to_the_python_client() {
    let dir = tempfile::tempdir().unwrap();
    let server_log = dir.path().join("server.jsonl");
    let hub_log = dir.path().join("hub.jsonl");
    let events = dir.path().join("tiny.jsonl");
    let tiny_script = workspace().join("mcp/tests/support/import_server.py");
    let config = dir.path().join("servers.json");
    std::fs::write(
        &config,
        json!({"mcpServers": {"tiny": {"command": "python3",
            "args": [tiny_script, "--events", events],
            "includeTools": ["add", "broken", "blocks"]}}})
        .to_string(),
    )
    .unwrap();
    let server = test_server();
    let import = format!("{} --server-log {}", quoted(&server), quoted(&server_log));
    let python = python();
    let output = python
        .command([workspace().join("command/tests/support/hub_client.py")])
        .arg("--stdio")
        .arg(std::env::current_exe().unwrap())
        .args([
            "serve",
            "--mode",
            "both",
            "--import",
            &import,
            "--mcp-config",
        ])
        .arg(&config)
        .arg("--log")
        .arg(&hub_log)
        .env(AS_PROGRAM, "1")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "hub_client.py failed: {stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report: Value = serde_json::from_str(stdout.trim()).unwrap();

    // Listed next to the native tool, and run_code.
    let names: Vec<&str> = report["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "shout",
            "echo",
            "fail",
            "slow",
            "numbers",
            "word",
            "picture",
            "whoami",
            "steps",
            "twice",
            "ask_model",
            "ask_model_blocking",
            "ask_user",
            "chatty",
            "guarded",
            "media",
            "tiny__add",
            "tiny__broken",
            "tiny__blocks",
            "run_code"
        ]
    );
    let tool = |name: &str| {
        report["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == name)
            .unwrap()
            .clone()
    };
    // The kind the server behind declares (its hints alone would say read).
    assert_eq!(tool("echo")["_meta"]["toolprism/kind"], "other");
    assert_eq!(tool("echo")["annotations"]["readOnlyHint"], true);
    assert_eq!(tool("tiny__add")["annotations"]["readOnlyHint"], true);
    // The tiny server's own `_meta` is not re-served.
    assert!(
        tool("tiny__blocks")["_meta"]
            .get("example.com/ui")
            .is_none(),
        "{}",
        tool("tiny__blocks")
    );
    // The SDK run_code's description carries is typed over the imports.
    let sdk = tool("run_code")["description"].as_str().unwrap().to_owned();
    assert!(sdk.contains("tiny__add"), "{sdk}");
    assert!(sdk.contains("sum: number"), "{sdk}");

    let result = |key: &str| report[key]["result"].clone();
    assert_eq!(
        result("echo")["structuredContent"],
        json!({"text": "through the hub", "len": 15})
    );
    assert_eq!(
        result("echo")["content"][0]["text"],
        "echo: through the hub"
    );
    assert_eq!(result("fail")["isError"], true);
    assert_eq!(result("fail")["_meta"]["toolprism/errorCode"], "NOPE");
    assert_eq!(
        result("bad_args")["_meta"]["toolprism/errorCode"],
        "INVALID_ARGS"
    );
    // Wrapped again for this client's version, as the server had.
    assert_eq!(
        result("numbers")["structuredContent"],
        json!({"value": [1, 2, 3]})
    );
    assert_eq!(result("add")["structuredContent"], json!({"sum": 5}));
    assert_eq!(
        result("broken")["_meta"]["toolprism/errorCode"],
        "INVALID_TOOL_OUTPUT"
    );
    assert!(
        result("blocks").get("structuredContent").is_none(),
        "{}",
        result("blocks")
    );
    assert_eq!(result("blocks")["content"].as_array().unwrap().len(), 6);
    assert_eq!(result("native")["content"][0]["text"], "HI");
    assert_eq!(
        report["progress"],
        json!(
            [1, 2, 3, 4].map(
                |i| json!({"done": i as f64, "total": 4.0, "message": format!("step {i} of 4")})
            )
        )
    );
    assert_eq!(report["cancelled"], true);
    assert_eq!(
        result("after_cancel")["content"][0]["text"],
        "echo: still here"
    );
    let program = &result("run_code")["structuredContent"];
    assert_eq!(
        program,
        &json!({"logs": [], "result": {"sum": 42, "len": 14, "refused": "INVALID_TOOL_OUTPUT"}}),
        "{program}"
    );

    // The server behind the hub: the bad arguments never reached it, the
    // cancellation did.
    let deadline = Instant::now() + Duration::from_secs(10);
    let behind = loop {
        let events = lines(&server_log);
        if events.iter().any(|e| e["error"]["code"] == "ABORTED") || Instant::now() > deadline {
            break events;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(
        behind.iter().any(|e| e["error"]["code"] == "ABORTED"),
        "{behind:#?}"
    );
    assert!(
        behind
            .iter()
            .filter(|e| e["type"] == "tool/call")
            .all(|e| !e["arguments"].as_str().unwrap().contains(r#""text":5"#)),
        "{behind:#?}"
    );

    // The hub's log: every call, its code; never a structured value.
    let logged = lines(&hub_log);
    let text = std::fs::read_to_string(&hub_log).unwrap();
    assert!(!text.contains("\"sum\""), "{text}");
    assert!(!text.contains("\"len\""), "{text}");
    let code_of = |name: &str| {
        let call = logged
            .iter()
            .find(|e| e["type"] == "tool/call" && e["name"] == name)
            .unwrap();
        logged
            .iter()
            .find(|e| e["type"] == "tool/result" && e["callId"] == call["callId"])
            .map(|e| e["error"]["code"].clone())
            .unwrap()
    };
    assert_eq!(code_of("fail"), "NOPE");
    assert_eq!(code_of("tiny__broken"), "INVALID_TOOL_OUTPUT");
    assert_eq!(code_of("slow"), "ABORTED");
    assert!(
        logged
            .iter()
            .any(|e| e["type"] == "tool/nested-call" && e["name"] == "tiny__add")
    );

    // Replayed with the same tools (connected again here), every card is
    // the card the client was sent.
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let imports = runtime
        .block_on(Imports::connect(vec![
            Import::stdio(server.to_string_lossy(), Vec::<String>::new()),
            Import::stdio("python3", [tiny_script.to_string_lossy().into_owned()])
                .name("tiny")
                .prefix("tiny")
                .allow(["add", "broken", "blocks"]),
        ]))
        .unwrap();
    let _entered = runtime.enter();
    let registry = imports
        .register_in(Registry::builder().tool(Shout))
        .code_mode(toolprism::Mode::Both)
        .build()
        .unwrap();
    let replayed = replay_log(&hub_log, &registry).unwrap();
    assert!(replayed.problems.is_empty(), "{:?}", replayed.problems);
    for key in [
        "echo", "fail", "bad_args", "numbers", "add", "broken", "blocks", "native", "steps",
    ] {
        let sent = &result(key)["_meta"];
        let entry = replayed
            .entries
            .iter()
            .find(|e| serde_json::to_value(&e.call_card).unwrap() == sent["toolprism/callCard"])
            .unwrap_or_else(|| panic!("no replayed call card equals {key}'s: {sent}"));
        assert_eq!(
            serde_json::to_value(&entry.result_card).unwrap(),
            sent["toolprism/resultCard"],
            "{key}"
        );
    }
}

/// `server-everything` (npm, pinned) behind the hub, the Python client in
/// front (`tests/support/hub_everything.py`): the server's log messages
/// reach the client named after the server, during a call and on their
/// own; its elicitation is forwarded to the client and its answer back;
/// after the server is killed and started again, it lists its tools again
/// (and says so), the hub builds its registry again, and the client is
/// sent `notifications/tools/list_changed`.
fn the_hub_is_transparent_for_the_everything_servers_logs_elicitation_and_list_changed() {
    let dir = tempfile::tempdir().unwrap();
    let npm = toolprism_testkit::npm_packages("mcp-servers", import_env::NPM_SERVERS);
    let everything = npm.join("node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    let pidfile = dir.path().join("everything.pid");
    let capture = dir.path().join("everything.in");
    let config = dir.path().join("servers.json");
    std::fs::write(
        &config,
        json!({"mcpServers": {"everything": {"command": "sh",
            "args": [workspace().join("mcp/tests/support/wrap.sh"), capture, pidfile,
                     "node", everything, "stdio"],
            "timeout": 30000}}})
        .to_string(),
    )
    .unwrap();
    let output = python()
        .command([workspace().join("command/tests/support/hub_everything.py")])
        .arg("--pidfile")
        .arg(&pidfile)
        .arg("--stdio")
        .arg(std::env::current_exe().unwrap())
        .args(["serve", "--mcp-config"])
        .arg(&config)
        .env(AS_PROGRAM, "1")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "hub_everything.py failed: {stdout}\n{stderr}"
    );
    let report: Value = serde_json::from_str(stdout.trim()).unwrap();
    let tools: Vec<&str> = report["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(
        tools.contains(&"everything__trigger-elicitation-request"),
        "the hub declares elicitation to the server, which then offers its tool: {tools:?}"
    );

    // Logs, named after the server: one during the call, one on its own.
    let logs = report["logs"].as_array().unwrap();
    assert!(logs.len() >= 2, "{report:#}");
    for log in logs {
        assert_eq!(log["logger"], "everything", "{log}");
        assert!(
            log["data"].as_str().unwrap_or_default().contains("message"),
            "{log}"
        );
    }

    // The elicitation: asked here, answered here, seen by the server.
    let asked = &report["asked"][0];
    assert_eq!(
        asked["message"],
        "Please provide inputs for the following fields:"
    );
    assert_eq!(asked["requestedSchema"]["required"], json!(["name"]));
    let elicited = report["elicited"]["result"]["content"].to_string();
    assert!(elicited.contains("Name: Ada Lovelace"), "{elicited}");
    assert!(elicited.contains("Favorite Integer: 7"), "{elicited}");

    // Killed, then started again on a later call; the tools listed again,
    // and the client told.
    assert_eq!(
        report["restarted"]["result"]["content"][0]["text"], "Echo: back",
        "{report:#}"
    );
    assert!(
        report["list_changed"].as_u64().unwrap() >= 1,
        "{report:#}\n{stderr}"
    );
    assert!(
        stderr.contains("the tools of everything changed; serving"),
        "{stderr}"
    );
    assert_eq!(report["tools_after"], report["tools"]);
}

/// `list --import https://127.0.0.1:PORT/mcp --ca CA.pem`: the server's
/// certificate is signed by a CA the test made; without `--ca` the import
/// is refused, naming the certificate.
fn an_https_import_is_trusted_with_its_ca() {
    let dir = tempfile::tempdir().unwrap();
    let authority = tls::Authority::new();
    let server = tls::TlsServer::start(toolprism::mcp::McpServer::new(whispering()), &authority);
    let ca = authority.ca_file(dir.path());
    let out = hub()
        .args(["list", "--import", &server.url, "--ca"])
        .arg(&ca)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("whisper"), "{stdout}");
    assert!(stdout.contains("shout"), "{stdout}");

    let out = hub()
        .args([
            "call",
            "whisper",
            r#"{"text":"QUIET"}"#,
            "--json",
            "--import",
            &server.url,
            "--ca",
        ])
        .arg(&ca)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let called: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(called["value"], "quiet", "{called}");

    let out = hub()
        .args(["list", "--import", &server.url])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("certificate"), "{stderr}");
}

/// `import login URL` against an OAuth authorization server: the browser
/// (`$BROWSER`, here a program that follows the redirect) brings the code
/// back to the loopback listener; the tokens go to the owner-only file
/// under `$XDG_CONFIG_HOME`; `list --import URL` then uses them, where it
/// failed before, naming the login to run; `import logout` forgets them.
fn import_login_keeps_tokens_that_imports_then_use() {
    let dir = tempfile::tempdir().unwrap();
    let servers = oauth_server::OAuthServers::start(whispering());
    let config = dir.path().join("config");
    let run = |args: &[&str]| {
        let out = hub()
            .args(args)
            .env("XDG_CONFIG_HOME", &config)
            .env(
                "BROWSER",
                format!(
                    "{} -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1]).read()'",
                    python().python().display()
                ),
            )
            .stdin(Stdio::null())
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, _, stderr) = run(&["list", "--import", &servers.url]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!("hub import login {}", servers.url)),
        "{stderr}"
    );

    let (code, _, stderr) = run(&["import", "login", &servers.url]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stderr.contains("logged in to"), "{stderr}");
    assert!(stderr.contains("readable by you only"), "{stderr}");
    let tokens = config.join("toolprism/oauth");
    assert_eq!(std::fs::read_dir(&tokens).unwrap().count(), 1);

    let (code, stdout, stderr) = run(&["list", "--import", &servers.url]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.contains("whisper"), "{stdout}");
    for token in servers.issued() {
        assert!(!stderr.contains(&token) && !stdout.contains(&token));
    }

    let (code, _, stderr) = run(&["import", "logout", &servers.url]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stderr.contains("forgot the tokens"), "{stderr}");
    assert_eq!(std::fs::read_dir(&tokens).unwrap().count(), 0);
}

fn imports_that_fail_are_usage_errors() {
    let run = |args: &[&str], forgetful: bool| {
        let mut command = hub();
        if forgetful {
            command.env(FORGETFUL, "1");
        }
        let out = command.args(args).stdin(Stdio::null()).output().unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, stderr) = run(&["list", "--import", "/no/such/server --flag"], false);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.starts_with(
            "error: cannot build the tools: importing from /no/such/server --flag: cannot start"
        ),
        "{stderr}"
    );
    let (code, stderr) = run(&["list", "--import", "npx 'unclosed"], false);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("a single quote is not closed"), "{stderr}");
    let (code, stderr) = run(&["list", "--mcp-config", "/no/such.json"], false);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("--mcp-config: importing from /no/such.json: cannot read it"),
        "{stderr}"
    );
    let tiny = workspace().join("mcp/tests/support/import_server.py");
    let import = format!("python3 {}", quoted(&tiny));
    let (code, stderr) = run(&["list", "--import", &import], false);
    // `bad.name` is refused, with the remedies.
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("\"bad.name\""), "{stderr}");
    let server = test_server();
    let import = quoted(&server);
    let (code, stderr) = run(&["list", "--import", &import], true);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("leave out the imported tool \"echo\""),
        "{stderr}"
    );
    let out = hub()
        .args(["list", "--json", "--import", &import])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let listed: Value = serde_json::from_slice(&out.stdout).unwrap();
    // The native `shout` and the test server's 15 tools.
    assert_eq!(listed.as_array().unwrap().len(), 16, "{listed:#}");
}
