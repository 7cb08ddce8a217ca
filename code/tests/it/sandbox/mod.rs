//! The sandbox engine on its own (`toolprism::code::sandbox`), with test
//! hosts instead of a registry: the semantics of a program, the `tools`
//! global and `ToolCallError`, lossless values both ways, every limit,
//! console output, the order and overlap of nested calls, and the host's
//! futures polled on the engine's thread inside the caller's runtime.
//! One test binary, one module per concern.

mod common;
mod concurrency;
mod console;
mod convert;
mod host_runtime;
mod limits;
mod semantics;
mod tools;
