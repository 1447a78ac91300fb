//! MCP-05 on the wire: `tools/list` carries name, title, description, inputSchema, and
//! annotations only when set (default all unset).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use capability_model::{Annotations, ToolOutput};
use common::{Raw, pair};
use mcp_adapter::McpServer;
use serde_json::json;

#[tokio::test]
async fn mcp05_tools_list_lists_registered_tools_in_order() {
    let server = McpServer::new("notes", |r| {
        r.tool(
            "plain",
            None,
            "Plain.",
            json!({"type": "object"}),
            Annotations::default(),
            |_, _| async { Ok(ToolOutput::text("")) },
        )?;
        r.tool(
            "hinted",
            Some("Hinted tool"),
            "Hinted.",
            json!({"type": "object", "properties": {"q": {"type": "string"}}}),
            Annotations {
                destructive_hint: Some(true),
                ..Annotations::default()
            },
            |_, _| async { Ok(ToolOutput::text("")) },
        )?;
        Ok(())
    })
    .unwrap();
    let (host, plugin) = pair();
    server.serve(plugin);
    let raw = Raw { ch: host };
    raw.initialize("2025-11-25").await;
    let list = raw.request(1, "tools/list", json!({})).await;
    let tools = list["result"]["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 2);
    assert_eq!(
        tools[0],
        json!({"name": "plain", "description": "Plain.", "inputSchema": {"type": "object"}})
    );
    assert_eq!(tools[1]["title"], "Hinted tool");
    assert_eq!(tools[1]["annotations"], json!({"destructiveHint": true}));
    assert!(list["result"].get("nextCursor").is_none());
    assert!(list["result"].get("resultType").is_none());
}
