//! The bounds a tool's types must meet (K6 in `docs/contract.md`), one
//! trait per bound, each implemented for every type that meets it, and one
//! check per role that requires them all.
//!
//! You never implement or name these: `#[tool]` checks your arguments,
//! value and meta types against them once, at your type, so a missing
//! derive is one error that says which derive to add. They are public so
//! that the compiler's note ("required by a bound in
//! `value_type`", with this file's path) points at documented code.
//!
//! | role | needs |
//! |---|---|
//! | arguments | `serde::Deserialize`, `schemars::JsonSchema` (schemars 1), `Clone`, `Send + Sync + 'static` |
//! | value | `serde::Serialize`, `serde::Deserialize`, `schemars::JsonSchema` (schemars 1), `Send + Sync + 'static` |
//! | meta | `serde::Serialize`, `serde::Deserialize`, `Send + Sync + 'static` |
//! | the tool | `Send + Sync + 'static` |

/// One bound trait: its name, the bound its blanket impl requires, and its
/// diagnostic (one or more notes).
macro_rules! bound_trait {
    (
        $(#[doc = $doc:literal])*
        $name:ident: [$($bound:tt)+],
        message = $message:literal,
        label = $label:literal,
        $(note = $note:literal),+ $(,)?
    ) => {
        $(#[doc = $doc])*
        #[diagnostic::on_unimplemented(message = $message, label = $label, $(note = $note),+)]
        pub trait $name {}

        #[diagnostic::do_not_recommend]
        impl<T: $($bound)+> $name for T {}
    };
}

bound_trait! {
    /// The arguments deserialize from the model's JSON.
    ArgsDeserialize: [::serde::de::DeserializeOwned],
    message = "`{Self}` cannot be a tool's arguments: it does not implement `serde::Deserialize`",
    label = "the arguments type of this tool",
    note = "derive it: `#[derive(serde::Deserialize, schemars::JsonSchema, Clone)]` on `{Self}`; the registry deserializes the model's JSON into it",
}

bound_trait! {
    /// The arguments have a JSON Schema: the input schema.
    ArgsJsonSchema: [::schemars::JsonSchema],
    message = "`{Self}` cannot be a tool's arguments: it does not implement `schemars::JsonSchema` (schemars 1)",
    label = "the arguments type of this tool",
    note = "derive it with schemars 1 (`schemars = \"1\"`; schemars 0.8's `JsonSchema` is another trait): `#[derive(serde::Deserialize, schemars::JsonSchema, Clone)]` on `{Self}`; the model is shown its JSON Schema",
}

bound_trait! {
    /// The arguments are `Clone`: `execute` takes them by value while the
    /// projections read them after.
    ArgsClone: [::core::clone::Clone],
    message = "`{Self}` cannot be a tool's arguments: it does not implement `Clone`",
    label = "the arguments type of this tool",
    note = "derive it: `#[derive(serde::Deserialize, schemars::JsonSchema, Clone)]` on `{Self}`; `execute` takes the arguments by value while the projections read them after",
}

bound_trait! {
    /// The arguments cross threads.
    ArgsThreadSafe: [::core::marker::Send + ::core::marker::Sync + 'static],
    message = "`{Self}` cannot be a tool's arguments: it is not `Send + Sync + 'static`",
    label = "the arguments type of this tool",
    note = "the registry runs calls on many threads: own the data (no borrowed references) and avoid `Rc` and `RefCell`",
}

bound_trait! {
    /// The value serializes: its JSON is what programs get and what the
    /// output schema checks.
    ValueSerialize: [::serde::Serialize],
    message = "`{Self}` cannot be a tool's value: it does not implement `serde::Serialize`",
    label = "the value type of this tool",
    note = "derive it: `#[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema)]` on `{Self}`; the value's JSON is what programs get and what the output schema checks",
}

bound_trait! {
    /// The value deserializes (replacement values, typed nested calls).
    ValueDeserialize: [::serde::de::DeserializeOwned],
    message = "`{Self}` cannot be a tool's value: it does not implement `serde::Deserialize`",
    label = "the value type of this tool",
    note = "derive it: `#[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema)]` on `{Self}`; a policy's replacement value is deserialized into it",
}

bound_trait! {
    /// The value has a JSON Schema: the output schema.
    ValueJsonSchema: [::schemars::JsonSchema],
    message = "`{Self}` cannot be a tool's value: it does not implement `schemars::JsonSchema` (schemars 1)",
    label = "the value type of this tool",
    note = "derive it with schemars 1 (`schemars = \"1\"`; schemars 0.8's `JsonSchema` is another trait): `#[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema)]` on `{Self}`; every value is validated against its output schema",
}

bound_trait! {
    /// The value crosses threads and outlives the call.
    ValueThreadSafe: [::core::marker::Send + ::core::marker::Sync + 'static],
    message = "`{Self}` cannot be a tool's value: it is not `Send + Sync + 'static`",
    label = "the value type of this tool",
    note = "the value crosses threads and outlives the call: own the data (no borrowed references) and avoid `Rc` and `RefCell`",
}

bound_trait! {
    /// Meta serializes: it is persisted as JSON.
    MetaSerialize: [::serde::Serialize],
    message = "`{Self}` cannot be a tool's meta: it does not implement `serde::Serialize`",
    label = "the meta type of this tool",
    note = "derive it: `#[derive(serde::Serialize, serde::Deserialize)]` on `{Self}`; meta is persisted as JSON",
}

bound_trait! {
    /// Meta deserializes: `present_result` reads it back from the log.
    MetaDeserialize: [::serde::de::DeserializeOwned],
    message = "`{Self}` cannot be a tool's meta: it does not implement `serde::Deserialize`",
    label = "the meta type of this tool",
    note = "derive it: `#[derive(serde::Serialize, serde::Deserialize)]` on `{Self}`; `present_result` reads meta back from the session log",
}

bound_trait! {
    /// Meta crosses threads.
    MetaThreadSafe: [::core::marker::Send + ::core::marker::Sync + 'static],
    message = "`{Self}` cannot be a tool's meta: it is not `Send + Sync + 'static`",
    label = "the meta type of this tool",
    note = "own the data (no borrowed references) and avoid `Rc` and `RefCell`",
}

bound_trait! {
    /// The tool itself is shared between concurrent calls.
    ToolThreadSafe: [::core::marker::Send + ::core::marker::Sync + 'static],
    message = "`{Self}` cannot be a tool: it is not `Send + Sync + 'static`",
    label = "the registry shares this tool between concurrent calls",
    note = "keep mutable state behind `Mutex` or atomics, use `Arc` rather than `Rc`, and own the data",
}

/// Checks a tool's arguments type: `true` once it type-checks, which it
/// does when the type meets every bound of the arguments.
pub const fn args_type<T: ArgsDeserialize + ArgsJsonSchema + ArgsClone + ArgsThreadSafe>() -> bool {
    true
}

/// Checks a tool's value type.
// One line, so that the compiler's note quotes one line.
#[rustfmt::skip]
pub const fn value_type<T: ValueSerialize + ValueDeserialize + ValueJsonSchema + ValueThreadSafe>() -> bool {
    true
}

/// Checks a tool's meta type.
pub const fn meta_type<T: MetaSerialize + MetaDeserialize + MetaThreadSafe>() -> bool {
    true
}

/// Checks a tool type.
pub const fn tool_type<T: ToolThreadSafe>() -> bool {
    true
}
