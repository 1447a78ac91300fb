//! MCP-22/MCP-28: a request still in the local backlog (the flow-control window was full)
//! when the provider died never left the process: `Closed{dispatched: false}`
//! (`tool_unavailable`), while the one already handed over is `dispatched: true`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use binder_channel::memory;
use capability_model::CancelToken;
use common::{Raw, args};
use mcp_adapter::{ClientError, McpClient};
use serde_json::json;

#[tokio::test]
async fn mcp28_backlogged_request_is_not_dispatched() {
    let (host, plugin, death) = memory::pair_with_death(1_000, 10_123).unwrap();
    let fake = Raw { ch: plugin };
    let (client, ()) = tokio::join!(McpClient::connect(host.clone()), fake.accept("2025-11-25"));
    let client = client.unwrap();
    // Two 30,000-char requests: the second cannot join the first in the 32,768-char window
    // (CH-20), and the fake provider never processes (acks) the first.
    let big = "x".repeat(30_000);
    let token = CancelToken::new();
    let first = client.call_tool(
        "a",
        args(json!({"text": big})),
        Duration::from_secs(30),
        &token,
    );
    let second = client.call_tool(
        "b",
        args(json!({"text": big})),
        Duration::from_secs(30),
        &token,
    );
    let kill = async {
        // initialize and initialized went out, then the first request; the second waits.
        while host.stats().sent < 3 || host.backlog_chars() < 30_000 {
            tokio::task::yield_now().await;
        }
        death.kill_second();
    };
    let (first, second, ()) = tokio::join!(first, second, kill);
    assert_eq!(first.unwrap_err(), ClientError::Closed { dispatched: true });
    let second = second.unwrap_err();
    assert_eq!(second, ClientError::Closed { dispatched: false });
    assert_eq!(second.tool_error_code(), "tool_unavailable");
}
