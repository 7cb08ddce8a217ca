//! A call's client (W8 and W9 in docs/contract.md): what a running call may
//! ask of whoever is on the other side (log to it, ask its model, ask its
//! user), and approvals before `execute` runs, from the tool (static or a
//! function of the typed arguments) or from a policy. A call with no
//! client never hangs: it is told at once; a client that never answers is
//! bounded by the approval timeout; every decision is logged with the call
//! and replayed.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use toolprism::client::{
    ApprovalAnswer, ApprovalRequest, Client, ClientError, ClientFuture, ElicitRequest,
    ElicitResponse, LogLevel, SampleRequest, SampleResponse,
};
use toolprism::log::SessionLog;
use toolprism::replay::replay_log;
use toolprism::{
    ApprovalDecision, CallOptions, ContentBlock, PreDecision, PreExecute, Registry, ToolCall,
    ToolContext, ToolError, tool,
};

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

#[derive(Clone, Deserialize, JsonSchema)]
struct Path {
    path: String,
}

/// Counts its runs, so a test can prove `execute` never ran.
#[derive(Default, Clone)]
struct Runs(Arc<AtomicUsize>);

/// Deletes a file (pretends to).
#[tool(name = "delete", approval = "Delete the file?")]
impl DeleteTool {
    async fn execute(&self, args: Path, _cx: &ToolContext<'_>) -> Result<String, ToolError> {
        self.0.0.fetch_add(1, Ordering::SeqCst);
        Ok(args.path)
    }
    fn render(_: &Path, v: &String) -> Vec<ContentBlock> {
        vec![ContentBlock::text(format!("deleted {v}"))]
    }
}
struct DeleteTool(Runs);

/// Writes a file (pretends to); asks only outside `scratch/`.
#[tool(name = "write")]
impl WriteTool {
    async fn execute(&self, args: Path, _cx: &ToolContext<'_>) -> Result<String, ToolError> {
        self.0.0.fetch_add(1, Ordering::SeqCst);
        Ok(args.path)
    }
    fn render(_: &Path, v: &String) -> Vec<ContentBlock> {
        vec![ContentBlock::text(format!("wrote {v}"))]
    }
    fn approval(args: &Path) -> Option<String> {
        (!args.path.starts_with("scratch/")).then(|| format!("Write {}?", args.path))
    }
}
struct WriteTool(Runs);

#[derive(Clone, Deserialize, JsonSchema)]
struct Ask {
    question: String,
}

#[derive(Serialize, Deserialize, JsonSchema)]
struct Asked {
    model: Option<String>,
    answer: Value,
}

/// Asks the client's model, then the user, logging as it goes.
#[tool(name = "ask")]
impl AskTool {
    async fn execute(&self, args: Ask, cx: &ToolContext<'_>) -> Result<Asked, ToolError> {
        cx.log(LogLevel::Info, "asking");
        let sampled = cx
            .sample(SampleRequest::text(args.question.clone(), 50))
            .await
            .map_err(|e| ToolError::new(e.to_string()).with_code(e.code()))?;
        let form = ElicitRequest::new(
            args.question,
            json!({"type": "object", "properties": {"name": {"type": "string"}}}),
        );
        let answer = match cx
            .elicit(form)
            .await
            .map_err(|e| ToolError::new(e.to_string()).with_code(e.code()))?
        {
            ElicitResponse::Accept(content) => content,
            ElicitResponse::Decline => json!("declined"),
            ElicitResponse::Cancel => json!("cancelled"),
        };
        cx.log(LogLevel::Debug, json!({"done": true}));
        Ok(Asked {
            model: Some(sampled.model),
            answer,
        })
    }
    fn render(_: &Ask, v: &Asked) -> Vec<ContentBlock> {
        vec![ContentBlock::text(v.answer.to_string())]
    }
}
struct AskTool;

/// How a [`Person`] answers an approval.
#[derive(Debug, Clone)]
enum Plan {
    /// The person's answer.
    Says(ApprovalAnswer),
    /// The client cannot ask: its error.
    Fails(&'static str),
    /// The client's own code panics while asking.
    Panics,
    /// No answer, ever.
    Hangs,
}

/// A client that answers approvals as told, and records what it was sent.
struct Person {
    plan: Plan,
    asked: Mutex<Vec<ApprovalRequest>>,
    logs: Mutex<Vec<(LogLevel, String)>>,
}

impl Person {
    /// Approves (`Some(true)`), denies (`Some(false)`) or never answers.
    fn new(approve: Option<bool>) -> Arc<Person> {
        Person::with(match approve {
            Some(yes) => Plan::Says(yes.into()),
            None => Plan::Hangs,
        })
    }

    fn with(plan: Plan) -> Arc<Person> {
        Arc::new(Person {
            plan,
            asked: Mutex::default(),
            logs: Mutex::default(),
        })
    }
}

impl Client for Person {
    fn log(&self, level: LogLevel, _logger: Option<&str>, data: &Value) {
        self.logs.lock().unwrap().push((level, data.to_string()));
    }
    fn sample(&self, request: SampleRequest) -> ClientFuture<'_, SampleResponse> {
        Box::pin(async move {
            Ok(SampleResponse::new(
                ContentBlock::text(format!("re: {}", request.messages.len())),
                "test-model",
            ))
        })
    }
    fn elicit(&self, _request: ElicitRequest) -> ClientFuture<'_, ElicitResponse> {
        Box::pin(async { Ok(ElicitResponse::Accept(json!({"name": "Ada"}))) })
    }
    fn approve(&self, request: ApprovalRequest) -> ClientFuture<'_, ApprovalAnswer> {
        self.asked.lock().unwrap().push(request);
        let plan = self.plan.clone();
        Box::pin(async move {
            match plan {
                Plan::Says(answer) => Ok(answer),
                Plan::Fails(error) => Err(ClientError::Failed(error.to_owned())),
                Plan::Panics => panic!("the approval dialog crashed"),
                Plan::Hangs => std::future::pending().await,
            }
        })
    }
}

fn registry(runs: &Runs, log: Option<SessionLog>) -> Registry {
    let mut builder = Registry::builder()
        .tool(DeleteTool(runs.clone()))
        .tool(WriteTool(runs.clone()))
        .tool(AskTool)
        .approval_timeout(Duration::from_millis(300));
    if let Some(log) = log {
        builder = builder.log(log);
    }
    builder.build().unwrap()
}

fn call(
    registry: &Registry,
    name: &str,
    args: &str,
    client: Option<Arc<dyn Client>>,
) -> toolprism::ToolOutcome {
    let mut options = CallOptions::new();
    if let Some(client) = client {
        options = options.with_client(client);
    }
    runtime().block_on(registry.call_with(ToolCall::new("c1", name, args), &options))
}

#[test]
fn w9_an_approved_call_runs_a_denied_one_does_not() {
    let runs = Runs::default();
    let registry = registry(&runs, None);
    let person = Person::new(Some(true));
    let out = call(
        &registry,
        "delete",
        r#"{"path":"a.txt"}"#,
        Some(person.clone()),
    );
    assert!(!out.is_error(), "{out:?}");
    assert_eq!(out.approval().unwrap().decision, ApprovalDecision::Approved);
    assert_eq!(out.approval().unwrap().question, "Delete the file?");
    assert_eq!(runs.0.load(Ordering::SeqCst), 1);
    let asked = person.asked.lock().unwrap();
    assert_eq!(asked[0].tool, "delete");
    assert_eq!(asked[0].arguments, json!({"path": "a.txt"}));

    let no = Person::new(Some(false));
    let out = call(&registry, "delete", r#"{"path":"a.txt"}"#, Some(no));
    assert_eq!(out.code().unwrap(), "NOT_APPROVED");
    assert_eq!(out.approval().unwrap().decision, ApprovalDecision::Denied);
    assert!(
        out.error().unwrap().message.contains("did not approve"),
        "{out:?}"
    );
    assert_eq!(runs.0.load(Ordering::SeqCst), 1, "a denied call never runs");
}

#[test]
fn w9_no_client_and_no_answer_are_not_approved_and_never_hang() {
    let runs = Runs::default();
    let registry = registry(&runs, None);
    let out = call(&registry, "delete", r#"{"path":"a.txt"}"#, None);
    assert_eq!(out.code().unwrap(), "NOT_APPROVED");
    assert_eq!(
        out.approval().unwrap().decision,
        ApprovalDecision::Unavailable
    );
    assert!(out.error().unwrap().message.contains("cannot ask the user"));

    let start = Instant::now();
    let out = call(
        &registry,
        "delete",
        r#"{"path":"a.txt"}"#,
        Some(Person::new(None)),
    );
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "bounded by the approval timeout"
    );
    assert_eq!(
        out.approval().unwrap().decision,
        ApprovalDecision::Unanswered
    );
    assert!(
        out.error()
            .unwrap()
            .message
            .contains("no answer came within")
    );
    assert_eq!(runs.0.load(Ordering::SeqCst), 0);
}

#[test]
fn w9_a_dismissed_a_failed_and_a_panicking_approval_each_say_what_happened() {
    let runs = Runs::default();
    // A long approval timeout, so "at once" below has room for a slow
    // machine (or a panic's backtrace under RUST_BACKTRACE) and still
    // tells an answer from a timeout.
    let registry = Registry::builder()
        .tool(DeleteTool(runs.clone()))
        .approval_timeout(Duration::from_secs(30))
        .build()
        .unwrap();
    let cases = [
        (
            Plan::Says(ApprovalAnswer::Dismiss),
            ApprovalDecision::Dismissed,
            "the user dismissed the approval of this call of \"delete\" without answering",
        ),
        (
            Plan::Fails("JSON-RPC error -32603: no window"),
            ApprovalDecision::Failed,
            "the client could not ask the user (JSON-RPC error -32603: no window); it did not run",
        ),
        (
            Plan::Panics,
            ApprovalDecision::Failed,
            "the client could not ask the user (its code panicked while asking: the approval dialog crashed)",
        ),
    ];
    for (plan, decision, says) in cases {
        let started = Instant::now();
        let out = call(
            &registry,
            "delete",
            r#"{"path":"a.txt"}"#,
            Some(Person::with(plan.clone())),
        );
        assert_eq!(out.code().unwrap(), "NOT_APPROVED", "{plan:?}");
        assert_eq!(out.approval().unwrap().decision, decision, "{plan:?}");
        let message = &out.error().unwrap().message;
        assert!(message.contains(says), "{plan:?}: {message}");
        assert!(!message.contains("no answer came"), "{plan:?}: {message}");
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{plan:?}: at once, not after the approval timeout"
        );
    }
    assert_eq!(runs.0.load(Ordering::SeqCst), 0);
}

#[test]
fn w9_a_calls_own_approval_timeout_wins_over_the_registrys() {
    let runs = Runs::default();
    // The registry waits 300 ms; this call waits a whole second.
    let registry = registry(&runs, None);
    let options = CallOptions::new()
        .with_client(Person::new(None))
        .with_approval_timeout(Duration::from_secs(1));
    let started = Instant::now();
    let out = runtime().block_on(registry.call_with(
        ToolCall::new("c1", "delete", r#"{"path":"a.txt"}"#),
        &options,
    ));
    let took = started.elapsed();
    assert!(took >= Duration::from_secs(1), "{took:?}");
    assert_eq!(
        out.approval().unwrap().decision,
        ApprovalDecision::Unanswered
    );
    let message = &out.error().unwrap().message;
    assert!(message.contains("no answer came within 1 s"), "{message}");

    // A program's calls wait as long as the call that runs the program.
    use toolprism::code::CodeMode;
    let programs = Registry::builder()
        .tool(DeleteTool(runs.clone()))
        .approval_timeout(Duration::from_millis(300))
        .code_mode(toolprism::Mode::Both)
        .build()
        .unwrap();
    let program = json!({
        "description": "delete a.txt",
        "code": "try { await tools.delete({ path: \"a.txt\" }); return \"ran\"; } catch (e) { return e.message; }"
    });
    let started = Instant::now();
    let out = runtime().block_on(programs.call_with(
        ToolCall::new("c2", "run_code", program.to_string()),
        &options,
    ));
    assert!(started.elapsed() >= Duration::from_secs(1));
    let said = out.value().unwrap()["result"].as_str().unwrap().to_owned();
    assert!(said.contains("no answer came within 1 s"), "{said}");
    assert_eq!(runs.0.load(Ordering::SeqCst), 0);
}

#[test]
fn w9_approval_is_a_function_of_the_typed_arguments_or_a_policy() {
    let runs = Runs::default();
    let registry = registry(&runs, None);
    // No question for scratch files: runs with no client at all.
    let out = call(&registry, "write", r#"{"path":"scratch/x"}"#, None);
    assert!(!out.is_error(), "{out:?}");
    assert!(out.approval().is_none());
    let out = call(
        &registry,
        "write",
        r#"{"path":"src/x"}"#,
        Some(Person::new(Some(true))),
    );
    assert_eq!(out.approval().unwrap().question, "Write src/x?");

    // A policy asks for every ask call, even though the tool does not.
    let policy = |call: &PreExecute<'_>| match call.tool {
        "ask" => PreDecision::ask("Let it ask?"),
        _ => PreDecision::Allow,
    };
    let asking = Registry::builder()
        .tool(AskTool)
        .pre_execute(policy)
        .build()
        .unwrap();
    let out = call(
        &asking,
        "ask",
        r#"{"question":"q"}"#,
        Some(Person::new(Some(false))),
    );
    assert_eq!(out.code().unwrap(), "NOT_APPROVED");
    assert_eq!(out.approval().unwrap().question, "Let it ask?");
}

#[test]
fn w9_the_decision_is_logged_with_the_call_and_replayed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("session.jsonl");
    let runs = Runs::default();
    let registry = registry(&runs, Some(SessionLog::create(&path).unwrap()));
    call(
        &registry,
        "delete",
        r#"{"path":"a.txt"}"#,
        Some(Person::new(Some(false))),
    );
    let text = std::fs::read_to_string(&path).unwrap();
    let events: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let kinds: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["tool/call", "tool/approval", "tool/result"]);
    assert_eq!(events[1]["decision"], "denied");
    assert_eq!(events[1]["question"], "Delete the file?");
    let replayed = replay_log(&path, &registry).unwrap();
    let approval = replayed.entries[0].approval.as_ref().unwrap();
    assert_eq!(approval.decision, ApprovalDecision::Denied);
    assert_eq!(
        replayed.entries[0].error_code.as_ref().unwrap().as_str(),
        "NOT_APPROVED"
    );
}

#[test]
fn w8_a_call_logs_to_its_client_and_asks_its_model_and_user() {
    let runs = Runs::default();
    let registry = registry(&runs, None);
    let person = Person::new(Some(true));
    let out = call(
        &registry,
        "ask",
        r#"{"question":"who?"}"#,
        Some(person.clone()),
    );
    assert!(!out.is_error(), "{out:?}");
    assert_eq!(
        out.value().unwrap(),
        &json!({"model": "test-model", "answer": {"name": "Ada"}})
    );
    let logs = person.logs.lock().unwrap();
    assert_eq!(logs[0], (LogLevel::Info, "\"asking\"".to_owned()));
    assert_eq!(logs[1].0, LogLevel::Debug);
}

#[test]
fn w8_without_a_client_asking_fails_at_once_with_a_clear_code() {
    let runs = Runs::default();
    let registry = registry(&runs, None);
    let start = Instant::now();
    let out = call(&registry, "ask", r#"{"question":"who?"}"#, None);
    assert!(start.elapsed() < Duration::from_secs(2));
    assert_eq!(out.code().unwrap(), "CLIENT_UNAVAILABLE");
    assert!(
        out.error()
            .unwrap()
            .message
            .contains("cannot answer sampling"),
        "{out:?}"
    );
    assert_eq!(ClientError::TimedOut.code(), "CLIENT_TIMEOUT");
}
