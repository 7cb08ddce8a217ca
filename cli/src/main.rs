//! `cargo toolprism new NAME --card CARD`: writes one toolprism tool into a
//! crate and registers it.
//!
//! The module holds the tool's arguments and value (documented, so the
//! schemas the model reads say what each field is), an `execute` that does
//! a small real thing fitting the card, `render`, `presentation_meta`, the
//! presenters that draw the card, and tests: a call through a registry,
//! `toolprism::testing::check_projections`, and the cards' JSON. It compiles
//! and its tests pass as written; then you make `execute` do your tool's
//! work.
//!
//! Installed (`cargo install --path cli`) it runs as `cargo toolprism new
//! …` (cargo passes `toolprism` as the first argument); in the workspace,
//! as `cargo run -p cargo-toolprism -- new …`.

mod crate_info;
mod edit;
#[cfg(test)]
mod name_rule;
mod names;
mod scaffold;
mod template;
mod text;

use std::ffi::OsString;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::scaffold::{Refusal, Request};
use crate::template::{Card, Kind};

/// Scaffolding for toolprism tools.
#[derive(Debug, Parser)]
#[command(
    name = "cargo toolprism",
    bin_name = "cargo toolprism",
    arg_required_else_help = true,
    after_help = "Exit status: 0 done, 1 a write failed, 2 bad usage (nothing was changed).\n\nExample:\n  cargo toolprism new weather --card generic --path my-agent"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Write a new tool module into a crate and register it.
    #[command(after_help = NEW_HELP)]
    New(NewArgs),
}

const NEW_HELP: &str = "\
Writes src/<module>.rs next to the crate's lib.rs (or main.rs) and adds its
`mod` line there; adds serde, schemars, serde_json and tokio (macros, rt) to
Cargo.toml when missing. In toolprism-tools (also when run at the toolprism
workspace's root) the module is gated by a feature: --feature, or fs, shell
or web by card, and re-exported. Files you wrote only gain lines.

Examples:
  cargo toolprism new weather --card generic --path my-agent
  cargo toolprism new lint --card terminal --kind execute --read-only
  cargo toolprism new word-count --card search --builtin";

#[derive(Debug, clap::Args)]
struct NewArgs {
    /// The tool's name, as the model calls it: 1 to 64 of A-Z, a-z, 0-9, `_`,
    /// `-` (the module is the name in snake case).
    #[arg(value_name = "NAME")]
    name: String,
    /// The card the tool draws; its template does a small real thing that
    /// fits it.
    #[arg(long, value_enum)]
    card: Card,
    /// The kind of work the tool does [default: the card's usual kind:
    /// generic other, terminal execute, diff edit, read read, search search,
    /// web fetch]
    #[arg(long, value_enum)]
    kind: Option<Kind>,
    /// Mark the tool read-only (a hint for clients).
    #[arg(long)]
    read_only: bool,
    /// Register it for `Registry::builtin()`, made with `Default`.
    #[arg(long)]
    builtin: bool,
    /// The crate to write into [default: the current directory].
    #[arg(long, value_name = "CRATE_DIR")]
    path: Option<PathBuf>,
    /// Gate the module behind this cargo feature (added to the manifest's
    /// features table when missing) [default in toolprism-tools: by card]
    #[arg(long, value_name = "FEATURE")]
    feature: Option<String>,
}

fn main() -> ExitCode {
    let mut args: Vec<OsString> = std::env::args_os().collect();
    // As `cargo toolprism …`, cargo runs `cargo-toolprism toolprism …`.
    if args.get(1).is_some_and(|a| a == "toolprism") {
        args.remove(1);
    }
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => return clap_error(&e),
    };
    let Command::New(new) = cli.command;
    let request = Request {
        name: new.name,
        card: new.card,
        kind: new.kind,
        read_only: new.read_only,
        builtin: new.builtin,
        path: new.path,
        feature: new.feature,
    };
    match scaffold::new(&request) {
        Ok(report) => {
            let mut out = std::io::stdout().lock();
            for line in report {
                let _ = writeln!(out, "{line}");
            }
            ExitCode::SUCCESS
        }
        Err(Refusal::Usage(message)) => error(&message, 2),
        Err(Refusal::Failed(message)) => error(&message, 1),
    }
}

/// `error: …` on one line on stderr.
fn error(message: &str, code: u8) -> ExitCode {
    let line: String = message
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let _ = writeln!(std::io::stderr().lock(), "error: {line}");
    ExitCode::from(code)
}

/// Help to stdout (exit 0); a usage error on one line (exit 2).
fn clap_error(e: &clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    let rendered = e.render().to_string();
    match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
            let _ = write!(std::io::stdout().lock(), "{rendered}");
            ExitCode::SUCCESS
        }
        ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let _ = write!(std::io::stderr().lock(), "{rendered}");
            ExitCode::from(2)
        }
        _ => {
            let mut message = String::new();
            for line in rendered.lines().map(str::trim) {
                if line.starts_with("Usage:") || line.starts_with("For more information") {
                    break;
                }
                if line.is_empty() {
                    continue;
                }
                let line = line.strip_prefix("error: ").unwrap_or(line);
                if !message.is_empty() {
                    message.push_str(if message.ends_with(':') { " " } else { "; " });
                }
                message.push_str(line);
            }
            error(&format!("{message}; see 'cargo toolprism new --help'"), 2)
        }
    }
}
