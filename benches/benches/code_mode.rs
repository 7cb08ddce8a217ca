//! Code Mode, side by side in one run (`cargo bench --manifest-path benches/Cargo.toml
//! --bench code_mode`): each figure is a ratio of two sides measured in
//! alternating rounds on the same machine, medians of the rounds.
//!
//! - **start**: `run_code` of `return 1` against one native call of a
//!   trivial tool (`echo`), and against starting a Node `worker_thread`
//!   that posts `1` back (the reference system's substrate; `node` must be
//!   on the PATH, else that row is skipped). Twice: 50 runs back to back
//!   (each run pays for its engine's set-up and clean-up: an engine thread
//!   frees a run's QuickJS runtime and makes the next after the outcome,
//!   so back to back that work is on the path unless another core takes
//!   it), and single runs 5 ms apart (the set-up was made while the engine
//!   waited, as between a model's calls), against the back-to-back `echo`
//!   and against single `echo` calls 5 ms apart (a machine whose cores
//!   slow down when idle makes any call after a pause slower: on a 2-vCPU
//!   VM, a start after 5 ms idle took 290–440 µs, and 68 µs while a
//!   niced spinner kept the cores busy);
//! - **per nested call**: 100 `read`s of a small file in one program
//!   against 100 native `Registry::call`s of `read`, awaited one by one in
//!   both; the program's own cost is a program with the same loop and no
//!   call, run in the same conditions (5 ms after the last run), subtracted;
//! - **memory**: the resident set of 20 runs waiting on a slow tool at
//!   once, per run.
//!
//! For an instruction profile, `CODE_MODE_PROFILE=SIDE:N` runs one side
//! 10 times (a warm-up) then `N` times, and exits, with nothing else measured:
//! `start` (`run_code` of `return 1`), `echo` (a native call), `nested`
//! (a program of 100 reads), `native` (100 native reads). Under valgrind's
//! callgrind, the difference of two counts (`N` and `2N`) divided by `N`
//! is the instructions one run of that side costs, set-up excluded:
//!
//! ```sh
//! CODE_MODE_PROFILE=start:200 valgrind --tool=callgrind target/release/deps/code_mode-*
//! ```

use std::hint::black_box;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::json;
use toolprism::code::CodeMode;
use toolprism::{ContentBlock, Mode, Registry, ToolCall, ToolContext, ToolError, tool};
use toolprism_benches::EchoTool;
use toolprism_tools::{ReadTool, Workspace};

#[derive(Clone, serde::Deserialize, schemars::JsonSchema)]
struct Millis {
    ms: u64,
}

/// Sleeps `ms`.
#[tool(name = "nap", read_only)]
impl Nap {
    async fn execute(&self, args: Millis, _cx: &ToolContext<'_>) -> Result<u64, ToolError> {
        tokio::time::sleep(Duration::from_millis(args.ms)).await;
        Ok(args.ms)
    }
    fn render(_: &Millis, v: &u64) -> Vec<ContentBlock> {
        vec![ContentBlock::text(v.to_string())]
    }
}
struct Nap;

const ROUNDS: usize = 15;

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

fn program(code: &str) -> String {
    json!({"code": code, "description": "bench"}).to_string()
}

fn rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// Milliseconds to start a Node worker_thread that posts back `1`, the
/// median of `n` starts in one Node process; `None` without `node`.
fn node_worker_ms(n: usize) -> Option<f64> {
    let script = format!(
        r#"const {{ Worker }} = require("worker_threads");
const times = [];
(async () => {{
  for (let i = 0; i < {n}; i++) {{
    const t0 = process.hrtime.bigint();
    await new Promise((done) => {{
      const w = new Worker("require('worker_threads').parentPort.postMessage(1)", {{ eval: true }});
      w.once("message", () => {{ times.push(Number(process.hrtime.bigint() - t0) / 1e6); w.terminate().then(done); }});
    }});
  }}
  times.sort((a, b) => a - b);
  console.log(times[times.length >> 1]);
}})();"#
    );
    let out = Command::new("node").arg("-e").arg(script).output().ok()?;
    String::from_utf8_lossy(&out.stdout).trim().parse().ok()
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("small.txt"), "one\ntwo\nthree\n").unwrap();
    let workspace = Workspace::new(dir.path()).unwrap();
    let registry = Registry::builder()
        .tool(EchoTool)
        .tool(ReadTool::new(workspace))
        .tool(Nap)
        .code_mode(Mode::Both)
        .build()
        .unwrap();

    let trivial = program("return 1;");
    let reads = program(
        "let n = 0; for (let i = 0; i < 100; i++) { const r = await tools.read({ path: 'small.txt' }); n += r.totalLines; } return n;",
    );
    let read_args = r#"{"path":"small.txt"}"#;
    let echo_args = r#"{"text":"hello"}"#;

    if let Ok(profile) = std::env::var("CODE_MODE_PROFILE") {
        let (side, n) = profile.split_once(':').unwrap_or((&profile, "100"));
        let n: usize = n.parse().expect("CODE_MODE_PROFILE=SIDE:N");
        let (name, args, times) = match side {
            "start" => ("run_code", trivial.as_str(), 1),
            "echo" => ("echo", echo_args, 1),
            "nested" => ("run_code", reads.as_str(), 1),
            "native" => ("read", read_args, 100),
            other => panic!("unknown side {other:?}: start, echo, nested or native"),
        };
        // The same warm-up before N and 2N, so the difference is N of the
        // side alone.
        for count in [10 * times, n * times] {
            rt.block_on(async {
                for _ in 0..count {
                    let out = registry.call(ToolCall::new("p", name, args)).await;
                    assert!(!out.is_error(), "{out:?}");
                }
            });
        }
        return;
    }

    // Warm up every side once.
    rt.block_on(async {
        for _ in 0..20 {
            black_box(registry.call(ToolCall::new("w", "run_code", &*reads)).await);
            black_box(registry.call(ToolCall::new("w", "read", read_args)).await);
        }
    });

    let empty = program(
        "let n = 0; for (let i = 0; i < 100; i++) { const r = { totalLines: 3 }; n += r.totalLines; } return n;",
    );
    let settle = Duration::from_millis(5);
    let (mut start, mut echo, mut nested, mut native) = (vec![], vec![], vec![], vec![]);
    let (mut spaced, mut spaced_echo, mut looped) = (vec![], vec![], vec![]);
    for _ in 0..ROUNDS {
        rt.block_on(async {
            // One start of a program, against one echo call (each averaged
            // over 50 to lift it above the clock).
            let t = Instant::now();
            for _ in 0..50 {
                let out = registry
                    .call(ToolCall::new("s", "run_code", &*trivial))
                    .await;
                assert!(!out.is_error(), "{out:?}");
            }
            start.push(t.elapsed().as_secs_f64() / 50.0);
            let t = Instant::now();
            for _ in 0..50 {
                black_box(registry.call(ToolCall::new("e", "echo", echo_args)).await);
            }
            echo.push(t.elapsed().as_secs_f64() / 50.0);
            // 100 reads in a program, against 100 native reads; the same
            // program without the reads, in the same conditions.
            tokio::time::sleep(settle).await;
            let t = Instant::now();
            let out = registry.call(ToolCall::new("p", "run_code", &*reads)).await;
            assert_eq!(out.value().unwrap()["result"], 300, "{out:?}");
            nested.push(t.elapsed().as_secs_f64());
            let t = Instant::now();
            for _ in 0..100 {
                let out = registry.call(ToolCall::new("n", "read", read_args)).await;
                assert!(!out.is_error());
            }
            native.push(t.elapsed().as_secs_f64());
            tokio::time::sleep(settle).await;
            let t = Instant::now();
            let out = registry.call(ToolCall::new("l", "run_code", &*empty)).await;
            assert_eq!(out.value().unwrap()["result"], 300, "{out:?}");
            looped.push(t.elapsed().as_secs_f64());
            // Single starts, each 5 ms after the last run.
            for _ in 0..5 {
                tokio::time::sleep(settle).await;
                let t = Instant::now();
                let out = registry
                    .call(ToolCall::new("s", "run_code", &*trivial))
                    .await;
                spaced.push(t.elapsed().as_secs_f64());
                assert!(!out.is_error(), "{out:?}");
                // A native call after the same idle time: the machine's
                // wake-up from idle weighs on both sides alike.
                tokio::time::sleep(settle).await;
                let t = Instant::now();
                black_box(registry.call(ToolCall::new("e", "echo", echo_args)).await);
                spaced_echo.push(t.elapsed().as_secs_f64());
            }
        });
    }
    let start_s = median(start);
    let spaced_s = median(spaced);
    let spaced_echo_s = median(spaced_echo);
    let echo_s = median(echo);
    let per_nested = (median(nested) - median(looped)) / 100.0;
    let per_native = median(native) / 100.0;

    // Memory: 20 runs waiting on a 1.5 s nap at once.
    let before = rss_kib();
    let peak = rt.block_on(async {
        let waiting = program("return await tools.nap({ ms: 1500 });");
        let mut runs = Vec::new();
        for i in 0..20 {
            let registry = registry.clone();
            let args = waiting.clone();
            runs.push(tokio::spawn(async move {
                registry
                    .call(ToolCall::new(format!("m{i}"), "run_code", args))
                    .await
            }));
        }
        tokio::time::sleep(Duration::from_millis(700)).await;
        let peak = rss_kib();
        for run in runs {
            let out = run.await.unwrap();
            assert!(!out.is_error(), "{out:?}");
        }
        peak
    });
    let node = node_worker_ms(30);

    println!();
    println!("Code Mode, {ROUNDS} alternating rounds (medians):");
    println!(
        "  start      run_code of `return 1`, back to back: {:.1} µs; one native call of echo: {:.2} µs; ratio {:.1}",
        start_s * 1e6,
        echo_s * 1e6,
        start_s / echo_s
    );
    println!(
        "  start      run_code of `return 1`, 5 ms apart: {:.1} µs; ratio {:.1}; one native call of echo 5 ms apart: {:.2} µs; ratio {:.1}",
        spaced_s * 1e6,
        spaced_s / echo_s,
        spaced_echo_s * 1e6,
        spaced_s / spaced_echo_s
    );
    match node {
        Some(ms) => println!(
            "  substrate  run_code start {:.3} ms against a Node worker_thread start {ms:.2} ms: ratio {:.3} (target <= 0.1)",
            start_s * 1e3,
            start_s * 1e3 / ms
        ),
        None => println!("  substrate  (node not found: skipped)"),
    }
    println!(
        "  nested     per read in a program {:.1} µs; per native read {:.1} µs; ratio {:.2} (target <= 1.5)",
        per_nested * 1e6,
        per_native * 1e6,
        per_nested / per_native
    );
    println!(
        "  memory     20 waiting runs: {} KiB more resident, {} KiB per run",
        peak.saturating_sub(before),
        peak.saturating_sub(before) / 20
    );
}
