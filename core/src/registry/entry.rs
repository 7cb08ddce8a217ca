//! A registered tool behind one object-safe trait, so a registry holds tools
//! of many types.

use std::any::TypeId;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use super::Registry;
use super::arguments::{Arguments, Input, read_arguments};
use super::kernel::Kernel;
use super::pipeline::Call;
use super::present::{self, draw_result_card, generic_result};
use crate::argument_dialect::ArgumentDialect;
use crate::card::{CallCard, ResultCard};
use crate::definition::ToolDefinition;
use crate::guard::discard;
use crate::result::{ToolOutcome, ToolResult};
use crate::schema::Compiled;

pub(super) trait DynTool: Send + Sync {
    /// The name the model calls.
    fn name(&self) -> &str;
    /// What a client lists: the compiled definition, or the program tool's
    /// with the description written at build time.
    fn definition(&self) -> &ToolDefinition;
    /// Replaces the description (the program tool's, at build time).
    fn describe(&mut self, description: String);
    fn tool_type(&self) -> TypeId;
    /// Where the tool comes from, as registry problems name it.
    fn origin(&self) -> std::borrow::Cow<'_, str>;
    /// How to end a collision with this tool's name, other than
    /// `#[tool(name = …)]` (see [`Kernel::collision_remedy`]).
    fn collision_remedy(&self) -> Option<String>;
    /// Steps 2–10 of one call (step 1 found this tool).
    fn run<'a>(
        &'a self,
        registry: &'a Registry,
        call: Call<'a>,
    ) -> Pin<Box<dyn Future<Output = ToolOutcome> + Send + 'a>>;
    /// Both cards drawn from persisted arguments and, when given, the
    /// persisted result (replay), reading the arguments once.
    fn present_raw(
        &self,
        arguments: &str,
        dialect: Option<&dyn ArgumentDialect>,
        result: Option<&mut ToolResult>,
    ) -> (CallCard, Option<ResultCard>);
}

/// A tool and its schemas. The tool sits in an `Arc` so a blocking
/// `execute` can take it to tokio's blocking pool.
pub(super) struct Entry<K: Kernel> {
    pub(super) tool: Arc<K>,
    pub(super) compiled: Arc<Compiled>,
    /// The definition with another description, for the program tool.
    pub(super) described: Option<Box<ToolDefinition>>,
}

impl<K: Kernel> DynTool for Entry<K> {
    fn name(&self) -> &str {
        self.tool.facts().name
    }

    fn definition(&self) -> &ToolDefinition {
        self.described
            .as_deref()
            .unwrap_or(&self.compiled.definition)
    }

    fn describe(&mut self, description: String) {
        let mut definition = self.compiled.definition.clone();
        definition.description = description;
        self.described = Some(Box::new(definition));
    }

    fn tool_type(&self) -> TypeId {
        TypeId::of::<K>()
    }

    fn origin(&self) -> std::borrow::Cow<'_, str> {
        self.tool.origin()
    }

    fn collision_remedy(&self) -> Option<String> {
        self.tool.collision_remedy()
    }

    fn run<'a>(
        &'a self,
        registry: &'a Registry,
        call: Call<'a>,
    ) -> Pin<Box<dyn Future<Output = ToolOutcome> + Send + 'a>> {
        Box::pin(self.pipeline(registry, call))
    }

    // Replay reads the arguments with the live call's own step 2 (JSON,
    // lossless, input schema, deserialize): arguments that deserialize but
    // break the schema got generic cards live, so they get them again.
    fn present_raw(
        &self,
        arguments: &str,
        dialect: Option<&dyn ArgumentDialect>,
        result: Option<&mut ToolResult>,
    ) -> (CallCard, Option<ResultCard>) {
        let tool = &*self.tool;
        let name = tool.facts().name;
        let read = read_arguments::<K>(
            name,
            &self.compiled,
            Arguments::Text(arguments.into()),
            dialect,
            true,
        );
        let (input, args) = match read {
            Ok((json, args)) => (json.into_json(), Some(args)),
            Err((raw, _)) => (raw, None),
        };
        let result_card = result.map(|result| {
            args.as_ref()
                .and_then(|args| draw_result_card(tool, args, result))
                .unwrap_or_else(|| generic_result(name, result))
        });
        let call_card = present::call_card(tool, args.as_ref(), Input::Json(input)).into_card(name);
        if let Some(args) = args {
            discard(args);
        }
        (call_card, result_card)
    }
}
