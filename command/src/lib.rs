//! One command line for any registry (feature `cli`).
//!
//! Hand your registry to [`run`] in `main` and your program gets, for your
//! own tools:
//!
//! | command | what it does |
//! |---|---|
//! | `list [--json]` | the tools: name, kind, hints and description, as a table or JSON |
//! | `schema [--dialect D] [--tool NAME]` | the definitions, toolprism's own or in a provider's request shape ([`dialect`](toolprism_provider::dialect)) |
//! | `call NAME [JSON] [--json] [--yes] [--log-level LEVEL]` | runs one call and shows the model's view, the value, the meta and both cards, or one JSON object; the person at the terminal is the call's client (below) |
//! | `replay LOG… [--html OUT]` | draws a session log's cards again in the terminal (a progress bar on stderr for a large log, on a terminal only), or as an HTML page ([`html`](toolprism_html)); several logs of one session (one per server process behind a load balancer) as one, in the order their events were written |
//! | `serve [--http ADDR] [--stateless] [--store URL] [--log PATH] [--token-env NAME \| --token-file PATH \| --insecure-no-auth]` | with the feature `mcp`: serves the tools over MCP ([`mcp`](toolprism_mcp)), on stdio (stdout carries protocol messages only) or Streamable HTTP: on a loopback address, or on another with a bearer token required (or, told so, none); see `serve --help` for the limits |
//!
//! With the feature `import`, a program built with [`Cli::new`] also takes
//! `--import 'CMD ARGS…'`, `--import https://…/mcp` and `--mcp-config PATH`
//! (each repeatable): the tools of those MCP servers, connected before the
//! registry is built and handed to it through [`Globals::imports`], are
//! listed, called, replayed and served like the program's own; `serve`
//! then is a hub, which follows the servers' tool changes (the registry is
//! built again) and forwards their log messages and requests. `--ca PATH`
//! trusts a private CA for HTTPS, `--allow-http` allows plain `http://`
//! off this machine, and `import login URL` / `import logout URL` keep or
//! forget the OAuth tokens of a server that asks for them (a browser opens
//! on first use as well, when stderr is a terminal).
//!
//! ```no_run
//! # use toolprism::{ContentBlock, Registry, tool};
//! # #[derive(Clone, serde::Deserialize, schemars::JsonSchema)] struct Args { text: String }
//! # struct Shout;
//! /// Upper-case the text.
//! # #[tool]
//! # impl Shout {
//! #     fn execute(args: Args) -> String { args.text.to_uppercase() }
//! #     fn render(_: &Args, v: &String) -> Vec<ContentBlock> { vec![ContentBlock::text(v)] }
//! # }
//! fn main() -> std::process::ExitCode {
//!     let registry = Registry::builder().tool(Shout).build().expect("one tool, no duplicate");
//!     toolprism::cli::run(registry)
//! }
//! // $ shout list
//! // $ shout call shout '{"text":"hi"}'
//! ```
//!
//! When the tools depend on options given on the command line (the
//! directory file tools are confined to, a database), build the registry
//! from the parsed [`Globals`] with [`Cli::new`]: it adds the global option
//! `--root DIR` (default: the current directory), checks it, and builds the
//! registry only when a command needs it. A program can also keep a
//! command of its own for when no subcommand is given
//! ([`Cli::default_command`]); the showcase at the workspace root does
//! this, so `cargo run` runs the showcase and `cargo run -- list` lists its
//! tools.
//!
//! ## The person at the terminal
//!
//! `call` hands every call a client ([`Client`](toolprism_core::client::Client),
//! W8 and W9 in `docs/contract.md`): the person who ran the command. It
//! writes to stderr only, so stdout stays the call's own output (one JSON
//! object with `--json`).
//!
//! - A tool's log messages (`ToolContext::log`) are printed one line each,
//!   `level logger: data`, control characters shown escaped; `--log-level
//!   LEVEL` (default `info`; `debug` … `emergency`, as MCP's
//!   `logging/setLevel`) hides those below it.
//! - A form (`ToolContext::elicit`) is asked field by field when stdin and
//!   stderr are both terminals: the message, then each field with what it
//!   takes and its default in brackets (fields in the schema's key order);
//!   an answer that is not of the field's type, not one of its choices or
//!   out of its bounds is said and asked again. An empty line takes the
//!   default (or leaves an optional field out); a choice is its number,
//!   its value or its title; several choices are separated by commas; a
//!   line `:decline` declines the form; Ctrl-D (the end of input) cancels
//!   it.
//! - A call that needs approval asks `… Allow `tool` to run with {…}? [y/N]`
//!   on the terminal: `y` or `yes` runs it, anything else refuses it
//!   (`NOT_APPROVED`, denied), and Ctrl-D dismisses the question
//!   (`NOT_APPROVED`, dismissed). `--yes` approves every call without asking (for
//!   scripts), and says so on stderr; the session log keeps each decision
//!   either way (`--log`).
//! - Off a terminal (stdin or stderr redirected), nothing is asked and
//!   nothing waits: a form is `CLIENT_UNAVAILABLE` and an approval
//!   `NOT_APPROVED` at once, unless `--yes`. Sampling is always
//!   `CLIENT_UNAVAILABLE`: a terminal has no model.
//!
//! ## Exit status
//!
//! Scripts can rely on: **0** success; **1** the call returned an error
//! result (and, for the other commands, what they ran failed: a dialect
//! that cannot express a tool, a log that cannot be read to its end, a page
//! that cannot be written); **2** bad usage (an unknown command or option,
//! a missing or malformed value, a tool that is not registered, a `--root`
//! or a log that does not exist, a registry that cannot be built). Errors
//! are written to stderr on one line, `error: …`.
//!
//! ## Output
//!
//! Human output goes to stdout; errors, warnings and progress go to stderr,
//! progress only when stderr is a terminal. Text from tools and logs is
//! shown escaped where it could act on the terminal (see [`terminal`]).
//! A panic is reported on one line (a tool's panic also ends its call as
//! an error result); set `RUST_BACKTRACE` to get Rust's own report.
//!
//! ## Modules
//!
//! The public API is [`run`], [`Cli`] and [`Globals`], the [`terminal`]
//! card renderer, and the [`clap`] re-export. Inside: `builder` (the
//! [`Cli`] builder and its run), `command` (the clap command, its help
//! texts, the dispatch to a subcommand), one module per subcommand (`list`,
//! `schema`, `call`, `replay`, `serve`), `prompt` (the client of `call`:
//! the person at the terminal) and `form` (an elicitation's fields and the
//! checking of typed answers), `exit` (statuses, failures and the
//! `error: …` line), `panic` (the one-line panic hook), and the helpers
//! `progress`, `table` and `text`.

#[cfg(feature = "agent")]
pub mod agent;
mod builder;
mod call;
mod command;
mod exit;
mod form;
#[cfg(feature = "import")]
mod import;
mod list;
mod panic;
mod progress;
mod prompt;
mod replay;
mod schema;
#[cfg(feature = "code")]
mod sdk;
#[cfg(feature = "mcp")]
mod serve;
mod table;
pub mod terminal;
mod text;

use std::process::ExitCode;

/// The `clap` this crate is built on, **clap 4**, re-exported because it is
/// part of the public API: [`Cli::default_command`] takes a
/// `#[derive(clap::Args)]` struct (its bound is `clap::Args +
/// clap::FromArgMatches`), and `use toolprism::cli::clap;` lets that derive
/// work without a dependency of your own, at the same clap as ours. A new
/// clap major is therefore a breaking change of this crate.
///
/// ```
/// use toolprism::cli::clap;
///
/// #[derive(clap::Args)]
/// struct Own {
///     /// Say it loudly.
///     #[arg(long)]
///     loud: bool,
/// }
/// ```
pub use clap;

pub use builder::{Cli, Globals};
// What the subcommand modules share, at the root where they look for it.
use exit::{Failure, Status, unknown_tool};

use toolprism_core::Registry;

/// Runs the command line over `registry`, reading the program's arguments,
/// and returns the exit status (0 ok, 1 error result, 2 usage). Builds its
/// own tokio runtime: call it from a plain `fn main`, not from inside one.
pub fn run(registry: Registry) -> ExitCode {
    Cli::with_registry(registry).run()
}
