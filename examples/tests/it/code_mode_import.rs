//! Code Mode over an imported tool (P6, P7 in docs/contract.md), end to
//! end through the showcase binary and a real server process (the tiny
//! hand-written server of the MCP import tests, `python3`, no packages):
//! the SDK `sdk --mcp-config` prints types a tool whose server declares no
//! output schema as what a program receives, its content blocks; a program
//! written against that text passes `tsc --strict`, one reading a field no
//! block has is refused; and `call run_code` runs the same program over
//! the same server and returns what its types promised.

use crate::tsc;

use std::path::Path;
use std::process::{Command, Output};

use serde_json::{Value, json};

/// The showcase, with `args`, from `dir`.
fn showcase(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_toolprism-examples"))
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap()
}

/// An `mcpServers` file importing the tiny server's `blocks` (no output
/// schema: every kind of content block) and `add` (an output schema), as
/// `tiny__blocks` and `tiny__add`.
fn config(dir: &Path) -> String {
    let server = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../mcp/tests/support/import_server.py"
    );
    let path = dir.join("servers.json");
    std::fs::write(
        &path,
        json!({"mcpServers": {"tiny": {
            "command": "python3", "args": [server], "includeTools": ["blocks", "add"]}}})
        .to_string(),
    )
    .unwrap();
    path.to_string_lossy().into_owned()
}

/// A program over both imported tools; `FIELD` is read from a text block.
const PROGRAM: &str = r#"const answer = await tools.tiny__blocks({});
const kinds = answer.content.map((block) => block.type);
const first = answer.content[0];
const text = first.type === "text" ? first.FIELD : null;
const link = answer.content.find((block) => block.type === "resource_link");
const uri = link !== undefined && link.type === "resource_link" ? link.uri : null;
const sum = (await tools.tiny__add({ a: 2, b: 3 })).sum;
return { kinds, text, uri, sum };
"#;

#[test]
fn p6_an_imported_tool_without_an_output_schema_is_typed_as_the_content_a_program_gets() {
    let dir = tempfile::tempdir().unwrap();
    let config = config(dir.path());

    let printed = showcase(dir.path(), &["sdk", "--mcp-config", &config]);
    assert!(
        printed.status.success(),
        "{}",
        String::from_utf8_lossy(&printed.stderr)
    );
    let sdk = String::from_utf8(printed.stdout).unwrap();
    assert!(
        sdk.contains("  \"tiny__blocks\": { content: ToolContent[] };\n"),
        "{sdk}"
    );
    assert!(sdk.contains("type ToolContent ="), "{sdk}");
    assert!(sdk.contains("  \"tiny__add\": { sum: number };\n"), "{sdk}");

    // Written against the printed text: the right field passes, a wrong one
    // and the call result's other fields are refused.
    let program = PROGRAM.replace("FIELD", "text");
    if let Err(e) = tsc::check("import-content", &sdk, &program) {
        panic!("tsc refused the program:\n{e}");
    }
    for (case, wrong, says) in [
        (
            "import-content-wrong-field",
            PROGRAM.replace("FIELD", "txt"),
            "Property 'txt' does not exist",
        ),
        (
            "import-content-structured",
            PROGRAM.replace("answer.content[0]", "answer.structuredContent"),
            "Property 'structuredContent' does not exist",
        ),
    ] {
        match tsc::check(case, &sdk, &wrong) {
            Ok(()) => panic!("tsc accepted {case}"),
            Err(e) => assert!(e.contains(says), "{case}: {e}"),
        }
    }

    // Run over the server: the value is what the types said.
    let arguments = json!({"description": "read the blocks", "code": program}).to_string();
    let ran = showcase(
        dir.path(),
        &[
            "call",
            "run_code",
            &arguments,
            "--mcp-config",
            &config,
            "--json",
        ],
    );
    assert!(
        ran.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&ran.stdout),
        String::from_utf8_lossy(&ran.stderr)
    );
    let outcome: Value = serde_json::from_slice(&ran.stdout).unwrap();
    assert_eq!(
        outcome["value"]["result"],
        json!({
            "kinds": ["text", "image", "audio", "resource", "resource", "resource_link"],
            "text": "t",
            "uri": "file:///x.rs",
            "sum": 5
        }),
        "{outcome:#}"
    );
}
