//! [`RegistryBuilder`]: tools, policies and settings, checked together.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use std::time::Duration;

use super::compiled;
use super::entry::{DynTool, Entry};
use super::kernel::{Dynamic, DynamicTool};
use super::{Inner, Mode, PROGRAM_TOOL, Registry};
use crate::definition::check_name;
use crate::definition::{TaskSupport, ToolDefinition};
use crate::guard::guard;
use crate::log::SessionLog;
use crate::policy::{PostExecutePolicy, PreExecutePolicy};
use crate::schema::compile_definition;
use crate::spill::SpillStore;
use crate::tool::Tool;

/// The default content budget before spilling: 50 KiB.
pub const DEFAULT_SPILL_BUDGET: usize = 50 * 1024;

/// Why a registry could not be built: every problem found, not just the first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegistryError {
    problems: Vec<String>,
}

impl RegistryError {
    /// Each problem, one sentence each.
    pub fn problems(&self) -> &[String] {
        &self.problems
    }
}

impl fmt::Display for RegistryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the registry could not be built: ")?;
        f.write_str(&self.problems.join("; "))
    }
}

impl std::error::Error for RegistryError {}

/// What a registry holds besides its tools; the pipeline reads it.
pub(super) struct Settings {
    pub(super) pre: Vec<Box<dyn PreExecutePolicy>>,
    pub(super) post: Vec<Box<dyn PostExecutePolicy>>,
    pub(super) default_timeout: Option<Duration>,
    pub(super) log: Option<SessionLog>,
    pub(super) spill: Option<SpillStore>,
    pub(super) spill_budget: usize,
    pub(super) approval_timeout: Duration,
    /// Record arguments and results on the `execute_tool` spans.
    pub(super) trace_content: bool,
}

/// How long a call waits for a person's approval unless set: 2 minutes.
pub const DEFAULT_APPROVAL_TIMEOUT: Duration = Duration::from_secs(120);

/// Builds a [`Registry`]. Problems (a duplicate name, an arguments type
/// that is not an object, a schema that panics) are collected and reported
/// together by [`build`](Self::build).
#[must_use]
pub struct RegistryBuilder {
    tools: Vec<Box<dyn DynTool>>,
    problems: Vec<String>,
    /// The collision remedies the problems named so far, each with the
    /// name whose problem named it, so that one import colliding many
    /// times names its remedies once.
    remedies: Vec<(String, String)>,
    settings: Settings,
    mode: Mode,
    /// The program tool and what writes its description.
    program: Option<(usize, Describe)>,
}

/// Writes the program tool's description from the definitions a program
/// may call.
type Describe = Box<dyn FnOnce(&[&ToolDefinition]) -> String + Send>;

impl fmt::Debug for RegistryBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RegistryBuilder")
            .field(
                "tools",
                &self.tools.iter().map(|t| t.name()).collect::<Vec<_>>(),
            )
            .field("problems", &self.problems)
            .finish_non_exhaustive()
    }
}

impl RegistryBuilder {
    pub(super) fn new() -> Self {
        RegistryBuilder {
            tools: Vec::new(),
            problems: Vec::new(),
            remedies: Vec::new(),
            mode: Mode::Native,
            program: None,
            settings: Settings {
                pre: Vec::new(),
                post: Vec::new(),
                default_timeout: None,
                log: None,
                spill: None,
                spill_budget: DEFAULT_SPILL_BUDGET,
                approval_timeout: DEFAULT_APPROVAL_TIMEOUT,
                trace_content: false,
            },
        }
    }

    /// Registers a tool.
    pub fn tool<T: Tool>(mut self, tool: T) -> Self {
        let name = T::INFO.name;
        if name == PROGRAM_TOOL {
            self.problems.push(format!(
                "the tool name \"{PROGRAM_TOOL}\" is reserved for Code Mode's program tool (`toolprism::code`): rename `{}` with #[tool(name = \"...\")]",
                std::any::type_name::<T>()
            ));
            return self;
        }
        self.add(tool)
    }

    /// Registers the tool that runs the model's programs over this
    /// registry's tools (Code Mode's `run_code`, which `toolprism::code`
    /// registers for you): named [`PROGRAM_TOOL`], listed only in the
    /// [modes](Mode) that offer it, and never reachable from a program.
    /// Its description is written by `describe` at [`build`](Self::build)
    /// from the definitions a program may call (the typed SDK the model
    /// writes against).
    pub fn program<T: Tool>(
        mut self,
        tool: T,
        describe: impl FnOnce(&[&ToolDefinition]) -> String + Send + 'static,
    ) -> Self {
        if T::INFO.name != PROGRAM_TOOL {
            self.problems.push(format!(
                "the program tool `{}` must be named \"{PROGRAM_TOOL}\", not \"{}\"",
                std::any::type_name::<T>(),
                T::INFO.name.escape_debug()
            ));
            return self;
        }
        if self.program.is_some() {
            self.problems
                .push("a registry has one program tool; it was registered twice".to_owned());
            return self;
        }
        let at = self.tools.len();
        self = self.add(tool);
        if self.tools.len() > at {
            self.program = Some((at, Box::new(describe)));
        }
        self
    }

    /// Which tools the model is offered: [`Mode::Native`] (the default,
    /// every tool), [`Mode::Code`] (only the program tool, whose
    /// description carries the SDK) or [`Mode::Both`]. The definitions the
    /// registry lists (`tools/list` over MCP, `schema --dialect`) and the
    /// tools the model may call follow it; a program may call every tool
    /// whatever the mode.
    pub fn mode(mut self, mode: Mode) -> Self {
        self.mode = mode;
        self
    }

    fn add<T: Tool>(mut self, tool: T) -> Self {
        let name = T::INFO.name;
        if let Err(problem) = check_name(name) {
            self.problems.push(problem);
            return self;
        }
        if let Some(earlier) = self.tools.iter().find(|t| t.name() == name) {
            let origin = earlier.origin().into_owned();
            // An imported tool cannot take the attribute: its own remedies.
            let remedy = match earlier.collision_remedy() {
                Some(remedy) => self.remedy_once(name, remedy),
                None => "rename one with #[tool(name = \"...\")]".to_owned(),
            };
            self.problems.push(format!(
                "two tools are named \"{name}\" (`{}` and, registered earlier, {origin}): tool names must be unique; {remedy}",
                std::any::type_name::<T>(),
            ));
            return self;
        }
        // A type's `JsonSchema` impl is user code too.
        match guard(compiled::<T>) {
            Ok(Ok(compiled)) => self.tools.push(Box::new(Entry {
                tool: Arc::new(tool),
                compiled,
                described: None,
            })),
            Ok(Err(problem)) => self.problems.push(problem),
            Err(panic) => self.problems.push(format!(
                "tool \"{name}\": generating its JSON Schemas panicked: {panic}"
            )),
        }
        self
    }

    /// The end of a collision's problem: `remedy`, or, when an earlier
    /// problem of this build already named it, a pointer to that one.
    fn remedy_once(&mut self, name: &str, remedy: String) -> String {
        match self.remedies.iter().find(|(given, _)| *given == remedy) {
            Some((_, first)) => format!("the same remedies as for \"{first}\""),
            None => {
                self.remedies.push((remedy.clone(), name.to_owned()));
                remedy
            }
        }
    }

    /// Registers a tool whose definition is known only at run time (see
    /// [`DynamicTool`]): its name is checked like a `#[tool]`'s, its
    /// schemas compiled now (an output schema of `None` is the schema
    /// `true`, which accepts any value).
    pub fn dynamic_tool(mut self, tool: impl DynamicTool) -> Self {
        let definition = tool.definition();
        let name = definition.name.clone();
        if let Err(problem) = check_name(&name) {
            self.problems.push(match tool.origin() {
                Some(origin) => format!("{problem} ({origin})"),
                None => problem,
            });
            return self;
        }
        if name == PROGRAM_TOOL {
            self.problems.push(format!(
                "the tool name \"{PROGRAM_TOOL}\" is reserved for Code Mode's program tool; give the dynamic tool another name (an import's prefix)"
            ));
            return self;
        }
        if let Some(earlier) = self.tools.iter().find(|t| t.name() == name) {
            let origin = tool.origin();
            let mut problem = format!(
                "two tools are named \"{name}\" ({} and, registered earlier, {}): tool names must be unique",
                origin.as_deref().unwrap_or("a dynamic tool"),
                earlier.origin()
            );
            if let Some(remedy) = tool
                .collision_remedy()
                .or_else(|| earlier.collision_remedy())
            {
                problem.push_str("; ");
                problem.push_str(&self.remedy_once(&name, remedy));
            }
            self.problems.push(problem);
            return self;
        }
        let definition = ToolDefinition {
            name: name.clone(),
            title: definition.title.clone(),
            icon: None,
            description: definition.description.clone(),
            input_schema: definition.input_schema.clone(),
            output_schema: definition
                .output_schema
                .clone()
                .unwrap_or(serde_json::Value::Bool(true)),
            kind: definition.kind,
            annotations: definition.annotations,
            // A dynamic tool (an imported one) is always answered inline.
            task: TaskSupport::Forbidden,
        };
        match compile_definition(definition, "its input schema") {
            Ok(compiled) => self.tools.push(Box::new(Entry {
                tool: Arc::new(Dynamic(tool)),
                compiled: Arc::new(compiled),
                described: None,
            })),
            Err(problem) => self.problems.push(problem),
        }
        self
    }

    /// Adds a pre-execute policy; policies run in the order added and the
    /// first denial wins.
    pub fn pre_execute(mut self, policy: impl PreExecutePolicy) -> Self {
        self.settings.pre.push(Box::new(policy));
        self
    }

    /// Adds a post-execute policy; policies run in the order added, each
    /// seeing the previous one's decision applied, and a block ends the chain.
    pub fn post_execute(mut self, policy: impl PostExecutePolicy) -> Self {
        self.settings.post.push(Box::new(policy));
        self
    }

    /// The timeout of tools that set none.
    pub fn default_timeout(mut self, timeout: Duration) -> Self {
        self.settings.default_timeout = Some(timeout);
        self
    }

    /// How long a call that needs approval waits for the person's answer
    /// ([`DEFAULT_APPROVAL_TIMEOUT`] unless set); then it ends as
    /// `NOT_APPROVED`, unanswered. A call's own
    /// ([`CallOptions::with_approval_timeout`](crate::CallOptions::with_approval_timeout))
    /// wins.
    pub fn approval_timeout(mut self, timeout: Duration) -> Self {
        self.settings.approval_timeout = timeout;
        self
    }

    /// Records each call's arguments (as the model sent them) and each
    /// success's content (what the model reads, as JSON) on its
    /// `execute_tool` span, as `gen_ai.tool.call.arguments` and
    /// `gen_ai.tool.call.result`, each cut at 16 KiB ([`telemetry`](crate::telemetry)).
    /// Off by default: they may hold what a user would not want in a
    /// trace. The value is never recorded.
    ///
    /// ```
    /// let registry = toolprism::Registry::builder().trace_content(true).build().unwrap();
    /// # let _ = registry;
    /// ```
    pub fn trace_content(mut self, on: bool) -> Self {
        self.settings.trace_content = on;
        self
    }

    /// Appends every call and result to this session log.
    pub fn log(mut self, log: SessionLog) -> Self {
        self.settings.log = Some(log);
        self
    }

    /// Spills content over budget to this store (C15 in `docs/contract.md`).
    pub fn spill(mut self, store: SpillStore) -> Self {
        self.settings.spill = Some(store);
        self
    }

    /// The budget of tools that set none ([`DEFAULT_SPILL_BUDGET`] unless set).
    pub fn spill_budget(mut self, bytes: usize) -> Self {
        self.settings.spill_budget = bytes;
        self
    }

    /// The registry, or every problem found.
    pub fn build(mut self) -> Result<Registry, RegistryError> {
        if self.mode != Mode::Native && self.program.is_none() {
            self.problems.push(format!(
                "mode \"{}\" offers the model `{PROGRAM_TOOL}`, and no program tool is registered: enable Code Mode with `toolprism::code` (feature `code`)",
                self.mode
            ));
        }
        if !self.problems.is_empty() {
            return Err(RegistryError {
                problems: self.problems,
            });
        }
        let program = self.program.take().map(|(at, describe)| {
            let callable: Vec<&ToolDefinition> = self
                .tools
                .iter()
                .enumerate()
                .filter(|(i, _)| *i != at)
                .map(|(_, t)| t.definition())
                .collect();
            // The describer is the program tool's own code: a panic is a
            // registry problem, not a crash.
            (at, guard(move || describe(&callable)))
        });
        let program = match program {
            Some((at, Ok(description))) => {
                self.tools[at].describe(description);
                Some(at)
            }
            Some((_, Err(panic))) => {
                return Err(RegistryError {
                    problems: vec![format!(
                        "writing the description of \"{PROGRAM_TOOL}\" panicked: {panic}"
                    )],
                });
            }
            None => None,
        };
        // Sorted by name: a lookup is a binary search, which for the handful
        // of tools a registry holds costs less than hashing the name (SipHash).
        let mut index: Vec<(Box<str>, usize)> = self
            .tools
            .iter()
            .enumerate()
            .map(|(i, t)| (Box::<str>::from(t.name()), i))
            .collect();
        index.sort_unstable();
        let count = self.tools.len();
        Ok(Registry {
            inner: Arc::new(Inner {
                tools: self.tools,
                index,
                settings: self.settings,
                nested_ids: AtomicU64::new(0),
                offered: (0..count)
                    .filter(|&i| Inner::offered_in(self.mode, program, i))
                    .collect(),
                callable: (0..count).filter(|&i| Some(i) != program).collect(),
                dialects: Default::default(),
                mode: self.mode,
                program,
            }),
        })
    }
}
