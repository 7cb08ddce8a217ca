//! One `tools/call` round trip over stdio, as an MCP client sees it:
//! toolprism's server (`toolprism::mcp::serve_stdio`) against a plain rmcp
//! server (`#[tool_router]`, `Json<Echoed>`) exposing the same `echo` tool.
//! Run with `cargo bench --manifest-path benches/Cargo.toml --bench mcp_stdio`.
//!
//! Both servers are real processes: this bench binary started again with
//! `TOOLPRISM_BENCH_MCP_SERVER=toolprism|rmcp`, on the same single-threaded
//! tokio runtime, talking over pipes. The client is rmcp's own, one per
//! server, making one call at a time; criterion times the round trip
//! (request written, response read and parsed).
//!
//! The answers differ by design: toolprism's carries `render`'s text, the
//! value and the presentation meta under `_meta`; rmcp's carries the value
//! twice (as `structuredContent` and as its JSON text). toolprism's server
//! runs with its default, `Cards::OnRequest`: rmcp's client does not ask
//! for cards, so it gets none, like every client that does not draw them.
//! A third side sends both cards unasked (`Cards::Always`), what a
//! card-aware client that asked would get, to keep their cost in sight.
//! Most of that cost is the client's, not the server's: rmcp's client
//! reads a response into its untagged `ServerResult`, trying about fifteen
//! result types before `CallToolResult`, and each of them builds the whole
//! `_meta` map before it fails; parsing echo's response takes it some
//! 50 µs with the two cards against 10 µs without (the server spends a few
//! µs drawing and writing them).
//!
//! The transports differ too: rmcp's `stdio()` reads and writes through
//! tokio's `stdin()` and `stdout()`, which hand each read and each write to
//! a blocking thread; toolprism's `serve_stdio` finds its stdin and stdout
//! are pipes and reads and writes them through the runtime's I/O driver,
//! with no thread hop. Most of the gap between the two comes from there.
//!
//! Criterion times each side in turn; under load from other processes a
//! side measured later can fare worse, so the bench also measures the sides
//! in alternation (rounds of calls, the order rotating) and prints the
//! ratio of the mean times per call, the figure to quote.

use std::hint::black_box;
use std::process::ExitCode;
use std::time::{Duration, SystemTime};

use criterion::Criterion;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolRequestParams, JsonObject};
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use rmcp::{Json, RoleClient, ServerHandler, ServiceExt, tool, tool_handler, tool_router};
use tokio::runtime::Runtime;
use toolprism::Registry;
use toolprism::mcp::{Cards, McpServer};
use toolprism_benches::report::{Ratio, criterion_dir, print_ratios};
use toolprism_benches::{ECHO_ARGUMENTS, EchoArgs, EchoTool, Echoed, echo_body};

/// Which server a child process runs.
const SERVER_ENV: &str = "TOOLPRISM_BENCH_MCP_SERVER";

/// `echo` written with rmcp, as in the `calls` bench.
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

// Route through the router built once, not `Self::tool_router()` per call
// (the macro's default).
#[tool_handler(router = self.tool_router)]
impl ServerHandler for EchoServer {}

fn runtime() -> Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime")
}

/// The child side: serve `which` over stdio until stdin closes.
fn serve(which: &str) -> ExitCode {
    let rt = runtime();
    let result: Result<(), String> = rt.block_on(async {
        match which {
            "toolprism" | "toolprism-cards" => {
                let registry = Registry::builder()
                    .tool(EchoTool)
                    .build()
                    .map_err(|e| e.to_string())?;
                let cards = if which == "toolprism" {
                    Cards::default()
                } else {
                    Cards::Always
                };
                McpServer::new(registry)
                    .with_cards(cards)
                    .serve_stdio()
                    .await
                    .map_err(|e| e.to_string())
            }
            "rmcp" => {
                let running = EchoServer::new()
                    .serve((tokio::io::stdin(), tokio::io::stdout()))
                    .await
                    .map_err(|e| e.to_string())?;
                running
                    .waiting()
                    .await
                    .map(|_| ())
                    .map_err(|e| e.to_string())
            }
            other => Err(format!("unknown server {other:?}")),
        }
    });
    rt.shutdown_background();
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("bench server {which}: {e}");
            ExitCode::FAILURE
        }
    }
}

/// A client connected to a fresh server process running `which`.
async fn client(which: &str) -> RunningService<RoleClient, ()> {
    let exe = std::env::current_exe().expect("the bench's own path");
    let mut command = tokio::process::Command::new(exe);
    command.env(SERVER_ENV, which);
    let transport = TokioChildProcess::new(command).expect("start the server process");
    ().serve(transport).await.expect("initialize")
}

fn arguments() -> JsonObject {
    serde_json::from_str(ECHO_ARGUMENTS).expect("the echo arguments are an object")
}

/// The sides, numerator first.
const SIDES: [&str; 3] = ["toolprism", "toolprism-cards", "rmcp"];

async fn call(peer: &RunningService<RoleClient, ()>) {
    let params = CallToolRequestParams::new("echo").with_arguments(arguments());
    black_box(peer.call_tool(params).await.expect("the call succeeds"));
}

fn bench(c: &mut Criterion, rt: &Runtime) {
    let peers: Vec<_> = SIDES.iter().map(|side| rt.block_on(client(side))).collect();
    // Every side answers the same call with the same value.
    for (side, peer) in SIDES.iter().zip(&peers) {
        let result = rt
            .block_on(
                peer.call_tool(CallToolRequestParams::new("echo").with_arguments(arguments())),
            )
            .expect("the call succeeds");
        assert_eq!(result.is_error, Some(false));
        // Cards only where they are sent unasked.
        let cards = result
            .meta
            .as_ref()
            .is_some_and(|meta| meta.contains_key("toolprism/resultCard"));
        assert_eq!(cards, *side == "toolprism-cards", "{side}: cards or not");
        assert_eq!(
            result.structured_content,
            Some(
                serde_json::json!({"text": "the quick brown fox jumps over the lazy dog", "len": 43})
            )
        );
    }
    let mut group = c.benchmark_group("mcp_stdio");
    for (side, peer) in SIDES.iter().zip(&peers) {
        group.bench_function(*side, |b| b.to_async(rt).iter(|| call(peer)));
    }
    group.finish();
    interleaved(rt, &peers);
    for peer in peers {
        let _ = rt.block_on(peer.cancel());
    }
}

/// The sides measured in alternation, so that load from other processes
/// falls on all of them alike: rounds of `BATCH` calls to each server, the
/// order rotating every round; prints the mean time per call and the
/// ratios of the means.
fn interleaved(rt: &Runtime, peers: &[RunningService<RoleClient, ()>]) {
    const ROUNDS: usize = 60;
    const BATCH: u32 = 200;
    let mut total = vec![Duration::ZERO; peers.len()];
    for round in 0..ROUNDS {
        for k in 0..peers.len() {
            let side = (k + round) % peers.len();
            total[side] += rt.block_on(async {
                let started = std::time::Instant::now();
                for _ in 0..BATCH {
                    call(&peers[side]).await;
                }
                started.elapsed()
            });
        }
    }
    let calls = ROUNDS as u32 * BATCH;
    let mean: Vec<f64> = total
        .iter()
        .map(|t| t.as_secs_f64() * 1e6 / f64::from(calls))
        .collect();
    let rmcp = mean[SIDES.len() - 1];
    println!();
    println!(
        "| interleaved, {calls} calls per side | mean per round trip | ratio to rmcp | target |"
    );
    println!("|---|---|---|---|");
    for (side, mean) in SIDES.iter().zip(&mean) {
        let target = if *side == "toolprism" { "≤ 1.0" } else { "" };
        println!("| {side} | {mean:.1} µs | {:.3} | {target} |", mean / rmcp);
    }
}

fn main() -> ExitCode {
    if let Ok(which) = std::env::var(SERVER_ENV) {
        return serve(&which);
    }
    let since = SystemTime::now();
    let rt = runtime();
    let mut c = Criterion::default()
        .output_directory(&criterion_dir(env!("CARGO_TARGET_TMPDIR")))
        .warm_up_time(Duration::from_secs(1))
        .configure_from_args();
    bench(&mut c, &rt);
    c.final_summary();
    print_ratios(
        &criterion_dir(env!("CARGO_TARGET_TMPDIR")),
        since,
        &[
            Ratio {
                label: "MCP round trip over stdio, against rmcp",
                group: "mcp_stdio",
                numerator: "toolprism",
                denominator: "rmcp",
                target: 1.0,
                strict: false,
            },
            Ratio {
                label: "the same with both cards sent (Cards::Always), against rmcp",
                group: "mcp_stdio",
                numerator: "toolprism-cards",
                denominator: "rmcp",
                target: 1.1,
                strict: false,
            },
        ],
    );
    ExitCode::SUCCESS
}
