//! A registered tool behind one object-safe trait, so a registry holds tools
//! of many types.

use std::any::TypeId;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use super::Registry;
use super::pipeline::{Call, RawArgs, draw_call_card, draw_result_card, read_arguments};
use crate::card::{CallCard, ResultCard};
use crate::dialect::Dialect;
use crate::guard::discard;
use crate::result::{ToolOutcome, ToolResult};
use crate::schema::Compiled;
use crate::tool::{Tool, ToolInfo};

pub(super) trait DynTool: Send + Sync {
    fn info(&self) -> &'static ToolInfo;
    fn compiled(&self) -> &Compiled;
    fn tool_type(&self) -> TypeId;
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
        dialect: Option<Dialect>,
        result: Option<&mut ToolResult>,
    ) -> (CallCard, Option<ResultCard>);
}

/// A tool and its schemas. The tool sits in an `Arc` so a blocking
/// `execute` can take it to tokio's blocking pool.
pub(super) struct Entry<T: Tool> {
    pub(super) tool: Arc<T>,
    pub(super) compiled: Arc<Compiled>,
}

impl<T: Tool> DynTool for Entry<T> {
    fn info(&self) -> &'static ToolInfo {
        &T::INFO
    }

    fn compiled(&self) -> &Compiled {
        &self.compiled
    }

    fn tool_type(&self) -> TypeId {
        TypeId::of::<T>()
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
        dialect: Option<Dialect>,
        result: Option<&mut ToolResult>,
    ) -> (CallCard, Option<ResultCard>) {
        let name = T::INFO.name;
        match read_arguments::<T>(&self.compiled, RawArgs::Text(arguments), dialect) {
            Ok((json, args)) => {
                let result_card = result.map(|result| {
                    draw_result_card::<T>(&args, result)
                        .unwrap_or_else(|| generic_result(name, result))
                });
                let call_card = draw_call_card::<T>(&args, json);
                discard(args);
                (call_card, result_card)
            }
            Err((raw, _)) => (
                CallCard::generic(name, Some(T::INFO.kind), Some(raw)),
                result.map(|result| generic_result(name, result)),
            ),
        }
    }
}

/// The generic result card: the tool's name over the content.
pub(super) fn generic_result(name: &str, result: &ToolResult) -> ResultCard {
    ResultCard::generic(Some(name.to_owned()), result.content.clone())
}
