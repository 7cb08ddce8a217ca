//! The expansion names everything by absolute path: it compiles without
//! the prelude.

#![no_implicit_prelude]

mod data {
    // schemars' derive needs the prelude and the name `schemars` in scope;
    // the tool below, outside this module, has neither.
    use ::schemars;
    use ::std::prelude::rust_2024::*;

    #[derive(::std::clone::Clone, ::serde::Deserialize, ::schemars::JsonSchema)]
    pub struct Args {
        pub a: i64,
        pub b: i64,
    }

    #[derive(::serde::Serialize, ::serde::Deserialize, ::schemars::JsonSchema)]
    pub struct Sum {
        pub sum: i64,
    }

    #[derive(::serde::Serialize, ::serde::Deserialize)]
    pub struct SumMeta {
        pub negative: bool,
    }
}

use data::{Args, Sum, SumMeta};

#[derive(::std::default::Default)]
pub struct AddTool;

/// # Add
/// Add two numbers.
#[::toolprism::tool(kind = other, idempotent, timeout_ms = 100, spill = 1024, builtin)]
impl AddTool {
    async fn execute(
        &self,
        args: Args,
        _cx: &::toolprism::ToolContext<'_>,
    ) -> ::std::result::Result<Sum, ::toolprism::ToolError> {
        ::std::result::Result::Ok(Sum {
            sum: args.a + args.b,
        })
    }

    fn render(_args: &Args, value: &Sum) -> ::std::vec::Vec<::toolprism::ContentBlock> {
        ::std::vec![::toolprism::ContentBlock::text(
            ::std::string::ToString::to_string(&value.sum)
        )]
    }

    fn presentation_meta(_args: &Args, value: &Sum) -> SumMeta {
        SumMeta {
            negative: value.sum < 0,
        }
    }

    fn present_call(args: &Args) -> ::std::option::Option<::toolprism::CallCard> {
        ::std::option::Option::Some(::toolprism::CallCard::generic(
            ::std::format!("{} + {}", args.a, args.b),
            ::std::option::Option::None,
            ::std::option::Option::None,
        ))
    }

    fn present_result(
        _args: &Args,
        result: &::toolprism::ToolResult<SumMeta>,
    ) -> ::toolprism::ResultCard {
        ::toolprism::ResultCard::generic(
            ::std::option::Option::None,
            ::std::clone::Clone::clone(&result.content),
        )
    }
}

fn main() {
    let registry = ::toolprism::Registry::builtin().build().unwrap();
    let runtime = ::tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let out = runtime.block_on(registry.call(::toolprism::ToolCall::new(
        "c1",
        "add",
        r#"{"a": 2, "b": -5}"#,
    )));
    ::std::assert_eq!(out.content(), [::toolprism::ContentBlock::text("-3")]);
    ::std::assert_eq!(out.meta().unwrap()["negative"], true);
    ::std::assert_eq!(
        <AddTool as ::toolprism::Tool>::INFO.title,
        ::std::option::Option::Some("Add")
    );
}
