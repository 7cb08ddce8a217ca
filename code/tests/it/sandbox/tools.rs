//! The `tools` global and `ToolCallError`.

use super::common;

use common::{error, run_js, value};
use serde_json::json;
use toolprism::code::sandbox::ErrorKind;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_nested_call_reaches_the_host_and_returns_its_value() {
    let (outcome, host) = run_js(
        r#"const r = await tools.echo({ q: "x", n: [1, 2.5, null, true], o: {} });
           return { r, sum: await tools.add({ a: 2, b: 3 }) };"#,
    )
    .await;
    assert_eq!(
        value(&outcome),
        json!({ "r": { "q": "x", "n": [1, 2.5, null, true], "o": {} }, "sum": 5 })
    );
    assert_eq!(outcome.calls, 2);
    assert_eq!(
        *host.calls.lock().unwrap(),
        vec![
            (
                "echo".to_owned(),
                json!({ "q": "x", "n": [1, 2.5, null, true], "o": {} })
            ),
            ("add".to_owned(), json!({ "a": 2, "b": 3 })),
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn odd_names_and_no_arguments() {
    let (outcome, host) = run_js(
        r#"await tools["weird-name.v2"]({ a: 1 }).catch(() => 0);
           return await tools.echo();"#,
    )
    .await;
    assert_eq!(value(&outcome), json!({}));
    assert_eq!(host.names(), ["weird-name.v2", "echo"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failure_is_a_real_tool_call_error() {
    let program = r#"
        try {
            await tools.fail({});
            return "no error";
        } catch (e) {
            return {
                isToolCallError: e instanceof ToolCallError,
                isError: e instanceof Error,
                name: e.name, toolName: e.toolName, code: e.code, message: e.message,
                str: String(e),
                stackHasCallSite: /program:3:/.test(e.stack),
            };
        }
    "#;
    let (outcome, _) = run_js(program).await;
    assert_eq!(
        value(&outcome),
        json!({
            "isToolCallError": true, "isError": true,
            "name": "ToolCallError", "toolName": "fail", "code": "BOOM",
            "message": "it failed on purpose",
            "str": "ToolCallError: it failed on purpose",
            "stackHasCallSite": true,
        })
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_misspelled_tool_rejects_instead_of_throwing() {
    let program = r#"
        const f = tools.serach;
        const p = f({ q: 1 });
        const e = await p.catch((e) => e);
        return [typeof f, typeof tools.anything, e.code, e.toolName, "x" in tools];
    "#;
    let (outcome, _) = run_js(program).await;
    assert_eq!(
        value(&outcome),
        json!(["function", "function", "UNKNOWN_TOOL", "serach", true])
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_uncaught_tool_failure_names_the_tool_code_and_line() {
    let (outcome, _) = run_js("const a = 1;\nawait tools.nope({});").await;
    let err = error(&outcome);
    assert_eq!(err.kind, ErrorKind::Exception);
    assert!(
        err.message
            .starts_with(r#"ToolCallError: no tool named "nope" [tool "nope", code UNKNOWN_TOOL]"#),
        "{}",
        err.message
    );
    assert_eq!(err.location.map(|l| l.line), Some(2));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_is_not_a_thenable_and_cannot_be_modified() {
    let program = r#"
        const attempts = [
            () => { tools.x = 1; },
            () => { delete tools.x; },
            () => { Object.setPrototypeOf(tools, {}); },
            () => { Object.defineProperty(tools, "y", { value: 1 }); },
            () => { tools = {}; },
            () => { globalThis.tools = {}; },
            () => { ToolCallError = class {}; },
            () => { ToolCallError.prototype.name = "X"; },
        ];
        const failed = attempts.map((f) => { try { f(); return false; } catch { return true; } });
        return { failed, then: typeof tools.then, keys: Object.keys(tools), awaited: (await tools) === tools };
    "#;
    let (outcome, host) = run_js(program).await;
    assert_eq!(
        value(&outcome),
        json!({ "failed": [true, true, true, true, true, true, true, true], "then": "undefined", "keys": [], "awaited": true })
    );
    assert!(host.names().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_survive_tampered_globals_and_prototypes() {
    let program = r#"
        Reflect.defineProperty(Object.prototype, "x", { get() { throw new Error("x getter"); }, set(v) { throw new Error("x setter"); } });
        Reflect.defineProperty(Object.prototype, "a", { set(v) { throw new Error("a setter"); } });
        Reflect.defineProperty(Array.prototype, "0", { set(v) { throw new Error("index setter"); } });
        Object.prototype.toJSON = () => "hijacked";
        JSON.stringify = () => { throw new Error("JSON.stringify used"); };
        JSON.parse = () => { throw new Error("JSON.parse used"); };
        Array.isArray = () => false;
        Object.keys = () => { throw new Error("Object.keys used"); };
        Object.entries = () => { throw new Error("Object.entries used"); };
        Object.defineProperty = () => { throw new Error("defineProperty used"); };
        Object.freeze = () => { throw new Error("freeze used"); };
        Promise.prototype.then = function () { throw new Error("then used"); };
        Array.prototype[Symbol.iterator] = function () { throw new Error("iterator used"); };
        Reflect.apply = () => { throw new Error("apply used"); };
        Error.prototype.toString = () => "tampered";
        Function.prototype.call = () => { throw new Error("call used"); };
        Function.prototype.apply = () => { throw new Error("apply used"); };
        String.prototype.slice = () => { throw new Error("slice used"); };
        Proxy = null;
        try { tools.__proto__ = { evil: 1 }; } catch {}
        globalThis.Object.prototype.get = () => { throw new Error("descriptor get used"); };
        Object.prototype.set = () => { throw new Error("descriptor set used"); };
        Object.prototype.value = 13;
        Object.prototype.writable = false;
        const r = await tools.echo({ a: [1, { x: 2 }], x: "y" });
        let caught;
        try { await tools.fail({}); } catch (err) { caught = err; }
        return [
            r.a[0], r.a[1].x, r.x, Reflect.ownKeys(r).length,
            caught instanceof ToolCallError, caught.code, caught.message, caught.toolName, caught.name,
        ];
    "#;
    let (outcome, host) = run_js(program).await;
    assert_eq!(
        value(&outcome),
        json!([
            1,
            2,
            "y",
            2,
            true,
            "BOOM",
            "it failed on purpose",
            "fail",
            "ToolCallError"
        ])
    );
    assert_eq!(
        host.calls.lock().unwrap()[0].1,
        json!({ "a": [1, { "x": 2 }], "x": "y" })
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wrong_arity_is_refused_before_the_host() {
    let (outcome, host) =
        run_js("const e = await tools.echo({}, 2).catch((e) => e); return [e.code, e.message];")
            .await;
    assert_eq!(
        value(&outcome),
        json!([
            "INVALID_ARGUMENTS",
            "tools.echo takes one argument, an object of named arguments, but got 2; the tool was not called"
        ])
    );
    assert!(host.names().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panicking_host_is_an_error_for_the_program() {
    let (outcome, _) = run_js(
        r#"const a = await tools.panic({}).catch((e) => e.code);
           const b = await tools.panic_sync({}).catch((e) => e.code);
           return [a, b, await tools.add({ a: 1, b: 1 })];"#,
    )
    .await;
    assert_eq!(value(&outcome), json!(["HOST_PANIC", "HOST_PANIC", 2]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_program_can_make_and_extend_tool_call_errors() {
    let program = r#"
        const e = new ToolCallError("search", "TIMEOUT", "took too long");
        class Retry extends ToolCallError {
            constructor(toolName) { super(toolName, "RETRY", "try again"); }
        }
        const r = new Retry("read");
        const bare = new ToolCallError();
        return [
            e instanceof ToolCallError, e instanceof Error, e.name, e.toolName, e.code, e.message,
            String(e), Object.keys(e), /program:2:/.test(e.stack),
            r instanceof Retry, r instanceof ToolCallError, r.toolName, r.code, r.message,
            "message" in bare && !Object.hasOwn(bare, "message"), bare.toolName === undefined,
            Object.getPrototypeOf(ToolCallError) === Error, ToolCallError.name, ToolCallError.length,
            Object.isFrozen(ToolCallError), Object.isFrozen(ToolCallError.prototype),
            ToolCallError.prototype.constructor === ToolCallError,
        ];
    "#;
    let (outcome, host) = run_js(program).await;
    assert_eq!(
        value(&outcome),
        json!([
            true,
            true,
            "ToolCallError",
            "search",
            "TIMEOUT",
            "took too long",
            "ToolCallError: took too long",
            ["toolName", "code"],
            true,
            true,
            true,
            "read",
            "RETRY",
            "try again",
            true,
            true,
            true,
            "ToolCallError",
            3,
            true,
            true,
            true
        ])
    );
    assert!(host.names().is_empty());
}
