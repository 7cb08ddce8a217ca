//! The pinned Python packages and npm servers the import tests run
//! (`tests/import.rs` here, `command/tests/hub.rs`), in one place so both
//! share one set-up under `target/testkit/`.

#![allow(dead_code)]

/// What the reference time server, `mcp-server-time`, adds to the pinned
/// Python `mcp` client ([`toolprism_testkit::MCP_CLIENT`]).
const TIME_SERVER: &[&str] = &[
    "mcp-server-time==2026.10.19",
    "tzdata==2026.6",
    "tzlocal==5.4.5",
];

/// The Python `mcp` client and the reference time server, every package
/// pinned.
pub(crate) fn import_python() -> Vec<&'static str> {
    toolprism_testkit::MCP_CLIENT
        .iter()
        .chain(TIME_SERVER)
        .copied()
        .collect()
}

/// The reference servers of the MCP project, pinned: both need Node 18 or
/// later (checked with `npm view … engines`: none declared; they run on the
/// machine's Node 20).
pub(crate) const NPM_SERVERS: &[&str] = &[
    "@modelcontextprotocol/server-everything@2026.8.31",
    "@modelcontextprotocol/server-filesystem@2026.8.31",
];
