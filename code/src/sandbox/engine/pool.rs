//! The engine threads, kept between runs.
//!
//! Starting an OS thread, a QuickJS runtime and a context for every run,
//! and freeing them, cost far more than the run of a short program. A run
//! goes to an engine thread waiting for one (the one that waited least,
//! among those with the stack the run's limits need), or to a new thread if
//! none waits. A thread serves one run at a time, each in a runtime and
//! context of its own ([`Prepared`](super::Prepared)): what a thread keeps
//! between runs is its stack and nothing JavaScript. After a run it lists
//! itself idle, sends the outcome, then frees the run's runtime and makes a
//! new one for its next run, and marks itself ready. A run goes to a ready
//! thread if there is one (it starts at once), else to a listed thread
//! still making its runtime (it starts once that is done, as soon as it
//! would have in a new thread, without a thread's start). Between a model's
//! calls, the engine's set-up and clean-up are thus off the run's path;
//! back to back, they are on it, or on another core. At most [`KEEP_IDLE`]
//! threads wait at once (a burst of concurrent runs leaves no more behind);
//! a thread that waits [`IDLE_FOR`] with no run ends.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use tokio::sync::oneshot;

use super::{Job, STACK_MARGIN, prepare, serve};
use crate::sandbox::{MAX_STACK_BYTES, RunOutcome};

/// The most engine threads waiting for a run at once.
pub(crate) const KEEP_IDLE: usize = 4;

/// How long an engine thread waits for its next run before it ends.
pub(crate) const IDLE_FOR: Duration = Duration::from_secs(10);

/// A run and where its outcome goes.
pub(crate) struct Work {
    pub(crate) job: Job,
    pub(crate) done: oneshot::Sender<RunOutcome>,
}

/// An engine thread waiting for a run.
struct Idle {
    /// Its stack size: it only serves runs that need this one.
    stack: usize,
    id: u64,
    work: mpsc::Sender<Work>,
    /// Whether its next run's runtime is made (else it is freeing the last
    /// run's and making the next: a run handed to it starts after that).
    ready: Arc<AtomicBool>,
}

/// The idle engine threads, the one that waited least last.
static IDLE: Mutex<Vec<Idle>> = Mutex::new(Vec::new());

static NEXT_ID: AtomicU64 = AtomicU64::new(0);

fn idle() -> MutexGuard<'static, Vec<Idle>> {
    IDLE.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The stack an engine thread needs for runs with these limits: the
/// JavaScript stack cap and a margin for the engine's own frames.
fn stack_size(job: &Job) -> usize {
    job.limits.stack_bytes.min(MAX_STACK_BYTES) + STACK_MARGIN
}

/// Hands `job` to an idle engine thread whose runtime is ready, else to
/// one making it, else to a new thread.
pub(crate) fn submit(job: Job, done: oneshot::Sender<RunOutcome>) -> std::io::Result<()> {
    let stack = stack_size(&job);
    let mut work = Work { job, done };
    loop {
        let waiting = {
            let mut idle = idle();
            idle.iter()
                .rposition(|w| w.stack == stack && w.ready.load(Ordering::Acquire))
                .or_else(|| idle.iter().rposition(|w| w.stack == stack))
                .map(|at| idle.remove(at))
        };
        let Some(thread) = waiting else {
            return start(stack, work);
        };
        match thread.work.send(work) {
            Ok(()) => return Ok(()),
            // It ended meanwhile (it cannot once taken off the list; this
            // only guards against a thread that died).
            Err(mpsc::SendError(back)) => work = back,
        }
    }
}

/// Starts an engine thread with `work` as its first run.
fn start(stack: usize, work: Work) -> std::io::Result<()> {
    let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    std::thread::Builder::new()
        .name("toolprism-js".to_owned())
        .stack_size(stack)
        .spawn(move || serve_runs(id, stack, work))
        .map(|_| ())
}

/// The engine thread: serves runs until it has waited too long for one, or
/// the idle list was full when it finished one. It lists itself before it
/// sends a run's outcome (the caller's next run finds it), then frees the
/// run's runtime, makes the next one and marks itself ready.
fn serve_runs(id: u64, stack: usize, first: Work) {
    let (sender, receiver) = mpsc::channel();
    let ready = Arc::new(AtomicBool::new(false));
    let mut next = Some(first);
    let mut prepared = None;
    while let Some(Work { job, done }) = next.take() {
        let mut waits = false;
        serve(prepared.take(), job, done, || {
            waits = wait_listed(id, stack, &sender, &ready);
        });
        if !waits {
            return;
        }
        // One that could not be made is made by the run.
        prepared = prepare().ok();
        ready.store(true, Ordering::Release);
        next = next_run(id, &receiver, IDLE_FOR);
    }
}

/// Puts this thread on the idle list, not ready, unless [`KEEP_IDLE`]
/// threads are on it.
fn wait_listed(
    id: u64,
    stack: usize,
    sender: &mpsc::Sender<Work>,
    ready: &Arc<AtomicBool>,
) -> bool {
    let mut idle = idle();
    if idle.len() >= KEEP_IDLE {
        return false;
    }
    ready.store(false, Ordering::Release);
    idle.push(Idle {
        stack,
        id,
        work: sender.clone(),
        ready: ready.clone(),
    });
    true
}

/// The next run, or `None` once this thread has waited `idle_for` and is
/// off the idle list.
fn next_run(id: u64, receiver: &mpsc::Receiver<Work>, idle_for: Duration) -> Option<Work> {
    loop {
        match receiver.recv_timeout(idle_for) {
            Ok(work) => return Some(work),
            Err(RecvTimeoutError::Disconnected) => return None,
            Err(RecvTimeoutError::Timeout) => {
                let mut idle = idle();
                if let Some(at) = idle.iter().position(|w| w.id == id) {
                    idle.remove(at);
                    return None;
                }
                // Taken off the list by a caller: its run is on the way.
            }
        }
    }
}

#[cfg(test)]
mod tests {
    //! One engine thread serving runs one after the other, as the pool has
    //! it serve them: whatever a run does, the next one finds a new runtime
    //! and context and its own limits. Then the pool itself.

    use std::collections::HashSet;
    use std::sync::Arc;
    use std::sync::atomic::AtomicUsize;
    use std::task::Waker;
    use std::thread::ThreadId;

    use serde_json::{Value, json};
    use tokio_util::sync::CancellationToken;

    use super::*;
    use crate::sandbox::{ErrorKind, Host, HostError, HostFuture, Limits, run};

    /// `echo` answers its arguments; `hang` answers once cancelled; `nap`
    /// answers after `ms`; `stray` keeps its waker (in `wakers`) and never
    /// answers. Every call records the thread it was made on.
    #[derive(Default)]
    struct Tools {
        wakers: Mutex<Vec<Waker>>,
        threads: Mutex<Vec<ThreadId>>,
        started: AtomicUsize,
        gate: tokio::sync::Notify,
    }

    struct Stray(Arc<Tools>);

    impl std::future::Future for Stray {
        type Output = Result<Value, HostError>;
        fn poll(
            self: std::pin::Pin<&mut Self>,
            cx: &mut std::task::Context<'_>,
        ) -> std::task::Poll<Self::Output> {
            self.0.wakers.lock().unwrap().push(cx.waker().clone());
            std::task::Poll::Pending
        }
    }

    struct Shared(Arc<Tools>);

    impl Host for Shared {
        fn call(&self, name: String, args: Value, cancel: CancellationToken) -> HostFuture {
            let tools = self.0.clone();
            tools
                .threads
                .lock()
                .unwrap()
                .push(std::thread::current().id());
            tools.started.fetch_add(1, Ordering::SeqCst);
            match name.as_str() {
                "stray" => Box::pin(Stray(tools)),
                _ => Box::pin(async move {
                    match name.as_str() {
                        "echo" => Ok(args),
                        "hang" => {
                            cancel.cancelled().await;
                            Err(HostError::new("CANCELLED", "cancelled"))
                        }
                        "nap" => {
                            let ms = args["ms"].as_u64().unwrap_or(10);
                            tokio::time::sleep(Duration::from_millis(ms)).await;
                            Ok(json!(ms))
                        }
                        "gate" => {
                            tools.gate.notified().await;
                            Ok(json!("open"))
                        }
                        _ => Err(HostError::new("UNKNOWN_TOOL", name)),
                    }
                }),
            }
        }

        fn concurrent(&self, _name: &str) -> bool {
            true
        }
    }

    fn job(
        program: &str,
        limits: Limits,
        tools: &Arc<Tools>,
        runtime: &tokio::runtime::Handle,
    ) -> Job {
        Job {
            program: program.to_owned(),
            limits,
            abort: Arc::default(),
            signal: Arc::default(),
            host: Arc::new(Shared(tools.clone())),
            cancel: CancellationToken::new(),
            runtime: runtime.clone(),
        }
    }

    /// Each program's outcome, served in order by one engine thread (the
    /// test's own, with an engine thread's stack), with one host. `between`
    /// runs on the host before each run but the first.
    fn on_one_thread(
        runs: Vec<(&'static str, Limits)>,
        between: impl Fn(&Tools) + Send + 'static,
    ) -> Vec<RunOutcome> {
        let tokio = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let handle = tokio.handle().clone();
        std::thread::Builder::new()
            .stack_size(MAX_STACK_BYTES + STACK_MARGIN)
            .spawn(move || {
                let tools = Arc::new(Tools::default());
                let mut outcomes = Vec::new();
                for (i, (program, limits)) in runs.into_iter().enumerate() {
                    if i > 0 {
                        between(&tools);
                    }
                    let (done, outcome) = oneshot::channel();
                    // As the pool serves a run: in a runtime made before it.
                    serve(
                        prepare().ok(),
                        job(program, limits, &tools, &handle),
                        done,
                        || {},
                    );
                    outcomes.push(outcome.blocking_recv().expect("an outcome"));
                }
                outcomes
            })
            .unwrap()
            .join()
            .unwrap()
    }

    fn value(outcome: &RunOutcome) -> Value {
        match &outcome.result {
            Ok(v) => v.clone().unwrap_or(Value::Null),
            Err(e) => panic!("the run failed: {e}"),
        }
    }

    fn kind(outcome: &RunOutcome) -> ErrorKind {
        match &outcome.result {
            Ok(v) => panic!("the run succeeded with {v:?}"),
            Err(e) => e.kind,
        }
    }

    fn with(f: impl FnOnce(&mut Limits)) -> Limits {
        let mut limits = Limits::default();
        f(&mut limits);
        limits
    }

    /// What a program sees of the globals, prototypes and `tools` that a
    /// run could tamper with.
    const LOOK: &str = r#"
        const e = await tools.nope({}).catch((e) => e);
        return [
            typeof leak, typeof declared, "polluted" in {}, "trap" in {}, typeof [].push,
            typeof JSON.parse, typeof Promise.prototype.then, String(new Error("e")),
            Object.isFrozen(Object.prototype), Object.isFrozen(Array.prototype),
            typeof console.log.call, Math.random() < 1, e.name, e instanceof ToolCallError,
            /program:2:/.test(e.stack), (await tools.echo({ a: [1] })).a[0],
        ];
    "#;

    fn untouched() -> Value {
        json!([
            "undefined",
            "undefined",
            false,
            false,
            "function",
            "function",
            "function",
            "Error: e",
            false,
            false,
            "function",
            true,
            "ToolCallError",
            true,
            true,
            1
        ])
    }

    #[test]
    fn globals_and_prototypes_a_run_tampered_with_are_new_in_the_next() {
        let tamper = r#"
            globalThis.leak = { a: 1 };
            var declared = 1;
            Object.prototype.polluted = 2;
            Object.defineProperty(Object.prototype, "trap", { get() { throw new Error("trap"); } });
            Array.prototype.push = null;
            JSON.parse = null;
            Promise.prototype.then = null;
            Error.prototype.toString = () => "tampered";
            Error.stackTraceLimit = 0;
            Function.prototype.call = null;
            Math.random = () => 4;
            Symbol.for("shared");
            try { ToolCallError.prototype.name = "X"; } catch {}
            Object.freeze(Object.prototype);
            Object.freeze(Array.prototype);
            return 1;
        "#;
        let runs = on_one_thread(
            vec![
                (LOOK, Limits::default()),
                (tamper, Limits::default()),
                (LOOK, Limits::default()),
            ],
            |_| {},
        );
        assert_eq!(value(&runs[0]), untouched());
        assert_eq!(value(&runs[1]), json!(1));
        assert_eq!(
            value(&runs[2]),
            untouched(),
            "the tampering run left nothing"
        );
    }

    #[test]
    fn promises_that_never_settle_and_calls_that_never_answer_leave_nothing() {
        let short = with(|l| {
            l.wall = Duration::from_millis(300);
            l.cancel_grace = Duration::from_millis(50);
        });
        let runs = on_one_thread(
            vec![
                (
                    "globalThis.p = new Promise(() => {}); await p;",
                    Limits::default(),
                ),
                (
                    "tools.hang({}).then(() => { globalThis.late = 1; }); tools.stray({}); await new Promise(() => {});",
                    short,
                ),
                (LOOK, Limits::default()),
            ],
            |_| {},
        );
        assert_eq!(kind(&runs[0]), ErrorKind::Stalled);
        assert_eq!(kind(&runs[1]), ErrorKind::Wall);
        assert_eq!(value(&runs[2]), untouched());
    }

    #[test]
    fn a_waker_of_an_earlier_run_firing_during_the_next_changes_nothing() {
        let grace = with(|l| l.cancel_grace = Duration::from_millis(20));
        let runs = on_one_thread(
            vec![
                ("tools.stray({}); return 1;", grace),
                (
                    "return [await tools.nap({ ms: 100 }), await tools.echo({ b: 2 })];",
                    Limits::default(),
                ),
            ],
            |tools| {
                // Fire the dropped call's waker while the next run waits.
                let wakers = std::mem::take(&mut *tools.wakers.lock().unwrap());
                std::thread::spawn(move || {
                    for _ in 0..5 {
                        std::thread::sleep(Duration::from_millis(20));
                        wakers.iter().for_each(Waker::wake_by_ref);
                    }
                });
            },
        );
        assert_eq!(value(&runs[0]), json!(1));
        assert_eq!(value(&runs[1]), json!([100, { "b": 2 }]));
    }

    #[test]
    fn jobs_a_run_left_queued_never_run_in_the_next() {
        let cut = with(|l| l.compute = Duration::from_millis(100));
        let runs = on_one_thread(
            vec![
                (
                    "for (let i = 0; i < 1000; i++) Promise.resolve().then(() => { globalThis.late = i; }); while (true) {}",
                    cut,
                ),
                (
                    "await null; await null; return typeof late;",
                    Limits::default(),
                ),
            ],
            |_| {},
        );
        assert_eq!(kind(&runs[0]), ErrorKind::Compute);
        assert_eq!(value(&runs[1]), json!("undefined"));
    }

    #[test]
    fn a_loop_cut_by_the_compute_limit_leaves_the_next_run_its_whole_budget() {
        let cut = with(|l| l.compute = Duration::from_millis(200));
        let runs = on_one_thread(
            vec![
                ("while (true) {}", cut.clone()),
                (
                    "let n = 0; for (let i = 0; i < 100000; i++) n += i; return n;",
                    cut,
                ),
            ],
            |_| {},
        );
        assert_eq!(kind(&runs[0]), ErrorKind::Compute);
        assert_eq!(value(&runs[1]), json!(4_999_950_000_i64));
        assert!(runs[1].compute < Duration::from_millis(200));
    }

    #[test]
    fn a_run_out_of_memory_leaves_the_next_run_the_whole_heap() {
        let small = with(|l| l.memory_bytes = 8 << 20);
        let fill = "const s = 'y'.repeat(5 << 20); return s.length;";
        let runs = on_one_thread(
            vec![
                (fill, small.clone()),
                (
                    "const a = []; while (true) a.push('x'.repeat(1000) + a.length);",
                    small.clone(),
                ),
                (fill, small),
            ],
            |_| {},
        );
        assert_eq!(value(&runs[0]), json!(5 << 20));
        assert_eq!(kind(&runs[1]), ErrorKind::Memory);
        assert_eq!(value(&runs[2]), json!(5 << 20));
    }

    #[test]
    fn a_stack_overflow_leaves_the_next_run_the_whole_stack() {
        let depth = "let d = 0; const f = () => { d++; f(); }; try { f(); } catch {} return d;";
        let runs = on_one_thread(
            vec![
                (depth, Limits::default()),
                (
                    "const f = (n) => f(n + 1) + 1; return f(0);",
                    Limits::default(),
                ),
                (depth, Limits::default()),
            ],
            |_| {},
        );
        assert_eq!(kind(&runs[1]), ErrorKind::Stack);
        let (before, after) = (value(&runs[0]), value(&runs[2]));
        assert!(before.as_u64().unwrap() > 1000, "{before}");
        assert_eq!(before, after);
    }

    #[test]
    fn each_run_has_its_own_limits() {
        let small = with(|l| l.memory_bytes = 4 << 20);
        let fill = "return 'y'.repeat(6 << 20).length;";
        let runs = on_one_thread(
            vec![
                (fill, Limits::default()),
                (fill, small),
                (fill, Limits::default()),
            ],
            |_| {},
        );
        assert_eq!(value(&runs[0]), json!(6 << 20));
        assert_eq!(kind(&runs[1]), ErrorKind::Memory);
        assert_eq!(value(&runs[2]), json!(6 << 20));
    }

    #[test]
    fn a_runtime_made_for_a_run_that_never_came_is_freed_cleanly() {
        // What a thread that ends while waiting does (QuickJS asserts, in a
        // debug build, that freeing a runtime leaves no value behind).
        for _ in 0..3 {
            drop(prepare().expect("a runtime"));
        }
    }

    /// The tests of the pool itself run one at a time: they count its
    /// threads.
    static POOL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

    /// Waits until `n` threads are listed idle and ready (a safety net, not
    /// a timing).
    async fn listed(n: usize) {
        let ready = || {
            let idle = idle();
            (
                idle.len(),
                idle.iter()
                    .filter(|w| w.ready.load(Ordering::Acquire))
                    .count(),
            )
        };
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        while ready() != (n, n) && std::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        assert_eq!(ready(), (n, n));
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_run_goes_to_a_listed_thread_with_its_runtime_ready() {
        let _one_at_a_time = POOL.lock().await;
        let tools = Arc::new(Tools::default());
        for _ in 0..3 {
            let outcome = run(
                "return await tools.echo({ n: 1 });",
                &Limits::default(),
                Arc::new(Shared(tools.clone())),
                CancellationToken::new(),
            )
            .await;
            assert_eq!(value(&outcome), json!({ "n": 1 }));
            // Listed once it has freed this run's runtime and made the next.
            listed(1).await;
        }
        let threads: HashSet<ThreadId> = tools.threads.lock().unwrap().iter().copied().collect();
        assert_eq!(threads.len(), 1, "one engine thread served the three runs");
        assert!(!threads.contains(&std::thread::current().id()));
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn no_more_than_keep_idle_threads_wait_after_a_burst() {
        let _one_at_a_time = POOL.lock().await;
        let tools = Arc::new(Tools::default());
        let n = KEEP_IDLE + 3;
        let runs: Vec<_> = (0..n)
            .map(|_| {
                let host = Arc::new(Shared(tools.clone()));
                tokio::spawn(async move {
                    run(
                        "return await tools.gate({});",
                        &Limits::default(),
                        host,
                        CancellationToken::new(),
                    )
                    .await
                })
            })
            .collect();
        // Every run is on a thread of its own, waiting at the gate.
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        while tools.started.load(Ordering::SeqCst) < n && std::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        assert_eq!(tools.started.load(Ordering::SeqCst), n);
        tools.gate.notify_waiters();
        for run in runs {
            assert_eq!(value(&run.await.unwrap()), json!("open"));
        }
        let threads: HashSet<ThreadId> = tools.threads.lock().unwrap().iter().copied().collect();
        assert_eq!(threads.len(), n);
        // The others end after their run: the list never holds more.
        listed(KEEP_IDLE).await;
    }

    #[test]
    fn a_thread_that_waited_long_enough_leaves_the_list() {
        let _one_at_a_time = POOL.blocking_lock();
        let (sender, receiver) = mpsc::channel();
        let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        idle().push(Idle {
            stack: usize::MAX,
            id,
            work: sender,
            ready: Arc::default(),
        });
        assert!(next_run(id, &receiver, Duration::from_millis(10)).is_none());
        assert!(idle().iter().all(|w| w.id != id));
    }
}
