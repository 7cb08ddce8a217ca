//! The provider edge's integration tests, one binary: one module per concern.
//!
//! - `sdk_judges`: the providers' own Python SDKs build the responses read
//!   and validate every message written.
//! - `openai_types`: the Rust types of `async-openai` read what is written
//!   for OpenAI and agree on the calls read.
//! - `hostile`: what a model or its server can do wrong, against the loop.

mod common;
mod hostile;
mod openai_types;
mod sdk_judges;
