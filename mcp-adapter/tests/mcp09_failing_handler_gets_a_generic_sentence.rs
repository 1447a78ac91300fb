//! MCP-09: a handler that fails or panics becomes an `isError` result with a generic
//! sentence; its error text, panic message and stack never reach the wire.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use capability_model::{Annotations, ToolOutput};
use common::{Raw, pair};
use mcp_adapter::{GENERIC_FAILURE, HandlerError, McpServer};
use serde_json::json;

#[tokio::test]
async fn mcp09_errors_and_panics_become_a_generic_is_error() {
    let server = McpServer::new("s", |r| {
        r.tool(
            "fails",
            None,
            "F.",
            json!({"type": "object"}),
            Annotations::default(),
            |_, _| async {
                let e: HandlerError = "SECRET at /data/data/com.x/db.sqlite line 42".into();
                Err(e)
            },
        )?;
        r.tool(
            "panics",
            None,
            "P.",
            json!({"type": "object"}),
            Annotations::default(),
            |_, _| async {
                if std::hint::black_box(true) {
                    panic!("SECRET panic payload");
                }
                Ok(ToolOutput::text("unreachable"))
            },
        )?;
        Ok(())
    })
    .unwrap();
    let (host, plugin) = pair();
    server.serve(plugin);
    let raw = Raw { ch: host };
    raw.initialize("2025-11-25").await;
    for (id, tool) in [(1, "fails"), (2, "panics")] {
        let r = raw
            .request(id, "tools/call", json!({"name": tool, "arguments": {}}))
            .await;
        let wire = r.to_string();
        assert!(!wire.contains("SECRET"), "{wire}");
        assert_eq!(
            r["result"],
            json!({"content": [{"type": "text", "text": GENERIC_FAILURE}], "isError": true})
        );
    }
    // The server keeps serving after a panic.
    let list = raw.request(3, "tools/list", json!({})).await;
    assert_eq!(list["result"]["tools"].as_array().unwrap().len(), 2);
}
