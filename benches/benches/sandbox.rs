//! What the sandbox costs one `bash` call: `bash` running `true` through
//! `Registry::call`, confined (`workspace-write`, network off: Landlock and
//! seccomp entered in the child before `exec`) against the same call
//! unconfined (`full-access`), side by side; and what preparing the
//! confinement in the server costs on its own (`Confinement::prepare`:
//! the kernel probe, the writable roots opened, the ruleset built, the
//! seccomp program compiled). Run with
//! `cargo bench --manifest-path benches/Cargo.toml --bench sandbox`.
//!
//! The sides alternate round by round, the order flipping every round, so
//! load from other processes falls on both alike; each figure is the
//! median over rounds of a side's mean time per call.

use std::hint::black_box;
use std::time::{Duration, Instant};

use toolprism::{Registry, ToolCall};
use toolprism_tools::sandbox::{Confinement, SandboxMode, SandboxPolicy};
use toolprism_tools::{BashTool, Workspace};

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    let mid = values.len() / 2;
    if values.len().is_multiple_of(2) {
        (values[mid - 1] + values[mid]) / 2.0
    } else {
        values[mid]
    }
}

fn main() {
    // `cargo test --benches` runs this with `--bench` absent: one short round.
    let quick = !std::env::args().any(|a| a == "--bench");
    let (rounds, batch) = if quick { (2, 5) } else { (30, 40) };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let dir = tempfile::tempdir().expect("a temp dir");
    let sides = [SandboxMode::WorkspaceWrite, SandboxMode::FullAccess];
    let registries: Vec<Registry> = sides
        .iter()
        .map(|&mode| {
            let ws = Workspace::new(dir.path())
                .expect("the workspace")
                .with_sandbox(SandboxPolicy::new(mode));
            Registry::builder()
                .tool(BashTool::new(ws))
                .build()
                .expect("the registry")
        })
        .collect();
    let call = |registry: &Registry| {
        rt.block_on(async {
            let out = registry
                .call(ToolCall::new("b", "bash", r#"{"command":"true"}"#))
                .await;
            assert!(!out.is_error(), "{:?}", out.error());
            assert_eq!(out.value().unwrap()["exitCode"], 0);
            black_box(out);
        })
    };
    for registry in &registries {
        for _ in 0..batch {
            call(registry);
        }
    }
    let mut means: Vec<Vec<f64>> = vec![Vec::new(); sides.len()];
    for round in 0..rounds {
        for k in 0..sides.len() {
            let side = (k + round) % sides.len();
            let started = Instant::now();
            for _ in 0..batch {
                call(&registries[side]);
            }
            let took: Duration = started.elapsed();
            means[side].push(took.as_secs_f64() * 1e3 / f64::from(batch));
        }
    }
    let confined = median(&mut means[0]);
    let unconfined = median(&mut means[1]);
    // The preparation alone, in the server.
    let policy = SandboxPolicy::default();
    let n = if quick { 20 } else { 2000 };
    let started = Instant::now();
    for _ in 0..n {
        black_box(Confinement::prepare(&policy, dir.path()).expect("the kernel enforces it"));
    }
    let prepare = started.elapsed().as_secs_f64() * 1e6 / f64::from(n);
    println!();
    println!(
        "| {rounds} rounds of {batch} `bash true` calls, alternating | median of the round means | ratio |"
    );
    println!("|---|---|---|");
    println!("| unconfined (`full-access`) | {unconfined:.3} ms | 1.000 |");
    println!(
        "| confined (`workspace-write`, network off) | {confined:.3} ms | {:.3} |",
        confined / unconfined
    );
    println!(
        "| the sandbox's share | {:.3} ms | |",
        confined - unconfined
    );
    println!("| `Confinement::prepare` alone ({n} times) | {prepare:.1} µs | |");
}
