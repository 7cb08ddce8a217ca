//! [`Cards`]: which `tools/call` results carry the call and result cards,
//! and how a client asks for them.

use rmcp::RoleServer;
use rmcp::service::RequestContext;
use serde_json::Value;

/// The name a client asks for cards by: an experimental client capability
/// in `initialize` (for the whole session), or a `_meta` key of one
/// `tools/call` request (`true` or `false`, for that call).
pub(crate) const CARDS_KEY: &str = "toolprism/cards";

/// The `_meta` key of a `2026-07-28` request that carries the client's
/// capabilities (that version has no `initialize`).
const CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";

/// Which `tools/call` results carry the call and result cards
/// (`_meta["toolprism/callCard"]`, `_meta["toolprism/resultCard"]`); see
/// [`McpServer::with_cards`](super::McpServer::with_cards).
///
/// Cards are for card-aware user interfaces, which draw them next to the
/// conversation. Most MCP clients (Claude Code, Claude Desktop, Cursor, the
/// MCP Inspector) show only `content` and never read them, yet pay for
/// them: a client parses the whole `_meta` of every response, and rmcp's
/// Rust client parses it once for each result type it tries before
/// `CallToolResult`, which slows a small call's stdio round trip markedly
/// (`benches/benches/mcp_stdio.rs`; figures in `benches/RESULTS.md`).
/// Hence the default,
/// [`OnRequest`](Cards::OnRequest): the cards go to the clients that ask.
///
/// The presentation meta (`_meta["toolprism/meta"]`, small) and the error
/// code (`_meta["toolprism/errorCode"]`) are on every result whatever the
/// choice, and the session log never holds cards (a replay draws them
/// again from the meta).
///
/// A client asks
///
/// - for its whole session, by declaring the experimental capability
///   `"toolprism/cards"` (any object, `{}` will do) in `initialize`:
///   `"capabilities": {"experimental": {"toolprism/cards": {}}}`; a
///   `2026-07-28` client, which has no `initialize`, declares it the same
///   way in the capabilities it sends with every request
///   (`_meta["io.modelcontextprotocol/clientCapabilities"]`);
/// - for one call, with `"_meta": {"toolprism/cards": true}` on the
///   `tools/call` request; this works everywhere, stateless HTTP included
///   (where a legacy client's `initialize` is forgotten once answered).
///   `"toolprism/cards": false` turns them off for that call in a session
///   that declared the capability.
///
/// The server announces that it can send them with the same experimental
/// capability in its own `initialize` answer, unless [`Never`](Cards::Never).
///
/// ```no_run
/// # use toolprism::{ContentBlock, NoMeta, Tool, ToolContext, ToolError, ToolInfo};
/// # #[derive(Clone, serde::Deserialize, schemars::JsonSchema)] struct A { n: i64 }
/// # struct Double;
/// # impl Tool for Double {
/// #     type Args = A; type Value = i64; type Meta = NoMeta;
/// #     const INFO: ToolInfo = ToolInfo::new("double", "Double n.");
/// #     async fn execute(&self, a: A, _: &ToolContext<'_>) -> Result<i64, ToolError> { Ok(a.n * 2) }
/// #     fn render(_: &A, v: &i64) -> Vec<ContentBlock> { vec![ContentBlock::text(v.to_string())] }
/// # }
/// use toolprism::mcp::{Cards, McpServer};
///
/// #[tokio::main(flavor = "current_thread")]
/// async fn main() -> std::io::Result<()> {
///     let registry = toolprism::Registry::builder().tool(Double).build().unwrap();
///     // A server whose only client is a card-aware UI of your own:
///     // send the cards without being asked.
///     McpServer::new(registry)
///         .with_cards(Cards::Always)
///         .serve_stdio()
///         .await
/// }
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Cards {
    /// To the clients that ask (the default): a session that declared the
    /// `"toolprism/cards"` capability, or a call whose `_meta` says
    /// `"toolprism/cards": true`.
    #[default]
    OnRequest,
    /// On every result, asked for or not (except a call whose `_meta` says
    /// `"toolprism/cards": false`).
    Always,
    /// Never, even when asked; the server does not announce the capability.
    Never,
}

impl Cards {
    /// Whether the result of the call in `context` carries the cards.
    pub(super) fn wanted(self, context: &RequestContext<RoleServer>) -> bool {
        if self == Cards::Never {
            return false;
        }
        // The call's own word wins.
        if let Some(Value::Bool(asked)) = context.meta.get(CARDS_KEY) {
            return *asked;
        }
        self == Cards::Always || session_asked(context)
    }
}

/// Whether the client declared the `"toolprism/cards"` capability: in this
/// request's capabilities (`2026-07-28`), else in its `initialize`.
fn session_asked(context: &RequestContext<RoleServer>) -> bool {
    if let Some(capabilities) = context.meta.get(CLIENT_CAPABILITIES) {
        return capabilities
            .get("experimental")
            .and_then(|experimental| experimental.get(CARDS_KEY))
            .is_some_and(Value::is_object);
    }
    context.peer.peer_info().is_some_and(|info| {
        info.capabilities
            .experimental
            .as_ref()
            .is_some_and(|experimental| experimental.contains_key(CARDS_KEY))
    })
}
