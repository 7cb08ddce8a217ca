//! The caller an edge names for a call reaches the pre-execute policies
//! and the tool, and a nested call inherits it.

use serde_json::Value;
use toolprism_core::Caller;
use toolprism_core::ContentBlock;
use toolprism_core::ToolContext;
use toolprism_core::ToolInfo;
use toolprism_core::ToolResult;
use toolprism_core::{CallCard, ResultCard};
use toolprism_core::{CallOptions, Registry, ToolCall};
use toolprism_core::{ErrorCode, ToolError};
use toolprism_core::{NoMeta, Tool};
use toolprism_core::{PreDecision, PreExecute};

#[derive(Clone, serde::Deserialize, schemars::JsonSchema)]
struct NoArgs {}

/// Its value is the subject it sees in its context, then the subject
/// its nested call to `blocking_whoami` saw.
struct Whoami;

impl Tool for Whoami {
    type Args = NoArgs;
    type Value = Vec<String>;
    type Meta = NoMeta;
    const INFO: ToolInfo = ToolInfo::new("whoami", "The caller's subject.");

    async fn execute(&self, _: NoArgs, cx: &ToolContext<'_>) -> Result<Vec<String>, ToolError> {
        let mut seen = vec![cx.caller().map_or("-", Caller::subject).to_owned()];
        let inner = cx
            .call_nested("blocking_whoami", serde_json::json!({}))
            .await?;
        seen.push(inner.as_str().unwrap_or("?").to_owned());
        Ok(seen)
    }

    fn render(_: &NoArgs, value: &Vec<String>) -> Vec<ContentBlock> {
        vec![ContentBlock::text(value.join(","))]
    }

    fn present_call(_: &NoArgs) -> Option<CallCard> {
        None
    }

    fn present_result(_: &NoArgs, _: &ToolResult<NoMeta>) -> Option<ResultCard> {
        None
    }
}

/// The same, blocking.
struct BlockingWhoami;

impl Tool for BlockingWhoami {
    type Args = NoArgs;
    type Value = String;
    type Meta = NoMeta;
    const INFO: ToolInfo =
        ToolInfo::new("blocking_whoami", "The caller's subject.").with_blocking(true);

    fn execute_blocking(&self, _: NoArgs, cx: &ToolContext<'_>) -> Result<String, ToolError> {
        Ok(cx.caller().map_or("-", Caller::subject).to_owned())
    }

    async fn execute(&self, args: NoArgs, cx: &ToolContext<'_>) -> Result<String, ToolError> {
        self.execute_blocking(args, cx)
    }

    fn render(_: &NoArgs, value: &String) -> Vec<ContentBlock> {
        vec![ContentBlock::text(value)]
    }
}

/// Lets only `alice` run `whoami`, and only callers run
/// `blocking_whoami`.
fn only_alice(call: &PreExecute<'_>) -> PreDecision {
    match (call.tool, call.caller.map(Caller::subject)) {
        ("whoami", Some("alice")) => PreDecision::Allow,
        ("whoami", Some(other)) => PreDecision::deny(format!("{other} may not")),
        (_, None) => PreDecision::deny("no caller"),
        _ => PreDecision::Allow,
    }
}

fn registry() -> Registry {
    Registry::builder()
        .tool(Whoami)
        .tool(BlockingWhoami)
        .pre_execute(only_alice)
        .build()
        .unwrap()
}

fn run(registry: &Registry, tool: &str, caller: Option<Caller>) -> toolprism_core::ToolOutcome {
    let mut options = CallOptions::new();
    if let Some(caller) = caller {
        options = options.with_caller(caller);
    }
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap()
        .block_on(registry.call_with(ToolCall::new("c1", tool, "{}"), &options))
}

#[test]
fn w3_a_policy_allows_one_caller_and_denies_another() {
    let registry = registry();
    let alice = run(&registry, "whoami", Some(Caller::new("alice")));
    assert!(!alice.is_error(), "{alice:?}");
    // The tool and its nested call saw alice: the nested call carried
    // her identity through its own policy check too (which denies a
    // call without a caller).
    assert_eq!(
        alice.value().unwrap(),
        &serde_json::json!(["alice", "alice"])
    );

    let bob = run(&registry, "whoami", Some(Caller::new("bob")));
    assert_eq!(bob.code(), Some(&ErrorCode::Denied));
    assert_eq!(bob.error().unwrap().message, "bob may not");

    let nobody = run(&registry, "whoami", None);
    assert_eq!(nobody.code(), Some(&ErrorCode::Denied));
    assert_eq!(nobody.error().unwrap().message, "no caller");
}

#[test]
fn w3_a_blocking_tool_sees_its_caller() {
    let registry = registry();
    let out = run(&registry, "blocking_whoami", Some(Caller::new("carol")));
    assert_eq!(out.value().unwrap(), "carol");
}

#[test]
fn scopes_claims_and_debug() {
    let caller = Caller::new("ci")
        .with_scopes(["a", "b"])
        .with_claims(serde_json::json!({"email": "ci@example.com"}));
    assert!(caller.has_scope("b") && !caller.has_scope("c"));
    assert_eq!(caller.scopes(), ["a", "b"]);
    let debug = format!("{caller:?}");
    assert!(
        debug.contains("\"ci\"") && debug.contains("\"email\""),
        "{debug}"
    );
    assert!(!debug.contains("ci@example.com"), "{debug}");
    assert_eq!(Caller::new("x").claims(), &Value::Null);
}
