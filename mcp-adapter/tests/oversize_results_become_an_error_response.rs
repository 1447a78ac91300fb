//! CH-13 through MCP: a 10 MB tool result cannot be sent; the provider answers the request
//! with an error naming the size instead, and the host sees `Rpc` (not a hang).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use capability_model::{Annotations, CancelToken, ToolOutput};
use common::{args, connect};
use mcp_adapter::{ClientError, McpServer};
use serde_json::json;

#[tokio::test]
async fn a_10_mb_result_is_replaced_by_an_error() {
    let server = McpServer::new("s", |r| {
        r.tool(
            "huge",
            None,
            "H.",
            json!({"type": "object"}),
            Annotations::default(),
            |_, _| async { Ok(ToolOutput::text("x".repeat(10 * 1024 * 1024))) },
        )?;
        r.tool(
            "small",
            None,
            "S.",
            json!({"type": "object"}),
            Annotations::default(),
            |_, _| async { Ok(ToolOutput::text("small")) },
        )?;
        Ok(())
    })
    .unwrap();
    let client = connect(&server).await;
    let e = client
        .call_tool(
            "huge",
            args(json!({})),
            Duration::from_secs(30),
            &CancelToken::new(),
        )
        .await
        .unwrap_err();
    match e {
        ClientError::Rpc { code, message } => {
            assert_eq!(code, -32603);
            assert!(
                message.starts_with("binder-channel-v1: message of "),
                "{message}"
            );
            assert!(message.ends_with("exceeds 65536"), "{message}");
        }
        other => panic!("{other:?}"),
    }
    let ok = client
        .call_tool(
            "small",
            args(json!({})),
            Duration::from_secs(30),
            &CancelToken::new(),
        )
        .await
        .unwrap();
    assert_eq!(ok.joined_text(), "small");
}
