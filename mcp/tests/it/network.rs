//! Safe by default over the network (W3 in `docs/contract.md`): the test
//! server as a process on loopback, spoken to by hand (HTTP/1.1 over a
//! socket) and by the unmodified Python `mcp` client with its own bearer
//! support; and the library refusing an address other machines reach.
//!
//! Every refused request is a `tools/call` of `canary` in a session that is
//! open, which would append a line to a file had it run: the file stays
//! absent until the one request with the right credential.

use crate::support;

use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};
use support::raw::{Reply, Session, bearer, post, request};
use support::{HttpServer, run_python_with};

const TOKEN: &str = "5f2b8c1d9e3a47f6b0c2d4e6f8a1b3c5d7e9f0a2b4c6d8e0f1a3b5c7d9e1f3a5";

/// `TOKEN` with its last byte changed.
fn almost() -> String {
    let mut token = TOKEN.to_owned();
    token.pop();
    token.push('6');
    token
}

fn canary_ran(path: &Path) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

/// A `401` with the challenge RFC 6750 and RFC 9728 ask for, and a
/// JSON-RPC error body.
fn assert_challenged(reply: &Reply, server: &HttpServer, error: Option<&str>, case: &str) {
    assert_eq!(reply.status, 401, "{case}: {reply:?}");
    let challenge = reply
        .header("www-authenticate")
        .unwrap_or_else(|| panic!("{case}: no WWW-Authenticate: {reply:?}"));
    let metadata = format!(
        "Bearer resource_metadata=\"http://{}/.well-known/oauth-protected-resource/mcp\"",
        server.addr()
    );
    assert!(challenge.starts_with(&metadata), "{case}: {challenge}");
    match error {
        Some(error) => assert!(
            challenge.contains(&format!("error=\"{error}\"")),
            "{case}: {challenge}"
        ),
        None => assert!(!challenge.contains("error="), "{case}: {challenge}"),
    }
    let body: Value = serde_json::from_str(&reply.body).unwrap_or_else(|e| panic!("{case}: {e}"));
    assert_eq!(
        body["error"]["code"],
        toolprism::mcp::REFUSED,
        "{case}: {body}"
    );
    assert_eq!(
        body["error"]["data"]["reason"], "unauthorized",
        "{case}: {body}"
    );
}

#[test]
fn w3_requests_without_the_right_token_are_401_and_run_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let canary = dir.path().join("canary");
    let server = HttpServer::launch(
        "127.0.0.1:0",
        &[
            "--token-env",
            "MCP_TEST_TOKEN",
            "--canary",
            canary.to_str().unwrap(),
        ],
        &[("MCP_TEST_TOKEN", TOKEN)],
    );
    let good = bearer(TOKEN);
    let session = Session::open(server.addr(), &[("Authorization", &good)]);
    let call = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                      "params": {"name": "canary", "arguments": {}}});
    let session_headers = [
        ("Mcp-Session-Id", session.id.as_str()),
        ("MCP-Protocol-Version", "2025-11-25"),
    ];
    let wrong = bearer(&"0".repeat(TOKEN.len()));
    let last_byte = bearer(&almost());
    let short = bearer(&TOKEN[..TOKEN.len() - 1]);
    let longer = bearer(&format!("{TOKEN}0"));
    let in_query = format!("/mcp?access_token={TOKEN}");
    // What is wrong, the request target, the credential headers, the
    // `error` of the challenge.
    type Case<'a> = (&'a str, &'a str, Vec<(&'a str, &'a str)>, Option<&'a str>);
    let cases: [Case; 9] = [
        ("no token", "/mcp", vec![], None),
        (
            "a wrong token",
            "/mcp",
            vec![("Authorization", &wrong)],
            Some("invalid_token"),
        ),
        (
            "the last byte differs",
            "/mcp",
            vec![("Authorization", &last_byte)],
            Some("invalid_token"),
        ),
        (
            "one byte short",
            "/mcp",
            vec![("Authorization", &short)],
            Some("invalid_token"),
        ),
        (
            "one byte more",
            "/mcp",
            vec![("Authorization", &longer)],
            Some("invalid_token"),
        ),
        (
            "another scheme",
            "/mcp",
            vec![("Authorization", "Basic dG9vbHByaXNtOnNlY3JldA==")],
            None,
        ),
        (
            "the token in the query",
            &in_query,
            vec![],
            Some("invalid_request"),
        ),
        (
            "the token in the query and the header",
            &in_query,
            vec![("Authorization", &good)],
            Some("invalid_request"),
        ),
        (
            "two Authorization headers",
            "/mcp",
            vec![("Authorization", &good), ("Authorization", &good)],
            Some("invalid_request"),
        ),
    ];
    for (case, target, auth, error) in &cases {
        let mut headers = vec![
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
        ];
        headers.extend_from_slice(&session_headers);
        headers.extend_from_slice(auth);
        let reply = request(server.addr(), "POST", target, &headers, &call.to_string()).unwrap();
        assert_challenged(&reply, &server, *error, case);
        assert_eq!(canary_ran(&canary), None, "{case}: the canary ran");
    }
    // The other methods too: the event stream, and closing the session.
    for method in ["GET", "DELETE"] {
        let reply = request(server.addr(), method, "/mcp", &session_headers, "").unwrap();
        assert_challenged(&reply, &server, None, method);
    }
    // Opening a session needs the token as well.
    let reply = Session::initialize(server.addr(), &[]).unwrap();
    assert_challenged(&reply, &server, None, "initialize");
    assert!(reply.header("mcp-session-id").is_none());

    // The same call with the token runs, in the session the refused
    // DELETE left open.
    let reply = session
        .call(&[("Authorization", &good)], 8, "canary", json!({}))
        .unwrap();
    let answer = reply.answer(8).unwrap_or_else(|| panic!("{reply:?}"));
    assert_eq!(
        answer["result"]["structuredContent"],
        json!({"by": "token"}),
        "{answer}"
    );
    assert_eq!(canary_ran(&canary).as_deref(), Some("token\n"));
}

/// A token of the test server's own verifier for `subject`, expiring
/// `from_now` seconds from now (in the past when negative).
fn expiring(subject: &str, from_now: i64, scopes: &str) -> String {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    format!("{subject}.{}.{scopes}", now + from_now)
}

#[test]
fn w3_an_expired_credential_of_a_custom_verifier_is_401() {
    let dir = tempfile::tempdir().unwrap();
    let canary = dir.path().join("canary");
    let server = HttpServer::start(&["--verifier", "--canary", canary.to_str().unwrap()]);
    let alice = bearer(&expiring("alice", 600, "canary"));
    let session = Session::open(server.addr(), &[("Authorization", &alice)]);

    let expired = bearer(&expiring("alice", -1, "canary"));
    let reply = session
        .call(&[("Authorization", &expired)], 1, "canary", json!({}))
        .unwrap();
    assert_challenged(&reply, &server, Some("invalid_token"), "expired");
    let challenge = reply.header("www-authenticate").unwrap();
    assert!(
        challenge.contains("error_description=\"the token expired\""),
        "{challenge}"
    );
    let malformed = bearer("alice");
    let reply = session
        .call(&[("Authorization", &malformed)], 2, "canary", json!({}))
        .unwrap();
    assert_challenged(&reply, &server, Some("invalid_token"), "malformed");
    assert_eq!(canary_ran(&canary), None, "the canary ran");

    let reply = session
        .call(&[("Authorization", &alice)], 3, "canary", json!({}))
        .unwrap();
    assert_eq!(
        reply.answer(3).unwrap()["result"]["structuredContent"],
        json!({"by": "alice"}),
        "{reply:?}"
    );
    assert_eq!(canary_ran(&canary).as_deref(), Some("alice\n"));
}

#[test]
fn w3_a_session_belongs_to_the_caller_that_opened_it() {
    let dir = tempfile::tempdir().unwrap();
    let canary = dir.path().join("canary");
    let server = HttpServer::start(&["--verifier", "--canary", canary.to_str().unwrap()]);
    let alice = bearer(&expiring("alice", 600, "canary"));
    let mallory = bearer(&expiring("mallory", 600, "canary"));
    let session = Session::open(server.addr(), &[("Authorization", &alice)]);
    let reply = session
        .call(&[("Authorization", &mallory)], 1, "canary", json!({}))
        .unwrap();
    assert_eq!(reply.status, 404, "{reply:?}");
    assert_eq!(canary_ran(&canary), None);
    let reply = session.ping(&[("Authorization", &alice)], 2).unwrap();
    assert!(
        reply.answer(2).is_some_and(|a| a["result"] == json!({})),
        "{reply:?}"
    );
}

#[test]
fn w3_the_python_client_calls_with_its_bearer_support_and_a_policy_sees_the_caller() {
    let dir = tempfile::tempdir().unwrap();
    let canary = dir.path().join("canary");

    // A static token: the client's own httpx2 client carries the header.
    let server = HttpServer::launch(
        "127.0.0.1:0",
        &["--token-env", "MCP_TEST_TOKEN"],
        &[("MCP_TEST_TOKEN", TOKEN)],
    );
    let report = run_python_with(
        "auth.py",
        &["--url", &server.url],
        &[("ALICE_TOKEN", TOKEN), ("BOB_TOKEN", &almost())],
    );
    for version in ["2025-11-25", "2026-07-28"] {
        let run = &report[version];
        assert_eq!(run["alice"]["protocol_version"], version, "{run:#}");
        assert_eq!(
            run["alice"]["echo"]["structuredContent"]["text"], "hi",
            "{run:#}"
        );
        // Without the token, or with one differing in its last byte, the
        // client gets no session, and no answer.
        for who in ["bob", "nobody"] {
            let refused = run[who]["refused"]
                .as_str()
                .unwrap_or_else(|| panic!("{who}: {run:#}"));
            assert!(!refused.is_empty(), "{who}: {run:#}");
        }
    }

    // A verifier of the server's own, and a policy per caller: alice holds
    // the scope `canary`, bob does not.
    let server = HttpServer::start(&["--verifier", "--canary", canary.to_str().unwrap()]);
    let report = run_python_with(
        "auth.py",
        &["--url", &server.url, "--canary"],
        &[
            ("ALICE_TOKEN", &expiring("alice", 600, "canary")),
            ("BOB_TOKEN", &expiring("bob", 600, "")),
        ],
    );
    for version in ["2025-11-25", "2026-07-28"] {
        let run = &report[version];
        let alice = &run["alice"]["canary"];
        assert_eq!(alice["isError"], false, "{run:#}");
        assert_eq!(
            alice["structuredContent"],
            json!({"by": "alice"}),
            "{run:#}"
        );
        let bob = &run["bob"]["canary"];
        assert_eq!(bob["isError"], true, "{run:#}");
        assert_eq!(bob["_meta"]["toolprism/errorCode"], "DENIED", "{run:#}");
        assert_eq!(
            bob["content"][0]["text"], "Error: bob may not run canary",
            "{run:#}"
        );
        // bob reached the server and the registry: only the policy said no.
        assert_eq!(
            run["bob"]["echo"]["structuredContent"]["text"], "hi",
            "{run:#}"
        );
    }
    assert_eq!(canary_ran(&canary).as_deref(), Some("alice\nalice\n"));
}

#[test]
fn w3_the_protected_resource_metadata_is_served() {
    let server = HttpServer::launch(
        "127.0.0.1:0",
        &[
            "--token-env",
            "MCP_TEST_TOKEN",
            "--authorization-server",
            "https://auth.example.com",
        ],
        &[("MCP_TEST_TOKEN", TOKEN)],
    );
    for path in [
        "/.well-known/oauth-protected-resource",
        "/.well-known/oauth-protected-resource/mcp",
    ] {
        let reply = request(server.addr(), "GET", path, &[], "").unwrap();
        assert_eq!(reply.status, 200, "{path}: {reply:?}");
        assert_eq!(reply.header("content-type"), Some("application/json"));
        let doc: Value = serde_json::from_str(&reply.body).unwrap();
        assert_eq!(
            doc,
            json!({
                "resource": format!("http://{}/mcp", server.addr()),
                "authorization_servers": ["https://auth.example.com"],
                "bearer_methods_supported": ["header"],
            }),
            "{path}"
        );
    }
    // A server without authentication has no metadata to give.
    let open = HttpServer::start(&[]);
    let reply = request(
        open.addr(),
        "GET",
        "/.well-known/oauth-protected-resource",
        &[],
        "",
    )
    .unwrap();
    assert_eq!(reply.status, 404, "{reply:?}");
    // And requests without a token still get in there.
    let reply = Session::initialize(open.addr(), &[]).unwrap();
    assert_eq!(reply.status, 200, "{reply:?}");
}

fn registry() -> toolprism::Registry {
    toolprism::Registry::builder().build().unwrap()
}

#[test]
fn w3_an_address_other_machines_reach_is_refused_without_an_authenticator() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        use toolprism::mcp::{McpServer, StaticToken, StreamableHttpServerConfig};
        let serve = |server: McpServer| async move {
            let listener = tokio::net::TcpListener::bind("0.0.0.0:0").await.unwrap();
            let serving = server.serve_http(listener, StreamableHttpServerConfig::default());
            tokio::time::timeout(Duration::from_millis(300), serving).await
        };
        let refused = serve(McpServer::new(registry()))
            .await
            .expect("returned at once");
        let e = refused.unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::PermissionDenied);
        let message = e.to_string();
        assert!(!message.contains('\n'), "{message}");
        for hint in ["with_auth", "127.0.0.1", "allow_unauthenticated_network"] {
            assert!(message.contains(hint), "{message}");
        }
        let e = toolprism::mcp::serve_http(registry(), "0.0.0.0:0")
            .await
            .unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::PermissionDenied, "{e}");
        let e = toolprism::mcp::serve_http(registry(), "[::]:0")
            .await
            .unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::PermissionDenied, "{e}");

        // With an authenticator, or told so, it serves (until the timeout).
        let token = StaticToken::new(TOKEN).unwrap();
        assert!(
            serve(McpServer::new(registry()).with_auth(token))
                .await
                .is_err()
        );
        assert!(
            serve(McpServer::new(registry()).allow_unauthenticated_network())
                .await
                .is_err()
        );
    });
}

#[test]
fn w3_host_names_are_resolved_before_deciding() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        // `localhost` resolves to loopback addresses only: served.
        let serving = toolprism::mcp::serve_http(registry(), "localhost:0");
        assert!(
            tokio::time::timeout(Duration::from_millis(300), serving)
                .await
                .is_err(),
            "localhost was refused"
        );
        // Names the resolver reads as numbers (inet_aton's forms, no DNS):
        // what decides is the address they resolve to, not how they look.
        for (name, address) in [("0", "0.0.0.0"), ("3232235777", "192.168.1.1")] {
            let resolved: Vec<_> = tokio::net::lookup_host((name, 0)).await.unwrap().collect();
            assert_eq!(
                resolved,
                [format!("{address}:0").parse().unwrap()],
                "{name}"
            );
            let e = toolprism::mcp::serve_http(registry(), (name, 0))
                .await
                .unwrap_err();
            assert_eq!(
                e.kind(),
                std::io::ErrorKind::PermissionDenied,
                "{name}: {e}"
            );
            assert!(e.to_string().contains(address), "{name}: {e}");
        }
        // 2130706433 is 127.0.0.1: served.
        let serving = toolprism::mcp::serve_http(registry(), "2130706433:0");
        assert!(
            tokio::time::timeout(Duration::from_millis(300), serving)
                .await
                .is_err(),
            "2130706433 (127.0.0.1) was refused"
        );
    });
}

#[test]
fn w3_the_test_server_refuses_0_0_0_0_unless_told_and_then_warns() {
    let output = std::process::Command::new(support::server_exe())
        .args(["--http", "0.0.0.0:0"])
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("refusing to serve MCP without authentication"),
        "{stderr}"
    );

    let mut server = HttpServer::launch("0.0.0.0:0", &["--insecure-no-auth"], &[]);
    let port = server.addr().rsplit(':').next().unwrap().to_owned();
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !server.stderr().contains("WARNING") && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let warning = server.stderr();
    assert!(warning.contains("WITHOUT AUTHENTICATION"), "{warning}");
    assert!(warning.contains("not read-only"), "{warning}");
    // It serves: on loopback too, as it listens on every interface.
    let reply = post(
        &format!("127.0.0.1:{port}"),
        &[],
        &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"}}}),
    )
    .unwrap();
    assert_eq!(reply.status, 200, "{reply:?}");
    assert!(server.is_running());
}
