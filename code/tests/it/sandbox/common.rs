//! A real host for the integration tests: it records what it was asked and
//! how calls overlapped. Every test file uses only part of it.
#![allow(dead_code, unreachable_pub)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use toolprism::code::sandbox::{Host, HostError, HostFuture, Limits, RunOutcome, run};

/// Records calls; see `call` for the tools it has.
#[derive(Default)]
pub struct TestHost {
    /// `(name, args)` in the order the calls started.
    pub calls: Mutex<Vec<(String, Value)>>,
    /// `start name` / `end name` events, in order.
    pub events: Mutex<Vec<String>>,
    pub in_flight: AtomicUsize,
    pub max_in_flight: AtomicUsize,
    /// Calls in flight right after each call started, in start order.
    pub in_flight_at_start: Mutex<Vec<usize>>,
    pub started: AtomicUsize,
    /// Calls whose future finished or was dropped.
    pub ended: AtomicUsize,
    /// Calls that saw their cancellation token cancelled.
    pub saw_cancel: AtomicUsize,
}

/// Counts a call as ended when its future completes or is dropped.
struct Ended(Arc<TestHost>, String);

impl Drop for Ended {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::SeqCst);
        self.0.ended.fetch_add(1, Ordering::SeqCst);
        self.0
            .events
            .lock()
            .unwrap()
            .push(format!("end {}", self.1));
    }
}

impl TestHost {
    pub fn new() -> Arc<Self> {
        Arc::new(TestHost::default())
    }

    pub fn names(&self) -> Vec<String> {
        self.calls
            .lock()
            .unwrap()
            .iter()
            .map(|(n, _)| n.clone())
            .collect()
    }
}

/// Waits until `cond` holds or `limit` passes (a safety net, not a timing).
async fn wait_until(limit: Duration, cond: impl Fn() -> bool) {
    let until = tokio::time::Instant::now() + limit;
    while !cond() && tokio::time::Instant::now() < until {
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
}

pub struct Shared(pub Arc<TestHost>);

impl Host for Shared {
    fn call(&self, name: String, args: Value, cancel: CancellationToken) -> HostFuture {
        let host = self.0.clone();
        if name == "panic_sync" {
            panic!("call() itself panicked");
        }
        host.calls
            .lock()
            .unwrap()
            .push((name.clone(), args.clone()));
        host.events.lock().unwrap().push(format!("start {name}"));
        host.started.fetch_add(1, Ordering::SeqCst);
        let now = host.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        host.max_in_flight.fetch_max(now, Ordering::SeqCst);
        let start = {
            let mut at_start = host.in_flight_at_start.lock().unwrap();
            at_start.push(now);
            at_start.len() - 1
        };
        let guard = Ended(host.clone(), name.clone());
        Box::pin(async move {
            let _guard = guard;
            match name.as_str() {
                "echo" => Ok(args),
                "add" => Ok(json!(
                    args["a"].as_i64().unwrap_or(0) + args["b"].as_i64().unwrap_or(0)
                )),
                "fail" => Err(HostError::new("BOOM", "it failed on purpose")),
                "big" => Ok(json!({ "id": 9007199254740993_u64 })),
                "max" => Ok(json!({ "id": 9007199254740991_u64, "neg": -9007199254740991_i64 })),
                "deep" => {
                    let mut v = json!(1);
                    for _ in 0..200 {
                        v = json!([v]);
                    }
                    Ok(v)
                }
                "huge" => Ok(json!("x".repeat(args["n"].as_u64().unwrap_or(0) as usize))),
                "panic" => panic!("the tool panicked"),
                "slow" => {
                    let ms = args["ms"].as_u64().unwrap_or(100);
                    tokio::select! {
                        () = tokio::time::sleep(Duration::from_millis(ms)) => Ok(json!("slept")),
                        () = cancel.cancelled() => {
                            host.saw_cancel.fetch_add(1, Ordering::SeqCst);
                            Err(HostError::new("CANCELLED", "cancelled"))
                        }
                    }
                }
                "hang" => {
                    cancel.cancelled().await;
                    host.saw_cancel.fetch_add(1, Ordering::SeqCst);
                    Err(HostError::new("CANCELLED", "cancelled"))
                }
                // Concurrent: each waits until it has been in flight together
                // with `expect - 1` others (or a safety limit), so overlap is
                // observed, not timed. While this call runs, the most calls
                // in flight at any later start includes it.
                n if n.starts_with("read") => {
                    let expect = args["expect"].as_u64().unwrap_or(1) as usize;
                    wait_until(Duration::from_secs(5), || {
                        let at_start = host.in_flight_at_start.lock().unwrap();
                        at_start[start..].iter().max().copied().unwrap_or(0) >= expect
                    })
                    .await;
                    tokio::task::yield_now().await;
                    Ok(json!(n))
                }
                "write" => {
                    tokio::task::yield_now().await;
                    Ok(json!("written"))
                }
                _ => Err(HostError::new(
                    "UNKNOWN_TOOL",
                    format!("no tool named {name:?}"),
                )),
            }
        })
    }

    fn concurrent(&self, name: &str) -> bool {
        name != "write"
    }
}

/// Runs `program` with default limits and a fresh host.
pub async fn run_js(program: &str) -> (RunOutcome, Arc<TestHost>) {
    run_with(program, &Limits::default()).await
}

/// Runs `program` with `limits` and a fresh host.
pub async fn run_with(program: &str, limits: &Limits) -> (RunOutcome, Arc<TestHost>) {
    let host = TestHost::new();
    let outcome = run(
        program,
        limits,
        Arc::new(Shared(host.clone())),
        CancellationToken::new(),
    )
    .await;
    (outcome, host)
}

/// The returned value of a run that must succeed.
pub fn value(outcome: &RunOutcome) -> Value {
    match &outcome.result {
        Ok(v) => v.clone().unwrap_or(Value::Null),
        Err(e) => panic!("the run failed: {e}\nlogs: {:?}", outcome.logs),
    }
}

/// The error of a run that must fail.
pub fn error(outcome: &RunOutcome) -> &toolprism::code::sandbox::RunError {
    match &outcome.result {
        Ok(v) => panic!("the run succeeded with {v:?}; logs: {:?}", outcome.logs),
        Err(e) => e,
    }
}
