//! MCP-24 with MCP-29: a handler that ignores its cancellation token is dropped
//! `CANCEL_GRACE` after the cancel, so it cannot hold one of the 8 slots forever; a queued
//! call then runs.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use capability_model::{Annotations, ToolOutput};
use common::{Raw, pair};
use mcp_adapter::McpServer;
use mcp_adapter::limits::CANCEL_GRACE;
use serde_json::json;

#[tokio::test(start_paused = true)]
async fn a_stubborn_handler_loses_its_slot_after_the_grace_period() {
    let server = McpServer::new("s", |r| {
        r.tool(
            "stuck",
            None,
            "Never returns.",
            json!({"type": "object"}),
            Annotations::default(),
            |_, _| async {
                std::future::pending::<()>().await;
                Ok(ToolOutput::text("never"))
            },
        )?;
        r.tool(
            "quick",
            None,
            "Returns.",
            json!({"type": "object"}),
            Annotations::default(),
            |_, _| async { Ok(ToolOutput::text("quick")) },
        )?;
        Ok(())
    })
    .unwrap();
    let (host, plugin) = pair();
    server.serve(plugin);
    let raw = Raw { ch: host };
    raw.initialize("2025-11-25").await;
    for id in 1..=8 {
        raw.send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                        "params": {"name": "stuck", "arguments": {}}}));
    }
    raw.send(json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call",
                    "params": {"name": "quick", "arguments": {}}}));
    while server.calls_in_flight() < 8 {
        tokio::task::yield_now().await;
    }
    raw.send(
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}),
    );
    let start = tokio::time::Instant::now();
    let answer = raw.next().await;
    assert_eq!(answer["id"], 9, "{answer}");
    assert_eq!(answer["result"]["content"][0]["text"], "quick");
    assert!(start.elapsed() >= CANCEL_GRACE, "{:?}", start.elapsed());
    assert!(start.elapsed() < CANCEL_GRACE + Duration::from_secs(1));
    assert_eq!(server.calls_in_flight(), 7);
}
