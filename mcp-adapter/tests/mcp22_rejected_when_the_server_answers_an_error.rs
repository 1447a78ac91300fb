//! MCP-22/MCP-23 kind 1: the server answered with a JSON-RPC error — the tool did not run;
//! `Rejected`, code `tool_failed`; the provider's text is cleaned before it is passed on.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use capability_model::{CallError, CancelToken};
use common::{args, connect_fake};
use mcp_adapter::ClientError;
use serde_json::json;

#[tokio::test]
async fn mcp22_error_response_is_rejected() {
    let (client, fake) = connect_fake().await;
    let token = CancelToken::new();
    let call = client.call_tool("t", args(json!({"a": 1})), Duration::from_secs(5), &token);
    let script = async {
        let req = fake.next().await;
        assert_eq!(req["params"], json!({"name": "t", "arguments": {"a": 1}}));
        fake.send(json!({"jsonrpc": "2.0", "id": req["id"],
                         "error": {"code": -32000, "message": "No such note.\n\u{1b}[31mX"}}));
    };
    let (result, ()) = tokio::join!(call, script);
    let e = result.unwrap_err();
    assert_eq!(
        e,
        ClientError::Rpc {
            code: -32000,
            message: "No such note.  [31mX".into()
        }
    );
    assert_eq!(e.tool_error_code(), "tool_failed");
    assert_eq!(
        e.into_call_error(),
        CallError::Rejected {
            message: "No such note.  [31mX".into()
        }
    );
}
