//! Results out: a turn's `(call, outcome)` pairs, written as the message
//! or messages the provider's next request takes them in.
//!
//! Each result carries the content [`render`](toolprism_core::Tool::render)
//! made (never the value), in what the provider can take
//! ([`Accepts`]): what it cannot carry becomes a line of text saying what
//! was left out. A failed call's error code reaches the model in every
//! shape.

use serde_json::value::RawValue;
use serde_json::{Map, Value, json};
use toolprism_core::{ContentBlock, ToolOutcome};

use crate::turn::ModelCall;
use crate::wire::{Accepts, ImageSlot, Provider};

/// What one call's result says, ready to write in any shape.
struct Said<'a> {
    call: &'a ModelCall,
    /// `Some(code)` for a failed call.
    code: Option<&'a str>,
    parts: Vec<Part<'a>>,
}

/// One piece of a result, after the provider's table.
enum Part<'a> {
    Text(String),
    Image { mime: &'a str, data: &'a str },
    Audio { mime: &'a str, data: &'a str },
    Pdf { name: String, data: &'a str },
    Document { title: String, text: &'a str },
}

fn size_of_base64(data: &str) -> usize {
    let padding = data.bytes().rev().take(2).filter(|&b| b == b'=').count();
    (data.len() / 4 * 3).saturating_sub(padding)
}

/// Applies the table: each block as a part the provider takes, or a line
/// of text that says what was left out.
fn parts<'a>(provider: Provider, accepts: Accepts, content: &'a [ContentBlock]) -> Vec<Part<'a>> {
    let mut out = Vec::with_capacity(content.len());
    for block in content {
        match block {
            ContentBlock::Text { text } => out.push(Part::Text(text.clone())),
            ContentBlock::Image { mime_type, data } => {
                if accepts.images == ImageSlot::None || !provider.image_type(mime_type) {
                    out.push(Part::Text(format!(
                        "[an image ({mime_type}, {} bytes) was left out: {provider} tool results take no {}]",
                        size_of_base64(data),
                        if accepts.images == ImageSlot::None { "images".to_owned() } else { format!("{mime_type} images") }
                    )));
                } else {
                    out.push(Part::Image { mime: mime_type, data });
                }
            }
            // Only a Gemini function response has a slot for it (inline
            // data), and only when the table says the model takes it.
            ContentBlock::Audio { mime_type, data } if accepts.audio && provider == Provider::Gemini => {
                out.push(Part::Audio { mime: mime_type, data })
            }
            ContentBlock::Audio { mime_type, data } => out.push(Part::Text(format!(
                "[audio ({mime_type}, {} bytes) was left out: {provider} tool results take no audio]",
                size_of_base64(data)
            ))),
            ContentBlock::Resource { resource } => {
                let mime = resource.mime_type.as_deref();
                match (&resource.text, &resource.blob) {
                    (Some(text), _) if accepts.text_documents => out.push(Part::Document {
                        title: resource.uri.clone(),
                        text,
                    }),
                    (Some(text), _) => out.push(Part::Text(format!("{}:\n{text}", resource.uri))),
                    (None, Some(blob)) if mime == Some("application/pdf") && accepts.pdf => {
                        out.push(Part::Pdf {
                            name: file_name(&resource.uri),
                            data: blob,
                        })
                    }
                    (None, Some(blob))
                        if mime.is_some_and(|m| m.starts_with("image/"))
                            && accepts.images != ImageSlot::None
                            && provider.image_type(mime.unwrap_or_default()) =>
                    {
                        out.push(Part::Image {
                            mime: mime.unwrap_or_default(),
                            data: blob,
                        })
                    }
                    (None, Some(blob)) => out.push(Part::Text(format!(
                        "[the resource {} ({}, {} bytes) was left out: {provider} tool results cannot carry it]",
                        resource.uri,
                        mime.unwrap_or("no media type"),
                        size_of_base64(blob)
                    ))),
                    (None, None) => out.push(Part::Text(format!("[the resource {} is empty]", resource.uri))),
                }
            }
            ContentBlock::ResourceLink(link) => {
                let mut line = format!("resource: {}", link.uri);
                line.push_str(&format!(" ({}", link.name));
                if let Some(mime) = &link.mime_type {
                    line.push_str(&format!(", {mime}"));
                }
                if let Some(size) = link.size {
                    line.push_str(&format!(", {size} bytes"));
                }
                line.push(')');
                if let Some(d) = &link.description {
                    line.push_str(&format!(": {d}"));
                }
                out.push(Part::Text(line));
            }
            // A content kind added later: never dropped silently.
            #[allow(unreachable_patterns)]
            other => out.push(Part::Text(format!(
                "[a content block the {provider} writer does not know was left out: {}]",
                serde_json::to_string(other).unwrap_or_default()
            ))),
        }
    }
    out
}

fn file_name(uri: &str) -> String {
    let name = uri.rsplit('/').next().unwrap_or(uri);
    if name.is_empty() {
        "document.pdf".into()
    } else {
        name.into()
    }
}

/// The first text of a failed result, with its code: `Error [CODE]: …`.
fn with_code(code: &str, parts: &mut Vec<Part<'_>>) {
    match parts.first_mut() {
        Some(Part::Text(text)) => {
            let rest = text.strip_prefix("Error: ").unwrap_or(text);
            *text = format!("Error [{code}]: {rest}");
        }
        _ => parts.insert(0, Part::Text(format!("Error [{code}]"))),
    }
}

fn said<'a>(
    provider: Provider,
    accepts: Accepts,
    call: &'a ModelCall,
    outcome: &'a ToolOutcome,
) -> Said<'a> {
    let code = outcome.code().map(|c| c.as_str());
    let mut parts = parts(provider, accepts, outcome.content());
    if let Some(code) = code {
        with_code(code, &mut parts);
    }
    Said { call, code, parts }
}

fn data_url(mime: &str, data: &str) -> String {
    format!("data:{mime};base64,{data}")
}

fn texts(parts: &[Part<'_>]) -> String {
    let mut out = String::new();
    for part in parts {
        if let Part::Text(t) = part {
            if !out.is_empty() {
                out.push('\n');
            }
            out.push_str(t);
        }
    }
    out
}

fn to_raw(value: &Value) -> Box<RawValue> {
    serde_json::value::to_raw_value(value).expect("a Value always serializes")
}

impl Provider {
    /// Writes a turn's results, in the order of its calls, as the messages
    /// (or Responses input items) the next request appends after the
    /// echoed assistant turn. Every call gets its result: a provider
    /// refuses a request that answers only some.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// use toolprism::provider::{ModelCall, Provider};
    /// use toolprism::{Registry, ToolCall};
    ///
    /// let registry = Registry::builder().build().unwrap();
    /// let call = ModelCall::new("toolu_1", "missing", "{}");
    /// let outcome = registry.call(ToolCall::new("toolu_1", "missing", "{}")).await;
    /// let messages = Provider::Anthropic.write_results(&[(call, outcome)], Provider::Anthropic.accepts());
    /// let message: serde_json::Value = serde_json::from_str(messages[0].get()).unwrap();
    /// assert_eq!(message["role"], "user");
    /// assert_eq!(message["content"][0]["type"], "tool_result");
    /// assert_eq!(message["content"][0]["is_error"], true);
    /// assert!(message["content"][0]["content"][0]["text"].as_str().unwrap().starts_with("Error [UNKNOWN_TOOL]"));
    /// # });
    /// ```
    pub fn write_results(
        self,
        results: &[(ModelCall, ToolOutcome)],
        accepts: Accepts,
    ) -> Vec<Box<RawValue>> {
        if results.is_empty() {
            return Vec::new();
        }
        let said: Vec<Said<'_>> = results
            .iter()
            .map(|(call, outcome)| said(self, accepts, call, outcome))
            .collect();
        let messages = match self {
            Provider::Anthropic => vec![anthropic(&said)],
            Provider::OpenAiChat => chat(&said, accepts),
            Provider::OpenAiResponses => said.iter().map(responses).collect(),
            Provider::Gemini => vec![gemini(&said)],
        };
        messages.iter().map(to_raw).collect()
    }

    /// The first user message of a conversation, in this provider's shape.
    ///
    /// ```
    /// use toolprism::provider::Provider;
    /// let m = Provider::Gemini.user_message("What is in a.txt?");
    /// assert_eq!(m.get(), r#"{"parts":[{"text":"What is in a.txt?"}],"role":"user"}"#);
    /// ```
    pub fn user_message(self, text: &str) -> Box<RawValue> {
        let message = match self {
            Provider::Gemini => json!({"role": "user", "parts": [{"text": text}]}),
            _ => json!({"role": "user", "content": text}),
        };
        to_raw(&message)
    }
}

fn anthropic(said: &[Said<'_>]) -> Value {
    let blocks: Vec<Value> = said
        .iter()
        .map(|s| {
            let content: Vec<Value> = s
                .parts
                .iter()
                .map(|part| match part {
                    Part::Text(text) => json!({"type": "text", "text": text}),
                    Part::Audio { mime, data } => json!({"type": "text", "text": format!("[audio ({mime}, {} bytes) was left out: no slot for it here]", size_of_base64(data))}),
                    Part::Image { mime, data } => json!({"type": "image",
                        "source": {"type": "base64", "media_type": mime, "data": data}}),
                    Part::Pdf { name, data } => json!({"type": "document", "title": name,
                        "source": {"type": "base64", "media_type": "application/pdf", "data": data}}),
                    Part::Document { title, text } => json!({"type": "document", "title": title,
                        "source": {"type": "text", "media_type": "text/plain", "data": text}}),
                })
                .collect();
            let mut block = Map::new();
            block.insert("type".into(), "tool_result".into());
            block.insert("tool_use_id".into(), s.call.wire_id.as_deref().unwrap_or(&s.call.id).into());
            if !content.is_empty() {
                block.insert("content".into(), content.into());
            }
            if s.code.is_some() {
                block.insert("is_error".into(), true.into());
            }
            Value::Object(block)
        })
        .collect();
    json!({"role": "user", "content": blocks})
}

fn chat(said: &[Said<'_>], accepts: Accepts) -> Vec<Value> {
    let mut messages = Vec::with_capacity(said.len() + 1);
    let mut images = Vec::new();
    for s in said {
        let id = s.call.wire_id.as_deref().unwrap_or(&s.call.id);
        let mut lines = Vec::new();
        let mut n = 0;
        for part in &s.parts {
            match part {
                Part::Text(text) => lines.push(text.clone()),
                Part::Image { mime, data } if accepts.images == ImageSlot::FollowingUserMessage => {
                    n += 1;
                    lines.push(format!("[image {n} ({mime}) is in the next user message]"));
                    if n == 1 {
                        images.push(json!({"type": "text", "text": format!("The images of tool call {id}:")}));
                    }
                    images.push(
                        json!({"type": "image_url", "image_url": {"url": data_url(mime, data)}}),
                    );
                }
                Part::Audio { mime, data } => lines.push(format!(
                    "[audio ({mime}, {} bytes) was left out: no slot for it here]",
                    size_of_base64(data)
                )),
                Part::Image { mime, data } => lines.push(format!(
                    "[an image ({mime}, {} bytes) was left out: chat tool messages are text only]",
                    size_of_base64(data)
                )),
                Part::Pdf { name, data } => lines.push(format!(
                    "[the PDF {name} ({} bytes) was left out: chat tool messages are text only]",
                    size_of_base64(data)
                )),
                Part::Document { title, text } => lines.push(format!("{title}:\n{text}")),
            }
        }
        messages.push(json!({"role": "tool", "tool_call_id": id, "content": lines.join("\n")}));
    }
    if !images.is_empty() {
        messages.push(json!({"role": "user", "content": images}));
    }
    messages
}

fn responses(s: &Said<'_>) -> Value {
    let id = s.call.wire_id.as_deref().unwrap_or(&s.call.id);
    let only_text = s
        .parts
        .iter()
        .all(|p| matches!(p, Part::Text(_) | Part::Document { .. }));
    let output = if only_text {
        let mut text = texts(&s.parts);
        for part in &s.parts {
            if let Part::Document { title, text: t } = part {
                text.push_str(&format!("\n{title}:\n{t}"));
            }
        }
        Value::String(text)
    } else {
        Value::Array(
            s.parts
                .iter()
                .map(|part| match part {
                    Part::Text(text) => json!({"type": "input_text", "text": text}),
                    Part::Document { title, text } => json!({"type": "input_text", "text": format!("{title}:\n{text}")}),
                    Part::Audio { mime, data } => json!({"type": "input_text", "text": format!("[audio ({mime}, {} bytes) was left out: no slot for it here]", size_of_base64(data))}),
                    Part::Image { mime, data } => json!({"type": "input_image", "image_url": data_url(mime, data), "detail": "auto"}),
                    Part::Pdf { name, data } => json!({"type": "input_file", "filename": name, "file_data": data_url("application/pdf", data)}),
                })
                .collect(),
        )
    };
    json!({"type": "function_call_output", "call_id": id, "output": output})
}

fn gemini(said: &[Said<'_>]) -> Value {
    let parts: Vec<Value> = said
        .iter()
        .map(|s| {
            let text = texts(&s.parts);
            let mut text = text;
            for part in &s.parts {
                if let Part::Document { title, text: t } = part {
                    text.push_str(&format!("\n{title}:\n{t}"));
                }
            }
            let response = match s.code {
                Some(code) => json!({"error": {"code": code, "message": text}}),
                None => json!({"output": text}),
            };
            let mut function = Map::new();
            if let Some(id) = &s.call.wire_id {
                function.insert("id".into(), id.clone().into());
            }
            function.insert("name".into(), s.call.name.clone().into());
            function.insert("response".into(), response);
            let media: Vec<Value> = s
                .parts
                .iter()
                .filter_map(|part| match part {
                    Part::Image { mime, data } | Part::Audio { mime, data } => {
                        Some(json!({"inlineData": {"mimeType": mime, "data": data}}))
                    }
                    Part::Pdf { data, .. } => {
                        Some(json!({"inlineData": {"mimeType": "application/pdf", "data": data}}))
                    }
                    _ => None,
                })
                .collect();
            if !media.is_empty() {
                function.insert("parts".into(), media.into());
            }
            json!({"functionResponse": function})
        })
        .collect();
    json!({"role": "user", "parts": parts})
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolprism::{EmbeddedResource, Registry, ToolCall, ToolError, tool};

    #[derive(Clone, serde::Deserialize, schemars::JsonSchema)]
    struct Kind {
        kind: String,
    }

    /// Returns one block of the asked kind.
    #[tool(read_only)]
    impl MediaTool {
        fn execute(args: Kind) -> Result<String, ToolError> {
            if args.kind == "fail" {
                return Err(ToolError::new("the disk is gone").with_code("DISK_GONE"));
            }
            Ok(args.kind)
        }
        fn render(_: &Kind, kind: &String) -> Vec<ContentBlock> {
            let block = match kind.as_str() {
                "image" => ContentBlock::Image {
                    mime_type: "image/png".into(),
                    data: "iVBORw0KGgo=".into(),
                },
                "audio" => ContentBlock::Audio {
                    mime_type: "audio/wav".into(),
                    data: "UklGRg==".into(),
                },
                "pdf" => ContentBlock::Resource {
                    resource: EmbeddedResource::blob("file:///r/report.pdf", "JVBERi0=")
                        .with_mime_type("application/pdf"),
                },
                _ => ContentBlock::text(format!("a {kind}")),
            };
            vec![ContentBlock::text("here:"), block]
        }
    }
    struct MediaTool;

    fn results(kinds: &[&str]) -> Vec<(ModelCall, ToolOutcome)> {
        let registry = Registry::builder().tool(MediaTool).build().unwrap();
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        kinds
            .iter()
            .enumerate()
            .map(|(i, kind)| {
                let args = format!(r#"{{"kind":"{kind}"}}"#);
                let call = ModelCall::new(format!("c{i}"), "media", args.clone());
                let outcome =
                    rt.block_on(registry.call(ToolCall::new(format!("c{i}"), "media", args)));
                (call, outcome)
            })
            .collect()
    }

    fn written(provider: Provider, kinds: &[&str]) -> Vec<Value> {
        provider
            .write_results(&results(kinds), provider.accepts())
            .iter()
            .map(|m| serde_json::from_str(m.get()).unwrap())
            .collect()
    }

    #[test]
    fn every_result_says_its_error_code() {
        let a = written(Provider::Anthropic, &["fail"]);
        assert_eq!(a[0]["content"][0]["is_error"], true);
        assert!(
            a[0]["content"][0]["content"][0]["text"]
                .as_str()
                .unwrap()
                .starts_with("Error [DISK_GONE]: ")
        );
        for provider in [Provider::OpenAiChat, Provider::OpenAiResponses] {
            let m = written(provider, &["fail"]);
            let text = m[0]
                .get("content")
                .or(m[0].get("output"))
                .unwrap()
                .as_str()
                .unwrap()
                .to_owned();
            assert!(
                text.starts_with("Error [DISK_GONE]: "),
                "{provider}: {text}"
            );
            assert!(text.contains("the disk is gone"), "{text}");
        }
        let g = written(Provider::Gemini, &["fail"]);
        assert_eq!(
            g[0]["parts"][0]["functionResponse"]["response"]["error"]["code"],
            "DISK_GONE"
        );
    }

    #[test]
    fn what_a_provider_cannot_carry_becomes_a_line_saying_so() {
        for provider in Provider::ALL {
            let text = serde_json::to_string(&written(provider, &["audio"])).unwrap();
            assert!(
                text.contains("audio (audio/wav, 4 bytes) was left out"),
                "{provider}: {text}"
            );
            assert!(
                !text.contains("UklGRg=="),
                "{provider}: the audio itself never goes: {text}"
            );
        }
        let chat = written(Provider::OpenAiChat, &["image", "pdf", "text"]);
        assert_eq!(
            chat.len(),
            4,
            "three tool messages, then the images in a user message"
        );
        assert!(
            chat[0]["content"]
                .as_str()
                .unwrap()
                .contains("[image 1 (image/png) is in the next user message]")
        );
        assert!(
            chat[1]["content"]
                .as_str()
                .unwrap()
                .contains("the resource file:///r/report.pdf")
        );
        assert_eq!(chat[3]["role"], "user");
        assert_eq!(
            chat[3]["content"][1]["image_url"]["url"],
            "data:image/png;base64,iVBORw0KGgo="
        );
        let anthropic = written(Provider::Anthropic, &["image", "pdf"]);
        assert_eq!(anthropic[0]["content"][0]["content"][1]["type"], "image");
        assert_eq!(anthropic[0]["content"][1]["content"][1]["type"], "document");
        let responses = written(Provider::OpenAiResponses, &["image", "pdf"]);
        assert_eq!(responses[0]["output"][1]["type"], "input_image");
        assert_eq!(responses[1]["output"][1]["type"], "input_file");
        // A Gemini model said to take audio gets it as inline data.
        let with_audio = Accepts {
            audio: true,
            ..Provider::Gemini.accepts()
        };
        let m = Provider::Gemini.write_results(&results(&["audio"]), with_audio);
        assert!(
            m[0].get()
                .contains(r#"{"inlineData":{"data":"UklGRg==","mimeType":"audio/wav"}}"#),
            "{}",
            m[0].get()
        );
        let gemini = written(Provider::Gemini, &["image"]);
        let part = &gemini[0]["parts"][0]["functionResponse"];
        assert_eq!(part["parts"][0]["inlineData"]["mimeType"], "image/png");
        assert_eq!(part["id"], "c0", "the call's own id answers it: {part}");
    }

    #[test]
    fn anthropic_answers_every_call_in_one_message_results_first() {
        let m = written(Provider::Anthropic, &["text", "fail", "image"]);
        assert_eq!(m.len(), 1);
        let ids: Vec<&str> = m[0]["content"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b["tool_use_id"].as_str().unwrap())
            .collect();
        assert_eq!(ids, ["c0", "c1", "c2"]);
    }
}
