//! The language and the environment a program gets.

use super::common;

use common::{error, run_js, value};
use serde_json::json;
use toolprism::code::sandbox::ErrorKind;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn top_level_await_and_return_work() {
    let (outcome, _) = run_js("const x = await Promise.resolve(20); return x + 22;").await;
    assert_eq!(value(&outcome), json!(42));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_return_is_no_value() {
    let (outcome, _) = run_js("let a = 1;").await;
    assert_eq!(outcome.result, Ok(None));
    let (outcome, _) = run_js("return null;").await;
    assert_eq!(outcome.result, Ok(Some(json!(null))));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn modern_javascript_works() {
    let program = r#"
        class Counter {
            #n = 0;
            static make() { return new Counter(); }
            inc(by = 1) { this.#n += by; return this; }
            get value() { return this.#n; }
        }
        const { a, b: [first, ...rest], ...others } = { a: 1, b: [2, 3, 4], c: 5, d: 6 };
        const m = new Map([["k", 1]]);
        const s = new Set([1, 1, 2]);
        const f = async (x) => x * 2;
        const doubled = await Promise.all([1, 2, 3].map(f));
        const o = { deep: { x: null } };
        const label = `v=${Counter.make().inc().inc(2).value}`;
        function* gen() { yield 1; yield 2; }
        return {
            a, first, rest, others,
            map: m.get("k"), set: [...s],
            doubled, opt: o.deep?.x?.y ?? "none",
            label, spread: [...gen()],
            json: JSON.parse(JSON.stringify({ q: [1, "2"] })),
            flat: [[1, [2]], [3]].flat(2),
            entries: Object.entries({ p: 1 }),
            sorted: [3, 1, 2].toSorted(),
            str: "abc".at(-1) + "x".padStart(3, "-"),
            re: /(\d+)-(\d+)/.exec("10-20").slice(1),
            date: typeof Date.now(),
            bigint: (2n ** 64n).toString(),
        };
    "#;
    let (outcome, _) = run_js(program).await;
    assert_eq!(
        value(&outcome),
        json!({
            "a": 1, "first": 2, "rest": [3, 4], "others": {"c": 5, "d": 6},
            "map": 1, "set": [1, 2], "doubled": [2, 4, 6], "opt": "none",
            "label": "v=3", "spread": [1, 2], "json": {"q": [1, "2"]},
            "flat": [1, 2, 3], "entries": [["p", 1]], "sorted": [1, 2, 3],
            "str": "c--x", "re": ["10", "20"], "date": "number",
            "bigint": "18446744073709551616"
        })
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_environment_has_no_host_access() {
    let program = r#"
        return [
            "setTimeout", "setInterval", "setImmediate", "clearTimeout", "fetch", "require",
            "process", "module", "exports", "Deno", "Bun", "XMLHttpRequest", "WebSocket",
            "performance", "WeakRef", "FinalizationRegistry", "std", "os", "print", "scriptArgs",
            "navigator", "importScripts", "Worker", "gc",
        ].filter((name) => typeof globalThis[name] !== "undefined");
    "#;
    let (outcome, _) = run_js(program).await;
    assert_eq!(value(&outcome), json!([]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_program_runs_in_strict_mode() {
    let (outcome, _) = run_js("undeclared = 1; return undeclared;").await;
    let err = error(&outcome);
    assert_eq!(err.kind, ErrorKind::Exception);
    assert!(err.message.contains("ReferenceError"), "{}", err.message);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_run_gets_a_fresh_runtime() {
    let (first, _) = run_js("globalThis.leak = 1; Object.prototype.polluted = 2; return 1;").await;
    assert_eq!(value(&first), json!(1));
    let (second, _) = run_js("return [typeof leak, typeof ({}).polluted];").await;
    assert_eq!(value(&second), json!(["undefined", "undefined"]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn static_import_is_a_syntax_error_with_a_hint() {
    let (outcome, host) = run_js("import fs from 'fs';\nreturn 1;").await;
    let err = error(&outcome);
    assert_eq!(err.kind, ErrorKind::Syntax);
    assert_eq!(err.code(), "SYNTAX_ERROR");
    assert!(
        err.message.contains("no modules in the sandbox"),
        "{}",
        err.message
    );
    assert_eq!(err.location.map(|l| l.line), Some(1));
    assert!(host.names().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dynamic_import_fails_clearly() {
    let (outcome, _) = run_js("const m = await import('node:fs');\nreturn m;").await;
    let err = error(&outcome);
    assert_eq!(err.kind, ErrorKind::Exception);
    assert!(
        err.message.contains("could not load module"),
        "{}",
        err.message
    );
    assert!(
        err.message.contains("no modules in the sandbox"),
        "{}",
        err.message
    );
    let (outcome, _) = run_js("require('fs');").await;
    assert!(
        error(&outcome).message.contains("no modules"),
        "{}",
        error(&outcome).message
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn atomics_wait_cannot_block_the_thread() {
    let program = "const a = new Int32Array(new SharedArrayBuffer(4)); Atomics.wait(a, 0, 0);";
    let (outcome, _) = run_js(program).await;
    let err = error(&outcome);
    assert_eq!(err.kind, ErrorKind::Exception);
    assert!(err.message.contains("cannot block"), "{}", err.message);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn syntax_errors_point_into_the_program() {
    let (outcome, _) = run_js("let a = 1;\nlet b = ;\n").await;
    let err = error(&outcome);
    assert_eq!(err.kind, ErrorKind::Syntax);
    let at = err.location.expect("a location");
    assert_eq!((at.line, at.column), (2, 9));
    // Line 1 columns are corrected for the wrapper the engine adds.
    let (outcome, _) = run_js("let = 5;").await;
    let at = error(&outcome).location.expect("a location");
    assert_eq!((at.line, at.column), (1, 5));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn breaking_out_of_the_wrapper_is_refused() {
    let (outcome, _) = run_js("}); (function () {").await;
    assert_eq!(error(&outcome).kind, ErrorKind::Syntax);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn uncaught_errors_report_line_column_and_stack() {
    let program = "function inner(o) {\n  return o.missing.x;\n}\nfunction outer() { return inner({}); }\nreturn outer();";
    let (outcome, _) = run_js(program).await;
    let err = error(&outcome);
    assert_eq!(err.kind, ErrorKind::Exception);
    assert_eq!(err.code(), "EXCEPTION");
    let at = err.location.expect("a location");
    assert_eq!(at.line, 2);
    assert!(err.message.starts_with("TypeError: "), "{}", err.message);
    assert!(err.message.contains("at inner (line 2"), "{}", err.message);
    assert!(err.message.contains("at outer (line 4"), "{}", err.message);
    assert!(
        err.message.contains("at <program> (line 5"),
        "{}",
        err.message
    );
    assert!(!err.message.contains("sandbox"), "{}", err.message);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_throw_on_line_one_has_the_program_column() {
    let (outcome, _) = run_js("throw new Error('boom');").await;
    let err = error(&outcome);
    assert!(err.message.starts_with("Error: boom"), "{}", err.message);
    let at = err.location.expect("a location");
    assert_eq!(at.line, 1);
    // QuickJS points at `Error`, column 11 of the program's line.
    assert_eq!(at.column, 11);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn thrown_non_errors_are_described() {
    let (outcome, _) = run_js("throw { reason: 'nope', n: [1, undefined] };").await;
    assert_eq!(
        error(&outcome).message,
        r#"Uncaught {"reason":"nope","n":[1,undefined]}"#
    );
    let (outcome, _) = run_js("throw 'plain';").await;
    assert_eq!(error(&outcome).message, r#"Uncaught "plain""#);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_promise_nothing_can_settle_is_reported_at_once() {
    let (outcome, _) = run_js("await new Promise(() => {}); return 1;").await;
    let err = error(&outcome);
    assert_eq!(err.kind, ErrorKind::Stalled);
    assert_eq!(err.code(), "STALLED");
    assert!(outcome.wall < std::time::Duration::from_secs(5));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn queue_microtask_runs() {
    let (outcome, _) = run_js(
        "const seen = []; queueMicrotask(() => seen.push('micro')); seen.push('sync'); await null; return seen;",
    )
    .await;
    assert_eq!(value(&outcome), json!(["sync", "micro"]));
}
