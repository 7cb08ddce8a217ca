//! [`McpConfig`]: the `mcpServers` file MCP clients read, as imports; and
//! [`split_command_line`] for `--import 'CMD ARGS…'`.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;

use super::ImportError;
use super::source::Import;

/// The servers of an `mcpServers` file, the format Claude Desktop, Claude
/// Code (`.mcp.json`), Cursor and others read:
///
/// ```json
/// {
///   "mcpServers": {
///     "fs":   {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "."],
///              "env": {"LOG_LEVEL": "warn"}},
///     "tickets": {"type": "http", "url": "http://127.0.0.1:8080/mcp",
///              "headers": {"Authorization": "Bearer ${TICKETS_TOKEN}"}}
///   }
/// }
/// ```
///
/// Each entry becomes an [`Import`] named and prefixed by its key
/// (`fs__read_text_file`). Stdio entries: `command`, `args`, `env`, `cwd`
/// (`type` absent or `"stdio"`). HTTP entries: `url`, `headers` (`type`
/// absent, `"http"` or `"streamable-http"`; the older SSE transport,
/// `"sse"`, is refused). Either may set `timeout` (milliseconds, each
/// call's), `includeTools` (the tools to import, by the server's names) and
/// `disabled: true` (left out). An HTTP entry may set `oauth` (see
/// [`OAuth`](super::OAuth)): `clientId` and `clientSecret` of a client
/// registered beforehand, `clientName`, `clientMetadataUrl`, `scopes`,
/// `callbackPort`, and `"grant": "client_credentials"` for a machine
/// (with `clientId` and `clientSecret`). Other keys, which clients add for
/// themselves, are ignored. `${VAR}` and `${VAR:-default}` in `command`,
/// `args`, `env` values, `url`, header values and `oauth`'s strings are replaced by the
/// variable from this process's environment; a variable that is not set and
/// has no default is an error, never an empty string. Servers are imported
/// in the file's order.
///
/// ```
/// use toolprism::mcp::import::McpConfig;
///
/// let config = McpConfig::parse(
///     r#"{"mcpServers": {"time": {"command": "uvx", "args": ["mcp-server-time"]},
///                        "api": {"type": "http", "url": "http://127.0.0.1:9/mcp"}}}"#,
///     "example.json",
/// )
/// .unwrap();
/// let names: Vec<&str> = config.servers().map(|(name, _)| name).collect();
/// assert_eq!(names, ["time", "api"]);
/// assert_eq!(config.imports()[0].source(), "uvx mcp-server-time");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpConfig {
    servers: Vec<(String, Import)>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Entry {
    #[serde(rename = "type")]
    kind: Option<String>,
    command: Option<String>,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    cwd: Option<String>,
    url: Option<String>,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    timeout: Option<u64>,
    include_tools: Option<Vec<String>>,
    #[serde(default)]
    disabled: bool,
    oauth: Option<OAuthEntry>,
}

/// An HTTP entry's `oauth`: how toolprism identifies itself to the
/// server's authorization server.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[cfg_attr(not(feature = "client-http"), allow(dead_code))]
struct OAuthEntry {
    client_id: Option<String>,
    client_secret: Option<String>,
    client_name: Option<String>,
    client_metadata_url: Option<String>,
    #[serde(default)]
    scopes: Vec<String>,
    /// `"authorization_code"` (a person, the default) or
    /// `"client_credentials"` (a machine).
    grant: Option<String>,
    callback_port: Option<u16>,
}

impl McpConfig {
    /// Reads the file at `path` ([`parse`](Self::parse)).
    pub fn read(path: impl AsRef<Path>) -> Result<McpConfig, ImportError> {
        let path = path.as_ref();
        let shown = path.display().to_string();
        let text = std::fs::read_to_string(path)
            .map_err(|e| ImportError::new(&shown, format!("cannot read it: {e}")))?;
        McpConfig::parse(&text, &shown)
    }

    /// Reads `text`, an `mcpServers` document; `origin` (a path) names it
    /// in errors.
    pub fn parse(text: &str, origin: &str) -> Result<McpConfig, ImportError> {
        let error = |message: String| ImportError::new(origin, message);
        let document: Value =
            serde_json::from_str(text).map_err(|e| error(format!("not JSON: {e}")))?;
        // Keys in the file's order: serde_json's map is sorted, so the
        // order is read from the text's own object.
        let Some(servers) = document.get("mcpServers").and_then(Value::as_object) else {
            return Err(error(
                "it has no \"mcpServers\" object: write {\"mcpServers\": {\"NAME\": {\"command\": …}}}"
                    .to_owned(),
            ));
        };
        let order = key_order(text, servers.keys().map(String::as_str));
        let mut out = Vec::new();
        for name in order {
            let value = &servers[name];
            let at =
                |message: String| error(format!("server \"{}\": {message}", name.escape_debug()));
            let entry: Entry =
                serde_json::from_value(value.clone()).map_err(|e| at(e.to_string()))?;
            if entry.disabled {
                continue;
            }
            if !super::valid_name(name) || name.len() > 32 {
                return Err(at(
                    "a server's name is its tools' prefix: use 1 to 32 characters from A-Z, a-z, 0-9, `_` and `-`"
                        .to_owned(),
                ));
            }
            let expand = |s: &str| expand(s).map_err(&at);
            let kind = entry.kind.as_deref();
            let mut import = match (kind, &entry.command, &entry.url) {
                (None | Some("stdio"), Some(command), None) => {
                    let args = entry
                        .args
                        .iter()
                        .map(|a| expand(a))
                        .collect::<Result<Vec<_>, _>>()?;
                    let mut import = Import::stdio(expand(command)?, args);
                    for (key, value) in &entry.env {
                        import = import.env(key.clone(), expand(value)?);
                    }
                    if let Some(dir) = &entry.cwd {
                        import = import.current_dir(expand(dir)?);
                    }
                    import
                }
                (None | Some("http" | "streamable-http" | "streamableHttp"), None, Some(url)) => {
                    let mut import = Import::http(expand(url)?);
                    for (key, value) in &entry.headers {
                        import = import.header(key.clone(), expand(value)?);
                    }
                    if let Some(oauth) = &entry.oauth {
                        import = with_oauth(import, oauth).map_err(&at)?;
                    }
                    import
                }
                (Some("sse"), _, _) => {
                    return Err(at(
                        "the SSE transport (\"type\": \"sse\") is not supported; use the server's Streamable HTTP endpoint (\"type\": \"http\")"
                            .to_owned(),
                    ));
                }
                (_, Some(_), Some(_)) => {
                    return Err(at(
                        "give either \"command\" (stdio) or \"url\" (HTTP), not both".to_owned(),
                    ));
                }
                (_, None, None) => {
                    return Err(at("give \"command\" (stdio) or \"url\" (HTTP)".to_owned()));
                }
                (Some(other), _, _) => {
                    return Err(at(format!(
                        "\"type\": \"{}\" is not one of stdio, http, streamable-http for this entry",
                        other.escape_debug()
                    )));
                }
            };
            import = import.name(name.to_owned()).prefix(name.to_owned());
            if let Some(ms) = entry.timeout {
                import = import.timeout(Duration::from_millis(ms.max(1)));
            }
            if let Some(tools) = entry.include_tools {
                import = import.allow(tools);
            }
            out.push((name.to_owned(), import));
        }
        Ok(McpConfig { servers: out })
    }

    /// The servers, by name, in the file's order (disabled ones left out).
    pub fn servers(&self) -> impl Iterator<Item = (&str, &Import)> {
        self.servers
            .iter()
            .map(|(name, import)| (name.as_str(), import))
    }

    /// The imports, in the file's order.
    pub fn imports(self) -> Vec<Import> {
        self.servers.into_iter().map(|(_, import)| import).collect()
    }
}

/// An HTTP entry's `oauth` on its import.
#[cfg(feature = "client-http")]
fn with_oauth(import: Import, entry: &OAuthEntry) -> Result<Import, String> {
    use super::oauth::OAuth;
    let mut oauth = OAuth::new();
    if let Some(name) = &entry.client_name {
        oauth = oauth.client_name(expand(name)?);
    }
    if let Some(url) = &entry.client_metadata_url {
        oauth = oauth.client_metadata_url(expand(url)?);
    }
    let secret = entry.client_secret.as_deref().map(expand).transpose()?;
    match (entry.grant.as_deref(), &entry.client_id, secret) {
        (Some("client_credentials"), Some(id), Some(secret)) => {
            oauth = oauth.client_credentials(expand(id)?, secret);
        }
        (Some("client_credentials"), _, _) => {
            return Err(
                "oauth: the client_credentials grant needs \"clientId\" and \"clientSecret\""
                    .to_owned(),
            );
        }
        (None | Some("authorization_code"), Some(id), secret) => {
            oauth = oauth.client(expand(id)?, secret);
        }
        (None | Some("authorization_code"), None, Some(_)) => {
            return Err("oauth: \"clientSecret\" needs \"clientId\"".to_owned());
        }
        (None | Some("authorization_code"), None, None) => {}
        (Some(other), _, _) => {
            return Err(format!(
                "oauth: \"grant\": \"{}\" is not authorization_code or client_credentials",
                other.escape_debug()
            ));
        }
    }
    if !entry.scopes.is_empty() {
        oauth = oauth.scopes(entry.scopes.clone());
    }
    if let Some(port) = entry.callback_port {
        oauth = oauth.redirect_port(port);
    }
    Ok(import.oauth(oauth))
}

#[cfg(not(feature = "client-http"))]
fn with_oauth(import: Import, _entry: &OAuthEntry) -> Result<Import, String> {
    Ok(import)
}

/// The keys of `servers` in the order their text first appears after
/// `"mcpServers"` in `text` (serde_json sorts them); keys not found (an
/// escaped spelling) come last, sorted.
fn key_order<'a>(text: &str, keys: impl Iterator<Item = &'a str>) -> Vec<&'a str> {
    let start = text.find("\"mcpServers\"").unwrap_or(0);
    let rest = &text[start..];
    let mut keyed: Vec<(usize, &str)> = keys
        .map(|key| {
            let quoted = serde_json::to_string(key).unwrap_or_default();
            let at = rest
                .match_indices(&quoted)
                .find(|(i, _)| rest[i + quoted.len()..].trim_start().starts_with(':'))
                .map_or(usize::MAX, |(i, _)| i);
            (at, key)
        })
        .collect();
    keyed.sort();
    keyed.into_iter().map(|(_, key)| key).collect()
}

/// `${VAR}` and `${VAR:-default}` replaced from the environment.
fn expand(text: &str) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find("${") {
        out.push_str(&rest[..at]);
        let after = &rest[at + 2..];
        let Some(end) = after.find('}') else {
            return Err(format!(
                "\"{}\" opens ${{ and never closes it",
                text.escape_debug()
            ));
        };
        let inner = &after[..end];
        let (name, default) = match inner.split_once(":-") {
            Some((name, default)) => (name, Some(default)),
            None => (inner, None),
        };
        let valid =
            !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
        if !valid {
            return Err(format!(
                "${{{}}} is not a variable name",
                inner.escape_debug()
            ));
        }
        match (std::env::var(name), default) {
            (Ok(value), _) => out.push_str(&value),
            (Err(_), Some(default)) => out.push_str(default),
            (Err(_), None) => {
                return Err(format!(
                    "${{{name}}} is not set in the environment (write ${{{name}:-DEFAULT}} for a default)"
                ));
            }
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// Splits a command line the way a POSIX shell splits words, without
/// expanding anything: blanks separate words, `'…'` is literal, `"…"`
/// keeps blanks (a backslash escapes `"`, `\`, `$` and `` ` `` inside),
/// and a backslash outside quotes escapes the next character. For
/// `--import 'npx -y "@scope/server" /a\ dir'`.
///
/// ```
/// use toolprism::mcp::import::split_command_line;
/// assert_eq!(
///     split_command_line(r#"npx -y '@scope/server' "a dir" b\ c"#).unwrap(),
///     ["npx", "-y", "@scope/server", "a dir", "b c"]
/// );
/// assert!(split_command_line("npx 'unclosed").is_err());
/// ```
pub fn split_command_line(line: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' | '\n' => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => word.push(c),
                        None => return Err("a single quote is not closed".to_owned()),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(c @ ('"' | '\\' | '$' | '`')) => word.push(c),
                            Some(c) => {
                                word.push('\\');
                                word.push(c);
                            }
                            None => return Err("a double quote is not closed".to_owned()),
                        },
                        Some(c) => word.push(c),
                        None => return Err("a double quote is not closed".to_owned()),
                    }
                }
            }
            '\\' => {
                in_word = true;
                match chars.next() {
                    Some(c) => word.push(c),
                    None => return Err("the line ends with a lone backslash".to_owned()),
                }
            }
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    Ok(words)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_become_imports_in_the_files_order() {
        let config = McpConfig::parse(
            r#"{"mcpServers": {
                "zeta": {"command": "z", "args": ["${HOME}", "${NO_SUCH_VAR_X:-d}"], "env": {"K": "v"}, "timeout": 500},
                "alpha": {"type": "http", "url": "http://127.0.0.1:1/mcp", "headers": {"X-A": "b"}, "alwaysAllow": []},
                "off": {"command": "x", "disabled": true},
                "mid": {"type": "stdio", "command": "m", "includeTools": ["t"]}
            }}"#,
            "c.json",
        )
        .unwrap();
        let names: Vec<&str> = config.servers().map(|(n, _)| n).collect();
        assert_eq!(names, ["zeta", "alpha", "mid"]);
        let imports = config.imports();
        let home = std::env::var("HOME").unwrap_or_default();
        assert_eq!(imports[0].source(), format!("z {home} d"));
        assert_eq!(imports[0].prefix.as_deref(), Some("zeta"));
        assert_eq!(imports[0].timeout, Some(Duration::from_millis(500)));
        assert_eq!(imports[2].allow.as_deref(), Some(&["t".to_owned()][..]));
    }

    #[test]
    fn mistakes_name_the_server_and_the_fix() {
        let bad = |text: &str| McpConfig::parse(text, "c.json").unwrap_err().to_string();
        assert!(bad("[]").contains("no \"mcpServers\""), "{}", bad("[]"));
        assert!(bad(r#"{"mcpServers": {"a": {}}}"#).contains("server \"a\": give \"command\""));
        assert!(
            bad(r#"{"mcpServers": {"a": {"type": "sse", "url": "http://x"}}}"#).contains("SSE")
        );
        assert!(bad(r#"{"mcpServers": {"a b": {"command": "x"}}}"#).contains("prefix"));
        let unset = bad(r#"{"mcpServers": {"a": {"command": "${NO_SUCH_VAR_Y}"}}}"#);
        assert!(unset.contains("NO_SUCH_VAR_Y} is not set"), "{unset}");
        assert!(
            unset.starts_with("importing from c.json: server \"a\""),
            "{unset}"
        );
    }

    #[cfg(feature = "client-http")]
    #[test]
    fn an_http_entrys_oauth_is_read_and_its_mistakes_named() {
        let config = McpConfig::parse(
            r#"{"mcpServers": {
                "machine": {"url": "https://a.example/mcp", "oauth": {"grant": "client_credentials",
                    "clientId": "hub", "clientSecret": "${NO_SUCH_SECRET_Z:-s3cret}", "scopes": ["read"]}},
                "person": {"url": "https://b.example/mcp", "oauth": {"clientId": "pre", "callbackPort": 8976}}
            }}"#,
            "c.json",
        )
        .unwrap();
        let imports = config.imports();
        let shown = format!("{:?}", imports[0]);
        assert!(shown.contains("Machine"), "{shown}");
        assert!(!shown.contains("s3cret"), "{shown}");
        let bad = |text: &str| McpConfig::parse(text, "c.json").unwrap_err().to_string();
        let e = bad(
            r#"{"mcpServers": {"a": {"url": "https://a.example/mcp", "oauth": {"grant": "client_credentials", "clientId": "x"}}}}"#,
        );
        assert!(e.contains("needs \"clientId\" and \"clientSecret\""), "{e}");
        let e = bad(
            r#"{"mcpServers": {"a": {"url": "https://a.example/mcp", "oauth": {"grant": "implicit"}}}}"#,
        );
        assert!(e.contains("\"implicit\" is not"), "{e}");
        let e = bad(
            r#"{"mcpServers": {"a": {"url": "https://a.example/mcp", "oauth": {"clientid": "x"}}}}"#,
        );
        assert!(e.contains("unknown field"), "{e}");
    }

    #[test]
    fn command_lines_split_like_a_shell() {
        assert_eq!(split_command_line("  a  b ").unwrap(), ["a", "b"]);
        assert_eq!(
            split_command_line(r#"a "b \" c" 'd "e'"#).unwrap(),
            ["a", r#"b " c"#, r#"d "e"#]
        );
        assert_eq!(split_command_line("a ''").unwrap(), ["a", ""]);
        assert!(split_command_line("a \\").is_err());
        assert!(split_command_line("\"a").is_err());
    }
}
