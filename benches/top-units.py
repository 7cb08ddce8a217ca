#!/usr/bin/env python3
"""The costliest crates of one `cargo build --timings` page.

Usage: benches/top-units.py PAGE.html [N]

Prints the N (default 15) crates with the most compile time (a crate's
units summed: its build script, its library), the total, and each crate's
share. The durations are cargo's own per-unit wall times: with other jobs
on the cores they include waiting, so compare shares, not seconds, across
runs on a busy machine.
"""
import json
import re
import sys


def main():
    page = open(sys.argv[1], encoding="utf-8").read()
    top = int(sys.argv[2]) if len(sys.argv) > 2 else 15
    found = re.search(r"const UNIT_DATA = (\[.*?\]);\n", page, re.S)
    if not found:
        sys.exit(f"{sys.argv[1]}: no UNIT_DATA (not a cargo --timings page?)")
    units = json.loads(found.group(1))
    crates = {}
    for unit in units:
        name = f"{unit['name']} {unit['version']}"
        crates[name] = crates.get(name, 0.0) + unit["duration"]
    total = sum(crates.values())
    print(f"{len(crates)} crates, {len(units)} units, {total:.0f} s of unit time")
    print("| crate | unit time | share |")
    print("|---|---|---|")
    for name, seconds in sorted(crates.items(), key=lambda kv: -kv[1])[:top]:
        print(f"| {name} | {seconds:.1f} s | {100 * seconds / total:.1f} % |")


if __name__ == "__main__":
    main()
