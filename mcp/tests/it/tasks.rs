//! Long-running tools as MCP tasks (W10 in docs/contract.md): the test
//! server (`tests/support/server.rs --tasks`) as a real process, over stdio
//! and Streamable HTTP, against rmcp's own client at `2026-07-28`.

use crate::support;

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CancelTaskParams, ClientCapabilities,
    ClientConfig, CreateTaskResult, ErrorCode, GetTaskParams, Implementation, ProtocolVersion,
    TaskPayload, TaskStatus, UpdateTaskParams,
};
use rmcp::service::RunningService;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ClientLifecycleMode, ClientServiceExt, RoleClient, ServiceError, ServiceExt};
use serde_json::{Value, json};
use support::{HttpServer, log_events, server_exe};

type Client = RunningService<RoleClient, ClientConfig>;

/// A client's configuration: the tasks extension declared or not, and
/// form elicitation.
fn config(tasks: bool) -> ClientConfig {
    let mut capabilities = json!({"elicitation": {}});
    if tasks {
        capabilities["extensions"] = json!({"io.modelcontextprotocol/tasks": {}});
    }
    let capabilities: ClientCapabilities = serde_json::from_value(capabilities).unwrap();
    ClientConfig::new(capabilities, Implementation::new("tasks-test", "0.0.0"))
}

fn modern() -> ClientLifecycleMode {
    ClientLifecycleMode::Discover {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
    }
}

/// The test server over stdio with `--tasks marks --server-log log` and
/// `extra`, and a `2026-07-28` client of it.
async fn stdio(tasks: bool, marks: &Path, log: &Path, extra: &[&str]) -> Client {
    let mut command = tokio::process::Command::new(server_exe());
    command
        .arg("--tasks")
        .arg(marks)
        .arg("--server-log")
        .arg(log)
        .args(extra)
        .stderr(Stdio::inherit());
    let transport = TokioChildProcess::new(command).expect("start the test server");
    config(tasks)
        .serve_with_lifecycle(transport, modern())
        .await
        .expect("a 2026-07-28 client")
}

/// A `2026-07-28` client of an HTTP test server.
async fn http(tasks: bool, server: &HttpServer) -> Client {
    support::tls_provider();
    let transport = StreamableHttpClientTransport::from_uri(server.url.clone());
    config(tasks)
        .serve_with_lifecycle(transport, modern())
        .await
        .expect("a 2026-07-28 client over HTTP")
}

fn call(name: &str, arguments: Value) -> CallToolRequestParams {
    CallToolRequestParams::new(name.to_owned())
        .with_arguments(arguments.as_object().cloned().unwrap())
}

/// The task handle a call answers.
async fn start(client: &Client, name: &str, arguments: Value) -> CreateTaskResult {
    match client.call_tool_once(call(name, arguments)).await {
        Ok(CallToolResponse::Task(task)) => task,
        other => panic!("expected a task for {name}, got {other:?}"),
    }
}

/// Polls `task` every 10 ms until `until` holds for its payload (at most
/// 20 s); returns the payloads seen, the last one holding.
async fn poll(
    client: &Client,
    task: &str,
    until: impl Fn(&TaskPayload) -> bool,
) -> Vec<(TaskPayload, Option<String>)> {
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut seen = Vec::new();
    loop {
        let got = client
            .get_task(GetTaskParams::new(task.to_owned()))
            .await
            .expect("tasks/get");
        assert_eq!(got.task.task.task_id, task);
        let done = until(&got.task.payload);
        seen.push((got.task.payload, got.task.task.status_message));
        if done {
            return seen;
        }
        assert!(
            Instant::now() < deadline,
            "the task never got there: {seen:?}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
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

fn is_terminal(payload: &TaskPayload) -> bool {
    payload.status().is_terminal()
}

fn mcp_error(result: Result<impl std::fmt::Debug, ServiceError>) -> rmcp::ErrorData {
    match result {
        Err(ServiceError::McpError(error)) => error,
        other => panic!("expected a protocol error, got {other:?}"),
    }
}

/// The lines of the marks file, waiting until one names `call`.
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

/// A long call as a task: answered at once, `working` with its progress as
/// the status message, then `completed` with the very result the inline
/// call of a client without tasks gets; logged once.
async fn round_trip(
    client: &Client,
    inline: &Client,
    log: &Path,
    marks: &Path,
    calls_in_log: usize,
) {
    // The server says it serves tasks, and which tools may be ones.
    let info = client.peer_info().expect("server/discover answered");
    assert!(info.capabilities.supports_tasks(), "{info:?}");
    let tools = client.list_all_tools().await.unwrap();
    let support = |name: &str| {
        let tool = tools.iter().find(|t| t.name == name).unwrap();
        tool.meta
            .as_ref()
            .and_then(|m| m.0.get("toolprism/taskSupport"))
            .cloned()
    };
    assert_eq!(support("long"), Some(json!("optional")));
    assert_eq!(support("long_required"), Some(json!("required")));
    assert_eq!(support("echo"), None);

    let arguments = json!({"steps": 5, "step_ms": 60});
    let started = Instant::now();
    let task = start(client, "long", arguments.clone()).await;
    let answered = started.elapsed();
    assert!(
        answered < Duration::from_millis(250),
        "the handle comes before the work ends: {answered:?}"
    );
    assert_eq!(task.task.status, TaskStatus::Working);
    assert!(task.task.ttl_ms.is_some() && task.task.poll_interval_ms.is_some());
    let seen = poll(client, &task.task.task_id, is_terminal).await;
    let progress: Vec<&str> = seen
        .iter()
        .filter(|(p, _)| matches!(p, TaskPayload::Working))
        .filter_map(|(_, message)| message.as_deref())
        .collect();
    assert!(
        progress
            .iter()
            .any(|m| m.starts_with("1/5: step 1 of 5") || m.starts_with("2/5")),
        "progress as the status message: {seen:?}"
    );
    let result = completed(&seen.last().unwrap().0);

    let inline_result = inline
        .call_tool(call("long", arguments.clone()))
        .await
        .expect("the inline call");
    assert_eq!(
        serde_json::to_value(&result).unwrap(),
        serde_json::to_value(&inline_result).unwrap(),
        "the task's result is the inline call's"
    );
    assert_eq!(result.is_error, Some(false));
    assert_eq!(result.structured_content, Some(json!({"steps": 5})));
    assert_eq!(
        result.meta.as_ref().unwrap().0["toolprism/meta"],
        json!({"steps": 5})
    );

    // Logged like an inline call, once; the call ran to its end and its
    // token never fired.
    let (calls, results) = logged(log, "long", calls_in_log);
    let task_call = calls.last().unwrap();
    let task_result = results.last().unwrap();
    let sent: Value = serde_json::from_str(task_call["arguments"].as_str().unwrap()).unwrap();
    assert_eq!(sent, arguments, "the arguments as sent");
    assert_eq!(
        task_result["content"][0]["text"], "worked 5 steps",
        "{task_result}"
    );
    assert_eq!(task_result["meta"], json!({"steps": 5}), "{task_result}");
    for call in &calls {
        let id = call["callId"].as_str().unwrap();
        assert_eq!(mark(marks, id), format!("{id} done"));
    }
}

/// The `n` calls of `name` in the log, each with exactly one result.
fn logged(log: &Path, name: &str, n: usize) -> (Vec<Value>, Vec<Value>) {
    let ended = |events: &[Value]| {
        events
            .iter()
            .filter(|e| e["type"] == "tool/call" && e["name"] == name)
            .filter(|c| {
                events
                    .iter()
                    .any(|e| e["type"] == "tool/result" && e["callId"] == c["callId"])
            })
            .count()
    };
    let events = log_events(log, Duration::from_secs(10), |events| ended(events) >= n);
    let calls: Vec<Value> = events
        .iter()
        .filter(|e| e["type"] == "tool/call" && e["name"] == name)
        .cloned()
        .collect();
    assert_eq!(calls.len(), n, "{n} calls of {name} logged: {events:#?}");
    let mut results = Vec::new();
    for call in &calls {
        let of: Vec<&Value> = events
            .iter()
            .filter(|e| e["type"] == "tool/result" && e["callId"] == call["callId"])
            .collect();
        assert_eq!(of.len(), 1, "one result for {call}: {events:#?}");
        results.push(of[0].clone());
    }
    (calls, results)
}

/// `tasks/cancel` mid-way: the call's token fires, the call ends `ABORTED`
/// in the log (once), the task ends `cancelled`.
async fn cancel_mid_way(client: &Client, log: &Path, marks: &Path) {
    let task = start(client, "long", json!({"steps": 400, "step_ms": 25})).await;
    let id = task.task.task_id.clone();
    // Mid-way: once it has reported progress.
    let seen = poll(client, &id, |_| true).await;
    let _ = seen;
    let working = {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let got = client
                .get_task(GetTaskParams::new(id.clone()))
                .await
                .unwrap();
            if got.task.task.status_message.is_some() || Instant::now() > deadline {
                break got;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    };
    assert_eq!(working.task.status(), TaskStatus::Working, "{working:?}");
    assert!(working.task.task.status_message.is_some(), "{working:?}");
    client
        .cancel_task(CancelTaskParams::new(id.clone()))
        .await
        .expect("tasks/cancel is acknowledged");
    let seen = poll(client, &id, is_terminal).await;
    assert_eq!(seen.last().unwrap().0, TaskPayload::Cancelled, "{seen:?}");
    let (_, results) = logged(log, "long", 1);
    assert_eq!(results[0]["error"]["code"], "ABORTED", "{}", results[0]);
    let call_id = results[0]["callId"].as_str().unwrap();
    assert_eq!(mark(marks, call_id), format!("{call_id} cancelled"));
    // Cancelling an ended task changes nothing.
    client
        .cancel_task(CancelTaskParams::new(id.clone()))
        .await
        .unwrap();
    let again = client.get_task(GetTaskParams::new(id)).await.unwrap();
    assert_eq!(again.task.status(), TaskStatus::Cancelled);
}

struct Files {
    _dir: tempfile::TempDir,
    marks: std::path::PathBuf,
    log: std::path::PathBuf,
    other_log: std::path::PathBuf,
}

fn files() -> Files {
    let dir = tempfile::tempdir().unwrap();
    Files {
        marks: dir.path().join("marks"),
        log: dir.path().join("log.jsonl"),
        other_log: dir.path().join("other.jsonl"),
        _dir: dir,
    }
}

fn http_server(f: &Files, extra: &[&str]) -> HttpServer {
    let mut args = vec![
        "--tasks",
        f.marks.to_str().unwrap(),
        "--server-log",
        f.log.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    HttpServer::start(&args)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn w10_a_long_call_is_a_task_polled_to_the_inline_result_stdio() {
    let f = files();
    let client = stdio(true, &f.marks, &f.log, &[]).await;
    // Another process, with its own log: its call is the inline one.
    let inline = stdio(false, &f.marks, &f.other_log, &[]).await;
    round_trip(&client, &inline, &f.log, &f.marks, 1).await;
    client.cancel().await.unwrap();
    inline.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn w10_a_long_call_is_a_task_polled_to_the_inline_result_http() {
    let f = files();
    let server = http_server(&f, &[]);
    let client = http(true, &server).await;
    let inline = http(false, &server).await;
    round_trip(&client, &inline, &f.log, &f.marks, 2).await;
    client.cancel().await.unwrap();
    inline.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn w10_tasks_cancel_cancels_the_call_stdio() {
    let f = files();
    let client = stdio(true, &f.marks, &f.log, &[]).await;
    cancel_mid_way(&client, &f.log, &f.marks).await;
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn w10_tasks_cancel_cancels_the_call_http() {
    let f = files();
    let server = http_server(&f, &[]);
    let client = http(true, &server).await;
    cancel_mid_way(&client, &f.log, &f.marks).await;
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn w10_a_client_without_tasks_gets_the_inline_result() {
    let f = files();
    let arguments = json!({"steps": 2, "step_ms": 5});
    // 2026-07-28 without the extension, and a 2025-11-25 session that
    // declared it at `initialize` (the extension is 2026-07-28's).
    let modern = stdio(false, &f.marks, &f.log, &[]).await;
    let mut command = tokio::process::Command::new(server_exe());
    command
        .arg("--tasks")
        .arg(&f.marks)
        .stderr(Stdio::inherit());
    let legacy = config(true)
        .serve(TokioChildProcess::new(command).unwrap())
        .await
        .expect("a 2025-11-25 client");
    for client in [&modern, &legacy] {
        let result = client
            .call_tool(call("long", arguments.clone()))
            .await
            .expect("the inline result");
        assert_eq!(result.structured_content, Some(json!({"steps": 2})));
        // A tool that runs only as a task: -32021, naming the extension.
        let error = mcp_error(
            client
                .call_tool_once(call("long_required", arguments.clone()))
                .await,
        );
        assert_eq!(
            error.code,
            ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY,
            "{error:?}"
        );
        let data = error.data.expect("the required capability");
        assert!(
            data["requiredCapabilities"]["extensions"]
                .get("io.modelcontextprotocol/tasks")
                .is_some(),
            "{data}"
        );
    }
    // tasks/* are refused to a request that does not declare the extension.
    let error = mcp_error(modern.get_task(GetTaskParams::new("any")).await);
    assert_eq!(error.code, ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY);
    // The required tool never ran.
    let (calls, _) = logged(&f.log, "long", 1);
    assert_eq!(calls.len(), 1);
    let events = log_events(&f.log, Duration::ZERO, |_| true);
    assert!(
        !events.iter().any(|e| e["name"] == "long_required"),
        "{events:#?}"
    );
    modern.cancel().await.unwrap();
    legacy.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn w10_an_unknown_task_id_is_a_protocol_error() {
    let f = files();
    let client = stdio(true, &f.marks, &f.log, &[]).await;
    let errors = [
        mcp_error(client.get_task(GetTaskParams::new("no-such-task")).await),
        mcp_error(
            client
                .cancel_task(CancelTaskParams::new("no-such-task"))
                .await,
        ),
        mcp_error(
            client
                .update_task(
                    serde_json::from_value::<UpdateTaskParams>(json!({
                        "taskId": "no-such-task", "inputResponses": {}
                    }))
                    .unwrap(),
                )
                .await,
        ),
    ];
    for error in errors {
        assert_eq!(error.code, ErrorCode::INVALID_PARAMS, "{error:?}");
        assert!(
            error.message.contains("unknown task \"no-such-task\""),
            "{error:?}"
        );
    }
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn w10_a_task_that_asks_is_input_required_until_tasks_update_http() {
    let f = files();
    let server = http_server(&f, &[]);
    let client = http(true, &server).await;
    let task = start(&client, "confirm", json!({})).await;
    let id = task.task.task_id.clone();
    let seen = poll(&client, &id, |p| {
        matches!(p, TaskPayload::InputRequired { .. })
    })
    .await;
    let TaskPayload::InputRequired { input_requests } = &seen.last().unwrap().0 else {
        unreachable!()
    };
    let asked: Vec<&String> = input_requests.keys().collect();
    assert_eq!(asked, ["elicitation-1"], "{input_requests:?}");
    let request = serde_json::to_value(&input_requests["elicitation-1"]).unwrap();
    assert_eq!(request["method"], "elicitation/create", "{request}");
    assert_eq!(request["params"]["message"], "Go on?", "{request}");
    client
        .update_task(
            serde_json::from_value(json!({
                "taskId": id,
                "inputResponses": {"elicitation-1": {"action": "accept", "content": {"sure": true}}}
            }))
            .unwrap(),
        )
        .await
        .expect("tasks/update is acknowledged");
    let seen = poll(&client, &id, is_terminal).await;
    let result = completed(&seen.last().unwrap().0);
    assert_eq!(
        result.structured_content,
        Some(json!({"action": "accept {\"sure\":true}"})),
        "{result:?}"
    );
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn w10_a_task_past_its_ttl_is_cancelled_failed_and_then_forgotten() {
    let f = files();
    let client = stdio(true, &f.marks, &f.log, &["--task-ttl-ms", "400"]).await;
    let task = start(&client, "long", json!({"steps": 400, "step_ms": 25})).await;
    assert_eq!(task.task.ttl_ms, Some(400));
    let id = task.task.task_id.clone();
    let seen = poll(&client, &id, is_terminal).await;
    let TaskPayload::Failed { error } = &seen.last().unwrap().0 else {
        panic!("expected failed: {seen:?}")
    };
    assert!(
        error["message"].as_str().unwrap().contains("ttl"),
        "{error:?}"
    );
    let (_, results) = logged(&f.log, "long", 1);
    assert_eq!(results[0]["error"]["code"], "ABORTED");
    let call_id = results[0]["callId"].as_str().unwrap();
    assert_eq!(mark(&f.marks, call_id), format!("{call_id} cancelled"));
    // Kept one ttl after it ended, then forgotten.
    let ended = client
        .get_task(GetTaskParams::new(id.clone()))
        .await
        .unwrap();
    assert!(ended.task.task.ttl_ms.unwrap() >= 800, "{ended:?}");
    tokio::time::sleep(Duration::from_millis(500)).await;
    let error = mcp_error(client.get_task(GetTaskParams::new(id)).await);
    assert_eq!(error.code, ErrorCode::INVALID_PARAMS);
    client.cancel().await.unwrap();
}

/// What a task costs: the same short call (`long`, no steps) inline and as
/// a task (the call, then `tasks/get` until it ended), over stdio. Prints
/// the mean round trips.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn w10_the_task_round_trip_against_the_inline_call() {
    let f = files();
    let client = stdio(true, &f.marks, &f.log, &[]).await;
    let inline = stdio(false, &f.marks, &f.other_log, &[]).await;
    let arguments = json!({"steps": 0, "step_ms": 0});
    let rounds = 50u32;
    let (mut as_task, mut as_call, mut polls) = (Duration::ZERO, Duration::ZERO, 0);
    for _ in 0..rounds {
        let started = Instant::now();
        let result = inline
            .call_tool(call("long", arguments.clone()))
            .await
            .unwrap();
        as_call += started.elapsed();
        let started = Instant::now();
        let task = start(&client, "long", arguments.clone()).await;
        let mut seen;
        loop {
            seen = client
                .get_task(GetTaskParams::new(task.task.task_id.clone()))
                .await
                .unwrap();
            polls += 1;
            if seen.task.status().is_terminal() {
                break;
            }
        }
        as_task += started.elapsed();
        assert_eq!(
            serde_json::to_value(completed(&seen.task.payload)).unwrap(),
            serde_json::to_value(&result).unwrap()
        );
    }
    eprintln!(
        "inline: {:?} per call; as a task: {:?} per call ({:.1} tasks/get each)",
        as_call / rounds,
        as_task / rounds,
        f64::from(polls) / f64::from(rounds)
    );
    client.cancel().await.unwrap();
    inline.cancel().await.unwrap();
}
