//! A test runner for test binaries with `harness = false` (those that are
//! also the program they test, so their `main` decides which one it is):
//! the tests by name, a name filter from the command line as libtest takes
//! it, and libtest's summary line, which `.ci/run` counts.

use std::process::ExitCode;
use std::time::Instant;

/// Runs the `tests` whose name contains the first argument that is not a
/// flag (all of them without one), each under `catch_unwind`; prints one
/// line per test and libtest's `test result:` line; fails (101) when any
/// test panicked.
pub fn run(tests: &[(&str, fn())]) -> ExitCode {
    let filter: Option<String> = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    let selected: Vec<_> = tests
        .iter()
        .filter(|(name, _)| filter.as_deref().is_none_or(|f| name.contains(f)))
        .collect();
    let started = Instant::now();
    println!("\nrunning {} tests", selected.len());
    let mut failed = Vec::new();
    for (name, test) in &selected {
        let ok = std::panic::catch_unwind(test).is_ok();
        println!("test {name} ... {}", if ok { "ok" } else { "FAILED" });
        if !ok {
            failed.push(*name);
        }
    }
    if !failed.is_empty() {
        println!("\nfailures:");
        for name in &failed {
            println!("    {name}");
        }
    }
    println!(
        "\ntest result: {}. {} passed; {} failed; 0 ignored; 0 measured; {} filtered out; finished in {:.2}s\n",
        if failed.is_empty() { "ok" } else { "FAILED" },
        selected.len() - failed.len(),
        failed.len(),
        tests.len() - selected.len(),
        started.elapsed().as_secs_f64()
    );
    if failed.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(101)
    }
}
