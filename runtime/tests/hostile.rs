//! The contract against hostile code (issue 9): every user impl the pipeline
//! calls may panic, the value is one canonical JSON never silently changed,
//! depth never overflows the stack, cancellation and phases follow the
//! reference system, blocking work keeps its timeout, nested calls compose,
//! and nothing of the value reaches the disk, even through an error.
//!
//! Tools here are written against the public API only, as a user would.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use schemars::JsonSchema;
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Value, json};
use toolprism::log::SessionLog;
use toolprism::replay::{ReplayProblemKind, replay_log};
use toolprism::spill::SpillStore;
use toolprism::{
    CallOptions, CancellationToken, ContentBlock, ErrorCode, NoMeta, PostDecision, PreDecision,
    Progress, Registry, RegistryBuilder, Tool, ToolCall, ToolContext, ToolError, ToolInfo,
    ToolOutcome, ToolResult, tool,
};

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

fn call(registry: &Registry, name: &str, args: &str) -> ToolOutcome {
    runtime().block_on(registry.call(ToolCall::new("c1", name, args)))
}

/// A failed outcome as DESIGN C9 says: error content, the code, no value,
/// no meta; and the same registry serves a good call next.
#[track_caller]
fn assert_failure(registry: &Registry, out: &ToolOutcome, code: &str) -> String {
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

// ---------------------------------------------------------------------------
// A good tool, to show the registry still serves after each failure
// ---------------------------------------------------------------------------

#[derive(Clone, Deserialize, JsonSchema)]
struct N {
    n: i64,
}

struct Ok_;

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

/// A hand-written tool: name, types, and the bodies of `execute`, `render`
/// and `presentation_meta`.
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

// ---------------------------------------------------------------------------
// 1. Every piece of user code the pipeline calls may panic
// ---------------------------------------------------------------------------

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
fn c1_a_panicking_args_deserialize_is_tool_failed() {
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
fn c1_a_panicking_args_clone_is_tool_failed() {
    let registry = hostile_registry().build().unwrap();
    let out = call(&registry, "clone_args", "{}");
    let message = assert_failure(&registry, &out, "TOOL_FAILED");
    assert!(message.contains("args clone boom"), "{message}");
}

#[test]
fn c1_a_panicking_value_serialize_is_invalid_tool_output() {
    let registry = hostile_registry().build().unwrap();
    let out = call(&registry, "ser_value", r#"{"n":1}"#);
    let message = assert_failure(&registry, &out, "INVALID_TOOL_OUTPUT");
    assert!(message.contains("value serialize boom"), "{message}");
}

#[test]
fn c1_a_panicking_meta_serialize_is_invalid_tool_output() {
    let registry = hostile_registry().build().unwrap();
    let out = call(&registry, "ser_meta", r#"{"n":1}"#);
    let message = assert_failure(&registry, &out, "INVALID_TOOL_OUTPUT");
    assert!(message.contains("meta serialize boom"), "{message}");
}

#[test]
fn c1_a_panicking_meta_deserialize_gives_the_generic_card() {
    let registry = hostile_registry().build().unwrap();
    let out = call(&registry, "de_meta", r#"{"n":1}"#);
    assert!(!out.is_error(), "{out:?}");
    assert_eq!(out.result_card().unwrap().tag(), "generic");
    let mut persisted = out.result().clone();
    let card = registry.present_result("de_meta", r#"{"n":1}"#, &mut persisted);
    assert_eq!(&card, out.result_card().unwrap());
}

#[test]
fn c1_a_panicking_replacement_deserialize_is_invalid_tool_output() {
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
fn c1_a_panicking_error_display_is_tool_failed() {
    let registry = hostile_registry().build().unwrap();
    for name in ["display_error", "display_error_macro"] {
        let out = call(&registry, name, r#"{"n":1}"#);
        let message = assert_failure(&registry, &out, "TOOL_FAILED");
        assert!(message.contains("display boom"), "{name}: {message}");
    }
}

#[test]
fn c1_a_panicking_value_drop_does_not_unwind() {
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
fn c1_a_panicking_drop_of_an_unfinished_body_does_not_unwind() {
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
fn c1_a_panicking_progress_sink_does_not_end_the_call() {
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

// ---------------------------------------------------------------------------
// 2. One canonical value, never silently changed
// ---------------------------------------------------------------------------

/// A value whose flattened map repeats one of its fields.
#[derive(Serialize, Deserialize, JsonSchema)]
struct Flattened {
    id: u32,
    #[serde(flatten)]
    extra: BTreeMap<String, u32>,
}

hostile_tool!(DuplicateValue, "dup_value", N, Flattened, NoMeta,
    execute: |_a, _cx| Ok(Flattened { id: 1, extra: [("id".to_owned(), 2)].into() }),
    meta: |_a, _v| None);

/// Meta written by hand with one key twice.
struct TwiceMeta;

impl Serialize for TwiceMeta {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(2))?;
        map.serialize_entry("k", &1)?;
        map.serialize_entry("k", &2)?;
        map.end()
    }
}

impl<'de> Deserialize<'de> for TwiceMeta {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Value::deserialize(d).map(|_| TwiceMeta)
    }
}

hostile_tool!(DuplicateMeta, "dup_meta", N, u32, TwiceMeta,
    execute: |_a, _cx| Ok(1), meta: |_a, _v| Some(TwiceMeta));

#[test]
fn c2_a_key_written_twice_is_refused_naming_the_path() {
    let registry = hostile_registry()
        .tool(DuplicateValue)
        .tool(DuplicateMeta)
        .build()
        .unwrap();
    let out = call(&registry, "dup_value", r#"{"n":1}"#);
    let message = assert_failure(&registry, &out, "INVALID_TOOL_OUTPUT");
    assert!(message.contains("\"value.id\" repeats a key"), "{message}");
    let out = call(&registry, "dup_meta", r#"{"n":1}"#);
    let message = assert_failure(&registry, &out, "INVALID_TOOL_OUTPUT");
    assert!(
        message.contains("\"meta.{entry 1}\" repeats a key"),
        "{message}"
    );
}

#[test]
fn c2_replace_value_is_lossless() {
    #[derive(Serialize)]
    struct Score {
        score: f64,
    }
    let err = PostDecision::replace_value(&Score { score: f64::NAN }).unwrap_err();
    assert_eq!(err.path(), "value.score");
    let err = PostDecision::replace_value(&Score { score: -0.0 }).unwrap_err();
    assert!(err.reason().contains("-0.0"));
}

#[test]
fn c2_arguments_follow_the_lossless_rules() {
    let registry = hostile_registry().build().unwrap();
    // -0.0 cannot round-trip through JSON faithfully: refused, as the
    // reference system refuses it when it snapshots arguments.
    let out = call(&registry, "ok", r#"{"n":-0.0}"#);
    let message = assert_failure(&registry, &out, "INVALID_ARGS");
    assert!(message.contains("\"arguments.n\" is -0.0"), "{message}");
    let out = runtime().block_on(registry.call_nested_with(
        "ok",
        json!({"n": -0.0}),
        &CallOptions::new(),
    ));
    assert_eq!(out.code().unwrap(), "INVALID_ARGS");
    // A key written twice would reach the tool as one of its values while
    // the policies and the log saw the text: refused.
    let out = call(&registry, "ok", r#"{"n":1,"n":2}"#);
    let message = assert_failure(&registry, &out, "INVALID_ARGS");
    assert!(
        message.contains("\"arguments.n\" is given twice; send each key once"),
        "{message}"
    );
}

// ---------------------------------------------------------------------------
// 3. Depth never overflows the stack (each test runs on a thread with the
//    default 2 MiB stack, so an overflow fails it)
// ---------------------------------------------------------------------------

fn on_default_stack(f: impl FnOnce() + Send + 'static) {
    std::thread::Builder::new()
        .stack_size(2 * 1024 * 1024)
        .spawn(f)
        .unwrap()
        .join()
        .unwrap();
}

/// `depth` nested arrays around `leaf`, built without recursion.
fn nested_arrays(depth: usize, leaf: Value) -> Value {
    let mut value = leaf;
    for _ in 0..depth {
        value = Value::Array(vec![value]);
    }
    value
}

#[test]
fn c3_nested_call_arguments_100000_deep_are_refused() {
    on_default_stack(|| {
        #[derive(Clone, Deserialize, JsonSchema)]
        struct Anything {
            #[allow(dead_code)]
            any: Value,
        }
        hostile_tool!(Takes, "takes", Anything, u32, NoMeta,
            execute: |_a, _cx| Ok(1), meta: |_a, _v| None);
        let dir = tempfile::tempdir().unwrap();
        let registry = Registry::builder()
            .tool(Takes)
            .log(SessionLog::create(dir.path().join("s.jsonl")).unwrap())
            .build()
            .unwrap();
        let rt = runtime();
        let deep = || {
            let mut args = serde_json::Map::new();
            args.insert("any".to_owned(), nested_arrays(100_000, json!(1)));
            Value::Object(args)
        };
        let err = rt
            .block_on(registry.call_nested("takes", deep()))
            .unwrap_err();
        assert_eq!(*err.code(), "INVALID_ARGS");
        assert!(
            err.message().contains("deeper than 127"),
            "{}",
            err.message()
        );
        let err = rt
            .block_on(registry.call_typed::<Takes>(deep()))
            .unwrap_err();
        assert_eq!(*err.code(), "INVALID_ARGS");
        // Just inside the limit works.
        let mut ok = serde_json::Map::new();
        ok.insert("any".to_owned(), nested_arrays(126, json!(1)));
        assert_eq!(
            rt.block_on(registry.call_nested("takes", Value::Object(ok)))
                .unwrap(),
            1
        );
        // From the model, as text.
        let text = format!(
            "{{\"any\":{}1{}}}",
            "[".repeat(100_000),
            "]".repeat(100_000)
        );
        let out = rt.block_on(registry.call(ToolCall::new("t", "takes", text)));
        assert_eq!(out.code().unwrap(), "INVALID_ARGS");
        assert!(out.error().unwrap().message.contains("deeper than 127"));
        assert_eq!(out.call_card().unwrap().tag(), "generic");
        // The log replays.
        let replayed = replay_log(registry.session_log().unwrap().path(), &registry).unwrap();
        assert_eq!(replayed.entries.len(), 4);
    });
}

/// A recursive value type, as users write them.
#[derive(Serialize, Deserialize, JsonSchema)]
struct Chain {
    next: Option<Box<Chain>>,
}

#[test]
fn c3_a_value_of_a_recursive_type_10000_deep_is_refused() {
    on_default_stack(|| {
        hostile_tool!(Deep, "deep", N, Chain, NoMeta,
            execute: |a, _cx| {
                let mut chain = Chain { next: None };
                for _ in 0..a.n {
                    chain = Chain { next: Some(Box::new(chain)) };
                }
                Ok(chain)
            },
            meta: |_a, _v| None);
        let registry = Registry::builder().tool(Deep).tool(Ok_).build().unwrap();
        let out = call(&registry, "deep", r#"{"n":10000}"#);
        let message = assert_failure(&registry, &out, "INVALID_TOOL_OUTPUT");
        assert!(message.contains("deeper than 127"), "{message}");
        let out = call(&registry, "deep", r#"{"n":100}"#);
        assert!(!out.is_error(), "{out:?}");
    });
}

#[test]
fn c3_a_replacement_value_100000_deep_is_refused() {
    on_default_stack(|| {
        #[derive(Serialize, Deserialize, JsonSchema)]
        struct Open {
            any: Value,
        }
        hostile_tool!(Opens, "opens", N, Open, NoMeta,
            execute: |_a, _cx| Ok(Open { any: json!(1) }), meta: |_a, _v| None);
        let registry = Registry::builder()
            .tool(Opens)
            .tool(Ok_)
            .post_execute(|view: &toolprism::PostExecute<'_>| {
                if view.tool != "opens" {
                    return PostDecision::Accept;
                }
                let mut value = serde_json::Map::new();
                value.insert("any".to_owned(), nested_arrays(100_000, json!(1)));
                PostDecision::ReplaceValue(Value::Object(value))
            })
            .build()
            .unwrap();
        let out = call(&registry, "opens", r#"{"n":1}"#);
        assert_failure(&registry, &out, "INVALID_TOOL_OUTPUT");
    });
}

#[test]
fn c3_a_log_line_with_deep_meta_replays_without_overflow() {
    on_default_stack(|| {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        let deep_meta = format!("{}1{}", "[".repeat(100_000), "]".repeat(100_000));
        let log = format!(
            "{}\n{{\"type\":\"tool/result\",\"callId\":\"1\",\"content\":[],\"isError\":false,\"meta\":{deep_meta}}}\n",
            r#"{"type":"tool/call","callId":"1","name":"ok","arguments":"{\"n\":1}"}"#
        );
        std::fs::write(&path, log).unwrap();
        let registry = Registry::builder().tool(Ok_).build().unwrap();
        let replayed = replay_log(&path, &registry).unwrap();
        assert_eq!(replayed.problems.len(), 1, "{:?}", replayed.problems);
        assert_eq!(replayed.problems[0].kind, ReplayProblemKind::CorruptLine);
        assert_eq!(replayed.entries.len(), 1);
        assert!(!replayed.entries[0].has_result());
        // Deep meta handed to the presenters directly gives the generic card.
        let mut result = ToolResult::ok(vec![]);
        result.meta = Some(nested_arrays(100_000, json!(1)));
        let card = registry.present_result("ok", r#"{"n":1}"#, &mut result);
        assert_eq!(card.tag(), "generic");
        let meta = result.meta.take().unwrap();
        // Dropping it is the caller's: without recursion.
        let mut stack = vec![meta];
        while let Some(v) = stack.pop() {
            if let Value::Array(items) = v {
                stack.extend(items);
            }
        }
    });
}

// ---------------------------------------------------------------------------
// 4. Cancellation and phases, as the reference system does
// ---------------------------------------------------------------------------

#[test]
fn c4_a_call_cancelled_before_dispatch_runs_no_phase() {
    let pre = Arc::new(AtomicUsize::new(0));
    let post = Arc::new(AtomicUsize::new(0));
    let (p1, p2) = (pre.clone(), post.clone());
    let dir = tempfile::tempdir().unwrap();
    let registry = Registry::builder()
        .tool(Ok_)
        .pre_execute(move |_: &toolprism::PreExecute<'_>| {
            p1.fetch_add(1, Ordering::SeqCst);
            PreDecision::Allow
        })
        .post_execute(move |_: &toolprism::PostExecute<'_>| {
            p2.fetch_add(1, Ordering::SeqCst);
            PostDecision::Accept
        })
        .log(SessionLog::create(dir.path().join("s.jsonl")).unwrap())
        .build()
        .unwrap();
    let cancel = CancellationToken::new();
    cancel.cancel();
    let options = CallOptions::new().with_cancel(cancel);
    let out =
        runtime().block_on(registry.call_with(ToolCall::new("1", "ok", r#"{"n":1}"#), &options));
    assert_eq!(out.code().unwrap(), "ABORTED_BEFORE_DISPATCH");
    assert_eq!(
        (pre.load(Ordering::SeqCst), post.load(Ordering::SeqCst)),
        (0, 0)
    );
    let read = toolprism::log::read_log(registry.session_log().unwrap().path()).unwrap();
    let results = read
        .events
        .iter()
        .filter(|e| matches!(e, toolprism::log::LogEvent::Result { .. }))
        .count();
    assert_eq!(
        results, 1,
        "one ABORTED_BEFORE_DISPATCH result is published"
    );
}

#[test]
fn c4_a_tool_that_sees_cancellation_keeps_its_own_error() {
    struct Careful;
    impl Tool for Careful {
        type Args = N;
        type Value = i64;
        type Meta = NoMeta;
        const INFO: ToolInfo = ToolInfo::new("careful", "Stops cleanly when cancelled.");
        async fn execute(&self, _: N, cx: &ToolContext<'_>) -> Result<i64, ToolError> {
            cx.cancelled().await;
            Err(ToolError::new("stopped after writing 3 of 5 files").with_code("PARTIAL_WRITE"))
        }
        fn render(_: &N, v: &i64) -> Vec<ContentBlock> {
            vec![ContentBlock::text(v.to_string())]
        }
    }
    let registry = Registry::builder().tool(Careful).build().unwrap();
    let cancel = CancellationToken::new();
    let options = CallOptions::new().with_cancel(cancel.clone());
    let out = runtime().block_on(async {
        let canceller = async {
            tokio::time::sleep(Duration::from_millis(20)).await;
            cancel.cancel();
        };
        let (out, ()) = tokio::join!(
            registry.call_with(ToolCall::new("1", "careful", r#"{"n":1}"#), &options),
            canceller
        );
        out
    });
    assert_eq!(out.code().unwrap(), "PARTIAL_WRITE", "{out:?}");
    assert!(out.error().unwrap().message.contains("3 of 5"));
}

#[test]
fn c4_post_execute_policies_see_denied_calls() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let record = seen.clone();
    let registry = Registry::builder()
        .tool(Ok_)
        .pre_execute(|_: &toolprism::PreExecute<'_>| PreDecision::deny("not today"))
        .post_execute(move |view: &toolprism::PostExecute<'_>| {
            record
                .lock()
                .unwrap()
                .push(view.error.map(|e| e.code.to_string()));
            PostDecision::ReplaceContent(vec![ContentBlock::text("Error: denied by policy")])
        })
        .build()
        .unwrap();
    let out = call(&registry, "ok", r#"{"n":1}"#);
    assert_eq!(out.code().unwrap(), "DENIED");
    assert_eq!(*seen.lock().unwrap(), [Some("DENIED".to_owned())]);
    assert_eq!(
        out.content(),
        [ContentBlock::text("Error: denied by policy")]
    );
}

#[test]
fn c4_only_the_empty_string_means_an_empty_object() {
    #[derive(Clone, Deserialize, JsonSchema)]
    struct NoArgs {}
    hostile_tool!(Bare, "bare", NoArgs, u32, NoMeta, execute: |_a, _cx| Ok(1), meta: |_a, _v| None);
    let registry = Registry::builder().tool(Bare).build().unwrap();
    assert!(!call(&registry, "bare", "").is_error());
    for blank in [" ", "\n\t"] {
        let out = call(&registry, "bare", blank);
        assert_eq!(out.code().unwrap(), "INVALID_ARGS", "{blank:?}");
        assert!(out.error().unwrap().message.contains("not valid JSON"));
    }
}

// ---------------------------------------------------------------------------
// 5. Blocking work keeps its timeout
// ---------------------------------------------------------------------------

/// A blocking tool: sleeps its thread, then reports whether it saw the
/// cancellation that the timeout sends.
struct Sleeper {
    saw_cancel: Arc<AtomicUsize>,
}

impl Tool for Sleeper {
    type Args = N;
    type Value = i64;
    type Meta = NoMeta;
    const INFO: ToolInfo = ToolInfo {
        blocking: true,
        ..ToolInfo::new("sleeper", "Sleeps n milliseconds, blocking its thread.")
    };
    async fn execute(&self, args: N, cx: &ToolContext<'_>) -> Result<i64, ToolError> {
        self.execute_blocking(args, cx)
    }
    fn execute_blocking(&self, args: N, cx: &ToolContext<'_>) -> Result<i64, ToolError> {
        std::thread::sleep(Duration::from_millis(args.n as u64));
        if cx.is_cancelled() {
            self.saw_cancel.fetch_add(1, Ordering::SeqCst);
        }
        Ok(args.n)
    }
    fn render(_: &N, v: &i64) -> Vec<ContentBlock> {
        vec![ContentBlock::text(v.to_string())]
    }
}

struct BlockingSleep;

/// Sleeps n milliseconds, blocking its thread; declared with the attribute.
#[tool(name = "blocking_sleep", blocking)]
impl BlockingSleep {
    fn execute(args: N) -> i64 {
        std::thread::sleep(Duration::from_millis(args.n as u64));
        args.n
    }
    fn render(_: &N, v: &i64) -> Vec<ContentBlock> {
        vec![ContentBlock::text(v.to_string())]
    }
}

#[test]
fn c5_tool_blocking_keeps_the_timeout() {
    const { assert!(BlockingSleep::INFO.blocking) };
    let registry = Registry::builder().tool(BlockingSleep).build().unwrap();
    let options = CallOptions::new().with_timeout(Duration::from_millis(100));
    // Timed inside the runtime: dropping a runtime waits for its blocking
    // threads, the late sleep included.
    let rt = runtime();
    let (out, took) = rt.block_on(async {
        let started = Instant::now();
        let out = registry
            .call_with(
                ToolCall::new("1", "blocking_sleep", r#"{"n":500}"#),
                &options,
            )
            .await;
        (out, started.elapsed())
    });
    assert_eq!(out.code().unwrap(), "TIMEOUT", "{out:?}");
    assert!(took < Duration::from_millis(400), "{took:?}");
    rt.shutdown_background();
}

#[test]
fn c5_a_blocking_tool_times_out_on_time_on_both_runtime_flavours() {
    for multi in [false, true] {
        let saw_cancel = Arc::new(AtomicUsize::new(0));
        let registry = Registry::builder()
            .tool(Sleeper {
                saw_cancel: saw_cancel.clone(),
            })
            .build()
            .unwrap();
        let rt = if multi {
            tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .unwrap()
        } else {
            runtime()
        };
        let options = CallOptions::new().with_timeout(Duration::from_millis(100));
        let started = Instant::now();
        let out = rt
            .block_on(registry.call_with(ToolCall::new("1", "sleeper", r#"{"n":700}"#), &options));
        let took = started.elapsed();
        assert_eq!(out.code().unwrap(), "TIMEOUT", "multi={multi}: {out:?}");
        assert!(
            took < Duration::from_millis(500),
            "multi={multi}: returned after {took:?}"
        );
        // The late result is dropped; the work saw its token cancelled.
        std::thread::sleep(Duration::from_millis(800));
        assert_eq!(saw_cancel.load(Ordering::SeqCst), 1, "multi={multi}");
        let ok = rt.block_on(registry.call(ToolCall::new("2", "sleeper", r#"{"n":1}"#)));
        assert_eq!(ok.value().unwrap(), 1);
    }
}

#[test]
fn c5_a_dropped_call_cancels_its_blocking_body() {
    let saw_cancel = Arc::new(AtomicUsize::new(0));
    let registry = Registry::builder()
        .tool(Sleeper {
            saw_cancel: saw_cancel.clone(),
        })
        .build()
        .unwrap();
    let rt = runtime();
    rt.block_on(async {
        // The caller gives up on the call's future: no timeout, no token.
        let call = registry.call(ToolCall::new("1", "sleeper", r#"{"n":400}"#));
        let gave_up = tokio::time::timeout(Duration::from_millis(50), call).await;
        assert!(gave_up.is_err(), "the call ended before the caller gave up");
    });
    std::thread::sleep(Duration::from_millis(600));
    assert_eq!(saw_cancel.load(Ordering::SeqCst), 1);
    rt.shutdown_background();
}

// ---------------------------------------------------------------------------
// 6. Nested calls compose
// ---------------------------------------------------------------------------

#[derive(Clone, Deserialize, JsonSchema)]
struct City {
    city: String,
}

struct Weather;

/// The weather of a city.
#[tool]
impl Weather {
    fn execute(args: City) -> Result<String, ToolError> {
        match args.city.as_str() {
            "Oslo" => Ok("rain".to_owned()),
            other => {
                Err(ToolError::new(format!("no weather for {other}")).with_code("UNKNOWN_CITY"))
            }
        }
    }
    fn render(_: &City, v: &String) -> Vec<ContentBlock> {
        vec![ContentBlock::text(v)]
    }
}

struct Trip;

/// Plans a trip from the weather of each city, in parallel.
#[tool]
impl Trip {
    async fn execute(&self, args: Cities, cx: &ToolContext<'_>) -> Result<Forecast, ToolError> {
        // The first city through the context: `?` keeps the inner code.
        let first = cx
            .call_typed::<Weather>(json!({ "city": args.cities[0] }))
            .await?;
        // The others from spawned tasks, each with an owned handle.
        let mut tasks = Vec::new();
        for city in &args.cities[1..] {
            let nested = cx.nested();
            let city = city.clone();
            tasks.push(tokio::spawn(async move {
                nested.call_typed::<Weather>(json!({ "city": city })).await
            }));
        }
        let mut all = vec![first];
        for task in tasks {
            all.push(task.await.map_err(|e| ToolError::new(e.to_string()))??);
        }
        Ok(Forecast(all))
    }
    fn render(_: &Cities, v: &Forecast) -> Vec<ContentBlock> {
        vec![ContentBlock::text(v.0.join(", "))]
    }
}

#[derive(Serialize, Deserialize, JsonSchema)]
struct Forecast(Vec<String>);

#[derive(Clone, Deserialize, JsonSchema)]
struct Cities {
    cities: Vec<String>,
}

#[test]
fn c6_nested_calls_keep_codes_carry_the_parent_id_and_run_in_spawned_tasks() {
    let dir = tempfile::tempdir().unwrap();
    let registry = Registry::builder()
        .tool(Weather)
        .tool(Trip)
        .log(SessionLog::create(dir.path().join("s.jsonl")).unwrap())
        .build()
        .unwrap();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let out = rt.block_on(registry.call(ToolCall::new(
        "t1",
        "trip",
        r#"{"cities":["Oslo","Oslo","Oslo"]}"#,
    )));
    assert_eq!(out.value().unwrap(), &json!(["rain", "rain", "rain"]));
    let out = rt.block_on(registry.call(ToolCall::new("t2", "trip", r#"{"cities":["Atlantis"]}"#)));
    assert_eq!(out.code().unwrap(), "UNKNOWN_CITY", "{out:?}");
    let out = rt.block_on(registry.call(ToolCall::new(
        "t3",
        "trip",
        r#"{"cities":["Oslo","Atlantis"]}"#,
    )));
    assert_eq!(out.code().unwrap(), "UNKNOWN_CITY", "{out:?}");

    let replayed = replay_log(registry.session_log().unwrap().path(), &registry).unwrap();
    assert!(replayed.problems.is_empty(), "{:?}", replayed.problems);
    let nested: Vec<_> = replayed.entries.iter().filter(|e| e.nested).collect();
    assert_eq!(nested.len(), 3 + 1 + 2);
    for entry in &nested {
        let parent = entry.parent_call_id.as_deref().unwrap();
        assert!(
            entry.call_id.starts_with(&format!("{parent}:nested:")),
            "{}",
            entry.call_id
        );
        assert!(entry.meta.is_none());
    }
    let t1: Vec<&str> = nested
        .iter()
        .filter(|e| e.parent_call_id.as_deref() == Some("t1"))
        .map(|e| e.call_id.as_str())
        .collect();
    let mut sorted = t1.clone();
    sorted.sort();
    assert_eq!(sorted, ["t1:nested:1", "t1:nested:2", "t1:nested:3"]);
    let failed = nested.iter().find(|e| e.is_error).unwrap();
    assert_eq!(failed.error_code.as_ref().unwrap(), "UNKNOWN_CITY");
}

// ---------------------------------------------------------------------------
// 8. Small API gaps
// ---------------------------------------------------------------------------

#[test]
fn c8_outcome_code_and_error_code_comparisons() {
    let registry = hostile_registry().build().unwrap();
    let out = call(&registry, "missing", "{}");
    assert_eq!(out.code(), Some(&ErrorCode::UnknownTool));
    assert!(*out.code().unwrap() == "UNKNOWN_TOOL");
    assert!("UNKNOWN_TOOL" == *out.code().unwrap());
    assert!(call(&registry, "ok", r#"{"n":1}"#).code().is_none());
    let options = CallOptions::new().with_timeout(Duration::from_secs(1));
    assert_eq!(options.timeout(), Some(Duration::from_secs(1)));
}

// ---------------------------------------------------------------------------
// 9. Nothing of the value reaches the disk, even through an error
// ---------------------------------------------------------------------------

const SECRET: &str = "canary-7f3a9c-secret";

#[derive(Serialize, Deserialize, JsonSchema)]
struct Ledger {
    balances: BTreeMap<String, u32>,
}

/// Serializes a map key that is the secret, with a value of the wrong type.
struct LyingLedger;

impl Serialize for LyingLedger {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Wire<'a> {
            balances: BTreeMap<&'a str, &'a str>,
        }
        Wire {
            balances: [(SECRET, "not a number")].into(),
        }
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for LyingLedger {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ledger::deserialize(d).map(|_| LyingLedger)
    }
}

impl JsonSchema for LyingLedger {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        Ledger::schema_name()
    }
    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        Ledger::json_schema(generator)
    }
}

hostile_tool!(SchemaLeak, "schema_leak", N, LyingLedger, NoMeta,
    execute: |_a, _cx| Ok(LyingLedger), meta: |_a, _v| None);
hostile_tool!(NanLeak, "nan_leak", N, BTreeMap<String, f64>, NoMeta,
    execute: |_a, _cx| Ok([(SECRET.to_owned(), f64::NAN)].into()), meta: |_a, _v| None);
/// A map that writes the secret key twice.
#[derive(Deserialize, JsonSchema)]
struct SecretTwice(#[allow(dead_code)] BTreeMap<String, u32>);

impl Serialize for SecretTwice {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(2))?;
        map.serialize_entry(SECRET, &1)?;
        map.serialize_entry(SECRET, &2)?;
        map.end()
    }
}

hostile_tool!(DupLeak, "dup_leak", N, SecretTwice, NoMeta,
    execute: |_a, _cx| Ok(SecretTwice(BTreeMap::new())), meta: |_a, _v| None);
hostile_tool!(MetaLeak, "meta_leak", N, u32, BTreeMap<String, f64>,
    execute: |_a, _cx| Ok(1), meta: |_a, _v| Some([(SECRET.to_owned(), f64::INFINITY)].into()));

#[test]
fn c9_a_values_keys_reach_no_persisted_byte_through_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("s.jsonl");
    let registry = Registry::builder()
        .tool(Ok_)
        .tool(SchemaLeak)
        .tool(NanLeak)
        .tool(DupLeak)
        .tool(MetaLeak)
        .log(SessionLog::create(&log).unwrap())
        .spill(SpillStore::new(dir.path().join("spill")).unwrap())
        .build()
        .unwrap();
    for name in ["schema_leak", "nan_leak", "dup_leak", "meta_leak"] {
        let out = call(&registry, name, r#"{"n":1}"#);
        assert_eq!(
            out.code().unwrap(),
            "INVALID_TOOL_OUTPUT",
            "{name}: {out:?}"
        );
        let message = &out.error().unwrap().message;
        assert!(!message.contains(SECRET), "{name}: {message}");
        assert!(
            message.contains("{entry"),
            "{name}: the path names the entry by position: {message}"
        );
    }
    // The scan can fail: a control call puts the secret in the arguments,
    // which are persisted by design.
    let scan = |path: &std::path::Path| -> bool {
        let mut found = false;
        for entry in walk(path) {
            let bytes = std::fs::read(&entry).unwrap();
            found |= bytes.windows(SECRET.len()).any(|w| w == SECRET.as_bytes());
        }
        found
    };
    assert!(!scan(dir.path()), "the secret reached the disk");
    let control = call(&registry, "ok", &format!(r#"{{"n":1,"{SECRET}":0}}"#));
    assert!(!control.is_error());
    assert!(
        scan(dir.path()),
        "the control must be found, or the scan proves nothing"
    );
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(walk(&path));
        } else {
            files.push(path);
        }
    }
    files
}

/// A unit-struct meta: its JSON is `null`.
#[derive(Serialize, Deserialize, Debug, PartialEq)]
struct Marker;

struct NullMeta;

impl Tool for NullMeta {
    type Args = N;
    type Value = u32;
    type Meta = Marker;
    const INFO: ToolInfo = ToolInfo::new("null_meta", "Its meta is null.");
    async fn execute(&self, _: N, _: &ToolContext<'_>) -> Result<u32, ToolError> {
        Ok(1)
    }
    fn render(_: &N, _: &u32) -> Vec<ContentBlock> {
        vec![ContentBlock::text("1")]
    }
    fn presentation_meta(_: &N, _: &u32) -> Option<Marker> {
        Some(Marker)
    }
    fn present_result(_: &N, result: &ToolResult<Marker>) -> Option<toolprism::ResultCard> {
        let title = if result.meta.is_some() {
            "marked"
        } else {
            "unmarked"
        };
        Some(toolprism::ResultCard::generic(
            Some(title.to_owned()),
            vec![],
        ))
    }
}

#[test]
fn c9_a_null_meta_replays_as_it_was_live() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    let registry = Registry::builder()
        .tool(NullMeta)
        .log(SessionLog::create(&path).unwrap())
        .build()
        .unwrap();
    let live = call(&registry, "null_meta", r#"{"n":1}"#);
    assert_eq!(live.meta(), Some(&Value::Null));
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains("\"meta\":null"), "{text}");
    let replayed = replay_log(&path, &registry).unwrap();
    assert_eq!(replayed.entries[0].result_card.as_ref(), live.result_card());
    assert_eq!(replayed.entries[0].meta, Some(Value::Null));
    match live.result_card().unwrap() {
        toolprism::ResultCard::Generic(card) => assert_eq!(card.title.as_deref(), Some("marked")),
        other => panic!("{other:?}"),
    }
}

#[test]
fn c9_an_unknown_event_type_is_skipped_with_a_note() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    std::fs::write(
        &path,
        concat!(
            r#"{"type":"tool/call","callId":"1","name":"ok","arguments":"{\"n\":1}"}"#, "\n",
            r#"{"type":"tool/approval","callId":"1","decision":"allowed-once"}"#, "\n",
            r#"{"type":"tool/result","callId":"1","content":[{"type":"text","text":"1"}],"isError":false}"#, "\n",
        ),
    )
    .unwrap();
    let registry = Registry::builder().tool(Ok_).build().unwrap();
    let replayed = replay_log(&path, &registry).unwrap();
    assert_eq!(replayed.entries.len(), 1);
    assert!(replayed.entries[0].has_result());
    assert_eq!(replayed.problems.len(), 1);
    assert_eq!(replayed.problems[0].kind, ReplayProblemKind::UnknownEvent);
}

// ---------------------------------------------------------------------------
// 10. The spill directory is the user's own
// ---------------------------------------------------------------------------

#[cfg(unix)]
#[test]
fn c10_an_existing_spill_directory_is_tightened_and_a_symlink_refused() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let spill = dir.path().join("spill");
    std::fs::create_dir(&spill).unwrap();
    std::fs::set_permissions(&spill, std::fs::Permissions::from_mode(0o755)).unwrap();
    SpillStore::new(&spill).unwrap();
    let mode = std::fs::metadata(&spill).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o700);
    let link = dir.path().join("link");
    std::os::unix::fs::symlink(&spill, &link).unwrap();
    let err = SpillStore::new(&link).unwrap_err();
    assert!(err.to_string().contains("symlink"), "{err}");
    // Nothing of the probe is left behind.
    assert_eq!(std::fs::read_dir(&spill).unwrap().count(), 0);
}
