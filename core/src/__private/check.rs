//! K6: a `#[tool]` impl checks its types once, at the user's type, with
//! the checks of [`crate::bounds`].
//!
//! The impl names its types through [`Checked`]:
//!
//! ```text
//! type Args = Checked<ReadArgs, { check::args::<ReadArgs>() }>;
//! ```
//!
//! When `ReadArgs` has every bound, the check is `true` and `Checked` is
//! `ReadArgs` itself. When it misses one, the check fails to type-check:
//! that is the one error, spanned at the user's type, with the message of
//! the missing bound's trait (see `bounds`). The constant
//! then becomes an error, and rustc reports nothing more about a type that
//! holds one: not the same bound again against `Tool::Args`, nor at
//! `Registry::builder().tool(..)`, where an invalid `Tool` impl would
//! otherwise fail a second time. The tool type itself is checked the same
//! way, in the impl's where clause.

pub use crate::bounds::{
    args_type as args, meta_type as meta, tool_type as tool, value_type as value,
};

/// `T` itself; `OK` carries the result of a `check_*` call, so that a
/// failed check makes the type an error instead of `T`.
pub trait Bounded<const OK: bool> {
    /// `T`.
    type Type: ?Sized;
}

impl<T: ?Sized, const OK: bool> Bounded<OK> for T {
    type Type = T;
}

/// `T`, once `OK` (a `check_*` call) has type-checked.
pub type Checked<T, const OK: bool> = <T as Bounded<OK>>::Type;
