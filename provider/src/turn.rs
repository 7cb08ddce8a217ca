//! Calls in: one model response, as received, read into the tool calls it
//! makes and the assistant turn to echo back.
//!
//! The arguments of each call are kept as the exact text the model sent
//! (an object's bytes for Anthropic and Gemini, the JSON string's contents
//! for OpenAI), so the registry reads them with the same lossless rules as
//! every other transport: a key written twice, `-0`, nesting deeper than
//! [`MAX_DEPTH`](toolprism_core::MAX_DEPTH) or arguments that are not JSON
//! at all are an `INVALID_ARGS` result for that one call, and the turn
//! goes on. The assistant turn is echoed verbatim, byte for byte
//! (Anthropic's thinking and server-tool blocks, Responses' reasoning
//! items, Gemini's thought signatures), never rebuilt.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::wire::Provider;

/// One tool call a model made.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ModelCall {
    /// The id the registry and the session log know the call by: the
    /// model's, or (Gemini without one) `gemini-<turn>-<index>`.
    pub id: String,
    /// The id to answer with: `None` where the model sent none (Gemini
    /// matches such a response by name and order).
    pub wire_id: Option<String>,
    /// The tool's name.
    pub name: String,
    /// The arguments as the model sent them: a JSON object's text, or
    /// whatever text an OpenAI model put in its `arguments` string.
    pub arguments: String,
}

impl ModelCall {
    /// A call with the model's own id.
    pub fn new(
        id: impl Into<String>,
        name: impl Into<String>,
        arguments: impl Into<String>,
    ) -> Self {
        let id = id.into();
        ModelCall {
            wire_id: Some(id.clone()),
            id,
            name: name.into(),
            arguments: arguments.into(),
        }
    }
}

/// Why a model's turn ended, as its response says.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stop {
    /// It called tools: answer them and ask again.
    ToolCalls,
    /// It answered (`end_turn`, `stop`, `STOP`, `completed`).
    Answered,
    /// Anthropic's `pause_turn`: a server tool's long turn, to resend as
    /// it stands.
    Paused,
    /// The output limit cut the turn short.
    MaxTokens,
    /// The model refused, or the provider blocked the response.
    Refused(String),
    /// Anything else, as the provider spells it.
    Other(String),
}

/// One model response, read.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Turn {
    /// The messages (or Responses items) to append to the conversation
    /// before the results: the assistant turn, verbatim.
    pub echo: Vec<Box<RawValue>>,
    /// The tool calls, in the order the model made them.
    pub calls: Vec<ModelCall>,
    /// Why the turn ended.
    pub stop: Stop,
    /// The turn's text (text blocks, output text or text parts), joined.
    pub text: String,
}

/// A response that is not one of the provider's: the loop cannot go on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnError {
    provider: Provider,
    message: String,
}

impl TurnError {
    fn new(provider: Provider, message: impl Into<String>) -> Self {
        TurnError {
            provider,
            message: message.into(),
        }
    }

    /// The provider whose shape was expected.
    pub fn provider(&self) -> Provider {
        self.provider
    }
}

impl fmt::Display for TurnError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the response is not an {} response: {}",
            self.provider, self.message
        )
    }
}

impl std::error::Error for TurnError {}

/// The most of a response a reader quotes in an error.
const QUOTE: usize = 200;

fn quote(text: &str) -> String {
    let mut end = text.len().min(QUOTE);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let more = if end < text.len() { "…" } else { "" };
    format!("{}{more}", &text[..end])
}

impl Provider {
    /// Reads one response body, as received, into its calls and the turn
    /// to echo. `turn` numbers the synthetic ids of Gemini calls that came
    /// without one.
    ///
    /// ```
    /// use toolprism::provider::{Provider, Stop};
    /// let body = r#"{"id":"msg_1","type":"message","role":"assistant","model":"claude","stop_reason":"tool_use",
    ///   "content":[{"type":"text","text":"Let me look."},
    ///              {"type":"tool_use","id":"toolu_1","name":"read","input":{"path":"a.txt"}}]}"#;
    /// let turn = Provider::Anthropic.read_turn(body, 0).unwrap();
    /// assert_eq!(turn.stop, Stop::ToolCalls);
    /// assert_eq!(turn.calls[0].name, "read");
    /// assert_eq!(turn.calls[0].arguments, r#"{"path":"a.txt"}"#);
    /// assert_eq!(turn.text, "Let me look.");
    /// assert!(turn.echo[0].get().contains(r#""role":"assistant""#));
    /// ```
    pub fn read_turn(self, response: &str, turn: usize) -> Result<Turn, TurnError> {
        match self {
            Provider::Anthropic => anthropic(response),
            Provider::OpenAiChat => chat(response),
            Provider::OpenAiResponses => responses(response),
            Provider::Gemini => gemini(response, turn),
        }
        .map_err(|message| TurnError::new(self, message))
    }
}

fn parse<'a, T: Deserialize<'a>>(text: &'a str, what: &str) -> Result<T, String> {
    serde_json::from_str(text)
        .map_err(|e| format!("{what}: {} (in {})", quote(&e.to_string()), quote(text)))
}

fn raw(text: String) -> Box<RawValue> {
    // Only called on text this module assembled from valid JSON pieces.
    RawValue::from_string(text).expect("assembled JSON is valid")
}

fn string_of(raw: &RawValue) -> Result<String, String> {
    serde_json::from_str::<String>(raw.get()).map_err(|e| format!("a string: {e}"))
}

// ---------------------------------------------------------------- Anthropic

#[derive(Deserialize)]
struct AnthropicResponse<'a> {
    #[serde(borrow)]
    content: Option<&'a RawValue>,
    stop_reason: Option<String>,
    #[serde(rename = "type")]
    kind: Option<String>,
    #[serde(borrow)]
    error: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct AnthropicBlock<'a> {
    #[serde(rename = "type")]
    kind: Cow<'a, str>,
    id: Option<String>,
    name: Option<String>,
    #[serde(borrow)]
    input: Option<&'a RawValue>,
    text: Option<String>,
}

fn anthropic(response: &str) -> Result<Turn, String> {
    let r: AnthropicResponse = parse(response, "not a Messages response")?;
    if r.kind.as_deref() == Some("error") {
        let error = r.error.map_or("", |e| e.get());
        return Err(format!("the API returned an error: {}", quote(error)));
    }
    let content = r.content.ok_or("it has no `content`")?;
    let blocks: Vec<&RawValue> = parse(content.get(), "`content` is not an array")?;
    let mut calls = Vec::new();
    let mut text = String::new();
    for (i, block) in blocks.iter().enumerate() {
        let b: AnthropicBlock = parse(block.get(), &format!("content[{i}] is not a block"))?;
        match &*b.kind {
            "tool_use" => {
                let id =
                    b.id.ok_or(format!("content[{i}]: a tool_use without `id`"))?;
                let name = b
                    .name
                    .ok_or(format!("content[{i}]: a tool_use without `name`"))?;
                let input = b.input.map_or("{}", |r| r.get());
                calls.push(ModelCall::new(id, name, input));
            }
            "text" => text.push_str(b.text.as_deref().unwrap_or("")),
            // Server tools (`server_tool_use` and their results), thinking
            // and anything newer: echoed, never answered.
            _ => {}
        }
    }
    let stop = match r.stop_reason.as_deref() {
        Some("tool_use") => Stop::ToolCalls,
        Some("end_turn" | "stop_sequence") | None => Stop::Answered,
        Some("pause_turn") => Stop::Paused,
        Some("max_tokens" | "model_context_window_exceeded") => Stop::MaxTokens,
        Some("refusal") => Stop::Refused("refusal".into()),
        Some(other) => Stop::Other(other.into()),
    };
    let echo = raw(format!(
        r#"{{"role":"assistant","content":{}}}"#,
        content.get()
    ));
    Ok(Turn {
        echo: vec![echo],
        stop: if calls.is_empty() || stop == Stop::Paused {
            stop
        } else {
            Stop::ToolCalls
        },
        calls,
        text,
    })
}

// -------------------------------------------------------------- OpenAI Chat

#[derive(Deserialize)]
struct ChatResponse<'a> {
    #[serde(borrow)]
    choices: Option<Vec<ChatChoice<'a>>>,
    #[serde(borrow)]
    error: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct ChatChoice<'a> {
    #[serde(borrow)]
    message: Option<&'a RawValue>,
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct ChatMessage<'a> {
    #[serde(borrow)]
    content: Option<&'a RawValue>,
    #[serde(borrow)]
    tool_calls: Option<Vec<&'a RawValue>>,
    refusal: Option<String>,
}

#[derive(Deserialize)]
struct ChatToolCall<'a> {
    id: String,
    #[serde(rename = "type")]
    kind: Option<Cow<'a, str>>,
    #[serde(borrow)]
    function: Option<ChatFunction<'a>>,
    #[serde(borrow)]
    custom: Option<ChatFunction<'a>>,
}

#[derive(Deserialize)]
struct ChatFunction<'a> {
    name: String,
    #[serde(borrow)]
    arguments: Option<&'a RawValue>,
    #[serde(borrow)]
    input: Option<&'a RawValue>,
}

/// Fields of a response's message that a request's assistant message does
/// not take.
const CHAT_RESPONSE_ONLY: [&str; 1] = ["annotations"];

fn chat(response: &str) -> Result<Turn, String> {
    let r: ChatResponse = parse(response, "not a Chat Completions response")?;
    if let Some(error) = r.error {
        return Err(format!("the API returned an error: {}", quote(error.get())));
    }
    let choice = r
        .choices
        .and_then(|c| c.into_iter().next())
        .ok_or("it has no `choices`")?;
    let message = choice.message.ok_or("choices[0] has no `message`")?;
    let m: ChatMessage = parse(message.get(), "choices[0].message is not a message")?;
    let mut calls = Vec::new();
    for (i, call) in m.tool_calls.iter().flatten().enumerate() {
        let c: ChatToolCall = parse(call.get(), &format!("tool_calls[{i}] is not a tool call"))?;
        let function = match c.kind.as_deref() {
            Some("custom") => c.custom,
            _ => c.function,
        }
        .ok_or(format!("tool_calls[{i}] has no `function`"))?;
        let arguments = match function.arguments.or(function.input) {
            Some(raw) => {
                string_of(raw).map_err(|e| format!("tool_calls[{i}].function.arguments: {e}"))?
            }
            None => String::new(),
        };
        calls.push(ModelCall::new(c.id, function.name, arguments));
    }
    let text = match m.content {
        Some(c) if c.get() != "null" => serde_json::from_str::<String>(c.get()).unwrap_or_default(),
        _ => String::new(),
    };
    // The assistant message, as sent, less what only a response has and
    // the fields it sent as null.
    let fields: BTreeMap<String, &RawValue> =
        parse(message.get(), "choices[0].message is not an object")?;
    let kept: Vec<String> = fields
        .iter()
        .filter(|(k, v)| !CHAT_RESPONSE_ONLY.contains(&k.as_str()) && v.get() != "null")
        .map(|(k, v)| format!("{}:{}", serde_json::Value::String(k.clone()), v.get()))
        .collect();
    let echo = raw(format!("{{{}}}", kept.join(",")));
    let stop = if !calls.is_empty() {
        Stop::ToolCalls
    } else {
        match choice.finish_reason.as_deref() {
            Some("stop") | None => Stop::Answered,
            Some("length") => Stop::MaxTokens,
            Some("content_filter") => Stop::Refused("content_filter".into()),
            Some(other) => Stop::Other(other.into()),
        }
    };
    let stop = match (stop, m.refusal) {
        (Stop::Answered, Some(refusal)) => Stop::Refused(refusal),
        (stop, _) => stop,
    };
    Ok(Turn {
        echo: vec![echo],
        calls,
        stop,
        text,
    })
}

// --------------------------------------------------------- OpenAI Responses

#[derive(Deserialize)]
struct ResponsesResponse<'a> {
    #[serde(borrow)]
    output: Option<Vec<&'a RawValue>>,
    status: Option<String>,
    #[serde(borrow)]
    error: Option<&'a RawValue>,
    #[serde(borrow)]
    incomplete_details: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct ResponsesItem<'a> {
    #[serde(rename = "type")]
    kind: Cow<'a, str>,
    call_id: Option<String>,
    name: Option<String>,
    #[serde(borrow)]
    arguments: Option<&'a RawValue>,
    #[serde(borrow)]
    content: Option<Vec<ResponsesPart<'a>>>,
}

#[derive(Deserialize)]
struct ResponsesPart<'a> {
    #[serde(rename = "type")]
    kind: Cow<'a, str>,
    text: Option<String>,
    refusal: Option<String>,
}

fn responses(response: &str) -> Result<Turn, String> {
    let r: ResponsesResponse = parse(response, "not a Responses response")?;
    if let Some(error) = r.error.filter(|e| e.get() != "null") {
        return Err(format!("the API returned an error: {}", quote(error.get())));
    }
    let output = r.output.ok_or("it has no `output`")?;
    let mut calls = Vec::new();
    let mut text = String::new();
    let mut refusal = None;
    for (i, item) in output.iter().enumerate() {
        let it: ResponsesItem = parse(item.get(), &format!("output[{i}] is not an item"))?;
        match &*it.kind {
            "function_call" => {
                // `call_id` pairs the output, never the item's own `id`.
                let id = it
                    .call_id
                    .ok_or(format!("output[{i}]: a function_call without `call_id`"))?;
                let name = it
                    .name
                    .ok_or(format!("output[{i}]: a function_call without `name`"))?;
                let arguments = match it.arguments {
                    Some(raw) => {
                        string_of(raw).map_err(|e| format!("output[{i}].arguments: {e}"))?
                    }
                    None => String::new(),
                };
                calls.push(ModelCall::new(id, name, arguments));
            }
            "message" => {
                for part in it.content.iter().flatten() {
                    match &*part.kind {
                        "output_text" => text.push_str(part.text.as_deref().unwrap_or("")),
                        "refusal" => refusal = part.refusal.clone(),
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
    let stop = if !calls.is_empty() {
        Stop::ToolCalls
    } else if let Some(refusal) = refusal {
        Stop::Refused(refusal)
    } else {
        match r.status.as_deref() {
            Some("completed") | None => Stop::Answered,
            Some("incomplete") => {
                let why = r.incomplete_details.map_or("", |d| d.get());
                if why.contains("max_output_tokens") {
                    Stop::MaxTokens
                } else {
                    Stop::Other(format!("incomplete {why}"))
                }
            }
            Some(other) => Stop::Other(other.into()),
        }
    };
    Ok(Turn {
        echo: output
            .into_iter()
            .map(|item| raw(item.get().to_owned()))
            .collect(),
        calls,
        stop,
        text,
    })
}

// ------------------------------------------------------------------- Gemini

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct GeminiResponse<'a> {
    #[serde(borrow)]
    candidates: Option<Vec<GeminiCandidate<'a>>>,
    #[serde(borrow)]
    prompt_feedback: Option<&'a RawValue>,
    #[serde(borrow)]
    error: Option<&'a RawValue>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct GeminiCandidate<'a> {
    #[serde(borrow)]
    content: Option<&'a RawValue>,
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct GeminiContent<'a> {
    #[serde(borrow)]
    parts: Option<Vec<GeminiPart<'a>>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct GeminiPart<'a> {
    text: Option<String>,
    thought: Option<bool>,
    #[serde(borrow)]
    function_call: Option<GeminiCall<'a>>,
}

#[derive(Deserialize)]
struct GeminiCall<'a> {
    id: Option<String>,
    name: String,
    #[serde(borrow)]
    args: Option<&'a RawValue>,
}

fn gemini(response: &str, turn: usize) -> Result<Turn, String> {
    let r: GeminiResponse = parse(response, "not a generateContent response")?;
    if let Some(error) = r.error {
        return Err(format!("the API returned an error: {}", quote(error.get())));
    }
    let Some(candidate) = r.candidates.and_then(|c| c.into_iter().next()) else {
        // A blocked prompt has no candidate but its `promptFeedback`:
        // nothing to echo, nothing to call. A body with neither is no
        // response at all.
        let why = r
            .prompt_feedback
            .ok_or("it has no `candidates` and no `promptFeedback`")?;
        return Ok(Turn {
            echo: Vec::new(),
            calls: Vec::new(),
            stop: Stop::Refused(quote(why.get())),
            text: String::new(),
        });
    };
    let mut calls = Vec::new();
    let mut text = String::new();
    if let Some(content) = candidate.content {
        let c: GeminiContent = parse(content.get(), "candidates[0].content is not a content")?;
        for part in c.parts.into_iter().flatten() {
            if let Some(call) = part.function_call {
                let arguments = call.args.map_or(String::new(), |a| a.get().to_owned());
                let index = calls.len();
                calls.push(ModelCall {
                    id: call
                        .id
                        .clone()
                        .unwrap_or_else(|| format!("gemini-{turn}-{index}")),
                    wire_id: call.id,
                    name: call.name,
                    arguments,
                });
            } else if part.thought != Some(true) {
                text.push_str(part.text.as_deref().unwrap_or(""));
            }
        }
    }
    let stop = if !calls.is_empty() {
        Stop::ToolCalls
    } else {
        match candidate.finish_reason.as_deref() {
            Some("STOP") | None => Stop::Answered,
            Some("MAX_TOKENS") => Stop::MaxTokens,
            Some(why @ ("SAFETY" | "RECITATION" | "BLOCKLIST" | "PROHIBITED_CONTENT" | "SPII")) => {
                Stop::Refused(why.into())
            }
            Some(other) => Stop::Other(other.into()),
        }
    };
    Ok(Turn {
        echo: candidate
            .content
            .map(|c| raw(c.get().to_owned()))
            .into_iter()
            .collect(),
        calls,
        stop,
        text,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_provider_reads_its_calls_and_echoes_the_turn_verbatim() {
        let anthropic = r#"{"type":"message","role":"assistant","stop_reason":"tool_use","content":[{"type":"thinking","thinking":"hm","signature":"c2ln"},{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{"query":"x"}},{"type":"tool_use","id":"toolu_1","name":"read","input":{"b": 1.50, "a":"é"}}]}"#;
        let turn = Provider::Anthropic.read_turn(anthropic, 0).unwrap();
        assert_eq!(turn.calls.len(), 1, "the server tool is not ours to answer");
        assert_eq!(turn.calls[0].arguments, r#"{"b": 1.50, "a":"é"}"#);
        let content =
            &anthropic[anthropic.find(r#"[{"type":"thinking""#).unwrap()..anthropic.len() - 1];
        assert_eq!(
            turn.echo[0].get(),
            format!(r#"{{"role":"assistant","content":{content}}}"#)
        );

        let responses = r#"{"status":"completed","output":[{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"gAAA"},{"type":"function_call","id":"fc_1","call_id":"call_9","name":"read","arguments":"{\"path\":\"a\"}"}]}"#;
        let turn = Provider::OpenAiResponses.read_turn(responses, 0).unwrap();
        assert_eq!(turn.calls[0].id, "call_9", "call_id, never the item's id");
        assert_eq!(turn.echo.len(), 2);
        assert_eq!(
            turn.echo[0].get(),
            r#"{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"gAAA"}"#
        );

        let gemini = r#"{"candidates":[{"finishReason":"STOP","content":{"role":"model","parts":[{"functionCall":{"name":"read","args":{"path":"a"}},"thoughtSignature":"c2ln"},{"functionCall":{"name":"grep","args":{}}}]}}]}"#;
        let turn = Provider::Gemini.read_turn(gemini, 3).unwrap();
        assert_eq!(turn.stop, Stop::ToolCalls);
        assert_eq!(
            (turn.calls[0].id.as_str(), turn.calls[0].wire_id.as_deref()),
            ("gemini-3-0", None)
        );
        assert_eq!(turn.calls[1].id, "gemini-3-1");
        assert!(turn.echo[0].get().contains(r#""thoughtSignature":"c2ln""#));

        let chat = r#"{"choices":[{"finish_reason":"tool_calls","message":{"role":"assistant","content":null,"refusal":null,"annotations":[],"tool_calls":[{"id":"call_1","type":"function","function":{"name":"read","arguments":"{\"path\":\"a\"}"}}]}}]}"#;
        let turn = Provider::OpenAiChat.read_turn(chat, 0).unwrap();
        assert_eq!(turn.calls[0].arguments, r#"{"path":"a"}"#);
        let echo = turn.echo[0].get();
        assert!(
            !echo.contains("annotations") && !echo.contains("null"),
            "{echo}"
        );
        assert!(echo.contains(r#""tool_calls":[{"id":"call_1""#), "{echo}");
    }

    #[test]
    fn openai_arguments_stay_the_text_the_model_sent() {
        for args in [r#"{"a":1,"a":2}"#, "{not json", r#"{"x":-0.0}"#, ""] {
            let body = serde_json::json!({"choices":[{"message":{"role":"assistant",
                "tool_calls":[{"id":"c","type":"function","function":{"name":"t","arguments":args}}]}}]});
            let turn = Provider::OpenAiChat
                .read_turn(&body.to_string(), 0)
                .unwrap();
            assert_eq!(turn.calls[0].arguments, args);
        }
    }

    #[test]
    fn an_anthropic_input_nested_100000_deep_is_read_not_refused() {
        let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        let body = format!(
            r#"{{"stop_reason":"tool_use","content":[{{"type":"tool_use","id":"t1","name":"read","input":{{"a":{deep}}}}}]}}"#
        );
        let turn = Provider::Anthropic.read_turn(&body, 0).unwrap();
        assert_eq!(turn.calls[0].arguments.len(), deep.len() + 6);
    }

    #[test]
    fn a_response_of_another_shape_is_a_turn_error_naming_the_provider() {
        for provider in Provider::ALL {
            for body in [
                "",
                "not json",
                "[]",
                r#"{"type":"error","error":{"type":"overloaded_error"}}"#,
            ] {
                let e = provider.read_turn(body, 0).unwrap_err();
                assert_eq!(e.provider(), provider);
                assert!(e.to_string().contains(provider.name()), "{e}");
            }
        }
        let long = format!(r#"{{"content": "{}"}}"#, "x".repeat(10_000));
        let e = Provider::Anthropic
            .read_turn(&long, 0)
            .unwrap_err()
            .to_string();
        assert!(
            e.len() < 600,
            "the error quotes at most 200 bytes: {}",
            e.len()
        );
    }

    #[test]
    fn pause_turn_is_paused_and_a_blocked_gemini_prompt_is_refused() {
        let paused = r#"{"stop_reason":"pause_turn","content":[{"type":"server_tool_use","id":"s","name":"web_search","input":{}}]}"#;
        assert_eq!(
            Provider::Anthropic.read_turn(paused, 0).unwrap().stop,
            Stop::Paused
        );
        let blocked = r#"{"promptFeedback":{"blockReason":"SAFETY"}}"#;
        let turn = Provider::Gemini.read_turn(blocked, 0).unwrap();
        assert!(matches!(turn.stop, Stop::Refused(ref why) if why.contains("SAFETY")));
        assert!(turn.echo.is_empty() && turn.calls.is_empty());
    }
}
