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
//!
//! # Crates and features
//!
//! This crate is a facade: everything above comes from `toolprism-core`,
//! re-exported here at the root, and each edge is a crate of its own
//! behind a feature (all off by default):
//!
//! | feature | module | holds |
//! |---|---|---|
//! | `provider` | [`provider`], [`dialect`] | tool definitions in each provider's request shape (OpenAI, Anthropic, Gemini, MCP…), calls read from each model API's response, results written in its shape, and a bounded model loop over a model you call |
//! | `rig` | `provider::rig` | the registry's tools in a [rig](https://docs.rs/rig-core) agent's `ToolSet` (rig-core and rig-agent 0.44), each call through the pipeline (turns on `provider`) |
//! | `html` | [`html`] | cards and whole sessions as self-contained HTML pages (no extra dependency) |
//! | `mcp` | [`mcp`] | a registry served over MCP, stdio and Streamable HTTP, on rmcp |
//! | `import` | [`mcp::import`] | tools of other MCP servers in the registry (stdio, Streamable HTTP), and with `cli` the options `--import` and `--mcp-config`: a hub |
//! | `code` | [`code`] | Code Mode: the model writes one program against the tools, run in an embedded QuickJS sandbox and typed from their output schemas |
//! | `otel` | [`mcp`] | with `mcp`: a request's W3C `traceparent` becomes the parent of its `tools/call` tracing span for OpenTelemetry exporters (`tracing-opentelemetry`); see [`mcp`]'s Logging |
//! | `cli` | [`cli`] | one command line (`list`, `schema`, `call`, `replay`, and `serve` with `mcp`) for any registry, on clap |
//! | `agent` | `cli::agent` | with `cli`: the `agent` command (the tools in a loop with a model API) and `HttpModel`, over plain HTTP (ureq) |
//! | `agent-https` | `cli::agent` | `agent` with TLS (rustls, webpki roots) for the providers' own endpoints |
//!
//! The rules every part keeps (C1–C15, K1–K10 and the rules for
//! transports and programs) are written in the repository's
//! `docs/contract.md`, each with the tests that guard it.
#![forbid(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]

#[doc(inline)]
pub use toolprism_core::*;
#[doc(inline)]
pub use toolprism_macros::tool;

#[cfg(feature = "provider")]
#[cfg_attr(docsrs, doc(cfg(feature = "provider")))]
#[doc(inline)]
pub use toolprism_provider as provider;

/// The provider dialects, at the path they had in the core
/// (`toolprism::dialect`): the same module as [`provider::dialect`].
#[cfg(feature = "provider")]
#[cfg_attr(docsrs, doc(cfg(feature = "provider")))]
#[doc(inline)]
pub use toolprism_provider::dialect;

#[cfg(feature = "html")]
#[cfg_attr(docsrs, doc(cfg(feature = "html")))]
#[doc(inline)]
pub use toolprism_html as html;

#[cfg(feature = "mcp")]
#[cfg_attr(docsrs, doc(cfg(feature = "mcp")))]
#[doc(inline)]
pub use toolprism_mcp as mcp;

#[cfg(feature = "cli")]
#[cfg_attr(docsrs, doc(cfg(feature = "cli")))]
#[doc(inline)]
pub use toolprism_command as cli;

#[cfg(feature = "code")]
#[cfg_attr(docsrs, doc(cfg(feature = "code")))]
#[doc(inline)]
pub use toolprism_code as code;

#[doc(hidden)]
pub use toolprism_core::__private;

/// The README's quickstart runs as a doctest, so it cannot drift.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
struct ReadmeQuickstart;

/// The examples of the `#[tool]` attribute reference (in the macro crate,
/// which cannot depend on this one), run as doctests of this crate.
#[cfg(doctest)]
#[doc = include_str!("../../macros/doc/tool.md")]
struct AttributeReference;
