//! Per-call overhead (`echo`), toolprism against rmcp (`echo`), and a large
//! value (`large`). Run with `cargo bench --manifest-path benches/Cargo.toml --bench calls`.
//!
//! Every side runs in the same harness: criterion's async bencher on one
//! current-thread tokio runtime (one `block_on` per sample, not per call),
//! with the input made outside the timing (`iter_batched`) and the output
//! dropped inside it.

use std::hint::black_box;
use std::time::{Duration, SystemTime};

use criterion::{BatchSize, Criterion, SamplingMode};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::tool::ToolCallContext;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolRequestParams, CallToolResponse, JsonObject, NumberOrString};
use rmcp::service::{RequestContext, RoleServer, RunningService};
use rmcp::{Json, Peer, ServerHandler, tool, tool_handler, tool_router};
use tokio::runtime::Runtime;
use toolprism::{Registry, ToolCall};
use toolprism_benches::report::{Ratio, criterion_dir, print_ratios};
use toolprism_benches::{
    ECHO_ARGUMENTS, EchoArgs, EchoContractFloor, EchoTool, Echoed, GREP_MATCHES, GrepTool,
    echo_body, echo_floor, grep_arguments, grep_floor,
};

/// `echo` written with rmcp: `#[tool]` on a method returning `Json<Echoed>`
/// (structured output), routed by `#[tool_router]`.
#[derive(Clone)]
struct EchoServer {
    tool_router: ToolRouter<Self>,
}

#[tool_router]
impl EchoServer {
    fn new() -> Self {
        EchoServer {
            tool_router: Self::tool_router(),
        }
    }

    /// Echo the text back.
    #[tool(name = "echo")]
    async fn echo(&self, Parameters(args): Parameters<EchoArgs>) -> Json<Echoed> {
        Json(echo_body(args))
    }
}

#[tool_handler]
impl ServerHandler for EchoServer {}

/// A `Peer<RoleServer>` for request contexts. Its constructor is private to
/// rmcp, so serve the server once over an in-memory pipe and clone its peer.
/// The benchmarked calls never touch this transport.
fn rmcp_peer(
    rt: &Runtime,
    server: EchoServer,
) -> (
    Peer<RoleServer>,
    RunningService<RoleServer, EchoServer>,
    tokio::io::DuplexStream,
) {
    rt.block_on(async {
        let (ours, theirs) = tokio::io::duplex(1 << 16);
        let running = rmcp::service::serve_directly(server, ours, None);
        (running.peer().clone(), running, theirs)
    })
}

fn runtime() -> Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime")
}

fn echo(c: &mut Criterion, rt: &Runtime) {
    let registry = Registry::builder()
        .tool(EchoTool)
        .build()
        .expect("echo registers");
    let server = EchoServer::new();
    let (peer, _running, _pipe) = rmcp_peer(rt, server.clone());

    // Every side gets the same input and gives the same answer.
    let outcome = rt.block_on(registry.call(ToolCall::new("c", "echo", ECHO_ARGUMENTS)));
    let (floor_value, floor_content) = echo_floor(ECHO_ARGUMENTS).expect("the floor runs");
    assert!(!outcome.is_error(), "{:?}", outcome.error());
    assert_eq!(outcome.value(), Some(&floor_value));
    assert_eq!(outcome.content(), floor_content);
    let contract_floor = EchoContractFloor::new();
    let (checked_value, checked_content) = contract_floor
        .call(ECHO_ARGUMENTS)
        .expect("the contract floor runs");
    assert_eq!(
        (checked_value, checked_content),
        (floor_value.clone(), floor_content)
    );
    let rmcp_result = rt
        .block_on(rmcp_call(&server, &peer, ECHO_ARGUMENTS.to_owned()))
        .expect("rmcp calls echo");
    match rmcp_result {
        CallToolResponse::Complete(result) => {
            assert_eq!(result.structured_content, Some(floor_value));
        }
        other => panic!("rmcp did not complete the call: {other:?}"),
    }

    let mut group = c.benchmark_group("echo");
    group
        .sample_size(50)
        .measurement_time(Duration::from_secs(3));
    group.bench_function("floor", |b| {
        b.to_async(rt).iter_batched(
            || ECHO_ARGUMENTS.to_owned(),
            |arguments| async move {
                black_box(echo_floor(&arguments).expect("the floor runs"));
            },
            BatchSize::SmallInput,
        )
    });
    let contract_floor = &contract_floor;
    group.bench_function("contract floor", |b| {
        b.to_async(rt).iter_batched(
            || ECHO_ARGUMENTS.to_owned(),
            |arguments| async move {
                black_box(
                    contract_floor
                        .call(&arguments)
                        .expect("the contract floor runs"),
                );
            },
            BatchSize::SmallInput,
        )
    });
    group.bench_function("toolprism", |b| {
        b.to_async(rt).iter_batched(
            || ToolCall::new("call-1", "echo", ECHO_ARGUMENTS),
            |call| async {
                black_box(registry.call(call).await);
            },
            BatchSize::SmallInput,
        )
    });
    group.bench_function("rmcp", |b| {
        b.to_async(rt).iter_batched(
            || ECHO_ARGUMENTS.to_owned(),
            |arguments| async {
                black_box(
                    rmcp_call(&server, &peer, arguments)
                        .await
                        .expect("rmcp calls echo"),
                );
            },
            BatchSize::SmallInput,
        )
    });
    group.finish();
}

/// One rmcp call from the argument text, like `Registry::call`: parse the
/// arguments into the object rmcp takes, build the request context, route.
async fn rmcp_call(
    server: &EchoServer,
    peer: &Peer<RoleServer>,
    arguments: String,
) -> Result<CallToolResponse, rmcp::ErrorData> {
    let arguments: JsonObject = serde_json::from_str(&arguments)
        .map_err(|e| rmcp::ErrorData::invalid_params(e.to_string(), None))?;
    let params = CallToolRequestParams::new("echo").with_arguments(arguments);
    let context = RequestContext::new(NumberOrString::Number(1), peer.clone());
    server
        .tool_router
        .call(ToolCallContext::new(server, params, context))
        .await
}

fn large(c: &mut Criterion, rt: &Runtime) {
    let registry = Registry::builder()
        .tool(GrepTool)
        .build()
        .expect("grep registers");
    let arguments = grep_arguments();
    let outcome = rt.block_on(registry.call(ToolCall::new("c", "grep", arguments.clone())));
    let (floor_value, floor_content) = grep_floor(&arguments).expect("the floor runs");
    assert!(!outcome.is_error(), "{:?}", outcome.error());
    assert_eq!(outcome.value(), Some(&floor_value));
    assert_eq!(outcome.content(), floor_content);
    let bytes = serde_json::to_string(&floor_value).expect("JSON").len();
    println!("large: {GREP_MATCHES} matches, {bytes} bytes of value JSON");

    let mut group = c.benchmark_group("large");
    group
        .sample_size(30)
        .measurement_time(Duration::from_secs(5))
        .sampling_mode(SamplingMode::Flat);
    group.bench_function("floor", |b| {
        b.to_async(rt).iter_batched(
            || arguments.clone(),
            |arguments| async move {
                black_box(grep_floor(&arguments).expect("the floor runs"));
            },
            BatchSize::SmallInput,
        )
    });
    group.bench_function("toolprism", |b| {
        b.to_async(rt).iter_batched(
            || ToolCall::new("call-1", "grep", arguments.clone()),
            |call| async {
                black_box(registry.call(call).await);
            },
            BatchSize::SmallInput,
        )
    });
    group.finish();
}

fn main() {
    let since = SystemTime::now();
    let rt = runtime();
    let mut c = Criterion::default()
        .output_directory(&criterion_dir(env!("CARGO_TARGET_TMPDIR")))
        .warm_up_time(Duration::from_secs(1))
        .configure_from_args();
    echo(&mut c, &rt);
    large(&mut c, &rt);
    c.final_summary();
    print_ratios(
        &criterion_dir(env!("CARGO_TARGET_TMPDIR")),
        since,
        &[
            Ratio {
                label: "per-call overhead",
                group: "echo",
                numerator: "toolprism",
                denominator: "floor",
                target: 1.5,
                strict: false,
            },
            Ratio {
                label: "the schema checks alone (a lower bound)",
                group: "echo",
                numerator: "contract floor",
                denominator: "floor",
                target: 1.5,
                strict: false,
            },
            Ratio {
                label: "toolprism beyond the schema checks",
                group: "echo",
                numerator: "toolprism",
                denominator: "contract floor",
                target: 1.5,
                strict: false,
            },
            Ratio {
                label: "against rmcp",
                group: "echo",
                numerator: "toolprism",
                denominator: "rmcp",
                target: 1.0,
                strict: true,
            },
            Ratio {
                label: "large value",
                group: "large",
                numerator: "toolprism",
                denominator: "floor",
                target: 1.3,
                strict: false,
            },
        ],
    );
}
