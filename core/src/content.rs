//! What the model reads: content blocks; and the value of a tool whose
//! value is its content ([`content_value`], [`content_value_schema`]).

use std::sync::OnceLock;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// One block of content the model reads: text, an image, audio, an
/// embedded resource or a link to one, as MCP's content blocks spell them.
///
/// JSON: `{"type":"text","text":"…"}`,
/// `{"type":"image","mimeType":"image/png","data":"<base64>"}`,
/// `{"type":"audio","mimeType":"audio/wav","data":"<base64>"}`,
/// `{"type":"resource","resource":{"uri":…,"mimeType"?:…,"text"|"blob":…}}`,
/// `{"type":"resource_link","uri":…,"name":…,"title"?,"description"?,"mimeType"?,"size"?}`.
///
/// ```
/// use toolprism::ContentBlock;
/// let block = ContentBlock::text("3 matches");
/// assert_eq!(
///     serde_json::to_string(&block).unwrap(),
///     r#"{"type":"text","text":"3 matches"}"#
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum ContentBlock {
    /// Plain text.
    Text {
        /// The text.
        text: String,
    },
    /// An image, base64-encoded.
    Image {
        /// The media type, e.g. `image/png`.
        #[serde(rename = "mimeType")]
        mime_type: String,
        /// The image bytes, base64-encoded.
        data: String,
    },
    /// Audio, base64-encoded.
    Audio {
        /// The media type, e.g. `audio/wav`.
        #[serde(rename = "mimeType")]
        mime_type: String,
        /// The audio bytes, base64-encoded.
        data: String,
    },
    /// A resource's contents, embedded.
    Resource {
        /// The resource.
        resource: EmbeddedResource,
    },
    /// A link to a resource the client may read.
    #[serde(rename = "resource_link")]
    ResourceLink(ResourceLink),
}

/// The contents of an embedded resource: its URI and its text or bytes.
///
/// `#[non_exhaustive]`, as MCP's resources gain fields: build it with
/// [`EmbeddedResource::text`] or [`EmbeddedResource::blob`].
///
/// ```
/// use toolprism::{ContentBlock, EmbeddedResource};
/// let notes = EmbeddedResource::text("file:///notes.md", "# Notes").with_mime_type("text/markdown");
/// let logo = EmbeddedResource::blob("file:///logo.png", "iVBORw0KGgo=").with_mime_type("image/png");
/// let blocks = [ContentBlock::Resource { resource: notes }, ContentBlock::Resource { resource: logo }];
/// assert_eq!(toolprism::content_text(&blocks), "# Notes\n[resource file:///logo.png]");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct EmbeddedResource {
    /// Where it lives.
    pub uri: String,
    /// Its media type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Its text (for a text resource).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Its bytes, base64-encoded (for a binary resource).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blob: Option<String>,
}

impl EmbeddedResource {
    /// A text resource at `uri`, no media type said.
    pub fn text(uri: impl Into<String>, text: impl Into<String>) -> Self {
        EmbeddedResource {
            uri: uri.into(),
            mime_type: None,
            text: Some(text.into()),
            blob: None,
        }
    }

    /// A binary resource at `uri`: its bytes, base64-encoded; no media type
    /// said.
    pub fn blob(uri: impl Into<String>, blob: impl Into<String>) -> Self {
        EmbeddedResource {
            uri: uri.into(),
            mime_type: None,
            text: None,
            blob: Some(blob.into()),
        }
    }

    /// The same resource with its media type.
    pub fn with_mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.mime_type = Some(mime_type.into());
        self
    }
}

/// A link to a resource: what a client needs to list or read it.
///
/// ```
/// use toolprism::{ContentBlock, ResourceLink};
/// let link = ResourceLink::new("file:///report.pdf", "report.pdf")
///     .with_mime_type("application/pdf")
///     .with_size(48_213);
/// assert_eq!(
///     serde_json::to_value(ContentBlock::ResourceLink(link)).unwrap(),
///     serde_json::json!({"type": "resource_link", "uri": "file:///report.pdf", "name": "report.pdf", "mimeType": "application/pdf", "size": 48213})
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ResourceLink {
    /// Where it lives.
    pub uri: String,
    /// Its name.
    pub name: String,
    /// A human title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Its media type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Its size in bytes, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
}

impl ResourceLink {
    /// A link to the resource at `uri`, named `name`.
    pub fn new(uri: impl Into<String>, name: impl Into<String>) -> Self {
        ResourceLink {
            uri: uri.into(),
            name: name.into(),
            title: None,
            description: None,
            mime_type: None,
            size: None,
        }
    }

    /// The same link with a human title.
    pub fn with_title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// The same link, saying what the resource is.
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// The same link with the resource's media type.
    pub fn with_mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.mime_type = Some(mime_type.into());
        self
    }

    /// The same link with the resource's size in bytes.
    pub fn with_size(mut self, size: u64) -> Self {
        self.size = Some(size);
        self
    }
}

impl ContentBlock {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        ContentBlock::Text { text: text.into() }
    }

    /// An image block from a media type and base64 data.
    pub fn image(mime_type: impl Into<String>, data: impl Into<String>) -> Self {
        ContentBlock::Image {
            mime_type: mime_type.into(),
            data: data.into(),
        }
    }

    /// An audio block from a media type and base64 data.
    pub fn audio(mime_type: impl Into<String>, data: impl Into<String>) -> Self {
        ContentBlock::Audio {
            mime_type: mime_type.into(),
            data: data.into(),
        }
    }

    /// An embedded text resource.
    ///
    /// ```
    /// use toolprism::ContentBlock;
    /// let block = ContentBlock::embedded_text("file:///notes.md", "text/markdown", "# Notes");
    /// assert_eq!(
    ///     serde_json::to_value(&block).unwrap(),
    ///     serde_json::json!({"type": "resource", "resource": {"uri": "file:///notes.md", "mimeType": "text/markdown", "text": "# Notes"}})
    /// );
    /// ```
    pub fn embedded_text(
        uri: impl Into<String>,
        mime_type: impl Into<String>,
        text: impl Into<String>,
    ) -> Self {
        ContentBlock::Resource {
            resource: EmbeddedResource::text(uri, text).with_mime_type(mime_type),
        }
    }

    /// The text of a text block; `None` for any other block.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            ContentBlock::Text { text } => Some(text),
            _ => None,
        }
    }

    /// The block's `type`: `text`, `image`, `audio`, `resource`,
    /// `resource_link`.
    pub fn kind(&self) -> &'static str {
        match self {
            ContentBlock::Text { .. } => "text",
            ContentBlock::Image { .. } => "image",
            ContentBlock::Audio { .. } => "audio",
            ContentBlock::Resource { .. } => "resource",
            ContentBlock::ResourceLink(_) => "resource_link",
        }
    }
}

/// Joins the text of `content`, one block per line; an embedded text
/// resource shows its text, other blocks a bracketed note
/// (`[image content]`, `[audio content]`, `[resource file:///x]`, `[link
/// file:///x]`).
///
/// ```
/// use toolprism::{content_text, ContentBlock};
/// let text = content_text(&[ContentBlock::text("a"), ContentBlock::image("image/png", "")]);
/// assert_eq!(text, "a\n[image content]");
/// ```
pub fn content_text(content: &[ContentBlock]) -> String {
    let mut out = String::new();
    for (i, block) in content.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        match block {
            ContentBlock::Text { text } => out.push_str(text),
            ContentBlock::Image { .. } => out.push_str("[image content]"),
            ContentBlock::Audio { .. } => out.push_str("[audio content]"),
            ContentBlock::Resource { resource } => match &resource.text {
                Some(text) => out.push_str(text),
                None => {
                    out.push_str("[resource ");
                    out.push_str(&resource.uri);
                    out.push(']');
                }
            },
            ContentBlock::ResourceLink(link) => {
                out.push_str("[link ");
                out.push_str(&link.uri);
                out.push(']');
            }
        }
    }
    out
}

/// The value of a tool whose value is its content: `{"content": [...]}`,
/// each block as [`ContentBlock`] serializes it. A tool imported from an
/// MCP server that declares no output schema has this value (what the
/// server answered), and a program calling it gets it.
///
/// ```
/// use toolprism::{ContentBlock, content_value};
/// assert_eq!(
///     content_value(&[ContentBlock::text("hi")]),
///     serde_json::json!({"content": [{"type": "text", "text": "hi"}]})
/// );
/// ```
pub fn content_value(content: &[ContentBlock]) -> Value {
    let blocks = content
        .iter()
        .map(|block| serde_json::to_value(block).unwrap_or(Value::Null))
        .collect();
    json!({ "content": Value::Array(blocks) })
}

/// The JSON Schema of [`content_value`]: an object whose one property,
/// `content`, holds the blocks, each one of the five kinds exactly as
/// [`ContentBlock`] writes it.
///
/// It is the output schema of a tool whose value is its content (an
/// imported tool whose server declares none), so that its value is checked
/// and typed like any other: Code Mode's SDK declares such a tool's value
/// `{ content: ToolContent[] }`. Over MCP a tool with this output schema
/// is listed without `outputSchema` and answers without
/// `structuredContent`, as its server did: its content is what it
/// returns.
///
/// ```
/// use toolprism::{ContentBlock, content_value, content_value_schema};
/// let value = content_value(&[ContentBlock::text("hi"), ContentBlock::image("image/png", "iVBO")]);
/// let schema = content_value_schema();
/// assert_eq!(schema["required"], serde_json::json!(["content"]));
/// assert_eq!(schema["properties"]["content"]["items"]["oneOf"].as_array().unwrap().len(), 5);
/// # let _ = value;
/// ```
pub fn content_value_schema() -> &'static Value {
    static SCHEMA: OnceLock<Value> = OnceLock::new();
    SCHEMA.get_or_init(|| {
        let string = json!({"type": "string"});
        let base64 = json!({"type": "string", "description": "The bytes, base64-encoded."});
        let kind = |name: &str| json!({"type": "string", "const": name});
        let block = |name: &str, description: &str, properties: Value, required: &[&str]| {
            let mut properties = properties;
            properties["type"] = kind(name);
            let mut required: Vec<&str> = required.to_vec();
            required.insert(0, "type");
            json!({
                "description": description,
                "type": "object",
                "properties": properties,
                "required": required,
                "additionalProperties": false
            })
        };
        let media = |name: &str, description: &str| {
            block(
                name,
                description,
                json!({"mimeType": string, "data": base64}),
                &["mimeType", "data"],
            )
        };
        json!({
            "description": "The tool's content blocks, as it answered them: it declares no output schema, so they are its value.",
            "type": "object",
            "properties": {
                "content": {
                    "type": "array",
                    "items": {"oneOf": [
                        block("text", "Text.", json!({"text": string}), &["text"]),
                        media("image", "An image."),
                        media("audio", "Audio."),
                        block(
                            "resource",
                            "A resource's contents, embedded: its text, or its bytes.",
                            json!({"resource": {
                                "type": "object",
                                "properties": {
                                    "uri": string,
                                    "mimeType": string,
                                    "text": string,
                                    "blob": base64
                                },
                                "required": ["uri"],
                                "additionalProperties": false
                            }}),
                            &["resource"],
                        ),
                        block(
                            "resource_link",
                            "A link to a resource.",
                            json!({
                                "uri": string,
                                "name": string,
                                "title": string,
                                "description": string,
                                "mimeType": string,
                                "size": {"type": "integer", "minimum": 0, "description": "In bytes."}
                            }),
                            &["uri", "name"],
                        )
                    ]}
                }
            },
            "required": ["content"],
            "additionalProperties": false
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_block_reads_back_as_written_in_mcp_spelling() {
        let blocks = vec![
            json!({"type": "text", "text": "a"}),
            json!({"type": "image", "mimeType": "image/png", "data": "iVBO"}),
            json!({"type": "audio", "mimeType": "audio/wav", "data": "UklG"}),
            json!({"type": "resource", "resource": {"uri": "test://r", "mimeType": "text/plain", "text": "t"}}),
            json!({"type": "resource", "resource": {"uri": "test://b", "blob": "AAEC"}}),
            json!({"type": "resource_link", "uri": "file:///x.rs", "name": "x.rs", "mimeType": "text/x-rust", "size": 12}),
        ];
        for json in blocks {
            let block: ContentBlock = serde_json::from_value(json.clone()).unwrap();
            assert_eq!(serde_json::to_value(&block).unwrap(), json);
        }
        let text = content_text(&[
            ContentBlock::audio("audio/wav", ""),
            ContentBlock::embedded_text("test://r", "text/plain", "inside"),
            ContentBlock::ResourceLink(ResourceLink {
                uri: "file:///x".into(),
                name: "x".into(),
                title: None,
                description: None,
                mime_type: None,
                size: None,
            }),
        ]);
        assert_eq!(text, "[audio content]\ninside\n[link file:///x]");
        assert_eq!(ContentBlock::audio("a", "b").kind(), "audio");
    }

    #[test]
    fn the_content_value_schema_takes_every_block_and_nothing_else() {
        let validator = jsonschema::validator_for(content_value_schema()).unwrap();
        let every = content_value(&[
            ContentBlock::text("a"),
            ContentBlock::image("image/png", "iVBO"),
            ContentBlock::audio("audio/wav", "UklG"),
            ContentBlock::embedded_text("test://r", "text/plain", "t"),
            ContentBlock::Resource {
                resource: EmbeddedResource {
                    uri: "test://b".into(),
                    mime_type: None,
                    text: None,
                    blob: Some("AAEC".into()),
                },
            },
            ContentBlock::ResourceLink(ResourceLink {
                uri: "file:///x.rs".into(),
                name: "x.rs".into(),
                title: Some("X".into()),
                description: Some("d".into()),
                mime_type: Some("text/x-rust".into()),
                size: Some(12),
            }),
        ]);
        assert!(validator.is_valid(&every), "{every}");
        assert!(validator.is_valid(&content_value(&[])));
        for wrong in [
            json!({}),
            json!({"content": [{"type": "text", "txt": "a"}]}),
            json!({"content": [{"type": "video", "data": "x"}]}),
            json!({"content": [{"type": "image", "data": "x"}]}),
            json!({"content": [], "structuredContent": {}}),
        ] {
            assert!(!validator.is_valid(&wrong), "{wrong}");
        }
    }
}
