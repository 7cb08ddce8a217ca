//! The providers' own Python SDKs, from PyPI and pinned, as judges of the
//! provider edge (`sdk_judge.py` beside this file says how it judges):
//!
//! - responses built with the SDKs' own response classes are read by
//!   `Provider::read_turn` into the calls they make, and echoed byte for
//!   byte;
//! - a whole loop (`Agent::run`) over those responses, with real tools
//!   (text, an image, audio, a PDF, a failure, an unknown tool), writes a
//!   conversation every message of which the SDK validates as its request
//!   type, the echoed assistant turns included;
//! - the judge refuses deliberately wrong messages, deep inside ones
//!   included, so its passing means something.
//!
//! `toolprism_testkit::python_env` makes the virtualenv under
//! `target/testkit/` on first use; a failed install fails the tests.

use std::io::Write;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::OnceLock;

use serde_json::{Value, json};
use toolprism::provider::{Agent, End, ModelCall, Provider, Run, Stop};

use crate::common::{self, I, K, Scripted, TINY_PDF, TINY_PNG, json, raw_at};

/// The SDKs and everything they pull in, pinned (the newest releases when
/// written; `pip freeze` of a virtualenv made from the first four).
const REQUIREMENTS: &[&str] = &[
    "anthropic==2.16.0",
    "openai==3.60.0",
    "google-genai==3.6.1",
    "pydantic==2.14.4",
    "annotated-types==0.8.0",
    "anyio==4.16.0",
    "certifi==2026.10.19.post1",
    "cffi==2.1.1",
    "charset-normalizer==3.5.3",
    "cryptography==50.0.2",
    "distro==1.9.0",
    "docstring_parser==0.18.0",
    "google-auth==2.63.0",
    "h11==0.16.0",
    "httpcore2==2.16.2",
    "httpx2==2.16.2",
    "idna==3.20",
    "jiter==0.19.0",
    "opentelemetry-api==1.45.2",
    "pyasn1==0.6.5",
    "pyasn1_modules==0.4.2",
    "pycparser==3.12",
    "pydantic_core==2.50.5",
    "requests==2.34.2",
    "sniffio==1.3.1",
    "tenacity==9.1.4",
    "truststore==0.10.5",
    "typing-inspection==0.4.5",
    "typing_extensions==4.16.0",
    "urllib3==2.8.0",
    "websockets==17.4",
];

fn script() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/it/sdk_judge.py")
}

/// Sends one request to the judge and returns its answer; any failure of
/// the set-up or of the script fails the test.
fn python(request: &Value) -> Value {
    let venv = toolprism_testkit::python_env("provider-sdk-judges", REQUIREMENTS);
    let mut child = venv
        .command([script()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the judge");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(request.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "sdk_judge.py failed ({}):\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("sdk_judge.py printed no JSON ({e}):\n{stdout}"))
}

/// The responses the SDKs built, once per test binary: two bodies per
/// provider (the calls, then the answer).
fn built(provider: Provider) -> [String; 2] {
    static BUILT: OnceLock<Value> = OnceLock::new();
    let all = BUILT.get_or_init(|| python(&json!({"op": "build"})));
    let bodies = all[provider.name()].as_array().expect("two bodies");
    [0, 1].map(|i| bodies[i].as_str().unwrap().to_owned())
}

/// The judge's answer for one message.
#[derive(Debug)]
struct Verdict {
    ok: bool,
    shallow_ok: bool,
    error: String,
}

fn judge(provider: Provider, messages: &[String]) -> Vec<Verdict> {
    let items: Vec<Value> = messages
        .iter()
        .map(|m| json!({"provider": provider.name(), "message": m}))
        .collect();
    let answer = python(&json!({"op": "validate", "items": items}));
    let results = answer["results"].as_array().unwrap();
    assert_eq!(results.len(), messages.len());
    results
        .iter()
        .map(|r| Verdict {
            ok: r["ok"].as_bool().unwrap(),
            shallow_ok: r["shallow_ok"].as_bool().unwrap(),
            error: r["error"].as_str().unwrap().to_owned(),
        })
        .collect()
}

// ------------------------------------------------------------ calls in

fn call(id: &str, wire_id: Option<&str>, name: &str, arguments: &str) -> ModelCall {
    let mut c = ModelCall::new(id, name, arguments);
    c.wire_id = wire_id.map(str::to_owned);
    c
}

/// The answer turn (turn 1) of every provider: text, no call.
fn assert_answer(provider: Provider, body: &str) {
    let turn = provider.read_turn(body, 1).unwrap();
    assert!(turn.calls.is_empty(), "{provider}: {:?}", turn.calls);
    assert_eq!(turn.stop, Stop::Answered, "{provider}");
    assert_eq!(turn.text, "alpha is 1; the disk is full.", "{provider}");
}

#[test]
fn anthropic_sdk_message_is_read_and_echoed_byte_for_byte() {
    let [body, answer] = built(Provider::Anthropic);
    let turn = Provider::Anthropic.read_turn(&body, 0).unwrap();
    // content: thinking, server_tool_use, web_search_tool_result, text, six tool_use.
    let names = ["lookup", "snapshot", "recording", "report", "fail", "nope"];
    let expected: Vec<ModelCall> = names
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let id = format!("toolu_0{}", i + 1);
            let input = raw_at(&body, &[K("content"), I(4 + i), K("input")]);
            call(&id, Some(&id), name, input)
        })
        .collect();
    assert_eq!(turn.calls, expected);
    assert_eq!(turn.calls[0].arguments, r#"{"key":"alpha"}"#);
    assert_eq!(turn.calls[5].arguments, r#"{"x":[1,2]}"#);
    // The server tool is the provider's own: echoed, never answered.
    assert!(turn.calls.iter().all(|c| c.name != "web_search"));
    assert_eq!(turn.stop, Stop::ToolCalls);
    assert_eq!(turn.text, "Let me look.");
    assert_eq!(turn.echo.len(), 1);
    assert_eq!(
        turn.echo[0].get(),
        format!(
            r#"{{"role":"assistant","content":{}}}"#,
            raw_at(&body, &[K("content")])
        )
    );
    assert_answer(Provider::Anthropic, &answer);
}

#[test]
fn chat_sdk_completion_is_read_and_echoed_byte_for_byte() {
    let [body, answer] = built(Provider::OpenAiChat);
    let turn = Provider::OpenAiChat.read_turn(&body, 0).unwrap();
    let message = raw_at(&body, &[K("choices"), I(0), K("message")]);
    let names = [
        "lookup",
        "lookup",
        "snapshot",
        "recording",
        "report",
        "fail",
        "nope",
    ];
    let expected: Vec<ModelCall> = names
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let id = format!("call_{}", i + 1);
            let arguments = json(raw_at(
                message,
                &[K("tool_calls"), I(i), K("function"), K("arguments")],
            ));
            call(&id, Some(&id), name, arguments.as_str().unwrap())
        })
        .collect();
    assert_eq!(turn.calls, expected);
    // The string's contents, as the model wrote them, not JSON.
    assert_eq!(turn.calls[1].arguments, r#"{"key": "beta""#);
    assert_eq!(turn.stop, Stop::ToolCalls);
    assert_eq!(turn.text, "Let me look.");
    // The echo is the response's message less `annotations` (a response
    // field), every other field's bytes as received.
    let echo: std::collections::BTreeMap<String, &serde_json::value::RawValue> =
        serde_json::from_str(turn.echo[0].get()).unwrap();
    let sent: std::collections::BTreeMap<String, &serde_json::value::RawValue> =
        serde_json::from_str(message).unwrap();
    assert!(sent.contains_key("annotations"));
    let kept: Vec<&String> = sent.keys().filter(|k| *k != "annotations").collect();
    assert_eq!(echo.keys().collect::<Vec<_>>(), kept);
    for (key, value) in &echo {
        assert_eq!(value.get(), sent[key].get(), "{key}");
    }
    assert_answer(Provider::OpenAiChat, &answer);
}

#[test]
fn responses_sdk_response_is_read_by_call_id_and_echoed_item_for_item() {
    let [body, answer] = built(Provider::OpenAiResponses);
    let turn = Provider::OpenAiResponses.read_turn(&body, 0).unwrap();
    let names = ["lookup", "snapshot", "recording", "report", "fail", "nope"];
    let expected: Vec<ModelCall> = names
        .iter()
        .enumerate()
        .map(|(i, name)| {
            // `call_id` pairs the output, never the item's `id` (fc_…).
            let id = format!("call_{}", i + 1);
            assert_eq!(
                json(raw_at(&body, &[K("output"), I(1 + i), K("id")])),
                format!("fc_{}", i + 1)
            );
            let arguments = json(raw_at(&body, &[K("output"), I(1 + i), K("arguments")]));
            call(&id, Some(&id), name, arguments.as_str().unwrap())
        })
        .collect();
    assert_eq!(turn.calls, expected);
    assert_eq!(turn.stop, Stop::ToolCalls);
    // Every output item, the reasoning item first, as received.
    let output = json(raw_at(&body, &[K("output")]));
    assert_eq!(turn.echo.len(), output.as_array().unwrap().len());
    for (i, item) in turn.echo.iter().enumerate() {
        assert_eq!(
            item.get(),
            raw_at(&body, &[K("output"), I(i)]),
            "output[{i}]"
        );
    }
    assert!(turn.echo[0].get().contains(r#""type":"reasoning""#));
    assert_answer(Provider::OpenAiResponses, &answer);
}

#[test]
fn gemini_sdk_response_is_read_with_and_without_ids_and_echoed_with_its_signature() {
    let [body, answer] = built(Provider::Gemini);
    let turn = Provider::Gemini.read_turn(&body, 3).unwrap();
    let parts = [K("candidates"), I(0), K("content"), K("parts")];
    // parts: a thought, then six calls; the third without id.
    let calls = [
        ("fc-1", Some("fc-1"), "lookup"),
        ("fc-2", Some("fc-2"), "snapshot"),
        ("gemini-3-2", None, "recording"),
        ("fc-4", Some("fc-4"), "report"),
        ("fc-5", Some("fc-5"), "fail"),
        ("fc-6", Some("fc-6"), "nope"),
    ];
    let expected: Vec<ModelCall> = calls
        .iter()
        .enumerate()
        .map(|(i, (id, wire, name))| {
            let mut path = parts.to_vec();
            path.extend([I(1 + i), K("functionCall"), K("args")]);
            call(id, *wire, name, raw_at(&body, &path))
        })
        .collect();
    assert_eq!(turn.calls, expected);
    assert_eq!(turn.stop, Stop::ToolCalls);
    // A thought is not the turn's text.
    assert_eq!(turn.text, "");
    assert_eq!(turn.echo.len(), 1);
    let content = raw_at(&body, &[K("candidates"), I(0), K("content")]);
    assert_eq!(turn.echo[0].get(), content);
    let mut signature = parts.to_vec();
    signature.extend([I(1), K("thoughtSignature")]);
    assert!(turn.echo[0].get().contains(raw_at(&body, &signature)));
    assert_answer(Provider::Gemini, &answer);
}

// ----------------------------------------------------------- results out

/// A loop over the SDK-built responses: two turns, every call answered.
fn run(provider: Provider) -> (Run, Vec<String>) {
    let model = Scripted::new(built(provider));
    let run = common::runtime()
        .block_on(Agent::new(&common::registry(), provider).run(&model, common::start(provider)))
        .unwrap_or_else(|e| panic!("{provider}: {e}"));
    assert_eq!(run.end(), &End::Answered);
    assert_eq!(run.turns(), 2);
    assert_eq!(run.text(), "alpha is 1; the disk is full.");
    assert_eq!(model.requests().len(), 2);
    let messages = run.messages().iter().map(|m| m.get().to_owned()).collect();
    (run, messages)
}

/// The code of each call's outcome, in order (`None` for a success).
fn codes(run: &Run) -> Vec<Option<String>> {
    run.calls()
        .iter()
        .map(|c| c.outcome.code().map(|c| c.as_str().to_owned()))
        .collect()
}

/// Every message of the conversation is one the SDK's request type takes,
/// and every wrong one is refused; at least one wrong message deep inside
/// passes a validation that does not walk it.
fn judged(provider: Provider, conversation: &[String], wrong: &[&str]) {
    let mut messages = conversation.to_vec();
    messages.extend(wrong.iter().map(|w| (*w).to_owned()));
    let verdicts = judge(provider, &messages);
    let (good, bad) = verdicts.split_at(conversation.len());
    for (message, verdict) in conversation.iter().zip(good) {
        assert!(
            verdict.ok,
            "{provider}: the SDK refuses a message toolprism sent: {}\n{message}",
            verdict.error
        );
    }
    for (message, verdict) in wrong.iter().zip(bad) {
        assert!(
            !verdict.ok,
            "{provider}: the judge took a wrong message: {message}"
        );
        eprintln!("{provider}: refused as it should: {}", verdict.error);
    }
    if provider != Provider::Gemini {
        assert!(
            bad.iter().any(|v| v.shallow_ok),
            "{provider}: no wrong message shows that the walk is needed: {bad:?}"
        );
    }
}

#[test]
fn anthropic_conversation_passes_the_sdk() {
    let p = Provider::Anthropic;
    let (run, messages) = run(p);
    assert_eq!(
        codes(&run),
        [
            None,
            None,
            None,
            None,
            Some("DISK_FULL".into()),
            Some("UNKNOWN_TOOL".into())
        ]
    );
    // user, assistant (echo), user (every tool_result), assistant (echo).
    assert_eq!(messages.len(), 4);
    let results = json(&messages[2]);
    assert_eq!(results["role"], "user");
    let blocks = results["content"].as_array().unwrap();
    let ids: Vec<&str> = blocks
        .iter()
        .map(|b| b["tool_use_id"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        [
            "toolu_01", "toolu_02", "toolu_03", "toolu_04", "toolu_05", "toolu_06"
        ]
    );
    assert!(blocks.iter().all(|b| b["type"] == "tool_result"));
    assert_eq!(
        blocks[0]["content"],
        json!([{"type": "text", "text": "alpha = 1"}])
    );
    assert_eq!(blocks[1]["content"][1]["type"], "image");
    assert_eq!(blocks[1]["content"][1]["source"]["data"], TINY_PNG);
    let audio = blocks[2]["content"][0]["text"].as_str().unwrap();
    assert!(
        audio.contains("audio") && audio.contains("left out"),
        "{audio}"
    );
    assert_eq!(blocks[3]["content"][1]["type"], "document");
    assert_eq!(blocks[3]["content"][1]["source"]["data"], TINY_PDF);
    assert_eq!(blocks[4]["is_error"], true);
    assert!(
        blocks[4]["content"][0]["text"]
            .as_str()
            .unwrap()
            .starts_with("Error [DISK_FULL]: the disk is full")
    );
    assert_eq!(blocks[5]["is_error"], true);
    assert!(
        blocks[5]["content"][0]["text"]
            .as_str()
            .unwrap()
            .starts_with("Error [UNKNOWN_TOOL]")
    );
    assert!(blocks[..4].iter().all(|b| b.get("is_error").is_none()));
    judged(
        p,
        &messages,
        &[
            r#"{"role":"user","content":[{"type":"tool_result","tool_use_id":5,"content":"x"}]}"#,
            r#"{"role":"user","content":[{"type":"tool_reslt","tool_use_id":"toolu_01","content":"x"}]}"#,
            r#"{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_01","content":[{"type":"text","text":5}]}]}"#,
            r#"{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_01","is_eror":true}]}"#,
            r#"{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_01","content":[{"type":"image","source":{"type":"base64","media_type":"image/bmp","data":"AA=="}}]}]}"#,
            r#"{"role":"tool","content":"x"}"#,
            // A response model of the SDK's takes any field; the request type does not.
            r#"{"role":"assistant","content":[{"type":"tool_use","id":"toolu_01","name":"lookup","input":{},"caller_id":1}]}"#,
            r#"{"role":"assistant","content":[{"type":"thinking","thinking":"x","signature":5}]}"#,
        ],
    );
}

#[test]
fn chat_conversation_passes_the_sdk() {
    let p = Provider::OpenAiChat;
    let (run, messages) = run(p);
    assert_eq!(
        codes(&run),
        [
            None,
            Some("INVALID_ARGS".into()),
            None,
            None,
            None,
            Some("DISK_FULL".into()),
            Some("UNKNOWN_TOOL".into())
        ]
    );
    // user, assistant, seven tool messages, a user message with the image, assistant.
    assert_eq!(messages.len(), 11);
    let tools: Vec<Value> = messages[2..9].iter().map(|m| json(m)).collect();
    for (i, t) in tools.iter().enumerate() {
        assert_eq!(t["role"], "tool");
        assert_eq!(t["tool_call_id"], format!("call_{}", i + 1));
    }
    let text = |i: usize| tools[i]["content"].as_str().unwrap().to_owned();
    assert_eq!(text(0), "alpha = 1");
    assert!(text(1).starts_with("Error [INVALID_ARGS]"), "{}", text(1));
    assert!(
        text(2).contains("one picture") && text(2).contains("next user message"),
        "{}",
        text(2)
    );
    assert!(
        text(3).contains("audio") && text(3).contains("left out"),
        "{}",
        text(3)
    );
    assert!(
        text(4).contains("report.pdf") && text(4).contains("left out"),
        "{}",
        text(4)
    );
    assert!(
        text(5).starts_with("Error [DISK_FULL]: the disk is full"),
        "{}",
        text(5)
    );
    assert!(text(6).starts_with("Error [UNKNOWN_TOOL]"), "{}", text(6));
    let images = json(&messages[9]);
    assert_eq!(images["role"], "user");
    assert_eq!(
        images["content"][1]["image_url"]["url"],
        format!("data:image/png;base64,{TINY_PNG}")
    );
    judged(
        p,
        &messages,
        &[
            r#"{"role":"tool","tool_call_id":5,"content":"x"}"#,
            r#"{"role":"tool","tool_call_id":"call_1","content":[{"type":"txt","text":"x"}]}"#,
            r#"{"role":"user","content":[{"type":"image_url","image_url":{"url":5}}]}"#,
            r#"{"role":"assistant","tool_calls":[{"id":"call_1","type":"function","function":{"name":"lookup","arguments":{"key":"alpha"}}}]}"#,
            r#"{"role":"tool","tool_call_id":"call_1","content":"x","is_error":true}"#,
        ],
    );
}

#[test]
fn responses_conversation_passes_the_sdk() {
    let p = Provider::OpenAiResponses;
    let (run, messages) = run(p);
    assert_eq!(
        codes(&run),
        [
            None,
            None,
            None,
            None,
            Some("DISK_FULL".into()),
            Some("UNKNOWN_TOOL".into())
        ]
    );
    // user, reasoning, six function_calls, six outputs, the answer's message.
    assert_eq!(messages.len(), 15);
    let outputs: Vec<Value> = messages[8..14].iter().map(|m| json(m)).collect();
    for (i, o) in outputs.iter().enumerate() {
        assert_eq!(o["type"], "function_call_output");
        assert_eq!(o["call_id"], format!("call_{}", i + 1));
    }
    assert_eq!(outputs[0]["output"], "alpha = 1");
    assert_eq!(outputs[1]["output"][1]["type"], "input_image");
    assert_eq!(
        outputs[1]["output"][1]["image_url"],
        format!("data:image/png;base64,{TINY_PNG}")
    );
    let audio = outputs[2]["output"].as_str().unwrap();
    assert!(
        audio.contains("audio") && audio.contains("left out"),
        "{audio}"
    );
    assert_eq!(outputs[3]["output"][1]["type"], "input_file");
    assert_eq!(outputs[3]["output"][1]["filename"], "report.pdf");
    assert!(
        outputs[4]["output"]
            .as_str()
            .unwrap()
            .starts_with("Error [DISK_FULL]: the disk is full")
    );
    assert!(
        outputs[5]["output"]
            .as_str()
            .unwrap()
            .starts_with("Error [UNKNOWN_TOOL]")
    );
    judged(
        p,
        &messages,
        &[
            r#"{"type":"function_call_output","call_id":5,"output":"x"}"#,
            r#"{"type":"function_call_output","call_id":"call_1","output":[{"type":"input_imag","image_url":"data:image/png;base64,AA=="}]}"#,
            r#"{"type":"function_call_output","call_id":"call_1","output":[{"type":"input_text","text":5}]}"#,
            r#"{"type":"function_call","call_id":"call_1","name":"lookup","arguments":{"key":"alpha"}}"#,
            r#"{"type":"function_call_output","call_id":"call_1","output":"x","is_error":true}"#,
            r#"{"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":5}]}"#,
        ],
    );
}

#[test]
fn gemini_conversation_passes_the_sdk() {
    let p = Provider::Gemini;
    let (run, messages) = run(p);
    assert_eq!(
        codes(&run),
        [
            None,
            None,
            None,
            None,
            Some("DISK_FULL".into()),
            Some("UNKNOWN_TOOL".into())
        ]
    );
    // user, model (echo), user (every functionResponse), model.
    assert_eq!(messages.len(), 4);
    let results = json(&messages[2]);
    assert_eq!(results["role"], "user");
    let parts: Vec<&Value> = results["parts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| &p["functionResponse"])
        .collect();
    assert_eq!(parts.len(), 6);
    let ids: Vec<Option<&str>> = parts.iter().map(|f| f["id"].as_str()).collect();
    assert_eq!(
        ids,
        [
            Some("fc-1"),
            Some("fc-2"),
            None,
            Some("fc-4"),
            Some("fc-5"),
            Some("fc-6")
        ]
    );
    let names: Vec<&str> = parts.iter().map(|f| f["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        ["lookup", "snapshot", "recording", "report", "fail", "nope"]
    );
    assert_eq!(parts[0]["response"], json!({"output": "alpha = 1"}));
    assert_eq!(parts[1]["parts"][0]["inlineData"]["mimeType"], "image/png");
    let audio = parts[2]["response"]["output"].as_str().unwrap();
    assert!(
        audio.contains("audio") && audio.contains("left out"),
        "{audio}"
    );
    assert_eq!(
        parts[3]["parts"][0]["inlineData"],
        json!({"mimeType": "application/pdf", "data": TINY_PDF})
    );
    assert_eq!(parts[4]["response"]["error"]["code"], "DISK_FULL");
    assert!(
        parts[4]["response"]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("the disk is full")
    );
    assert_eq!(parts[5]["response"]["error"]["code"], "UNKNOWN_TOOL");
    judged(
        p,
        &messages,
        &[
            r#"{"role":"user","parts":[{"functionResponse":{"name":"lookup","respnse":{"output":"x"}}}]}"#,
            r#"{"role":"model","parts":[{"functionCall":{"name":"lookup","args":{}},"thoughtSignature":"not base64 !"}]}"#,
            r#"{"role":"user","parts":[{"functionResponse":{"name":"snapshot","response":{},"parts":[{"inlineData":{"mimeType":"image/png","data":"%%%"}}]}}]}"#,
            r#"{"role":"user","parts":[{"functionResponse":{"name":"lookup","response":"x"}}]}"#,
        ],
    );
}
