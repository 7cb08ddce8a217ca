//! Values cross the boundary as lossless JSON, both ways.

use super::common;

use common::{error, run_js, value};
use serde_json::json;
use toolprism::code::sandbox::ErrorKind;

/// Calls `tools.echo(<args>)` and returns the rejection's `[code, message]`.
async fn refused_args(args: &str) -> (String, String) {
    let program = format!(
        "const e = await tools.echo({args}).then(() => null, (e) => e);\n\
         return e && [e.code, e.message];"
    );
    let (outcome, host) = run_js(&program).await;
    assert!(host.names().is_empty(), "the host was called for {args}");
    let v = value(&outcome);
    assert!(v.is_array(), "{args} was accepted");
    (
        v[0].as_str().unwrap().to_owned(),
        v[1].as_str().unwrap().to_owned(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn arguments_that_are_not_lossless_are_refused_with_their_path() {
    let cases = [
        (
            "{ items: [1, 2, undefined] }",
            "args.items[2]: undefined is not JSON",
        ),
        ("{ a: undefined }", "args.a: undefined is not JSON"),
        ("{ z: -0 }", "args.z: -0 is not JSON"),
        ("{ n: NaN }", "args.n: NaN is not JSON"),
        ("{ n: [Infinity] }", "args.n[0]: Infinity is not JSON"),
        ("{ n: -Infinity }", "args.n: -Infinity is not JSON"),
        ("{ b: 10n }", "args.b: a BigInt is not JSON"),
        ("{ s: Symbol('x') }", "args.s: a symbol is not JSON"),
        ("{ f() {} }", "args.f: a function is not JSON"),
        ("{ h: [1, , 3] }", "args.h[1]: a hole in a sparse array"),
        ("{ h: new Array(5) }", "args.h[0]: a hole in a sparse array"),
        ("{ d: new Date(0) }", "args.d: a Date is not JSON"),
        ("{ m: new Map() }", "args.m: a Map is not JSON"),
        ("{ s: new Set() }", "args.s: a Set is not JSON"),
        ("{ r: /x/ }", "args.r: a RegExp is not JSON"),
        (
            "{ t: new Uint8Array(2) }",
            "args.t: a typed array is not JSON",
        ),
        ("{ e: new TypeError('x') }", "args.e: an Error is not JSON"),
        (
            "{ n: new Number(1) }",
            "args.n: a Number object is not JSON",
        ),
        (
            "{ c: new (class Point { x = 1 })() }",
            "args.c: an instance of a class",
        ),
        ("{ p: new Proxy({}, {}) }", "args.p: a Proxy is not JSON"),
        ("{ p: Promise.resolve(1) }", "args.p: a Promise is not JSON"),
        (
            "{ [Symbol('k')]: 1 }",
            "args: an object with a symbol-keyed property",
        ),
        (
            "{ 'a b': { '\\ud800': 1 } }",
            "args[\"a b\"]: an object with a key holding a lone UTF-16 surrogate",
        ),
        (
            "{ s: 'x\\udc00' }",
            "args.s: a string holding a lone UTF-16 surrogate",
        ),
        (
            "Object.assign([1, 2], { extra: 1 })",
            "args.extra: an array with a non-index property",
        ),
    ];
    for (args, expected) in cases {
        let (code, message) = refused_args(args).await;
        assert_eq!(code, "INVALID_ARGUMENTS", "{args}");
        assert!(
            message.starts_with(&format!("tools.echo: {expected}")),
            "{args}: {message}"
        );
        assert!(message.ends_with("the tool was not called"), "{message}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cycles_are_refused_but_shared_values_are_not() {
    let (_, message) =
        refused_args("(() => { const a = { b: { c: [] } }; a.b.c.push(a.b); return a; })()").await;
    assert!(
        message.starts_with("tools.echo: args.b.c[0]: a cycle (this is the value at args.b again)"),
        "{message}"
    );
    let (outcome, _) =
        run_js("const s = { v: 1 }; return await tools.echo({ a: s, b: [s, s] });").await;
    assert_eq!(
        value(&outcome),
        json!({ "a": { "v": 1 }, "b": [{ "v": 1 }, { "v": 1 }] })
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plain_values_convert_exactly() {
    let program = r#"
        const nullProto = Object.create(null); nullProto.k = "v";
        const withGetter = { get g() { return 7; } };
        Object.defineProperty(withGetter, "hidden", { value: 1, enumerable: false });
        return await tools.echo({
            ints: [0, -1, 2 ** 31, -(2 ** 53 - 1), 2 ** 53 - 1, 1e3],
            floats: [0.5, 1e300, -2.5e-300, 2 ** 53, 1e21],
            strings: ["", "é", "😀", "\u0000"],
            nullProto, withGetter, ["__proto__"]: 1, "nul\u0000key": 2,
        });
    "#;
    let (outcome, _) = run_js(program).await;
    let v = value(&outcome);
    assert_eq!(
        v["ints"],
        json!([
            0,
            -1,
            2147483648_i64,
            -9007199254740991_i64,
            9007199254740991_i64,
            1000
        ])
    );
    assert_eq!(
        v["floats"],
        json!([0.5, 1e300, -2.5e-300, 9007199254740992.0, 1e21])
    );
    assert!(
        v["floats"][3].is_f64(),
        "2^53 is past the safe range, so it stays a float"
    );
    assert_eq!(v["strings"], json!(["", "é", "😀", "\u{0}"]));
    assert_eq!(v["nullProto"], json!({ "k": "v" }));
    assert_eq!(v["withGetter"], json!({ "g": 7 }));
    assert_eq!(v["__proto__"], json!(1));
    assert_eq!(v["nul\u{0}key"], json!(2));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_throwing_getter_or_trap_becomes_a_clear_error() {
    let (code, message) =
        refused_args("{ a: { get b() { throw new RangeError('nope'); } } }").await;
    assert_eq!(code, "INVALID_ARGUMENTS");
    assert!(
        message.starts_with("tools.echo: args.a.b: reading it threw RangeError: nope"),
        "{message}"
    );
    // A getter that throws a non-Error, and one on an array element.
    let (_, message) =
        refused_args("[Object.defineProperty([], 0, { get() { throw 5; }, enumerable: true })]")
            .await;
    assert!(
        message.contains("args[0][0]: reading it threw 5"),
        "{message}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn depth_is_capped_at_127() {
    let ok = "let v = 1; for (let i = 0; i < 127; i++) v = [v]; return await tools.echo(v).then(() => 'ok');";
    let (outcome, _) = run_js(ok).await;
    assert_eq!(value(&outcome), json!("ok"));
    let (_, message) =
        refused_args("(() => { let v = 1; for (let i = 0; i < 128; i++) v = { v }; return v; })()")
            .await;
    assert!(
        message.contains("nests deeper than 127 levels"),
        "{message}"
    );
    // Far deeper than the stack could recurse: refused the same way.
    let (_, message) = refused_args(
        "(() => { let v = 1; for (let i = 0; i < 100000; i++) v = [v]; return v; })()",
    )
    .await;
    assert!(
        message.contains("nests deeper than 127 levels"),
        "{message}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_value_repeating_one_object_is_bounded_by_args_bytes() {
    // 2^60 leaves as JSON, a few hundred bytes in the heap.
    let (code, message) = refused_args(
        "(() => { let v = [1]; for (let i = 0; i < 60; i++) v = [v, v]; return v; })()",
    )
    .await;
    assert_eq!(code, "INVALID_ARGUMENTS");
    assert!(message.contains("Limits::args_bytes"), "{message}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn results_beyond_the_safe_integer_range_are_refused_not_rounded() {
    let program = r#"
        const ok = await tools.max({});
        const e = await tools.big({}).catch((e) => e);
        return [ok.id, ok.neg, e instanceof ToolCallError, e.code, e.message];
    "#;
    let (outcome, _) = run_js(program).await;
    assert_eq!(
        value(&outcome),
        json!([
            9007199254740991_i64,
            -9007199254740991_i64,
            true,
            "NOT_REPRESENTABLE",
            "tools.big returned a value JavaScript cannot hold exactly: result.id is the integer \
             9007199254740993, beyond ±(2^53 - 1): a JavaScript number cannot hold it exactly"
        ])
    );
    let (outcome, _) =
        run_js("return await tools.deep({}).catch((e) => e.code + ': ' + e.message);").await;
    let v = value(&outcome);
    assert!(
        v.as_str().unwrap().starts_with("NOT_REPRESENTABLE: "),
        "{v}"
    );
    assert!(v.as_str().unwrap().contains("nests deeper than 127"), "{v}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn results_are_built_without_running_program_setters() {
    let program = r#"
        Object.defineProperty(Object.prototype, "q", { set(v) { throw new Error("setter ran"); } });
        Object.defineProperty(Array.prototype, "1", { set(v) { throw new Error("index setter ran"); } });
        const r = await tools.echo({ q: "x", list: [1, 2, 3], ["__proto__"]: { y: 1 } });
        return [
            r.q, r.list, Object.getPrototypeOf(r.list) === Array.prototype,
            Object.getPrototypeOf(r) === Object.prototype, r.y === undefined, Object.hasOwn(r, "__proto__"),
        ];
    "#;
    let (outcome, _) = run_js(program).await;
    assert_eq!(
        value(&outcome),
        json!(["x", [1, 2, 3], true, true, true, true])
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_returned_value_must_be_lossless() {
    let cases = [
        (
            "const a = {}; a.self = a; return a;",
            "result.self: a cycle",
        ),
        ("return { n: 10n };", "result.n: a BigInt is not JSON"),
        ("return [1, undefined];", "result[1]: undefined is not JSON"),
        ("return new Date(0);", "result: a Date is not JSON"),
        ("return -0;", "result: -0 is not JSON"),
    ];
    for (program, expected) in cases {
        let (outcome, _) = run_js(program).await;
        let err = error(&outcome);
        assert_eq!(err.kind, ErrorKind::InvalidResult, "{program}");
        assert_eq!(err.code(), "INVALID_RESULT");
        assert!(
            err.message.starts_with(&format!(
                "the returned value is not lossless JSON: {expected}"
            )),
            "{program}: {}",
            err.message
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conversion_ignores_tampered_json_globals() {
    let program = r#"
        JSON.stringify = () => '"hijacked"';
        Object.prototype.toJSON = function () { return "hijacked"; };
        Array.isArray = () => false;
        Object.keys = () => [];
        return { list: [1, { a: 2 }], d: 3 };
    "#;
    let (outcome, _) = run_js(program).await;
    assert_eq!(value(&outcome), json!({ "list": [1, { "a": 2 }], "d": 3 }));
}
