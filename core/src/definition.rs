//! What describes a tool, independent of its code: the static facts
//! ([`ToolInfo`]) `#[tool]` writes from its attribute and doc comment, the
//! hints ([`ToolAnnotations`]), and the definition a client lists
//! ([`ToolDefinition`]), from which every provider dialect is projected.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::card::ToolKind;

/// Hints a client may show or act on. They are hints: nothing enforces them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolAnnotations {
    /// The tool does not change its environment.
    #[serde(rename = "readOnlyHint")]
    pub read_only: bool,
    /// The tool may destroy data.
    #[serde(rename = "destructiveHint")]
    pub destructive: bool,
    /// Calling it twice with the same arguments has no further effect.
    #[serde(rename = "idempotentHint")]
    pub idempotent: bool,
    /// The tool reaches an open world (the web, other systems).
    #[serde(rename = "openWorldHint")]
    pub open_world: bool,
}

impl ToolAnnotations {
    /// No hints set.
    pub const NONE: ToolAnnotations = ToolAnnotations {
        read_only: false,
        destructive: false,
        idempotent: false,
        open_world: false,
    };
}

/// How a tool's content is spilled when it is too large (C15 in `docs/contract.md`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SpillBudget {
    /// Use the registry's default budget.
    #[default]
    Default,
    /// Spill content whose text is over this many bytes.
    Bytes(usize),
    /// Never spill (e.g. `read`, to avoid read → spill → read loops).
    Never,
}

/// Whether a call of the tool may run as an MCP task (the tasks extension,
/// `io.modelcontextprotocol/tasks`): answered at once with a task handle
/// the client polls, the call running on in the background
/// (`#[tool(task = "optional")]` or `"required"`). Outside MCP it changes
/// nothing: a registry call runs the same whatever it says.
///
/// ```
/// use toolprism::{TaskSupport, ToolInfo};
/// const INFO: ToolInfo = ToolInfo {
///     task: TaskSupport::Optional,
///     ..ToolInfo::new("build", "Build the project; takes minutes.")
/// };
/// assert_eq!(INFO.task.as_str(), "optional");
/// assert_eq!(ToolInfo::new("echo", "Echo.").task, TaskSupport::Forbidden);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TaskSupport {
    /// Never a task: every call is answered inline (the default).
    #[default]
    Forbidden,
    /// A task for a client that declared the tasks extension; inline for
    /// every other client.
    Optional,
    /// Only as a task: a client that did not declare the tasks extension
    /// gets a protocol error (`-32021`, missing required client
    /// capability) instead of a call that would outlast its request.
    Required,
}

impl TaskSupport {
    /// `"forbidden"`, `"optional"` or `"required"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            TaskSupport::Forbidden => "forbidden",
            TaskSupport::Optional => "optional",
            TaskSupport::Required => "required",
        }
    }

    /// Whether calls never run as tasks.
    pub const fn is_forbidden(&self) -> bool {
        matches!(self, TaskSupport::Forbidden)
    }
}

/// The static facts of a tool, known at compile time.
///
/// `#[tool]` writes this from its attribute and the doc comment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ToolInfo {
    /// The name the model calls, `[A-Za-z0-9_-]{1,64}`.
    pub name: &'static str,
    /// A human title.
    pub title: Option<&'static str>,
    /// An icon a client may show next to the tool: a `data:` URI (an
    /// image inline) or an `https:` URL (`#[tool(icon = "…")]`; MCP's
    /// `icons`, since protocol 2025-11-25).
    pub icon: Option<&'static str>,
    /// What the model reads about the tool.
    pub description: &'static str,
    /// The kind of work it does.
    pub kind: ToolKind,
    /// Hints for clients.
    pub annotations: ToolAnnotations,
    /// Its own timeout; `None` uses the registry's default.
    pub timeout: Option<Duration>,
    /// Its content budget.
    pub spill: SpillBudget,
    /// `execute` blocks its thread (synchronous I/O, `std::thread::sleep`, a
    /// synchronous database call): the registry runs
    /// [`Tool::execute_blocking`](crate::Tool::execute_blocking) on tokio's blocking pool instead of
    /// polling [`Tool::execute`](crate::Tool::execute), so a timeout or a cancellation ends the
    /// call on time (the late result is dropped). `#[tool(blocking)]` sets it.
    pub blocking: bool,
    /// A question every call asks a person before `execute` runs
    /// (`#[tool(approval = "…")]`); see [`Tool::approval`](crate::Tool::approval).
    pub approval: Option<&'static str>,
    /// Whether an MCP client may get a call of it as a task
    /// (`#[tool(task = "optional")]`); see [`TaskSupport`].
    pub task: TaskSupport,
}

impl ToolInfo {
    /// Facts with only a name and description; everything else default.
    ///
    /// ```
    /// use toolprism::ToolInfo;
    /// const INFO: ToolInfo = ToolInfo::new("echo", "Echo the text back.");
    /// assert_eq!(INFO.name, "echo");
    /// ```
    pub const fn new(name: &'static str, description: &'static str) -> Self {
        ToolInfo {
            name,
            title: None,
            icon: None,
            description,
            kind: ToolKind::Other,
            annotations: ToolAnnotations::NONE,
            timeout: None,
            spill: SpillBudget::Default,
            blocking: false,
            approval: None,
            task: TaskSupport::Forbidden,
        }
    }
}

/// Checks a tool name: `[A-Za-z0-9_-]{1,64}`.
pub(crate) fn check_name(name: &str) -> Result<(), String> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if ok {
        Ok(())
    } else {
        Err(format!(
            "the tool name \"{}\" is not allowed: use 1 to 64 characters from A-Z, a-z, 0-9, `_` and `-`",
            name.escape_debug()
        ))
    }
}

/// What a client lists: name, title, description, input and output schema,
/// kind and hints.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolDefinition {
    /// The name.
    pub name: String,
    /// A human title.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// An icon: a `data:` URI or an `https:` URL ([`ToolInfo::icon`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub icon: Option<String>,
    /// The description.
    pub description: String,
    /// JSON Schema of the arguments (deserialize contract).
    pub input_schema: serde_json::Value,
    /// JSON Schema of the value (serialize contract); the schema `true`
    /// for a [dynamic tool](crate::DynamicTool) that declares none.
    pub output_schema: serde_json::Value,
    /// The kind.
    pub kind: ToolKind,
    /// The hints.
    pub annotations: ToolAnnotations,
    /// Whether an MCP call may run as a task ([`ToolInfo::task`]); left
    /// out of the JSON when [`TaskSupport::Forbidden`].
    #[serde(
        rename = "taskSupport",
        skip_serializing_if = "TaskSupport::is_forbidden"
    )]
    pub task: TaskSupport,
}
