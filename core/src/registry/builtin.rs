//! The tools `#[tool(builtin)]` registers: each submits a [`Builtin`] to
//! `inventory`, and [`Registry::builtin`](super::Registry::builtin)
//! collects them, with no list kept by hand.

use super::RegistryBuilder;

/// A `#[tool(builtin)]` tool, found by [`Registry::builtin`](crate::Registry::builtin).
#[derive(Debug)]
pub struct Builtin {
    /// The tool's name.
    pub name: &'static str,
    /// Adds the tool, made with `Default`, to a builder.
    pub register: fn(RegistryBuilder) -> RegistryBuilder,
}

inventory::collect!(Builtin);
