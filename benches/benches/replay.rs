//! Replay: a session log of 100,000 events (50,000 calls and their
//! results, half of them with meta) drawn again as cards, against a plain
//! JSON-lines parse of the same file into `serde_json::Value`. Run with
//! `cargo bench --manifest-path benches/Cargo.toml --bench replay`.

use std::hint::black_box;
use std::time::{Duration, SystemTime};

use criterion::{Criterion, SamplingMode};
use toolprism::replay::replay_log;
use toolprism_benches::replay::{CALLS, parse_lines, registry, write_log};
use toolprism_benches::report::{Ratio, criterion_dir, print_ratios};

fn main() {
    let since = SystemTime::now();
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("session.jsonl");
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime")
        .block_on(write_log(&path, CALLS))
        .expect("the session log is written");
    let registry = registry();

    // Both sides read every event of the same file.
    let events = parse_lines(&path).expect("the log parses");
    let replayed = replay_log(&path, &registry).expect("the log replays");
    assert_eq!(events.len(), 2 * CALLS);
    assert_eq!(replayed.entries.len(), CALLS);
    assert!(replayed.problems.is_empty(), "{:?}", replayed.problems);
    assert!(replayed.entries.iter().all(|e| e.result_card.is_some()));
    let tags = |tag: &str| {
        replayed
            .entries
            .iter()
            .filter(|e| e.result_card.as_ref().is_some_and(|c| c.tag() == tag))
            .count()
    };
    assert_eq!((tags("generic"), tags("search")), (CALLS / 2, CALLS / 2));
    let bytes = std::fs::metadata(&path).expect("the log exists").len();
    println!(
        "replay: {} events, {bytes} bytes of session log",
        events.len()
    );
    drop((events, replayed));

    let mut c = Criterion::default()
        .output_directory(&criterion_dir(env!("CARGO_TARGET_TMPDIR")))
        .warm_up_time(Duration::from_secs(1))
        .configure_from_args();
    let mut group = c.benchmark_group("replay");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(4))
        .sampling_mode(SamplingMode::Flat);
    group.bench_function("parse", |b| {
        b.iter(|| black_box(parse_lines(&path).expect("the log parses")))
    });
    group.bench_function("cards", |b| {
        b.iter(|| black_box(replay_log(&path, &registry).expect("the log replays")))
    });
    group.finish();
    c.final_summary();

    print_ratios(
        &criterion_dir(env!("CARGO_TARGET_TMPDIR")),
        since,
        &[Ratio {
            label: "replay",
            group: "replay",
            numerator: "cards",
            denominator: "parse",
            target: 2.0,
            strict: false,
        }],
    );
}
