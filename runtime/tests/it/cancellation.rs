//! Timeouts and cancellation (C9, docs/contract.md, and step 4 of the
//! pipeline there): a call cancelled before dispatch runs no phase and is
//! `ABORTED_BEFORE_DISPATCH`; a tool that sees the cancellation keeps its
//! own error; a blocking tool keeps its timeout on both runtime flavours,
//! and its body learns that nobody waits for it, also when the caller
//! drops the call's future.

use crate::common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use common::{N, Ok_, runtime};
use toolprism::log::SessionLog;
use toolprism::{
    CallOptions, CancellationToken, ContentBlock, NoMeta, PostDecision, PreDecision, Registry,
    Tool, ToolCall, ToolContext, ToolError, ToolInfo, tool,
};

// ---------------------------------------------------------------------------
// C9: cancellation, as the reference system does it
// ---------------------------------------------------------------------------

#[test]
fn c9_a_call_cancelled_before_dispatch_runs_no_phase() {
    let pre = Arc::new(AtomicUsize::new(0));
    let post = Arc::new(AtomicUsize::new(0));
    let (p1, p2) = (pre.clone(), post.clone());
    let dir = tempfile::tempdir().unwrap();
    let registry = Registry::builder()
        .tool(Ok_)
        .pre_execute(move |_: &toolprism::PreExecute<'_>| {
            p1.fetch_add(1, Ordering::SeqCst);
            PreDecision::Allow
        })
        .post_execute(move |_: &toolprism::PostExecute<'_>| {
            p2.fetch_add(1, Ordering::SeqCst);
            PostDecision::Accept
        })
        .log(SessionLog::create(dir.path().join("s.jsonl")).unwrap())
        .build()
        .unwrap();
    let cancel = CancellationToken::new();
    cancel.cancel();
    let options = CallOptions::new().with_cancel(cancel);
    let out =
        runtime().block_on(registry.call_with(ToolCall::new("1", "ok", r#"{"n":1}"#), &options));
    assert_eq!(out.code().unwrap(), "ABORTED_BEFORE_DISPATCH");
    assert_eq!(
        (pre.load(Ordering::SeqCst), post.load(Ordering::SeqCst)),
        (0, 0)
    );
    let read = toolprism::log::read_log(registry.session_log().unwrap().path()).unwrap();
    let results = read
        .events
        .iter()
        .filter(|e| matches!(e, toolprism::log::LogEvent::Result { .. }))
        .count();
    assert_eq!(
        results, 1,
        "one ABORTED_BEFORE_DISPATCH result is published"
    );
}

#[test]
fn c9_a_tool_that_sees_cancellation_keeps_its_own_error() {
    struct Careful;
    impl Tool for Careful {
        type Args = N;
        type Value = i64;
        type Meta = NoMeta;
        const INFO: ToolInfo = ToolInfo::new("careful", "Stops cleanly when cancelled.");
        async fn execute(&self, _: N, cx: &ToolContext<'_>) -> Result<i64, ToolError> {
            cx.cancelled().await;
            Err(ToolError::new("stopped after writing 3 of 5 files").with_code("PARTIAL_WRITE"))
        }
        fn render(_: &N, v: &i64) -> Vec<ContentBlock> {
            vec![ContentBlock::text(v.to_string())]
        }
    }
    let registry = Registry::builder().tool(Careful).build().unwrap();
    let cancel = CancellationToken::new();
    let options = CallOptions::new().with_cancel(cancel.clone());
    let out = runtime().block_on(async {
        let canceller = async {
            tokio::time::sleep(Duration::from_millis(20)).await;
            cancel.cancel();
        };
        let (out, ()) = tokio::join!(
            registry.call_with(ToolCall::new("1", "careful", r#"{"n":1}"#), &options),
            canceller
        );
        out
    });
    assert_eq!(out.code().unwrap(), "PARTIAL_WRITE", "{out:?}");
    assert!(out.error().unwrap().message.contains("3 of 5"));
}

// ---------------------------------------------------------------------------
// C9: blocking work keeps its timeout
// ---------------------------------------------------------------------------

/// A blocking tool: sleeps its thread, then reports whether it saw the
/// cancellation that the timeout sends.
struct Sleeper {
    saw_cancel: Arc<AtomicUsize>,
}

impl Tool for Sleeper {
    type Args = N;
    type Value = i64;
    type Meta = NoMeta;
    const INFO: ToolInfo =
        ToolInfo::new("sleeper", "Sleeps n milliseconds, blocking its thread.").with_blocking(true);
    async fn execute(&self, args: N, cx: &ToolContext<'_>) -> Result<i64, ToolError> {
        self.execute_blocking(args, cx)
    }
    fn execute_blocking(&self, args: N, cx: &ToolContext<'_>) -> Result<i64, ToolError> {
        std::thread::sleep(Duration::from_millis(args.n as u64));
        if cx.is_cancelled() {
            self.saw_cancel.fetch_add(1, Ordering::SeqCst);
        }
        Ok(args.n)
    }
    fn render(_: &N, v: &i64) -> Vec<ContentBlock> {
        vec![ContentBlock::text(v.to_string())]
    }
}

struct BlockingSleep;

/// Sleeps n milliseconds, blocking its thread; declared with the attribute.
#[tool(name = "blocking_sleep", blocking)]
impl BlockingSleep {
    fn execute(args: N) -> i64 {
        std::thread::sleep(Duration::from_millis(args.n as u64));
        args.n
    }
    fn render(_: &N, v: &i64) -> Vec<ContentBlock> {
        vec![ContentBlock::text(v.to_string())]
    }
}

#[test]
fn c9_a_blocking_tool_keeps_the_timeout() {
    const { assert!(BlockingSleep::INFO.blocking) };
    let registry = Registry::builder().tool(BlockingSleep).build().unwrap();
    let options = CallOptions::new().with_timeout(Duration::from_millis(100));
    // Timed inside the runtime: dropping a runtime waits for its blocking
    // threads, the late sleep included.
    let rt = runtime();
    let (out, took) = rt.block_on(async {
        let started = Instant::now();
        let out = registry
            .call_with(
                ToolCall::new("1", "blocking_sleep", r#"{"n":500}"#),
                &options,
            )
            .await;
        (out, started.elapsed())
    });
    assert_eq!(out.code().unwrap(), "TIMEOUT", "{out:?}");
    assert!(took < Duration::from_millis(400), "{took:?}");
    rt.shutdown_background();
}

#[test]
fn c9_a_blocking_tool_times_out_on_time_on_both_runtime_flavours() {
    for multi in [false, true] {
        let saw_cancel = Arc::new(AtomicUsize::new(0));
        let registry = Registry::builder()
            .tool(Sleeper {
                saw_cancel: saw_cancel.clone(),
            })
            .build()
            .unwrap();
        let rt = if multi {
            tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .unwrap()
        } else {
            runtime()
        };
        let options = CallOptions::new().with_timeout(Duration::from_millis(100));
        let started = Instant::now();
        let out = rt
            .block_on(registry.call_with(ToolCall::new("1", "sleeper", r#"{"n":700}"#), &options));
        let took = started.elapsed();
        assert_eq!(out.code().unwrap(), "TIMEOUT", "multi={multi}: {out:?}");
        assert!(
            took < Duration::from_millis(500),
            "multi={multi}: returned after {took:?}"
        );
        // The late result is dropped; the work saw its token cancelled.
        std::thread::sleep(Duration::from_millis(800));
        assert_eq!(saw_cancel.load(Ordering::SeqCst), 1, "multi={multi}");
        let ok = rt.block_on(registry.call(ToolCall::new("2", "sleeper", r#"{"n":1}"#)));
        assert_eq!(ok.value().unwrap(), 1);
    }
}

#[test]
fn c9_a_dropped_call_cancels_its_blocking_body() {
    let saw_cancel = Arc::new(AtomicUsize::new(0));
    let registry = Registry::builder()
        .tool(Sleeper {
            saw_cancel: saw_cancel.clone(),
        })
        .build()
        .unwrap();
    let rt = runtime();
    rt.block_on(async {
        // The caller gives up on the call's future: no timeout, no token.
        let call = registry.call(ToolCall::new("1", "sleeper", r#"{"n":400}"#));
        let gave_up = tokio::time::timeout(Duration::from_millis(50), call).await;
        assert!(gave_up.is_err(), "the call ended before the caller gave up");
    });
    std::thread::sleep(Duration::from_millis(600));
    assert_eq!(saw_cancel.load(Ordering::SeqCst), 1);
    rt.shutdown_background();
}
