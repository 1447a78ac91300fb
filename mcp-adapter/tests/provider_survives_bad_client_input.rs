//! CH-10 on the provider: unparsable input gets the framing layer's error answer and the
//! channel stays open; tools are refused before `initialize`; bad `tools/call` params and
//! duplicate in-flight ids are JSON-RPC errors.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;

use common::{Raw, echo_server, pair};
use serde_json::json;

#[tokio::test]
async fn garbage_is_answered_and_the_session_goes_on() {
    let server = echo_server(Arc::default());
    let (host, plugin) = pair();
    server.serve(plugin);
    let raw = Raw { ch: host };
    raw.send_text("{not json");
    assert_eq!(raw.next().await["error"]["code"], -32700);
    raw.send_text(r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#);
    assert_eq!(raw.next().await["error"]["code"], -32600);

    let early = raw.request(2, "tools/list", json!({})).await;
    assert_eq!(early["error"]["code"], -32600);

    raw.initialize("2025-11-25").await;
    let bad = raw.request(3, "tools/call", json!({"arguments": {}})).await;
    assert_eq!(bad["error"]["code"], -32602);
    let bad = raw
        .request(4, "tools/call", json!({"name": "echo", "arguments": [1]}))
        .await;
    assert_eq!(bad["error"]["code"], -32602);

    let ok = raw
        .request(
            5,
            "tools/call",
            json!({"name": "echo", "arguments": {"text": "still here"}}),
        )
        .await;
    assert_eq!(ok["result"]["content"][0]["text"], "still here");
}
