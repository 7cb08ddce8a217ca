//! The MCP Inspector's CLI (npm `@modelcontextprotocol/inspector`, pinned,
//! unmodified, headless `--cli` mode) starts the test server over stdio,
//! lists its tools with `--strict` (schema portability problems fail the
//! run) and calls them. It is built on the TypeScript SDK, whose client
//! checks every `structuredContent` against the advertised output schema.
//! It asks for toolprism's cards per call (`--tool-metadata
//! toolprism/cards=true` puts `"toolprism/cards": true` in the request's
//! `_meta`); calls that do not ask get none.

use crate::support;

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;

use serde_json::{Value, json};
use support::server_exe;

/// 2.12.0: the current release (1.x is deprecated); its client is
/// `@modelcontextprotocol/client` 2.3.1, which negotiates `2025-11-25`.
const INSPECTOR: &str = "@modelcontextprotocol/inspector@2.12.0";

fn inspector() -> PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| toolprism_testkit::npm_packages("mcp-inspector", &[INSPECTOR]))
        .join("node_modules/.bin/mcp-inspector")
}

/// Runs the inspector's CLI against the test server over stdio.
fn run(args: &[&str]) -> (Output, Value) {
    let home = tempfile::tempdir().unwrap();
    let output = Command::new(inspector())
        .arg("--cli")
        .arg(server_exe())
        .args(args)
        // Its catalog and settings go to a throwaway home.
        .env("HOME", home.path())
        .env("MCP_CATALOG_PATH", home.path().join("mcp.json"))
        .stdin(Stdio::null())
        .output()
        .expect("run the MCP Inspector");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let json = serde_json::from_str(stdout.trim()).unwrap_or_else(|e| {
        panic!(
            "the inspector printed no JSON ({e}), {}:\n{stdout}\n{}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        )
    });
    (output, json)
}

#[test]
fn inspector_lists_strictly_and_calls_over_stdio() {
    let (output, list) = run(&["--method", "tools/list", "--strict"]);
    assert!(
        output.status.success(),
        "tools/list --strict: {}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    let tools = list["tools"].as_array().expect("tools");
    assert_eq!(tools.len(), 15, "{list:#}");
    for tool in tools {
        assert_eq!(tool["outputSchema"]["type"], "object", "{tool:#}");
        assert_eq!(tool["annotations"]["destructiveHint"], false, "{tool:#}");
        assert_eq!(tool["annotations"]["openWorldHint"], false, "{tool:#}");
    }

    let (output, echo) = run(&[
        "--method",
        "tools/call",
        "--tool-name",
        "echo",
        "--tool-arg",
        "text=hi",
        "--tool-metadata",
        "toolprism/cards=true",
    ]);
    assert!(output.status.success(), "{echo:#}");
    assert_eq!(echo["structuredContent"], json!({"text": "hi", "len": 2}));
    assert_eq!(
        echo["content"],
        json!([{"type": "text", "text": "echo: hi"}])
    );
    assert_eq!(echo["_meta"]["toolprism/meta"], json!({"chars": 2}));
    assert_eq!(
        echo["_meta"]["toolprism/resultCard"]["title"],
        "Echoed 2 chars"
    );
    assert_eq!(
        echo["_meta"]["toolprism/callCard"]["rawInput"],
        json!({"text": "hi"})
    );

    // A bare array, wrapped for 2025-11-25 and validated by the client.
    let (output, numbers) = run(&[
        "--method",
        "tools/call",
        "--tool-name",
        "numbers",
        "--tool-arg",
        "count=3",
    ]);
    assert!(output.status.success(), "{numbers:#}");
    assert_eq!(numbers["structuredContent"], json!({"value": [1, 2, 3]}));

    // An error result: the inspector exits non-zero but prints the result.
    let (output, fail) = run(&[
        "--method",
        "tools/call",
        "--tool-name",
        "fail",
        "--tool-arg",
        "message=boom",
    ]);
    assert!(!output.status.success());
    assert_eq!(fail["isError"], true, "{fail:#}");
    assert_eq!(fail["_meta"]["toolprism/errorCode"], "NOPE");
    // Not asked for: no cards, only the code.
    assert_eq!(
        fail["_meta"],
        json!({"toolprism/errorCode": "NOPE"}),
        "{fail:#}"
    );
    assert!(fail.get("structuredContent").is_none());
    assert_eq!(fail["content"][0]["text"], "Error: boom");
}
