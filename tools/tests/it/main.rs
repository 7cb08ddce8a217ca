//! The built-in tools from outside the crate: one test binary.
//!
//! Each file beside this one was a test binary of its own; one binary links once.

mod link;
mod outside_crate;
mod walls;
