//! MCP-22/MCP-23 kind 4: a request longer than 65,536 UTF-16 units is refused before it
//! is queued or sent — `TooLarge`, no side effects; the connection stays usable.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use capability_model::{CallError, CancelToken};
use common::{args, connect_fake};
use mcp_adapter::ClientError;
use serde_json::json;

#[tokio::test]
async fn mcp22_oversize_request_is_too_large_and_not_sent() {
    let (client, fake) = connect_fake().await;
    // 40,000 "é" are 40,000 UTF-16 units but 80,000 bytes; 70,000 "x" exceed the limit.
    let fits = "é".repeat(40_000);
    let too_big = "x".repeat(70_000);
    let e = client
        .call_tool(
            "t",
            args(json!({"text": too_big})),
            Duration::from_secs(5),
            &CancelToken::new(),
        )
        .await
        .unwrap_err();
    assert_eq!(e, ClientError::TooLarge);
    assert_eq!(e.tool_error_code(), "tool_failed");
    assert_eq!(e.into_call_error(), CallError::TooLarge);
    // Counted in UTF-16 units, not bytes: this one is sent.
    let token = CancelToken::new();
    let call = client.call_tool(
        "t",
        args(json!({"text": fits})),
        Duration::from_secs(5),
        &token,
    );
    let script = async {
        let req = fake.next().await;
        // The first message after the handshake is the one that fits.
        assert_eq!(
            req["params"]["arguments"]["text"]
                .as_str()
                .unwrap()
                .chars()
                .count(),
            40_000
        );
        fake.answer(
            &req["id"],
            json!({"content": [{"type": "text", "text": "ok"}]}),
        );
    };
    let (result, ()) = tokio::join!(call, script);
    assert_eq!(result.unwrap().joined_text(), "ok");
}
