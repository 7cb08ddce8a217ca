//! Host futures are polled on the engine thread, inside the caller's tokio
//! runtime: which thread polls them, what of the runtime they can use (on a
//! multi-thread and on a current-thread runtime), how they progress while
//! the program computes, and how they end (grace, drop, late panics).

use std::future::Future;
use std::pin::{Pin, pin};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use toolprism::code::sandbox::{
    ErrorKind, Host, HostError, HostFuture, Limits, RunOutcome, codes, run,
};

/// Records, for every poll of every host future, the polling thread's name.
#[derive(Default)]
struct Probe {
    poll_threads: Mutex<Vec<String>>,
    call_threads: Mutex<Vec<String>>,
    /// When each named event happened.
    events: Mutex<Vec<(String, Instant)>>,
    dropped: AtomicUsize,
    cleaned_up: AtomicBool,
}

impl Probe {
    fn event(&self, what: &str) {
        self.events
            .lock()
            .unwrap()
            .push((what.to_owned(), Instant::now()));
    }

    fn at(&self, what: &str) -> Option<Instant> {
        self.events
            .lock()
            .unwrap()
            .iter()
            .find(|(w, _)| w == what)
            .map(|(_, t)| *t)
    }
}

fn thread_name() -> String {
    std::thread::current()
        .name()
        .unwrap_or("<unnamed>")
        .to_owned()
}

/// Wraps a host future: records the polling thread, counts the drop.
struct Watched {
    probe: Arc<Probe>,
    inner: HostFuture,
}

impl Future for Watched {
    type Output = Result<Value, HostError>;
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        self.probe.poll_threads.lock().unwrap().push(thread_name());
        self.inner.as_mut().poll(cx)
    }
}

impl Drop for Watched {
    fn drop(&mut self) {
        self.probe.dropped.fetch_add(1, Ordering::SeqCst);
    }
}

struct ProbeHost(Arc<Probe>);

impl Host for ProbeHost {
    fn call(&self, name: String, args: Value, cancel: CancellationToken) -> HostFuture {
        let probe = self.0.clone();
        probe.call_threads.lock().unwrap().push(thread_name());
        let inner: HostFuture = match name.as_str() {
            // Uses what a tool finds in a tokio task: a timer, a spawned
            // task, the blocking pool.
            "runtime" => Box::pin(async move {
                tokio::time::sleep(Duration::from_millis(5)).await;
                let spawned = tokio::spawn(async { 20 }).await.expect("a spawned task");
                let blocking = tokio::task::spawn_blocking(|| 22)
                    .await
                    .expect("a blocking task");
                Ok(json!(
                    spawned + blocking + args["add"].as_i64().unwrap_or(0)
                ))
            }),
            "now" => Box::pin(async { Ok(json!("now")) }),
            "steps" => {
                let probe = probe.clone();
                Box::pin(async move {
                    tokio::time::sleep(Duration::from_millis(5)).await;
                    probe.event("steps: first step done");
                    tokio::time::sleep(Duration::from_millis(5)).await;
                    probe.event("steps: done");
                    Ok(json!("stepped"))
                })
            }
            "first" => Box::pin(async move {
                tokio::time::sleep(Duration::from_millis(5)).await;
                Ok(json!("first"))
            }),
            "second" => {
                let probe = probe.clone();
                probe.event("second: started");
                Box::pin(async { Ok(json!("second")) })
            }
            // Takes 30 ms to clean up once cancelled.
            "tidy" => {
                let probe = probe.clone();
                Box::pin(async move {
                    cancel.cancelled().await;
                    tokio::time::sleep(Duration::from_millis(30)).await;
                    probe.cleaned_up.store(true, Ordering::SeqCst);
                    Err(HostError::new("CANCELLED", "cleaned up"))
                })
            }
            // Ignores its token.
            "stubborn" => Box::pin(async {
                tokio::time::sleep(Duration::from_secs(30)).await;
                Ok(json!("too late"))
            }),
            "late_panic" => Box::pin(async {
                tokio::task::yield_now().await;
                panic!("it panicked on its second poll")
            }),
            // Cancels its own token: that is the call's business only.
            "self_cancel" => Box::pin(async move {
                cancel.cancel();
                tokio::task::yield_now().await;
                Ok(json!("still fine"))
            }),
            _ => Box::pin(
                async move { Err(HostError::new("UNKNOWN_TOOL", format!("no tool {name}"))) },
            ),
        };
        Box::pin(Watched { probe, inner })
    }

    fn concurrent(&self, _name: &str) -> bool {
        true
    }
}

async fn run_probe(program: &str, limits: &Limits) -> (RunOutcome, Arc<Probe>) {
    let probe = Arc::new(Probe::default());
    let outcome = run(
        program,
        limits,
        Arc::new(ProbeHost(probe.clone())),
        CancellationToken::new(),
    )
    .await;
    (outcome, probe)
}

fn value(outcome: &RunOutcome) -> Value {
    match &outcome.result {
        Ok(v) => v.clone().unwrap_or(Value::Null),
        Err(e) => panic!("the run failed: {e}"),
    }
}

const USES_THE_RUNTIME: &str = r#"
    const a = await tools.runtime({ add: 0 });
    const [b, c] = await Promise.all([tools.runtime({ add: 1 }), tools.runtime({ add: 2 })]);
    return [a, b, c, await tools.now({})];
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn host_futures_use_the_callers_multi_thread_runtime_from_the_engine_thread() {
    let (outcome, probe) = run_probe(USES_THE_RUNTIME, &Limits::default()).await;
    assert_eq!(value(&outcome), json!([42, 43, 44, "now"]));
    let calls = probe.call_threads.lock().unwrap().clone();
    let polls = probe.poll_threads.lock().unwrap().clone();
    assert_eq!(calls.len(), 4);
    // Every `call` and every poll ran on the engine thread, none on a
    // tokio worker: no thread hop per call.
    assert!(calls.iter().all(|t| t == "toolprism-js"), "{calls:?}");
    assert!(polls.iter().all(|t| t == "toolprism-js"), "{polls:?}");
    assert!(polls.len() > calls.len(), "the timers made them poll again");
    assert_eq!(probe.dropped.load(Ordering::SeqCst), 4);
}

#[tokio::test(flavor = "current_thread")]
async fn host_futures_use_a_current_thread_runtime_while_its_block_on_runs() {
    // The caller awaits `run` inside this runtime's `block_on`, which drives
    // the timers and runs the spawned task meanwhile.
    let (outcome, probe) = run_probe(USES_THE_RUNTIME, &Limits::default()).await;
    assert_eq!(value(&outcome), json!([42, 43, 44, "now"]));
    let polls = probe.poll_threads.lock().unwrap().clone();
    assert!(polls.iter().all(|t| t == "toolprism-js"), "{polls:?}");
}

#[test]
fn run_outside_a_tokio_runtime_is_an_internal_error() {
    let probe = Arc::new(Probe::default());
    let limits = Limits::default();
    let mut future = pin!(run(
        "return 1",
        &limits,
        Arc::new(ProbeHost(probe)),
        CancellationToken::new(),
    ));
    let Poll::Ready(outcome) = future
        .as_mut()
        .poll(&mut Context::from_waker(Waker::noop()))
    else {
        panic!("without a runtime the run ends at once");
    };
    let err = outcome.result.unwrap_err();
    assert_eq!(err.kind, ErrorKind::Internal);
    assert!(err.message.contains("tokio runtime"), "{}", err.message);
}

#[test]
fn the_run_future_is_send() {
    fn assert_send<T: Send>(_: &T) {}
    let limits = Limits::default();
    let future = run(
        "return 1",
        &limits,
        Arc::new(ProbeHost(Arc::default())),
        CancellationToken::new(),
    );
    assert_send(&future);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_progresses_while_the_program_computes() {
    // The call is submitted, then the program computes for a second before
    // it awaits: the future's later steps run meanwhile (polled from the
    // interrupt handler), not only once the program waits.
    let program = r#"
        const p = tools.steps({});
        const t0 = Date.now();
        while (Date.now() - t0 < 1000) {}
        return await p;
    "#;
    let started = Instant::now();
    let (outcome, probe) = run_probe(program, &Limits::default()).await;
    assert_eq!(value(&outcome), json!("stepped"));
    let done = probe.at("steps: done").expect("the call finished");
    assert!(
        done - started < Duration::from_millis(800),
        "the call finished {:?} after the start, with the loop running for 1 s",
        done - started
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_queued_call_starts_while_the_program_computes() {
    let mut limits = Limits::default();
    limits.max_concurrent = 1;
    let program = r#"
        const a = tools.first({});
        const b = tools.second({});
        const t0 = Date.now();
        while (Date.now() - t0 < 1000) {}
        return [await a, await b];
    "#;
    let started = Instant::now();
    let (outcome, probe) = run_probe(program, &limits).await;
    assert_eq!(value(&outcome), json!(["first", "second"]));
    let second = probe
        .at("second: started")
        .expect("the second call started");
    assert!(
        second - started < Duration::from_millis(800),
        "the queued call started {:?} after the start",
        second - started
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_running_call_gets_the_grace_to_end_cleanly() {
    let started = Instant::now();
    let (outcome, probe) = run_probe("tools.tidy({}); return 1;", &Limits::default()).await;
    assert_eq!(value(&outcome), json!(1));
    // It was cancelled when the run ended, and polled until it had cleaned up.
    assert!(probe.cleaned_up.load(Ordering::SeqCst));
    assert_eq!(probe.dropped.load(Ordering::SeqCst), 1);
    assert!(started.elapsed() >= Duration::from_millis(30));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_that_ignores_its_token_is_dropped_after_the_grace() {
    let mut limits = Limits::default();
    limits.cancel_grace = Duration::from_millis(100);
    let started = Instant::now();
    let (outcome, probe) = run_probe("tools.stubborn({}); return 1;", &limits).await;
    assert_eq!(value(&outcome), json!(1));
    let took = started.elapsed();
    assert!(took >= Duration::from_millis(100), "{took:?}");
    assert!(took < Duration::from_secs(10), "{took:?}");
    assert_eq!(
        probe.dropped.load(Ordering::SeqCst),
        1,
        "dropped before run returned"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panic_on_a_later_poll_is_a_host_panic_for_the_program() {
    let program = r#"
        try { await tools.late_panic({}); } catch (e) { return [e.code, e.message]; }
    "#;
    let (outcome, _) = run_probe(program, &Limits::default()).await;
    assert_eq!(
        value(&outcome),
        json!([
            codes::HOST_PANIC,
            "tools.late_panic failed inside the host (it panicked: it panicked on its second poll)"
        ])
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_cancelling_its_own_token_cancels_nothing_else() {
    let program = r#"
        const slow = tools.steps({});
        const mine = await tools.self_cancel({});
        return [mine, await slow];
    "#;
    let (outcome, _) = run_probe(program, &Limits::default()).await;
    assert_eq!(value(&outcome), json!(["still fine", "stepped"]));
}
