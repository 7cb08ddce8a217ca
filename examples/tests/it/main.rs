//! The showcase and the example server, run as real processes: one test binary.
//!
//! Each file beside this one was a test binary of its own; one binary links once.

#[path = "../../../code/tests/support/mod.rs"]
mod tsc;

mod build_reuse;
mod code_mode_import;
mod html_viewer;
mod sandbox;
mod serve_mcp;
mod showcase;
mod showcase_cli;
