//! Code Mode's integration tests, one binary: the engine alone (`sandbox`), programs over
//! a registry, and the SDK's declarations.
//!
//! Each file beside this one was a test binary of its own; one binary links once.

#[path = "../../../runtime/tests/dialects/corpus.rs"]
mod corpus;
#[path = "../support/mod.rs"]
mod support;

mod run_code;
mod sandbox;
mod sdk;
mod sdk_typescript;
