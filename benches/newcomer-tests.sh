#!/usr/bin/env bash
# The newcomer's tests, built and run, side by side (benches/RESULTS.md,
# *Build cost*). For each commit given, one after the other: a clean clone
# of this repository at that commit with an empty target dir inside it,
# then `cargo run`, `cargo test --workspace --no-run` (the build) and
# `cargo test --workspace --no-fail-fast` (the run). cpu = user + sys.
#
# Usage: benches/newcomer-tests.sh 66d4371 HEAD
# Each side needs up to 15 GB of disk while it runs; its target dir is
# removed after it. Figures go to $OUT/newcomer.txt (default
# /tmp/toolprism-newcomer), each step's output beside them.
set -u
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="${OUT:-/tmp/toolprism-newcomer}"
mkdir -p "$OUT"
figures="$OUT/newcomer.txt"
: >"$figures"
for rev in "$@"; do
    commit=$(git -C "$ROOT" rev-parse --short "$rev")
    dir="$OUT/clone-$commit"
    rm -rf "$dir"
    git clone -q "$ROOT" "$dir" && git -C "$dir" checkout -q "$commit"
    step() {
        local label=$1
        shift
        (cd "$dir" && env -u CARGO_TARGET_DIR /usr/bin/time -f "$commit $label wall=%e user=%U sys=%S" \
            -a -o "$figures" "$@" >"$OUT/$commit-$label.log" 2>&1)
        echo "$commit $label exit=$?" >>"$figures"
    }
    step run cargo run
    step test-build cargo test --workspace --no-run
    step test-run cargo test --workspace --no-fail-fast
    tally=$(awk '/^test result: / { for (i = 1; i < NF; i++) { if ($(i+1) ~ /^passed/) p += $i; if ($(i+1) ~ /^failed/) f += $i } }
        END { printf "%d passed, %d failed", p, f }' "$OUT/$commit-test-run.log")
    echo "$commit tests: $tally; $(grep -c '     Running ' "$OUT/$commit-test-run.log") test executables; target $(du -sh "$dir/target" | cut -f1)" >>"$figures"
    rm -rf "$dir/target"
done
cat "$figures"
