//! rig's own agent loop calling a registry's tools (feature `rig`): a
//! scripted completion model asks for a call, rig's agent runs it through
//! the `ToolSet` (the registry's pipeline: schema, policy, session log) and
//! sends its result back in the next request, which the model records.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use serde::Deserialize;
use toolprism::log::{LogEvent, SessionLog, read_log};
use toolprism::{ContentBlock, PreDecision, Registry, ToolCall, tool};
use toolprism_provider::rig::rig_agent::AgentBuilder;
use toolprism_provider::rig::rig_core;
use toolprism_provider::rig::{RigTools, tool_set};

use rig_core::completion::options::{Mapping, OptionFields, OptionMap};
use rig_core::completion::{Accepts, CompletionRequest, ReplayTarget};
use rig_core::driver::{Exchange, Model, Opened, Opening, Transport};
use rig_core::error::{EncodeError, ProviderError};
use rig_core::message::{
    Api, DocumentSourceKind, ImageMediaType, Message, ToolResult, ToolResultContent, UserContent,
};
use rig_core::operation::{Block, CallFragment, Completion, Finish};
use rig_core::tool::{ToolContext, ToolErrorKind};
use rig_core::wire::document::{Reassemble, Serves};
use rig_core::wire::{Decoder, Descriptor, Flow, Mode, Out, Wire, WireEvent};

// ---------------------------------------------------------------------------
// The scripted model: a rig wire and its transport. Each request takes the
// next scripted turn and is kept, so a test reads what rig sent back.
// ---------------------------------------------------------------------------

/// One scripted reply.
#[derive(Clone, Debug)]
enum Turn {
    /// A tool call: its id, the tool, the arguments' JSON text.
    Call(&'static str, &'static str, &'static str),
    /// A final answer.
    Text(&'static str),
}

/// The scripted wire: the payload is rig's request as it is, the one frame
/// of each reply is the scripted turn.
#[derive(Clone, Debug)]
struct Script;

impl ReplayTarget for Script {
    fn api(&self) -> Api {
        Api::from_static("toolprism.script")
    }

    fn provider(&self) -> &str {
        "script"
    }

    fn model(&self) -> &str {
        "script-model"
    }

    fn accepts(&self, _model: &str) -> Accepts {
        Accepts::ALL
    }

    fn map_options(&self, _request: &CompletionRequest, fields: OptionFields<'_>) -> OptionMap {
        let OptionFields {
            reasoning,
            cache,
            service_tier,
            verbosity,
            parallel_tool_calls,
            top_p,
            seed,
            stop,
        } = fields;
        let ignored = |set: bool| {
            if set {
                Mapping::Omit("a script ignores options")
            } else {
                Mapping::Nothing
            }
        };
        OptionMap {
            reasoning: ignored(reasoning.is_some()),
            cache: ignored(cache.is_some()),
            service_tier: ignored(service_tier.is_some()),
            verbosity: ignored(verbosity.is_some()),
            parallel_tool_calls: ignored(parallel_tool_calls.is_some()),
            top_p: ignored(top_p.is_some()),
            seed: ignored(seed.is_some()),
            stop: ignored(!stop.is_empty()),
        }
    }

    fn states_finish_reason(&self) -> bool {
        false
    }
}

/// Writes a scripted turn through rig's completion writer.
struct Steps;

impl<'id> Decoder<'id, Completion, Turn> for Steps {
    type Event = Turn;

    fn classify(&self, turn: Turn) -> WireEvent<Turn> {
        WireEvent::Known(turn)
    }

    fn decode(&mut self, turn: Turn, mut out: Out<'id, Completion>) -> Result<Flow, ProviderError> {
        match turn {
            Turn::Call(id, name, arguments) => {
                let index = out.fresh_index();
                out.fragment(
                    Some(index),
                    CallFragment {
                        id: Some(id),
                        name: Some(name),
                        arguments: Some(arguments),
                    },
                )?;
                out.finish(index)?;
            }
            Turn::Text(text) => {
                out.run(Block::Text, text)?;
                out.end_run()?;
            }
        }
        Ok(out.end(Finish::default()))
    }
}

/// A scripted reply keeps no provider document.
#[derive(Default)]
struct NoDocument;

impl Reassemble<Turn> for NoDocument {
    fn absorb(&mut self, _turn: &Turn) {}

    fn finish(self) -> serde_json::Value {
        serde_json::Value::Null
    }
}

impl Serves<Completion> for NoDocument {}

impl Wire for Script {
    type Op = Completion;
    type Payload = CompletionRequest;
    type Frame = Turn;
    type Decoder<'id> = Steps;
    type Reassembler = NoDocument;

    fn describe(&self) -> Descriptor<'_> {
        Descriptor::new("script")
            .model(Some("script-model"))
            .replay(self)
    }

    fn encode(
        &self,
        request: CompletionRequest,
        _mode: Mode,
    ) -> Result<CompletionRequest, EncodeError> {
        Ok(request)
    }

    fn decoder<'id>(&self) -> Self::Decoder<'id> {
        Steps
    }
}

/// The transport: answers each request with the next turn, keeps the
/// requests.
#[derive(Clone, Default)]
struct Scripted {
    turns: Arc<Mutex<VecDeque<Turn>>>,
    requests: Arc<Mutex<Vec<CompletionRequest>>>,
}

impl Scripted {
    fn new(turns: impl IntoIterator<Item = Turn>) -> Self {
        Scripted {
            turns: Arc::new(Mutex::new(turns.into_iter().collect())),
            requests: Arc::default(),
        }
    }

    fn model(&self) -> Model<Script, Scripted> {
        Model::new(Script, self.clone())
    }

    fn requests(&self) -> Vec<CompletionRequest> {
        self.requests.lock().unwrap().clone()
    }
}

/// A stream of at most one frame.
struct Once(Option<Result<Turn, ProviderError>>);

impl futures_core::Stream for Once {
    type Item = Result<Turn, ProviderError>;

    fn poll_next(mut self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        Poll::Ready(self.0.take())
    }
}

impl Transport<Script> for Scripted {
    fn send(&self, request: CompletionRequest, _exchange: Exchange) -> Opening<Turn> {
        self.requests.lock().unwrap().push(request);
        let turn = self.turns.lock().unwrap().pop_front();
        let frame =
            turn.ok_or_else(|| ProviderError::Provider("the script has no more turns".into()));
        Opening::ready(Opened::new(Once(Some(frame))))
    }
}

/// The tool results rig sent back in a request.
fn tool_results(request: &CompletionRequest) -> Vec<ToolResult> {
    request
        .chat_history
        .iter()
        .filter_map(|message| match message {
            Message::User { content } => Some(content),
            _ => None,
        })
        .flatten()
        .filter_map(|content| match content {
            UserContent::ToolResult(result) => Some(result.clone()),
            _ => None,
        })
        .collect()
}

// ---------------------------------------------------------------------------
// Tools, declared with #[tool].
// ---------------------------------------------------------------------------

#[derive(Clone, Deserialize, schemars::JsonSchema)]
struct DoubleArgs {
    n: i64,
}

/// Doubles; counts its executions, so a test proves whether it ran.
#[derive(Default)]
struct Double {
    runs: Arc<AtomicUsize>,
}

/// Double a number.
#[tool]
impl Double {
    async fn execute(&self, args: DoubleArgs) -> Result<i64, toolprism::ToolError> {
        self.runs.fetch_add(1, Ordering::SeqCst);
        Ok(args.n * 2)
    }

    fn render(args: &DoubleArgs, value: &i64) -> Vec<ContentBlock> {
        vec![ContentBlock::text(format!("{} doubled is {value}", args.n))]
    }
}

#[derive(Clone, Deserialize, schemars::JsonSchema)]
struct SnapshotArgs {}

/// A 1×1 PNG, base64.
const PIXEL: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

struct Snapshot;

/// Take a snapshot.
#[tool]
impl Snapshot {
    fn execute(_args: SnapshotArgs) -> String {
        "taken".into()
    }

    fn render(_: &SnapshotArgs, _: &String) -> Vec<ContentBlock> {
        vec![
            ContentBlock::text("one pixel"),
            ContentBlock::Image {
                mime_type: "image/png".into(),
                data: PIXEL.into(),
            },
            ContentBlock::Image {
                mime_type: "image/bmp".into(),
                data: "Qk0=".into(),
            },
            ContentBlock::Audio {
                mime_type: "audio/wav".into(),
                data: "UklGRg==".into(),
            },
        ]
    }
}

fn log_path(name: &str) -> PathBuf {
    let path = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("rig-{name}-{}.jsonl", std::process::id()));
    let _ = std::fs::remove_file(&path);
    path
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

// ---------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------

#[test]
fn rigs_agent_calls_a_registry_tool_through_the_pipeline() {
    let runs = Arc::new(AtomicUsize::new(0));
    let path = log_path("agent");
    let registry = Registry::builder()
        .tool(Double { runs: runs.clone() })
        .log(SessionLog::create(&path).unwrap())
        .build()
        .unwrap();
    let script = Scripted::new([
        Turn::Call("call_1", "double", r#"{"n": 21}"#),
        Turn::Text("42 it is"),
    ]);

    let agent = AgentBuilder::new(script.model()).build();
    agent.tool_server_handle().add_tools(tool_set(&registry));
    let answer = runtime()
        .block_on(async { agent.prompt("double 21").max_turns(4).await })
        .unwrap();
    assert_eq!(answer.output(), "42 it is");

    // The tool ran once, through the pipeline: the session log has the call
    // as rig sent its arguments, and the result render produced.
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    let events = read_log(&path).unwrap().events;
    let (call_id, arguments) = match &events[..] {
        [
            LogEvent::Call {
                call_id,
                name,
                arguments,
                ..
            },
            LogEvent::Result {
                call_id: result_id,
                content,
                is_error: false,
                ..
            },
        ] => {
            assert_eq!(name, "double");
            assert_eq!(result_id, call_id);
            assert_eq!(content, &[ContentBlock::text("21 doubled is 42")]);
            (call_id.clone(), arguments.clone())
        }
        other => panic!("unexpected log: {other:?}"),
    };
    assert!(call_id.starts_with("rig-"), "{call_id}");
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&arguments).unwrap(),
        serde_json::json!({"n": 21})
    );

    // The model was offered the tool as the registry defines it.
    let requests = script.requests();
    assert_eq!(requests.len(), 2);
    let offered = &requests[0].tools;
    assert_eq!(offered.len(), 1);
    let definition = registry.definition("double").unwrap();
    assert_eq!(offered[0].name.as_str(), "double");
    assert_eq!(offered[0].description, definition.description);
    assert_eq!(offered[0].parameters, definition.input_schema);

    // The next request carries, for the model's call, what render produced.
    let expected = runtime().block_on(async {
        Registry::builder()
            .tool(Double::default())
            .build()
            .unwrap()
            .call(ToolCall::new("x", "double", r#"{"n": 21}"#))
            .await
    });
    let results = tool_results(&requests[1]);
    assert_eq!(results.len(), 1);
    assert_eq!(results[0].call.to_string(), "call_1");
    assert!(!results[0].is_error);
    assert_eq!(
        results[0].content,
        [ToolResultContent::text("21 doubled is 42")]
    );
    assert_eq!(expected.content(), [ContentBlock::text("21 doubled is 42")]);
}

#[test]
fn bad_arguments_are_an_invalid_args_result_not_a_panic() {
    let runs = Arc::new(AtomicUsize::new(0));
    let registry = Registry::builder()
        .tool(Double { runs: runs.clone() })
        .build()
        .unwrap();
    let script = Scripted::new([
        Turn::Call("call_7", "double", r#"{"n": "two"}"#),
        Turn::Text("sorry"),
    ]);

    let agent = AgentBuilder::new(script.model()).build();
    agent.tool_server_handle().add_tools(tool_set(&registry));
    let answer = runtime()
        .block_on(async { agent.prompt("double two").max_turns(4).await })
        .unwrap();
    assert_eq!(answer.output(), "sorry");
    assert_eq!(
        runs.load(Ordering::SeqCst),
        0,
        "bad arguments never reach execute"
    );

    let results = tool_results(&script.requests()[1]);
    assert_eq!(results.len(), 1);
    assert!(results[0].is_error);
    let text = results[0].content[0].as_text().unwrap();
    assert!(text.starts_with("Error [INVALID_ARGS]: "), "{text}");

    // The same call through the ToolSet alone: rig's error form, its code
    // and kind.
    let result = runtime().block_on(async {
        tool_set(&registry)
            .execute("double", r#"{"n": "two"}"#, &mut ToolContext::new())
            .await
    });
    assert!(result.is_error());
    let error = result.error().unwrap();
    assert_eq!(error.code(), Some("INVALID_ARGS"));
    assert_eq!(error.kind(), ToolErrorKind::InvalidArgs);
    assert!(
        error
            .model_feedback()
            .unwrap()
            .starts_with("Error [INVALID_ARGS]: ")
    );
}

#[test]
fn an_image_result_arrives_as_rig_image_content() {
    let registry = Registry::builder().tool(Snapshot).build().unwrap();
    let script = Scripted::new([Turn::Call("call_2", "snapshot", "{}"), Turn::Text("nice")]);

    let agent = AgentBuilder::new(script.model()).build();
    agent.tool_server_handle().add_tools(tool_set(&registry));
    runtime()
        .block_on(async { agent.prompt("snap").max_turns(4).await })
        .unwrap();

    let results = tool_results(&script.requests()[1]);
    assert_eq!(results.len(), 1);
    assert!(!results[0].is_error);
    let content = &results[0].content;
    assert_eq!(content.len(), 4);
    assert_eq!(content[0], ToolResultContent::text("one pixel"));
    match &content[1] {
        ToolResultContent::Image(image) => {
            assert_eq!(image.data, DocumentSourceKind::Base64(PIXEL.into()));
            assert_eq!(image.media_type, Some(ImageMediaType::PNG));
        }
        other => panic!("not an image: {other:?}"),
    }
    // What rig cannot carry is said, not dropped.
    assert_eq!(
        content[2].as_text(),
        Some(
            "[an image (image/bmp, 3 bytes) was left out: rig tool results take no image/bmp images]"
        )
    );
    assert_eq!(
        content[3].as_text(),
        Some("[audio (audio/wav, 6 bytes) was left out: rig tool results take no audio]")
    );
}

#[test]
fn a_denied_call_is_a_refusal_with_its_code() {
    let runs = Arc::new(AtomicUsize::new(0));
    let registry = Registry::builder()
        .tool(Double { runs: runs.clone() })
        .pre_execute(|_: &toolprism::PreExecute<'_>| PreDecision::Deny {
            reason: "not today".into(),
        })
        .build()
        .unwrap();
    let tools = RigTools::new(registry);
    assert_eq!(tools.tools().len(), 1);
    assert_eq!(tools.tools()[0].name(), "double");

    let result = runtime().block_on(async {
        tools
            .tool_set()
            .execute("double", r#"{"n": 1}"#, &mut ToolContext::new())
            .await
    });
    assert_eq!(runs.load(Ordering::SeqCst), 0);
    assert!(result.is_refused());
    let refusal = result.refusal().unwrap();
    assert_eq!(refusal.code(), Some("DENIED"));
    let text = result.output().as_text().unwrap();
    assert!(
        text.starts_with("Error [DENIED]: ") && text.contains("not today"),
        "{text}"
    );
}
