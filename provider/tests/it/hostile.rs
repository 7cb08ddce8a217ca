//! What a model, or the server in front of it, can do wrong, each against
//! the loop (`Agent::run`) with a scripted model: arguments that are not
//! JSON, duplicated, huge or nested past any stack; unknown tools; a
//! hundred calls at once; a model that never stops calling, never
//! answers, or answers garbage; audio; the order of read-only and other
//! calls; and the session log a loop writes, replayed.

use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;
use tokio::sync::Barrier;
use toolprism::provider::{
    Agent, AgentErrorKind, End, Model, ModelError, Provider, Request, Run, Stop,
};
use toolprism::{CallOptions, CancellationToken, ContentBlock, Registry, ToolError, tool};

use crate::common::{self, Scripted, json, registry, runtime, start};

/// A call as a test writes it: id, tool, the arguments' JSON text (any
/// text for OpenAI's string arguments).
type Call<'a> = (&'a str, &'a str, &'a str);

fn quoted(text: &str) -> String {
    serde_json::to_string(text).unwrap()
}

/// A response making `calls`, in the provider's shape. The arguments go
/// in as written: raw JSON for Anthropic and Gemini, a string for OpenAI.
/// A Gemini call with an empty id has none.
fn calls_body(provider: Provider, calls: &[Call<'_>]) -> String {
    let items: Vec<String> = calls
        .iter()
        .map(|(id, name, args)| match provider {
            Provider::Anthropic => format!(
                r#"{{"type":"tool_use","id":{},"name":{},"input":{args}}}"#,
                quoted(id),
                quoted(name)
            ),
            Provider::OpenAiChat => format!(
                r#"{{"id":{},"type":"function","function":{{"name":{},"arguments":{}}}}}"#,
                quoted(id),
                quoted(name),
                quoted(args)
            ),
            Provider::OpenAiResponses => format!(
                r#"{{"type":"function_call","id":"fc_{id}","call_id":{},"name":{},"arguments":{},"status":"completed"}}"#,
                quoted(id),
                quoted(name),
                quoted(args)
            ),
            Provider::Gemini if id.is_empty() => format!(
                r#"{{"functionCall":{{"name":{},"args":{args}}}}}"#,
                quoted(name)
            ),
            Provider::Gemini => format!(
                r#"{{"functionCall":{{"id":{},"name":{},"args":{args}}}}}"#,
                quoted(id),
                quoted(name)
            ),
            _ => unreachable!("a provider this test does not know"),
        })
        .collect();
    let items = items.join(",");
    match provider {
        Provider::Anthropic => format!(
            r#"{{"id":"msg_1","type":"message","role":"assistant","model":"m","stop_reason":"tool_use","content":[{items}]}}"#
        ),
        Provider::OpenAiChat => format!(
            r#"{{"id":"c1","object":"chat.completion","choices":[{{"index":0,"finish_reason":"tool_calls","message":{{"role":"assistant","content":null,"tool_calls":[{items}]}}}}]}}"#
        ),
        Provider::OpenAiResponses => {
            format!(r#"{{"id":"r1","object":"response","status":"completed","output":[{items}]}}"#)
        }
        Provider::Gemini => format!(
            r#"{{"candidates":[{{"index":0,"finishReason":"STOP","content":{{"role":"model","parts":[{items}]}}}}]}}"#
        ),
        _ => unreachable!(),
    }
}

/// A response that answers "done", in the provider's shape.
fn answer_body(provider: Provider) -> String {
    match provider {
        Provider::Anthropic => r#"{"id":"msg_2","type":"message","role":"assistant","model":"m","stop_reason":"end_turn","content":[{"type":"text","text":"done"}]}"#.into(),
        Provider::OpenAiChat => r#"{"id":"c2","object":"chat.completion","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"done"}}]}"#.into(),
        Provider::OpenAiResponses => r#"{"id":"r2","object":"response","status":"completed","output":[{"type":"message","id":"m2","role":"assistant","status":"completed","content":[{"type":"output_text","text":"done","annotations":[]}]}]}"#.into(),
        Provider::Gemini => r#"{"candidates":[{"index":0,"finishReason":"STOP","content":{"role":"model","parts":[{"text":"done"}]}}]}"#.into(),
        _ => unreachable!(),
    }
}

/// Runs `calls` then the answer with `registry`, and returns the run.
fn run_calls(registry: &Registry, provider: Provider, calls: &[Call<'_>]) -> Run {
    let model = Scripted::new([calls_body(provider, calls), answer_body(provider)]);
    let run = runtime()
        .block_on(Agent::new(registry, provider).run(&model, start(provider)))
        .unwrap_or_else(|e| panic!("{provider}: {e}"));
    assert_eq!(run.end(), &End::Answered, "{provider}");
    assert_eq!(run.turns(), 2, "{provider}: the next turn happens");
    assert_eq!(run.text(), "done");
    run
}

fn codes(run: &Run) -> Vec<Option<&str>> {
    run.calls()
        .iter()
        .map(|c| c.outcome.code().map(|c| c.as_str()))
        .collect()
}

/// The text of every result the loop wrote, in order (each provider's
/// result shape read back).
fn result_texts(provider: Provider, run: &Run) -> Vec<String> {
    texts_in(provider, run.messages())
}

/// [`result_texts`] of some messages.
fn texts_in(provider: Provider, messages: &[Box<RawValue>]) -> Vec<String> {
    let messages: Vec<Value> = messages.iter().map(|m| json(m.get())).collect();
    let mut out = Vec::new();
    for m in &messages {
        match provider {
            Provider::Anthropic => {
                for b in m["content"].as_array().into_iter().flatten() {
                    if b["type"] == "tool_result" {
                        let text: Vec<&str> = b["content"]
                            .as_array()
                            .into_iter()
                            .flatten()
                            .filter_map(|c| c["text"].as_str())
                            .collect();
                        out.push(text.join("\n"));
                    }
                }
            }
            Provider::OpenAiChat if m["role"] == "tool" => {
                out.push(m["content"].as_str().unwrap().to_owned())
            }
            Provider::OpenAiResponses if m["type"] == "function_call_output" => {
                out.push(match &m["output"] {
                    Value::String(s) => s.clone(),
                    parts => parts
                        .as_array()
                        .unwrap()
                        .iter()
                        .filter_map(|p| p["text"].as_str())
                        .collect::<Vec<_>>()
                        .join("\n"),
                })
            }
            Provider::Gemini => {
                for p in m["parts"].as_array().into_iter().flatten() {
                    let r = &p["functionResponse"]["response"];
                    if let Some(t) = r["output"].as_str() {
                        out.push(t.to_owned());
                    } else if let Some(e) = r["error"].as_object() {
                        out.push(format!("[{}] {}", e["code"], e["message"]));
                    }
                }
            }
            _ => {}
        }
    }
    out
}

/// The ids the loop's results answer, in order (`None` for a Gemini
/// response answered by name).
fn answered_ids(provider: Provider, run: &Run) -> Vec<Option<String>> {
    let mut out = Vec::new();
    for m in run.messages().iter().map(|m| json(m.get())) {
        match provider {
            Provider::Anthropic => {
                for b in m["content"].as_array().into_iter().flatten() {
                    if b["type"] == "tool_result" {
                        out.push(b["tool_use_id"].as_str().map(str::to_owned));
                    }
                }
            }
            Provider::OpenAiChat if m["role"] == "tool" => {
                out.push(m["tool_call_id"].as_str().map(str::to_owned))
            }
            Provider::OpenAiResponses if m["type"] == "function_call_output" => {
                out.push(m["call_id"].as_str().map(str::to_owned))
            }
            Provider::Gemini => {
                for p in m["parts"].as_array().into_iter().flatten() {
                    if p.get("functionResponse").is_some() {
                        out.push(p["functionResponse"]["id"].as_str().map(str::to_owned));
                    }
                }
            }
            _ => {}
        }
    }
    out
}

// ---------------------------------------------------------- arguments

#[test]
fn arguments_that_are_not_json_are_invalid_args_and_the_turn_goes_on() {
    let p = Provider::OpenAiChat;
    let run = run_calls(
        &registry(),
        p,
        &[
            ("call_1", "lookup", r#"{"key": "alpha""#),
            ("call_2", "lookup", "not json at all"),
            ("call_3", "lookup", r#"{"key":"alpha"}"#),
        ],
    );
    assert_eq!(
        codes(&run),
        [Some("INVALID_ARGS"), Some("INVALID_ARGS"), None]
    );
    let texts = result_texts(p, &run);
    assert!(texts[0].starts_with("Error [INVALID_ARGS]"), "{}", texts[0]);
    assert_eq!(texts[2], "alpha = 1");
}

#[test]
fn a_key_twice_is_invalid_args_at_every_provider() {
    for p in Provider::ALL {
        let run = run_calls(
            &registry(),
            p,
            &[
                ("call_1", "lookup", r#"{"key":"alpha","key":"beta"}"#),
                ("call_2", "lookup", r#"{"key":"alpha"}"#),
            ],
        );
        assert_eq!(codes(&run), [Some("INVALID_ARGS"), None], "{p}");
        let texts = result_texts(p, &run);
        assert!(texts[0].contains("INVALID_ARGS"), "{p}: {}", texts[0]);
        assert!(texts[0].contains("key"), "{p}: {}", texts[0]);
    }
}

#[test]
fn ten_megabytes_of_arguments_get_a_clear_result_in_bounded_time() {
    const TEN_MB: usize = 10 * 1024 * 1024;
    let huge_value = format!(r#"{{"key":"{}"}}"#, "a".repeat(TEN_MB));
    let huge_garbage = format!(r#"{{"key":"a", {}}}"#, "x".repeat(TEN_MB));
    for p in [Provider::OpenAiChat, Provider::Anthropic] {
        let started = Instant::now();
        let calls: Vec<Call<'_>> = match p {
            // Raw arguments must be JSON inside an Anthropic body.
            Provider::Anthropic => vec![("call_1", "lookup", &huge_value)],
            _ => vec![
                ("call_1", "lookup", &huge_value),
                ("call_2", "lookup", &huge_garbage),
            ],
        };
        let run = run_calls(&registry(), p, &calls);
        let took = started.elapsed();
        assert!(took < Duration::from_secs(60), "{p}: {took:?}");
        let texts = result_texts(p, &run);
        // The value arrived whole and was answered.
        assert_eq!(run.calls()[0].outcome.code(), None, "{p}");
        assert!(
            texts[0].starts_with("aaaa") && texts[0].len() > TEN_MB,
            "{p}: {}",
            &texts[0][..100.min(texts[0].len())]
        );
        if p == Provider::OpenAiChat {
            assert_eq!(run.calls()[1].outcome.code().unwrap(), "INVALID_ARGS");
            // The error says where, and does not quote the 10 MB back.
            assert!(
                texts[1].starts_with("Error [INVALID_ARGS]"),
                "{}",
                &texts[1][..200.min(texts[1].len())]
            );
            assert!(texts[1].len() < 4096, "{} bytes", texts[1].len());
        }
        eprintln!("{p}: 10 MB of arguments in {took:?}");
    }
}

#[test]
fn an_anthropic_input_nested_100000_deep_is_invalid_args_not_a_parse_error() {
    let p = Provider::Anthropic;
    let deep = format!(
        r#"{{"key":{}{}}}"#,
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    let run = run_calls(
        &registry(),
        p,
        &[
            ("toolu_1", "lookup", &deep),
            ("toolu_2", "lookup", r#"{"key":"alpha"}"#),
        ],
    );
    assert_eq!(codes(&run), [Some("INVALID_ARGS"), None]);
    // (The echo itself is past serde_json's own recursion limit: only the
    // results are read back here.)
    let texts = texts_in(p, &run.messages()[2..3]);
    assert!(
        texts[0].contains("deep") || texts[0].contains("depth"),
        "{}",
        texts[0]
    );
    assert!(texts[0].len() < 4096, "{} bytes", texts[0].len());
    // The turn is echoed as received, the deep input included.
    assert!(run.messages()[1].get().len() > 200_000);
}

#[test]
fn an_unknown_tool_is_answered_unknown_tool_at_every_provider() {
    for p in Provider::ALL {
        let run = run_calls(
            &registry(),
            p,
            &[
                ("call_1", "no_such_tool", r#"{"x":1}"#),
                ("call_2", "lookup", r#"{"key":"alpha"}"#),
            ],
        );
        assert_eq!(codes(&run), [Some("UNKNOWN_TOOL"), None], "{p}");
        let texts = result_texts(p, &run);
        assert!(texts[0].contains("UNKNOWN_TOOL"), "{p}: {}", texts[0]);
        assert_eq!(
            answered_ids(p, &run),
            [Some("call_1".into()), Some("call_2".into())],
            "{p}"
        );
    }
}

#[test]
fn a_hundred_calls_in_one_turn_get_a_hundred_results_in_order() {
    for p in Provider::ALL {
        let ids: Vec<String> = (0..100)
            .map(|i| {
                // Every tenth Gemini call comes without an id.
                if p == Provider::Gemini && i % 10 == 3 {
                    String::new()
                } else {
                    format!("call_{i:03}")
                }
            })
            .collect();
        let keys: Vec<String> = (0..100).map(|i| format!(r#"{{"key":"k{i}"}}"#)).collect();
        let calls: Vec<Call<'_>> = (0..100)
            .map(|i| (ids[i].as_str(), "lookup", keys[i].as_str()))
            .collect();
        let run = run_calls(&registry(), p, &calls);
        assert_eq!(run.calls().len(), 100, "{p}");
        let texts = result_texts(p, &run);
        let expected: Vec<String> = (0..100)
            .map(|i| format!("k{i} = no value for k{i}"))
            .collect();
        assert_eq!(texts, expected, "{p}: in order");
        let answered = answered_ids(p, &run);
        let wanted: Vec<Option<String>> = ids
            .iter()
            .map(|id| (!id.is_empty()).then(|| id.clone()))
            .collect();
        assert_eq!(answered, wanted, "{p}: each id once, in order");
        // The registry knew each call by a distinct id (Gemini's made up).
        let mut known: Vec<&str> = run.calls().iter().map(|c| c.call.id.as_str()).collect();
        known.sort();
        known.dedup();
        assert_eq!(known.len(), 100, "{p}");
        // The question, the turn, its results, the answer: one message of
        // results (Anthropic, Gemini), or one per call (Chat's tool
        // messages; Responses' outputs after its 100 function_call items).
        let expected = match p {
            Provider::Anthropic | Provider::Gemini => 4,
            Provider::OpenAiChat => 1 + 1 + 100 + 1,
            _ => 1 + 100 + 100 + 1,
        };
        assert_eq!(run.messages().len(), expected, "{p}");
    }
}

// --------------------------------------------------------- the model

/// A model whose every answer `f` makes from the request.
struct FnModel<F>(F);

impl<F> Model for FnModel<F>
where
    F: Fn(&Request) -> Result<String, ModelError> + Send + Sync,
{
    async fn respond(&self, request: &Request) -> Result<String, ModelError> {
        (self.0)(request)
    }
}

/// A model that makes one call on turn 0 and never answers after.
struct Hangs {
    first: String,
    asked: Mutex<usize>,
}

impl Model for Hangs {
    fn respond(
        &self,
        request: &Request,
    ) -> impl Future<Output = Result<String, ModelError>> + Send {
        *self.asked.lock().unwrap() += 1;
        let first = (request.turn() == 0).then(|| self.first.clone());
        async move {
            match first {
                Some(body) => Ok(body),
                None => std::future::pending().await,
            }
        }
    }
}

#[test]
fn a_model_that_never_stops_calling_meets_the_turn_limit() {
    for (max, agent) in [
        (10, Agent::new(&registry(), Provider::OpenAiChat)),
        (
            3,
            Agent::new(&registry(), Provider::OpenAiChat).with_max_turns(3),
        ),
    ] {
        let asked = Mutex::new(0);
        let model = FnModel(|r: &Request| {
            *asked.lock().unwrap() += 1;
            let id = format!("call_{}", r.turn());
            Ok(calls_body(
                Provider::OpenAiChat,
                &[(&id, "lookup", r#"{"key":"alpha"}"#)],
            ))
        });
        let run = runtime()
            .block_on(agent.run(&model, start(Provider::OpenAiChat)))
            .unwrap();
        assert_eq!(run.end(), &End::TurnLimit);
        assert_eq!(*asked.lock().unwrap(), max);
        assert_eq!(run.turns(), max);
        assert_eq!(run.calls().len(), max);
        assert_eq!(run.stop(), Some(&Stop::ToolCalls));
        // The last calls were answered: the conversation can go on.
        let last = json(run.messages().last().unwrap().get());
        assert_eq!(last["role"], "tool");
        assert_eq!(last["tool_call_id"], format!("call_{}", max - 1));
    }
}

#[test]
fn a_model_server_that_hangs_is_a_timeout_that_keeps_the_conversation() {
    let p = Provider::Anthropic;
    let model = Hangs {
        first: calls_body(p, &[("toolu_1", "lookup", r#"{"key":"alpha"}"#)]),
        asked: Mutex::new(0),
    };
    let started = Instant::now();
    let err = runtime()
        .block_on(
            Agent::new(&registry(), p)
                .with_turn_timeout(Duration::from_millis(200))
                .run(&model, start(p)),
        )
        .unwrap_err();
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert!(
        matches!(err.kind(), AgentErrorKind::Timeout(d) if *d == Duration::from_millis(200)),
        "{err}"
    );
    assert!(err.to_string().contains("no response"), "{err}");
    assert_eq!(*model.asked.lock().unwrap(), 2);
    // The conversation so far: the question, the call, its answer.
    let run = err.run();
    assert_eq!(run.messages().len(), 3);
    assert_eq!(run.calls().len(), 1);
    assert_eq!(run.turns(), 1);
    assert_eq!(
        json(run.messages()[2].get())["content"][0]["tool_use_id"],
        "toolu_1"
    );
}

#[test]
fn a_cancellation_while_the_model_hangs_ends_the_loop_promptly() {
    let p = Provider::Gemini;
    let model = Hangs {
        first: calls_body(p, &[("", "lookup", r#"{"key":"alpha"}"#)]),
        asked: Mutex::new(0),
    };
    let token = CancellationToken::new();
    let agent =
        Agent::new(&registry(), p).with_options(CallOptions::new().with_cancel(token.clone()));
    let rt = runtime();
    let started = Instant::now();
    let run = rt.block_on(async {
        let t = token.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(150)).await;
            t.cancel();
        });
        agent.run(&model, start(p)).await
    });
    let took = started.elapsed();
    let run = run.unwrap();
    assert_eq!(run.end(), &End::Cancelled);
    assert!(took < Duration::from_secs(3), "{took:?}");
    assert_eq!(*model.asked.lock().unwrap(), 2);
    assert_eq!(run.calls().len(), 1);
    assert_eq!(run.messages().len(), 3);
    // A cancelled token stops the next loop before it asks.
    let again = rt.block_on(agent.run(&model, start(p))).unwrap();
    assert_eq!(again.end(), &End::Cancelled);
    assert_eq!(again.turns(), 0);
    assert_eq!(*model.asked.lock().unwrap(), 2);
}

#[test]
fn a_garbage_response_is_a_response_error_naming_the_provider() {
    for p in Provider::ALL {
        let api_error = match p {
            Provider::Anthropic => {
                r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#
            }
            Provider::Gemini => {
                r#"{"error":{"code":503,"message":"overloaded","status":"UNAVAILABLE"}}"#
            }
            _ => r#"{"error":{"message":"overloaded","type":"server_error"}}"#,
        };
        for body in [
            "<html>502 Bad Gateway</html>",
            "",
            r#"{"unexpected":true}"#,
            "[]",
            r#"{"choices":"x","content":"x","output":"x","candidates":"x"}"#,
            api_error,
        ] {
            let model = Scripted::new([body]);
            let err = runtime()
                .block_on(Agent::new(&registry(), p).run(&model, start(p)))
                .expect_err(&format!("{p}: {body}"));
            let AgentErrorKind::Response(e) = err.kind() else {
                panic!("{p}: {body}: {err}");
            };
            assert_eq!(e.provider(), p);
            let said = err.to_string();
            assert!(said.contains(p.name()), "{said}");
            assert!(said.len() < 1000, "{said}");
            // Nothing was lost: the question is still there.
            assert_eq!(err.run().messages().len(), 1);
            assert_eq!(err.run().turns(), 0);
        }
    }
    // A prompt Gemini blocked has no candidates but says why: an answer.
    let p = Provider::Gemini;
    let model = Scripted::new([r#"{"promptFeedback":{"blockReason":"SAFETY"}}"#]);
    let run = runtime()
        .block_on(Agent::new(&registry(), p).run(&model, start(p)))
        .unwrap();
    assert_eq!(run.end(), &End::Answered);
    assert!(
        matches!(run.stop(), Some(Stop::Refused(why)) if why.contains("SAFETY")),
        "{:?}",
        run.stop()
    );
}

#[test]
fn audio_is_a_line_saying_it_was_left_out_at_every_provider() {
    for p in Provider::ALL {
        let run = run_calls(&registry(), p, &[("call_1", "recording", "{}")]);
        assert_eq!(codes(&run), [None]);
        let texts = result_texts(p, &run);
        assert_eq!(
            texts,
            [format!(
                "[audio (audio/wav, 52 bytes) was left out: {p} tool results take no audio]"
            )],
            "{p}"
        );
        // No audio bytes went to the model.
        let all: String = run.messages().iter().map(|m| m.get()).collect();
        assert!(!all.contains(common::TINY_WAV), "{p}");
    }
}

// -------------------------------------------------------------- order

#[derive(Clone, Deserialize, JsonSchema)]
struct Tag {
    tag: String,
}

type Events = Arc<Mutex<Vec<String>>>;

/// `meet`: read-only; waits for a second caller at a barrier of two.
struct Meet {
    barrier: Arc<Barrier>,
    events: Events,
}

/// Meets another call.
#[tool(read_only)]
impl Meet {
    async fn execute(&self, args: Tag) -> Result<String, ToolError> {
        self.events
            .lock()
            .unwrap()
            .push(format!("start {}", args.tag));
        tokio::time::timeout(Duration::from_secs(5), self.barrier.wait())
            .await
            .map_err(|_| ToolError::new("nobody came to the barrier").with_code("ALONE"))?;
        self.events
            .lock()
            .unwrap()
            .push(format!("end {}", args.tag));
        Ok(args.tag)
    }

    fn render(args: &Tag, _value: &String) -> Vec<ContentBlock> {
        vec![ContentBlock::text(args.tag.clone())]
    }
}

/// `step`: not read-only; takes a while.
struct Step {
    events: Events,
}

/// Takes a step.
#[tool]
impl Step {
    async fn execute(&self, args: Tag) -> String {
        self.events
            .lock()
            .unwrap()
            .push(format!("start {}", args.tag));
        tokio::time::sleep(Duration::from_millis(50)).await;
        self.events
            .lock()
            .unwrap()
            .push(format!("end {}", args.tag));
        args.tag
    }

    fn render(args: &Tag, _value: &String) -> Vec<ContentBlock> {
        vec![ContentBlock::text(args.tag.clone())]
    }
}

#[test]
fn read_only_calls_run_together_and_the_others_in_order() {
    let events: Events = Arc::default();
    let registry = Registry::builder()
        .tool(Meet {
            barrier: Arc::new(Barrier::new(2)),
            events: events.clone(),
        })
        .tool(Step {
            events: events.clone(),
        })
        .build()
        .unwrap();
    let p = Provider::OpenAiResponses;
    let run = run_calls(
        &registry,
        p,
        &[
            ("call_1", "meet", r#"{"tag":"m1"}"#),
            ("call_2", "meet", r#"{"tag":"m2"}"#),
            ("call_3", "step", r#"{"tag":"s1"}"#),
            ("call_4", "step", r#"{"tag":"s2"}"#),
        ],
    );
    // Both read-only calls met at the barrier: they ran at once.
    assert_eq!(codes(&run), [None, None, None, None]);
    assert_eq!(result_texts(p, &run), ["m1", "m2", "s1", "s2"]);
    let events = events.lock().unwrap().clone();
    assert_eq!(
        events[..2],
        ["start m1", "start m2"],
        "both started before either ended: {events:?}"
    );
    // Each step ended before the next began, after the read-only pair.
    assert_eq!(
        events[4..],
        ["start s1", "end s1", "start s2", "end s2"],
        "{events:?}"
    );
}

// -------------------------------------------------------- log, replay

#[test]
fn a_loop_s_calls_are_logged_and_replay_draws_each_one() {
    let dir = tempfile::tempdir().unwrap();
    for (i, (p, strict)) in [
        (Provider::Anthropic, false),
        (Provider::Anthropic, true),
        (Provider::OpenAiChat, false),
        (Provider::OpenAiResponses, false),
        (Provider::Gemini, false),
    ]
    .into_iter()
    .enumerate()
    {
        let log = dir.path().join(format!("session-{i}.jsonl"));
        let registry = Registry::builder()
            .tool(common::Lookup)
            .tool(common::Snapshot)
            .tool(common::Fail)
            .log(toolprism::log::SessionLog::create(&log).unwrap())
            .build()
            .unwrap();
        let gemini_id = |id: &'static str| if p == Provider::Gemini { "" } else { id };
        let calls = [
            ("call_1", "lookup", r#"{"key":"alpha"}"#),
            (gemini_id("call_2"), "snapshot", "{}"),
            ("call_3", "fail", "{}"),
            ("call_4", "nope", "{}"),
            ("call_5", "lookup", r#"{"key":"a","key":"b"}"#),
        ];
        let model = Scripted::new([calls_body(p, &calls), answer_body(p)]);
        let run = runtime()
            .block_on(
                Agent::new(&registry, p)
                    .with_strict(strict)
                    .run(&model, start(p)),
            )
            .unwrap();
        assert_eq!(run.calls().len(), 5);
        let replayed = toolprism::replay::replay_log(&log, &registry).unwrap();
        assert!(replayed.problems.is_empty(), "{p}: {:?}", replayed.problems);
        assert_eq!(replayed.entries.len(), 5, "{p}");
        for (call, entry) in run.calls().iter().zip(&replayed.entries) {
            assert_eq!(entry.call_id, call.call.id, "{p}");
            assert_eq!(entry.name, call.call.name, "{p}");
            assert_eq!(entry.arguments, call.call.arguments, "{p}");
            assert!(entry.has_result(), "{p}: {}", entry.call_id);
            assert_eq!(entry.is_error, call.outcome.is_error(), "{p}");
            assert_eq!(
                entry.error_code.as_ref().map(|c| c.as_str()),
                call.outcome.code().map(|c| c.as_str()),
                "{p}"
            );
            assert_eq!(entry.content, call.outcome.content(), "{p}");
            // The cards drawn from the log are the ones drawn live.
            assert_eq!(
                serde_json::to_value(&entry.call_card).unwrap(),
                serde_json::to_value(call.outcome.call_card().unwrap()).unwrap(),
                "{p}: {}",
                entry.call_id
            );
            assert_eq!(
                serde_json::to_value(entry.result_card.as_ref()).unwrap(),
                serde_json::to_value(call.outcome.result_card()).unwrap(),
                "{p}: {}",
                entry.call_id
            );
        }
        if p == Provider::Gemini {
            assert_eq!(replayed.entries[1].call_id, "gemini-0-1");
        }
        assert_eq!(
            replayed
                .entries
                .iter()
                .map(|e| e.error_code.as_ref().map(|c| c.as_str().to_owned()))
                .collect::<Vec<_>>(),
            [
                None,
                None,
                Some("DISK_FULL".into()),
                Some("UNKNOWN_TOOL".into()),
                Some("INVALID_ARGS".into())
            ],
            "{p}"
        );
    }
}

#[test]
fn a_tool_that_never_ends_is_still_answered_before_the_next_turn() {
    // The result of a timed-out tool is an answer like any other.
    struct Forever;
    /// Never ends.
    #[tool(timeout_ms = 100)]
    impl Forever {
        async fn execute(&self, _args: crate::common::Empty) -> u32 {
            std::future::pending::<()>().await;
            0
        }
        fn render(_args: &crate::common::Empty, _value: &u32) -> Vec<ContentBlock> {
            Vec::new()
        }
    }
    let registry = Registry::builder().tool(Forever).build().unwrap();
    let p = Provider::Anthropic;
    let run = run_calls(&registry, p, &[("toolu_1", "forever", "{}")]);
    let code = run.calls()[0].outcome.code().unwrap().as_str().to_owned();
    assert!(code.contains("TIMEOUT"), "{code}");
    assert!(result_texts(p, &run)[0].contains(&code));
}
