//! Imports of servers across a network, against real servers on
//! 127.0.0.1: HTTPS with a certificate authority the test makes
//! (`tests/support/tls.rs`), refused without its CA and accepted with it;
//! OAuth against an authorization server written for the test
//! (`tests/support/oauth_server.rs`) guarding toolprism's own MCP server:
//! a login on first use through the loopback redirect, the tokens in an
//! owner-only file, an expired access token refreshed, a revoked refresh
//! token ending the call with one clear error, and no token ever in the
//! session log, a spill file, an error or a `Debug`.

use crate::support::{
    oauth_server::OAuthServers,
    tls::{Authority, TlsServer},
};

use std::path::Path;
use std::time::Duration;

use serde_json::json;
use toolprism::log::SessionLog;
use toolprism::mcp::McpServer;
use toolprism::mcp::import::{Browser, Import, OAuth, SERVER_UNAUTHORIZED};
use toolprism::spill::SpillStore;
use toolprism::{ContentBlock, Registry, ToolCall, ToolOutcome, content_text};

#[derive(Clone, serde::Deserialize, schemars::JsonSchema)]
struct NoteArgs {
    /// How many lines.
    lines: usize,
}

struct Note;

/// Write a note of `lines` lines.
#[toolprism::tool(name = "note", read_only)]
impl Note {
    fn execute(args: NoteArgs) -> String {
        (1..=args.lines)
            .map(|i| format!("line {i} of the note"))
            .collect::<Vec<_>>()
            .join("\n")
    }
    fn render(_: &NoteArgs, value: &String) -> Vec<ContentBlock> {
        vec![ContentBlock::text(value)]
    }
}

fn tools() -> Registry {
    Registry::builder().tool(Note).build().unwrap()
}

/// Opens the authorization URL as a browser would: a GET following the
/// authorization server's redirect to toolprism's loopback listener, on
/// a thread of its own.
struct Headless;

impl Browser for Headless {
    fn open(&self, url: &str) -> Result<(), String> {
        let url = url.to_owned();
        std::thread::spawn(move || {
            #[allow(deprecated)] // ring, as the library's own TLS (see import/http.rs)
            let _ = rustls::crypto::ring::default_provider().install_default();
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            runtime.block_on(async {
                let _ = reqwest::Client::new().get(&url).send().await;
            });
        });
        Ok(())
    }
}

async fn note(registry: &Registry, id: &str, lines: usize) -> ToolOutcome {
    registry
        .call(ToolCall::new(
            id,
            "note",
            json!({"lines": lines}).to_string(),
        ))
        .await
}

/// Every file under `dir`, as text.
fn texts(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(texts(&path));
        } else {
            out.push(std::fs::read_to_string(&path).unwrap_or_default());
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn https_is_refused_without_the_servers_ca_and_works_with_it() {
    let dir = tempfile::tempdir().unwrap();
    let authority = Authority::new();
    let server = TlsServer::start(McpServer::new(tools()), &authority);
    assert!(server.url.starts_with("https://127.0.0.1:"));

    let refused = Import::http(&server.url)
        .connect_timeout(Duration::from_secs(10))
        .connect()
        .await
        .unwrap_err()
        .to_string();
    assert!(refused.contains("certificate"), "{refused}");

    let imported = Import::http(&server.url)
        .ca(authority.ca_file(dir.path()))
        .connect()
        .await
        .unwrap();
    let registry = imported.register_in(Registry::builder()).build().unwrap();
    let out = note(&registry, "t1", 2).await;
    assert!(!out.is_error(), "{:?}", out.error());
    assert_eq!(
        content_text(out.content()),
        "line 1 of the note\nline 2 of the note"
    );

    // Plain HTTP off this machine is refused before anything is sent.
    let plain = Import::http("http://tools.example.com/mcp")
        .connect()
        .await
        .unwrap_err()
        .to_string();
    assert!(plain.contains("plain text"), "{plain}");
    let missing = Import::http(&server.url)
        .ca(dir.path().join("no-such.pem"))
        .connect()
        .await
        .unwrap_err()
        .to_string();
    assert!(missing.contains("cannot read the CA file"), "{missing}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oauth_logs_in_refreshes_and_a_revoked_refresh_token_is_one_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let tokens = dir.path().join("oauth");
    let servers = OAuthServers::start(tools());

    // First use: the server's 401, discovery, a dynamic registration, the
    // browser and the loopback redirect, then the call.
    let imported = Import::http(&servers.url)
        .name("notes")
        .oauth(OAuth::new().token_dir(&tokens).browser(Headless))
        .connect()
        .await
        .unwrap();
    let log = dir.path().join("hub.jsonl");
    let spill = dir.path().join("spill");
    let registry = imported
        .register_in(Registry::builder())
        .log(SessionLog::create(&log).unwrap())
        .spill(SpillStore::new(&spill).unwrap())
        .spill_budget(64)
        .build()
        .unwrap();
    let out = note(&registry, "o1", 40).await;
    assert!(!out.is_error(), "{:?}", out.error());
    assert_eq!(servers.grants(), ["authorization_code"]);
    // RFC 8707: the resource on the authorization and the token request.
    assert!(
        servers
            .state
            .lock()
            .unwrap()
            .resources
            .iter()
            .all(|r| *r == servers.url),
        "{:?}",
        servers.state.lock().unwrap().resources
    );

    // The token file: one, its owner's only, in a directory only its owner enters.
    let files: Vec<_> = std::fs::read_dir(&tokens).unwrap().flatten().collect();
    assert_eq!(files.len(), 1, "{files:?}");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&files[0].path()), 0o600);
        assert_eq!(mode(&tokens), 0o700);
    }
    let saved = std::fs::read_to_string(files[0].path()).unwrap();
    assert!(saved.contains(&servers.url), "{saved}");

    // The access token stops working: refreshed once, the call retried.
    servers.expire_access_tokens();
    let out = note(&registry, "o2", 3).await;
    assert!(!out.is_error(), "{:?}", out.error());
    assert_eq!(servers.grants(), ["authorization_code", "refresh_token"]);

    // Another import, with no browser, uses the saved tokens.
    let quiet = Import::http(&servers.url)
        .name("notes")
        .oauth(
            OAuth::new()
                .token_dir(&tokens)
                .login_hint("hub import login URL"),
        )
        .connect()
        .await
        .unwrap();
    let quiet = quiet.register_in(Registry::builder()).build().unwrap();
    assert!(!note(&quiet, "q1", 1).await.is_error());

    // Everything revoked: the refresh is refused, and the call ends with
    // one error that says so and how to log in again; so does the next.
    servers.revoke_everything();
    for id in ["q2", "q3"] {
        let out = note(&quiet, id, 1).await;
        let error = out.error().unwrap_or_else(|| panic!("{id} succeeded"));
        assert_eq!(error.code.as_str(), SERVER_UNAUTHORIZED, "{error:?}");
        assert!(
            error.message.contains("rejected its refresh token")
                || error.message.contains("no longer work"),
            "{}",
            error.message
        );
        assert!(
            error.message.contains("`hub import login URL`"),
            "{}",
            error.message
        );
    }

    // No token in the log, the spill files, an error, a Debug.
    let spilled = texts(&spill);
    assert!(!spilled.is_empty(), "the long note spilled");
    let logged = std::fs::read_to_string(&log).unwrap();
    let debug = format!("{imported:?} {:?}", imported.tools());
    let issued = servers.issued();
    assert!(issued.len() >= 4, "{issued:?}");
    for token in &issued {
        assert!(!logged.contains(token.as_str()), "the log holds a token");
        assert!(
            spilled.iter().all(|s| !s.contains(token.as_str())),
            "a spill file holds a token"
        );
        assert!(!debug.contains(token.as_str()), "a Debug holds a token");
    }

    // Logged out: the file is gone, and so is the way in.
    let import = Import::http(&servers.url).oauth(OAuth::new().token_dir(&tokens));
    assert_eq!(import.logout().unwrap(), Some(files[0].path()));
    assert_eq!(import.logout().unwrap(), None);
    let refused = Import::http(&servers.url)
        .oauth(
            OAuth::new()
                .token_dir(&tokens)
                .login_hint("hub import login URL"),
        )
        .connect()
        .await
        .unwrap_err()
        .to_string();
    assert!(refused.contains("none is saved yet"), "{refused}");
    for token in &issued {
        assert!(!refused.contains(token.as_str()));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_file_others_can_read_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let tokens = dir.path().join("oauth");
    let servers = OAuthServers::start(tools());
    let login = Import::http(&servers.url).oauth(OAuth::new().token_dir(&tokens).browser(Headless));
    let file = login.login().await.unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
        let refused = Import::http(&servers.url)
            .oauth(OAuth::new().token_dir(&tokens))
            .connect()
            .await
            .unwrap_err()
            .to_string();
        assert!(refused.contains("can be read by others"), "{refused}");
        assert!(refused.contains("chmod 600"), "{refused}");
    }
}
