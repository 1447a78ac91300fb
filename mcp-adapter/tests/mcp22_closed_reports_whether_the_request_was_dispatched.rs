//! MCP-22/MCP-23/MCP-28 kind 2: the connection closed. A request that had left ends as
//! `Closed{dispatched: true}` (`tool_result_unknown`); one issued after the close was never
//! sent: `Closed{dispatched: false}` (`tool_unavailable`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use binder_channel::memory;
use capability_model::{CallError, CancelToken};
use common::{Raw, args};
use mcp_adapter::{ClientError, McpClient};
use serde_json::json;

#[tokio::test]
async fn mcp28_provider_death_mid_call_is_closed_dispatched() {
    let (host, plugin, death) = memory::pair_with_death(1_000, 10_123).unwrap();
    let fake = Raw { ch: plugin };
    let (client, ()) = tokio::join!(McpClient::connect(host), fake.accept("2025-11-25"));
    let client = client.unwrap();
    let token = CancelToken::new();
    let call = client.call_tool("t", args(json!({})), Duration::from_secs(30), &token);
    let script = async {
        let req = fake.next().await;
        assert_eq!(req["method"], "tools/call");
        death.kill_second();
    };
    let (result, ()) = tokio::join!(call, script);
    let e = result.unwrap_err();
    assert_eq!(e, ClientError::Closed { dispatched: true });
    assert_eq!(e.tool_error_code(), "tool_result_unknown");
    assert_eq!(e.into_call_error(), CallError::Closed { dispatched: true });

    // The connection is gone: the next call is never sent.
    while !client.is_closed() {
        tokio::task::yield_now().await;
    }
    let e = client
        .call_tool(
            "t",
            args(json!({})),
            Duration::from_secs(30),
            &CancelToken::new(),
        )
        .await
        .unwrap_err();
    assert_eq!(e, ClientError::Closed { dispatched: false });
    assert_eq!(e.tool_error_code(), "tool_unavailable");
}

#[tokio::test]
async fn mcp22_provider_closing_its_end_mid_call_is_closed_dispatched() {
    let (host, plugin) = memory::pair(1_000, 10_123).unwrap();
    let fake = Raw { ch: plugin };
    let (client, ()) = tokio::join!(McpClient::connect(host), fake.accept("2025-11-25"));
    let client = client.unwrap();
    let token = CancelToken::new();
    let call = client.call_tool("t", args(json!({})), Duration::from_secs(30), &token);
    let script = async {
        fake.next().await;
        fake.ch.close().await;
    };
    let (result, ()) = tokio::join!(call, script);
    assert_eq!(
        result.unwrap_err(),
        ClientError::Closed { dispatched: true }
    );
}
