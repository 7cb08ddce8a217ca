//! The TypeScript compiler for the SDK tests: `typescript` pinned,
//! installed by `toolprism_testkit::npm_packages` under `target/testkit/`
//! on first use, and [`check`], which compiles a program against an SDK
//! with `tsc --strict --noEmit`.
//!
//! A program is what a model passes to `run_code`: the body of an async
//! function. [`check`] writes the SDK as `sdk.d.ts` and the program, inside
//! `async function __program() { … }`, as `program.ts` after
//! `/// <reference path="sdk.d.ts" />` (the SDK is a script of global
//! declarations, so a reference, not an import, brings it in).

#![allow(dead_code)]

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The compiler, pinned exactly (the last 5.x release).
pub(crate) const TYPESCRIPT: &str = "typescript@5.9.3";

/// The directory holding [`TYPESCRIPT`] under `node_modules`.
pub(crate) fn npm_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| toolprism_testkit::npm_packages("typescript", &[TYPESCRIPT]))
}

/// Compiles `program` (a function body) against `sdk` with `tsc --strict
/// --noEmit` (target and lib ES2022, plus the DOM lib for `console`) in
/// `target/testkit/tsc/<case>/`; `Err` holds the compiler's messages.
pub(crate) fn check(case: &str, sdk: &str, program: &str) -> Result<(), String> {
    let dir = toolprism_testkit::target_dir()
        .join("testkit")
        .join("tsc")
        .join(case);
    fs::create_dir_all(&dir).expect("create the case directory");
    fs::write(dir.join("sdk.d.ts"), sdk).expect("write sdk.d.ts");
    let mut body = String::new();
    for line in program.lines() {
        if !line.is_empty() {
            body.push_str("  ");
        }
        body.push_str(line);
        body.push('\n');
    }
    fs::write(
        dir.join("program.ts"),
        format!("/// <reference path=\"sdk.d.ts\" />\nasync function __program() {{\n{body}}}\n"),
    )
    .expect("write program.ts");
    let tsc = npm_dir().join("node_modules/typescript/bin/tsc");
    let out = Command::new("node")
        .current_dir(&dir)
        .arg(tsc)
        .args([
            "--strict",
            "--noEmit",
            "--pretty",
            "false",
            "--target",
            "es2022",
            "--lib",
            "es2022,dom",
            "program.ts",
        ])
        .output()
        .expect("run node (the SDK tests need node and npm)");
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}
