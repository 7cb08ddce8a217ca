//! Helpers shared by the tests that write hostile tools by hand (`panics`,
//! `lossless`, `cancellation`, `persist_canary`, `persist_log_replay`): a
//! runtime, a blocking call, the shape every failed outcome must have
//! (C9, docs/contract.md), a well-behaved tool to show that the registry
//! still serves after a failure, and a macro for tools whose every piece
//! of user code is chosen by the test.
//!
//! Tools here are written against the public API only, as a user would.

#![allow(dead_code)]

use schemars::JsonSchema;
use serde::Deserialize;
use toolprism::{ContentBlock, Registry, ToolCall, ToolOutcome, tool};

pub(crate) fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// One top-level call, run to its end on a fresh runtime.
pub(crate) fn call(registry: &Registry, name: &str, args: &str) -> ToolOutcome {
    runtime().block_on(registry.call(ToolCall::new("c1", name, args)))
}

/// A failed outcome as C9 (docs/contract.md) has it: error content, the
/// code, no value, no meta; and the same registry serves a good call next
/// (the registry must hold [`Ok_`]). Returns the message.
#[track_caller]
pub(crate) fn assert_failure(registry: &Registry, out: &ToolOutcome, code: &str) -> String {
    assert!(out.is_error(), "expected {code}, got {out:?}");
    assert_eq!(out.code().unwrap(), code, "{out:?}");
    assert!(out.value().is_none() && out.meta().is_none(), "{out:?}");
    let message = out.error().unwrap().message.clone();
    assert_eq!(
        out.content(),
        [ContentBlock::text(format!("Error: {message}"))]
    );
    let next = call(registry, "ok", r#"{"n":1}"#);
    assert!(
        !next.is_error(),
        "the registry must serve the next call: {next:?}"
    );
    message
}

#[derive(Clone, Deserialize, JsonSchema)]
pub(crate) struct N {
    pub(crate) n: i64,
}

/// `ok`: a good tool, to show the registry still serves after each failure.
pub(crate) struct Ok_;

/// Returns n.
#[tool(name = "ok")]
impl Ok_ {
    fn execute(args: N) -> i64 {
        args.n
    }
    fn render(_: &N, v: &i64) -> Vec<ContentBlock> {
        vec![ContentBlock::text(v.to_string())]
    }
}

/// A hand-written tool: name, types, and the bodies of `execute` and
/// `presentation_meta`; `render` always writes "rendered". The caller has
/// `Tool`, `ToolInfo`, `ToolContext`, `ToolError` and `ContentBlock` in
/// scope.
#[allow(unused_macros)]
macro_rules! hostile_tool {
    ($ty:ident, $name:literal, $args:ty, $value:ty, $meta:ty,
     execute: |$a:ident, $cx:ident| $execute:expr,
     meta: |$ma:ident, $mv:ident| $meta_body:expr) => {
        struct $ty;
        impl Tool for $ty {
            type Args = $args;
            type Value = $value;
            type Meta = $meta;
            const INFO: ToolInfo = ToolInfo::new($name, "A hostile tool.");
            async fn execute(&self, $a: $args, $cx: &ToolContext<'_>) -> Result<$value, ToolError> {
                $execute
            }
            fn render(_: &$args, _: &$value) -> Vec<ContentBlock> {
                vec![ContentBlock::text("rendered")]
            }
            fn presentation_meta($ma: &$args, $mv: &$value) -> Option<$meta> {
                $meta_body
            }
        }
    };
}
