//! Lossless JSON (C3, docs/contract.md): one canonical value, never
//! silently changed on its way in or out. A key written twice is refused
//! where it sits, in a value, in meta and in the arguments; `-0.0` and
//! NaN are refused in a replacement value and in the arguments; and
//! nothing nests deeper than `MAX_DEPTH`, so no call and no replay can
//! overflow the stack.

use crate::common;

use std::collections::BTreeMap;

use common::{N, Ok_, assert_failure, call, runtime};
use schemars::JsonSchema;
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Value, json};
use toolprism::log::SessionLog;
use toolprism::replay::{ReplayProblemKind, replay_log};
use toolprism::{
    CallOptions, ContentBlock, NoMeta, PostDecision, Registry, Tool, ToolCall, ToolContext,
    ToolError, ToolInfo, ToolResult,
};

// ---------------------------------------------------------------------------
// C3: one canonical value, never silently changed
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
fn c3_a_key_written_twice_is_refused_naming_the_path() {
    let registry = Registry::builder()
        .tool(Ok_)
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
fn c3_replace_value_is_lossless() {
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
fn c3_arguments_follow_the_lossless_rules() {
    let registry = Registry::builder().tool(Ok_).build().unwrap();
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
// C3: depth never overflows the stack (each test runs on a thread with the
//     default 2 MiB stack, so an overflow fails it)
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
