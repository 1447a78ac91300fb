//! `ToolOutput`: the result of a tool call, whatever the source (MCP-06..MCP-08, ACI-46).

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One content block of a tool result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum ContentBlock {
    /// Text for the model.
    Text {
        /// The text.
        text: String,
    },
    /// An image (base64 data).
    Image {
        /// Base64 data.
        data: String,
        /// MIME type.
        #[serde(rename = "mimeType")]
        mime_type: String,
    },
}

/// The result of one tool call.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolOutput {
    /// Content blocks, in order.
    pub content: Vec<ContentBlock>,
    /// Structured result (a JSON object) when the tool produced one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    /// The tool ran and reports failure (MCP `isError`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub is_error: bool,
}

impl ToolOutput {
    /// `{"content":[{"type":"text","text":t}]}`, not an error (MCP-06).
    pub fn text(text: impl Into<String>) -> Self {
        Self {
            content: vec![ContentBlock::Text { text: text.into() }],
            structured_content: None,
            is_error: false,
        }
    }

    /// Compact JSON text of `value`; when `value` is an object it is also the structured
    /// content (MCP-07).
    pub fn json(value: Value) -> Self {
        let text = value.to_string();
        let structured_content = value.is_object().then_some(value);
        Self {
            content: vec![ContentBlock::Text { text }],
            structured_content,
            is_error: false,
        }
    }

    /// `isError: true` with a one-sentence reason for the model (MCP-08).
    pub fn error(message: impl Into<String>) -> Self {
        Self {
            content: vec![ContentBlock::Text {
                text: message.into(),
            }],
            structured_content: None,
            is_error: true,
        }
    }

    /// All text blocks joined by newlines.
    pub fn joined_text(&self) -> String {
        let mut out = String::new();
        for block in &self.content {
            if let ContentBlock::Text { text } = block {
                if !out.is_empty() {
                    out.push('\n');
                }
                out.push_str(text);
            }
        }
        out
    }
}
