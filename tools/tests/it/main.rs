//! The built-in tools from outside the crate: one test binary (the symlink
//! race, `tests/walls.rs`, is a binary of its own: beside the crates
//! `outside_crate` builds, its swapping thread is starved).
//!
//! Each file beside this one was a test binary of its own; one binary links once.

mod link;
mod outside_crate;
