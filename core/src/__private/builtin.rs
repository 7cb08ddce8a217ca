//! `#[tool(builtin)]`: each builtin tool submits a `Builtin` to `inventory`
//! (its registration, defined with the registry, which collects them), and
//! the check that such a tool is `Default`.

use crate::{RegistryBuilder, Tool};

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
