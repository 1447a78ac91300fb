//! MCP-22/MCP-23 kind 3: the request left and no answer came in time — `Timeout`
//! (`tool_timeout`, side effects unknown); the provider is told with
//! `notifications/cancelled` (MCP-29). Also a provider that never answers `initialize`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use capability_model::{CallError, CancelToken};
use common::{Raw, args, connect_fake, pair};
use mcp_adapter::{ClientError, McpClient, limits::HANDSHAKE_TIMEOUT};

#[tokio::test(start_paused = true)]
async fn mcp22_silent_provider_times_out_and_is_told() {
    let (client, fake) = connect_fake().await;
    let start = tokio::time::Instant::now();
    let result = client
        .call_tool(
            "t",
            args(serde_json::json!({})),
            Duration::from_secs(7),
            &CancelToken::new(),
        )
        .await;
    let e = result.unwrap_err();
    assert_eq!(e, ClientError::Timeout);
    assert_eq!(start.elapsed(), Duration::from_secs(7));
    assert_eq!(e.tool_error_code(), "tool_timeout");
    assert_eq!(e.into_call_error(), CallError::Timeout);
    let req = fake.next().await;
    let note = fake.next().await;
    assert_eq!(note["method"], "notifications/cancelled");
    assert_eq!(note["params"]["requestId"], req["id"]);
    assert_eq!(client.requests_in_flight(), 0);
}

#[tokio::test(start_paused = true)]
async fn a_provider_that_never_answers_initialize_times_out() {
    let (host, plugin) = pair();
    let _silent = Raw { ch: plugin };
    let start = tokio::time::Instant::now();
    let e = McpClient::connect(host).await.unwrap_err();
    assert_eq!(e, ClientError::Timeout);
    assert_eq!(start.elapsed(), HANDSHAKE_TIMEOUT);
}
