//! `tools/call` arguments are checked against the input schema before the handler runs; a
//! mismatch is a one-sentence `isError` that never echoes the value. An unknown tool is a
//! JSON-RPC error (not executed, MCP-22 `Rejected`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use capability_model::{CallError, CancelToken};
use common::{Raw, args, connect, echo_server, pair};
use mcp_adapter::ClientError;
use serde_json::json;

#[tokio::test]
async fn invalid_arguments_never_reach_the_handler() {
    let runs = Arc::new(AtomicUsize::new(0));
    let server = echo_server(runs.clone());
    let (host, plugin) = pair();
    server.serve(plugin);
    let raw = Raw { ch: host };
    raw.initialize("2025-11-25").await;
    for (id, arguments) in [
        (1, json!({})),
        (2, json!({"text": 12345678})),
        (3, json!({"text": ["SECRET-VALUE"]})),
    ] {
        let r = raw
            .request(
                id,
                "tools/call",
                json!({"name": "echo", "arguments": arguments}),
            )
            .await;
        assert_eq!(r["result"]["isError"], true, "{r}");
        let text = r["result"]["content"][0]["text"].as_str().unwrap();
        assert!(text.starts_with("Invalid arguments: "), "{text}");
        assert!(
            !text.contains("SECRET-VALUE") && !text.contains("12345678"),
            "{text}"
        );
    }
    assert_eq!(runs.load(Ordering::SeqCst), 0);
    let ok = raw
        .request(
            9,
            "tools/call",
            json!({"name": "echo", "arguments": {"text": "hi"}}),
        )
        .await;
    assert_eq!(ok["result"]["content"][0]["text"], "hi");
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn mcp22_unknown_tool_is_rejected_not_executed() {
    let runs = Arc::new(AtomicUsize::new(0));
    let client = connect(&echo_server(runs.clone())).await;
    let e = client
        .call_tool(
            "nope",
            args(json!({})),
            Duration::from_secs(5),
            &CancelToken::new(),
        )
        .await
        .unwrap_err();
    assert!(matches!(e, ClientError::Rpc { code: -32602, .. }), "{e:?}");
    assert_eq!(e.tool_error_code(), "tool_failed");
    assert!(matches!(e.into_call_error(), CallError::Rejected { .. }));
    assert_eq!(runs.load(Ordering::SeqCst), 0);
}
