//! The model loop, side by side in one run (`cargo bench --manifest-path
//! benches/Cargo.toml --bench agent_loop`): a loop of 5 turns with 4 calls
//! each (then an answer), through `toolprism::provider::Agent` against a
//! scripted in-memory model, against the same 20 calls made with
//! `Registry::call` one by one. The loop's side pays everything it adds:
//! each request's body written (the whole conversation, as a client sends
//! it), each response read (calls and the verbatim echo), each batch of
//! results written in the provider's shape. Rounds alternate; the figure
//! is the ratio of the medians, per call, for each provider, with the
//! built-in `read` of a small file (a real tool) and with a trivial `echo`.

use std::hint::black_box;
use std::time::Instant;

use serde_json::json;
use toolprism::provider::{Agent, End, Model, ModelError, Provider, Request};
use toolprism::{Registry, ToolCall};
use toolprism_benches::EchoTool;
use toolprism_tools::{ReadTool, Workspace};

const TURNS: usize = 5;
const CALLS: usize = 4;
const ROUNDS: usize = 21;
const REPEAT: usize = 20;

/// Answers turn `i < TURNS` with `CALLS` calls, then with text.
struct Scripted {
    turns: Vec<String>,
    /// Write each request's body, as a client must.
    body: bool,
}

impl Model for Scripted {
    async fn respond(&self, request: &Request) -> Result<String, ModelError> {
        // What a client sends: the body, the conversation so far included.
        if self.body {
            black_box(request.body(json!({"model": "bench", "max_tokens": 1024}))?);
        }
        Ok(self.turns[request.turn()].clone())
    }
}

fn script(provider: Provider, tool: &str, args: &serde_json::Value) -> Scripted {
    let args_text = args.to_string();
    let mut turns = Vec::new();
    for t in 0..TURNS {
        let ids: Vec<String> = (0..CALLS).map(|c| format!("call_{t}_{c}")).collect();
        let body = match provider {
            Provider::Anthropic => {
                let mut content = vec![json!({"type": "text", "text": "Working."})];
                content.extend(
                    ids.iter().map(
                        |id| json!({"type": "tool_use", "id": id, "name": tool, "input": args}),
                    ),
                );
                json!({"type": "message", "role": "assistant", "stop_reason": "tool_use", "content": content})
            }
            Provider::OpenAiChat => json!({"choices": [{"finish_reason": "tool_calls", "message": {
                "role": "assistant", "content": null,
                "tool_calls": ids.iter().map(|id| json!({"id": id, "type": "function",
                    "function": {"name": tool, "arguments": args_text}})).collect::<Vec<_>>()}}]}),
            Provider::OpenAiResponses => {
                json!({"status": "completed", "output": ids.iter().map(|id| json!({
                "type": "function_call", "id": format!("fc_{id}"), "call_id": id, "name": tool,
                "arguments": args_text, "status": "completed"})).collect::<Vec<_>>()})
            }
            _ => json!({"candidates": [{"finishReason": "STOP", "content": {"role": "model",
                "parts": ids.iter().map(|id| json!({"functionCall": {"id": id, "name": tool, "args": args}})).collect::<Vec<_>>()}}]}),
        };
        turns.push(body.to_string());
    }
    let answer = match provider {
        Provider::Anthropic => {
            json!({"type": "message", "role": "assistant", "stop_reason": "end_turn",
            "content": [{"type": "text", "text": "Done."}]})
        }
        Provider::OpenAiChat => {
            json!({"choices": [{"finish_reason": "stop", "message": {"role": "assistant", "content": "Done."}}]})
        }
        Provider::OpenAiResponses => {
            json!({"status": "completed", "output": [{"type": "message", "id": "msg_1",
            "role": "assistant", "status": "completed", "content": [{"type": "output_text", "text": "Done.", "annotations": []}]}]})
        }
        _ => {
            json!({"candidates": [{"finishReason": "STOP", "content": {"role": "model", "parts": [{"text": "Done."}]}}]})
        }
    };
    turns.push(answer.to_string());
    Scripted { turns, body: true }
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

fn main() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("small.txt"), "one\ntwo\nthree\n").unwrap();
    let registry = Registry::builder()
        .tool(EchoTool)
        .tool(ReadTool::new(Workspace::new(dir.path()).unwrap()))
        .build()
        .unwrap();
    println!(
        "agent loop: {TURNS} turns x {CALLS} calls, per call, loop / Registry::call (medians of {ROUNDS} rounds)"
    );
    println!(
        "{:<18} {:<6} {:>12} {:>12} {:>7}",
        "provider", "tool", "loop", "direct", "ratio"
    );
    println!("(echo*: the model writes no request body, so the row is the loop's own cost)");
    for (tool, args, body) in [
        ("read", json!({"path": "small.txt"}), true),
        ("echo", json!({"text": "hello"}), true),
        // The loop's own cost alone: no request body written.
        ("echo", json!({"text": "hello"}), false),
    ] {
        let args_text = args.to_string();
        for provider in Provider::ALL {
            let model = Scripted {
                body,
                ..script(provider, tool, &args)
            };
            let agent = Agent::new(&registry, provider);
            let one_loop = || async {
                let run = agent
                    .run(&model, vec![provider.user_message("go")])
                    .await
                    .unwrap();
                assert_eq!(run.end(), &End::Answered);
                assert_eq!(run.calls().len(), TURNS * CALLS);
                assert!(
                    run.calls().iter().all(|c| !c.outcome.is_error()),
                    "{:?}",
                    run.calls()[0].outcome
                );
                black_box(run);
            };
            let direct = || async {
                for t in 0..TURNS {
                    for c in 0..CALLS {
                        let out = registry
                            .call(ToolCall::new(format!("call_{t}_{c}"), tool, &*args_text))
                            .await;
                        assert!(!out.is_error());
                        black_box(out);
                    }
                }
            };
            rt.block_on(async {
                for _ in 0..5 {
                    one_loop().await;
                    direct().await;
                }
            });
            let (mut looped, mut plain) = (Vec::new(), Vec::new());
            for _ in 0..ROUNDS {
                rt.block_on(async {
                    let t = Instant::now();
                    for _ in 0..REPEAT {
                        one_loop().await;
                    }
                    looped.push(t.elapsed().as_secs_f64() / (REPEAT * TURNS * CALLS) as f64);
                    let t = Instant::now();
                    for _ in 0..REPEAT {
                        direct().await;
                    }
                    plain.push(t.elapsed().as_secs_f64() / (REPEAT * TURNS * CALLS) as f64);
                });
            }
            let (l, d) = (median(looped), median(plain));
            println!(
                "{:<18} {:<6} {:>9.2} µs {:>9.2} µs {:>7.3}",
                provider.name(),
                if body {
                    tool.to_owned()
                } else {
                    format!("{tool}*")
                },
                l * 1e6,
                d * 1e6,
                l / d
            );
        }
    }
}
