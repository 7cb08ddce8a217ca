//! `cargo toolprism new` run as a process.
//!
//! The proof that the generated code is right: every card scaffolded into
//! one fresh crate outside the workspace (a path dependency on the
//! runtime), whose own `cargo test`, `cargo clippy -- -D warnings` and
//! `cargo fmt --check` then pass. Those builds share the workspace's target
//! directory and Cargo.lock and run offline, so they rebuild only what the
//! fresh crate adds. Then a crate shaped like `toolprism-tools` (feature
//! gates, re-exports), the one-line errors that change nothing, and edits
//! that keep the user's formatting.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_cargo-toolprism");

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("cli/ is in the workspace")
        .to_path_buf()
}

fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace().join("target"))
}

fn runtime() -> String {
    workspace().join("runtime").display().to_string()
}

/// The dependency lines of a user crate, spelled as the workspace spells
/// them, so their builds are the ones the workspace already has.
fn dependencies() -> String {
    format!(
        "toolprism = {{ path = \"{}\" }}\n\
         serde = {{ version = \"1.0.228\", features = [\"derive\"] }}\n\
         schemars = {{ version = \"1.2.3\", default-features = false, features = [\"derive\", \"std\"] }}\n",
        runtime()
    )
}

/// A fresh library crate in `dir`, as `cargo new --lib` makes it, with
/// toolprism, serde and schemars.
fn fresh_crate(dir: &Path, name: &str) {
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(
        dir.join("Cargo.toml"),
        format!(
            "[package]\nname = \"{name}\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n[dependencies]\n{}\n[workspace]\n\n{}",
            dependencies(),
            // The workspace's profile, so dependencies build as they do there.
            toolprism_testkit::dependency_profile_toml()
        ),
    )
    .unwrap();
    std::fs::write(
        dir.join("src/lib.rs"),
        "pub fn add(left: u64, right: u64) -> u64 {\n    left + right\n}\n",
    )
    .unwrap();
    std::fs::copy(workspace().join("Cargo.lock"), dir.join("Cargo.lock")).unwrap();
}

fn new(args: &[&str]) -> Output {
    Command::new(BIN)
        .arg("new")
        .args(args)
        .output()
        .expect("cargo-toolprism runs")
}

fn new_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(BIN)
        .arg("new")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("cargo-toolprism runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn ok(out: &Output) -> String {
    assert_eq!(
        out.status.code(),
        Some(0),
        "stdout:\n{}\nstderr:\n{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    assert_eq!(text(&out.stderr), "");
    text(&out.stdout)
}

/// Runs cargo in `dir`, offline, with the workspace's target directory.
fn cargo(dir: &Path, args: &[&str]) -> Output {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    Command::new(cargo)
        .args(args)
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", target_dir())
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .output()
        .expect("cargo runs")
}

fn cargo_ok(dir: &Path, args: &[&str]) -> String {
    let out = cargo(dir, args);
    assert!(
        out.status.success(),
        "cargo {args:?} failed in {}:\n{}\n{}",
        dir.display(),
        text(&out.stdout),
        text(&out.stderr)
    );
    text(&out.stdout)
}

/// Every file under `dir` (but `target/`) and its bytes.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut files = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                if path.file_name() != Some("target".as_ref()) {
                    stack.push(path);
                }
            } else {
                files.insert(path.clone(), std::fs::read(&path).unwrap());
            }
        }
    }
    files
}

#[test]
fn every_card_builds_and_passes_its_own_tests() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("agent");
    fresh_crate(&dir, "scaffold-check");
    let path = dir.to_str().unwrap();
    let cards: [(&str, &[&str]); 7] = [
        ("stats", &["--card", "generic"]),
        ("line-width", &["--card", "terminal", "--read-only"]),
        ("compare", &["--card", "diff"]),
        ("numbered", &["--card", "read", "--builtin", "--read-only"]),
        ("search", &["--card", "search", "--kind", "read"]),
        ("links", &["--card", "web", "--builtin", "--kind", "search"]),
        ("weather", &["--card", "generic", "--kind", "fetch"]),
    ];
    for (name, flags) in cards {
        let mut args = vec![name, "--path", path];
        args.extend_from_slice(flags);
        let report = ok(&new(&args));
        assert!(report.starts_with("created  src/"), "{report}");
    }
    // The mod lines, in order, above the code that was there.
    assert_eq!(
        std::fs::read_to_string(dir.join("src/lib.rs")).unwrap(),
        "pub mod compare;\npub mod line_width;\npub mod links;\npub mod numbered;\npub mod search;\npub mod stats;\npub mod weather;\n\npub fn add(left: u64, right: u64) -> u64 {\n    left + right\n}\n"
    );
    // What the tests need was added once.
    let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
    assert!(
        manifest.ends_with(
            "[dev-dependencies]\nserde_json = \"1\"\ntokio = { version = \"1\", features = [\"macros\", \"rt\"] }\n"
        ),
        "{manifest}"
    );
    let module = std::fs::read_to_string(dir.join("src/links.rs")).unwrap();
    assert!(module.contains("#[tool(name = \"links\", kind = search, builtin)]"));
    let module = std::fs::read_to_string(dir.join("src/line_width.rs")).unwrap();
    assert!(module.contains("#[tool(name = \"line-width\", kind = execute, read_only)]"));
    assert!(module.contains("pub struct LineWidthTool;"));

    // The builtin ones are found by Registry::builtin(), with their facts.
    std::fs::create_dir_all(dir.join("tests")).unwrap();
    std::fs::write(
        dir.join("tests/builtin.rs"),
        "use scaffold_check as _;\n\n#[test]\nfn builtin_tools_are_found() {\n    let registry = toolprism::Registry::builtin().build().unwrap();\n    let found: Vec<(String, String, bool)> = registry\n        .definitions()\n        .map(|d| (d.name.clone(), d.kind.as_str().to_owned(), d.annotations.read_only))\n        .collect();\n    assert_eq!(\n        found,\n        [\n            (\"links\".to_owned(), \"search\".to_owned(), false),\n            (\"numbered\".to_owned(), \"read\".to_owned(), true),\n        ]\n    );\n}\n",
    )
    .unwrap();

    let tested = cargo_ok(&dir, &["test", "--offline", "--quiet"]);
    assert!(
        tested.contains("test result: ok. 21 passed; 0 failed"),
        "{tested}"
    );
    assert!(
        tested.contains("test result: ok. 1 passed; 0 failed"),
        "{tested}"
    );
    cargo_ok(
        &dir,
        &[
            "clippy",
            "--offline",
            "--quiet",
            "--all-targets",
            "--",
            "-D",
            "warnings",
        ],
    );
    // The new modules are formatted; the lines added to lib.rs keep it so.
    let out = Command::new("rustfmt")
        .args(["--edition", "2024", "--check", "src/lib.rs"])
        .current_dir(&dir)
        .output()
        .expect("rustfmt runs");
    assert!(out.status.success(), "{}", text(&out.stdout));
}

/// A crate shaped like toolprism-tools (the built-in tools' layout): one module per
/// tool in `src/`, each behind its group's feature and re-exported, inside a
/// workspace whose root is where the command runs.
#[test]
fn the_tools_crate_gets_a_feature_gate_and_a_reexport() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("toolprism");
    let tools = root.join("tools");
    std::fs::create_dir_all(tools.join("src")).unwrap();
    std::fs::write(
        root.join("Cargo.toml"),
        format!(
            "[workspace]\nresolver = \"3\"\nmembers = [\"tools\"]\n\n{}",
            toolprism_testkit::dependency_profile_toml()
        ),
    )
    .unwrap();
    std::fs::copy(workspace().join("Cargo.lock"), root.join("Cargo.lock")).unwrap();
    std::fs::write(
        tools.join("Cargo.toml"),
        format!(
            "[package]\nname = \"toolprism-tools\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n\
             [features]\n# fs and shell: what a coding agent needs.\ndefault = [\"fs\", \"shell\"]\nfs = []\nshell = []\nweb = []\nsql = []\n\n\
             [dependencies]\n{}serde_json = \"1.0.140\"\ntokio = {{ version = \"1.54\", default-features = false, features = [\"rt\", \"time\", \"macros\", \"sync\"] }}\n\n\
             [lints.rust]\nmissing_docs = \"warn\"\nunreachable_pub = \"warn\"\nmissing_debug_implementations = \"warn\"\n",
            dependencies()
        ),
    )
    .unwrap();
    let lib = "//! The built-in tools.\n\n#![deny(unsafe_code)]\n\n#[cfg(feature = \"fs\")]\npub mod edit;\n#[cfg(feature = \"shell\")]\n#[cfg(unix)]\npub mod run;\n\n#[cfg(feature = \"fs\")]\npub use edit::EditTool;\n#[cfg(all(feature = \"shell\", unix))]\npub use run::RunTool;\n";
    std::fs::write(tools.join("src/lib.rs"), lib).unwrap();
    for (module, ty) in [("edit", "EditTool"), ("run", "RunTool")] {
        std::fs::write(
            tools.join(format!("src/{module}.rs")),
            format!("//! `{module}`.\n\n/// A tool.\n#[derive(Debug)]\npub struct {ty};\n"),
        )
        .unwrap();
    }

    // At the workspace's root, with no --path: the tools crate.
    let report = ok(&new_in(&root, &["find", "--card", "search"]));
    assert!(report.contains("behind feature fs"), "{report}");
    ok(&new_in(&root, &["links", "--card", "web"]));
    ok(&new_in(
        &tools,
        &["lint", "--card", "terminal", "--feature", "lint"],
    ));
    assert_eq!(
        std::fs::read_to_string(tools.join("src/lib.rs")).unwrap(),
        "//! The built-in tools.\n\n#![deny(unsafe_code)]\n\n#[cfg(feature = \"fs\")]\npub mod edit;\n#[cfg(feature = \"fs\")]\npub mod find;\n#[cfg(feature = \"web\")]\npub mod links;\n#[cfg(feature = \"lint\")]\npub mod lint;\n#[cfg(feature = \"shell\")]\n#[cfg(unix)]\npub mod run;\n\n#[cfg(feature = \"fs\")]\npub use edit::EditTool;\n#[cfg(feature = \"fs\")]\npub use find::FindTool;\n#[cfg(feature = \"web\")]\npub use links::LinksTool;\n#[cfg(feature = \"lint\")]\npub use lint::LintTool;\n#[cfg(all(feature = \"shell\", unix))]\npub use run::RunTool;\n"
    );
    let manifest = std::fs::read_to_string(tools.join("Cargo.toml")).unwrap();
    assert!(
        manifest.contains("web = []\nsql = []\nlint = []\n\n[dependencies]"),
        "{manifest}"
    );
    // Everything it needs was there: no dependency added.
    assert!(!manifest.contains("[dev-dependencies]"), "{manifest}");

    // With every feature, the crate's own lints hold and the tests pass.
    let tested = cargo_ok(&tools, &["test", "--offline", "--quiet", "--all-features"]);
    assert!(
        tested.contains("test result: ok. 9 passed; 0 failed"),
        "{tested}"
    );
    cargo_ok(
        &tools,
        &[
            "clippy",
            "--offline",
            "--quiet",
            "--all-targets",
            "--all-features",
            "--",
            "-D",
            "warnings",
        ],
    );
    // Without `web`, `links` is not compiled, and the rest still builds.
    let tested = cargo_ok(&tools, &["test", "--offline", "--quiet"]);
    assert!(
        tested.contains("test result: ok. 3 passed; 0 failed"),
        "{tested}"
    );

    // The workspace root given as --path is not a crate.
    let out = new(&["x", "--card", "read", "--path", root.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("is a workspace, not a crate"));
}

/// Exit 2, nothing on stdout, one `error: ` line on stderr, and not a byte
/// changed in `dir`; returns the line.
fn refused(dir: &Path, args: &[&str]) -> String {
    let before = snapshot(dir);
    let out = new(args);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert_eq!(text(&out.stdout), "", "{args:?}");
    assert_eq!(err.lines().count(), 1, "{args:?}: not one line: {err:?}");
    assert!(err.starts_with("error: "), "{args:?}: {err}");
    assert!(
        snapshot(dir) == before,
        "{args:?} changed {}",
        dir.display()
    );
    err
}

#[test]
fn errors_are_one_line_and_change_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("agent");
    fresh_crate(&dir, "agent");
    std::fs::write(dir.join("src/main.rs"), "fn main() {}\n").unwrap();
    let path = dir.to_str().unwrap();
    let long = "a".repeat(65);
    for (name, why) in [
        ("bad name", "is not a tool name"),
        ("", "is not a tool name"),
        (long.as_str(), "is not a tool name"),
        ("dot.name", "is not a tool name"),
        ("9lives", "starts with a digit"),
        ("type", "is a Rust keyword"),
        ("std", "every program can name"),
        ("main", "a target's own file"),
        ("lib", "a target's own file"),
        ("serde", "the dependency serde"),
        ("toolprism", "the dependency toolprism"),
    ] {
        let err = refused(&dir, &[name, "--card", "generic", "--path", path]);
        assert!(err.contains(why), "{name:?}: {err}");
    }
    let err = refused(&dir, &["x", "--card", "table", "--path", path]);
    assert!(
        err.contains("invalid value 'table' for '--card <CARD>'"),
        "{err}"
    );
    assert!(
        err.contains("generic, terminal, diff, read, search, web"),
        "{err}"
    );
    let err = refused(
        &dir,
        &["x", "--card", "read", "--kind", "write", "--path", path],
    );
    assert!(err.contains("--kind"), "{err}");
    let err = refused(
        &dir,
        &["x", "--card", "read", "--feature", "no way", "--path", path],
    );
    assert!(err.contains("not a feature name"), "{err}");
    let err = refused(&dir, &["x", "--path", path]);
    assert!(err.contains("--card"), "{err}");

    // A second `new` with the same name.
    ok(&new(&["weather", "--card", "generic", "--path", path]));
    let err = refused(&dir, &["weather", "--card", "read", "--path", path]);
    assert!(err.contains("src/weather.rs already exists"), "{err}");
    // The same module by another spelling of the name.
    let err = refused(&dir, &["Weather", "--card", "read", "--path", path]);
    assert!(err.contains("already exists"), "{err}");
    // A declaration without its file is still taken.
    std::fs::write(
        dir.join("src/lib.rs"),
        "mod forecast {\n}\n\npub fn add(left: u64, right: u64) -> u64 {\n    left + right\n}\n",
    )
    .unwrap();
    let err = refused(&dir, &["forecast", "--card", "read", "--path", path]);
    assert!(err.contains("already declares `mod forecast`"), "{err}");

    // Paths that are not a crate.
    let empty = tmp.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let err = refused(
        &empty,
        &["x", "--card", "read", "--path", empty.to_str().unwrap()],
    );
    assert!(
        err.contains("is not a crate: it has no Cargo.toml"),
        "{err}"
    );
    let missing = tmp.path().join("missing");
    let err = refused(
        tmp.path(),
        &["x", "--card", "read", "--path", missing.to_str().unwrap()],
    );
    assert!(err.contains("does not exist"), "{err}");
    let file = dir.join("Cargo.toml");
    let err = refused(
        &dir,
        &["x", "--card", "read", "--path", file.to_str().unwrap()],
    );
    assert!(err.contains("is not a directory"), "{err}");
    let torn = tmp.path().join("torn");
    std::fs::create_dir_all(torn.join("src")).unwrap();
    std::fs::write(torn.join("Cargo.toml"), "[package\nname = ").unwrap();
    std::fs::write(torn.join("src/lib.rs"), "").unwrap();
    let err = refused(
        &torn,
        &["x", "--card", "read", "--path", torn.to_str().unwrap()],
    );
    assert!(err.contains("is not a crate Cargo can read"), "{err}");
    // A crate that does not use toolprism.
    let plain = tmp.path().join("plain");
    std::fs::create_dir_all(plain.join("src")).unwrap();
    std::fs::write(
        plain.join("Cargo.toml"),
        "[package]\nname = \"plain\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n[workspace]\n",
    )
    .unwrap();
    std::fs::write(plain.join("src/lib.rs"), "").unwrap();
    let err = refused(
        &plain,
        &["x", "--card", "read", "--path", plain.to_str().unwrap()],
    );
    assert!(err.contains("does not depend on toolprism"), "{err}");
}

#[test]
fn edits_keep_the_users_formatting() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("bot");
    std::fs::create_dir_all(dir.join("src")).unwrap();
    // A binary crate, Windows line endings, comments, odd spacing.
    let manifest = format!(
        "# my bot\r\n[package]\r\nname    = \"bot\"   # the name\r\nversion = \"0.1.0\"\r\nedition = \"2021\"\r\n\r\n[dependencies]\r\n{}\r\n# for tests\r\n[dev-dependencies]\r\ntokio = {{ version = \"1\", features = [\"macros\", \"rt-multi-thread\"] }}\r\n\r\n[workspace]\r\n",
        dependencies().trim_end().replace('\n', "\r\n")
    );
    std::fs::write(dir.join("Cargo.toml"), &manifest).unwrap();
    let main = "//! The bot.\r\n\r\n// keep this comment\r\nmod   config ;\r\nmod zeta;\r\n\r\nfn main() {   }\r\n";
    std::fs::write(dir.join("src/main.rs"), main).unwrap();
    let report = ok(&new(&[
        "forecast",
        "--card",
        "generic",
        "--path",
        dir.to_str().unwrap(),
    ]));
    assert!(
        report.contains("register .tool(forecast::ForecastTool) in your registry"),
        "{report}"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("src/main.rs")).unwrap(),
        "//! The bot.\r\n\r\n// keep this comment\r\nmod   config ;\r\nmod forecast;\r\nmod zeta;\r\n\r\nfn main() {   }\r\n"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("Cargo.toml")).unwrap(),
        manifest.replace(
            "rt-multi-thread\"] }\r\n",
            "rt-multi-thread\"] }\r\nserde_json = \"1\"\r\n"
        )
    );
    // Nothing left to add: the next tool leaves Cargo.toml as it is.
    let before = std::fs::read(dir.join("Cargo.toml")).unwrap();
    let report = ok(&new(&[
        "alert",
        "--card",
        "terminal",
        "--path",
        dir.to_str().unwrap(),
    ]));
    assert!(!report.contains("Cargo.toml"), "{report}");
    assert_eq!(std::fs::read(dir.join("Cargo.toml")).unwrap(), before);
    // Before `config`, and before the comment that belongs to it.
    assert_eq!(
        std::fs::read_to_string(dir.join("src/main.rs")).unwrap(),
        "//! The bot.\r\n\r\nmod alert;\r\n// keep this comment\r\nmod   config ;\r\nmod forecast;\r\nmod zeta;\r\n\r\nfn main() {   }\r\n"
    );
}

#[test]
fn help_and_the_cargo_subcommand_form() {
    // As cargo runs it: `cargo-toolprism toolprism new …`.
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("agent");
    fresh_crate(&dir, "agent");
    let out = Command::new(BIN)
        .args(["toolprism", "new", "echo", "--card", "generic"])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert!(ok(&out).contains("created  src/echo.rs"));

    let out = Command::new(BIN).args(["new", "--help"]).output().unwrap();
    let help = ok(&out);
    for needle in [
        "--card <CARD>",
        "- generic:",
        "- web:",
        "--read-only",
        "--builtin",
        "--path <CRATE_DIR>",
        "Examples:",
        "cargo toolprism new weather --card generic --path my-agent",
    ] {
        assert!(help.contains(needle), "no {needle:?} in\n{help}");
    }
    let out = Command::new(BIN).args(["toolprism"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("Usage: cargo toolprism <COMMAND>"));
}
