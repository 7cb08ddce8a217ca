//! What a server serves right now, and to whom: the registry with its two
//! `tools/list` shapes, replaced whole when the registry is
//! ([`McpServer::replace_registry`]: a hub whose imported server changed
//! its tools), and the live sessions, told when it is and sent the log
//! messages no call carries ([`McpServer::broadcast_log`]).

#![allow(deprecated)] // Logging: deprecated by SEP-2577, still in the protocol.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, PoisonError, RwLock};

use rmcp::RoleServer;
use rmcp::model::{LoggingMessageNotificationParam, Tool as McpTool};
use rmcp::service::Peer;
use serde_json::Value;

use toolprism_core::Registry;
use toolprism_core::client::LogLevel;
use toolprism_provider::dialect::mcp as dialect;

use crate::McpServer;
use crate::client::{Threshold, encode, to_mcp};

/// The registry and its `tools/list` entries, for clients before
/// `2026-07-28` (object-root output schemas) and from it on.
pub(crate) struct Served {
    pub(crate) registry: Registry,
    pub(crate) legacy: Arc<[McpTool]>,
    pub(crate) modern: Arc<[McpTool]>,
}

impl Served {
    pub(crate) fn new(registry: Registry, legacy: &str, modern: &str) -> Served {
        let listing = |version: &str| -> Arc<[McpTool]> {
            registry
                .definitions()
                .map(|def| {
                    serde_json::from_value(dialect::tool(def, version)).unwrap_or_else(|e| {
                        // The dialect builds every entry from a definition
                        // the registry accepted; a shape rmcp refuses is a
                        // bug in this crate, not in the user's tool.
                        panic!("the MCP entry of tool \"{}\" is malformed: {e}", def.name)
                    })
                })
                .collect()
        };
        Served {
            legacy: listing(legacy),
            modern: listing(modern),
            registry,
        }
    }
}

/// What every clone of a server serves: replaced whole, read as one.
pub(crate) struct Current(RwLock<Arc<Served>>);

impl Current {
    pub(crate) fn new(served: Served) -> Current {
        Current(RwLock::new(Arc::new(served)))
    }

    /// What is served now; a call keeps the one it started with.
    pub(crate) fn get(&self) -> Arc<Served> {
        self.0
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    fn set(&self, served: Served) {
        *self.0.write().unwrap_or_else(PoisonError::into_inner) = Arc::new(served);
    }
}

/// The sessions that said `notifications/initialized`: their peer and
/// their `logging/setLevel`. Closed ones are dropped as they are met.
#[derive(Default)]
pub(crate) struct Sessions(Mutex<Vec<(Peer<RoleServer>, Arc<Threshold>)>>);

impl Sessions {
    pub(crate) fn add(&self, peer: Peer<RoleServer>, level: Arc<Threshold>) {
        let mut sessions = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        sessions.retain(|(peer, _)| !peer.is_transport_closed());
        sessions.push((peer, level));
    }

    fn live(&self) -> Vec<(Peer<RoleServer>, Arc<Threshold>)> {
        let mut sessions = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        sessions.retain(|(peer, _)| !peer.is_transport_closed());
        sessions.clone()
    }
}

impl McpServer {
    /// Serves `registry` from now on, in every session of this server and
    /// its clones: `tools/list` lists its tools, new calls run in it (a
    /// call already running ends in the registry it started in), and every
    /// live session is sent `notifications/tools/list_changed` (the server
    /// declares `tools.listChanged`). A hub calls it when an imported
    /// server's tools change; see `toolprism_mcp::import`. Stateless
    /// clients (`2026-07-28`) have no session to tell, and list the tools
    /// again on their own. The server's capabilities stay those of the
    /// first registry.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// use toolprism::mcp::McpServer;
    /// let server = McpServer::new(toolprism::Registry::builder().build().unwrap());
    /// let serving = server.clone(); // what serve_http or serve_stdio would consume
    /// server.replace_registry(toolprism::Registry::builder().build().unwrap()).await;
    /// assert_eq!(serving.registry().definitions().len(), 0);
    /// # });
    /// ```
    pub async fn replace_registry(&self, registry: Registry) {
        let (legacy, modern) = crate::handler::listing_versions();
        self.shared_current()
            .set(Served::new(registry, legacy, modern));
        for (peer, _) in self.sessions().live() {
            // A session that closed meanwhile misses it: nothing to tell.
            let _ = peer.notify_tool_list_changed().await;
        }
    }

    /// Sends a log message that belongs to no call (an imported server's
    /// own, forwarded by a hub) to every live session whose
    /// `logging/setLevel` lets it through; a session that set no level
    /// gets none, as for a tool's own messages.
    pub async fn broadcast_log(&self, level: LogLevel, logger: Option<&str>, data: Value) {
        let wanted = encode(Some(to_mcp(level)));
        for (peer, threshold) in self.sessions().live() {
            let set = threshold.load(Ordering::Relaxed);
            if set == 0 || wanted < set {
                continue;
            }
            let mut message = LoggingMessageNotificationParam::new(to_mcp(level), data.clone());
            message.logger = logger.map(str::to_owned);
            let _ = peer.notify_logging_message(message).await;
        }
    }
}
