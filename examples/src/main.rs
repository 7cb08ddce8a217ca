//! The toolprism showcase: `cargo run` at the workspace root. With no
//! command it runs the showcase ([`toolprism_examples::showcase`]); the
//! commands of `toolprism::cli` (`list`, `schema`, `call`, `replay`,
//! `serve`) run the built-in tools, confined to `--root` (default: the
//! current directory). See `--help`.

use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use toolprism::Registry;
use toolprism::cli::{Cli, Globals};
use toolprism::code::CodeMode;
use toolprism_examples::showcase::{self, ABOUT, Options};
use toolprism_examples::tools::render_panic::PANIC_TEXT;
use toolprism_examples::tools::{AcmeTicketTool, ask_before_changes};
use toolprism_tools::{
    BashTool, EditTool, GlobTool, GrepTool, ReadTool, SqlQueryTool, WebFetchTool, Workspace,
    WriteTool,
};

fn main() -> ExitCode {
    Cli::new(tools)
        .about(ABOUT)
        .example_call("read", r#"{"path":"README.md"}"#)
        .flag(
            "approvals",
            "Ask the user before edit, write and bash run (over MCP an elicitation; a client that cannot be asked gets NOT_APPROVED)",
        )
        .default_command(run_showcase)
        .run()
}

/// The tools of `list`, `schema`, `call`, `replay` and `serve`: every
/// built-in one (the file tools and `bash` confined to `--root`,
/// `sql_query` over [`database`]) and the third-party example, all under
/// the sandbox policy of `--sandbox`; with `--approvals`, `edit`, `write`
/// and `bash` ask the user first ([`ask_before_changes`]), and `bash` may
/// ask for one wider run (`escalate`).
fn tools(globals: &Globals) -> io::Result<Registry> {
    // One sandbox policy for every tool (`--sandbox`, `--allow-write`,
    // `--allow-network`, `--env`), read by bash and the file tools alike.
    let ws = Workspace::new(globals.root())?.with_sandbox(globals.sandbox().clone());
    let database = database(globals);
    // `--import` and `--mcp-config`: other MCP servers' tools next to these.
    let mut builder = globals
        .imports()
        .register_in(Registry::builder())
        .tool(ReadTool::new(ws.clone()))
        .tool(GrepTool::new(ws.clone()))
        .tool(GlobTool::new(ws.clone()));
    let bash = BashTool::new(ws.clone());
    if globals.flag("approvals") {
        // A person can be asked: bash also offers `escalate`, one command
        // with a wider sandbox once they approve it.
        builder = builder
            .pre_execute(ask_before_changes)
            .tool(bash.with_escalation());
    } else {
        builder = builder.tool(bash);
    }
    builder
        .tool(EditTool::new(ws.clone()))
        .tool(WriteTool::new(ws))
        .tool(WebFetchTool::new())
        .tool(SqlQueryTool::new(database))
        .tool(AcmeTicketTool::default())
        .code_mode(globals.mode())
        .build()
        .map_err(|e| io::Error::other(e.to_string()))
}

/// The SQLite file `sql_query` reads: `$TOOLPRISM_DATABASE` when set (a
/// relative path is taken from the current directory, as any path in the
/// environment), else `toolprism.sqlite` under `--root`. It is opened
/// read-only on each call; while it does not exist, each call is an error
/// result that says so, and the other tools are unaffected.
fn database(globals: &Globals) -> PathBuf {
    match std::env::var_os("TOOLPRISM_DATABASE") {
        Some(path) if !path.is_empty() => PathBuf::from(path),
        _ => globals.root().join("toolprism.sqlite"),
    }
}

fn run_showcase(mut options: Options, globals: &Globals) -> ExitCode {
    options.sandbox = globals.sandbox().clone();
    if globals.root_given() {
        eprintln!(
            "error: --root applies to the commands (list, call, replay, serve); the showcase makes its own workspace"
        );
        return ExitCode::from(2);
    }
    // The render-panic scenario panics on purpose and the runtime turns the
    // panic into an error result; keep that one panic's message off the
    // terminal. Every other panic is reported as usual.
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let message = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or("");
        if !message.contains(PANIC_TEXT) {
            default_hook(info);
        }
    }));
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("error: cannot start the tokio runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let stdout = std::io::stdout();
    let stderr = std::io::stderr();
    let (mut out, mut report) = (stdout.lock(), stderr.lock());
    let result = runtime.block_on(showcase::run(&options, &mut out, &mut report));
    let _ = out.flush();
    match result {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            let _ = writeln!(report, "error: {e}");
            ExitCode::FAILURE
        }
    }
}
