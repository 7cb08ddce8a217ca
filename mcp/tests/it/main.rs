//! The MCP server's and client's integration tests, one binary (OpenTelemetry's and the
//! trace's, which install a global subscriber, are binaries of their own).
//!
//! Each file beside this one was a test binary of its own; one binary links once.

#[path = "../support/import_env.rs"]
mod import_env;
#[path = "../support/mod.rs"]
mod support;

mod app_browser;
mod client_requests;
mod conformance;
mod http;
mod import;
mod inspector;
mod limits;
mod network;
mod python;
mod remote;
mod replicas;
mod tasks;
mod wire;
