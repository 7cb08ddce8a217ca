//! The facade's integration tests, one binary: one module per concern.
//!
//! Each file beside this one was a test binary of its own; one binary links once.

#[macro_use]
#[path = "../common/mod.rs"]
mod common;
#[path = "../dialects/checkers.rs"]
mod checkers;
#[path = "../dialects/corpus.rs"]
mod corpus;
#[path = "../dialects/common.rs"]
mod dialects_common;
#[path = "../persist_common/mod.rs"]
mod persist_common;

mod cancellation;
mod client;
mod contract_doc;
mod dialect;
mod dialect_calls;
mod dialect_sdks;
mod lossless;
mod macro_tool;
mod panics;
mod persist_canary;
mod persist_log_replay;
mod persist_spill;
mod pipeline;
mod programs;
