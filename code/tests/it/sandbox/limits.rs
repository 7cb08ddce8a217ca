//! Every limit ends the run with its own error kind.

use super::common;

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use common::{Shared, TestHost, error, run_js, run_with, value};
use serde_json::json;
use tokio_util::sync::CancellationToken;
use toolprism::code::sandbox::{ErrorKind, Limits, run};

fn limits(f: impl FnOnce(&mut Limits)) -> Limits {
    let mut l = Limits::default();
    f(&mut l);
    l
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hot_loop_hits_the_compute_limit() {
    let l = limits(|l| l.compute = Duration::from_millis(200));
    let (outcome, _) = run_with("let i = 0;\nwhile (true) { i++; }", &l).await;
    let err = error(&outcome);
    assert_eq!(err.kind, ErrorKind::Compute);
    assert_eq!(err.code(), "COMPUTE_LIMIT");
    assert!(outcome.compute >= Duration::from_millis(200));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn catching_does_not_escape_an_interrupt() {
    let l = limits(|l| l.compute = Duration::from_millis(200));
    let program = r#"
        async function spin() { while (true) {} }
        for (;;) {
            try { while (true) {} } catch (e) {}
            try { await spin(); } catch (e) {}
            spin().catch(() => {});
        }
    "#;
    let (outcome, _) = run_with(program, &l).await;
    assert_eq!(error(&outcome).kind, ErrorKind::Compute);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hot_loop_dies_while_a_slow_call_is_pending() {
    let l = limits(|l| l.compute = Duration::from_millis(200));
    let (outcome, host) = run_with("tools.hang({}); while (true) {}", &l).await;
    assert_eq!(error(&outcome).kind, ErrorKind::Compute);
    // The pending call was cancelled and is over.
    assert_eq!(
        host.started.load(Ordering::SeqCst),
        host.ended.load(Ordering::SeqCst)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn waiting_for_the_host_is_not_compute() {
    let l = limits(|l| l.compute = Duration::from_millis(100));
    let (outcome, _) = run_with("return await tools.slow({ ms: 400 });", &l).await;
    assert_eq!(value(&outcome), json!("slept"));
    assert!(
        outcome.compute < Duration::from_millis(100),
        "{:?}",
        outcome.compute
    );
    assert!(outcome.wall >= Duration::from_millis(400));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_that_never_returns_hits_the_wall_limit() {
    let l = limits(|l| l.wall = Duration::from_millis(300));
    let started = Instant::now();
    let (outcome, host) = run_with("await tools.hang({});", &l).await;
    let err = error(&outcome);
    assert_eq!(err.kind, ErrorKind::Wall);
    assert_eq!(err.code(), "WALL_LIMIT");
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(
        host.saw_cancel.load(Ordering::SeqCst),
        1,
        "the hanging call was cancelled"
    );
    assert_eq!(
        host.started.load(Ordering::SeqCst),
        host.ended.load(Ordering::SeqCst)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_busy_program_hits_the_wall_limit_before_compute() {
    let l = limits(|l| {
        l.wall = Duration::from_millis(200);
        l.compute = Duration::from_secs(60);
    });
    let (outcome, _) = run_with("while (true) {}", &l).await;
    assert_eq!(error(&outcome).kind, ErrorKind::Wall);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_huge_array_hits_the_memory_limit() {
    let l = limits(|l| l.memory_bytes = 32 << 20);
    let (outcome, _) = run_with("const a = new Array(1e9).fill(0); return a.length;", &l).await;
    let err = error(&outcome);
    assert_eq!(err.kind, ErrorKind::Memory, "{}", err.message);
    assert_eq!(err.code(), "MEMORY_LIMIT");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_huge_string_hits_the_memory_limit() {
    let l = limits(|l| l.memory_bytes = 32 << 20);
    let (outcome, _) = run_with("return 'y'.repeat(1e9).length;", &l).await;
    assert_eq!(
        error(&outcome).kind,
        ErrorKind::Memory,
        "{}",
        error(&outcome).message
    );
    // Built by concatenation and then flattened.
    let program =
        "let s = 'x'.repeat(1 << 20); const parts = []; for (;;) parts.push(s + parts.length);";
    let (outcome, _) = run_with(program, &l).await;
    assert_eq!(
        error(&outcome).kind,
        ErrorKind::Memory,
        "{}",
        error(&outcome).message
    );
    // Doubling makes ropes, not copies: it meets QuickJS's string length
    // cap (2^30 - 1) first, a clean exception.
    let program = "let s = 'x'; while (s.length < 2e9) s = s + s; return s.length;";
    let (outcome, _) = run_with(program, &l).await;
    let err = error(&outcome);
    assert!(
        matches!(err.kind, ErrorKind::Memory | ErrorKind::Exception),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unbounded_recursion_hits_the_stack_limit() {
    let (outcome, _) = run_js("function f(n) { return f(n + 1) + 1; }\nreturn f(0);").await;
    let err = error(&outcome);
    assert_eq!(err.kind, ErrorKind::Stack, "{}", err.message);
    assert_eq!(err.code(), "STACK_LIMIT");
    assert_eq!(err.location.map(|at| at.line), Some(1));
    // Deep, but not unbounded, recursion fits the default stack.
    let (outcome, _) =
        run_js("function f(n) { return n === 0 ? 0 : f(n - 1) + 1; }\nreturn f(5000);").await;
    assert_eq!(value(&outcome), json!(5000));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn recursion_through_natives_and_getters_does_not_crash() {
    let programs = [
        "const o = {}; o.toString = () => `${o}`; return String(o);",
        "const a = []; a[0] = a; return a.join();",
        "function f() { return [1].map(f); } return f();",
        "const p = new Proxy({}, { get: (t, k, r) => r[k] }); return p.x;",
        "return JSON.parse('['.repeat(100000) + ']'.repeat(100000));",
        "let s = ''; for (let i = 0; i < 100000; i++) s += '('; return eval(s);",
        // Through the engine's own natives: a getter the formatter or the
        // JSON conversion runs, which calls back into them.
        "const o = { get x() { console.log(o); return 1; } }; console.log(o); throw 0;",
        "const o = { get x() { tools.echo(o); return 1; } }; await tools.echo(o); throw 0;",
    ];
    for program in programs {
        let (outcome, _) = run_js(program).await;
        let err = error(&outcome);
        assert!(
            matches!(
                err.kind,
                ErrorKind::Stack | ErrorKind::Exception | ErrorKind::Syntax | ErrorKind::Calls
            ),
            "{program}: {err}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_call_after_max_calls_ends_the_run() {
    let l = limits(|l| l.max_calls = 3);
    let program =
        "for (let i = 0; i < 10; i++) { try { await tools.add({ a: i, b: 0 }); } catch {} }";
    let (outcome, host) = run_with(program, &l).await;
    let err = error(&outcome);
    assert_eq!(err.kind, ErrorKind::Calls);
    assert_eq!(err.code(), "CALL_LIMIT");
    assert_eq!(outcome.calls, 3);
    assert_eq!(host.names().len(), 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hundred_thousand_calls_end_cleanly_and_fast() {
    let started = Instant::now();
    // Not awaited: every call is submitted from one synchronous loop.
    let (outcome, host) =
        run_js("for (let i = 0; i < 100000; i++) tools.add({ a: i, b: 1 });").await;
    assert_eq!(error(&outcome).kind, ErrorKind::Calls);
    assert!(host.names().len() <= Limits::default().max_calls);
    // Awaited one by one, with a limit that allows them all.
    let l = limits(|l| l.max_calls = 100_000);
    let program = "let s = 0; for (let i = 0; i < 100000; i++) s += await tools.add({ a: i, b: 0 }); return s;";
    let (outcome, _) = run_with(program, &l).await;
    assert_eq!(value(&outcome), json!(4_999_950_000_i64));
    assert_eq!(outcome.calls, 100_000);
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn logs_and_the_returned_value_share_the_output_ledger() {
    let l = limits(|l| l.output_bytes = 100);
    let (outcome, _) = run_with("console.log('a'.repeat(60)); return 'b'.repeat(60);", &l).await;
    let err = error(&outcome);
    assert_eq!(err.kind, ErrorKind::Output);
    assert_eq!(err.code(), "OUTPUT_LIMIT");
    assert_eq!(outcome.logs, ["a".repeat(60)]);
    let (outcome, _) = run_with("console.log('a'.repeat(60)); return 'b'.repeat(30);", &l).await;
    assert_eq!(value(&outcome), json!("b".repeat(30)));
    assert_eq!(outcome.output_bytes, 60 + 32);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn too_many_logs_end_the_run_and_keep_what_fits() {
    let l = limits(|l| l.output_bytes = 1000);
    let (outcome, _) = run_with("for (let i = 0; ; i++) console.log('line', i);", &l).await;
    assert_eq!(error(&outcome).kind, ErrorKind::Output);
    let total: usize = outcome.logs.iter().map(String::len).sum();
    assert_eq!(total, 1000);
    assert_eq!(outcome.logs[0], "line 0");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thrown_100_mb_string_is_not_copied_whole() {
    let l = limits(|l| l.memory_bytes = 256 << 20);
    let (outcome, _) = run_with("throw 'x'.repeat(100 * 1024 * 1024);", &l).await;
    let err = error(&outcome);
    assert_eq!(err.kind, ErrorKind::Exception);
    assert!(
        err.message.len() <= toolprism::code::sandbox::MESSAGE_CAP,
        "{}",
        err.message.len()
    );
    assert!(err.message.starts_with("Uncaught \"xxxx"));
    let (outcome, _) = run_with("throw new Error('y'.repeat(100 * 1024 * 1024));", &l).await;
    assert!(error(&outcome).message.len() <= toolprism::code::sandbox::MESSAGE_CAP);
    let (outcome, _) = run_with("console.log('z'.repeat(100 * 1024 * 1024));", &l).await;
    assert_eq!(error(&outcome).kind, ErrorKind::Output);
    assert_eq!(outcome.logs[0].len(), Limits::default().output_bytes);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_aborts_a_hot_loop_promptly() {
    let host = TestHost::new();
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        trigger.cancel();
    });
    let started = Instant::now();
    let outcome = run(
        "while (true) {}",
        &Limits::default(),
        Arc::new(Shared(host)),
        cancel,
    )
    .await;
    assert_eq!(error(&outcome).kind, ErrorKind::Aborted);
    assert_eq!(error(&outcome).code(), "ABORTED");
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_cancels_pending_calls_and_drops_queued_ones() {
    let host = TestHost::new();
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    let watched = host.clone();
    tokio::spawn(async move {
        // Cancel once the first call is running.
        while watched.started.load(Ordering::SeqCst) == 0 {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        trigger.cancel();
    });
    // The write waits for the hang to finish: it never starts.
    let program = "await Promise.all([tools.hang({}), tools.write({}), tools.hang({})]);";
    let outcome = run(
        program,
        &Limits::default(),
        Arc::new(Shared(host.clone())),
        cancel,
    )
    .await;
    assert_eq!(error(&outcome).kind, ErrorKind::Aborted);
    assert_eq!(host.names(), ["hang"]);
    assert_eq!(host.saw_cancel.load(Ordering::SeqCst), 1);
    assert_eq!(
        host.started.load(Ordering::SeqCst),
        host.ended.load(Ordering::SeqCst)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_run_returns_no_call_runs_or_starts() {
    let program = "tools.hang({}); tools.slow({ ms: 100000 }); tools.write({}); return 1;";
    let (outcome, host) = run_js(program).await;
    assert_eq!(value(&outcome), json!(1));
    assert_eq!(
        host.started.load(Ordering::SeqCst),
        host.ended.load(Ordering::SeqCst)
    );
    let started = host.started.load(Ordering::SeqCst);
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(
        host.started.load(Ordering::SeqCst),
        started,
        "nothing started later"
    );
    assert!(!host.names().contains(&"write".to_owned()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_the_run_future_stops_the_engine() {
    let host = TestHost::new();
    let limits = Limits::default();
    let fut = run(
        "while (true) {}",
        &limits,
        Arc::new(Shared(host)),
        CancellationToken::new(),
    );
    let res = tokio::time::timeout(Duration::from_millis(100), fut).await;
    assert!(res.is_err());
    // The engine thread sees the abort flag and exits; a fresh run still works.
    let (outcome, _) = run_js("return 2;").await;
    assert_eq!(value(&outcome), json!(2));
}
