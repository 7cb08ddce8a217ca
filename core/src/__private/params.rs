//! K7 and K8: a projection's parameters are the tool's own types.
//!
//! The generated `Tool` impl hands `&Self::Args`, `&Self::Value` and
//! `&ToolResult<Self::Meta>` to the user's projection through these casts;
//! each is the identity, implemented only when the parameter's type is the
//! expected one, so a projection reading another type is reported at its
//! parameter with a message naming the type it should take.

/// One parameter check: a trait implemented by `T` for `T` only. (The
/// functions the expansion calls are written out below, not generated, so
/// that rustc's "required by a bound in" note shows one plain line.)
macro_rules! param_check {
    (
        $(#[doc = $doc:literal])*
        $name:ident,
        message = $message:literal,
        label = $label:literal,
        note = $note:literal $(,)?
    ) => {
        $(#[doc = $doc])*
        #[diagnostic::on_unimplemented(message = $message, label = $label, note = $note)]
        pub trait $name<Expected: ?Sized> {
            /// The same reference.
            fn cast(input: &Expected) -> &Self;
        }

        impl<T: ?Sized> $name<T> for T {
            fn cast(input: &T) -> &T {
                input
            }
        }
    };
}

param_check! {
    /// A projection's `args` parameter: `&Args` (K7).
    ArgsParam,
    message = "`{Self}` is not this tool's arguments type `{Expected}`",
    label = "expected `{Expected}`, the type `execute` takes",
    note = "every projection takes `args: &{Expected}`, the arguments `execute` received",
}

param_check! {
    /// The `value` parameter of `render` and `presentation_meta`: `&Value` (K7).
    ValueParam,
    message = "`{Self}` is not this tool's value type `{Expected}`",
    label = "expected `{Expected}`, the type `execute` returns",
    note = "`render` and `presentation_meta` take `value: &{Expected}`, the value `execute` returned",
}

param_check! {
    /// `present_result`'s parameter: `&ToolResult<Meta>` (K8).
    ResultParam,
    message = "`{Self}` is not this tool's persisted result type `{Expected}`",
    label = "expected `{Expected}`",
    note = "`present_result` takes `result: &{Expected}`: its meta type is what `presentation_meta` returns (`NoMeta` without one)",
}

/// Passes `&Args` to a projection, checking its parameter type.
pub fn args_param<E: ?Sized, P: ?Sized + ArgsParam<E>>(args: &E) -> &P {
    P::cast(args)
}

/// Passes `&Value` to a projection, checking its parameter type.
pub fn value_param<E: ?Sized, P: ?Sized + ValueParam<E>>(value: &E) -> &P {
    P::cast(value)
}

/// Passes the persisted result to `present_result`, checking its parameter type.
pub fn result_param<E: ?Sized, P: ?Sized + ResultParam<E>>(result: &E) -> &P {
    P::cast(result)
}
