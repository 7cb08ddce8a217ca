//! The [`Cli`] builder: where the registry comes from (built, or built from
//! the parsed [`Globals`]), the program's description and example, an
//! optional command of its own, and the run: parse, check `--root`, build
//! the registry when a command needs it, dispatch, shut down.

use std::ffi::OsString;
use std::fmt;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use clap::{ArgMatches, FromArgMatches};

use toolprism_core::{Mode, Registry};
use toolprism_sandbox::{SandboxMode, SandboxPolicy};

use crate::command::{Top, assemble};
use crate::exit::{clap_error, failure, usage};
use crate::panic;

/// The options every command takes, parsed before the registry is built.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Globals {
    root: PathBuf,
    root_given: bool,
    mode: Mode,
    /// `--sandbox`, `--allow-write`, `--allow-network`, `--env`.
    sandbox: SandboxPolicy,
    /// The program's own flags ([`Cli::flag`]) that were given.
    flags: Vec<&'static str>,
    /// `--import` and `--mcp-config`, connected before the registry is built.
    #[cfg(feature = "import")]
    imports: crate::import::Given,
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

    /// Which tools the model is offered (`--mode native|code|both`, for a
    /// registry with Code Mode): as given, else `both` for `call` (a person
    /// at the command line may call any tool, `run_code` included) and
    /// `native` for every other command. Apply it when building the
    /// registry (`toolprism::code::CodeMode::code_mode`).
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// The sandbox policy of the tools the registry holds: `--sandbox MODE`
    /// (`read-only`, `workspace-write` the default, or `full-access`),
    /// `--allow-write PATH` (repeatable), `--allow-network`, `--env NAME`
    /// (repeatable); the variable `serve --token-env` names is always
    /// withheld. Set it on the workspace the built-in tools are made from
    /// (`Workspace::with_sandbox` in `toolprism-tools`).
    ///
    /// ```
    /// use toolprism::Registry;
    /// use toolprism::cli::Cli;
    /// let status = Cli::new(|globals| {
    ///     assert_eq!(globals.sandbox().summary(), "read-only, network off");
    ///     Registry::builder().build()
    /// })
    /// .run_from(["mytools", "--sandbox", "read-only", "list"]);
    /// assert_eq!(status, std::process::ExitCode::SUCCESS);
    /// ```
    pub fn sandbox(&self) -> &SandboxPolicy {
        &self.sandbox
    }

    /// Whether the program's own flag `--<long>` ([`Cli::flag`]) was given.
    pub fn flag(&self, long: &str) -> bool {
        self.flags.contains(&long)
    }

    /// The tools of the MCP servers given with `--import` and
    /// `--mcp-config` (feature `import`), already connected: register them
    /// with the program's own, and `serve` is a hub.
    ///
    /// ```no_run
    /// use toolprism::Registry;
    /// use toolprism::cli::Cli;
    ///
    /// fn main() -> std::process::ExitCode {
    ///     // hub serve --import 'npx -y @modelcontextprotocol/server-everything' --mcp-config servers.json
    ///     Cli::new(|globals| globals.imports().register_in(Registry::builder()).build()).run()
    /// }
    /// ```
    ///
    /// A program whose registry leaves them out is told so when a flag is
    /// given (exit status 2), rather than serving without them.
    #[cfg(feature = "import")]
    pub fn imports(&self) -> &toolprism_mcp::import::Imports {
        self.imports.connected()
    }

    #[cfg(feature = "import")]
    pub(crate) fn imports_mut(&mut self) -> &mut crate::import::Given {
        &mut self.imports
    }
}

type Build = std::rc::Rc<dyn Fn(&Globals) -> Result<Registry, String>>;
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
    /// The program's own flags: `--<long>`, and its help.
    flags: Vec<(&'static str, &'static str)>,
}

impl fmt::Debug for Cli {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Cli")
            .field("about", &self.about)
            .field("name", &self.name)
            .field("default_command", &self.default.is_some())
            .field("flags", &self.flags)
            .finish_non_exhaustive()
    }
}

impl Cli {
    /// A command line whose registry is built from the parsed global
    /// options (`--root DIR`), once a command needs it. An `Err` ends the
    /// program with its message and exit status 2.
    ///
    /// `serve` builds it again, from the same options, when an imported
    /// server changes its tools (`notifications/tools/list_changed`;
    /// [`Globals::imports`] then registers the new ones), and serves the
    /// new registry from then on: its definitions, its Code Mode SDK
    /// (`run_code`'s description) and its presenters are those of the new
    /// build. A build that fails then keeps the registry served, and says
    /// why on stderr.
    pub fn new<F, E>(build: F) -> Self
    where
        F: Fn(&Globals) -> Result<Registry, E> + 'static,
        E: fmt::Display,
    {
        Cli::from_source(Source::Build(std::rc::Rc::new(move |globals| {
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
            flags: Vec::new(),
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

    /// A flag of the program's own, `--<long>`, that every command takes
    /// (shown in each command's `--help` with `help`), for what the
    /// registry is built with: [`Globals::flag`] says whether it was given.
    /// The showcase's `--approvals` is one.
    ///
    /// ```
    /// use std::process::ExitCode;
    /// use toolprism::{PreDecision, PreExecute, Registry};
    /// use toolprism::cli::Cli;
    ///
    /// let cli = Cli::new(|globals| {
    ///     let mut tools = Registry::builder();
    ///     if globals.flag("careful") {
    ///         tools = tools.pre_execute(|_: &PreExecute<'_>| PreDecision::ask("Run it?"));
    ///     }
    ///     tools.build()
    /// })
    /// .flag("careful", "Ask the user before every call");
    /// assert_eq!(cli.run_from(["tools", "list", "--careful"]), ExitCode::SUCCESS);
    /// ```
    pub fn flag(mut self, long: &'static str, help: &'static str) -> Self {
        self.flags.push((long, help));
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
        let globals = match globals(&matches, &self.flags, &bin) {
            Ok(globals) => globals,
            Err(message) => return usage(&message),
        };
        let root_based = matches!(self.source, Source::Build(_));
        let Cli {
            source, default, ..
        } = self;
        if matches.subcommand_name().is_none() {
            #[cfg(feature = "import")]
            if globals.imports.any() {
                return usage(
                    "--import and --mcp-config apply to the commands (list, schema, call, replay, serve)",
                );
            }
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
        panic::install_hook();
        let runtime = match tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
        {
            Ok(runtime) => runtime,
            Err(e) => return failure(&format!("cannot start the tokio runtime: {e}")),
        };
        // `import login` and `import logout` need no registry.
        #[cfg(feature = "import")]
        let command = match command {
            crate::command::Command::Import(args) => {
                let outcome = crate::import::run(args, &matches, &runtime, &bin);
                runtime.shutdown_timeout(Duration::from_millis(200));
                return crate::exit::finish(outcome, Ok(()));
            }
            command => command,
        };
        // Connecting is async and the build is not: the servers are
        // connected on the command's runtime, which keeps them.
        #[cfg(feature = "import")]
        let globals = match crate::import::connect(globals, &runtime) {
            Ok(globals) => globals,
            Err(e) => return usage(&format!("cannot build the tools: {e}")),
        };
        let mut rebuild: Option<crate::command::Rebuild> = None;
        let registry = match source {
            Source::Ready(registry) => registry,
            Source::Build(build) => {
                let _entered = runtime.enter();
                let registry = match build(&globals) {
                    Ok(registry) => registry,
                    Err(e) => return usage(&format!("cannot build the tools: {e}")),
                };
                let again = globals.clone();
                rebuild = Some(Box::new(move || build(&again)));
                registry
            }
        };
        #[cfg(feature = "import")]
        if let Err(e) = crate::import::check_registered(&globals, &registry) {
            return usage(&e);
        }
        let built = root_based.then_some(&globals);
        let status = command.run(&registry, &runtime, &bin, built, rebuild);
        // A timed-out blocking tool may still be running on the blocking
        // pool: its result is dropped, and the program does not wait for it.
        drop(registry);
        runtime.shutdown_timeout(Duration::from_millis(200));
        status
    }

    /// The clap command and the default command's options (id, as shown);
    /// see [`assemble`].
    fn command(&self, bin: &str) -> (clap::Command, Vec<(String, String)>) {
        let (mut command, own) = assemble(
            bin,
            self.about.as_deref(),
            (&self.example.0, &self.example.1),
            self.default.as_ref().map(|d| d.augment),
            matches!(self.source, Source::Build(_)),
        );
        for (long, help) in &self.flags {
            command = command.arg(
                clap::Arg::new(*long)
                    .long(*long)
                    .global(true)
                    .action(clap::ArgAction::SetTrue)
                    .help(*help),
            );
        }
        (command, own)
    }
}

/// The global options out of `matches`: `--root`, or the current
/// directory, canonical and known to be a directory.
fn globals(
    matches: &ArgMatches,
    flags: &[(&'static str, &'static str)],
    bin: &str,
) -> Result<Globals, String> {
    #[cfg(not(feature = "import"))]
    let _ = bin;
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
    let mode = match matches.try_get_one::<Mode>("mode").ok().flatten() {
        Some(mode) => *mode,
        None if matches.subcommand_name() == Some("call") => Mode::Both,
        None => Mode::Native,
    };
    let flags = flags
        .iter()
        .map(|(long, _)| *long)
        .filter(|long| flag_given(matches, long))
        .collect();
    let sandbox = sandbox(matches)?;
    Ok(Globals {
        root,
        root_given,
        mode,
        sandbox,
        flags,
        #[cfg(feature = "import")]
        imports: crate::import::given(matches, bin)?,
    })
}

/// The sandbox options out of `matches`.
fn sandbox(matches: &ArgMatches) -> Result<SandboxPolicy, String> {
    let mode = matches
        .try_get_one::<SandboxMode>("sandbox")
        .ok()
        .flatten()
        .copied()
        .unwrap_or_default();
    // A command line without `--root` (a ready registry) has none of these.
    let network = matches.try_get_one::<bool>("allow-network").is_ok()
        && flag_given(matches, "allow-network");
    let mut policy = SandboxPolicy::new(mode).allow_network(network);
    let writable: Vec<PathBuf> = matches
        .try_get_many::<PathBuf>("allow-write")
        .ok()
        .flatten()
        .into_iter()
        .flatten()
        .cloned()
        .collect();
    if !writable.is_empty() && mode != SandboxMode::WorkspaceWrite {
        return Err(format!(
            "--allow-write widens workspace-write, and the sandbox is {mode}: {}",
            if mode == SandboxMode::ReadOnly {
                "read-only writes nothing; choose --sandbox workspace-write to write there"
            } else {
                "full-access writes everywhere already; leave --allow-write out"
            }
        ));
    }
    for path in writable {
        let canonical = path
            .canonicalize()
            .map_err(|e| format!("--allow-write {}: {e}", path.display()))?;
        policy = policy.allow_write(canonical);
    }
    for name in matches
        .try_get_many::<String>("env")
        .ok()
        .flatten()
        .into_iter()
        .flatten()
    {
        policy = policy.pass_env(name.clone());
    }
    // The server's own token never reaches a command.
    if let Some(("serve", serve)) = matches.subcommand()
        && let Some(token) = serve.try_get_one::<String>("token_env").ok().flatten()
    {
        if policy.passed_env().contains(token) {
            return Err(format!(
                "--env {token}: it holds the server's own token (--token-env), which a command never gets"
            ));
        }
        policy = policy.withhold_env(token.clone());
    }
    Ok(policy)
}

/// Whether the global flag `id` was given on the command line, before or
/// after the subcommand (clap keeps a global flag's default at the level
/// where it was not written).
fn flag_given(matches: &ArgMatches, id: &str) -> bool {
    matches.value_source(id) == Some(clap::parser::ValueSource::CommandLine)
        || matches
            .subcommand()
            .is_some_and(|(_, sub)| flag_given(sub, id))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_is_consistent() {
        let cli = Cli::new(|_| Registry::builder().build()).flag("careful", "Ask first");
        cli.command("t").0.debug_assert();
        for args in [&["t", "--careful", "list"][..], &["t", "list", "--careful"]] {
            let matches = cli.command("t").0.get_matches_from(args);
            assert!(
                globals(&matches, &cli.flags, "t").unwrap().flag("careful"),
                "{args:?}"
            );
        }
        let matches = cli.command("t").0.get_matches_from(["t", "list"]);
        assert!(!globals(&matches, &cli.flags, "t").unwrap().flag("careful"));
        let cli = Cli::with_registry(Registry::builder().build().unwrap());
        let (command, own) = cli.command("t");
        assert!(own.is_empty());
        command.clone().debug_assert();
        assert!(command.get_arguments().all(|a| a.get_id() != "root"));
    }
}
