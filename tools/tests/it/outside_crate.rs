//! Crates outside the workspace that depend on toolprism and
//! toolprism-tools as a user's crate would, built with `cargo`:
//!
//! - one whose `Cargo.toml` holds exactly the `[dependencies]` block of the
//!   workspace README (read from README.md, so the two cannot drift), plus
//!   a `[patch.crates-io]` that points the unpublished toolprism crates at
//!   this workspace; it builds and runs the README quickstart and the
//!   README's built-in tools example;
//! - one that depends on toolprism and toolprism-tools by path with
//!   `default-features = false, features = ["fs"]`, and builds and runs.
//!
//! They build in the workspace's own target directory, with the
//! workspace's profile for dependencies, so what the workspace already
//! compiled is reused. The workspace's `Cargo.lock` is copied in, so the
//! same versions resolve and nothing but crates.io is needed (and not even
//! crates.io when its packages are in cargo's cache).

use std::path::{Path, PathBuf};
use std::process::Command;

fn workspace_root() -> PathBuf {
    toolprism_testkit::workspace_root()
}

fn readme() -> String {
    std::fs::read_to_string(workspace_root().join("README.md")).expect("README.md is readable")
}

/// The body of the first fenced block in `lang` after the line `heading`.
fn block_after(text: &str, heading: &str, lang: &str) -> String {
    let from = text
        .find(&format!("\n{heading}\n"))
        .unwrap_or_else(|| panic!("README.md has no heading {heading:?}"));
    let rest = &text[from..];
    let fence = format!("\n```{lang}\n");
    let start = rest
        .find(&fence)
        .unwrap_or_else(|| panic!("no ```{lang} block after {heading:?}"))
        + fence.len();
    let len = rest[start..].find("\n```").expect("the block is closed");
    rest[start..start + len + 1].to_owned()
}

/// `cargo` as the test harness found it, on the workspace's target dir.
fn cargo(dir: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    cmd.args(args)
        // The workspace's profile for dependencies, so their artifacts match.
        .args(toolprism_testkit::dependency_profile_config())
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", toolprism_testkit::target_dir());
    // What cargo set for this test binary (`CARGO_PKG_NAME`, …) must not
    // reach the inner build: build scripts that watch such a variable (ring's
    // does) would be rebuilt, here and then again in the workspace's next
    // build, each time.
    for (name, _) in std::env::vars_os() {
        let name = name.to_string_lossy();
        if [
            "CARGO_PKG_",
            "CARGO_CRATE_",
            "CARGO_BIN_",
            "CARGO_MANIFEST_",
            "CARGO_PRIMARY_PACKAGE",
            "CARGO_TARGET_TMPDIR",
            "CARGO_RUSTC_CURRENT_DIR",
            "OUT_DIR",
        ]
        .iter()
        .any(|prefix| name.starts_with(prefix))
        {
            cmd.env_remove(&*name);
        }
    }
    cmd
}

fn run(mut cmd: Command) -> String {
    let out = cmd.output().expect("cargo runs");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{cmd:?} failed\nstdout:\n{stdout}\nstderr:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// A new crate in a temp dir outside the workspace.
fn new_crate(manifest: &str, main: &str) -> tempfile::TempDir {
    let dir = tempfile::Builder::new()
        .prefix("toolprism-outside-")
        .tempdir()
        .unwrap();
    assert!(!dir.path().starts_with(workspace_root()));
    std::fs::create_dir_all(dir.path().join("src")).unwrap();
    std::fs::write(dir.path().join("Cargo.toml"), manifest).unwrap();
    std::fs::write(dir.path().join("src/main.rs"), main).unwrap();
    std::fs::copy(
        workspace_root().join("Cargo.lock"),
        dir.path().join("Cargo.lock"),
    )
    .unwrap();
    dir
}

fn path_of(member: &str) -> String {
    workspace_root().join(member).display().to_string()
}

#[test]
fn the_readme_dependencies_build_the_quickstart_outside_the_workspace() {
    let readme = readme();
    let dependencies = block_after(&readme, "### Use it from your crate", "toml");
    assert!(
        dependencies.starts_with("[dependencies]\n"),
        "{dependencies}"
    );
    let quickstart = block_after(&readme, "## Quickstart: one complete tool", "rust");
    // `ignore` for rustdoc: the runtime runs the README's Rust blocks as its
    // own doctests, and it cannot link `toolprism_tools`; this test runs it.
    let builtins = block_after(&readme, "### Use it from your crate", "rust,ignore");
    let manifest = format!(
        "[package]\nname = \"readme-quickstart\"\nversion = \"0.0.0\"\nedition = \"2024\"\npublish = false\n\n\
         {dependencies}\n\
         [patch.crates-io]\n\
         toolprism = {{ path = {:?} }}\n\
         toolprism-tools = {{ path = {:?} }}\n",
        path_of("runtime"),
        path_of("tools"),
    );
    let dir = new_crate(&manifest, &quickstart);
    std::fs::create_dir_all(dir.path().join("examples")).unwrap();
    std::fs::write(dir.path().join("examples/builtins.rs"), &builtins).unwrap();
    run(cargo(dir.path(), &["build", "--bins", "--examples"]));
    let out = run(cargo(
        dir.path(),
        &["run", "-q", "--bin", "readme-quickstart"],
    ));
    assert!(out.contains("\"card\":\"generic\""), "{out}");
    let out = run(cargo(dir.path(), &["run", "-q", "--example", "builtins"]));
    assert!(out.contains("Cargo.toml"), "{out}");
}

#[test]
fn a_crate_with_only_the_fs_tools_builds_outside_the_workspace() {
    let manifest = format!(
        "[package]\nname = \"fs-only\"\nversion = \"0.0.0\"\nedition = \"2024\"\npublish = false\n\n\
         [dependencies]\n\
         toolprism = {{ path = {:?} }}\n\
         toolprism-tools = {{ path = {:?}, default-features = false, features = [\"fs\"] }}\n",
        path_of("runtime"),
        path_of("tools"),
    );
    let main = r#"
fn main() {
    toolprism_tools::link();
    let registry = toolprism::Registry::builtin().build().unwrap();
    let names: Vec<&str> = registry.definitions().map(|d| d.name.as_str()).collect();
    assert_eq!(names, ["edit", "glob", "grep", "read", "write"]);
    let workspace = toolprism_tools::Workspace::new(".").unwrap();
    let _ = toolprism_tools::ReadTool::new(workspace);
    println!("{}", names.join(","));
}
"#;
    let dir = new_crate(&manifest, main);
    let out = run(cargo(dir.path(), &["run", "-q"]));
    assert_eq!(out.trim(), "edit,glob,grep,read,write");
}
