//! MCP wire vocabulary shared by the provider and the host: method names, protocol revision
//! negotiation (MCP-20, MCP-21), and the mapping between [`ToolOutput`] and rmcp's
//! [`CallToolResult`] (MCP-06..MCP-08).

use capability_model::{ContentBlock, ToolOutput};
use rmcp::model::{CallToolResult, ContentBlock as McpContent, ProtocolVersion};
use serde_json::Value;

use crate::limits::MAX_PROVIDER_MESSAGE_CHARS;

/// `initialize`
pub const INITIALIZE: &str = "initialize";
/// `notifications/initialized`
pub const INITIALIZED: &str = "notifications/initialized";
/// `ping`
pub const PING: &str = "ping";
/// `tools/list`
pub const TOOLS_LIST: &str = "tools/list";
/// `tools/call`
pub const TOOLS_CALL: &str = "tools/call";
/// `notifications/cancelled`
pub const CANCELLED: &str = "notifications/cancelled";
/// `notifications/tools/list_changed`
pub const TOOLS_LIST_CHANGED: &str = "notifications/tools/list_changed";

/// The protocol revisions capbridge speaks, newest first (MCP-21; the issue adds 2025-03-26
/// to SPEC's proposed set because AgentOS's SDK still negotiates it).
pub const SUPPORTED_VERSIONS: [&str; 4] = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// The revision a client offers and a server falls back to (MCP-21).
pub fn latest_version() -> ProtocolVersion {
    ProtocolVersion::V_2025_11_25
}

/// Whether `version` is one capbridge speaks.
pub fn is_supported(version: &ProtocolVersion) -> bool {
    SUPPORTED_VERSIONS.contains(&version.to_string().as_str())
}

/// The server side of the negotiation: the client's revision when supported, else the newest
/// supported one (the client then decides whether to go on).
pub fn negotiate(requested: &ProtocolVersion) -> ProtocolVersion {
    if is_supported(requested) {
        requested.clone()
    } else {
        latest_version()
    }
}

/// A [`ToolOutput`] as an MCP `tools/call` result (MCP-06..MCP-08): `isError` only when true,
/// `structuredContent` only when the output has one, no `resultType` (revisions ≤ 2025-11-25
/// have none).
pub fn to_call_result(output: &ToolOutput) -> CallToolResult {
    let content = output
        .content
        .iter()
        .filter_map(|block| match block {
            ContentBlock::Text { text } => Some(McpContent::text(text.clone())),
            ContentBlock::Image { data, mime_type } => {
                Some(McpContent::image(data.clone(), mime_type.clone()))
            }
            _ => None,
        })
        .collect();
    let mut result = CallToolResult::success(content);
    result.result_type = None;
    result.is_error = output.is_error.then_some(true);
    result.structured_content = output.structured_content.clone();
    result
}

/// A `tools/call` result from a provider as a [`ToolOutput`]. Content kinds the catalog has
/// no block for (audio, resources) become a short text note, so nothing is silently lost.
/// `None` when `value` is not a `tools/call` result.
pub fn from_call_result(value: Value) -> Option<ToolOutput> {
    let result: CallToolResult = serde_json::from_value(value).ok()?;
    let content = result
        .content
        .into_iter()
        .map(|block| match block {
            McpContent::Text(t) => ContentBlock::Text { text: t.text },
            McpContent::Image(i) => ContentBlock::Image {
                data: i.data,
                mime_type: i.mime_type,
            },
            _ => ContentBlock::Text {
                text: "[a content block of a kind capbridge does not show]".to_owned(),
            },
        })
        .collect();
    Some(ToolOutput {
        content,
        structured_content: result.structured_content,
        is_error: result.is_error.unwrap_or(false),
    })
}

/// A provider's error sentence made safe to pass on: control characters replaced by spaces,
/// cut to [`MAX_PROVIDER_MESSAGE_CHARS`] UTF-16 units without splitting a character (GEN-02).
pub fn clean_message(message: &str) -> String {
    let mut out = String::with_capacity(message.len().min(MAX_PROVIDER_MESSAGE_CHARS));
    let mut units = 0;
    for c in message.chars() {
        let c = if c.is_control() { ' ' } else { c };
        units += c.len_utf16();
        if units > MAX_PROVIDER_MESSAGE_CHARS {
            break;
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn negotiation_echoes_supported_and_falls_back_to_latest() {
        for v in SUPPORTED_VERSIONS {
            let pv: ProtocolVersion = serde_json::from_value(Value::from(v)).unwrap();
            assert_eq!(negotiate(&pv).to_string(), v);
        }
        let old: ProtocolVersion = serde_json::from_value(Value::from("2023-01-01")).unwrap();
        assert_eq!(negotiate(&old).to_string(), "2025-11-25");
    }

    #[test]
    fn clean_message_drops_controls_and_never_splits_a_surrogate_pair() {
        assert_eq!(clean_message("a\nb\u{7}"), "a b ");
        let long = format!("{}😀", "x".repeat(MAX_PROVIDER_MESSAGE_CHARS - 1));
        let cut = clean_message(&long);
        assert_eq!(cut.encode_utf16().count(), MAX_PROVIDER_MESSAGE_CHARS - 1);
        assert!(cut.chars().all(|c| c == 'x'));
    }
}
