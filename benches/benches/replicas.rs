//! Many replicas behind one URL (W16 in docs/contract.md), two figures:
//!
//! 1. **A task's round trip** (`tools/call` answered with a task, then
//!    `tasks/get` until it ended) with the in-memory store against the
//!    Redis store, and against Redis with the polls made on another
//!    replica than the one running the task.
//! 2. **Inline calls per second through HAProxy**, with one replica behind
//!    it against three, from 16 clients at once; with where the CPU went
//!    (the clients, the balancer, the replicas, Redis), read from `/proc`.
//!
//! Every server is a real process: this bench binary started again with
//! `TOOLPRISM_BENCH_REPLICA=<store>` (`memory`, or a Redis URL), serving
//! `echo` and `job` (a trivial tool that runs as a task) over Streamable
//! HTTP, stateless; Redis and HAProxy are Debian's (installed when missing,
//! as the tests do). The client is rmcp's, at `2026-07-28`. The sides are
//! measured in alternation, rounds of calls with the order flipping every
//! round, so that load from other processes falls on both alike; each
//! figure is the median over rounds.
//!
//! `cargo bench --manifest-path benches/Cargo.toml --bench replicas`

use std::io::{BufRead, BufReader};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitCode, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ClientCapabilities, ClientConfig, GetTaskParams,
    Implementation, JsonObject, ProtocolVersion,
};
use rmcp::service::RunningService;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{ClientLifecycleMode, ClientServiceExt, RoleClient};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tokio::runtime::Runtime;
use toolprism::mcp::{McpServer, Store, StreamableHttpServerConfig};
use toolprism::{ContentBlock, Registry, ToolError, tool};
use toolprism_benches::{ECHO_ARGUMENTS, EchoTool};
use toolprism_testkit::redis::RedisServer;

/// Which store a child replica uses.
const REPLICA_ENV: &str = "TOOLPRISM_BENCH_REPLICA";

/// The arguments of `job`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
struct JobArgs {
    /// A number.
    n: u64,
}

/// The value of `job`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
struct Done {
    n: u64,
}

/// Runs as a task for a client that can take one; does nothing.
struct JobTool;

/// Does nothing, as a task.
#[tool(name = "job", task = "optional")]
impl JobTool {
    async fn execute(&self, args: JobArgs) -> Result<Done, ToolError> {
        Ok(Done { n: args.n })
    }

    fn render(_args: &JobArgs, value: &Done) -> Vec<ContentBlock> {
        vec![ContentBlock::text(format!("done {}", value.n))]
    }
}

/// A replica: `echo` and `job` over stateless HTTP on a free port, the
/// address on stderr's first line.
fn serve(store: &str) -> ExitCode {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let result: Result<(), String> = runtime.block_on(async {
        let registry = Registry::builder()
            .tool(EchoTool)
            .tool(JobTool)
            .build()
            .map_err(|e| e.to_string())?;
        let mut server = McpServer::new(registry);
        if store != "memory" {
            server = server.with_store(Store::redis(store).await.map_err(|e| e.to_string())?);
        }
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .map_err(|e| e.to_string())?;
        let addr = listener.local_addr().map_err(|e| e.to_string())?;
        eprintln!("listening on {addr}");
        let config = StreamableHttpServerConfig::default().with_legacy_session_mode(false);
        server
            .serve_http(listener, config)
            .await
            .map_err(|e| e.to_string())
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("bench replica: {e}");
            ExitCode::FAILURE
        }
    }
}

/// A child process, killed on drop.
struct Process {
    child: Child,
    /// `HOST:PORT` it serves.
    addr: String,
}

impl Process {
    fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn replica(store: &str) -> Process {
    let exe = std::env::current_exe().expect("the bench's own path");
    let mut child = Command::new(exe)
        .env(REPLICA_ENV, store)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start a replica");
    let mut first = String::new();
    BufReader::new(child.stderr.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    let addr = first
        .trim()
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("the replica said {first:?}"))
        .to_owned();
    Process { child, addr }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn wait_for(port: u16, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "{what} never listened");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn haproxy(program: &Path, dir: &Path, backends: &[&Process]) -> Process {
    let port = free_port();
    let servers: String = backends
        .iter()
        .enumerate()
        .map(|(i, b)| format!("  server r{i} {}\n", b.addr))
        .collect();
    let config = format!(
        "global\n  maxconn 4096\n\
         defaults\n  mode http\n  timeout connect 1s\n  timeout client 60s\n  timeout server 60s\n\
         frontend mcp\n  bind 127.0.0.1:{port}\n  default_backend replicas\n\
         backend replicas\n  balance roundrobin\n{servers}"
    );
    let path = dir.join(format!("haproxy-{port}.cfg"));
    std::fs::write(&path, config).unwrap();
    let child = Command::new(program)
        .arg("-db")
        .arg("-f")
        .arg(&path)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start haproxy");
    wait_for(port, "haproxy");
    Process {
        child,
        addr: format!("127.0.0.1:{port}"),
    }
}

type Client = RunningService<RoleClient, ClientConfig>;

async fn client(addr: &str) -> Client {
    let capabilities: ClientCapabilities = serde_json::from_value(
        serde_json::json!({"extensions": {"io.modelcontextprotocol/tasks": {}}}),
    )
    .unwrap();
    ClientConfig::new(capabilities, Implementation::new("bench", "0"))
        .serve_with_lifecycle(
            StreamableHttpClientTransport::from_uri(format!("http://{addr}/mcp")),
            ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            },
        )
        .await
        .expect("a 2026-07-28 client")
}

/// One task made through `make` and polled through `poll` to its end;
/// the number of polls.
async fn task_round_trip(make: &Client, poll: &Client) -> u32 {
    let params = CallToolRequestParams::new("job")
        .with_arguments(serde_json::from_str::<JsonObject>(r#"{"n":7}"#).unwrap());
    let Ok(CallToolResponse::Task(task)) = make.call_tool_once(params).await else {
        panic!("job is a task for a client that takes one");
    };
    let mut polls = 0;
    loop {
        polls += 1;
        let got = poll
            .get_task(GetTaskParams::new(task.task.task_id.clone()))
            .await
            .expect("tasks/get");
        if got.task.status().is_terminal() {
            return polls;
        }
    }
}

async fn echo(client: &rmcp::service::Peer<RoleClient>) {
    let arguments: JsonObject = serde_json::from_str(ECHO_ARGUMENTS).unwrap();
    let result = client
        .call_tool(CallToolRequestParams::new("echo").with_arguments(arguments))
        .await
        .expect("an inline call");
    assert_eq!(result.is_error, Some(false));
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

/// CPU seconds (user + system) process `pid` has used.
fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // The fields after the command name, which is in parentheses.
    let rest = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    // utime and stime are fields 14 and 15 of the whole line (1-based),
    // 12 and 13 here (0-based, after the state).
    (ticks(11) + ticks(12)) / 100.0
}

fn programs() -> Result<(PathBuf, PathBuf), String> {
    let redis = toolprism_testkit::debian_package("redis-server", "/usr/bin/redis-server")?;
    let haproxy = toolprism_testkit::debian_package("haproxy", "/usr/sbin/haproxy")?;
    Ok((redis, haproxy))
}

fn main() -> ExitCode {
    if let Ok(store) = std::env::var(REPLICA_ENV) {
        return serve(&store);
    }
    let (redis_program, haproxy_program) = match programs() {
        Ok(programs) => programs,
        Err(e) => {
            eprintln!("replicas: skipped, Redis or HAProxy could not be installed: {e}");
            return ExitCode::SUCCESS;
        }
    };
    // `cargo test --benches` runs this with `--bench` absent: one short round.
    let quick = !std::env::args().any(|a| a == "--bench");
    let dir = tempfile::tempdir().unwrap();
    let redis = RedisServer::start(&redis_program);
    let url = redis.url();
    let memory = replica("memory");
    let shared: Vec<Process> = (0..3).map(|_| replica(&url)).collect();
    let runtime: Runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();

    // 1. A task's round trip.
    let (rounds, batch): (usize, u32) = if quick { (2, 10) } else { (30, 100) };
    let sides = [
        "memory store",
        "Redis store",
        "Redis store, polled on another replica",
    ];
    let clients: Vec<(Client, Client)> = runtime.block_on(async {
        vec![
            (client(&memory.addr).await, client(&memory.addr).await),
            (client(&shared[0].addr).await, client(&shared[0].addr).await),
            (client(&shared[0].addr).await, client(&shared[1].addr).await),
        ]
    });
    runtime.block_on(async {
        for (make, poll) in &clients {
            for _ in 0..batch {
                task_round_trip(make, poll).await;
            }
        }
    });
    let mut means: Vec<Vec<f64>> = vec![Vec::new(); sides.len()];
    let mut polls = vec![0u32; sides.len()];
    for round in 0..rounds {
        for k in 0..sides.len() {
            let side = (k + round) % sides.len();
            let (make, poll) = &clients[side];
            let took = runtime.block_on(async {
                let started = Instant::now();
                for _ in 0..batch {
                    polls[side] += task_round_trip(make, poll).await;
                }
                started.elapsed()
            });
            means[side].push(took.as_secs_f64() * 1e6 / f64::from(batch));
        }
    }
    let trips = rounds as f64 * f64::from(batch);
    let memory_trip = median(&mut means[0].clone());
    println!();
    println!(
        "| task round trip ({rounds} rounds of {batch}, alternating) | median of the round means | polls per task | ratio |"
    );
    println!("|---|---|---|---|");
    for (side, name) in sides.iter().enumerate() {
        let trip = median(&mut means[side]);
        println!(
            "| {name} | {:.0} µs | {:.2} | {:.2} |",
            trip,
            f64::from(polls[side]) / trips,
            trip / memory_trip
        );
    }
    runtime.block_on(async {
        for (make, poll) in clients {
            let _ = make.cancel().await;
            let _ = poll.cancel().await;
        }
    });

    // 2. Inline calls per second through the balancer: one replica
    // against three.
    let one = haproxy(&haproxy_program, dir.path(), &[&shared[0]]);
    let three = haproxy(
        &haproxy_program,
        dir.path(),
        &shared.iter().collect::<Vec<_>>(),
    );
    let concurrency = 16;
    let (rounds, slice) = if quick {
        (1, Duration::from_millis(500))
    } else {
        (6, Duration::from_secs(3))
    };
    let balancers = [("1 replica", &one), ("3 replicas", &three)];
    let pools: Vec<Vec<Client>> = runtime.block_on(async {
        let mut pools = Vec::new();
        for (_, balancer) in &balancers {
            let mut pool = Vec::new();
            for _ in 0..concurrency {
                pool.push(client(&balancer.addr).await);
            }
            pools.push(pool);
        }
        pools
    });
    let mut rates: Vec<Vec<f64>> = vec![Vec::new(); balancers.len()];
    // CPU seconds per side: clients (this process), balancer, replicas, Redis.
    let mut cpu = vec![[0.0f64; 4]; balancers.len()];
    let mut wall = vec![0.0f64; balancers.len()];
    let replica_pids: Vec<u32> = shared.iter().map(Process::pid).collect();
    let me = std::process::id();
    for round in 0..rounds + 1 {
        for k in 0..balancers.len() {
            let side = (k + round) % balancers.len();
            let before = [
                cpu_seconds(me),
                cpu_seconds(balancers[side].1.pid()),
                replica_pids.iter().map(|p| cpu_seconds(*p)).sum(),
                cpu_seconds(redis.pid().expect("redis-server runs")),
            ];
            let done = Arc::new(AtomicU64::new(0));
            let started = Instant::now();
            runtime.block_on(async {
                let mut runs = Vec::new();
                for client in &pools[side] {
                    let peer = client.peer().clone();
                    let done = Arc::clone(&done);
                    runs.push(tokio::spawn(async move {
                        while started.elapsed() < slice {
                            echo(&peer).await;
                            done.fetch_add(1, Ordering::Relaxed);
                        }
                    }));
                }
                for run in runs {
                    run.await.unwrap();
                }
            });
            let elapsed = started.elapsed().as_secs_f64();
            // Round 0 warms both sides up.
            if round == 0 {
                continue;
            }
            let after = [
                cpu_seconds(me),
                cpu_seconds(balancers[side].1.pid()),
                replica_pids.iter().map(|p| cpu_seconds(*p)).sum(),
                cpu_seconds(redis.pid().expect("redis-server runs")),
            ];
            for part in 0..4 {
                cpu[side][part] += after[part] - before[part];
            }
            wall[side] += elapsed;
            rates[side].push(done.load(Ordering::Relaxed) as f64 / elapsed);
        }
    }
    let one_rate = median(&mut rates[0].clone());
    println!();
    println!(
        "| inline `echo` through HAProxy, {concurrency} clients ({rounds} rounds of {} s, alternating) | calls/s (median) | ratio | cores busy: clients, HAProxy, replicas, Redis (total) |",
        slice.as_secs_f64()
    );
    println!("|---|---|---|---|");
    for (side, (name, _)) in balancers.iter().enumerate() {
        let rate = median(&mut rates[side]);
        let busy: Vec<String> = cpu[side]
            .iter()
            .map(|s| format!("{:.2}", s / wall[side]))
            .collect();
        let total: f64 = cpu[side].iter().sum::<f64>() / wall[side];
        println!(
            "| {name} | {rate:.0} | {:.2} | {} ({total:.2} of {} cores) |",
            rate / one_rate,
            busy.join(", "),
            std::thread::available_parallelism().map_or(0, usize::from)
        );
    }
    runtime.block_on(async {
        for pool in pools {
            for client in pool {
                let _ = client.cancel().await;
            }
        }
    });
    ExitCode::SUCCESS
}
