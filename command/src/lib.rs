//! One command line for any registry (feature `cli`).
//!
//! Hand your registry to [`run`] in `main` and your program gets, for your
//! own tools:
//!
//! | command | what it does |
//! |---|---|
//! | `list [--json]` | the tools: name, kind, hints and description, as a table or JSON |
//! | `schema [--dialect D] [--tool NAME]` | the definitions, toolprism's own or in a provider's request shape ([`dialect`](toolprism_core::dialect)) |
//! | `call NAME [JSON] [--json]` | runs one call and shows the model's view, the value, the meta and both cards, or one JSON object |
//! | `replay LOG [--html OUT]` | draws a session log's cards again in the terminal (a progress bar on stderr for a large log, on a terminal only), or as an HTML page ([`html`](toolprism_html)) |
//! | `serve [--http ADDR] [--stateless] [--log PATH]` | with the feature `mcp`: serves the tools over MCP ([`mcp`](toolprism_mcp)), on stdio (stdout carries protocol messages only) or Streamable HTTP |
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

mod call;
mod list;
mod progress;
mod replay;
mod schema;
#[cfg(feature = "mcp")]
mod serve;
mod table;
pub mod terminal;
mod text;

use std::ffi::OsString;
use std::fmt;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

/// The `clap` this module is built on, for [`Cli::default_command`]'s
/// arguments: `use toolprism::cli::clap;` lets `#[derive(clap::Args)]`
/// work without a dependency of your own.
pub use clap;
use clap::builder::Resettable;
use clap::{ArgMatches, CommandFactory, FromArgMatches, Parser, Subcommand};

use toolprism_core::Registry;

/// Runs the command line over `registry`, reading the program's arguments,
/// and returns the exit status (0 ok, 1 error result, 2 usage). Builds its
/// own tokio runtime: call it from a plain `fn main`, not from inside one.
pub fn run(registry: Registry) -> ExitCode {
    Cli::with_registry(registry).run()
}

/// The options every command takes, parsed before the registry is built.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Globals {
    root: PathBuf,
    root_given: bool,
}

impl Globals {
    /// The directory the tools should be confined to: `--root DIR`, or the
    /// current directory. Canonical, and known to be a directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Whether `--root` was given.
    pub fn root_given(&self) -> bool {
        self.root_given
    }
}

type Build = Box<dyn FnOnce(&Globals) -> Result<Registry, String>>;
type RunDefault = Box<dyn FnOnce(&ArgMatches, &Globals) -> Result<ExitCode, clap::Error>>;

/// Where the registry comes from.
enum Source {
    Ready(Registry),
    Build(Build),
}

/// What runs when no subcommand is given.
struct DefaultCommand {
    augment: fn(clap::Command) -> clap::Command,
    run: RunDefault,
}

/// The command line, configured: the registry (or how to build it), the
/// program's description, and an optional command of its own.
///
/// ```
/// use toolprism::Registry;
/// use toolprism::cli::Cli;
///
/// // A registry built from `--root` (here empty); `list` prints a table.
/// let status = Cli::new(|globals| {
///     assert!(globals.root().is_dir());
///     Registry::builder().build()
/// })
/// .about("My agent's tools.")
/// .run_from(["mytools", "list", "--json"]);
/// assert_eq!(status, std::process::ExitCode::SUCCESS);
/// ```
pub struct Cli {
    source: Source,
    about: Option<String>,
    name: Option<String>,
    example: (String, String),
    default: Option<DefaultCommand>,
}

impl fmt::Debug for Cli {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Cli")
            .field("about", &self.about)
            .field("name", &self.name)
            .field("default_command", &self.default.is_some())
            .finish_non_exhaustive()
    }
}

impl Cli {
    /// A command line whose registry is built from the parsed global
    /// options (`--root DIR`), once a command needs it. An `Err` ends the
    /// program with its message and exit status 2.
    pub fn new<F, E>(build: F) -> Self
    where
        F: FnOnce(&Globals) -> Result<Registry, E> + 'static,
        E: fmt::Display,
    {
        Cli::from_source(Source::Build(Box::new(move |globals| {
            build(globals).map_err(|e| e.to_string())
        })))
    }

    /// A command line over a registry that is already built: no `--root`.
    pub fn with_registry(registry: Registry) -> Self {
        Cli::from_source(Source::Ready(registry))
    }

    fn from_source(source: Source) -> Self {
        Cli {
            source,
            about: None,
            name: None,
            example: ("my_tool".to_owned(), r#"{"key":"value"}"#.to_owned()),
            default: None,
        }
    }

    /// What `--help` says the program is.
    pub fn about(mut self, about: impl Into<String>) -> Self {
        self.about = Some(about.into());
        self
    }

    /// The program's name in `--help` (default: from how it was started).
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// The call `call --help` shows as its example: a tool of yours and
    /// arguments it accepts.
    pub fn example_call(mut self, tool: impl Into<String>, arguments: impl Into<String>) -> Self {
        self.example = (tool.into(), arguments.into());
        self
    }

    /// What runs when no subcommand is given, with options of its own
    /// (`A`, a `#[derive(clap::Args)]` struct) shown in the top-level
    /// `--help`. Those options cannot be combined with a subcommand.
    /// Without a default command, no subcommand prints the help on stderr
    /// and exits with 2.
    ///
    /// ```
    /// use std::process::ExitCode;
    /// use toolprism::Registry;
    /// use toolprism::cli::{Cli, clap};
    ///
    /// #[derive(clap::Args)]
    /// struct Demo {
    ///     /// Say it loudly.
    ///     #[arg(long)]
    ///     loud: bool,
    /// }
    ///
    /// let cli = || Cli::new(|_| Registry::builder().build()).default_command(|demo: Demo, _| {
    ///     if demo.loud { ExitCode::from(7) } else { ExitCode::SUCCESS }
    /// });
    /// assert_eq!(cli().run_from(["demo", "--loud"]), ExitCode::from(7));
    /// assert_eq!(cli().run_from(["demo"]), ExitCode::SUCCESS);
    /// assert_eq!(cli().run_from(["demo", "--loud", "list"]), ExitCode::from(2));
    /// ```
    pub fn default_command<A, F>(mut self, run: F) -> Self
    where
        A: clap::Args + FromArgMatches + 'static,
        F: FnOnce(A, &Globals) -> ExitCode + 'static,
    {
        self.default = Some(DefaultCommand {
            augment: A::augment_args,
            run: Box::new(move |matches, globals| {
                let args = A::from_arg_matches(matches)?;
                Ok(run(args, globals))
            }),
        });
        self
    }

    /// Parses the program's arguments and runs the command.
    pub fn run(self) -> ExitCode {
        self.run_from(std::env::args_os())
    }

    /// Parses `args` (the program's name first) and runs the command.
    pub fn run_from<I, T>(self, args: I) -> ExitCode
    where
        I: IntoIterator<Item = T>,
        T: Into<OsString>,
    {
        let args: Vec<OsString> = args.into_iter().map(Into::into).collect();
        let bin = self.name.clone().unwrap_or_else(|| {
            args.first()
                .and_then(|a| Path::new(a).file_name())
                .map_or_else(|| "tools".to_owned(), |n| n.to_string_lossy().into_owned())
        });
        let (command, own) = self.command(&bin);
        let matches = match command.try_get_matches_from(args) {
            Ok(matches) => matches,
            Err(e) => return clap_error(&e, &bin),
        };
        let globals = match globals(&matches) {
            Ok(globals) => globals,
            Err(message) => return usage(&message),
        };
        let root_based = matches!(self.source, Source::Build(_));
        let Cli {
            source, default, ..
        } = self;
        if matches.subcommand_name().is_none() {
            let Some(default) = default else {
                // Unreachable: clap asks for a subcommand.
                return usage("no command given; see --help");
            };
            return match (default.run)(&matches, &globals) {
                Ok(status) => status,
                Err(e) => clap_error(&e, &bin),
            };
        }
        let top = match Top::from_arg_matches(&matches) {
            Ok(top) => top,
            Err(e) => return clap_error(&e, &bin),
        };
        let Some(command) = top.command else {
            return usage("no command given; see --help");
        };
        // The default command's options mean nothing to a subcommand.
        if let Some(option) = own.iter().find(|(id, _)| {
            matches.value_source(id) == Some(clap::parser::ValueSource::CommandLine)
        }) {
            return usage(&format!(
                "{} is an option of {bin} without a command; it cannot be used with '{}'",
                option.1,
                matches.subcommand_name().unwrap_or_default()
            ));
        }
        install_panic_hook();
        let runtime = match tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
        {
            Ok(runtime) => runtime,
            Err(e) => return failure(&format!("cannot start the tokio runtime: {e}")),
        };
        let registry = match source {
            Source::Ready(registry) => registry,
            Source::Build(build) => {
                let _entered = runtime.enter();
                match build(&globals) {
                    Ok(registry) => registry,
                    Err(e) => return usage(&format!("cannot build the tools: {e}")),
                }
            }
        };
        let root = root_based.then_some(globals.root.as_path());
        let status = command.run(&registry, &runtime, &bin, root);
        // A timed-out blocking tool may still be running on the blocking
        // pool: its result is dropped, and the program does not wait for it.
        drop(registry);
        runtime.shutdown_timeout(Duration::from_millis(200));
        status
    }

    /// The clap command: the subcommands, `--root` when the registry is
    /// built from it, the default command's options, and the help texts
    /// with an example per command.
    ///
    /// Also returns the default command's options (id, as shown), which
    /// cannot be combined with a subcommand. (clap's own
    /// `args_conflicts_with_subcommands` would refuse `--root` too.)
    fn command(&self, bin: &str) -> (clap::Command, Vec<(String, String)>) {
        let (tool, arguments) = &self.example;
        let shell_args = shell_quote(arguments);
        let mut command = Top::command();
        let mut own = Vec::new();
        match &self.default {
            Some(default) => {
                command = (default.augment)(command);
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
            .about(match &self.about {
                Some(about) => Resettable::Value(about.clone().into()),
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
                    "Example:\n  {bin} replay session.jsonl | less\n  {bin} replay session.jsonl --html session.html"
                ))
            });
        #[cfg(feature = "mcp")]
        {
            command = command
            .mut_subcommand("serve", |c| {
                c.after_help(format!(
                    "Over stdio, stdout carries protocol messages only; the rest goes to stderr.\n\n\
                     Examples:\n  {bin} serve                           # stdio, for Claude Code: claude mcp add tools -- {bin} serve\n  {bin} serve --http 127.0.0.1:8765    # Streamable HTTP at http://127.0.0.1:8765/mcp\n  {bin} serve --log session.jsonl      # keep the session log; {bin} replay session.jsonl"
                ))
            });
        }
        if let Source::Build(_) = self.source {
            command = command.arg(
                clap::Arg::new("root")
                    .long("root")
                    .value_name("DIR")
                    .global(true)
                    .value_parser(clap::value_parser!(PathBuf))
                    .help(
                        "The directory the tools are confined to [default: the current directory]",
                    ),
            );
        }
        (command, own)
    }
}

/// The subcommands.
#[derive(Debug, Parser)]
struct Top {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Debug, Subcommand)]
enum Command {
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
}

impl Command {
    fn run(
        self,
        registry: &Registry,
        runtime: &tokio::runtime::Runtime,
        name: &str,
        root: Option<&Path>,
    ) -> ExitCode {
        // `serve` writes protocol messages to stdout itself: the lock below
        // would block it.
        #[cfg(feature = "mcp")]
        if let Command::Serve(args) = &self {
            return finish(serve::run(registry, args, runtime, name, root), Ok(()));
        }
        #[cfg(not(feature = "mcp"))]
        let _ = (name, root);
        let stdout = io::stdout();
        let mut out = io::BufWriter::new(stdout.lock());
        let outcome = match self {
            Command::List(args) => list::run(registry, &args, &mut out),
            Command::Schema(args) => schema::run(registry, &args, &mut out),
            Command::Call(args) => call::run(registry, args, runtime, &mut out),
            Command::Replay(args) => replay::run(registry, &args, &mut out),
            #[cfg(feature = "mcp")]
            Command::Serve(_) => unreachable!("served above"),
        };
        let flushed = out.flush();
        finish(outcome, flushed)
    }
}

/// The exit status of a command that ended with `outcome`, its output
/// flushed with `flushed`.
fn finish(outcome: Result<Status, Failure>, flushed: io::Result<()>) -> ExitCode {
    match outcome.and_then(|status| flushed.map(|()| status).map_err(Failure::from)) {
        Ok(status) => status.into(),
        // The reader went away (`| head`): nothing more to say.
        Err(Failure::Io(e)) if e.kind() == io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(Failure::Io(e)) => failure(&format!("cannot write the output: {e}")),
        Err(Failure::Usage(message)) => usage(&message),
        Err(Failure::Failed(message)) => failure(&message),
    }
}

/// How a command ended when it did not run to its end.
#[derive(Debug)]
enum Failure {
    /// Writing the output failed.
    Io(io::Error),
    /// The command line asked for something that cannot be (exit 2).
    Usage(String),
    /// What the command ran failed (exit 1).
    Failed(String),
}

impl From<io::Error> for Failure {
    fn from(e: io::Error) -> Self {
        Failure::Io(e)
    }
}

/// A command's exit status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Status {
    /// Exit 0.
    Ok,
    /// Exit 1: the call returned an error result, or what the command ran
    /// failed.
    Failed,
}

/// A tool name that is not registered: a usage error naming the tools.
fn unknown_tool(registry: &Registry, name: &str) -> Failure {
    let names: Vec<&str> = registry.definitions().map(|d| d.name.as_str()).collect();
    Failure::Usage(format!(
        "no tool \"{}\" is registered; the tools are: {}",
        text::ellipsize(name, 64),
        if names.is_empty() {
            "(none)".to_owned()
        } else {
            names.join(", ")
        }
    ))
}

impl From<Status> for ExitCode {
    fn from(status: Status) -> Self {
        match status {
            Status::Ok => ExitCode::SUCCESS,
            Status::Failed => ExitCode::from(1),
        }
    }
}

fn globals(matches: &ArgMatches) -> Result<Globals, String> {
    let given = matches
        .try_get_one::<PathBuf>("root")
        .ok()
        .flatten()
        .cloned();
    let (dir, root_given) = match given {
        Some(dir) => (dir, true),
        None => (
            std::env::current_dir()
                .map_err(|e| format!("cannot read the current directory: {e}"))?,
            false,
        ),
    };
    let root = dir
        .canonicalize()
        .map_err(|e| format!("--root {}: {e}", dir.display()))?;
    if !root.is_dir() {
        return Err(format!("--root {}: not a directory", dir.display()));
    }
    Ok(Globals { root, root_given })
}

/// `error: …` on one line, exit 2.
fn usage(message: &str) -> ExitCode {
    error_line(message);
    ExitCode::from(2)
}

/// `error: …` on one line, exit 1.
fn failure(message: &str) -> ExitCode {
    error_line(message);
    ExitCode::from(1)
}

fn error_line(message: &str) {
    let _ = writeln!(io::stderr().lock(), "error: {}", text::one_line(message));
}

/// clap's help and version go to stdout (exit 0); its errors become one
/// line on stderr (exit 2), with clap's tip when it has one; a missing
/// subcommand prints the help on stderr (exit 2).
fn clap_error(e: &clap::Error, bin: &str) -> ExitCode {
    use clap::error::ErrorKind;
    match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
            let _ = write!(io::stdout().lock(), "{}", e.render());
            ExitCode::SUCCESS
        }
        ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let _ = write!(io::stderr().lock(), "{}", e.render());
            ExitCode::from(2)
        }
        _ => usage(&format!(
            "{}; see '{bin} --help'",
            clap_message(&e.render().to_string())
        )),
    }
}

/// clap's error text on one line: the message and its tips, without the
/// usage that follows them.
fn clap_message(rendered: &str) -> String {
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
    if message.is_empty() {
        rendered.trim().to_owned()
    } else {
        message
    }
}

/// One line per panic, unless `RUST_BACKTRACE` asks for Rust's report.
fn install_panic_hook() {
    if std::env::var_os("RUST_BACKTRACE").is_some() {
        return;
    }
    std::panic::set_hook(Box::new(|info| {
        let payload = info.payload();
        let message = payload
            .downcast_ref::<&str>()
            .copied()
            .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
            .unwrap_or("a panic with a payload that is not text");
        let at = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        let thread = std::thread::current();
        let _ = writeln!(
            io::stderr().lock(),
            "panic in thread '{}'{at}: {}",
            thread.name().unwrap_or("unnamed"),
            text::ellipsize(&text::one_line(message), 300)
        );
    }));
}

/// `s` quoted for a POSIX shell, for the examples in `--help`.
fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clap_errors_fit_on_one_line() {
        let rendered = "error: unexpected argument '--jsn' found\n\n  tip: a similar argument exists: '--json'\n\nUsage: t list --json\n\nFor more information, try '--help'.\n";
        assert_eq!(
            clap_message(rendered),
            "unexpected argument '--jsn' found; tip: a similar argument exists: '--json'"
        );
        let rendered = "error: the following required arguments were not provided:\n  <NAME>\n\nUsage: t call <NAME> [JSON]\n";
        assert_eq!(
            clap_message(rendered),
            "the following required arguments were not provided: <NAME>"
        );
    }

    #[test]
    fn quotes_for_the_shell() {
        assert_eq!(shell_quote(r#"{"a":1}"#), r#"'{"a":1}'"#);
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
    }

    #[test]
    fn the_command_is_consistent() {
        let cli = Cli::new(|_| Registry::builder().build());
        cli.command("t").0.debug_assert();
        let cli = Cli::with_registry(Registry::builder().build().unwrap());
        let (command, own) = cli.command("t");
        assert!(own.is_empty());
        command.clone().debug_assert();
        assert!(command.get_arguments().all(|a| a.get_id() != "root"));
    }
}
