//! The providers' own SDKs, from PyPI and pinned, as outside checks of
//! the dialects on the whole corpus: one Python process per SDK per run
//! (every projection is written to a temporary directory and checked in
//! one go). `toolprism_testkit::python_env` makes the virtualenvs under
//! `target/testkit/` on first use.

use crate::dialects_common as common;

use std::path::Path;

use serde_json::{Value, json};
use toolprism::dialect::{self, Dialect};

const OPENAI: &[&str] = &["openai==3.51.0", "pydantic==2.14.4"];
const ANTHROPIC: &[&str] = &["anthropic==2.10.0", "pydantic==2.14.4"];
const GOOGLE: &[&str] = &["google-genai==3.3.0", "pydantic==2.14.4"];

fn script(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/dialects/sdk")
        .join(name)
}

/// Every projection the corpus has in `dialect` (refused ones left out).
fn projections(d: Dialect) -> Vec<Value> {
    let registry = common::registry();
    registry
        .definitions()
        .filter_map(|def| dialect::definition(d, def).ok())
        .map(|p| p.into_json())
        .collect()
}

/// Runs `script` on `data` with the SDK's virtualenv; asserts it found
/// no failure and checked at least `min` tools.
fn run(env: &str, requirements: &[&str], script_name: &str, data: &Value, min: u64) {
    let venv = toolprism_testkit::python_env(env, requirements);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("data.json");
    std::fs::write(&file, serde_json::to_vec(data).unwrap()).unwrap();
    let out = venv
        .command([script(script_name).as_os_str(), file.as_os_str()])
        .output()
        .expect("run python");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{script_name} failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_str(stdout.lines().last().unwrap_or(""))
        .unwrap_or_else(|e| panic!("{script_name} printed no report ({e}):\n{stdout}"));
    let failures = report["failures"].as_array().unwrap();
    assert!(
        failures.is_empty(),
        "{script_name}: {} failures:\n{}",
        failures.len(),
        failures
            .iter()
            .map(|f| f.as_str().unwrap_or_default())
            .collect::<Vec<_>>()
            .join("\n")
    );
    assert!(report["checked"].as_u64().unwrap() >= min, "{report}");
    eprintln!("{script_name}: {report}");
}

#[test]
fn openai_sdk_accepts_both_shapes_and_leaves_strict_views_unchanged() {
    let chat = projections(Dialect::OpenAi);
    let responses = projections(Dialect::OpenAiResponses);
    let tools: Vec<Value> = chat
        .into_iter()
        .zip(responses)
        .map(|(c, r)| json!({"name": c["function"]["name"], "chat": c, "responses": r}))
        .collect();
    assert!(
        tools
            .iter()
            .filter(|t| t["chat"]["function"]["strict"] == true)
            .count()
            >= 20
    );
    run(
        "dialects-openai",
        OPENAI,
        "openai_check.py",
        &Value::Array(tools),
        25,
    );
}

#[test]
fn anthropic_sdk_accepts_the_tools_and_leaves_strict_views_unchanged() {
    let data = json!({
        "plain": projections(Dialect::Anthropic),
        "strict": projections(Dialect::AnthropicStrict),
    });
    run(
        "dialects-anthropic",
        ANTHROPIC,
        "anthropic_check.py",
        &data,
        50,
    );
}

#[test]
fn google_sdk_accepts_both_declarations() {
    let mut decls = projections(Dialect::Gemini);
    decls.extend(projections(Dialect::GeminiOpenApi));
    run(
        "dialects-google",
        GOOGLE,
        "google_check.py",
        &Value::Array(decls),
        50,
    );
}
