//! The ratio report printed at the end of a benchmark run, read from the
//! estimates criterion has just written.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde_json::Value;

/// Where criterion writes its estimates: `$CRITERION_HOME`, or
/// `<target dir>/criterion` (the target dir found from this bench's
/// `CARGO_TARGET_TMPDIR`, which is `<target dir>/tmp`).
pub fn criterion_dir(target_tmpdir: &str) -> PathBuf {
    if let Some(home) = std::env::var_os("CRITERION_HOME") {
        return PathBuf::from(home);
    }
    let tmp = Path::new(target_tmpdir);
    tmp.parent().unwrap_or(tmp).join("criterion")
}

/// One ratio: `group/numerator` over `group/denominator`, against a target.
pub struct Ratio {
    /// What the ratio measures.
    pub label: &'static str,
    /// The criterion group.
    pub group: &'static str,
    /// The function id on top.
    pub numerator: &'static str,
    /// The function id below.
    pub denominator: &'static str,
    /// The target: the ratio must be at most this (or below it when `strict`).
    pub target: f64,
    /// `<` rather than `≤`.
    pub strict: bool,
}

/// The median time, in nanoseconds, of `group/function` if this run
/// measured it (an estimate older than `since` is from an earlier run).
fn median_ns(dir: &Path, group: &str, function: &str, since: SystemTime) -> Option<f64> {
    let path = dir.join(group).join(function).join("new/estimates.json");
    let modified = std::fs::metadata(&path).ok()?.modified().ok()?;
    if modified < since {
        return None;
    }
    let estimates: Value = serde_json::from_str(&std::fs::read_to_string(&path).ok()?).ok()?;
    estimates["median"]["point_estimate"].as_f64()
}

fn human(ns: f64) -> String {
    if ns >= 1e9 {
        format!("{:.3} s", ns / 1e9)
    } else if ns >= 1e6 {
        format!("{:.3} ms", ns / 1e6)
    } else if ns >= 1e3 {
        format!("{:.3} µs", ns / 1e3)
    } else {
        format!("{ns:.1} ns")
    }
}

/// Prints each ratio measured in this run (started at `since`) as a
/// Markdown table row; ratios whose two sides were not both measured (a
/// filter was given) are left out. Returns how many targets were missed.
pub fn print_ratios(dir: &Path, since: SystemTime, ratios: &[Ratio]) -> usize {
    let mut missed = 0;
    let mut header = false;
    for r in ratios {
        let (Some(num), Some(den)) = (
            median_ns(dir, r.group, r.numerator, since),
            median_ns(dir, r.group, r.denominator, since),
        ) else {
            continue;
        };
        if !header {
            println!();
            println!("| ratio (medians) | measured | target | met |");
            println!("|---|---|---|---|");
            header = true;
        }
        let ratio = num / den;
        let met = if r.strict {
            ratio < r.target
        } else {
            ratio <= r.target
        };
        if !met {
            missed += 1;
        }
        println!(
            "| {}: {}/{} ({} / {}) | {:.2} | {} {} | {} |",
            r.label,
            r.numerator,
            r.denominator,
            human(num),
            human(den),
            ratio,
            if r.strict { "<" } else { "≤" },
            r.target,
            if met { "yes" } else { "**no**" }
        );
    }
    missed
}
