//! [`Import`]: which server to import from (a command over stdio, or a URL
//! over Streamable HTTP), how to name its tools, and the options of the
//! connection.

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use toolprism_core::ToolKind;

use super::presenter::Presenter;

/// The separator between an import's prefix and a tool's own name:
/// `fs__read_file`. Two underscores, as MCP clients spell it (`mcp__fs__read_file`);
/// tool names are `[A-Za-z0-9_-]`, where one `_` or `-` is common inside
/// a name and two underscores are rare.
pub const PREFIX_SEPARATOR: &str = "__";

/// How long [`Import::connect`] waits for the server to start and answer
/// `initialize` and `tools/list`, unless set: 30 seconds.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

/// The variables of the parent's environment a stdio server gets without
/// being asked: the ones the official MCP SDKs pass (`HOME`, `LOGNAME`,
/// `PATH`, `SHELL`, `TERM`, `USER`), none of them a secret, and without
/// which `npx` and `uvx`, the usual launchers, do not start. Anything else
/// (an API key, a token) reaches the server only when named:
/// [`Import::env`], [`Import::inherit_env`], or an `mcpServers` entry's
/// `env`.
pub const INHERITED_ENV: &[&str] = &["HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"];

/// Where an imported stdio server's stderr goes.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Stderr {
    /// This process's own stderr (the default: a server's complaints are
    /// seen where ours are; stdout, which carries the protocol, is never
    /// shared).
    #[default]
    Inherit,
    /// Nowhere.
    Discard,
    /// Appended to this file.
    Append(PathBuf),
}

/// How to reach the server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Transport {
    /// A child process speaking MCP on its stdin and stdout.
    Stdio {
        program: String,
        args: Vec<String>,
        /// Variables set for the child (after [`INHERITED_ENV`] and the
        /// inherited ones).
        env: BTreeMap<String, String>,
        /// Names of the parent's variables passed on as they are.
        inherit: Vec<String>,
        current_dir: Option<PathBuf>,
        stderr: Stderr,
    },
    /// A Streamable HTTP endpoint.
    Http {
        url: String,
        headers: Vec<(String, String)>,
        /// The CAs trusted, and whether plain HTTP may leave this machine.
        options: HttpOptions,
        /// The server's OAuth authorization, when it needs one.
        #[cfg(feature = "client-http")]
        oauth: Option<super::oauth::OAuth>,
    },
}

/// How an import reaches an HTTP server: the CAs it trusts beyond the
/// platform's, and whether plain `http://` may leave this machine.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct HttpOptions {
    /// PEM files of certificate authorities trusted next to the roots.
    pub(crate) ca: Vec<PathBuf>,
    /// Plain `http://` to a host that is not this machine.
    pub(crate) allow_http: bool,
}

/// One MCP server to import tools from, and how: build it, then
/// [`connect`](Self::connect) (or hand several to
/// [`Imports::connect`](super::Imports::connect)).
///
/// Names given to [`allow`](Self::allow), [`rename`](Self::rename),
/// [`kind`](Self::kind) and [`present`](Self::present) are the server's
/// own tool names, before any prefix.
///
/// ```no_run
/// use std::time::Duration;
/// use toolprism::mcp::import::Import;
///
/// # async fn run() -> Result<(), toolprism::mcp::import::ImportError> {
/// let fs = Import::stdio("npx", ["-y", "@modelcontextprotocol/server-filesystem", "/srv/notes"])
///     .name("fs")
///     .prefix("fs")                        // fs__read_file, fs__write_file, …
///     .allow(["read_file", "list_directory"])
///     .timeout(Duration::from_secs(20))
///     .connect()
///     .await?;
/// let tickets = Import::http("http://127.0.0.1:8080/mcp")
///     .bearer(std::env::var("TICKETS_TOKEN").unwrap_or_default())
///     .connect()
///     .await?;
/// let registry = tickets
///     .register_in(fs.register_in(toolprism::Registry::builder()))
///     .build()
///     .unwrap();
/// # let _ = registry; Ok(()) }
/// ```
#[derive(Clone)]
pub struct Import {
    pub(crate) transport: Transport,
    pub(crate) name: Option<String>,
    pub(crate) prefix: Option<String>,
    pub(crate) allow: Option<Vec<String>>,
    pub(crate) rename: BTreeMap<String, String>,
    pub(crate) timeout: Option<Duration>,
    pub(crate) connect_timeout: Duration,
    pub(crate) kinds: BTreeMap<String, ToolKind>,
    pub(crate) presenters: BTreeMap<String, Arc<dyn Presenter>>,
}

impl fmt::Debug for Import {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut shown = f.debug_struct("Import");
        shown
            .field("source", &self.source())
            .field("name", &self.name)
            .field("prefix", &self.prefix)
            .field("allow", &self.allow)
            .field("rename", &self.rename)
            .field("timeout", &self.timeout)
            .field("kinds", &self.kinds)
            .field("presenters", &self.presenters.keys().collect::<Vec<_>>());
        if let Transport::Http { options, .. } = &self.transport {
            shown.field("http", options);
        }
        #[cfg(feature = "client-http")]
        if let Transport::Http {
            oauth: Some(oauth), ..
        } = &self.transport
        {
            shown.field("oauth", oauth);
        }
        shown.finish_non_exhaustive()
    }
}

/// Equal when they import the same server the same way (presenters are
/// compared by name only).
impl PartialEq for Import {
    fn eq(&self, other: &Self) -> bool {
        self.transport == other.transport
            && self.name == other.name
            && self.prefix == other.prefix
            && self.allow == other.allow
            && self.rename == other.rename
            && self.timeout == other.timeout
            && self.connect_timeout == other.connect_timeout
            && self.kinds == other.kinds
            && self.presenters.keys().eq(other.presenters.keys())
    }
}

impl Eq for Import {}

impl Import {
    fn new(transport: Transport) -> Self {
        Import {
            transport,
            name: None,
            prefix: None,
            allow: None,
            rename: BTreeMap::new(),
            timeout: None,
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            kinds: BTreeMap::new(),
            presenters: BTreeMap::new(),
        }
    }

    /// A server run as a child process, speaking MCP on its stdin and
    /// stdout. It gets [`INHERITED_ENV`] from this process's environment and
    /// nothing else unless asked ([`env`](Self::env),
    /// [`inherit_env`](Self::inherit_env)). It runs in a process group of
    /// its own, killed whole when the import is dropped or the server is
    /// restarted.
    pub fn stdio<I, S>(program: impl Into<String>, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Import::new(Transport::Stdio {
            program: program.into(),
            args: args.into_iter().map(Into::into).collect(),
            env: BTreeMap::new(),
            inherit: Vec::new(),
            current_dir: None,
            stderr: Stderr::Inherit,
        })
    }

    /// A server at a Streamable HTTP endpoint: `https://HOST/mcp`, or
    /// `http://` on this machine (`localhost`, `127.0.0.0/8`, `::1`).
    /// Plain `http://` to another host is refused when connecting, unless
    /// [`allow_insecure_http`](Self::allow_insecure_http). HTTPS checks the
    /// server's certificate against the platform's roots (webpki's when
    /// the platform has none) and the CAs given with [`ca`](Self::ca).
    pub fn http(url: impl Into<String>) -> Self {
        Import::new(Transport::Http {
            url: url.into(),
            headers: Vec::new(),
            options: HttpOptions::default(),
            #[cfg(feature = "client-http")]
            oauth: None,
        })
    }

    /// The server's name, as messages say it (`the MCP server "fs"`);
    /// without one, the name the server gives itself in `initialize`.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// Names each tool `<prefix>__<its own name>` ([`PREFIX_SEPARATOR`]),
    /// so that two servers' tools cannot collide. Without a prefix, tools
    /// keep their own names, and a name another tool of the registry
    /// already has fails the registry's build, naming both.
    pub fn prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = Some(prefix.into());
        self
    }

    /// Imports only these tools (the server's names); connecting fails
    /// when the server has no tool of one of them.
    pub fn allow<I, S>(mut self, tools: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.allow = Some(tools.into_iter().map(Into::into).collect());
        self
    }

    /// Calls the server's tool `tool` by `name` in the registry (before the
    /// prefix): for a name toolprism does not allow (`[A-Za-z0-9_-]{1,64}`;
    /// MCP also allows `.` and `/`), or one that would collide.
    pub fn rename(mut self, tool: impl Into<String>, name: impl Into<String>) -> Self {
        self.rename.insert(tool.into(), name.into());
        self
    }

    /// The timeout of every imported call (the call's own still wins);
    /// unset, the registry's default applies. A call out of time ends as
    /// `TIMEOUT`, and the server is sent `notifications/cancelled`.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// How long connecting (and each reconnect) may take:
    /// [`DEFAULT_CONNECT_TIMEOUT`] unless set.
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// The kind of the server's tool `tool`, instead of the one read from
    /// its hints (see the [module docs](super#kinds)).
    pub fn kind(mut self, tool: impl Into<String>, kind: ToolKind) -> Self {
        self.kinds.insert(tool.into(), kind);
        self
    }

    /// Draws the server's tool `tool` with `presenter`'s cards, as any
    /// native tool's (C6 in `docs/contract.md`: from the persisted
    /// arguments and result only, so replay draws them again).
    pub fn present(mut self, tool: impl Into<String>, presenter: impl Presenter) -> Self {
        self.presenters.insert(tool.into(), Arc::new(presenter));
        self
    }

    /// Sets `key` to `value` in a stdio server's environment. No effect
    /// over HTTP.
    pub fn env(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        if let Transport::Stdio { env, .. } = &mut self.transport {
            env.insert(key.into(), value.into());
        }
        self
    }

    /// Passes this process's variable `key` (when set) on to a stdio
    /// server. No effect over HTTP.
    pub fn inherit_env(mut self, key: impl Into<String>) -> Self {
        if let Transport::Stdio { inherit, .. } = &mut self.transport {
            inherit.push(key.into());
        }
        self
    }

    /// The working directory of a stdio server (default: this process's).
    pub fn current_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        if let Transport::Stdio { current_dir, .. } = &mut self.transport {
            *current_dir = Some(dir.into());
        }
        self
    }

    /// Where a stdio server's stderr goes ([`Stderr::Inherit`] unless set).
    pub fn stderr(mut self, to: Stderr) -> Self {
        if let Transport::Stdio { stderr, .. } = &mut self.transport {
            *stderr = to;
        }
        self
    }

    /// Sends the header `name: value` with every HTTP request. No effect
    /// over stdio.
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        if let Transport::Http { headers, .. } = &mut self.transport {
            headers.push((name.into(), value.into()));
        }
        self
    }

    /// Sends `Authorization: Bearer <token>` with every HTTP request.
    pub fn bearer(self, token: impl AsRef<str>) -> Self {
        let value = format!("Bearer {}", token.as_ref());
        self.header("Authorization", value)
    }

    /// Trusts the certificate authorities in the PEM file at `path` for
    /// HTTPS, next to the platform's roots: a private server's own CA.
    /// Repeat for several. No effect over stdio.
    pub fn ca(mut self, path: impl Into<PathBuf>) -> Self {
        if let Transport::Http { options, .. } = &mut self.transport {
            options.ca.push(path.into());
        }
        self
    }

    /// Allows plain `http://` to a host other than this machine: the calls,
    /// their results and any token cross the network readable by anyone
    /// on the way. For a network you trust entirely; `https://` is the
    /// way. No effect over stdio.
    pub fn allow_insecure_http(mut self) -> Self {
        if let Transport::Http { options, .. } = &mut self.transport {
            options.allow_http = true;
        }
        self
    }

    /// Authorizes with OAuth 2.1 when the server asks for it (a `401` with
    /// `WWW-Authenticate: Bearer`), as the MCP authorization specification
    /// says: see [`OAuth`](super::OAuth) and the [module
    /// docs](super#authorization). Not with an `Authorization` header of
    /// one's own ([`bearer`](Self::bearer)): connecting refuses both. No
    /// effect over stdio.
    #[cfg(feature = "client-http")]
    pub fn oauth(mut self, authorization: super::oauth::OAuth) -> Self {
        if let Transport::Http { oauth, .. } = &mut self.transport {
            *oauth = Some(authorization);
        }
        self
    }

    /// For a command line's HTTP imports: `oauth` for an import that has
    /// no [`OAuth`](super::OAuth) of its own and no `Authorization` header
    /// ([`bearer`](Self::bearer)); an import with its own OAuth keeps it,
    /// taking from `oauth` the browser and the login hint when it has
    /// none. No effect over stdio.
    #[cfg(feature = "client-http")]
    pub fn default_oauth(mut self, default: super::oauth::OAuth) -> Self {
        if let Transport::Http { headers, oauth, .. } = &mut self.transport {
            let has_header = headers
                .iter()
                .any(|(name, _)| name.eq_ignore_ascii_case("authorization"));
            *oauth = match oauth.take() {
                Some(own) => Some(own.fill_from(default)),
                None if has_header => None,
                None => Some(default),
            };
        }
        self
    }

    /// Whether the server is reached over HTTP ([`http`](Self::http)).
    pub fn is_http(&self) -> bool {
        matches!(self.transport, Transport::Http { .. })
    }

    /// The server as messages name it: the command line, or the URL.
    /// Header values and environment values are never shown.
    pub fn source(&self) -> String {
        match &self.transport {
            Transport::Stdio { program, args, .. } => {
                let mut shown = quote(program);
                for arg in args {
                    shown.push(' ');
                    shown.push_str(&quote(arg));
                }
                bounded(shown)
            }
            Transport::Http { url, .. } => bounded(url.clone()),
        }
    }
}

/// `word` as a shell would need it to read it back, for messages.
fn quote(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"@%+=:,./_-".contains(&b));
    if plain {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// At most 200 bytes of `text`, cut on a char boundary.
fn bounded(mut text: String) -> String {
    const MAX: usize = 200;
    if text.len() > MAX {
        text.truncate(text.floor_char_boundary(MAX));
        text.push('…');
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_source_shows_the_command_line_and_never_a_secret() {
        let import = Import::stdio("npx", ["-y", "@scope/server", "a dir"]).env("KEY", "secret");
        assert_eq!(import.source(), "npx -y @scope/server 'a dir'");
        let import = Import::http("http://127.0.0.1:1/mcp").bearer("secret");
        assert_eq!(import.source(), "http://127.0.0.1:1/mcp");
        assert!(!format!("{import:?}").contains("secret"));
    }
}
