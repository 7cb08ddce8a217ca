//! A registry's tools in [rig](https://docs.rs/rig-core)'s agents (feature
//! `rig`): each tool a rig tool handler, all of them in a rig [`ToolSet`].
//!
//! rig runs its agent loop; every call it makes goes through the
//! registry's pipeline ([`Registry::call_with`]): arguments read
//! losslessly and checked against the input schema, policies and approval,
//! timeout, output schema, [`render`](toolprism_core::Tool::render), spill
//! and the session log, exactly as a call from any other front end.
//!
//! ```
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! use toolprism::provider::rig::{self, rig_agent, rig_core};
//! use toolprism::{ContentBlock, Registry};
//!
//! #[derive(Clone, serde::Deserialize, schemars::JsonSchema)]
//! struct Args { n: i64 }
//!
//! struct Double;
//!
//! /// Doubles n.
//! #[toolprism::tool]
//! impl Double {
//!     fn execute(args: Args) -> i64 { args.n * 2 }
//!     fn render(_: &Args, v: &i64) -> Vec<ContentBlock> { vec![ContentBlock::text(v.to_string())] }
//! }
//!
//! let registry = Registry::builder().tool(Double).build().unwrap();
//! let tools: rig_agent::tool::ToolSet = rig::tool_set(&registry);
//! // An agent takes them with
//! // `agent.tool_server_handle().add_tools(tools)` (rig_agent::AgentBuilder).
//!
//! let mut context = rig_core::tool::ToolContext::new();
//! let done = tools.execute("double", r#"{"n": 21}"#, &mut context).await;
//! assert_eq!(done.output().as_text(), Some("42"));
//!
//! // Bad arguments are the model's error result, never a panic.
//! let bad = tools.execute("double", r#"{"n": "two"}"#, &mut context).await;
//! assert!(bad.is_error());
//! assert_eq!(bad.error().unwrap().code(), Some("INVALID_ARGS"));
//! assert!(bad.output().as_text().unwrap().starts_with("Error [INVALID_ARGS]: "));
//! # });
//! ```
//!
//! # Which rig
//!
//! rig-core and rig-agent **0.44.0**, pinned (`=0.44.0`), default
//! features off (no HTTP client, no TLS, no `derive`). rig-core 0.45 and
//! 0.46 declare `rust-version = "1.97.1"`, and this workspace builds on
//! Rust 1.95; 0.44.0 is the newest release that builds on it. From 0.44
//! the agent runtime and its `ToolSet` are the crate rig-agent (the `rig`
//! facade crate re-exports both): depend on the same 0.44 release, or use
//! the re-exports [`rig_core`] and [`rig_agent`] here, so the types match.
//!
//! The feature costs, cold, about 64 s more CPU (user + sys) for `cargo
//! build -p toolprism-provider` (176 s against 112 s) and 41 more crates,
//! among them a second `syn` (2.x, for `async-stream` and
//! `tracing-attributes`, which rig-core needs whatever its features) and a
//! second `getrandom` (0.4, for `uuid`).
//!
//! **JSON key order.** rig-core turns on serde_json's `preserve_order`,
//! and Cargo turns it on for the whole build: every `serde_json` object
//! then keeps its keys in insertion order instead of sorted. The values
//! are the same; what changes is the order in which keys are written, for
//! instance the `required` list of an OpenAI strict definition (the
//! schema's order, not sorted) or a log line's keys.
//!
//! # Calls
//!
//! Each tool is a [`RigTool`]: a rig handler (`rig_core::serve::Serve`,
//! tool family) named and described as the registry lists it, with the
//! tool's input schema as its parameters. rig's tool handlers take the
//! arguments as the JSON text of the call, and that text is what the
//! registry reads. rig's other extension points do not keep it: a
//! `DynamicTool` callback gets a `serde_json::Value` rig parsed, and
//! `ErasedTool` is implemented only for rig's typed tools.
//!
//! What rig hands over is already rig's: rig decodes a provider's call
//! into a JSON object before any tool sees it, so a key the model wrote
//! twice has been collapsed and an integer beyond 64 bits rounded before
//! the registry reads the text; arguments that are not an object never
//! reach a tool (rig answers them itself). The registry's own rules still
//! apply to all it receives.
//!
//! **Call ids.** rig 0.44 does not pass the model's call id to a tool
//! handler, so each call gets one of its own, `rig-<n>` (unique in the
//! process); the session log records the call under it.
//!
//! **Options.** [`RigTools::with_options`] sets the [`CallOptions`] every
//! call runs with: a session log, a caller, a timeout, an argument dialect
//! (`Dialect::OpenAi` when rig sends OpenAI strict-mode calls, whose
//! optional fields arrive as `null`).
//!
//! # Results
//!
//! The model reads what the tool's `render` produced (never the value), as
//! rig tool-result content:
//!
//! | toolprism | rig |
//! |---|---|
//! | text | text |
//! | image of a type rig names (JPEG, PNG, GIF, WebP, HEIC, HEIF, SVG) | image: base64 data and media type |
//! | embedded text resource | text: its URI, a line break, its text |
//! | embedded binary resource that is such an image | image |
//! | resource link | text: `resource: <uri> (<name>, …)` |
//! | audio, any other image or binary resource | text saying what was left out |
//!
//! No result is rig JSON content: the model reads `render`'s content, as
//! from every other front end. An empty content is one empty text block
//! (rig's output needs one block).
//!
//! A failed call is rig's error result (`ToolResult::failed`): its text
//! starts `Error [CODE]: ` with toolprism's error code, the error's
//! [`code`](rig_core::tool::ToolExecutionError::code) is that code, and
//! its kind is rig's nearest ([`error_kind`]). `DENIED` and
//! `NOT_APPROVED` are refusals (`ToolResult::is_refused`): a policy or a
//! person declined the call.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use rig_agent::tool::{RegisteredTool, ToolSet};
use rig_core::effect::{EffectKind, FamilyDescriptor, HandlerDescriptor, Outcome, family};
use rig_core::error::{ErrorKind, ErrorReport};
use rig_core::message::{ImageMediaType, MimeType, ToolResultContent};
use rig_core::serve::{Dispatch, Reply, Serve};
use rig_core::tool::{ToolErrorKind, ToolExecutionError, ToolOutput, ToolResult};
use toolprism_core::{CallOptions, ContentBlock, ErrorCode, Registry, ToolCall, ToolOutcome};

/// rig's portable contracts (messages, tools, models), the version this
/// module is built on.
pub use rig_core;

/// rig's agent runtime (agents, `ToolSet`), the version this module is
/// built on.
pub use rig_agent;

/// Every tool the model is offered, as a rig [`ToolSet`], each call made
/// with no options (see [`RigTools`] for options).
pub fn tool_set(registry: &Registry) -> ToolSet {
    RigTools::new(registry.clone()).tool_set()
}

/// A registry's tools for rig, with the options every call runs with.
///
/// ```
/// use toolprism::provider::rig::RigTools;
/// use toolprism::{CallOptions, Registry};
///
/// let registry = Registry::builder().build().unwrap();
/// let tools = RigTools::new(registry).with_options(CallOptions::new().with_timeout(std::time::Duration::from_secs(30)));
/// assert!(tools.tool_set().is_empty());
/// assert!(tools.tool("missing").is_none());
/// ```
#[derive(Debug, Clone)]
pub struct RigTools {
    registry: Registry,
    options: Arc<CallOptions>,
}

impl RigTools {
    /// The tools of `registry`, each call made with no options.
    pub fn new(registry: Registry) -> Self {
        RigTools {
            registry,
            options: Arc::new(CallOptions::new()),
        }
    }

    /// Every call runs with `options` (a session log, a caller, a timeout,
    /// a dialect…).
    pub fn with_options(mut self, options: CallOptions) -> Self {
        self.options = Arc::new(options);
        self
    }

    /// The tool of that name, when the model is offered it.
    pub fn tool(&self, name: &str) -> Option<RigTool> {
        let definition = self.registry.definition(name)?;
        Some(RigTool {
            registry: self.registry.clone(),
            options: Arc::clone(&self.options),
            name: definition.name.clone(),
            description: definition.description.clone(),
            parameters: definition.input_schema.clone(),
        })
    }

    /// Every tool the model is offered, in registration order.
    pub fn tools(&self) -> Vec<RigTool> {
        self.registry
            .definitions()
            .filter_map(|definition| self.tool(&definition.name))
            .collect()
    }

    /// Every tool the model is offered, in a rig [`ToolSet`].
    pub fn tool_set(&self) -> ToolSet {
        let mut set = ToolSet::default();
        for tool in self.tools() {
            set.add_registered_tool(tool.into_registered());
        }
        set
    }
}

/// One tool of a registry as a rig tool handler (tool family, served under
/// `tool:<name>`): each call runs through the registry's pipeline.
///
/// Made by [`RigTools::tool`]; add it to a [`ToolSet`] or a rig
/// `ToolServer` with [`into_registered`](Self::into_registered).
#[derive(Debug, Clone)]
pub struct RigTool {
    registry: Registry,
    options: Arc<CallOptions>,
    name: String,
    description: String,
    parameters: serde_json::Value,
}

impl RigTool {
    /// The tool's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The tool as a rig registration (`ToolSet::add_registered_tool`,
    /// `ToolServer::registered_tool`).
    pub fn into_registered(self) -> RegisteredTool {
        // Refused only for a handler of another family or with an empty
        // name, and a registry's tool names are never empty.
        RegisteredTool::from_handler(self).expect("a tool handler with a non-empty name")
    }

    /// Runs one call: `arguments` is the call's JSON text.
    pub fn call(&self, arguments: String) -> impl Future<Output = ToolResult> + Send + '_ {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        let id = format!("rig-{}", NEXT.fetch_add(1, Ordering::Relaxed));
        let call = ToolCall::new(id, self.name.clone(), arguments);
        async move { tool_result(&self.registry.call_with(call, &self.options).await) }
    }
}

impl Serve for RigTool {
    type Family = family::Tool;

    fn descriptor(&self) -> HandlerDescriptor {
        HandlerDescriptor {
            key: rig_core::effect::tool_key(&self.name),
            family: FamilyDescriptor::Tool {
                name: self.name.clone(),
                description: self.description.clone(),
                parameters: self.parameters.clone(),
                embedding: None,
            },
            layers: Vec::new(),
        }
    }

    async fn serve(&self, kind: EffectKind, _dispatch: Dispatch) -> Reply {
        match kind {
            EffectKind::ToolCall { name, args } if name == self.name => {
                let result = self.call(args).await;
                Reply::Outcome(Ok(Outcome::ToolResult { result }))
            }
            // rig's own tool adapter answers a misrouted call the same way.
            EffectKind::ToolCall { name, .. } => Reply::Outcome(Err(ErrorReport::new(
                ErrorKind::Internal,
                format!("tool handler `{}` asked to run `{name}`", self.name),
            ))),
            other => Reply::Outcome(Err(ErrorReport::new(
                ErrorKind::HandlerUnavailable,
                format!("a tool handler cannot serve a `{}` effect", other.name()),
            ))),
        }
    }
}

/// rig's error kind for a toolprism error code: `INVALID_ARGS` →
/// `InvalidArgs`, `UNKNOWN_TOOL` → `NotFound`, `TIMEOUT` → `Timeout`,
/// `ABORTED` and `ABORTED_BEFORE_DISPATCH` → `Cancelled`, `DENIED`,
/// `NOT_APPROVED` and `BLOCKED` → `PermissionDenied`, any other code →
/// `Other`.
///
/// ```
/// use toolprism::ErrorCode;
/// use toolprism::provider::rig::{error_kind, rig_core::tool::ToolErrorKind};
/// assert_eq!(error_kind(&ErrorCode::InvalidArgs), ToolErrorKind::InvalidArgs);
/// assert_eq!(error_kind(&ErrorCode::parse("NOT_FOUND")), ToolErrorKind::Other);
/// ```
pub fn error_kind(code: &ErrorCode) -> ToolErrorKind {
    match code {
        ErrorCode::InvalidArgs => ToolErrorKind::InvalidArgs,
        ErrorCode::UnknownTool => ToolErrorKind::NotFound,
        ErrorCode::Timeout => ToolErrorKind::Timeout,
        ErrorCode::Aborted | ErrorCode::AbortedBeforeDispatch => ToolErrorKind::Cancelled,
        ErrorCode::Denied | ErrorCode::NotApproved | ErrorCode::Blocked => {
            ToolErrorKind::PermissionDenied
        }
        _ => ToolErrorKind::Other,
    }
}

/// A call's outcome as rig's tool result: see the module docs, Results.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// use toolprism::{Registry, ToolCall};
/// let registry = Registry::builder().build().unwrap();
/// let outcome = registry.call(ToolCall::new("1", "missing", "{}")).await;
/// let result = toolprism::provider::rig::tool_result(&outcome);
/// assert!(result.is_error());
/// assert_eq!(result.error().unwrap().code(), Some("UNKNOWN_TOOL"));
/// assert!(result.output().as_text().unwrap().starts_with("Error [UNKNOWN_TOOL]: "));
/// # });
/// ```
pub fn tool_result(outcome: &ToolOutcome) -> ToolResult {
    let mut content = content(outcome.content());
    let Some(error) = outcome.error() else {
        return ToolResult::success(output(content));
    };
    let code = error.code.as_str();
    match content.first_mut() {
        Some(ToolResultContent::Text(text)) => {
            let rest = text.text.strip_prefix("Error: ").unwrap_or(&text.text);
            *text = format!("Error [{code}]: {rest}").into();
        }
        _ => content.insert(0, ToolResultContent::text(format!("Error [{code}]"))),
    }
    let failure = match error.code {
        ErrorCode::Denied | ErrorCode::NotApproved => {
            ToolExecutionError::refused(error.message.clone())
        }
        _ => ToolExecutionError::new(error_kind(&error.code), error.message.clone()),
    };
    ToolResult::failed(failure.with_code(code).with_model_output(output(content)))
}

/// rig's output holds at least one block.
fn output(content: Vec<ToolResultContent>) -> ToolOutput {
    ToolOutput::content(content).unwrap_or_else(|_| ToolOutput::text(""))
}

fn size_of_base64(data: &str) -> usize {
    data.len() / 4 * 3
}

/// The image rig takes, when it names the media type.
fn image(mime: &str, data: &str) -> Option<ToolResultContent> {
    let media_type = ImageMediaType::from_mime_type(mime)?;
    Some(ToolResultContent::image_base64(
        data,
        Some(media_type),
        None,
    ))
}

/// Each block as rig content, or a line of text saying what was left out.
fn content(blocks: &[ContentBlock]) -> Vec<ToolResultContent> {
    let mut out = Vec::with_capacity(blocks.len());
    for block in blocks {
        out.push(match block {
            ContentBlock::Text { text } => ToolResultContent::text(text.clone()),
            ContentBlock::Image { mime_type, data } => image(mime_type, data).unwrap_or_else(|| {
                ToolResultContent::text(format!(
                    "[an image ({mime_type}, {} bytes) was left out: rig tool results take no {mime_type} images]",
                    size_of_base64(data)
                ))
            }),
            ContentBlock::Audio { mime_type, data } => ToolResultContent::text(format!(
                "[audio ({mime_type}, {} bytes) was left out: rig tool results take no audio]",
                size_of_base64(data)
            )),
            ContentBlock::Resource { resource } => {
                let mime = resource.mime_type.as_deref();
                match (&resource.text, &resource.blob) {
                    (Some(text), _) => ToolResultContent::text(format!("{}:\n{text}", resource.uri)),
                    (None, Some(blob)) => mime
                        .filter(|m| m.starts_with("image/"))
                        .and_then(|m| image(m, blob))
                        .unwrap_or_else(|| {
                            ToolResultContent::text(format!(
                                "[the resource {} ({}, {} bytes) was left out: rig tool results cannot carry it]",
                                resource.uri,
                                mime.unwrap_or("no media type"),
                                size_of_base64(blob)
                            ))
                        }),
                    (None, None) => {
                        ToolResultContent::text(format!("[the resource {} is empty]", resource.uri))
                    }
                }
            }
            ContentBlock::ResourceLink(link) => {
                let mut line = format!("resource: {} ({}", link.uri, link.name);
                if let Some(mime) = &link.mime_type {
                    line.push_str(&format!(", {mime}"));
                }
                if let Some(size) = link.size {
                    line.push_str(&format!(", {size} bytes"));
                }
                line.push(')');
                if let Some(description) = &link.description {
                    line.push_str(&format!(": {description}"));
                }
                ToolResultContent::text(line)
            }
            // A content kind added later: never dropped silently.
            #[allow(unreachable_patterns)]
            other => ToolResultContent::text(format!(
                "[a content block rig's writer does not know was left out: {}]",
                serde_json::to_string(other).unwrap_or_default()
            )),
        });
    }
    out
}
