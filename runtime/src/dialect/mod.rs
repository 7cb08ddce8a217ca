//! Provider dialects: each tool's definition in the exact shape a model
//! API or protocol expects, as pure functions of the canonical
//! [`ToolDefinition`](crate::ToolDefinition).
//!
//! - [`mcp`]: a Model Context Protocol `tools/list` entry.

pub mod mcp;
#[allow(dead_code)] // used by the dialects still to come
mod walk;
