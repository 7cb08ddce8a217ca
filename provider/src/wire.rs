//! The four model APIs a loop speaks, and what each one's tool results can
//! carry.

use std::fmt;
use std::str::FromStr;

use crate::dialect::Dialect;

/// A model API's wire format: where its responses put tool calls, and the
/// shape its next request takes their results in.
///
/// | provider | calls read from | results written as |
/// |---|---|---|
/// | [`Anthropic`](Provider::Anthropic) | `tool_use` blocks of `content` | one `user` message, every `tool_result` block first |
/// | [`OpenAiChat`](Provider::OpenAiChat) | `choices[0].message.tool_calls` | one `role: tool` message per call, then a `user` message with the images |
/// | [`OpenAiResponses`](Provider::OpenAiResponses) | `function_call` items of `output` | one `function_call_output` item per call |
/// | [`Gemini`](Provider::Gemini) | `functionCall` parts of `candidates[0].content` | one `user` content, every `functionResponse` part |
///
/// ```
/// use toolprism::provider::Provider;
/// let p: Provider = "openai-responses".parse().unwrap();
/// assert_eq!(p, Provider::OpenAiResponses);
/// assert_eq!(p.messages_field(), "input");
/// assert!("cohere".parse::<Provider>().unwrap_err().to_string().contains("anthropic"));
/// ```
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Provider {
    /// The Anthropic Messages API (`POST /v1/messages`).
    Anthropic,
    /// OpenAI Chat Completions (`POST /v1/chat/completions`), and the
    /// servers that speak it.
    OpenAiChat,
    /// The OpenAI Responses API (`POST /v1/responses`), stateless: the
    /// whole conversation is sent as `input` on every turn.
    OpenAiResponses,
    /// The Gemini API (`models/…:generateContent`).
    Gemini,
}

impl Provider {
    /// Every provider.
    pub const ALL: [Provider; 4] = [
        Provider::Anthropic,
        Provider::OpenAiChat,
        Provider::OpenAiResponses,
        Provider::Gemini,
    ];

    /// The provider's name, as the command line spells it.
    pub const fn name(self) -> &'static str {
        match self {
            Provider::Anthropic => "anthropic",
            Provider::OpenAiChat => "openai-chat",
            Provider::OpenAiResponses => "openai-responses",
            Provider::Gemini => "gemini",
        }
    }

    /// The dialect the tool definitions are sent in: strict where the
    /// provider has a strict mode and `strict` asks for it (OpenAI's
    /// dialects are strict wherever strict mode can say the schema).
    pub const fn dialect(self, strict: bool) -> Dialect {
        match (self, strict) {
            (Provider::Anthropic, false) => Dialect::Anthropic,
            (Provider::Anthropic, true) => Dialect::AnthropicStrict,
            (Provider::OpenAiChat, _) => Dialect::OpenAi,
            (Provider::OpenAiResponses, _) => Dialect::OpenAiResponses,
            (Provider::Gemini, _) => Dialect::Gemini,
        }
    }

    /// The request field that holds the conversation: `messages`, `input`
    /// (Responses) or `contents` (Gemini).
    pub const fn messages_field(self) -> &'static str {
        match self {
            Provider::Anthropic | Provider::OpenAiChat => "messages",
            Provider::OpenAiResponses => "input",
            Provider::Gemini => "contents",
        }
    }

    /// What a tool result can carry at this provider (the default table).
    pub const fn accepts(self) -> Accepts {
        match self {
            Provider::Anthropic => Accepts {
                images: ImageSlot::InResult,
                audio: false,
                pdf: true,
                text_documents: true,
            },
            Provider::OpenAiChat => Accepts {
                images: ImageSlot::FollowingUserMessage,
                audio: false,
                pdf: false,
                text_documents: false,
            },
            Provider::OpenAiResponses => Accepts {
                images: ImageSlot::InResult,
                audio: false,
                pdf: true,
                text_documents: false,
            },
            Provider::Gemini => Accepts {
                images: ImageSlot::InResult,
                audio: false,
                pdf: true,
                text_documents: false,
            },
        }
    }

    /// The media types of images this provider's results take.
    pub(crate) fn image_type(self, mime: &str) -> bool {
        let common = matches!(mime, "image/png" | "image/jpeg" | "image/webp");
        match self {
            Provider::Gemini => common || matches!(mime, "image/heic" | "image/heif"),
            _ => common || mime == "image/gif",
        }
    }
}

impl fmt::Display for Provider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A provider name that is none of [`Provider::ALL`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownProvider(String);

impl fmt::Display for UnknownProvider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = Provider::ALL.iter().map(|p| p.name()).collect();
        write!(
            f,
            "unknown provider `{}`: use one of {}",
            self.0,
            names.join(", ")
        )
    }
}

impl std::error::Error for UnknownProvider {}

impl FromStr for Provider {
    type Err = UnknownProvider;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Provider::ALL
            .into_iter()
            .find(|p| p.name() == s)
            .ok_or_else(|| UnknownProvider(s.to_owned()))
    }
}

/// Where a result's images go.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ImageSlot {
    /// Inside the tool result itself.
    InResult,
    /// In a `user` message after the results (the tool message keeps a
    /// line saying where they went): OpenAI Chat's tool messages are text
    /// only.
    FollowingUserMessage,
    /// Nowhere: each image becomes a line of text saying it was left out.
    None,
}

/// What one provider's tool results can carry. What they cannot is turned
/// into a line of text that says what was left out and why, never dropped
/// silently; an error's code reaches the model in every shape.
///
/// The default tables ([`Provider::accepts`]):
///
/// | content | Anthropic | OpenAI Chat | OpenAI Responses | Gemini |
/// |---|---|---|---|---|
/// | text | text block | the message's text | `input_text` | `response.output` |
/// | image (png, jpeg, webp; gif but at Gemini) | `image` block | a following `user` message | `input_image` (data URL) | `parts[].inlineData` |
/// | audio | text note | text note | text note | text note |
/// | PDF (embedded blob) | `document` block | text note | `input_file` | `parts[].inlineData` |
/// | embedded text resource | `document` block (text source) | text | `input_text` | text |
/// | other blob | text note | text note | text note | text note |
/// | resource link | text (uri, name, type) | text | `input_text` | text |
/// | error | `is_error: true` + `Error [CODE]: …` | `Error [CODE]: …` | `Error [CODE]: …` | `response.error {code, message}` |
///
/// No provider takes audio in a tool result. Gemini takes images and PDFs
/// inside a function response from Gemini 3 on: for an older model, turn
/// [`images`](Accepts::images) to [`ImageSlot::None`] and `pdf` off.
///
/// ```
/// use toolprism::provider::{Accepts, ImageSlot, Provider};
/// let gemini2 = Accepts { images: ImageSlot::None, pdf: false, ..Provider::Gemini.accepts() };
/// assert!(Provider::Gemini.accepts().pdf);
/// assert!(Provider::ALL.iter().all(|p| !p.accepts().audio));
/// assert_eq!(gemini2.images, ImageSlot::None);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Accepts {
    /// Where images go.
    pub images: ImageSlot,
    /// Whether audio can be a part of a result: only a Gemini function
    /// response has a slot for it (`parts[].inlineData`), off by default
    /// (no model is documented to take it there).
    pub audio: bool,
    /// Whether a PDF (an embedded resource blob of `application/pdf`) can
    /// be a part of a result.
    pub pdf: bool,
    /// Whether an embedded text resource becomes a document of its own
    /// (else its text goes in as text).
    pub text_documents: bool,
}
