//! What a hub costs: one `tools/call` round trip to a toolprism MCP server
//! over stdio, made directly, against the same call made through a hub (a
//! toolprism server whose registry imports that server's `echo` over
//! stdio: `toolprism::mcp::import`). Same client (rmcp's), same tool, same
//! arguments. Run with `cargo bench --manifest-path benches/Cargo.toml --bench mcp_hub`.
//!
//! Every server is a real process: this bench binary started again with
//! `TOOLPRISM_BENCH_HUB_SERVER=direct|hub` (the hub starts its own
//! `direct` child). The sides are measured in alternation, rounds of
//! calls with the order flipping every round, so that load from other
//! processes falls on both alike; the figure is the median over rounds of
//! each side's mean time per call, and their ratio.

use std::hint::black_box;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use rmcp::model::{CallToolRequestParams, JsonObject};
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceExt};
use tokio::runtime::Runtime;
use toolprism::Registry;
use toolprism::mcp::McpServer;
use toolprism::mcp::import::{Import, Stderr};
use toolprism_benches::{ECHO_ARGUMENTS, EchoTool};

/// Which server a child process runs.
const SERVER_ENV: &str = "TOOLPRISM_BENCH_HUB_SERVER";

fn runtime() -> Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime")
}

fn serve(which: &str) -> ExitCode {
    let rt = runtime();
    let result: Result<(), String> = rt.block_on(async {
        let registry = match which {
            "direct" => Registry::builder().tool(EchoTool).build(),
            "hub" => {
                let exe = std::env::current_exe().map_err(|e| e.to_string())?;
                let imported = Import::stdio(exe.to_string_lossy(), Vec::<String>::new())
                    .env(SERVER_ENV, "direct")
                    .stderr(Stderr::Inherit)
                    .connect()
                    .await
                    .map_err(|e| e.to_string())?;
                imported.register_in(Registry::builder()).build()
            }
            other => return Err(format!("unknown server {other:?}")),
        }
        .map_err(|e| e.to_string())?;
        McpServer::new(registry)
            .serve_stdio()
            .await
            .map_err(|e| e.to_string())
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

async fn client(which: &str) -> RunningService<RoleClient, ()> {
    let exe = std::env::current_exe().expect("the bench's own path");
    let mut command = tokio::process::Command::new(exe);
    command.env(SERVER_ENV, which);
    let transport = TokioChildProcess::new(command).expect("start the server process");
    ().serve(transport).await.expect("initialize")
}

async fn call(peer: &RunningService<RoleClient, ()>) {
    let arguments: JsonObject = serde_json::from_str(ECHO_ARGUMENTS).expect("an object");
    let params = CallToolRequestParams::new("echo").with_arguments(arguments);
    let result = peer.call_tool(params).await.expect("the call succeeds");
    assert_eq!(result.is_error, Some(false));
    black_box(result);
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    let mid = values.len() / 2;
    if values.len().is_multiple_of(2) {
        (values[mid - 1] + values[mid]) / 2.0
    } else {
        values[mid]
    }
}

fn main() -> ExitCode {
    if let Ok(which) = std::env::var(SERVER_ENV) {
        return serve(&which);
    }
    // `cargo test --benches` runs this with `--bench` absent: one short round.
    let quick = !std::env::args().any(|a| a == "--bench");
    let (rounds, batch) = if quick { (2, 20) } else { (40, 250) };
    let rt = runtime();
    let sides = ["direct", "hub"];
    let peers: Vec<_> = sides.iter().map(|side| rt.block_on(client(side))).collect();
    // Both answer the same value.
    for peer in &peers {
        let arguments: JsonObject = serde_json::from_str(ECHO_ARGUMENTS).unwrap();
        let result = rt
            .block_on(peer.call_tool(CallToolRequestParams::new("echo").with_arguments(arguments)))
            .unwrap();
        assert_eq!(
            result.structured_content,
            Some(
                serde_json::json!({"text": "the quick brown fox jumps over the lazy dog", "len": 43})
            )
        );
    }
    // Warm up.
    for peer in &peers {
        rt.block_on(async {
            for _ in 0..batch {
                call(peer).await;
            }
        });
    }
    let mut means: Vec<Vec<f64>> = vec![Vec::new(); sides.len()];
    for round in 0..rounds {
        for k in 0..sides.len() {
            let side = (k + round) % sides.len();
            let took: Duration = rt.block_on(async {
                let started = Instant::now();
                for _ in 0..batch {
                    call(&peers[side]).await;
                }
                started.elapsed()
            });
            means[side].push(took.as_secs_f64() * 1e6 / f64::from(batch));
        }
    }
    let direct = median(&mut means[0]);
    let hub = median(&mut means[1]);
    println!();
    println!(
        "| {rounds} rounds of {batch} calls, alternating | median of the round means | ratio |"
    );
    println!("|---|---|---|");
    println!("| direct (toolprism server) | {direct:.1} µs | 1.000 |");
    println!("| through the hub | {hub:.1} µs | {:.3} |", hub / direct);
    println!("| the hub's own share | {:.1} µs | |", hub - direct);
    for peer in peers {
        let _ = rt.block_on(peer.cancel());
    }
    ExitCode::SUCCESS
}
