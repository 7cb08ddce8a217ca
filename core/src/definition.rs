//! What describes a tool, independent of its code: the static facts
//! ([`ToolInfo`]) `#[tool]` writes from its attribute and doc comment, the
//! hints ([`ToolAnnotations`]), and the definition a client lists
//! ([`ToolDefinition`]), from which every provider dialect is projected.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::card::ToolKind;

/// Hints a client may show or act on. They are hints: nothing enforces them.
///
/// Start from [`ToolAnnotations::NONE`] and set hints with the `with_…`
/// methods (usable in a `const`): MCP may add hints, and the struct will
/// gain them without breaking anyone.
///
/// ```
/// use toolprism::ToolAnnotations;
/// const HINTS: ToolAnnotations = ToolAnnotations::NONE.with_read_only(true).with_idempotent(true);
/// assert_eq!(
///     serde_json::to_value(HINTS).unwrap(),
///     serde_json::json!({"readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false})
/// );
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
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

    /// The same hints, saying whether the tool leaves its environment
    /// unchanged.
    pub const fn with_read_only(mut self, read_only: bool) -> Self {
        self.read_only = read_only;
        self
    }

    /// The same hints, saying whether the tool may destroy data.
    pub const fn with_destructive(mut self, destructive: bool) -> Self {
        self.destructive = destructive;
        self
    }

    /// The same hints, saying whether a second identical call has no
    /// further effect.
    pub const fn with_idempotent(mut self, idempotent: bool) -> Self {
        self.idempotent = idempotent;
        self
    }

    /// The same hints, saying whether the tool reaches an open world.
    pub const fn with_open_world(mut self, open_world: bool) -> Self {
        self.open_world = open_world;
        self
    }
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
/// const INFO: ToolInfo =
///     ToolInfo::new("build", "Build the project; takes minutes.").with_task(TaskSupport::Optional);
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
/// `#[tool]` writes this from its attribute and the doc comment. A `Tool`
/// written by hand builds it with [`ToolInfo::new`] and the `with_…`
/// methods, all `const fn`s (the struct is `#[non_exhaustive]`: a fact
/// added later breaks no one):
///
/// ```
/// use std::time::Duration;
/// use toolprism::{SpillBudget, ToolAnnotations, ToolInfo, ToolKind};
/// const INFO: ToolInfo = ToolInfo::new("grep", "Search files for a pattern.")
///     .with_title("Search")
///     .with_kind(ToolKind::Search)
///     .with_annotations(ToolAnnotations::NONE.with_read_only(true))
///     .with_timeout(Duration::from_secs(30))
///     .with_spill(SpillBudget::Bytes(64 * 1024))
///     .with_blocking(true);
/// assert_eq!((INFO.title, INFO.kind, INFO.blocking), (Some("Search"), ToolKind::Search, true));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
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

    /// The same facts with a human title.
    pub const fn with_title(mut self, title: &'static str) -> Self {
        self.title = Some(title);
        self
    }

    /// The same facts with an icon: a `data:` URI or an `https:` URL.
    pub const fn with_icon(mut self, icon: &'static str) -> Self {
        self.icon = Some(icon);
        self
    }

    /// The same facts with the kind of work the tool does.
    pub const fn with_kind(mut self, kind: ToolKind) -> Self {
        self.kind = kind;
        self
    }

    /// The same facts with these hints for clients.
    pub const fn with_annotations(mut self, annotations: ToolAnnotations) -> Self {
        self.annotations = annotations;
        self
    }

    /// The same facts with the tool's own timeout.
    pub const fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// The same facts with this content budget.
    pub const fn with_spill(mut self, spill: SpillBudget) -> Self {
        self.spill = spill;
        self
    }

    /// The same facts, saying whether `execute` blocks its thread (see
    /// [`ToolInfo::blocking`]).
    pub const fn with_blocking(mut self, blocking: bool) -> Self {
        self.blocking = blocking;
        self
    }

    /// The same facts with a question every call asks a person first (see
    /// [`ToolInfo::approval`]).
    pub const fn with_approval(mut self, question: &'static str) -> Self {
        self.approval = Some(question);
        self
    }

    /// The same facts, saying whether an MCP call may run as a task.
    pub const fn with_task(mut self, task: TaskSupport) -> Self {
        self.task = task;
        self
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
///
/// The registry makes one per tool
/// ([`Registry::definitions`](crate::Registry::definitions)); to project a
/// definition from elsewhere into a provider's dialect (`toolprism::dialect`,
/// feature `provider`), build it with [`ToolDefinition::new`] and the
/// `with_…` methods (it is `#[non_exhaustive]`, as it gains what MCP lists
/// of a tool).
///
/// ```
/// use toolprism::{ToolDefinition, ToolKind};
/// let def = ToolDefinition::new(
///     "read",
///     "Read a file.",
///     serde_json::json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
///     serde_json::json!({"type": "string"}),
/// )
/// .with_kind(ToolKind::Read);
/// assert_eq!(serde_json::to_value(&def).unwrap()["name"], "read");
/// assert_eq!(def.kind, ToolKind::Read);
/// ```
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
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

impl ToolDefinition {
    /// The definition of `name`, described by `description`, with these
    /// input and output schemas; no title, no icon, kind
    /// [`ToolKind::Other`], no hints, never a task.
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        input_schema: serde_json::Value,
        output_schema: serde_json::Value,
    ) -> Self {
        ToolDefinition {
            name: name.into(),
            title: None,
            icon: None,
            description: description.into(),
            input_schema,
            output_schema,
            kind: ToolKind::Other,
            annotations: ToolAnnotations::NONE,
            task: TaskSupport::Forbidden,
        }
    }

    /// The same definition with a human title.
    pub fn with_title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// The same definition with an icon (a `data:` URI or an `https:` URL).
    pub fn with_icon(mut self, icon: impl Into<String>) -> Self {
        self.icon = Some(icon.into());
        self
    }

    /// The same definition with the kind of work the tool does.
    pub fn with_kind(mut self, kind: ToolKind) -> Self {
        self.kind = kind;
        self
    }

    /// The same definition with these hints.
    pub fn with_annotations(mut self, annotations: ToolAnnotations) -> Self {
        self.annotations = annotations;
        self
    }

    /// The same definition, saying whether an MCP call may run as a task.
    pub fn with_task(mut self, task: TaskSupport) -> Self {
        self.task = task;
        self
    }
}
