//! A driver for instruction counts (valgrind's callgrind), not a benchmark:
//! `N` calls of one side of `calls`' `echo` figure (`toolprism`, `floor`,
//! `contract-floor`)
//! or of its `large` figure (`large`, `large-floor`), in a loop.
//!
//! ```sh
//! cargo build --release --example profile_calls
//! valgrind --tool=callgrind target/release/examples/profile_calls toolprism 10000
//! valgrind --tool=callgrind target/release/examples/profile_calls floor 10000
//! ```
//!
//! Divide the total by `N` after subtracting a run with `N = 0` (the
//! set-up: the registry, the runtime, the validators).

use std::hint::black_box;

use toolprism::{Registry, ToolCall};
use toolprism_benches::{
    ECHO_ARGUMENTS, EchoContractFloor, EchoTool, GrepTool, echo_floor, grep_arguments, grep_floor,
};

fn main() {
    let mut args = std::env::args().skip(1);
    let side = args.next().unwrap_or_else(|| "toolprism".to_owned());
    let n: usize = args.next().and_then(|n| n.parse().ok()).unwrap_or(10_000);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let registry = Registry::builder()
        .tool(EchoTool)
        .tool(GrepTool)
        .build()
        .expect("echo and grep register");
    match side.as_str() {
        "floor" => {
            for _ in 0..n {
                let arguments = ECHO_ARGUMENTS.to_owned();
                black_box(echo_floor(&arguments).expect("the floor runs"));
            }
        }
        "contract-floor" => {
            let floor = EchoContractFloor::new();
            for _ in 0..n {
                let arguments = ECHO_ARGUMENTS.to_owned();
                black_box(floor.call(&arguments).expect("the contract floor runs"));
            }
        }
        "toolprism" => rt.block_on(async {
            for _ in 0..n {
                let call = ToolCall::new("call-1", "echo", ECHO_ARGUMENTS);
                black_box(registry.call(call).await);
            }
        }),
        "large-floor" => {
            for _ in 0..n {
                let arguments = grep_arguments();
                black_box(grep_floor(&arguments).expect("the floor runs"));
            }
        }
        "large" => rt.block_on(async {
            for _ in 0..n {
                let call = ToolCall::new("call-1", "grep", grep_arguments());
                black_box(registry.call(call).await);
            }
        }),
        other => {
            panic!("unknown side {other}: floor, contract-floor, toolprism, large-floor or large")
        }
    }
}
