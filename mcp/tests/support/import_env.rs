//! The pinned Python packages and npm servers the import tests run
//! (`tests/import.rs` here, `command/tests/hub.rs`), in one place so both
//! share one set-up under `target/testkit/`.

#![allow(dead_code)]

/// The Python `mcp` client of `support/mod.rs` (every package pinned) and
/// the reference time server, `mcp-server-time`, with what it adds.
pub(crate) const IMPORT_PYTHON: &[&str] = &[
    "mcp==2.3.0",
    "mcp-types==2.3.0",
    "annotated-types==0.8.0",
    "anyio==4.16.0",
    "attrs==26.1.0",
    "cffi==2.1.1",
    "click==8.5.1",
    "cryptography==50.0.2",
    "h11==0.16.0",
    "httpcore2==2.16.2",
    "httpx2==2.16.2",
    "idna==3.20",
    "jsonschema==4.26.0",
    "jsonschema-specifications==2025.9.1",
    "opentelemetry-api==1.45.2",
    "pycparser==3.12",
    "pydantic==2.14.4",
    "pydantic_core==2.50.5",
    "PyJWT==2.15.1",
    "python-multipart==0.0.34",
    "referencing==0.37.0",
    "rpds-py==2026.9.1",
    "sse-starlette==3.7.0",
    "starlette==1.10.0",
    "truststore==0.10.5",
    "typing-inspection==0.4.5",
    "typing_extensions==4.16.0",
    "uvicorn==0.54.0",
    "mcp-server-time==2026.10.19",
    "tzdata==2026.6",
    "tzlocal==5.4.5",
];

/// The reference servers of the MCP project, pinned: both need Node 18 or
/// later (checked with `npm view … engines`: none declared; they run on the
/// machine's Node 20).
pub(crate) const NPM_SERVERS: &[&str] = &[
    "@modelcontextprotocol/server-everything@2026.8.31",
    "@modelcontextprotocol/server-filesystem@2026.8.31",
];
