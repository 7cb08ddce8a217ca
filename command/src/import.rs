//! `--import` and `--mcp-config`: read with the other global options,
//! connected on the command's runtime before the registry is built, and
//! checked to have been registered after.

use std::io::IsTerminal;
use std::path::PathBuf;

use clap::ArgMatches;

use toolprism_core::Registry;
use toolprism_mcp::import::{Import, Imports, McpConfig, OAuth, SystemBrowser, split_command_line};

/// The imports given on the command line: what to connect to, then what
/// connecting gave.
#[derive(Debug, Clone, Default)]
pub(crate) struct Given {
    pending: Vec<Import>,
    connected: Imports,
}

/// Equal when the same servers were asked for.
impl PartialEq for Given {
    fn eq(&self, other: &Self) -> bool {
        self.pending == other.pending
    }
}

impl Eq for Given {}

impl Given {
    /// Whether any import was given.
    pub(crate) fn any(&self) -> bool {
        !self.pending.is_empty()
    }

    pub(crate) fn connected(&self) -> &Imports {
        &self.connected
    }
}

/// The imports of `--import` (in order) then `--mcp-config` (each file in
/// order, each server in the file's order). HTTP ones trust the `--ca`
/// files, may use plain HTTP off this machine with `--allow-http`, and
/// authorize with OAuth when the server asks (tokens of `bin import login
/// URL`; a browser on first use when stderr is a terminal).
pub(crate) fn given(matches: &ArgMatches, bin: &str) -> Result<Given, String> {
    let mut pending = Vec::new();
    let imports = matches
        .try_get_many::<String>("import")
        .ok()
        .flatten()
        .into_iter()
        .flatten();
    for spec in imports {
        pending.push(import(spec)?);
    }
    let configs = matches
        .try_get_many::<PathBuf>("mcp-config")
        .ok()
        .flatten()
        .into_iter()
        .flatten();
    for path in configs {
        let config = McpConfig::read(path).map_err(|e| format!("--mcp-config: {e}"))?;
        pending.extend(config.imports());
    }
    let options = HttpFlags::of(matches);
    let pending = pending
        .into_iter()
        .map(|import| options.apply(import, bin))
        .collect();
    Ok(Given {
        pending,
        connected: Imports::default(),
    })
}

/// `--ca` and `--allow-http`, for every HTTP import.
#[derive(Debug, Default)]
pub(crate) struct HttpFlags {
    ca: Vec<PathBuf>,
    allow_http: bool,
}

impl HttpFlags {
    pub(crate) fn of(matches: &ArgMatches) -> HttpFlags {
        HttpFlags {
            ca: matches
                .try_get_many::<PathBuf>("ca")
                .ok()
                .flatten()
                .into_iter()
                .flatten()
                .cloned()
                .collect(),
            allow_http: matches
                .try_get_one::<bool>("allow-http")
                .ok()
                .flatten()
                .copied()
                .unwrap_or(false)
                || matches
                    .subcommand()
                    .and_then(|(_, sub)| sub.try_get_one::<bool>("allow-http").ok().flatten())
                    .copied()
                    .unwrap_or(false),
        }
    }

    /// `import` with these flags and, over HTTP, OAuth on demand.
    pub(crate) fn apply(&self, mut import: Import, bin: &str) -> Import {
        if !import.is_http() {
            return import;
        }
        for ca in &self.ca {
            import = import.ca(ca.clone());
        }
        if self.allow_http {
            import = import.allow_insecure_http();
        }
        // Without a home for the tokens (neither XDG_CONFIG_HOME nor HOME),
        // an import still works with servers that ask for none.
        if OAuth::default_token_dir().is_none() {
            return import;
        }
        let url = import.source();
        let mut oauth = OAuth::new().login_hint(format!("{bin} import login {url}"));
        // A person can finish a login only where they read its address.
        if std::io::stderr().is_terminal() {
            oauth = oauth.browser(SystemBrowser);
        }
        import.default_oauth(oauth)
    }
}

/// One `--import`: a URL (`http://` or `https://`), else a command line.
fn import(spec: &str) -> Result<Import, String> {
    let trimmed = spec.trim();
    let lower = trimmed.get(..8).unwrap_or(trimmed).to_ascii_lowercase();
    if lower.starts_with("http://") || lower.starts_with("https://") {
        return Ok(Import::http(trimmed));
    }
    let words = split_command_line(spec).map_err(|e| format!("--import {spec:?}: {e}"))?;
    let Some((program, args)) = words.split_first() else {
        return Err("--import needs a command line or a URL".to_owned());
    };
    Ok(Import::stdio(program.clone(), args.iter().cloned()))
}

/// Connects every pending import, all at once.
pub(crate) fn connect(
    mut globals: crate::Globals,
    runtime: &tokio::runtime::Runtime,
) -> Result<crate::Globals, String> {
    let given = globals.imports_mut();
    if given.pending.is_empty() {
        return Ok(globals);
    }
    let pending = given.pending.clone();
    given.connected = runtime
        .block_on(Imports::connect(pending))
        .map_err(|e| e.to_string())?;
    Ok(globals)
}

/// Fails when the program built its registry without the imported tools
/// (its build does not call `globals.imports().register_in(…)`).
pub(crate) fn check_registered(
    globals: &crate::Globals,
    registry: &Registry,
) -> Result<(), String> {
    use toolprism_core::DynamicTool;
    let tools = globals.imports().tools();
    let missing = tools
        .iter()
        .map(|t| t.definition().name.as_str())
        .find(|name| registry.program_definition(name).is_none());
    match missing {
        Some(name) => Err(format!(
            "this program's tools leave out the imported tool \"{name}\": its registry must register `globals.imports()` (`globals.imports().register_in(builder)`) for --import and --mcp-config to work"
        )),
        None => Ok(()),
    }
}

/// `import login URL` and `import logout URL`.
#[derive(Debug, clap::Args)]
pub(crate) struct ImportArgs {
    #[command(subcommand)]
    action: ImportAction,
}

#[derive(Debug, clap::Subcommand)]
enum ImportAction {
    /// Log in to an MCP server over HTTP with OAuth (in a browser, back to
    /// 127.0.0.1), keeping its tokens for --import and --mcp-config
    Login(LoginArgs),
    /// Forget the tokens kept for an MCP server
    Logout(LogoutArgs),
}

#[derive(Debug, clap::Args)]
struct LoginArgs {
    /// The server's Streamable HTTP URL (https://HOST/mcp)
    url: String,
    /// The ID of a client the authorization server registered for you
    /// [default: a client ID metadata document (--client-metadata-url) or a
    /// dynamic registration]
    #[arg(long, value_name = "ID")]
    client_id: Option<String>,
    /// With --client-id: its secret, read from the environment variable NAME
    #[arg(long, value_name = "NAME", requires = "client_id")]
    client_secret_env: Option<String>,
    /// The HTTPS URL of this client's metadata document, its client ID
    /// where the authorization server supports them
    #[arg(long, value_name = "URL")]
    client_metadata_url: Option<String>,
    /// A scope to ask for instead of the server's (repeatable)
    #[arg(long = "scope", value_name = "SCOPE")]
    scopes: Vec<String>,
    /// The port of the login's redirect on 127.0.0.1 [default: any free one]
    #[arg(long, value_name = "PORT")]
    port: Option<u16>,
    /// Print the address to open, and open no browser
    #[arg(long)]
    no_browser: bool,
    /// How long to wait for the login in the browser, in seconds
    #[arg(long, value_name = "SECS", default_value_t = 300, value_parser = clap::value_parser!(u64).range(1..))]
    timeout: u64,
}

#[derive(Debug, clap::Args)]
struct LogoutArgs {
    /// The server's Streamable HTTP URL
    url: String,
}

/// Prints the address to open, for `--no-browser`.
fn print_only(url: &str) -> Result<(), String> {
    eprintln!("To authorize, open this address in a browser:\n\n  {url}\n");
    Ok(())
}

/// Runs `import login` or `import logout`.
pub(crate) fn run(
    args: ImportArgs,
    matches: &ArgMatches,
    runtime: &tokio::runtime::Runtime,
    bin: &str,
) -> Result<crate::Status, crate::Failure> {
    use crate::{Failure, Status};
    let flags = HttpFlags::of(matches);
    match args.action {
        ImportAction::Login(login) => {
            let mut oauth = OAuth::new()
                .login_timeout(std::time::Duration::from_secs(login.timeout))
                .login_hint(format!("{bin} import login {}", login.url));
            oauth = if login.no_browser {
                oauth.browser(print_only)
            } else {
                oauth.browser(SystemBrowser)
            };
            if let Some(url) = &login.client_metadata_url {
                oauth = oauth.client_metadata_url(url.clone());
            }
            if let Some(id) = &login.client_id {
                let secret = match &login.client_secret_env {
                    Some(name) => Some(std::env::var(name).map_err(|_| {
                        Failure::Usage(format!(
                            "--client-secret-env {name}: the variable is not set"
                        ))
                    })?),
                    None => None,
                };
                oauth = oauth.client(id.clone(), secret);
            }
            if !login.scopes.is_empty() {
                oauth = oauth.scopes(login.scopes.clone());
            }
            if let Some(port) = login.port {
                oauth = oauth.redirect_port(port);
            }
            let import = flags.apply(Import::http(&login.url), bin).oauth(oauth);
            let file = runtime
                .block_on(import.login())
                .map_err(|e| Failure::Failed(e.to_string()))?;
            eprintln!(
                "{bin}: logged in to {}; its tokens are in {} (readable by you only)",
                login.url,
                file.display()
            );
            Ok(Status::Ok)
        }
        ImportAction::Logout(logout) => {
            let import = flags.apply(Import::http(&logout.url), bin);
            match import.logout() {
                Ok(Some(file)) => {
                    eprintln!(
                        "{bin}: forgot the tokens of {} ({})",
                        logout.url,
                        file.display()
                    );
                    Ok(Status::Ok)
                }
                Ok(None) => {
                    eprintln!("{bin}: no tokens were kept for {}", logout.url);
                    Ok(Status::Ok)
                }
                Err(e) => Err(Failure::Failed(e.to_string())),
            }
        }
    }
}
