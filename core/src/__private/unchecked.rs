//! The stand-in types of the stub `Tool` impl emitted next to `#[tool]`'s
//! errors, so that code using the tool (`Registry::builder().tool(ReadTool)`)
//! does not add errors of its own.

/// The arguments and value of a tool whose `#[tool]` failed. It has no
/// values, so the stub's methods are never reached.
#[derive(Debug, Clone, Copy, ::serde::Serialize, ::serde::Deserialize)]
pub enum Unchecked {}

impl ::schemars::JsonSchema for Unchecked {
    fn schema_name() -> ::std::borrow::Cow<'static, str> {
        "Unchecked".into()
    }

    fn json_schema(_: &mut ::schemars::SchemaGenerator) -> ::schemars::Schema {
        ::schemars::json_schema!(false)
    }
}
