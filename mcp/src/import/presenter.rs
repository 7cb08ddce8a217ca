//! [`Presenter`]: cards of one's own for an imported tool.

use serde_json::Value;

use toolprism_core::{CallCard, ResultCard, ToolResult};

/// Draws an imported tool's cards, as `present_call` and `present_result`
/// draw a native tool's (C6 in `docs/contract.md`): pure functions of the
/// arguments and of the persisted result (content and `isError`; an
/// imported tool has no presentation meta), so a replay draws the same
/// cards again. `None`, a panic, or a card that cannot be built gives the
/// generic card. Attach one with [`Import::present`](super::Import::present).
///
/// A closure `Fn(&Value, &ToolResult) -> Option<ResultCard>` is a
/// presenter of result cards:
///
/// ```
/// use toolprism::card::ResultCard;
/// use toolprism::mcp::import::Import;
/// use toolprism::{content_text, ToolResult};
///
/// let import = Import::stdio("mcp-server-time", ["--local-timezone", "UTC"]).present(
///     "get_current_time",
///     |_args: &serde_json::Value, result: &ToolResult| {
///         let text = content_text(&result.content);
///         Some(ResultCard::generic(Some("The time".into()), result.content.clone()))
///             .filter(|_| !text.is_empty())
///     },
/// );
/// # let _ = import;
/// ```
pub trait Presenter: Send + Sync + 'static {
    /// The call card, from the arguments; `None` gives the generic card.
    fn present_call(&self, _arguments: &Value) -> Option<CallCard> {
        None
    }

    /// The result card, from the arguments and the persisted result;
    /// `None` gives the generic card.
    fn present_result(&self, _arguments: &Value, _result: &ToolResult) -> Option<ResultCard> {
        None
    }
}

impl<F> Presenter for F
where
    F: Fn(&Value, &ToolResult) -> Option<ResultCard> + Send + Sync + 'static,
{
    fn present_result(&self, arguments: &Value, result: &ToolResult) -> Option<ResultCard> {
        self(arguments, result)
    }
}
