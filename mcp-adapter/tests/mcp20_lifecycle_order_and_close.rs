//! MCP-20: initialize → notifications/initialized → tools/list → tools/call, in that order on
//! the wire; `close()` ends the channel, and nothing is sent afterwards.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use capability_model::CancelToken;
use common::{Raw, args, pair};
use mcp_adapter::{ClientError, McpClient};
use serde_json::json;

#[tokio::test]
async fn mcp20_messages_follow_the_lifecycle_and_close_ends_the_channel() {
    let (host, plugin) = pair();
    let fake = Raw { ch: plugin };
    let host_side = async {
        let client = McpClient::connect(host).await.unwrap();
        client.list_capabilities("p", "s").await.unwrap();
        let token = CancelToken::new();
        client
            .call_tool("t", args(json!({})), Duration::from_secs(5), &token)
            .await
            .unwrap();
        client.close().await;
        client
    };
    let provider_side = async {
        let mut methods = Vec::new();
        let init = fake.next().await;
        methods.push(init["method"].clone());
        fake.answer(
            &init["id"],
            json!({"protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
                                        "serverInfo": {"name": "s", "version": "1"}}),
        );
        loop {
            let m = fake.next().await;
            methods.push(m["method"].clone());
            match m["method"].as_str() {
                Some("tools/list") => fake.answer(&m["id"], json!({"tools": []})),
                Some("tools/call") => {
                    fake.answer(&m["id"], json!({"content": []}));
                    break;
                }
                _ => {}
            }
        }
        assert_eq!(fake.ch.recv().await, None, "the client closed the channel");
        methods
    };
    let (client, methods) = tokio::join!(host_side, provider_side);
    assert_eq!(
        methods,
        [
            json!("initialize"),
            json!("notifications/initialized"),
            json!("tools/list"),
            json!("tools/call")
        ]
    );
    assert!(client.is_closed());
    let token = CancelToken::new();
    let e = client
        .call_tool("t", args(json!({})), Duration::from_secs(5), &token)
        .await
        .unwrap_err();
    assert_eq!(e, ClientError::Closed { dispatched: false });
}
