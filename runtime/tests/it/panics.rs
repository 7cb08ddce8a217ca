//! Every piece of user code the pipeline calls may panic, and each panic
//! is a result (C9, docs/contract.md), never a crash: the arguments'
//! `Deserialize`, `Clone` and `Drop`, the value's and the meta's
//! `Serialize`, `Deserialize` and `Drop`, an error's `Display`, a
//! progress sink, a JSON Schema. Where the panic lands decides the code:
//! `TOOL_FAILED` for the tool's own work, `INVALID_TOOL_OUTPUT` for what
//! it produced (C5 for meta, C10 for a replacement value), the generic card
//! for a presenter's input (C6), a registry problem at build time (C1).

use crate::common;

use std::time::Duration;

use common::{N, Ok_, assert_failure, call, runtime};
use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::json;
use toolprism::{
    CallOptions, CancellationToken, ContentBlock, NoMeta, PostDecision, Progress, Registry,
    RegistryBuilder, Tool, ToolCall, ToolContext, ToolError, ToolInfo, ToolResult, tool,
};

#[derive(Clone, JsonSchema)]
struct PanicDeserializeArgs {
    #[allow(dead_code)]
    x: u32,
}

impl<'de> Deserialize<'de> for PanicDeserializeArgs {
    fn deserialize<D: Deserializer<'de>>(_: D) -> Result<Self, D::Error> {
        panic!("args deserialize boom")
    }
}

#[derive(Deserialize, JsonSchema)]
struct PanicCloneArgs {}

impl Clone for PanicCloneArgs {
    fn clone(&self) -> Self {
        panic!("args clone boom")
    }
}

#[derive(Deserialize, JsonSchema)]
struct PanicSerializeValue {}

impl Serialize for PanicSerializeValue {
    fn serialize<S: Serializer>(&self, _: S) -> Result<S::Ok, S::Error> {
        panic!("value serialize boom")
    }
}

struct PanicSerializeMeta;

impl Serialize for PanicSerializeMeta {
    fn serialize<S: Serializer>(&self, _: S) -> Result<S::Ok, S::Error> {
        panic!("meta serialize boom")
    }
}

impl<'de> Deserialize<'de> for PanicSerializeMeta {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        <()>::deserialize(d).map(|()| PanicSerializeMeta)
    }
}

/// Meta that serializes but panics when read back for a presenter.
struct PanicDeserializeMeta;

impl Serialize for PanicDeserializeMeta {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u8(1)
    }
}

impl<'de> Deserialize<'de> for PanicDeserializeMeta {
    fn deserialize<D: Deserializer<'de>>(_: D) -> Result<Self, D::Error> {
        panic!("meta deserialize boom")
    }
}

/// A value that serializes but panics when a replacement is read into it.
#[derive(Serialize, JsonSchema)]
struct PanicDeserializeValue {
    v: u32,
}

impl<'de> Deserialize<'de> for PanicDeserializeValue {
    fn deserialize<D: Deserializer<'de>>(_: D) -> Result<Self, D::Error> {
        panic!("value deserialize boom")
    }
}

/// An error whose `Display` panics.
struct PanicDisplay;

impl std::fmt::Display for PanicDisplay {
    fn fmt(&self, _: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        panic!("display boom")
    }
}

/// A value whose `Drop` panics, and that breaks its own schema (its
/// `Serialize` lies), so the pipeline drops it.
#[derive(Deserialize, JsonSchema)]
struct PanicDropValue {
    #[allow(dead_code)]
    n: u32,
}

impl Serialize for PanicDropValue {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str("not an object")
    }
}

impl Drop for PanicDropValue {
    fn drop(&mut self) {
        panic!("value drop boom")
    }
}

/// A type whose JSON Schema panics.
#[derive(Clone, Deserialize)]
struct PanicSchemaArgs {}

impl JsonSchema for PanicSchemaArgs {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "PanicSchemaArgs".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        panic!("schema boom")
    }
}

hostile_tool!(DeserializeArgs, "de_args", PanicDeserializeArgs, u32, NoMeta,
    execute: |_a, _cx| Ok(1), meta: |_a, _v| None);
hostile_tool!(CloneArgs, "clone_args", PanicCloneArgs, u32, NoMeta,
    execute: |_a, _cx| Ok(1), meta: |_a, _v| None);
hostile_tool!(SerializeValue, "ser_value", N, PanicSerializeValue, NoMeta,
    execute: |_a, _cx| Ok(PanicSerializeValue {}), meta: |_a, _v| None);
hostile_tool!(SerializeMeta, "ser_meta", N, u32, PanicSerializeMeta,
    execute: |_a, _cx| Ok(1), meta: |_a, _v| Some(PanicSerializeMeta));
hostile_tool!(DeserializeValue, "de_value", N, PanicDeserializeValue, NoMeta,
    execute: |_a, _cx| Ok(PanicDeserializeValue { v: 1 }), meta: |_a, _v| None);
hostile_tool!(DropValue, "drop_value", N, PanicDropValue, NoMeta,
    execute: |_a, _cx| Ok(PanicDropValue { n: 1 }), meta: |_a, _v| None);
hostile_tool!(DisplayError, "display_error", N, u32, NoMeta,
    execute: |_a, _cx| Err(ToolError::from(PanicDisplay)), meta: |_a, _v| None);

/// Meta read back panics: the live result card falls back to the generic one.
struct DeserializeMeta;

impl Tool for DeserializeMeta {
    type Args = N;
    type Value = u32;
    type Meta = PanicDeserializeMeta;
    const INFO: ToolInfo = ToolInfo::new("de_meta", "Meta that panics when read back.");
    async fn execute(&self, _: N, _: &ToolContext<'_>) -> Result<u32, ToolError> {
        Ok(1)
    }
    fn render(_: &N, _: &u32) -> Vec<ContentBlock> {
        vec![ContentBlock::text("rendered")]
    }
    fn presentation_meta(_: &N, _: &u32) -> Option<PanicDeserializeMeta> {
        Some(PanicDeserializeMeta)
    }
    fn present_result(
        _: &N,
        _: &ToolResult<PanicDeserializeMeta>,
    ) -> Option<toolprism::ResultCard> {
        unreachable!("never reached: the meta cannot be read back")
    }
}

/// `#[tool]` with an error type whose `Display` panics.
struct DisplayErrorMacro;

/// Fails with an error that cannot be displayed.
#[tool(name = "display_error_macro")]
impl DisplayErrorMacro {
    fn execute(_args: N) -> Result<u32, PanicDisplay> {
        Err(PanicDisplay)
    }
    fn render(_: &N, v: &u32) -> Vec<ContentBlock> {
        vec![ContentBlock::text(v.to_string())]
    }
}

fn hostile_registry() -> RegistryBuilder {
    Registry::builder()
        .tool(Ok_)
        .tool(DeserializeArgs)
        .tool(CloneArgs)
        .tool(SerializeValue)
        .tool(SerializeMeta)
        .tool(DeserializeMeta)
        .tool(DeserializeValue)
        .tool(DropValue)
        .tool(DisplayError)
        .tool(DisplayErrorMacro)
}

#[test]
fn c9_a_panicking_args_deserialize_is_tool_failed() {
    let registry = hostile_registry().build().unwrap();
    let out = call(&registry, "de_args", r#"{"x":1}"#);
    let message = assert_failure(&registry, &out, "TOOL_FAILED");
    assert!(message.contains("args deserialize boom"), "{message}");
    // Replay reads arguments with the same code: the generic card, no crash.
    assert_eq!(
        registry.present_call("de_args", r#"{"x":1}"#).tag(),
        "generic"
    );
}

#[test]
fn c9_a_panicking_args_clone_is_tool_failed() {
    let registry = hostile_registry().build().unwrap();
    let out = call(&registry, "clone_args", "{}");
    let message = assert_failure(&registry, &out, "TOOL_FAILED");
    assert!(message.contains("args clone boom"), "{message}");
}

#[test]
fn c9_a_panicking_value_serialize_is_invalid_tool_output() {
    let registry = hostile_registry().build().unwrap();
    let out = call(&registry, "ser_value", r#"{"n":1}"#);
    let message = assert_failure(&registry, &out, "INVALID_TOOL_OUTPUT");
    assert!(message.contains("value serialize boom"), "{message}");
}

#[test]
fn c5_a_panicking_meta_serialize_is_invalid_tool_output() {
    let registry = hostile_registry().build().unwrap();
    let out = call(&registry, "ser_meta", r#"{"n":1}"#);
    let message = assert_failure(&registry, &out, "INVALID_TOOL_OUTPUT");
    assert!(message.contains("meta serialize boom"), "{message}");
}

#[test]
fn c6_a_panicking_meta_deserialize_gives_the_generic_card() {
    let registry = hostile_registry().build().unwrap();
    let out = call(&registry, "de_meta", r#"{"n":1}"#);
    assert!(!out.is_error(), "{out:?}");
    assert_eq!(out.result_card().unwrap().tag(), "generic");
    let mut persisted = out.result().clone();
    let card = registry.present_result("de_meta", r#"{"n":1}"#, &mut persisted);
    assert_eq!(&card, out.result_card().unwrap());
}

#[test]
fn c10_a_panicking_replacement_deserialize_is_invalid_tool_output() {
    let registry = hostile_registry()
        .post_execute(|view: &toolprism::PostExecute<'_>| {
            if view.tool == "de_value" {
                PostDecision::ReplaceValue(json!({"v": 2}))
            } else {
                PostDecision::Accept
            }
        })
        .build()
        .unwrap();
    let out = call(&registry, "de_value", r#"{"n":1}"#);
    let message = assert_failure(&registry, &out, "INVALID_TOOL_OUTPUT");
    assert!(message.contains("value deserialize boom"), "{message}");
}

#[test]
fn c9_a_panicking_error_display_is_tool_failed() {
    let registry = hostile_registry().build().unwrap();
    for name in ["display_error", "display_error_macro"] {
        let out = call(&registry, name, r#"{"n":1}"#);
        let message = assert_failure(&registry, &out, "TOOL_FAILED");
        assert!(message.contains("display boom"), "{name}: {message}");
    }
}

#[test]
fn c9_a_panicking_value_drop_does_not_unwind() {
    let registry = hostile_registry().build().unwrap();
    let out = call(&registry, "drop_value", r#"{"n":1}"#);
    assert_failure(&registry, &out, "INVALID_TOOL_OUTPUT");
}

/// Arguments whose `Drop` panics: the pipeline's own copy and the one a
/// body that never finishes keeps are dropped under guards, whenever and
/// however the call ends.
#[derive(Clone, Deserialize, JsonSchema)]
struct DropBoomArgs {
    n: i64,
}

impl Drop for DropBoomArgs {
    fn drop(&mut self) {
        panic!("args drop boom")
    }
}

struct SlowPanicDrop;

impl Tool for SlowPanicDrop {
    type Args = DropBoomArgs;
    type Value = u32;
    type Meta = NoMeta;
    const INFO: ToolInfo = ToolInfo::new("slow_drop", "Arguments that panic when dropped.");
    async fn execute(&self, args: DropBoomArgs, _: &ToolContext<'_>) -> Result<u32, ToolError> {
        if args.n == 0 {
            std::mem::forget(args);
            return Ok(0);
        }
        tokio::time::sleep(Duration::from_secs(60)).await;
        std::mem::forget(args);
        Ok(1)
    }
    fn render(_: &DropBoomArgs, v: &u32) -> Vec<ContentBlock> {
        vec![ContentBlock::text(v.to_string())]
    }
}

#[test]
fn c9_a_panicking_drop_of_an_unfinished_body_does_not_unwind() {
    let registry = hostile_registry().tool(SlowPanicDrop).build().unwrap();
    let rt = runtime();
    let slow = r#"{"n":1}"#;
    // A call that ends: the pipeline's copy of the arguments is dropped.
    let out = call(&registry, "slow_drop", r#"{"n":0}"#);
    assert!(!out.is_error(), "{out:?}");
    // A timeout drops the body, which holds its arguments: still `TIMEOUT`.
    let options = CallOptions::new().with_timeout(Duration::from_millis(30));
    let out = rt.block_on(registry.call_with(ToolCall::new("1", "slow_drop", slow), &options));
    assert_failure(&registry, &out, "TIMEOUT");
    // So does a cancellation: still `ABORTED`.
    let cancel = CancellationToken::new();
    let options = CallOptions::new().with_cancel(cancel.clone());
    let out = rt.block_on(async {
        let call = registry.call_with(ToolCall::new("2", "slow_drop", slow), &options);
        let canceller = async {
            tokio::time::sleep(Duration::from_millis(30)).await;
            cancel.cancel();
        };
        tokio::join!(call, canceller).0
    });
    assert_failure(&registry, &out, "ABORTED");
    // And a caller that drops the call's future while the body waits: both
    // copies of the arguments go with it.
    rt.block_on(async {
        tokio::select! {
            _ = registry.call(ToolCall::new("3", "slow_drop", slow)) => panic!("the body never ends"),
            () = tokio::time::sleep(Duration::from_millis(30)) => {}
        }
    });
    assert!(!call(&registry, "ok", r#"{"n":1}"#).is_error());
}

#[test]
fn c1_a_panicking_json_schema_is_a_registry_problem() {
    struct Schemaless;
    impl Tool for Schemaless {
        type Args = PanicSchemaArgs;
        type Value = u32;
        type Meta = NoMeta;
        const INFO: ToolInfo = ToolInfo::new("schemaless", "Its schema panics.");
        async fn execute(&self, _: PanicSchemaArgs, _: &ToolContext<'_>) -> Result<u32, ToolError> {
            Ok(1)
        }
        fn render(_: &PanicSchemaArgs, _: &u32) -> Vec<ContentBlock> {
            Vec::new()
        }
    }
    let err = Registry::builder().tool(Schemaless).build().unwrap_err();
    assert!(err.problems()[0].contains("schema boom"), "{err}");
}

#[test]
fn c9_a_panicking_progress_sink_does_not_end_the_call() {
    struct Reports;
    impl Tool for Reports {
        type Args = N;
        type Value = i64;
        type Meta = NoMeta;
        const INFO: ToolInfo = ToolInfo::new("reports", "Reports progress.");
        async fn execute(&self, a: N, cx: &ToolContext<'_>) -> Result<i64, ToolError> {
            cx.report_progress(1, Some(2), Some("half"));
            Ok(a.n)
        }
        fn render(_: &N, v: &i64) -> Vec<ContentBlock> {
            vec![ContentBlock::text(v.to_string())]
        }
    }
    let registry = Registry::builder().tool(Reports).build().unwrap();
    let options = CallOptions::new().with_progress(|_: &Progress| panic!("sink boom"));
    let out = runtime()
        .block_on(registry.call_with(ToolCall::new("1", "reports", r#"{"n":3}"#), &options));
    assert_eq!(out.value().unwrap(), 3);
}
