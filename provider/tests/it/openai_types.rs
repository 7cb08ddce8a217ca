//! OpenAI's request and response types in Rust (`async-openai`, types
//! only) as a second judge of the two OpenAI wire formats:
//!
//! - every message a loop writes for Chat deserializes as a
//!   `ChatCompletionRequestMessage`, and every input item for Responses as
//!   an `InputItem`, each of the right kind, and serializes back to the
//!   JSON that keeps every field (serde ignores unknown fields: the round
//!   trip is what shows that none was written);
//! - the calls `read_turn` reads from a `CreateChatCompletionResponse` and
//!   a Responses `Response` that async-openai serialized are the ones those
//!   values hold.

use async_openai::types::chat::{
    ChatCompletionMessageToolCalls, ChatCompletionRequestMessage, CreateChatCompletionResponse,
};
use async_openai::types::responses::{InputItem, Item, OutputItem, Response};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use toolprism::provider::{Agent, End, Provider, Run, Stop};

use crate::common::{self, Scripted, json};

/// Whether every field of `sent` is in `back` with the same value (`back`
/// may have more: the defaults a type writes, e.g. an easy message's
/// `"type": "message"`).
fn kept(sent: &Value, back: &Value) -> bool {
    match (sent, back) {
        (Value::Object(s), Value::Object(b)) => {
            s.iter().all(|(k, v)| b.get(k).is_some_and(|w| kept(v, w)))
        }
        (Value::Array(s), Value::Array(b)) => {
            s.len() == b.len() && s.iter().zip(b).all(|(v, w)| kept(v, w))
        }
        _ => sent == back,
    }
}

/// `text` as a `T`, which serializes back to JSON that keeps every field
/// of it.
#[track_caller]
fn typed<T: DeserializeOwned + Serialize>(text: &str) -> T {
    let name = std::any::type_name::<T>();
    let value: T = serde_json::from_str(text)
        .unwrap_or_else(|e| panic!("async-openai refuses it as {name}: {e}\n{text}"));
    let back = serde_json::to_value(&value).unwrap();
    assert!(
        kept(&json(text), &back),
        "the round trip through {name} lost or changed a field:\nsent: {text}\nback: {back}"
    );
    value
}

/// A Chat completion calling `calls`, as async-openai serializes it.
fn chat_response(
    calls: &[(&str, &str, &str)],
    finish: &str,
) -> (CreateChatCompletionResponse, String) {
    let tool_calls: Vec<Value> = calls
        .iter()
        .map(|(id, name, arguments)| {
            serde_json::json!({"id": id, "type": "function", "function": {"name": name, "arguments": arguments}})
        })
        .collect();
    let mut message = serde_json::json!({"role": "assistant", "content": "Let me look."});
    if !tool_calls.is_empty() {
        message["tool_calls"] = tool_calls.into();
    }
    let template = serde_json::json!({
        "id": "chatcmpl-1", "object": "chat.completion", "created": 1767225600, "model": "gpt-6.1-sol",
        "choices": [{"index": 0, "finish_reason": finish, "message": message}],
        "usage": {"prompt_tokens": 412, "completion_tokens": 96, "total_tokens": 508}
    });
    let response: CreateChatCompletionResponse = serde_json::from_value(template).unwrap();
    let body = serde_json::to_string(&response).unwrap();
    (response, body)
}

/// A Responses response with a reasoning item then `calls`, as
/// async-openai serializes it.
fn responses_response(calls: &[(&str, &str, &str)]) -> (Response, String) {
    let mut output = vec![serde_json::json!({
        "type": "reasoning", "id": "rs_1", "encrypted_content": "gAAAAABpQ1x2",
        "summary": [{"type": "summary_text", "text": "Look the key up."}]
    })];
    output.extend(calls.iter().enumerate().map(|(i, (id, name, arguments))| {
        serde_json::json!({"type": "function_call", "id": format!("fc_{i}"), "call_id": id,
            "name": name, "arguments": arguments, "status": "completed"})
    }));
    if calls.is_empty() {
        output = vec![serde_json::json!({
            "type": "message", "id": "msg_2", "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": "done", "annotations": []}]
        })];
    }
    let template = serde_json::json!({
        "id": "resp_1", "object": "response", "created_at": 1767225600, "model": "gpt-6.1-sol",
        "status": "completed", "output": output
    });
    let response: Response = serde_json::from_value(template).unwrap();
    let body = serde_json::to_string(&response).unwrap();
    (response, body)
}

const CALLS: &[(&str, &str, &str)] = &[
    ("call_1", "lookup", r#"{"key":"alpha"}"#),
    ("call_2", "lookup", r#"{"key": "beta""#),
    ("call_3", "snapshot", "{}"),
    ("call_4", "recording", "{}"),
    ("call_5", "report", r#"{"pages": 1}"#),
    ("call_6", "fail", "{}"),
    ("call_7", "nope", r#"{"x": [1, 2]}"#),
];

#[test]
fn calls_read_from_an_async_openai_chat_completion_are_the_ones_it_holds() {
    let (response, body) = chat_response(CALLS, "tool_calls");
    let turn = Provider::OpenAiChat.read_turn(&body, 0).unwrap();
    let held: Vec<(String, String, String)> = response.choices[0]
        .message
        .tool_calls
        .iter()
        .flatten()
        .map(|c| match c {
            ChatCompletionMessageToolCalls::Function(f) => (
                f.id.clone(),
                f.function.name.clone(),
                f.function.arguments.clone(),
            ),
            other => panic!("not a function call: {other:?}"),
        })
        .collect();
    let read: Vec<(String, String, String)> = turn
        .calls
        .iter()
        .map(|c| (c.id.clone(), c.name.clone(), c.arguments.clone()))
        .collect();
    assert_eq!(read, held);
    assert_eq!(read.len(), CALLS.len());
    assert!(
        turn.calls
            .iter()
            .all(|c| c.wire_id.as_deref() == Some(&c.id))
    );
    assert_eq!(turn.stop, Stop::ToolCalls);
    assert_eq!(turn.text, "Let me look.");
    // The echo is a request message async-openai takes, and names the same calls.
    let echo: ChatCompletionRequestMessage = typed(turn.echo[0].get());
    let ChatCompletionRequestMessage::Assistant(assistant) = echo else {
        panic!("the echo is not an assistant message: {echo:?}");
    };
    assert_eq!(assistant.tool_calls, response.choices[0].message.tool_calls);
}

#[test]
fn calls_read_from_an_async_openai_response_are_the_ones_it_holds() {
    let calls = &CALLS[..6];
    let (response, body) = responses_response(calls);
    let turn = Provider::OpenAiResponses.read_turn(&body, 0).unwrap();
    let held: Vec<(String, String, String)> = response
        .output
        .iter()
        .filter_map(|item| match item {
            OutputItem::FunctionCall(f) => {
                Some((f.call_id.clone(), f.name.clone(), f.arguments.clone()))
            }
            _ => None,
        })
        .collect();
    let read: Vec<(String, String, String)> = turn
        .calls
        .iter()
        .map(|c| (c.id.clone(), c.name.clone(), c.arguments.clone()))
        .collect();
    assert_eq!(read, held);
    assert_eq!(read.len(), calls.len());
    // Every output item is echoed, and each is an input item async-openai takes.
    assert_eq!(turn.echo.len(), response.output.len());
    for item in &turn.echo {
        typed::<InputItem>(item.get());
    }
}

/// A loop over async-openai's own responses with the common tools.
fn run(provider: Provider) -> Run {
    let bodies = match provider {
        Provider::OpenAiChat => [
            chat_response(CALLS, "tool_calls").1,
            chat_response(&[], "stop").1,
        ],
        _ => [responses_response(&CALLS[..6]).1, responses_response(&[]).1],
    };
    let model = Scripted::new(bodies);
    let run = common::runtime()
        .block_on(Agent::new(&common::registry(), provider).run(&model, common::start(provider)))
        .unwrap();
    assert_eq!(run.end(), &End::Answered);
    assert_eq!(run.turns(), 2);
    run
}

#[test]
fn every_chat_message_a_loop_writes_is_a_chat_completion_request_message() {
    let run = run(Provider::OpenAiChat);
    let messages: Vec<ChatCompletionRequestMessage> =
        run.messages().iter().map(|m| typed(m.get())).collect();
    // user, assistant, seven tool messages, the user message with the image, assistant.
    assert_eq!(messages.len(), 11);
    assert!(matches!(messages[0], ChatCompletionRequestMessage::User(_)));
    assert!(matches!(
        messages[1],
        ChatCompletionRequestMessage::Assistant(_)
    ));
    for (i, m) in messages[2..9].iter().enumerate() {
        let ChatCompletionRequestMessage::Tool(tool) = m else {
            panic!("message {} is not a tool message: {m:?}", i + 2);
        };
        assert_eq!(tool.tool_call_id, CALLS[i].0);
    }
    let ChatCompletionRequestMessage::User(images) = &messages[9] else {
        panic!("the images are not in a user message: {:?}", messages[9]);
    };
    let content = serde_json::to_value(&images.content).unwrap();
    assert_eq!(content[1]["type"], "image_url");
    assert!(matches!(
        messages[10],
        ChatCompletionRequestMessage::Assistant(_)
    ));
}

#[test]
fn every_responses_item_a_loop_writes_is_an_input_item() {
    let run = run(Provider::OpenAiResponses);
    let items: Vec<InputItem> = run.messages().iter().map(|m| typed(m.get())).collect();
    // user, reasoning, six calls, six outputs, the answer.
    assert_eq!(items.len(), 15);
    assert!(matches!(items[1], InputItem::Item(Item::Reasoning(_))));
    for (i, item) in items[2..8].iter().enumerate() {
        let InputItem::Item(Item::FunctionCall(call)) = item else {
            panic!("item {} is not a function_call: {item:?}", i + 2);
        };
        assert_eq!(call.call_id, CALLS[i].0);
    }
    for (i, item) in items[8..14].iter().enumerate() {
        let InputItem::Item(Item::FunctionCallOutput(output)) = item else {
            panic!("item {} is not a function_call_output: {item:?}", i + 8);
        };
        assert_eq!(output.call_id.as_deref(), Some(CALLS[i].0));
    }
    // The image and the PDF went in as content parts async-openai knows.
    let snapshot = serde_json::to_value(&items[10]).unwrap();
    assert_eq!(snapshot["output"][1]["type"], "input_image");
    let report = serde_json::to_value(&items[12]).unwrap();
    assert_eq!(report["output"][1]["type"], "input_file");
}

#[test]
fn the_rust_judge_refuses_wrong_messages() {
    // A wrong type is refused outright.
    for wrong in [
        r#"{"role":"tool","tool_call_id":5,"content":"x"}"#,
        r#"{"role":"tool","content":"x"}"#,
        r#"{"role":"assistant","tool_calls":[{"id":"call_1","type":"function","function":{"name":"f","arguments":{"a":1}}}]}"#,
    ] {
        assert!(
            serde_json::from_str::<ChatCompletionRequestMessage>(wrong).is_err(),
            "{wrong}"
        );
    }
    assert!(
        serde_json::from_str::<InputItem>(
            r#"{"type":"function_call_output","call_id":"call_1","output":5}"#
        )
        .is_err()
    );
    // A field the type does not know is dropped by serde: the round trip
    // shows it.
    for (wrong, chat) in [
        (
            r#"{"role":"tool","tool_call_id":"call_1","content":"x","is_error":true}"#,
            true,
        ),
        (
            r#"{"type":"function_call_output","call_id":"call_1","output":"x","is_error":true}"#,
            false,
        ),
    ] {
        let back = if chat {
            serde_json::to_value(
                serde_json::from_str::<ChatCompletionRequestMessage>(wrong).unwrap(),
            )
        } else {
            serde_json::to_value(serde_json::from_str::<InputItem>(wrong).unwrap())
        }
        .unwrap();
        assert!(!kept(&json(wrong), &back), "{wrong} came back as {back}");
    }
}
