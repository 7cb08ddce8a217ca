//! Compile-time tests of `#[tool]`: see `tests/ui.rs`, `pass/` and `fail/`.
