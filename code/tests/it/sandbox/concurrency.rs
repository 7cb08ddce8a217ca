//! Nested calls: submission order, overlap of concurrent tools, exclusive
//! tools alone. The host records what overlapped; nothing here is timed.

use super::common;

use common::{run_js, run_with, value};
use serde_json::json;
use toolprism::code::sandbox::Limits;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_calls_overlap_up_to_max_concurrent() {
    // Each call waits until `expect` calls are in flight: with overlap
    // capped at 10, each batch of ten sees ten at once (the last five, five).
    let program = r#"
        const calls = [];
        for (let i = 0; i < 25; i++) calls.push(tools["read" + i]({ expect: i < 20 ? 10 : 5 }));
        return (await Promise.all(calls)).length;
    "#;
    let (outcome, host) = run_js(program).await;
    assert_eq!(value(&outcome), json!(25));
    assert_eq!(
        host.max_in_flight.load(std::sync::atomic::Ordering::SeqCst),
        10
    );
    let expected: Vec<String> = (0..25).map(|i| format!("read{i}")).collect();
    assert_eq!(host.names(), expected, "calls start in submission order");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn max_concurrent_is_configurable() {
    let mut limits = Limits::default();
    limits.max_concurrent = 3;
    let program = r#"
        const calls = [];
        for (let i = 0; i < 7; i++) calls.push(tools["read" + i]({ expect: i < 6 ? 3 : 1 }));
        await Promise.all(calls);
    "#;
    let (outcome, host) = run_with(program, &limits).await;
    assert_eq!(outcome.result, Ok(None));
    assert_eq!(
        host.max_in_flight.load(std::sync::atomic::Ordering::SeqCst),
        3
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_non_concurrent_call_runs_alone_and_later_calls_wait_for_it() {
    let program = r#"
        const p = [
            tools.readA({ expect: 2 }),
            tools.readB({ expect: 2 }),
            tools.write({}),
            tools.readC({ expect: 2 }),
            tools.readD({ expect: 2 }),
        ];
        return await Promise.all(p);
    "#;
    let (outcome, host) = run_js(program).await;
    assert_eq!(
        value(&outcome),
        json!(["readA", "readB", "written", "readC", "readD"])
    );
    let events = host.events.lock().unwrap().clone();
    let at = |e: &str| {
        events
            .iter()
            .position(|x| x == e)
            .unwrap_or_else(|| panic!("{e} in {events:?}"))
    };
    // A and B overlapped (each waited for the other to start).
    assert!(at("start readB") < at("end readA"), "{events:?}");
    // The write started after both ended, and ended before C or D started.
    assert!(
        at("start write") > at("end readA") && at("start write") > at("end readB"),
        "{events:?}"
    );
    assert!(
        at("end write") < at("start readC") && at("end write") < at("start readD"),
        "{events:?}"
    );
    // C and D overlapped again.
    assert!(at("start readD") < at("end readC"), "{events:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sequential_awaits_are_sequential() {
    let program = r#"
        const out = [];
        for (let i = 0; i < 5; i++) out.push(await tools.add({ a: i, b: 1 }));
        return out;
    "#;
    let (outcome, host) = run_js(program).await;
    assert_eq!(value(&outcome), json!([1, 2, 3, 4, 5]));
    assert_eq!(
        host.max_in_flight.load(std::sync::atomic::Ordering::SeqCst),
        1
    );
}
