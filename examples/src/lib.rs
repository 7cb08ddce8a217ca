//! # toolprism-examples
//!
//! Real built-in tools written with `toolprism`, and the showcase that
//! `cargo run` at the workspace root runs.
//!
//! | tool | module | value | card |
//! |---|---|---|---|
//! | `read` | [`tools::read`] | a window of numbered lines | `read` |
//! | `grep` | [`tools::grep`] | every match up to a cap | `search` (matches) |
//! | `glob` | [`tools::glob`] | every path up to a cap | `search` (paths) |
//! | `bash` | [`tools::bash`] | exit code or signal, captured streams | `terminal` |
//! | `edit` | [`tools::edit`] | the file before and after | `diff` |
//! | `write` | [`tools::write`] | the file before (if any) and after | `diff` |
//! | `web_fetch` | [`tools::web_fetch`] | status and capped body | `web` (fetch) |
//! | `sql_query` | [`tools::sql_query`] | columns, the first rows, the total | `generic` |
//! | `acme_ticket` | [`tools::third_party`] | a ticket; no presenters | `generic` |
//! | `flaky_render` | [`tools::render_panic`] | a render that panics | error, `generic` |
//!
//! The file tools, `bash` and `sql_query` hold their resource (a
//! [`Workspace`](workspace::Workspace) root, a database path) in `self`;
//! projections never see it, because they never get `self`.
//!
//! The other modules are what the showcase needs: a loopback HTTP server
//! ([`http_server`]), a SQLite database builder ([`database`]), a terminal
//! card renderer that switches on the card tag only ([`terminal`]), and the
//! scenarios and replay checks ([`showcase`]). [`serve`] serves the built-in
//! tools over MCP (`cargo run -- serve`).

pub mod database;
pub mod http_server;
pub mod serve;
pub mod showcase;
pub mod terminal;
pub mod text;
pub mod tools;
pub mod workspace;
