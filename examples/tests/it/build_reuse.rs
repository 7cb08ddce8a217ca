//! `cargo test --workspace` right after `cargo run` reuses what `cargo run`
//! built: every crate the showcase builds is resolved by the tests with the
//! same features, so only what the tests add (trybuild, rcgen, the test
//! harnesses) is compiled, not a second copy of tokio, rmcp and everything
//! above them.
//!
//! Cargo resolves one feature set per build: `cargo run` resolves the
//! showcase's dependencies; `cargo test --workspace` resolves every
//! member's, with their dev-dependencies and default features. A feature
//! that only a test asks for (tokio's `test-util`, a dev-dependency's
//! `std`) changes that crate's hash, and every crate above it is compiled
//! again. This test reads both resolutions with `cargo tree` (offline: the
//! lock file and the registry cache are all it needs) and names any crate
//! whose features differ.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

/// `cargo tree` of `selection`: each package and the union of the features
/// it is built with.
fn features(selection: &[&str]) -> BTreeMap<String, BTreeSet<String>> {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("../Cargo.toml");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let output = Command::new(cargo)
        .arg("tree")
        .arg("--manifest-path")
        .arg(&manifest)
        .args(["--offline", "--prefix", "none", "--format", "{p}|{f}"])
        .args(selection)
        .output()
        .expect("cargo runs");
    assert!(
        output.status.success(),
        "cargo tree {selection:?} failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let mut packages: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for line in String::from_utf8(output.stdout).unwrap().lines() {
        let Some((package, features)) = line.trim_end_matches(" (*)").split_once('|') else {
            continue;
        };
        let package = package.trim_end_matches(" (proc-macro)").to_owned();
        packages.entry(package).or_default().extend(
            features
                .split(',')
                .filter(|f| !f.is_empty())
                .map(str::to_owned),
        );
    }
    packages
}

#[test]
fn the_tests_build_every_crate_of_cargo_run_with_the_same_features() {
    let run = features(&["-p", "toolprism-examples", "-e", "normal,build"]);
    let test = features(&["--workspace", "-e", "normal,build,dev"]);
    assert!(
        run.len() > 100 && run.keys().any(|p| p.starts_with("tokio ")),
        "cargo tree read the showcase's dependencies: {run:?}"
    );
    let differ: Vec<String> = run
        .iter()
        .filter_map(|(package, built)| {
            let tested = test.get(package)?;
            (tested != built).then(|| {
                format!(
                    "{package}: the tests add {:?}, the showcase alone has {:?}",
                    tested.difference(built).collect::<Vec<_>>(),
                    built.difference(tested).collect::<Vec<_>>()
                )
            })
        })
        .collect();
    assert!(
        differ.is_empty(),
        "`cargo test --workspace` would compile these again after `cargo run` (and every crate \
         above them); ask for the feature in examples/Cargo.toml too, or drop it from the \
         dev-dependency that asks for it:\n{}",
        differ.join("\n")
    );
}
