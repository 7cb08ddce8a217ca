//! `#[tool(builtin)]`: each builtin tool submits a [`Builtin`] to
//! `inventory`, and [`Registry::builtin`](crate::Registry::builtin) collects
//! them, with no list kept by hand.

use crate::{RegistryBuilder, Tool};

/// A `#[tool(builtin)]` tool, found by [`Registry::builtin`](crate::Registry::builtin).
#[derive(Debug)]
pub struct Builtin {
    /// The tool's name.
    pub name: &'static str,
    /// Adds the tool, made with `Default`, to a builder.
    pub register: fn(RegistryBuilder) -> RegistryBuilder,
}

inventory::collect!(Builtin);

/// A `builtin` tool is made with `Default`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a builtin tool: it does not implement `Default`",
    label = "`Registry::builtin()` makes this tool with `Default::default()`",
    note = "derive or implement `Default` for `{Self}`, or drop `builtin` and register it with `Registry::builder().tool(..)`"
)]
pub trait BuiltinDefault: Sized {
    /// A fresh tool.
    fn make() -> Self;
}

#[diagnostic::do_not_recommend]
impl<T: Default> BuiltinDefault for T {
    fn make() -> Self {
        T::default()
    }
}

/// Registers a builtin tool made with `Default`.
pub fn register_builtin<T: Tool + BuiltinDefault>(builder: RegistryBuilder) -> RegistryBuilder {
    builder.tool(T::make())
}
