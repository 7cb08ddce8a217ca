//! # toolprism-examples
//!
//! The showcase that `cargo run` at the workspace root runs: the built-in
//! tools of `toolprism-tools` (every feature on) and a few of its own, run
//! for real, each call shown as value, content, card and log event, then
//! the session log replayed and checked.
//!
//! | tool | from | value | card |
//! |---|---|---|---|
//! | `read`, `grep`, `glob`, `bash`, `edit`, `write`, `web_fetch`, `sql_query` | `toolprism-tools` | see its docs | `read`, `search`, `terminal`, `diff`, `web`, `generic` |
//! | `acme_ticket` | [`tools::third_party`] | a ticket; no presenters | `generic` |
//! | `flaky_render` | [`tools::render_panic`] | a render that panics | error, `generic` |
//!
//! [`tools::policies`] holds two post-execute policies for `sql_query`: one
//! replaces the value, the other only the content.
//!
//! The other modules are what the showcase needs: a loopback HTTP server
//! ([`http_server`]), a SQLite database builder ([`database`]), and the
//! scenarios and replay checks ([`showcase`]). Cards are drawn by
//! `toolprism::cli::terminal`, which switches on the card tag only.
//! `examples/own_tool.rs` shows a user's own tool registered next to the
//! built-in ones.
#![forbid(unsafe_code)]

pub mod database;
pub mod http_server;
pub mod model_server;
pub mod showcase;
mod text;
pub mod tools;
