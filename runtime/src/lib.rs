//! # toolprism
//!
//! Declare the tools an AI agent calls with one attribute. A tool's body
//! returns **one canonical value**, a plain Rust type; everything else is a
//! projection of it:
//!
//! - an **output JSON Schema** derived from the type and enforced on every call;
//! - [`render`](Tool::render): the **content** the model reads;
//! - [`presentation_meta`](Tool::presentation_meta): small **replayable UI data**;
//! - presenters: a **card** from a closed vocabulary ([`card`]) that a UI
//!   draws by switching on the card tag, never on the tool's name;
//! - the [session log](log) keeps content, error code and meta, **never the
//!   value**, so [replay] redraws every card but cannot rebuild the value.
//!
//! Every failure (bad arguments, a value that breaks its schema, a panicking
//! projection, a denial, a timeout) becomes an error [`ToolOutcome`], never a
//! crash and never an `Err`.
//!
//! ```
//! use toolprism::{ContentBlock, NoMeta, Registry, Tool, ToolCall, ToolContext, ToolError, ToolInfo};
//!
//! #[derive(Clone, serde::Deserialize, schemars::JsonSchema)]
//! struct Args { text: String }
//!
//! #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
//! struct Shout { text: String }
//!
//! struct ShoutTool;
//! impl Tool for ShoutTool {
//!     type Args = Args;
//!     type Value = Shout;
//!     type Meta = NoMeta;
//!     const INFO: ToolInfo = ToolInfo::new("shout", "Upper-case the text.");
//!     async fn execute(&self, args: Args, _cx: &ToolContext<'_>) -> Result<Shout, ToolError> {
//!         Ok(Shout { text: args.text.to_uppercase() })
//!     }
//!     fn render(_: &Args, v: &Shout) -> Vec<ContentBlock> {
//!         vec![ContentBlock::text(&v.text)]
//!     }
//! }
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let registry = Registry::builder().tool(ShoutTool).build().unwrap();
//! let out = registry.call(ToolCall::new("c1", "shout", r#"{"text":"hi"}"#)).await;
//! assert_eq!(out.content(), [ContentBlock::text("HI")]);
//! assert_eq!(out.result_card().unwrap().tag(), "generic");
//! # });
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

// Lets `#[tool]` expansions name `::toolprism` inside this crate too.
extern crate self as toolprism;

pub mod card;
#[cfg(feature = "cli")]
pub mod cli;
mod content;
mod context;
pub mod dialect;
mod error;
mod guard;
#[cfg(feature = "html")]
pub mod html;
pub mod log;
pub mod lossless;
#[cfg(feature = "mcp")]
pub mod mcp;
mod path;
mod policy;
mod registry;
pub mod replay;
mod result;
pub mod schema;
pub mod spill;
pub mod testing;
mod tool;

pub use card::{CallCard, ResultCard, ToolKind};
pub use content::{ContentBlock, content_text};
pub use context::{NestedCalls, Progress, ToolContext};
pub use error::{ErrorCode, ErrorInfo, ToolError};
pub use lossless::MAX_DEPTH;
pub use policy::{
    PostDecision, PostExecute, PostExecutePolicy, PreDecision, PreExecute, PreExecutePolicy,
};
pub use registry::{
    CallOptions, DEFAULT_SPILL_BUDGET, Registry, RegistryBuilder, RegistryError, ToolCall,
};
pub use result::{ToolOutcome, ToolResult};
pub use tokio_util::sync::CancellationToken;
pub use tool::{NoMeta, SpillBudget, Tool, ToolAnnotations, ToolDefinition, ToolInfo};
#[doc(inline)]
pub use toolprism_macros::tool;

#[doc(hidden)]
pub mod __private;

/// The README's quickstart runs as a doctest, so it cannot drift.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
struct ReadmeQuickstart;
