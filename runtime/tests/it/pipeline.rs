//! The call pipeline, end to end: every failure mode is a result (C9), the
//! output contract (C1–C5), presenters (C6), policies (C10, C11) and
//! nested calls (C14). Each test is named after the rule it guards; the
//! rules are in docs/contract.md.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde::{Deserialize, Serialize, Serializer};
use serde_json::{Value, json};
use toolprism::card::{GenericResult, TerminalCall};
use toolprism::log::SessionLog;
use toolprism::replay::replay_log;
use toolprism::{
    CallCard, CallOptions, CancellationToken, ContentBlock, ErrorCode, NoMeta, PostDecision,
    PostExecute, PreDecision, PreExecute, Registry, ResultCard, Tool, ToolCall, ToolContext,
    ToolError, ToolInfo, ToolKind, ToolOutcome, ToolResult, tool,
};

// ---------------------------------------------------------------------------
// Test tools, written with #[tool] (the trait by hand further down)
// ---------------------------------------------------------------------------

#[derive(Clone, Deserialize, schemars::JsonSchema)]
struct TextArgs {
    text: String,
}

#[derive(Debug, Serialize, Deserialize, schemars::JsonSchema, PartialEq)]
struct Echoed {
    text: String,
    len: usize,
}

#[derive(Serialize, Deserialize)]
struct EchoMeta {
    len: usize,
}

/// Echoes; counts its executions so tests can prove a call never ran.
struct Echo {
    runs: Arc<AtomicUsize>,
}

/// Echo the text back.
#[tool(kind = read)]
impl Echo {
    async fn execute(&self, args: TextArgs, _cx: &ToolContext<'_>) -> Result<Echoed, ToolError> {
        self.runs.fetch_add(1, Ordering::SeqCst);
        Ok(Echoed {
            len: args.text.len(),
            text: args.text,
        })
    }

    fn render(_args: &TextArgs, value: &Echoed) -> Vec<ContentBlock> {
        vec![ContentBlock::text(format!(
            "{} ({} bytes)",
            value.text, value.len
        ))]
    }

    fn presentation_meta(_args: &TextArgs, value: &Echoed) -> Option<EchoMeta> {
        Some(EchoMeta { len: value.len })
    }

    fn present_call(args: &TextArgs) -> Option<CallCard> {
        Some(CallCard::Terminal(TerminalCall::new(format!(
            "echo {}",
            args.text
        ))))
    }

    fn present_result(_args: &TextArgs, result: &ToolResult<EchoMeta>) -> Option<ResultCard> {
        let len = result.meta.as_ref()?.len;
        Some(ResultCard::Generic(
            GenericResult::new(result.content.clone()).with_title(format!("{len} bytes")),
        ))
    }
}

/// Fails in the way its argument names.
struct Faulty;

#[derive(Clone, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Fault {
    Err,
    Panic,
    Sleep,
    RenderPanic,
    MetaPanic,
    MetaNan,
    ValueNan,
    NegativeZero,
    Lie,
    PresenterPanic,
}

#[derive(Clone, Deserialize, schemars::JsonSchema)]
struct FaultArgs {
    fault: Fault,
}

/// Its `Serialize` can lie about `count`, which the schema says is an integer.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
struct FaultValue {
    count: u32,
    score: f64,
    #[serde(skip)]
    lie: bool,
}

impl Serialize for FaultValue {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut st = s.serialize_struct("FaultValue", 2)?;
        if self.lie {
            st.serialize_field("count", "many")?;
        } else {
            st.serialize_field("count", &self.count)?;
        }
        st.serialize_field("score", &self.score)?;
        st.end()
    }
}

/// Fails on purpose.
#[tool]
impl Faulty {
    async fn execute(
        &self,
        args: FaultArgs,
        _cx: &ToolContext<'_>,
    ) -> Result<FaultValue, ToolError> {
        let mut value = FaultValue {
            count: 1,
            score: 0.5,
            lie: false,
        };
        match args.fault {
            Fault::Err => return Err(ToolError::new("the disk is full").with_code("DISK_FULL")),
            Fault::Panic => panic!("execute blew up"),
            Fault::Sleep => tokio::time::sleep(Duration::from_secs(30)).await,
            Fault::ValueNan => value.score = f64::NAN,
            Fault::NegativeZero => value.score = -0.0,
            Fault::Lie => value.lie = true,
            _ => {}
        }
        Ok(value)
    }

    fn render(args: &FaultArgs, value: &FaultValue) -> Vec<ContentBlock> {
        if matches!(args.fault, Fault::RenderPanic) {
            panic!("render blew up");
        }
        vec![ContentBlock::text(format!("count {}", value.count))]
    }

    fn presentation_meta(args: &FaultArgs, value: &FaultValue) -> Option<f64> {
        match args.fault {
            Fault::MetaPanic => panic!("meta blew up"),
            Fault::MetaNan => Some(f64::NAN),
            _ => Some(value.score),
        }
    }

    fn present_result(args: &FaultArgs, _result: &ToolResult<f64>) -> Option<ResultCard> {
        if matches!(args.fault, Fault::PresenterPanic) {
            panic!("presenter blew up");
        }
        None
    }
}

/// The reference system's exercise: 1,200 rows, keep the first 50.
struct Query;

#[derive(Clone, Deserialize, schemars::JsonSchema)]
struct QueryArgs {
    sql: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
struct Rows {
    columns: Vec<String>,
    rows: Vec<Vec<String>>,
    total: usize,
    truncated: bool,
}

#[derive(Serialize, Deserialize)]
struct RowsMeta {
    columns: Vec<String>,
    first_row: Vec<String>,
}

/// Run a query; the first 50 rows come back.
#[tool]
impl Query {
    async fn execute(&self, args: QueryArgs, _cx: &ToolContext<'_>) -> Result<Rows, ToolError> {
        if args.sql.trim().is_empty() {
            return Err(ToolError::new("the query is empty"));
        }
        let total = 1_200;
        let rows: Vec<Vec<String>> = (0..total)
            .take(50)
            .map(|i| vec![i.to_string(), format!("user{i}"), format!("+1-555-{i:04}")])
            .collect();
        Ok(Rows {
            columns: vec!["id".into(), "name".into(), "phone".into()],
            rows,
            total,
            truncated: true,
        })
    }

    fn render(_args: &QueryArgs, value: &Rows) -> Vec<ContentBlock> {
        let mut text = value.columns.join(" | ");
        for row in &value.rows {
            text.push('\n');
            text.push_str(&row.join(" | "));
        }
        text.push_str(&format!("\n({} of {} rows)", value.rows.len(), value.total));
        vec![ContentBlock::text(text)]
    }

    fn presentation_meta(_args: &QueryArgs, value: &Rows) -> Option<RowsMeta> {
        Some(RowsMeta {
            columns: value.columns.clone(),
            first_row: value.rows.first().cloned().unwrap_or_default(),
        })
    }
}

/// A program: a tool that calls another tool through the registry.
struct Program;

#[derive(Clone, Deserialize, schemars::JsonSchema)]
struct ProgramArgs {}

/// Counts the rows a query returns.
#[tool]
impl Program {
    async fn execute(&self, _args: ProgramArgs, cx: &ToolContext<'_>) -> Result<usize, ToolError> {
        let rows = cx
            .call_typed::<Query>(json!({"sql": "select * from users"}))
            .await?;
        Ok(rows.rows.len())
    }

    fn render(_args: &ProgramArgs, value: &usize) -> Vec<ContentBlock> {
        vec![ContentBlock::text(value.to_string())]
    }
}

// ---------------------------------------------------------------------------
// Harness
// ---------------------------------------------------------------------------

fn deny_forbidden(call: &PreExecute<'_>) -> PreDecision {
    if call.arguments["text"] == "forbidden" {
        PreDecision::deny("echoing \"forbidden\" is not allowed")
    } else {
        PreDecision::Allow
    }
}

fn test_policies(result: &PostExecute<'_>) -> PostDecision {
    match result.arguments["text"].as_str() {
        Some("block me") => PostDecision::block("this result was withheld"),
        Some("bad replacement") => PostDecision::ReplaceValue(json!({"text": 3, "len": "x"})),
        _ => PostDecision::Accept,
    }
}

struct Fixture {
    registry: Registry,
    runs: Arc<AtomicUsize>,
}

fn fixture() -> Fixture {
    let runs = Arc::new(AtomicUsize::new(0));
    let registry = Registry::builder()
        .tool(Echo { runs: runs.clone() })
        .tool(Faulty)
        .tool(Query)
        .tool(Program)
        .pre_execute(deny_forbidden)
        .post_execute(test_policies)
        .default_timeout(Duration::from_millis(200))
        .build()
        .expect("the registry builds");
    Fixture { registry, runs }
}

async fn call(registry: &Registry, name: &str, args: &str) -> ToolOutcome {
    registry.call(ToolCall::new("c1", name, args)).await
}

/// Checks the shape of every error result (C9) and that the registry still
/// serves a good call afterwards.
async fn assert_failure(registry: &Registry, out: &ToolOutcome, code: &str, message_part: &str) {
    assert!(out.is_error(), "expected an error, got {out:?}");
    let error = out
        .error()
        .expect("an error result carries {message, code}");
    assert_eq!(error.code.as_str(), code, "{error:?}");
    assert!(
        error.message.contains(message_part),
        "`{}` should contain `{message_part}`",
        error.message
    );
    assert!(out.value().is_none(), "an error result carries no value");
    assert!(out.meta().is_none(), "an error result carries no meta");
    assert_eq!(
        out.content(),
        [ContentBlock::text(format!("Error: {}", error.message))]
    );
    let json = serde_json::to_value(out).unwrap();
    assert!(json.get("value").is_none());
    assert_eq!(json["error"]["code"], code);

    let good = call(registry, "echo", r#"{"text":"still here"}"#).await;
    assert!(
        !good.is_error(),
        "the registry must serve a good call after a failure: {good:?}"
    );
    assert_eq!(good.value_as::<Echoed>().unwrap().text, "still here");
}

// ---------------------------------------------------------------------------
// C9: every failure is a result
// ---------------------------------------------------------------------------

#[tokio::test]
async fn c9_unknown_tool() {
    let f = fixture();
    let out = call(&f.registry, "ehco", "{}").await;
    assert_failure(&f.registry, &out, "UNKNOWN_TOOL", "unknown tool \"ehco\"").await;
    assert!(
        out.error().unwrap().message.contains("echo"),
        "the message lists what is available"
    );
    assert_eq!(out.call_card().unwrap().tag(), "generic");
    assert_eq!(out.result_card().unwrap().tag(), "generic");
}

#[tokio::test]
async fn c9_arguments_not_json() {
    let f = fixture();
    let out = call(&f.registry, "echo", r#"{"text": "unterminated"#).await;
    assert_failure(&f.registry, &out, "INVALID_ARGS", "not valid JSON").await;
    // The generic card keeps what the model sent.
    let CallCard::Generic(card) = out.call_card().unwrap() else {
        panic!("generic expected")
    };
    assert_eq!(card.raw_input, Some(json!(r#"{"text": "unterminated"#)));
    let out = call(&f.registry, "echo", "[1, 2]").await;
    assert_failure(&f.registry, &out, "INVALID_ARGS", "must be a JSON object").await;
    assert_eq!(
        f.runs.load(Ordering::SeqCst),
        2,
        "only the two good calls ran"
    );
}

#[tokio::test]
async fn c9_only_the_empty_string_means_an_empty_object() {
    #[derive(Clone, Deserialize, schemars::JsonSchema)]
    struct NoArgs {}
    struct Bare;
    impl Tool for Bare {
        type Args = NoArgs;
        type Value = u32;
        type Meta = NoMeta;
        const INFO: ToolInfo = ToolInfo::new("bare", "Takes no arguments.");
        async fn execute(&self, _: NoArgs, _: &ToolContext<'_>) -> Result<u32, ToolError> {
            Ok(1)
        }
        fn render(_: &NoArgs, _: &u32) -> Vec<ContentBlock> {
            vec![ContentBlock::text("rendered")]
        }
    }
    let registry = Registry::builder().tool(Bare).build().unwrap();
    assert!(!call(&registry, "bare", "").await.is_error());
    for blank in [" ", "\n\t"] {
        let out = call(&registry, "bare", blank).await;
        assert_eq!(out.code().unwrap(), "INVALID_ARGS", "{blank:?}");
        assert!(out.error().unwrap().message.contains("not valid JSON"));
    }
}

#[tokio::test]
async fn c9_arguments_breaking_the_schema_name_the_path() {
    let f = fixture();
    let out = call(&f.registry, "echo", r#"{"text": 5}"#).await;
    assert_failure(&f.registry, &out, "INVALID_ARGS", "\"arguments.text\"").await;
    let out = call(&f.registry, "echo", "{}").await;
    assert_failure(&f.registry, &out, "INVALID_ARGS", "text").await;
    // An empty arguments string means {}.
    let out = call(&f.registry, "echo", "").await;
    assert_failure(&f.registry, &out, "INVALID_ARGS", "text").await;
    // A huge argument is never echoed back.
    let huge = format!(r#"{{"text": {}}}"#, "1".repeat(200_000));
    let out = call(&f.registry, "echo", &huge).await;
    assert!(out.error().unwrap().message.len() < 2_000);
}

#[tokio::test]
async fn c9_execute_returning_err() {
    let f = fixture();
    let out = call(&f.registry, "faulty", r#"{"fault":"err"}"#).await;
    assert_failure(&f.registry, &out, "DISK_FULL", "the disk is full").await;
}

#[tokio::test]
async fn c9_execute_panicking() {
    let f = fixture();
    let out = call(&f.registry, "faulty", r#"{"fault":"panic"}"#).await;
    assert_failure(
        &f.registry,
        &out,
        "TOOL_FAILED",
        "panicked: execute blew up",
    )
    .await;
}

#[tokio::test]
async fn c2_value_breaking_its_own_schema() {
    let f = fixture();
    let out = call(&f.registry, "faulty", r#"{"fault":"lie"}"#).await;
    assert_failure(&f.registry, &out, "INVALID_TOOL_OUTPUT", "\"value.count\"").await;
    assert!(
        out.error()
            .unwrap()
            .message
            .starts_with("tool \"faulty\" returned invalid output")
    );
}

#[tokio::test]
async fn c3_nan_in_the_value() {
    let f = fixture();
    let out = call(&f.registry, "faulty", r#"{"fault":"value_nan"}"#).await;
    assert_failure(
        &f.registry,
        &out,
        "INVALID_TOOL_OUTPUT",
        "\"value.score\" is NaN",
    )
    .await;
}

#[tokio::test]
async fn c3_nan_in_the_meta() {
    let f = fixture();
    let out = call(&f.registry, "faulty", r#"{"fault":"meta_nan"}"#).await;
    assert_failure(
        &f.registry,
        &out,
        "INVALID_TOOL_OUTPUT",
        "presentationMeta returned non-lossless JSON",
    )
    .await;
}

#[tokio::test]
async fn c3_negative_zero() {
    let f = fixture();
    let out = call(&f.registry, "faulty", r#"{"fault":"negative_zero"}"#).await;
    assert_failure(&f.registry, &out, "INVALID_TOOL_OUTPUT", "-0.0").await;
    // and a replacement value holding -0.0 is refused too
    let registry = Registry::builder()
        .tool(Faulty)
        .tool(Echo {
            runs: Default::default(),
        })
        .post_execute(|r: &PostExecute<'_>| {
            if r.tool == "faulty" {
                PostDecision::ReplaceValue(json!({"count": 1, "score": -0.0}))
            } else {
                PostDecision::Accept
            }
        })
        .build()
        .unwrap();
    let out = call(&registry, "faulty", r#"{"fault":"none_of_these"}"#).await;
    assert_failure(&registry, &out, "INVALID_ARGS", "arguments.fault").await;
    let out = call(&registry, "faulty", r#"{"fault":"err"}"#).await;
    assert_failure(
        &registry,
        &out,
        "POLICY_ERROR",
        "cannot replace the value of a failed result",
    )
    .await;
    let out = call(&registry, "faulty", r#"{"fault":"presenter_panic"}"#).await;
    assert_failure(&registry, &out, "INVALID_TOOL_OUTPUT", "-0.0").await;
}

#[tokio::test]
async fn c4_render_panicking() {
    let f = fixture();
    let out = call(&f.registry, "faulty", r#"{"fault":"render_panic"}"#).await;
    assert_failure(
        &f.registry,
        &out,
        "INVALID_TOOL_OUTPUT",
        "output.render failed: render blew up",
    )
    .await;
}

#[tokio::test]
async fn c5_presentation_meta_panicking() {
    let f = fixture();
    let out = call(&f.registry, "faulty", r#"{"fault":"meta_panic"}"#).await;
    assert_failure(
        &f.registry,
        &out,
        "INVALID_TOOL_OUTPUT",
        "output.presentationMeta failed: meta blew up",
    )
    .await;
}

#[tokio::test]
async fn c6_presenter_panicking_gives_the_generic_card() {
    let f = fixture();
    let out = call(&f.registry, "faulty", r#"{"fault":"presenter_panic"}"#).await;
    assert!(!out.is_error(), "a presenter panic does not fail the call");
    assert_eq!(out.value().unwrap()["count"], 1);
    assert_eq!(
        out.result_card().unwrap(),
        &ResultCard::generic(Some("faulty".into()), out.content().to_vec())
    );
}

#[tokio::test]
async fn c11_denial_never_runs_execute() {
    let f = fixture();
    let out = call(&f.registry, "echo", r#"{"text":"forbidden"}"#).await;
    assert_failure(
        &f.registry,
        &out,
        "DENIED",
        "echoing \"forbidden\" is not allowed",
    )
    .await;
    assert_eq!(
        f.runs.load(Ordering::SeqCst),
        1,
        "only the good call after the denial ran"
    );
}

#[tokio::test]
async fn c11_a_panicking_pre_execute_policy_never_runs_execute() {
    let runs = Arc::new(AtomicUsize::new(0));
    let registry = Registry::builder()
        .tool(Echo { runs: runs.clone() })
        .pre_execute(|c: &PreExecute<'_>| {
            if c.arguments["text"] == "pre" {
                panic!("pre policy bug")
            }
            PreDecision::Allow
        })
        .build()
        .unwrap();
    let out = call(&registry, "echo", r#"{"text":"pre"}"#).await;
    assert_eq!(out.code().unwrap(), "POLICY_ERROR", "{out:?}");
    assert_eq!(runs.load(Ordering::SeqCst), 0, "execute never ran");
    assert_failure(&registry, &out, "POLICY_ERROR", "pre policy bug").await;
    assert_eq!(runs.load(Ordering::SeqCst), 1, "only the good call ran");
}

#[tokio::test]
async fn c10_block_gives_an_error_whose_content_is_the_feedback() {
    let f = fixture();
    let out = call(&f.registry, "echo", r#"{"text":"block me"}"#).await;
    assert!(out.is_error());
    assert_eq!(out.error().unwrap().code, ErrorCode::Blocked);
    assert_eq!(
        out.content(),
        [ContentBlock::text("this result was withheld")]
    );
    assert!(out.value().is_none() && out.meta().is_none());
    let good = call(&f.registry, "echo", r#"{"text":"fine"}"#).await;
    assert!(!good.is_error());
}

#[tokio::test]
async fn c10_replacement_value_breaking_the_schema() {
    let f = fixture();
    let out = call(&f.registry, "echo", r#"{"text":"bad replacement"}"#).await;
    assert_failure(&f.registry, &out, "INVALID_TOOL_OUTPUT", "\"value.text\"").await;
}

#[tokio::test]
async fn c9_timeout() {
    let f = fixture();
    let started = std::time::Instant::now();
    let out = call(&f.registry, "faulty", r#"{"fault":"sleep"}"#).await;
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_failure(&f.registry, &out, "TIMEOUT", "timed out after 200 ms").await;
    // A per-call timeout overrides the registry's.
    let options = CallOptions::new().with_timeout(Duration::from_millis(20));
    let out = f
        .registry
        .call_with(
            ToolCall::new("c2", "faulty", r#"{"fault":"sleep"}"#),
            &options,
        )
        .await;
    assert_failure(&f.registry, &out, "TIMEOUT", "after 20 ms").await;
}

#[tokio::test]
async fn c9_cancellation_before_and_during_execute() {
    let f = fixture();
    let cancel = CancellationToken::new();
    cancel.cancel();
    let options = CallOptions::new().with_cancel(cancel);
    let out = f
        .registry
        .call_with(ToolCall::new("c", "echo", r#"{"text":"x"}"#), &options)
        .await;
    assert_failure(
        &f.registry,
        &out,
        "ABORTED_BEFORE_DISPATCH",
        "aborted before dispatch",
    )
    .await;
    assert_eq!(
        f.runs.load(Ordering::SeqCst),
        1,
        "the cancelled call never ran"
    );

    let cancel = CancellationToken::new();
    let options = CallOptions::new()
        .with_cancel(cancel.clone())
        .with_timeout(Duration::from_secs(20));
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(30)).await;
        cancel.cancel();
    });
    let out = f
        .registry
        .call_with(
            ToolCall::new("c", "faulty", r#"{"fault":"sleep"}"#),
            &options,
        )
        .await;
    assert_failure(&f.registry, &out, "ABORTED", "tool call aborted").await;
}

// ---------------------------------------------------------------------------
// C1, C5, C6, C14: the success path
// ---------------------------------------------------------------------------

#[tokio::test]
async fn a_success_has_value_content_meta_and_cards() {
    let f = fixture();
    let out = call(&f.registry, "echo", r#"{"text":"hello"}"#).await;
    assert!(!out.is_error());
    assert!(out.error().is_none());
    assert_eq!(out.value(), Some(&json!({"text": "hello", "len": 5})));
    assert_eq!(
        out.value_as::<Echoed>(),
        Some(&Echoed {
            text: "hello".into(),
            len: 5
        })
    );
    assert_eq!(out.content(), [ContentBlock::text("hello (5 bytes)")]);
    assert_eq!(out.meta(), Some(&json!({"len": 5})));
    assert_eq!(
        serde_json::to_value(out.call_card().unwrap()).unwrap(),
        json!({"card": "terminal", "title": "echo hello"})
    );
    assert_eq!(
        serde_json::to_value(out.result_card().unwrap()).unwrap(),
        json!({"card": "generic", "title": "5 bytes", "content": [{"type": "text", "text": "hello (5 bytes)"}]})
    );
    assert_eq!(
        serde_json::to_value(&out).unwrap(),
        json!({
            "callId": "c1", "name": "echo",
            "content": [{"type": "text", "text": "hello (5 bytes)"}], "isError": false,
            "meta": {"len": 5}, "value": {"text": "hello", "len": 5}
        })
    );
}

#[tokio::test]
async fn c1_definitions_use_the_serialize_contract_for_outputs() {
    #[derive(Clone, Deserialize, schemars::JsonSchema)]
    struct In {
        #[serde(default)]
        page: u32,
    }
    #[derive(Serialize, Deserialize, schemars::JsonSchema)]
    struct Out {
        #[serde(default)]
        page: u32,
    }
    struct Pager;
    impl Tool for Pager {
        type Args = In;
        type Value = Out;
        type Meta = NoMeta;
        const INFO: ToolInfo = ToolInfo::new("pager", "Pages.");
        async fn execute(&self, args: In, _cx: &ToolContext<'_>) -> Result<Out, ToolError> {
            Ok(Out { page: args.page })
        }
        fn render(_: &In, _: &Out) -> Vec<ContentBlock> {
            vec![]
        }
    }
    let registry = Registry::builder().tool(Pager).build().unwrap();
    let def = registry.definition("pager").unwrap();
    assert_eq!(
        def.input_schema.get("required"),
        None,
        "optional for the model"
    );
    assert_eq!(
        def.output_schema["required"],
        json!(["page"]),
        "always present in the value"
    );
    let listed: Vec<_> = registry.definitions().map(|d| d.name.as_str()).collect();
    assert_eq!(listed, ["pager"]);
    let json = serde_json::to_value(def).unwrap();
    for key in [
        "name",
        "description",
        "inputSchema",
        "outputSchema",
        "kind",
        "annotations",
    ] {
        assert!(json.get(key).is_some(), "{key} missing from {json}");
    }
}

#[tokio::test]
async fn c6_presenters_see_only_what_is_persisted_and_fall_back() {
    let f = fixture();
    // No presenters: the generic cards, titled with the tool's name.
    let out = call(&f.registry, "query", r#"{"sql":"select 1"}"#).await;
    assert_eq!(
        out.call_card().unwrap(),
        &CallCard::generic(
            "query",
            Some(ToolKind::Other),
            Some(json!({"sql": "select 1"}))
        )
    );
    assert_eq!(out.result_card().unwrap().tag(), "generic");
    // Redrawn from the persisted form, cards equal the live ones.
    let args = r#"{"text":"hello"}"#;
    let live = call(&f.registry, "echo", args).await;
    let mut persisted = live.result().clone();
    assert_eq!(
        &f.registry.present_call("echo", args),
        live.call_card().unwrap()
    );
    assert_eq!(
        &f.registry.present_result("echo", args, &mut persisted),
        live.result_card().unwrap()
    );
    // Stale meta or args: the generic card, never a panic.
    let mut stale = ToolResult::ok(vec![ContentBlock::text("x")]);
    stale.meta = Some(json!({"len": "not a number"}));
    assert_eq!(
        f.registry.present_result("echo", args, &mut stale).tag(),
        "generic"
    );
    assert_eq!(
        f.registry.present_call("echo", r#"{"txt":1}"#).tag(),
        "generic"
    );
    assert_eq!(f.registry.present_call("echo", "not json").tag(), "generic");
    assert_eq!(f.registry.present_call("gone", "{}").tag(), "generic");
}

#[tokio::test]
async fn c14_nested_calls_get_the_typed_value_and_no_meta_or_card() {
    let f = fixture();
    let rows = f
        .registry
        .call_typed::<Query>(json!({"sql": "select *"}))
        .await
        .unwrap();
    assert_eq!(rows.rows.len(), 50);
    assert_eq!(rows.total, 1_200);

    let nested = f
        .registry
        .call_nested_with("query", json!({"sql": "select *"}), &CallOptions::default())
        .await;
    assert!(!nested.is_error());
    assert!(nested.meta().is_none(), "nested calls compute no meta");
    assert!(
        nested.call_card().is_none() && nested.result_card().is_none(),
        "and no card"
    );
    assert_eq!(nested.value().unwrap()["total"], 1_200);

    let top = call(&f.registry, "query", r#"{"sql":"select *"}"#).await;
    assert!(top.meta().is_some(), "top-level calls do");

    // A program holding the registry, from inside a tool.
    let out = call(&f.registry, "program", "{}").await;
    assert_eq!(out.value(), Some(&json!(50)));

    // Errors reach programs as errors; a wrong type is refused.
    let err = f
        .registry
        .call_nested("echo", json!({"text": 1}))
        .await
        .unwrap_err();
    assert_eq!(*err.code(), ErrorCode::InvalidArgs);
    let err = f.registry.call_nested("nope", json!({})).await.unwrap_err();
    assert_eq!(*err.code(), ErrorCode::UnknownTool);
    let other = Registry::builder().tool(Faulty).build().unwrap();
    let err = other
        .call_typed::<Query>(json!({"sql": ""}))
        .await
        .unwrap_err();
    assert_eq!(*err.code(), ErrorCode::UnknownTool);
}

// ---------------------------------------------------------------------------
// C14: nested calls compose
// ---------------------------------------------------------------------------

#[derive(Clone, Deserialize, schemars::JsonSchema)]
struct City {
    city: String,
}

struct Weather;

/// The weather of a city.
#[tool]
impl Weather {
    fn execute(args: City) -> Result<String, ToolError> {
        match args.city.as_str() {
            "Oslo" => Ok("rain".to_owned()),
            other => {
                Err(ToolError::new(format!("no weather for {other}")).with_code("UNKNOWN_CITY"))
            }
        }
    }
    fn render(_: &City, v: &String) -> Vec<ContentBlock> {
        vec![ContentBlock::text(v)]
    }
}

struct Trip;

/// Plans a trip from the weather of each city, in parallel.
#[tool]
impl Trip {
    async fn execute(&self, args: Cities, cx: &ToolContext<'_>) -> Result<Forecast, ToolError> {
        // The first city through the context: `?` keeps the inner code.
        let first = cx
            .call_typed::<Weather>(json!({ "city": args.cities[0] }))
            .await?;
        // The others from spawned tasks, each with an owned handle.
        let mut tasks = Vec::new();
        for city in &args.cities[1..] {
            let nested = cx.nested();
            let city = city.clone();
            tasks.push(tokio::spawn(async move {
                nested.call_typed::<Weather>(json!({ "city": city })).await
            }));
        }
        let mut all = vec![first];
        for task in tasks {
            all.push(task.await.map_err(|e| ToolError::new(e.to_string()))??);
        }
        Ok(Forecast(all))
    }
    fn render(_: &Cities, v: &Forecast) -> Vec<ContentBlock> {
        vec![ContentBlock::text(v.0.join(", "))]
    }
}

#[derive(Serialize, Deserialize, schemars::JsonSchema)]
struct Forecast(Vec<String>);

#[derive(Clone, Deserialize, schemars::JsonSchema)]
struct Cities {
    cities: Vec<String>,
}

#[test]
fn c14_nested_calls_keep_codes_carry_the_parent_id_and_run_in_spawned_tasks() {
    let dir = tempfile::tempdir().unwrap();
    let registry = Registry::builder()
        .tool(Weather)
        .tool(Trip)
        .log(SessionLog::create(dir.path().join("s.jsonl")).unwrap())
        .build()
        .unwrap();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let out = rt.block_on(registry.call(ToolCall::new(
        "t1",
        "trip",
        r#"{"cities":["Oslo","Oslo","Oslo"]}"#,
    )));
    assert_eq!(out.value().unwrap(), &json!(["rain", "rain", "rain"]));
    let out = rt.block_on(registry.call(ToolCall::new("t2", "trip", r#"{"cities":["Atlantis"]}"#)));
    assert_eq!(out.code().unwrap(), "UNKNOWN_CITY", "{out:?}");
    let out = rt.block_on(registry.call(ToolCall::new(
        "t3",
        "trip",
        r#"{"cities":["Oslo","Atlantis"]}"#,
    )));
    assert_eq!(out.code().unwrap(), "UNKNOWN_CITY", "{out:?}");

    let replayed = replay_log(registry.session_log().unwrap().path(), &registry).unwrap();
    assert!(replayed.problems.is_empty(), "{:?}", replayed.problems);
    let nested: Vec<_> = replayed.entries.iter().filter(|e| e.nested).collect();
    assert_eq!(nested.len(), 3 + 1 + 2);
    for entry in &nested {
        let parent = entry.parent_call_id.as_deref().unwrap();
        assert!(
            entry.call_id.starts_with(&format!("{parent}:nested:")),
            "{}",
            entry.call_id
        );
        assert!(entry.meta.is_none());
    }
    let t1: Vec<&str> = nested
        .iter()
        .filter(|e| e.parent_call_id.as_deref() == Some("t1"))
        .map(|e| e.call_id.as_str())
        .collect();
    let mut sorted = t1.clone();
    sorted.sort();
    assert_eq!(sorted, ["t1:nested:1", "t1:nested:2", "t1:nested:3"]);
    let failed = nested.iter().find(|e| e.is_error).unwrap();
    assert_eq!(failed.error_code.as_ref().unwrap(), "UNKNOWN_CITY");
}

// ---------------------------------------------------------------------------
// C10: post-execute semantics, the reference system's exercise
// ---------------------------------------------------------------------------

fn redact_phone_column(rows: &Rows) -> Rows {
    let keep: Vec<usize> = (0..rows.columns.len())
        .filter(|&i| rows.columns[i] != "phone")
        .collect();
    Rows {
        columns: keep.iter().map(|&i| rows.columns[i].clone()).collect(),
        rows: rows
            .rows
            .iter()
            .map(|r| keep.iter().map(|&i| r[i].clone()).collect())
            .collect(),
        total: rows.total,
        truncated: rows.truncated,
    }
}

fn query_registry(
    policy: impl Fn(&PostExecute<'_>) -> PostDecision + Send + Sync + 'static,
) -> Registry {
    Registry::builder()
        .tool(Query)
        .post_execute(policy)
        .build()
        .unwrap()
}

fn mentions_phone(v: &impl Serialize) -> bool {
    serde_json::to_string(v).unwrap().contains("+1-555-")
}

#[tokio::test]
async fn c10_content_replacement_keeps_value_and_meta() {
    let registry = query_registry(|r| match r.value_as::<Rows>() {
        Some(rows) => {
            let redacted = redact_phone_column(&rows);
            PostDecision::ReplaceContent(Query::render(
                &QueryArgs {
                    sql: "select *".into(),
                },
                &redacted,
            ))
        }
        None => PostDecision::Accept,
    });
    let out = call(&registry, "query", r#"{"sql":"select * from users"}"#).await;
    assert!(!out.is_error());
    assert!(
        !mentions_phone(&out.content()),
        "the model no longer reads phone numbers"
    );
    assert!(
        mentions_phone(&out.value()),
        "but the value still holds them"
    );
    assert!(
        mentions_phone(&out.meta()),
        "and the meta too: presentation, not confidentiality"
    );
    let program = registry
        .call_typed::<Query>(json!({"sql": "select *"}))
        .await
        .unwrap();
    assert!(
        mentions_phone(&program),
        "a program still receives the phone numbers"
    );
}

#[tokio::test]
async fn c10_value_replacement_removes_them_everywhere() {
    let registry = query_registry(|r| match r.value_as::<Rows>() {
        Some(rows) => PostDecision::replace_value(&redact_phone_column(&rows)).unwrap(),
        None => PostDecision::Accept,
    });
    let out = call(&registry, "query", r#"{"sql":"select * from users"}"#).await;
    assert!(!out.is_error(), "{out:?}");
    assert!(!mentions_phone(&out.value()), "not in the value");
    assert!(
        !mentions_phone(&out.content()),
        "not in the content: re-rendered from the new value"
    );
    assert!(
        !mentions_phone(&out.meta()),
        "not in the meta: re-projected from the new value"
    );
    assert_eq!(out.meta().unwrap()["columns"], json!(["id", "name"]));
    assert_eq!(out.value_as::<Rows>().unwrap().columns, ["id", "name"]);
    let program = registry
        .call_typed::<Query>(json!({"sql": "select *"}))
        .await
        .unwrap();
    assert!(!mentions_phone(&program), "nor in what a program receives");
    assert_eq!(program.rows.len(), 50);
    assert_eq!(program.total, 1_200);
}

#[tokio::test]
async fn c10_policies_run_in_order_on_what_the_previous_one_decided() {
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let log = seen.clone();
    let registry = Registry::builder()
        .tool(Echo {
            runs: Default::default(),
        })
        .post_execute(|_: &PostExecute<'_>| {
            PostDecision::ReplaceContent(vec![ContentBlock::text("first")])
        })
        .post_execute(move |r: &PostExecute<'_>| {
            log.lock().unwrap().push(r.result.content.clone());
            PostDecision::Accept
        })
        .build()
        .unwrap();
    let out = call(&registry, "echo", r#"{"text":"a"}"#).await;
    assert_eq!(out.content(), [ContentBlock::text("first")]);
    assert_eq!(
        seen.lock().unwrap().as_slice(),
        [vec![ContentBlock::text("first")]]
    );
}

#[tokio::test]
async fn c10_post_execute_policies_see_denied_calls() {
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let record = seen.clone();
    let runs = Arc::new(AtomicUsize::new(0));
    let registry = Registry::builder()
        .tool(Echo { runs: runs.clone() })
        .pre_execute(|_: &PreExecute<'_>| PreDecision::deny("not today"))
        .post_execute(move |view: &PostExecute<'_>| {
            record
                .lock()
                .unwrap()
                .push(view.error.map(|e| e.code.to_string()));
            PostDecision::ReplaceContent(vec![ContentBlock::text("Error: denied by policy")])
        })
        .build()
        .unwrap();
    let out = call(&registry, "echo", r#"{"text":"x"}"#).await;
    assert_eq!(out.code().unwrap(), "DENIED");
    assert_eq!(*seen.lock().unwrap(), [Some("DENIED".to_owned())]);
    assert_eq!(
        out.content(),
        [ContentBlock::text("Error: denied by policy")]
    );
    assert_eq!(runs.load(Ordering::SeqCst), 0, "a denied call never runs");
}

#[tokio::test]
async fn a_panicking_policy_is_an_error_result() {
    let registry = Registry::builder()
        .tool(Echo {
            runs: Default::default(),
        })
        .pre_execute(|c: &PreExecute<'_>| {
            if c.arguments["text"] == "pre" {
                panic!("pre policy bug")
            }
            PreDecision::Allow
        })
        .post_execute(|r: &PostExecute<'_>| {
            if r.arguments["text"] == "post" {
                panic!("post policy bug")
            }
            PostDecision::Accept
        })
        .build()
        .unwrap();
    let out = call(&registry, "echo", r#"{"text":"pre"}"#).await;
    assert_failure(&registry, &out, "POLICY_ERROR", "pre policy bug").await;
    let out = call(&registry, "echo", r#"{"text":"post"}"#).await;
    assert_failure(&registry, &out, "POLICY_ERROR", "post policy bug").await;
}

// ---------------------------------------------------------------------------
// The registry itself
// ---------------------------------------------------------------------------

#[test]
fn duplicate_names_fail_the_build_with_every_problem() {
    struct Other;
    impl Tool for Other {
        type Args = TextArgs;
        type Value = String;
        type Meta = NoMeta;
        const INFO: ToolInfo = ToolInfo::new("bad name!", "");
        async fn execute(&self, a: TextArgs, _: &ToolContext<'_>) -> Result<String, ToolError> {
            Ok(a.text)
        }
        fn render(_: &TextArgs, v: &String) -> Vec<ContentBlock> {
            vec![ContentBlock::text(v)]
        }
    }
    let err = Registry::builder()
        .tool(Echo {
            runs: Default::default(),
        })
        .tool(Echo {
            runs: Default::default(),
        })
        .tool(Other)
        .build()
        .unwrap_err();
    assert_eq!(err.problems().len(), 2, "{err}");
    assert!(
        err.problems()[0].contains("two tools are named \"echo\""),
        "{err}"
    );
    // Both are Rust tools: the attribute renames either.
    assert!(
        err.problems()[0].contains("rename one with #[tool(name = \"...\")]"),
        "{err}"
    );
    assert!(!err.problems()[0].contains("Import::"), "{err}");
    assert!(
        err.problems()[1].contains("\"bad name!\" is not allowed"),
        "{err}"
    );
}

#[test]
fn arguments_must_be_an_object() {
    struct Scalar;
    impl Tool for Scalar {
        type Args = String;
        type Value = String;
        type Meta = NoMeta;
        const INFO: ToolInfo = ToolInfo::new("scalar", "");
        async fn execute(&self, a: String, _: &ToolContext<'_>) -> Result<String, ToolError> {
            Ok(a)
        }
        fn render(_: &String, v: &String) -> Vec<ContentBlock> {
            vec![ContentBlock::text(v)]
        }
    }
    let err = Registry::builder().tool(Scalar).build().unwrap_err();
    assert!(err.to_string().contains("must be a struct or map"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_registry_serves_parallel_calls() {
    let f = Arc::new(fixture());
    let mut tasks = Vec::new();
    for i in 0..64 {
        let f = f.clone();
        tasks.push(tokio::spawn(async move {
            let out = f
                .registry
                .call(ToolCall::new(
                    format!("c{i}"),
                    "echo",
                    format!(r#"{{"text":"n{i}"}}"#),
                ))
                .await;
            assert_eq!(out.call_id(), format!("c{i}"));
            assert_eq!(out.value().unwrap()["text"], format!("n{i}"));
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    assert_eq!(f.runs.load(Ordering::SeqCst), 64);
}

#[test]
fn error_values_serialize_like_the_reference() {
    let e: ToolError = std::io::Error::other("boom").into();
    assert_eq!(e.code(), &ErrorCode::ToolFailed);
    let r: ToolResult = ToolResult::error("boom");
    assert_eq!(
        serde_json::to_value(&r).unwrap(),
        json!({"content": [{"type": "text", "text": "Error: boom"}], "isError": true})
    );
    let _: Value = serde_json::to_value(ErrorCode::AbortedBeforeDispatch).unwrap();
    assert_eq!(
        serde_json::from_value::<ErrorCode>(json!("INVALID_ARGS")).unwrap(),
        ErrorCode::InvalidArgs
    );
}

#[tokio::test]
async fn c9_outcome_code_and_error_code_comparisons() {
    let f = fixture();
    let out = call(&f.registry, "missing", "{}").await;
    assert_eq!(out.code(), Some(&ErrorCode::UnknownTool));
    assert!(*out.code().unwrap() == "UNKNOWN_TOOL");
    assert!("UNKNOWN_TOOL" == *out.code().unwrap());
    assert!(
        call(&f.registry, "echo", r#"{"text":"x"}"#)
            .await
            .code()
            .is_none()
    );
    let options = CallOptions::new().with_timeout(Duration::from_secs(1));
    assert_eq!(options.timeout(), Some(Duration::from_secs(1)));
}
