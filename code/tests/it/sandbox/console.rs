//! `console.*` writes deterministic, bounded lines to the run's logs.

use super::common;

use common::{run_js, run_with, value};
use serde_json::json;
use toolprism::code::sandbox::Limits;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn strings_as_they_are_other_values_as_compact_text() {
    let program = r#"
        console.log("plain", "text", 1, 2.5, -0, NaN, -Infinity, true, null, undefined, 10n);
        console.log({ a: 1, b: [1, "two", { c: null }], "k y": undefined });
        console.log(Symbol("s"), () => 1, Promise.resolve(), new Map(), new Set(), /x/g);
        console.log(new Date(0), new Date(NaN), new TypeError("bad"), new Uint8Array(2));
        console.log(1e21, 1e-7, 0.1 + 0.2, 2 ** 53, [, 1]);
        const cyc = { name: "c" }; cyc.self = cyc; console.log(cyc);
        console.log(new Proxy({}, { get() { throw new Error("trap ran"); } }));
        console.log({ get g() { throw new Error("no"); } });
        console.info("info"); console.debug("dbg"); console.warn("careful"); console.error("bad", { x: 1 });
        console.log();
    "#;
    let (outcome, _) = run_js(program).await;
    assert_eq!(outcome.result, Ok(None), "{:?}", outcome.result);
    assert_eq!(
        outcome.logs,
        [
            "plain text 1 2.5 -0 NaN -Infinity true null undefined 10n",
            r#"{"a":1,"b":[1,"two",{"c":null}],"k y":undefined}"#,
            "Symbol(s) [Function] [Promise] [Map] [Set] [RegExp]",
            "Date(1970-01-01T00:00:00.000Z) Date(Invalid Date) TypeError: bad [TypedArray]",
            "1e+21 1e-7 0.30000000000000004 9007199254740992 [undefined,1]",
            r#"{"name":"c","self":[Circular]}"#,
            "[Proxy]",
            r#"{"g":<threw>}"#,
            "info",
            "debug: dbg",
            "warn: careful",
            r#"error: bad {"x":1}"#,
            "",
        ]
    );
    assert_eq!(
        outcome.output_bytes,
        outcome.logs.iter().map(String::len).sum::<usize>()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deep_and_wide_values_are_bounded() {
    let program = r#"
        let deep = 1; for (let i = 0; i < 10; i++) deep = { d: deep };
        console.log(deep);
        console.log(Array.from({ length: 150 }, (_, i) => i));
    "#;
    let (outcome, _) = run_js(program).await;
    assert_eq!(
        outcome.logs[0],
        r#"{"d":{"d":{"d":{"d":{"d":{"d":[Object]}}}}}}"#
    );
    assert!(
        outcome.logs[1].ends_with(",99,…50 more]"),
        "{}",
        outcome.logs[1]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn console_can_be_replaced_by_the_program_without_breaking_the_run() {
    let (outcome, _) = run_js("const log = console.log; console.log = () => {}; console.log('hidden'); log('shown'); return 1;").await;
    assert_eq!(value(&outcome), json!(1));
    assert_eq!(outcome.logs, ["shown"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_log_line_crossing_the_ledger_is_cut_there() {
    let mut limits = Limits::default();
    limits.output_bytes = 10;
    let (outcome, _) = run_with(
        "console.log('12345'); console.log('abcdefgh'); console.log('never');",
        &limits,
    )
    .await;
    assert_eq!(outcome.logs, ["12345", "abcde"]);
    assert_eq!(outcome.output_bytes, 10);
}
