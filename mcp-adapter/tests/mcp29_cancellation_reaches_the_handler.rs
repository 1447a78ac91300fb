//! MCP-29: cancelling a call sends `notifications/cancelled` for its request id; on the
//! provider that fires the handler's cancellation token, and no response is sent.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use capability_model::{Annotations, CallError, CancelToken, ToolOutput};
use common::{Raw, args, connect, connect_fake, pair};
use mcp_adapter::{ClientError, McpServer};
use serde_json::json;
use tokio::sync::oneshot;

/// A server whose `wait` tool reports (through `seen`) that its token fired.
fn waiting_server(seen: Arc<Mutex<Option<oneshot::Sender<()>>>>) -> McpServer {
    McpServer::new("s", move |r| {
        let seen = seen.clone();
        r.tool(
            "wait",
            None,
            "Waits until cancelled.",
            json!({"type": "object"}),
            Annotations::default(),
            move |_, cancel| {
                let seen = seen.clone();
                async move {
                    cancel.cancelled().await;
                    if let Some(tx) = seen.lock().unwrap().take() {
                        let _ = tx.send(());
                    }
                    Ok(ToolOutput::text("cancelled"))
                }
            },
        )?;
        Ok(())
    })
    .unwrap()
}

#[tokio::test]
async fn mcp29_client_cancel_fires_the_handler_token() {
    let (tx, rx) = oneshot::channel();
    let server = waiting_server(Arc::new(Mutex::new(Some(tx))));
    let client = connect(&server).await;
    let cancel = CancelToken::new();
    let call = client.call_tool("wait", args(json!({})), Duration::from_secs(60), &cancel);
    let fire = async {
        while server.calls_in_flight() == 0 {
            tokio::task::yield_now().await;
        }
        cancel.cancel();
    };
    let (result, ()) = tokio::join!(call, fire);
    assert_eq!(result.unwrap_err(), ClientError::Cancelled);
    assert_eq!(
        ClientError::Cancelled.into_call_error(),
        CallError::Cancelled
    );
    tokio::time::timeout(Duration::from_secs(5), rx)
        .await
        .unwrap()
        .unwrap();
    // The slot is free again.
    while server.calls_in_flight() != 0 {
        tokio::task::yield_now().await;
    }
}

#[tokio::test]
async fn mcp29_provider_sends_no_response_to_a_cancelled_request() {
    let (tx, rx) = oneshot::channel();
    let server = waiting_server(Arc::new(Mutex::new(Some(tx))));
    let (host, plugin) = pair();
    server.serve(plugin);
    let raw = Raw { ch: host };
    raw.initialize("2025-11-25").await;
    raw.send(
        json!({"jsonrpc": "2.0", "id": "call-1", "method": "tools/call",
                    "params": {"name": "wait", "arguments": {}}}),
    );
    while server.calls_in_flight() == 0 {
        tokio::task::yield_now().await;
    }
    raw.send(
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                    "params": {"requestId": "call-1", "reason": "user"}}),
    );
    tokio::time::timeout(Duration::from_secs(5), rx)
        .await
        .unwrap()
        .unwrap();
    // The next answer is to the ping, not to the cancelled call.
    raw.send(json!({"jsonrpc": "2.0", "id": 5, "method": "ping"}));
    let pong = raw.next().await;
    assert_eq!(pong, json!({"jsonrpc": "2.0", "id": 5, "result": {}}));
    // And nothing follows: the cancelled call is never answered.
    let late = tokio::time::timeout(Duration::from_millis(300), raw.ch.recv()).await;
    assert!(late.is_err(), "unexpected message: {late:?}");
}

#[tokio::test]
async fn mcp29_cancel_sends_cancelled_with_the_request_id() {
    let (client, fake) = connect_fake().await;
    let cancel = CancelToken::new();
    let call = client.call_tool("slow", args(json!({})), Duration::from_secs(60), &cancel);
    let script = async {
        let req = fake.next().await;
        assert_eq!(req["method"], "tools/call");
        cancel.cancel();
        let note = fake.next().await;
        assert_eq!(note["method"], "notifications/cancelled");
        assert_eq!(note["params"]["requestId"], req["id"]);
    };
    let (result, ()) = tokio::join!(call, script);
    assert_eq!(result.unwrap_err(), ClientError::Cancelled);
}
