//! How fast a session log replays: a 100,000-event log (50,000 calls over
//! four tools: a search card from meta, terminal cards, read cards, generic
//! cards) replayed with every card drawn, next to a plain JSON-lines parse of
//! the same file.
//!
//! ```text
//! cargo run --release -p toolprism --example replay_speed [-- CALLS]
//! ```
//!
//! CPU time is the thread's own (`/proc/thread-self/schedstat` on Linux;
//! elsewhere wall time is shown in its place).

#[path = "../tests/persist_common/mod.rs"]
mod tools;

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::time::{Duration, Instant};

use toolprism::log::{SessionLog, read_log};
use toolprism::replay::replay_log;
use toolprism::{Registry, RegistryBuilder, ToolCall};

fn tools() -> RegistryBuilder {
    Registry::builder()
        .tool(tools::Grep)
        .tool(tools::Shell)
        .tool(tools::ReadFile)
        .tool(tools::Plain)
}

fn write_log(path: &Path, calls: usize) {
    let registry = tools()
        .log(SessionLog::create(path).unwrap())
        .build()
        .unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        for i in 0..calls {
            let (name, args) = match i % 4 {
                0 => (
                    "grep",
                    format!(r#"{{"pattern":"fn_{}","limit":5}}"#, i % 97),
                ),
                1 => (
                    "shell",
                    format!(r#"{{"command":"echo line {i}","cwd":"/work"}}"#),
                ),
                2 => (
                    "read_file",
                    format!(
                        r#"{{"path":"src/m{i}.rs","offset":{},"limit":8}}"#,
                        i % 400 + 1
                    ),
                ),
                _ => ("plain", format!(r#"{{"text":"hello {i} "}}"#)),
            };
            let out = registry
                .call(ToolCall::new(format!("call-{i}"), name, args))
                .await;
            assert!(!out.is_error(), "{:?}", out.error());
        }
    });
}

/// The thread's CPU time, when the OS tells it.
fn cpu_time() -> Option<Duration> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: u64 = text.split_whitespace().next()?.parse().ok()?;
    Some(Duration::from_nanos(ns))
}

/// One run of `f`: (CPU time, wall time).
fn measure<R>(f: impl FnOnce() -> R) -> (Duration, Duration) {
    let (cpu0, wall0) = (cpu_time(), Instant::now());
    std::hint::black_box(f());
    let wall = wall0.elapsed();
    let cpu = match (cpu0, cpu_time()) {
        (Some(a), Some(b)) => b - a,
        _ => wall,
    };
    (cpu, wall)
}

/// The baseline: every line parsed into a `serde_json::Value`, kept.
fn parse_lines(path: &Path) -> Vec<serde_json::Value> {
    let mut reader = BufReader::with_capacity(1 << 16, File::open(path).unwrap());
    let mut line = Vec::new();
    let mut events = Vec::new();
    while reader.read_until(b'\n', &mut line).unwrap() > 0 {
        events.push(serde_json::from_slice(line.trim_ascii()).unwrap());
        line.clear();
    }
    events
}

fn main() {
    let calls: usize = std::env::args()
        .nth(1)
        .map_or(50_000, |n| n.parse().expect("CALLS is a number"));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("session.jsonl");
    write_log(&path, calls);
    let events = 2 * calls;
    let size = std::fs::metadata(&path).unwrap().len();
    let registry = tools().build().unwrap();

    let replayed = replay_log(&path, &registry).unwrap();
    assert_eq!(replayed.entries.len(), calls);
    assert!(replayed.problems.is_empty());

    println!(
        "log: {events} events, {:.1} MB ({} debug build)",
        size as f64 / 1e6,
        if cfg!(debug_assertions) { "a" } else { "not a" }
    );
    // Interleaved rounds, best of each: a busy machine slows all three alike.
    let mut best = [(Duration::MAX, Duration::MAX); 3];
    for _ in 0..7 {
        let round = [
            measure(|| parse_lines(&path)),
            measure(|| read_log(&path).unwrap()),
            measure(|| replay_log(&path, &registry).unwrap()),
        ];
        for (b, r) in best.iter_mut().zip(round) {
            *b = (b.0.min(r.0), b.1.min(r.1));
        }
    }
    let base = best[0].0;
    for (label, (cpu, wall)) in [
        ("JSON lines -> Vec<Value>", best[0]),
        ("read_log (events, no cards)", best[1]),
        ("replay_log (every card drawn)", best[2]),
    ] {
        println!(
            "{label:<30} cpu {:>6.1} ms  wall {:>6.1} ms  {:>5.2} M events/s  x{:.2} of the JSON parse",
            cpu.as_secs_f64() * 1e3,
            wall.as_secs_f64() * 1e3,
            events as f64 / cpu.as_secs_f64() / 1e6,
            cpu.as_secs_f64() / base.as_secs_f64(),
        );
    }
}
