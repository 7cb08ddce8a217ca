//! Many replicas behind one URL (W16 in docs/contract.md): three test
//! server processes sharing one Redis (`--store`), behind HAProxy (round
//! robin, no stickiness), with rmcp's own client at `2026-07-28` and raw
//! HTTP for legacy sessions. Redis and HAProxy are Debian's, installed by
//! the test set-up when missing (`toolprism_testkit::debian_package`); a
//! machine where they cannot be installed skips these tests, saying so.
//!
//! Each test starts its own Redis, servers and balancer on free loopback
//! ports, and stops them when it ends.

use crate::support;

use std::collections::{HashMap, HashSet};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CancelTaskParams, ClientCapabilities,
    ClientConfig, CreateTaskResult, ErrorCode, GetTaskParams, Implementation, InputRequiredResult,
    ProtocolVersion, TaskPayload, UpdateTaskParams,
};
use rmcp::service::RunningService;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientLifecycleMode, ClientServiceExt, RoleClient, ServiceError};
use serde_json::{Value, json};
use support::raw::{self, Session};
use support::{HttpServer, log_events};
use toolprism_testkit::redis::RedisServer;

type Client = RunningService<RoleClient, ClientConfig>;

// ---------------------------------------------------------------------------
// Redis, HAProxy and the replicas
// ---------------------------------------------------------------------------

/// Debian's `redis-server` and `haproxy`, or why they cannot be had.
fn programs() -> Result<(PathBuf, PathBuf), String> {
    let redis = toolprism_testkit::debian_package("redis-server", "/usr/bin/redis-server")?;
    let haproxy = toolprism_testkit::debian_package("haproxy", "/usr/sbin/haproxy")?;
    Ok((redis, haproxy))
}

/// The programs, or `None` after saying why the test is skipped.
fn programs_or_skip(test: &str) -> Option<(PathBuf, PathBuf)> {
    match programs() {
        Ok(programs) => Some(programs),
        Err(e) => {
            eprintln!("SKIPPED {test}: Redis or HAProxy could not be installed: {e}");
            None
        }
    }
}

/// A free loopback port (bound, then let go: the program binding it next
/// may lose it to another, a race no test here has met).
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .map(|addr| addr.port())
        .expect("a free port")
}

/// Waits until something accepts connections on `port`.
fn wait_for_port(port: u16, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "{what} never listened on {port}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// HAProxy in front of `backends`: round robin, each request on its own
/// (no stickiness), a request whose server refuses the connection tried
/// on another; killed on drop.
struct Balancer {
    child: Child,
    url: String,
    _dir: tempfile::TempDir,
}

impl Balancer {
    fn start(program: &Path, backends: &[&HttpServer]) -> Balancer {
        let dir = tempfile::tempdir().unwrap();
        let port = free_port();
        let servers: String = backends
            .iter()
            .enumerate()
            .map(|(i, server)| format!("  server r{i} {}\n", server.addr()))
            .collect();
        let config = format!(
            "global\n  maxconn 4096\n\
             defaults\n  mode http\n  timeout connect 1s\n  timeout client 120s\n  timeout server 120s\n  retries 3\n  option redispatch 1\n\
             frontend mcp\n  bind 127.0.0.1:{port}\n  default_backend replicas\n\
             backend replicas\n  balance roundrobin\n{servers}"
        );
        let path = dir.path().join("haproxy.cfg");
        std::fs::write(&path, config).unwrap();
        let child = Command::new(program)
            .arg("-db")
            .arg("-f")
            .arg(&path)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start haproxy");
        wait_for_port(port, "haproxy");
        Balancer {
            child,
            url: format!("http://127.0.0.1:{port}/mcp"),
            _dir: dir,
        }
    }
}

impl Drop for Balancer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Three replicas sharing one Redis, behind HAProxy, each with its own
/// session log and the task tools.
struct Cluster {
    redis: RedisServer,
    replicas: Vec<HttpServer>,
    balancer: Balancer,
    logs: Vec<PathBuf>,
    marks: PathBuf,
    _dir: tempfile::TempDir,
}

impl Cluster {
    /// Or `None` when Redis or HAProxy cannot be had.
    fn start(test: &str, extra: &[&str]) -> Option<Cluster> {
        let (redis_program, haproxy) = programs_or_skip(test)?;
        let redis = RedisServer::start(&redis_program);
        let dir = tempfile::tempdir().unwrap();
        let marks = dir.path().join("marks");
        let logs: Vec<PathBuf> = ["a", "b", "c"]
            .iter()
            .map(|name| dir.path().join(format!("{name}.jsonl")))
            .collect();
        let url = redis.url();
        let replicas: Vec<HttpServer> = logs
            .iter()
            .map(|log| {
                let mut args = vec![
                    "--tasks",
                    marks.to_str().unwrap(),
                    "--server-log",
                    log.to_str().unwrap(),
                    "--store",
                    &url,
                ];
                args.extend_from_slice(extra);
                HttpServer::start(&args)
            })
            .collect();
        let balancer = Balancer::start(&haproxy, &replicas.iter().collect::<Vec<_>>());
        Some(Cluster {
            redis,
            replicas,
            balancer,
            logs,
            marks,
            _dir: dir,
        })
    }

    fn url(&self, replica: usize) -> String {
        self.replicas[replica].url.clone()
    }
}

// ---------------------------------------------------------------------------
// Clients
// ---------------------------------------------------------------------------

/// A `2026-07-28` client declaring tasks and form elicitation, with a
/// bearer `token` when given.
async fn client(url: &str, token: Option<&str>) -> Client {
    support::tls_provider();
    let capabilities: ClientCapabilities = serde_json::from_value(json!({
        "elicitation": {},
        "extensions": {"io.modelcontextprotocol/tasks": {}}
    }))
    .unwrap();
    let config = ClientConfig::new(capabilities, Implementation::new("replicas-test", "0.0.0"));
    let mut transport = StreamableHttpClientTransportConfig::with_uri(url.to_owned());
    if let Some(token) = token {
        transport = transport.auth_header(token.to_owned());
    }
    let lifecycle = ClientLifecycleMode::Discover {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
    };
    config
        .serve_with_lifecycle(
            StreamableHttpClientTransport::from_config(transport),
            lifecycle,
        )
        .await
        .expect("a 2026-07-28 client")
}

fn call(name: &str, arguments: Value) -> CallToolRequestParams {
    CallToolRequestParams::new(name.to_owned())
        .with_arguments(arguments.as_object().cloned().unwrap())
}

async fn start_task(client: &Client, name: &str, arguments: Value) -> CreateTaskResult {
    match client.call_tool_once(call(name, arguments)).await {
        Ok(CallToolResponse::Task(task)) => task,
        other => panic!("expected a task for {name}, got {other:?}"),
    }
}

/// Polls `task` through `client` every 20 ms until `until` holds for its
/// payload, for at most `within`; returns the payload then, and when.
async fn poll(
    client: &Client,
    task: &str,
    within: Duration,
    until: impl Fn(&TaskPayload) -> bool,
) -> (TaskPayload, Option<String>) {
    let deadline = Instant::now() + within;
    loop {
        let last = match client.get_task(GetTaskParams::new(task.to_owned())).await {
            Ok(got) => {
                if until(&got.task.payload) {
                    return (got.task.payload, got.task.task.status_message);
                }
                format!("{:?}", got.task.payload)
            }
            Err(e) => format!("{e:?}"),
        };
        assert!(
            Instant::now() < deadline,
            "task {task} never got there within {within:?}; last: {last}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn completed(payload: &TaskPayload) -> CallToolResult {
    match payload {
        TaskPayload::Completed { result } => {
            serde_json::from_value(Value::Object(result.clone())).expect("a CallToolResult")
        }
        other => panic!("expected a completed task, got {other:?}"),
    }
}

fn mcp_error(result: Result<impl std::fmt::Debug, ServiceError>) -> rmcp::ErrorData {
    match result {
        Err(ServiceError::McpError(error)) => error,
        other => panic!("expected a protocol error, got {other:?}"),
    }
}

/// A `tools/call` answered with an `InputRequiredResult`.
async fn input_required(client: &Client, name: &str, arguments: Value) -> InputRequiredResult {
    match client.call_tool_once(call(name, arguments)).await {
        Ok(CallToolResponse::InputRequired(input)) => input,
        other => panic!("expected input_required for {name}, got {other:?}"),
    }
}

/// The retry of a call that asked, with `answers`.
async fn retry(
    client: &Client,
    name: &str,
    arguments: Value,
    state: &str,
    answers: Value,
) -> Result<CallToolResponse, ServiceError> {
    let answers = serde_json::from_value(answers).unwrap();
    client
        .call_tool_once(
            call(name, arguments)
                .with_request_state(state)
                .with_input_responses(answers),
        )
        .await
}

/// The line of the marks file for `call`, waiting for it.
fn mark(marks: &Path, call: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let text = std::fs::read_to_string(marks).unwrap_or_default();
        if let Some(line) = text.lines().find(|l| l.starts_with(&format!("{call} "))) {
            return line.to_owned();
        }
        assert!(Instant::now() < deadline, "no mark for {call} in {text:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The events of every log, tagged with the log's index.
fn all_events(logs: &[PathBuf]) -> Vec<(usize, Value)> {
    logs.iter()
        .enumerate()
        .flat_map(|(i, log)| {
            log_events(log, Duration::ZERO, |_| true)
                .into_iter()
                .map(move |e| (i, e))
        })
        .collect()
}

/// Which logs hold a call of `name`, by call id, waiting until `n` have
/// their results.
fn calls_of(logs: &[PathBuf], name: &str, n: usize) -> HashMap<String, (usize, Vec<Value>)> {
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let events = all_events(logs);
        let mut calls: HashMap<String, (usize, Vec<Value>)> = HashMap::new();
        for (log, event) in &events {
            if event["type"] == "tool/call" && event["name"] == name {
                calls.insert(
                    event["callId"].as_str().unwrap().to_owned(),
                    (*log, Vec::new()),
                );
            }
        }
        for (_, event) in &events {
            if event["type"] == "tool/result"
                && let Some((_, results)) = calls.get_mut(event["callId"].as_str().unwrap())
            {
                results.push(event.clone());
            }
        }
        let ended = calls.values().filter(|(_, r)| !r.is_empty()).count();
        if ended >= n || Instant::now() > deadline {
            return calls;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

// ---------------------------------------------------------------------------
// The tests
// ---------------------------------------------------------------------------

/// A task made on one replica is polled, answered and cancelled through
/// the others; an approval asked on one replica is answered through
/// another; the same through the balancer; the three logs replay as one
/// session with every call whole.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn w16_tasks_and_input_requests_are_served_by_every_replica() {
    let Some(cluster) = Cluster::start(
        "w16_tasks_and_input_requests_are_served_by_every_replica",
        &["--stateless"],
    ) else {
        return;
    };
    let a = client(&cluster.url(0), None).await;
    let b = client(&cluster.url(1), None).await;
    let c = client(&cluster.url(2), None).await;

    // Made on A, polled on B to the result the inline call gives on C.
    let arguments = json!({"steps": 6, "step_ms": 20});
    let task = start_task(&a, "long", arguments.clone()).await;
    let (payload, message) = poll(&b, &task.task.task_id, Duration::from_secs(20), |p| {
        p.status().is_terminal()
    })
    .await;
    let result = completed(&payload);
    assert_eq!(result.structured_content, Some(json!({"steps": 6})));
    assert_eq!(message.as_deref(), Some("6/6: step 6 of 6"));
    let capabilities: ClientCapabilities = serde_json::from_value(json!({})).unwrap();
    let inline = ClientConfig::new(capabilities, Implementation::new("inline", "0"))
        .serve_with_lifecycle(
            StreamableHttpClientTransport::from_uri(cluster.url(2)),
            ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            },
        )
        .await
        .unwrap();
    let inline_result = inline.call_tool(call("long", arguments)).await.unwrap();
    assert_eq!(
        serde_json::to_value(&result).unwrap(),
        serde_json::to_value(&inline_result).unwrap(),
        "the task's result is the inline call's"
    );

    // Made on A, cancelled through C: the call's token fires on A.
    let task = start_task(&a, "long", json!({"steps": 400, "step_ms": 25})).await;
    let id = task.task.task_id.clone();
    poll(&b, &id, Duration::from_secs(10), |p| {
        matches!(p, TaskPayload::Working)
    })
    .await;
    c.cancel_task(CancelTaskParams::new(id.clone()))
        .await
        .expect("tasks/cancel on another replica");
    let (payload, _) = poll(&b, &id, Duration::from_secs(10), |p| {
        p.status().is_terminal()
    })
    .await;
    assert_eq!(payload, TaskPayload::Cancelled);

    // A task that asks: input_required on B, answered through C.
    let task = start_task(&a, "confirm", json!({})).await;
    let id = task.task.task_id.clone();
    let (payload, _) = poll(&b, &id, Duration::from_secs(10), |p| {
        matches!(p, TaskPayload::InputRequired { .. })
    })
    .await;
    let TaskPayload::InputRequired { input_requests } = payload else {
        unreachable!()
    };
    assert_eq!(input_requests.keys().collect::<Vec<_>>(), ["elicitation-1"]);
    c.update_task(
        serde_json::from_value::<UpdateTaskParams>(json!({
            "taskId": id,
            "inputResponses": {"elicitation-1": {"action": "accept", "content": {"sure": true}}}
        }))
        .unwrap(),
    )
    .await
    .expect("tasks/update on another replica");
    let (payload, _) = poll(&b, &id, Duration::from_secs(10), |p| {
        p.status().is_terminal()
    })
    .await;
    assert_eq!(
        completed(&payload).structured_content,
        Some(json!({"action": "accept {\"sure\":true}"}))
    );

    // An approval asked by an inline call on A, answered through B.
    let asked = input_required(&a, "guarded", json!({})).await;
    let state = asked.request_state.clone().expect("a requestState");
    let key = asked
        .input_requests
        .as_ref()
        .and_then(|requests| requests.keys().next().cloned())
        .expect("an input request");
    let answered = retry(
        &b,
        "guarded",
        json!({}),
        &state,
        json!({key.clone(): {"action": "accept", "content": {"approve": true}}}),
    )
    .await;
    let Ok(CallToolResponse::Complete(result)) = answered else {
        panic!("expected the call's result through B, got {answered:?}")
    };
    assert_eq!(result.structured_content, Some(json!({"ran": true})));
    // Good for one retry, on any replica.
    let again = retry(
        &c,
        "guarded",
        json!({}),
        &state,
        json!({key: {"action": "accept", "content": {"approve": true}}}),
    )
    .await;
    assert_eq!(mcp_error(again).code, ErrorCode::INVALID_PARAMS);

    // The same through the balancer: a task polled to its result, and an
    // approval answered, each request on whichever replica comes next.
    let balanced = client(&cluster.balancer.url, None).await;
    let task = start_task(&balanced, "long", json!({"steps": 3, "step_ms": 10})).await;
    let (payload, _) = poll(
        &balanced,
        &task.task.task_id,
        Duration::from_secs(20),
        |p| p.status().is_terminal(),
    )
    .await;
    assert_eq!(
        completed(&payload).structured_content,
        Some(json!({"steps": 3}))
    );
    for _ in 0..3 {
        let asked = input_required(&balanced, "guarded", json!({})).await;
        let state = asked.request_state.unwrap();
        let key = asked
            .input_requests
            .unwrap()
            .keys()
            .next()
            .cloned()
            .unwrap();
        let answered = retry(
            &balanced,
            "guarded",
            json!({}),
            &state,
            json!({key: {"action": "accept", "content": {"approve": true}}}),
        )
        .await;
        assert!(
            matches!(&answered, Ok(CallToolResponse::Complete(r)) if r.structured_content == Some(json!({"ran": true}))),
            "{answered:?}"
        );
    }

    // Every call ran on one replica, and its log holds it whole: the call,
    // its approval, its result, once.
    let long = calls_of(&cluster.logs, "long", 3);
    let guarded = calls_of(&cluster.logs, "guarded", 4);
    for (id, (log, results)) in long.iter().chain(&guarded) {
        assert_eq!(results.len(), 1, "{id} in log {log}: {results:?}");
    }
    let cancelled: Vec<&String> = long
        .iter()
        .filter(|(_, (_, r))| r[0]["error"]["code"] == "ABORTED")
        .map(|(id, _)| id)
        .collect();
    assert_eq!(cancelled.len(), 1, "{long:?}");
    assert_eq!(
        mark(&cluster.marks, cancelled[0]),
        format!("{} cancelled", cancelled[0])
    );
    let logs_used: HashSet<usize> = guarded.values().map(|(log, _)| *log).collect();
    assert!(
        logs_used.len() >= 2,
        "the balanced calls ran on several replicas: {guarded:?}"
    );

    // The three logs replay as one session: every call with its result,
    // and each approval with its call.
    let registry = toolprism::Registry::builder().build().unwrap();
    let replayed = toolprism::replay::replay_logs(&cluster.logs, &registry).unwrap();
    assert!(replayed.problems.is_empty(), "{:?}", replayed.problems);
    let entries: Vec<_> = replayed.entries.iter().filter(|e| !e.nested).collect();
    assert!(entries.iter().all(|e| e.has_result()), "{entries:#?}");
    assert!(
        entries
            .windows(2)
            .all(|w| w[0].time_ms.unwrap() <= w[1].time_ms.unwrap()),
        "in the order they were made"
    );
    let approved = entries
        .iter()
        .filter(|e| e.name == "guarded" && e.approval.is_some())
        .count();
    assert_eq!(approved, 4, "{entries:#?}");

    for client in [a, b, c, inline, balanced] {
        client.cancel().await.unwrap();
    }
}

/// A replica killed mid-task: its task ends `failed`, saying the server
/// stopped, within two leases of its death; the others keep serving.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn w16_a_killed_replicas_task_ends_failed_within_its_lease() {
    let lease_ms = 500;
    let Some(mut cluster) = Cluster::start(
        "w16_a_killed_replicas_task_ends_failed_within_its_lease",
        &["--stateless", "--lease-ms", &lease_ms.to_string()],
    ) else {
        return;
    };
    let a = client(&cluster.url(0), None).await;
    let b = client(&cluster.url(1), None).await;
    let task = start_task(&a, "long", json!({"steps": 400, "step_ms": 25})).await;
    let id = task.task.task_id.clone();
    poll(&b, &id, Duration::from_secs(10), |p| {
        matches!(p, TaskPayload::Working)
    })
    .await;
    let killed = Instant::now();
    drop(cluster.replicas.remove(0));
    let (payload, _) = poll(&b, &id, Duration::from_secs(10), |p| {
        p.status().is_terminal()
    })
    .await;
    let took = killed.elapsed();
    let TaskPayload::Failed { error } = &payload else {
        panic!("expected failed, got {payload:?}")
    };
    assert!(
        error["message"].as_str().unwrap().contains("stopped"),
        "{error:?}"
    );
    // Two leases, and a poll, and the machine's slack.
    assert!(
        took < Duration::from_millis(2 * lease_ms + 1500),
        "failed {took:?} after the kill"
    );
    eprintln!(
        "the task of the killed replica ended failed {took:?} after the kill (lease {lease_ms} ms)"
    );
    // The others serve on, through the balancer too (HAProxy tries another
    // server when the dead one refuses).
    let balanced = client(&cluster.balancer.url, None).await;
    for i in 0..12 {
        let text = format!("still here {i}");
        let result = balanced
            .call_tool(call("echo", json!({"text": text})))
            .await
            .expect("served by a live replica");
        assert_eq!(result.structured_content.unwrap()["text"], text);
    }
    b.cancel().await.unwrap();
    balanced.cancel().await.unwrap();
    drop(a);
}

/// Redis stops mid-run: what needs it is a clear error, inline calls are
/// served, a task's end is kept until Redis is back, and the replicas
/// reconnect by themselves.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn w16_redis_away_is_a_clear_error_and_back_is_served_again() {
    let Some(mut cluster) = Cluster::start(
        "w16_redis_away_is_a_clear_error_and_back_is_served_again",
        &["--stateless"],
    ) else {
        return;
    };
    let a = client(&cluster.url(0), None).await;
    let b = client(&cluster.url(1), None).await;
    let balanced = client(&cluster.balancer.url, None).await;
    // A task that outlives the outage.
    let task = start_task(&a, "long", json!({"steps": 30, "step_ms": 50})).await;
    let id = task.task.task_id.clone();
    poll(&b, &id, Duration::from_secs(10), |_| true).await;

    cluster.redis.stop();
    let error = mcp_error(b.get_task(GetTaskParams::new(id.clone())).await);
    assert_eq!(error.code, ErrorCode::INTERNAL_ERROR, "{error:?}");
    assert!(
        error.message.contains("store") && error.message.contains("unreachable"),
        "{error:?}"
    );
    // Inline calls go on, through every replica.
    for i in 0..6 {
        let text = format!("no redis {i}");
        let result = balanced
            .call_tool(call("echo", json!({"text": text})))
            .await
            .expect("an inline call without Redis");
        assert_eq!(result.structured_content.unwrap()["text"], text);
    }
    // A tool that may run as a task runs inline; one that must is refused,
    // naming the store.
    let inline = balanced
        .call_tool_once(call("long", json!({"steps": 1, "step_ms": 1})))
        .await;
    assert!(
        matches!(&inline, Ok(CallToolResponse::Complete(r)) if r.structured_content == Some(json!({"steps": 1}))),
        "{inline:?}"
    );
    let refused = mcp_error(
        balanced
            .call_tool_once(call("long_required", json!({"steps": 1, "step_ms": 1})))
            .await,
    );
    assert!(refused.message.contains("store"), "{refused:?}");
    // An approval needs the store: a clear error, and the call never runs.
    let asked = mcp_error(a.call_tool_once(call("guarded", json!({}))).await);
    assert!(asked.message.contains("store"), "{asked:?}");

    // Back, empty (no persistence): the replicas reconnect, and the task
    // made before the outage ends with its result, written again by its
    // replica.
    tokio::time::sleep(Duration::from_millis(300)).await;
    cluster.redis.resume();
    let (payload, _) = poll(&b, &id, Duration::from_secs(20), |p| {
        p.status().is_terminal()
    })
    .await;
    assert_eq!(
        completed(&payload).structured_content,
        Some(json!({"steps": 30}))
    );
    let task = start_task(&balanced, "long", json!({"steps": 2, "step_ms": 5})).await;
    let (payload, _) = poll(
        &balanced,
        &task.task.task_id,
        Duration::from_secs(10),
        |p| p.status().is_terminal(),
    )
    .await;
    assert_eq!(
        completed(&payload).structured_content,
        Some(json!({"steps": 2}))
    );
    for client in [a, b, balanced] {
        client.cancel().await.unwrap();
    }
}

/// With authentication, a task, a call waiting for input and a legacy
/// session are their caller's only, whichever replica is asked; a legacy
/// session opened on one replica is served by the others.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn w16_a_caller_sees_only_its_own_on_every_replica() {
    // Sessions kept (not --stateless): legacy sessions are restored from
    // the store.
    let Some(cluster) = Cluster::start(
        "w16_a_caller_sees_only_its_own_on_every_replica",
        &["--verifier"],
    ) else {
        return;
    };
    let expiry = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
        + 3600;
    let (alice_token, bob_token) = (format!("alice.{expiry}"), format!("bob.{expiry}"));
    let alice_a = client(&cluster.url(0), Some(&alice_token)).await;
    let alice_b = client(&cluster.url(1), Some(&alice_token)).await;
    let bob_b = client(&cluster.url(1), Some(&bob_token)).await;
    let bob_c = client(&cluster.url(2), Some(&bob_token)).await;

    let task = start_task(&alice_a, "long", json!({"steps": 200, "step_ms": 25})).await;
    let id = task.task.task_id.clone();
    for error in [
        mcp_error(bob_b.get_task(GetTaskParams::new(id.clone())).await),
        mcp_error(bob_c.cancel_task(CancelTaskParams::new(id.clone())).await),
        mcp_error(
            bob_c
                .update_task(
                    serde_json::from_value::<UpdateTaskParams>(
                        json!({"taskId": id, "inputResponses": {}}),
                    )
                    .unwrap(),
                )
                .await,
        ),
    ] {
        assert_eq!(error.code, ErrorCode::INVALID_PARAMS, "{error:?}");
        assert!(error.message.contains("unknown task"), "{error:?}");
    }
    let (payload, _) = poll(&alice_b, &id, Duration::from_secs(5), |_| true).await;
    assert_eq!(payload, TaskPayload::Working, "bob's cancel did nothing");
    alice_b
        .cancel_task(CancelTaskParams::new(id.clone()))
        .await
        .unwrap();

    // Alice's call waiting for her approval: bob cannot answer it on any
    // replica, and trying does not spend it.
    let asked = input_required(&alice_a, "guarded", json!({})).await;
    let state = asked.request_state.unwrap();
    let key = asked
        .input_requests
        .unwrap()
        .keys()
        .next()
        .cloned()
        .unwrap();
    let answer = json!({key: {"action": "accept", "content": {"approve": true}}});
    for bob in [&bob_b, &bob_c] {
        let refused = mcp_error(retry(bob, "guarded", json!({}), &state, answer.clone()).await);
        assert_eq!(refused.code, ErrorCode::INVALID_PARAMS, "{refused:?}");
    }
    let answered = retry(&alice_b, "guarded", json!({}), &state, answer).await;
    assert!(
        matches!(&answered, Ok(CallToolResponse::Complete(r)) if r.structured_content == Some(json!({"ran": true}))),
        "{answered:?}"
    );

    // A legacy session opened on A is served on B and C, to alice only.
    let alice = raw::bearer(&alice_token);
    let bob = raw::bearer(&bob_token);
    let alice_auth = [("Authorization", alice.as_str())];
    let opened = Session::open(cluster.replicas[0].addr(), &alice_auth);
    for (i, replica) in cluster.replicas.iter().enumerate().skip(1) {
        let elsewhere = Session {
            addr: replica.addr().to_owned(),
            id: opened.id.clone(),
        };
        let reply = elsewhere
            .call(&alice_auth, 10 + i as u64, "echo", json!({"text": "moved"}))
            .unwrap();
        assert_eq!(reply.status, 200, "{reply:?}");
        let answer = reply.answer(10 + i as u64).expect("the call's answer");
        assert_eq!(
            answer["result"]["structuredContent"]["text"], "moved",
            "{answer}"
        );
        let stolen = elsewhere
            .call(
                &[("Authorization", bob.as_str())],
                20,
                "echo",
                json!({"text": "x"}),
            )
            .unwrap();
        assert_eq!(
            stolen.status, 404,
            "bob cannot use alice's session: {stolen:?}"
        );
    }
    for client in [alice_a, alice_b, bob_b, bob_c] {
        client.cancel().await.unwrap();
    }
}

/// 1,000 calls through the balancer, from ten clients at once: each
/// answered once, with its own answer; the three logs hold each call once,
/// with its result, and replay as one session of 1,000 calls.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn w16_a_thousand_calls_across_the_replicas_none_lost_none_twice() {
    let Some(cluster) = Cluster::start(
        "w16_a_thousand_calls_across_the_replicas_none_lost_none_twice",
        &["--stateless"],
    ) else {
        return;
    };
    let started = Instant::now();
    let mut clients = Vec::new();
    for _ in 0..10 {
        clients.push(client(&cluster.balancer.url, None).await);
    }
    let mut runs = Vec::new();
    for (c, client) in clients.iter().enumerate() {
        let client = client.peer().clone();
        runs.push(tokio::spawn(async move {
            let mut wrong = Vec::new();
            for i in 0..100 {
                let text = format!("call {c}-{i}");
                match client.call_tool(call("echo", json!({"text": text}))).await {
                    Ok(result)
                        if result
                            .structured_content
                            .as_ref()
                            .is_some_and(|v| v["text"] == text) => {}
                    other => wrong.push(format!("{text}: {other:?}")),
                }
            }
            wrong
        }));
    }
    let mut wrong = Vec::new();
    for run in runs {
        wrong.extend(run.await.unwrap());
    }
    assert_eq!(wrong, Vec::<String>::new());
    eprintln!(
        "1,000 calls through the balancer in {:?}",
        started.elapsed()
    );

    let echoes = calls_of(&cluster.logs, "echo", 1000);
    assert_eq!(echoes.len(), 1000, "each call logged once");
    let mut per_log = [0usize; 3];
    for (id, (log, results)) in &echoes {
        assert_eq!(results.len(), 1, "{id}: {results:?}");
        per_log[*log] += 1;
    }
    for n in per_log {
        assert!(n >= 200, "every replica served its share: {per_log:?}");
    }
    let texts: HashSet<String> = all_events(&cluster.logs)
        .iter()
        .filter(|(_, e)| e["type"] == "tool/call" && e["name"] == "echo")
        .map(|(_, e)| e["arguments"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(texts.len(), 1000, "no call was made twice");

    let registry = toolprism::Registry::builder().build().unwrap();
    let replayed = toolprism::replay::replay_logs(&cluster.logs, &registry).unwrap();
    assert!(replayed.problems.is_empty(), "{:?}", replayed.problems);
    let replayed_echoes: Vec<_> = replayed
        .entries
        .iter()
        .filter(|e| e.name == "echo")
        .collect();
    assert_eq!(replayed_echoes.len(), 1000);
    assert!(replayed_echoes.iter().all(|e| e.has_result()));
    let from: HashSet<usize> = replayed_echoes.iter().map(|e| e.log).collect();
    assert_eq!(from.len(), 3);
    for client in clients {
        client.cancel().await.unwrap();
    }
}
