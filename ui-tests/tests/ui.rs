//! The compile-time contract of `#[tool]` (K1–K10 in `docs/contract.md`).
//!
//! `fail/` holds one mistake per file, named after it, with the exact
//! diagnostics in the `.stderr` next to it; `pass/` holds tools that must
//! compile, and whose `main` runs. Regenerate the `.stderr` files with
//! `TRYBUILD=overwrite cargo test -p toolprism-ui-tests` and review the diff.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.pass("pass/*.rs");
    t.compile_fail("fail/*.rs");
}
