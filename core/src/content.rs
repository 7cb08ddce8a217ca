//! What the model reads: content blocks.

use serde::{Deserialize, Serialize};

/// One block of content the model reads.
///
/// JSON: `{"type":"text","text":"…"}` or
/// `{"type":"image","mimeType":"image/png","data":"<base64>"}`.
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

    /// The text of a text block, `None` for an image.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            ContentBlock::Text { text } => Some(text),
            ContentBlock::Image { .. } => None,
        }
    }
}

/// Joins the text of `content`, one block per line; non-text blocks appear as
/// `[<type> content]`.
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
        }
    }
    out
}
