//! The clap command: the subcommands and their options, the help texts
//! with an example per command, and the dispatch of a parsed subcommand to
//! the module that runs it.

use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::builder::Resettable;
use clap::{CommandFactory, Parser, Subcommand};

use toolprism_core::Registry;

use crate::exit::{Failure, Status, finish};
#[cfg(feature = "code")]
use crate::sdk;
#[cfg(feature = "mcp")]
use crate::serve;
use crate::{call, list, replay, schema};

/// Builds the registry again from the same global options: `serve` does
/// when an imported server's tools change.
pub(crate) type Rebuild = Box<dyn Fn() -> Result<Registry, String>>;

/// The subcommands.
#[derive(Debug, Parser)]
pub(crate) struct Top {
    #[command(subcommand)]
    pub(crate) command: Option<Command>,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// List the tools: name, kind, hints and description.
    List(list::ListArgs),
    /// Print the tool definitions, canonical or in a provider's request shape.
    Schema(schema::SchemaArgs),
    /// Run one call and show the model's view, the value, the meta and both cards.
    Call(call::CallArgs),
    /// Draw a session log's cards again in the terminal.
    Replay(replay::ReplayArgs),
    /// Serve the tools over the Model Context Protocol (stdio or Streamable HTTP).
    #[cfg(feature = "mcp")]
    Serve(serve::ServeArgs),
    /// Run the tools in a loop with a model API: anthropic, openai-chat,
    /// openai-responses or gemini (every call drawn as `call` draws it).
    #[cfg(feature = "agent")]
    Agent(crate::agent::AgentArgs),
    /// Print the TypeScript SDK a Code Mode program is written against (run_code's description).
    #[cfg(feature = "code")]
    Sdk(sdk::SdkArgs),
    /// Log in to (or out of) an MCP server over HTTP that asks for OAuth,
    /// for --import and --mcp-config.
    #[cfg(feature = "import")]
    Import(crate::import::ImportArgs),
}

impl Command {
    /// Runs the subcommand over `registry`; `name` is the program's name,
    /// `built` the global options when the registry was built from them
    /// (`--root`, `--sandbox`).
    pub(crate) fn run(
        self,
        registry: &Registry,
        runtime: &tokio::runtime::Runtime,
        name: &str,
        built: Option<&crate::Globals>,
        rebuild: Option<Rebuild>,
    ) -> ExitCode {
        // `serve` writes protocol messages to stdout itself: the lock below
        // would block it.
        #[cfg(feature = "mcp")]
        if let Command::Serve(args) = &self {
            return finish(
                serve::run(registry, args, runtime, name, built, rebuild),
                Ok(()),
            );
        }
        #[cfg(not(feature = "mcp"))]
        let _ = (name, built, rebuild);
        let stdout = io::stdout();
        let mut out = io::BufWriter::new(stdout.lock());
        let outcome: Result<Status, Failure> = match self {
            Command::List(args) => list::run(registry, &args, &mut out),
            Command::Schema(args) => schema::run(registry, &args, &mut out),
            Command::Call(args) => call::run(registry, args, runtime, &mut out),
            Command::Replay(args) => replay::run(registry, &args, &mut out),
            #[cfg(feature = "agent")]
            Command::Agent(args) => crate::agent::run(registry, args, runtime, &mut out),
            #[cfg(feature = "code")]
            Command::Sdk(args) => sdk::run(registry, &args, &mut out),
            #[cfg(feature = "mcp")]
            Command::Serve(_) => unreachable!("served above"),
            #[cfg(feature = "import")]
            Command::Import(_) => unreachable!("run before the registry is built"),
        };
        let flushed = out.flush();
        finish(outcome, flushed)
    }
}

/// The clap command: the subcommands, `--root` when `with_root` (the
/// registry is built from it), the default command's options added by
/// `own_args`, and the help texts, whose examples name the program `bin`
/// and call `example` (a tool, its arguments).
///
/// Also returns the default command's options (id, as shown), which
/// cannot be combined with a subcommand. (clap's own
/// `args_conflicts_with_subcommands` would refuse `--root` too.)
pub(crate) fn assemble(
    bin: &str,
    about: Option<&str>,
    example: (&str, &str),
    own_args: Option<fn(clap::Command) -> clap::Command>,
    with_root: bool,
) -> (clap::Command, Vec<(String, String)>) {
    let (tool, arguments) = example;
    let shell_args = shell_quote(arguments);
    let mut command = Top::command();
    let mut own = Vec::new();
    match own_args {
        Some(augment) => {
            command = augment(command);
            own = command
                .get_arguments()
                .filter(|a| a.get_id() != "help")
                .map(|a| {
                    let shown = match (a.get_long(), a.get_short()) {
                        (Some(long), _) => format!("--{long}"),
                        (None, Some(short)) => format!("-{short}"),
                        (None, None) => a.get_id().to_string(),
                    };
                    (a.get_id().to_string(), shown)
                })
                .collect();
        }
        None => {
            command = command
                .subcommand_required(true)
                .arg_required_else_help(true);
        }
    }
    // After the default command's options, whose doc comment would
    // otherwise be the program's description.
    command = command
        .name(bin.to_owned())
        .bin_name(bin.to_owned())
        .about(match about {
            Some(about) => Resettable::Value(about.to_owned().into()),
            None => Resettable::Reset,
        })
        .long_about(Resettable::Reset)
        .after_help(format!(
            "Exit status: 0 ok, 1 the call returned an error result, 2 bad usage.\n\n\
             Examples:\n  {bin} list\n  {bin} schema --dialect openai\n  {bin} call {tool} {shell_args}\n  {bin} replay session.jsonl{serve}",
            serve = if cfg!(feature = "mcp") { format!("\n  {bin} serve") } else { String::new() }
        ))
        .mut_subcommand("list", |c| {
            c.after_help(format!(
                "Example:\n  {bin} list --json    # [{{\"name\", \"title\"?, \"description\", \"kind\", \"annotations\"}}, …]"
            ))
        })
        .mut_subcommand("schema", |c| {
            c.after_help(format!(
                "Exit status: 0 ok, 1 the dialect cannot express a tool (the others are printed), 2 bad usage.\n\n\
                 Example:\n  {bin} schema --dialect anthropic --tool {tool}"
            ))
        })
        .mut_subcommand("call", |c| {
            c.after_help(format!(
                "Exit status: 0 the call succeeded, 1 it returned an error result, 2 bad usage.\n\n\
                 Example:\n  {bin} call {tool} {shell_args}\n  echo {shell_args} | {bin} call {tool} - --json"
            ))
        })
        .mut_subcommand("replay", |c| {
            c.after_help(format!(
                "Example:\n  {bin} replay session.jsonl | less\n  {bin} replay session.jsonl --html session.html\n  {bin} replay a.jsonl b.jsonl c.jsonl     # one session served by three processes"
            ))
        });
    #[cfg(feature = "mcp")]
    {
        command = command
            .mut_subcommand("serve", |c| {
                c.after_help(format!(
                    "Over stdio, stdout carries protocol messages only; the rest goes to stderr.\n\n\
                     Who can reach the tools:\n  \
                     stdio                  the process that started the server, nobody else\n  \
                     --http on 127.0.0.1    every process on this machine (with a token: those that present it)\n  \
                     --http on 0.0.0.0, a LAN address or a public name\n                         \
                     refused, unless --token-env/--token-file (then: clients presenting the token,\n                         \
                     checked in constant time; others get 401) or --insecure-no-auth (then: anyone, with\n                         \
                     a warning at every start)\n\
                     Over HTTP a token is never read from the URL (`?access_token=` is refused), and the\n\
                     limits above bound what clients can make the server hold (bodies are capped at 4 MiB).\n\n\
                     Examples:\n  {bin} serve                           # stdio, for Claude Code: claude mcp add tools -- {bin} serve\n  {bin} serve --http 127.0.0.1:8765    # Streamable HTTP at http://127.0.0.1:8765/mcp, this machine only\n  {bin} serve --http 0.0.0.0:8765 --token-env TOOLPRISM_TOKEN --allowed-host tools.example.com\n                                        # other machines; TOOLPRISM_TOKEN holds a secret (openssl rand -hex 32),\n                                        # which clients send as `Authorization: Bearer <secret>`\n  {bin} serve --log session.jsonl      # keep the session log; {bin} replay session.jsonl\n  {bin} serve --http 127.0.0.1:8001 --stateless --store redis://127.0.0.1:6379 --log a.jsonl\n                                        # one of several processes behind a load balancer, sharing\n                                        # tasks and input requests through Redis (feature `redis`)"
                ))
            });
    }
    if with_root {
        command = command
            .arg(
                clap::Arg::new("root")
                    .long("root")
                    .value_name("DIR")
                    .global(true)
                    .value_parser(clap::value_parser!(PathBuf))
                    .help(
                        "The directory the tools are confined to [default: the current directory]",
                    ),
            )
            .arg(
                clap::Arg::new("mode")
                    .long("mode")
                    .value_name("MODE")
                    .global(true)
                    .value_parser(|s: &str| s.parse::<toolprism_core::Mode>())
                    .help(
                        "Which tools the model is offered: native (each tool), code (only run_code, \
                         whose description is the SDK of every tool) or both [default: both for \
                         call, native otherwise]",
                    ),
            )
            .arg(
                clap::Arg::new("sandbox")
                    .long("sandbox")
                    .value_name("MODE")
                    .global(true)
                    .value_parser(|s: &str| s.parse::<toolprism_sandbox::SandboxMode>())
                    .help(
                        "What the tools' commands may change: read-only (nothing; write and edit are \
                         refused too), workspace-write (the root and the temp directories) or \
                         full-access (nothing confined) [default: workspace-write]. Enforced by the \
                         kernel (Landlock, seccomp); where it cannot be, bash refuses to run",
                    ),
            )
            .arg(
                clap::Arg::new("allow-write")
                    .long("allow-write")
                    .value_name("PATH")
                    .global(true)
                    .action(clap::ArgAction::Append)
                    .value_parser(clap::value_parser!(PathBuf))
                    .help(
                        "Also let commands write under PATH in workspace-write mode (a cache such as \
                         ~/.cargo or ~/.npm); repeatable",
                    ),
            )
            .arg(
                clap::Arg::new("allow-network")
                    .long("allow-network")
                    .global(true)
                    .action(clap::ArgAction::SetTrue)
                    .help("Let commands reach the network (off by default)"),
            )
            .arg(
                clap::Arg::new("env")
                    .long("env")
                    .value_name("NAME")
                    .global(true)
                    .action(clap::ArgAction::Append)
                    .help(
                        "Pass the variable NAME to commands, beside PATH, HOME, USER, LOGNAME, SHELL, \
                         TERM, LANG, LC_*, TMPDIR and TZ (no other variable of this process reaches \
                         them); repeatable",
                    ),
            );
        #[cfg(feature = "import")]
        {
            command = command
                .arg(
                    clap::Arg::new("import")
                        .long("import")
                        .value_name("CMD ARGS…|URL")
                        .global(true)
                        .action(clap::ArgAction::Append)
                        .help(
                            "Import the tools of an MCP server: a command line run over stdio \
                             ('npx -y @modelcontextprotocol/server-filesystem .'), or a Streamable \
                             HTTP URL (http://127.0.0.1:8080/mcp); repeatable. The tools keep their \
                             names; use --mcp-config for prefixes, environments and headers",
                        ),
                )
                .arg(
                    clap::Arg::new("mcp-config")
                        .long("mcp-config")
                        .value_name("PATH")
                        .global(true)
                        .action(clap::ArgAction::Append)
                        .value_parser(clap::value_parser!(PathBuf))
                        .help(
                            "Import the servers of an mcpServers file (the format of Claude Desktop \
                             and .mcp.json), each server's tools named <server>__<tool>; repeatable",
                        ),
                );
        }
    }
    #[cfg(feature = "import")]
    {
        command = command
            .arg(
                clap::Arg::new("ca")
                    .long("ca")
                    .value_name("PATH")
                    .global(true)
                    .action(clap::ArgAction::Append)
                    .value_parser(clap::value_parser!(PathBuf))
                    .help(
                        "Trust the certificate authorities in the PEM file at PATH for the HTTPS \
                         servers of --import and --mcp-config, next to the platform's roots (a \
                         private server's own CA); repeatable",
                    ),
            )
            .arg(
                clap::Arg::new("allow-http")
                    .long("allow-http")
                    .global(true)
                    .action(clap::ArgAction::SetTrue)
                    .help(
                        "Let --import and --mcp-config use plain http:// to other machines (calls and \
                         tokens readable on the way); without it, http:// is for this machine only",
                    ),
            )
            .mut_subcommand("import", |c| {
                c.after_help(format!(
                    "The tokens are kept in $XDG_CONFIG_HOME/toolprism/oauth (else ~/.config/toolprism/oauth),\n\
                     one file per server, readable by you only; --import and --mcp-config use them.\n\n\
                     Examples:\n  {bin} import login https://tools.example.com/mcp\n  {bin} list --import https://tools.example.com/mcp\n  {bin} import logout https://tools.example.com/mcp"
                ))
            });
    }
    (command, own)
}

/// `s` quoted for a POSIX shell, for the examples in `--help`.
fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_for_the_shell() {
        assert_eq!(shell_quote(r#"{"a":1}"#), r#"'{"a":1}'"#);
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
    }
}
