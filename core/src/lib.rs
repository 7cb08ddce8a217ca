//! The core of [toolprism](https://docs.rs/toolprism): the contract.
//!
//! Tools ([`Tool`]), the [`Registry`] and its pipeline, the card
//! vocabulary ([`card`]), results, policies, schemas, lossless JSON
//! ([`lossless`]), the session [`log`], [`replay`] and [`spill`], and the
//! `execute_tool` span of every call ([`telemetry`]). It depends on no edge (the provider dialects and the model loop, MCP, HTML, the
//! command line, Code Mode) and knows no provider; the edges are crates of
//! their own that depend on this one's public API only.
//!
//! Depend on `toolprism`, not on this crate: it re-exports everything here
//! at its root, with `#[tool]` and each edge behind a feature. The rules
//! this crate keeps are written in the repository's `docs/contract.md`.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod argument_dialect;
pub mod bounds;
mod caller;
pub mod card;
pub mod client;
mod content;
mod context;
mod definition;
mod error;
mod guard;
pub mod log;
pub mod lossless;
mod path;
mod policy;
mod registry;
pub mod replay;
mod result;
pub mod schema;
pub mod spill;
pub mod telemetry;
pub mod testing;
mod text;
mod tool;

pub use argument_dialect::ArgumentDialect;
pub use caller::Caller;
pub use card::{CallCard, ResultCard, ToolKind};
pub use content::{
    ContentBlock, EmbeddedResource, ResourceLink, content_text, content_value, content_value_schema,
};
pub use context::{NestedCalls, ProgramCalls, Progress, ToolContext};
pub use definition::{SpillBudget, TaskSupport, ToolAnnotations, ToolDefinition, ToolInfo};
pub use error::{ErrorCode, ErrorInfo, ToolError};
pub use lossless::MAX_DEPTH;
pub use policy::{
    PostDecision, PostExecute, PostExecutePolicy, PreDecision, PreExecute, PreExecutePolicy,
};
pub use registry::{
    CallOptions, DEFAULT_APPROVAL_TIMEOUT, DEFAULT_SPILL_BUDGET, DynamicDefinition, DynamicFuture,
    DynamicOutput, DynamicTool, Mode, PROGRAM_TOOL, Registry, RegistryBuilder, RegistryError,
    ToolCall,
};
pub use result::{Approval, ApprovalDecision, NestedCall, ToolOutcome, ToolResult};
pub use tokio_util::sync::CancellationToken;
pub use tool::{NoMeta, Tool};

#[doc(hidden)]
pub mod __private;
