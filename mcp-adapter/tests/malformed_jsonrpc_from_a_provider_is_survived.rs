//! Bad input from a provider: invalid JSON, batches, wrong `jsonrpc`, answers to ids never
//! asked, and server-initiated requests (sampling) are ignored or refused; the connection
//! keeps working. A malformed `initialize` or `tools/call` result is a typed error.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use capability_model::CancelToken;
use common::{Raw, args, connect_fake, pair};
use mcp_adapter::{ClientError, McpClient};
use serde_json::json;

#[tokio::test]
async fn garbage_between_answers_does_not_break_the_connection() {
    let (client, fake) = connect_fake().await;
    let token = CancelToken::new();
    let call = client.call_tool("t", args(json!({})), Duration::from_secs(5), &token);
    let script = async {
        let req = fake.next().await;
        fake.send_text("not json at all");
        fake.send_text("[1,2,3]");
        fake.send_text(r#"{"jsonrpc":"1.0","id":1,"result":{}}"#);
        fake.send(json!({"jsonrpc": "2.0", "id": 999_999, "result": {"content": []}}));
        fake.send(
            json!({"jsonrpc": "2.0", "id": "s1", "method": "sampling/createMessage", "params": {}}),
        );
        // The two unparsable messages are answered with JSON-RPC errors (id null) first.
        for code in [-32700, -32600] {
            let e = fake.next().await;
            assert_eq!(e["id"], serde_json::Value::Null);
            assert_eq!(e["error"]["code"], code);
        }
        let refusal = fake.next().await;
        assert_eq!(refusal["id"], "s1");
        assert_eq!(refusal["error"]["code"], -32601);
        fake.send(json!({"jsonrpc": "2.0", "id": "p1", "method": "ping"}));
        let pong = fake.next().await;
        assert_eq!(pong, json!({"jsonrpc": "2.0", "id": "p1", "result": {}}));
        fake.answer(
            &req["id"],
            json!({"content": [{"type": "text", "text": "fine"}]}),
        );
    };
    let (result, ()) = tokio::join!(call, script);
    assert_eq!(result.unwrap().joined_text(), "fine");
    assert!(
        client.malformed_messages() >= 4,
        "{}",
        client.malformed_messages()
    );
    assert!(!client.is_closed());
}

#[tokio::test]
async fn a_result_that_is_not_a_tool_result_is_an_invalid_response() {
    let (client, fake) = connect_fake().await;
    let token = CancelToken::new();
    let call = client.call_tool("t", args(json!({})), Duration::from_secs(5), &token);
    let script = async {
        let req = fake.next().await;
        fake.answer(&req["id"], json!({"content": "not an array"}));
    };
    let (result, ()) = tokio::join!(call, script);
    let e = result.unwrap_err();
    assert_eq!(e, ClientError::InvalidResponse("tools/call"));
    // The call may have run: reported as an unreadable result (outcome unknown).
    assert_eq!(e.tool_error_code(), "tool_result_unknown");
    assert_eq!(
        e.into_call_error(),
        capability_model::CallError::InvalidResult
    );
}

#[tokio::test]
async fn a_malformed_initialize_result_fails_the_connect() {
    let (host, plugin) = pair();
    let fake = Raw { ch: plugin };
    let script = async {
        let init = fake.next().await;
        fake.answer(&init["id"], json!({"protocolVersion": 5}));
    };
    let (result, ()) = tokio::join!(McpClient::connect(host), script);
    assert_eq!(
        result.unwrap_err(),
        ClientError::InvalidResponse("initialize")
    );
}
