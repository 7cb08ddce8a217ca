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

/// W11: a process that keeps swapping a directory of the root for a
/// symlink to a directory outside it, while the file tools write, edit,
/// read and search through that directory hundreds of times: nothing is
/// written outside, and nothing outside is read.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_symlink_swapped_in_mid_call_never_leads_a_tool_outside() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};

    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("ws");
    let outside = dir.path().join("outside");
    fs::create_dir_all(root.join("d")).unwrap();
    fs::create_dir(&outside).unwrap();
    fs::write(outside.join("secret.txt"), "SECRET outside\n").unwrap();
    fs::write(outside.join("victim.txt"), "untouched\n").unwrap();
    fs::write(root.join("d/victim.txt"), "inside\n").unwrap();
    fs::write(root.join("d/secret.txt"), "inside\n").unwrap();
    let registry =
        toolprism_tools::register_in(Registry::builder(), &Workspace::new(&root).unwrap())
            .build()
            .unwrap();

    let stop = Arc::new(AtomicBool::new(false));
    let swaps = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let swapper = {
        let (stop, swaps) = (stop.clone(), swaps.clone());
        let (d, parked) = (root.join("d"), root.join("d.parked"));
        let outside = outside.clone();
        std::thread::spawn(move || {
            // Puts the parked directory back, over whatever stands at `d`:
            // the symlink, or a directory a write made while `d` was
            // missing (and may make again between the removal and the
            // rename). Until it is back, no swap can start, so it retries.
            let restore = || {
                while parked.exists() {
                    match fs::symlink_metadata(&d) {
                        Ok(m) if m.is_dir() => drop(fs::remove_dir_all(&d)),
                        Ok(_) => drop(fs::remove_file(&d)),
                        Err(_) => {}
                    }
                    let _ = fs::rename(&parked, &d);
                }
            };
            while !stop.load(Ordering::Relaxed) {
                if fs::rename(&d, &parked).is_ok() {
                    let _ = symlink(&outside, &d);
                    std::thread::yield_now();
                    restore();
                    swaps.fetch_add(1, Ordering::Relaxed);
                } else {
                    restore();
                    std::thread::yield_now();
                }
            }
        })
    };
    let mut leaked = Vec::new();
    // At least 300 rounds, and on until the swapper has raced them 200
    // times (a loaded machine starves its thread), within two minutes.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    let mut i = 0;
    while i < 300 || (swaps.load(Ordering::Relaxed) < 200 && std::time::Instant::now() < deadline) {
        i += 1;
        let calls = [
            (
                "write",
                json!({"path": format!("d/new{i}.txt"), "content": "x"}),
            ),
            (
                "write",
                json!({"path": "d/victim.txt", "content": "overwritten"}),
            ),
            (
                "edit",
                json!({"path": "d/victim.txt", "oldText": "t", "newText": "T"}),
            ),
            ("read", json!({"path": "d/secret.txt"})),
            ("grep", json!({"pattern": "SECRET"})),
        ];
        for (tool, args) in calls {
            let out = registry
                .call(ToolCall::new("race", tool, args.to_string()))
                .await;
            if out
                .value()
                .is_some_and(|v| v.to_string().contains("SECRET"))
            {
                leaked.push(format!("{tool}: {}", out.value().unwrap()));
            }
        }
    }
    stop.store(true, Ordering::Relaxed);
    swapper.join().unwrap();
    let swapped = swaps.load(Ordering::Relaxed);
    assert!(swapped > 100, "the race hardly ran: {swapped} swaps");
    let mut names: Vec<String> = fs::read_dir(&outside)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["secret.txt", "victim.txt"], "written outside");
    assert_eq!(
        fs::read_to_string(outside.join("victim.txt")).unwrap(),
        "untouched\n"
    );
    assert!(leaked.is_empty(), "read outside: {leaked:?}");
}
