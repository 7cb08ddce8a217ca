//! The tools. Each module holds one tool: its arguments, its canonical
//! value, its meta, the `execute` body and the pure projections, and tests
//! that run it against real things (temp dirs, processes, a loopback HTTP
//! server, a SQLite file).

use toolprism::card::ResultCard;
use toolprism::{ToolError, ToolResult};

pub mod bash;
mod diff;
pub mod edit;
pub mod glob;
pub mod grep;
pub mod read;
pub mod render_panic;
pub mod sql_query;
pub mod third_party;
pub mod web_fetch;
pub mod write;

pub use bash::BashTool;
pub use edit::EditTool;
pub use glob::GlobTool;
pub use grep::GrepTool;
pub use read::ReadTool;
pub use render_panic::FlakyRenderTool;
pub use sql_query::{SqlQueryTool, mask_phone_numbers_in_content, redact_phone_column};
pub use third_party::AcmeTicketTool;
pub use web_fetch::WebFetchTool;
pub use write::WriteTool;

/// The card a presenter falls back to for results it has nothing better
/// for (errors, meta it does not understand): the tool's name over the
/// content, the same card the runtime draws for a tool without presenters.
pub fn generic_result_card<M>(name: &str, result: &ToolResult<M>) -> ResultCard {
    ResultCard::generic(Some(name.to_owned()), result.content.clone())
}

/// Runs blocking work (file walks, processes, sockets, SQLite) on tokio's
/// blocking pool, so a call never stalls the runtime's workers.
pub(crate) async fn blocking<T, F>(work: F) -> Result<T, ToolError>
where
    F: FnOnce() -> Result<T, ToolError> + Send + 'static,
    T: Send + 'static,
{
    match tokio::task::spawn_blocking(work).await {
        Ok(result) => result,
        Err(e) if e.is_panic() => Err(ToolError::new(format!(
            "the tool's worker panicked: {}",
            panic_text(e.into_panic())
        ))),
        Err(e) => Err(ToolError::new(format!(
            "the tool's worker was cancelled: {e}"
        ))),
    }
}

fn panic_text(payload: Box<dyn std::any::Any + Send>) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "<non-string panic>".to_owned()
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use toolprism::{Registry, SpillBudget, Tool, ToolAnnotations, ToolKind};

    use super::*;

    #[test]
    fn builtin_tools_are_found_without_a_list() {
        let registry = Registry::builtin().build().unwrap();
        let names: Vec<&str> = registry.definitions().map(|d| d.name.as_str()).collect();
        for name in ["bash", "edit", "glob", "grep", "read", "web_fetch", "write"] {
            assert!(names.contains(&name), "{name} is not built in: {names:?}");
        }
        // Tools that need configuration, and the demo tools, are not.
        for name in ["sql_query", "acme_ticket", "flaky_render"] {
            assert!(!names.contains(&name), "{name} should not be built in");
        }
    }

    #[test]
    fn the_attribute_sets_each_tools_facts() {
        assert_eq!(ReadTool::INFO.name, "read");
        assert_eq!(ReadTool::INFO.title, Some("Read file"));
        assert!(
            ReadTool::INFO
                .description
                .starts_with("Read a text file as numbered lines")
        );
        assert_eq!(ReadTool::INFO.kind, ToolKind::Read);
        assert_eq!(ReadTool::INFO.spill, SpillBudget::Never);
        assert_eq!(
            ReadTool::INFO.annotations,
            ToolAnnotations {
                read_only: true,
                idempotent: true,
                ..ToolAnnotations::NONE
            }
        );
        assert_eq!(ReadTool::INFO.timeout, Some(Duration::from_secs(5)));
        assert_eq!(GrepTool::INFO.kind, ToolKind::Search);
        assert_eq!(GlobTool::INFO.kind, ToolKind::Search);
        assert_eq!(BashTool::INFO.kind, ToolKind::Execute);
        // The tool's own timeout outlives the longest timeout a call may ask
        // for, so a command that runs long is reported by bash itself.
        assert!(BashTool::INFO.timeout.unwrap() > Duration::from_millis(bash::MAX_TIMEOUT_MS));
        assert_eq!(
            BashTool::INFO.annotations,
            ToolAnnotations {
                destructive: true,
                open_world: true,
                ..ToolAnnotations::NONE
            }
        );
        assert_eq!(EditTool::INFO.kind, ToolKind::Edit);
        assert_eq!(WriteTool::INFO.kind, ToolKind::Edit);
        assert_eq!(WebFetchTool::INFO.kind, ToolKind::Fetch);
        assert_eq!(
            WebFetchTool::INFO.annotations,
            ToolAnnotations {
                read_only: true,
                open_world: true,
                ..ToolAnnotations::NONE
            }
        );
        assert_eq!(SqlQueryTool::INFO.kind, ToolKind::Read);
        assert_eq!(AcmeTicketTool::INFO.kind, ToolKind::Other);
        assert_eq!(FlakyRenderTool::INFO.name, "flaky_render");
        for description in [
            GrepTool::INFO.description,
            BashTool::INFO.description,
            SqlQueryTool::INFO.description,
        ] {
            assert!(!description.is_empty() && !description.contains("# "));
        }
    }

    #[test]
    fn definitions_carry_both_schemas() {
        let registry = Registry::builder()
            .tool(GrepTool::default())
            .build()
            .unwrap();
        let grep = registry.definition("grep").unwrap();
        assert_eq!(
            grep.input_schema["required"],
            serde_json::json!(["pattern"])
        );
        assert_eq!(grep.input_schema["additionalProperties"], false);
        assert!(grep.output_schema["properties"]["matches"].is_object());
    }
}
