//! The walls, tried from outside the crate through the registry as a user
//! would: outside the workspace root, whether a path exists cannot be told
//! from any tool's answer, and nothing outside is changed.

#![cfg(all(feature = "fs", feature = "shell", unix))]

use std::fs;
use std::os::unix::fs::symlink;

use serde_json::{Value, json};
use toolprism::{Registry, ToolCall};
use toolprism_tools::Workspace;

/// Each tool that resolves a path, with `P` where the path goes.
fn calls() -> Vec<(&'static str, Value)> {
    vec![
        ("read", json!({"path": "P"})),
        ("grep", json!({"pattern": "x", "path": "P"})),
        ("glob", json!({"pattern": "*", "path": "P"})),
        ("edit", json!({"path": "P", "oldText": "a", "newText": "b"})),
        ("write", json!({"path": "P", "content": "x"})),
        ("bash", json!({"command": "true", "cwd": "P"})),
    ]
}

fn with_path(args: &Value, path: &str) -> String {
    args.to_string()
        .replace("\"P\"", &Value::String(path.to_owned()).to_string())
}

#[tokio::test]
async fn outside_the_root_a_missing_path_answers_like_an_existing_one() {
    let dir = tempfile::tempdir().unwrap();
    let outside = dir.path();
    fs::create_dir(outside.join("there")).unwrap();
    fs::write(outside.join("there/file"), "a secret").unwrap();
    fs::write(outside.join("file"), "a secret").unwrap();
    let root = outside.join("ws");
    fs::create_dir(&root).unwrap();
    symlink(outside.join("there"), root.join("to_there")).unwrap();
    symlink(outside.join("nothere"), root.join("to_nothe")).unwrap();
    let registry =
        toolprism_tools::register_in(Registry::builder(), &Workspace::new(&root).unwrap())
            .build()
            .unwrap();
    let base = outside.display().to_string();
    let pairs = [
        ("../file".to_owned(), "../fils".to_owned()),
        ("../there".to_owned(), "../nothe".to_owned()),
        ("../there/file".to_owned(), "../nothe/file".to_owned()),
        (format!("{base}/there/file"), format!("{base}/nothe/file")),
        (format!("{base}/file"), format!("{base}/fils")),
        ("to_there".to_owned(), "to_nothe".to_owned()),
        ("to_there/file".to_owned(), "to_nothe/file".to_owned()),
        ("./x/../../there".to_owned(), "./x/../../nothe".to_owned()),
    ];
    let before = fs::read_to_string(outside.join("there/file")).unwrap();
    for (tool, args) in calls() {
        for (exists, missing) in &pairs {
            let a = registry
                .call(ToolCall::new("a", tool, with_path(&args, exists)))
                .await;
            let b = registry
                .call(ToolCall::new("b", tool, with_path(&args, missing)))
                .await;
            let (ea, eb) = (a.error().unwrap(), b.error().unwrap());
            assert_eq!(
                ea.code.as_str(),
                "OUTSIDE_WORKSPACE",
                "{tool} {exists}: {}",
                ea.message
            );
            assert_eq!(ea.code, eb.code, "{tool}: {exists} / {missing}");
            assert_eq!(
                ea.message.replace(exists.as_str(), "P"),
                eb.message.replace(missing.as_str(), "P"),
                "{tool}: {exists} / {missing}"
            );
            assert!(!ea.message.contains("secret"));
        }
    }
    assert_eq!(
        fs::read_to_string(outside.join("there/file")).unwrap(),
        before
    );
    assert!(!outside.join("nothere").exists() && !outside.join("nothe").exists());
}
