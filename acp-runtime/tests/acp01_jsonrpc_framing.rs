//! ACP-01, ACP-60, ACP-61: malformed JSON-RPC gets -32700 / -32600, unknown methods -32601,
//! and every outgoing line is exactly one JSON-RPC 2.0 message with no extra fields.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;
use permissions::Principal;
use serde_json::{Value, json};

fn assert_jsonrpc_shape(v: &Value) {
    let obj = v.as_object().unwrap();
    assert_eq!(obj["jsonrpc"], "2.0");
    for k in obj.keys() {
        assert!(
            ["jsonrpc", "id", "result", "error", "method", "params"].contains(&k.as_str()),
            "extra field {k} in {v}"
        );
    }
    if let Some(e) = obj.get("error") {
        let e = e.as_object().unwrap();
        assert!(e["code"].is_i64());
        let data = &e["data"];
        let code = data["agentosCode"].as_str().unwrap();
        assert!(data["retryable"].is_boolean());
        assert!(
            e["message"]
                .as_str()
                .unwrap()
                .starts_with(&format!("{code}: "))
        );
    }
}

#[tokio::test]
async fn acp61_malformed_messages_get_standard_codes() {
    let h = Harness::simple(ScriptModel::new(vec![])).await;
    let mut c = h.connect(Principal::Desktop);
    c.send_raw("{not json").await;
    let r = c.next().await;
    assert_eq!(r["error"]["code"], -32700);
    assert_eq!(r["id"], Value::Null);

    c.send_raw("[1,2]").await;
    assert_eq!(c.next().await["error"]["code"], -32600);

    c.send_raw(r#"{"id":7,"method":"initialize"}"#).await;
    let r = c.next().await;
    assert_eq!(r["error"]["code"], -32600);
    assert_eq!(r["id"], 7);

    c.send_raw(r#"{"jsonrpc":"2.0","id":{"x":1},"method":"initialize"}"#)
        .await;
    assert_eq!(c.next().await["error"]["code"], -32600);

    c.send_raw(r#"{"jsonrpc":"2.0","id":8,"method":"fs/read_text_file","params":{}}"#)
        .await;
    let r = c.next().await;
    assert_eq!(r["error"]["code"], -32601);
    assert_eq!(r["error"]["data"]["agentosCode"], "unsupported");
    assert_eq!(r["id"], 8);

    // A request with array params is invalid_params.
    c.send_raw(r#"{"jsonrpc":"2.0","id":9,"method":"session/list","params":[1]}"#)
        .await;
    let r = c.next().await;
    assert_eq!(r["error"]["code"], -32602);

    // The connection still works afterwards.
    let init = c.initialize().await;
    assert_eq!(init["result"]["protocolVersion"], 1);
    for line in &c.raw {
        let v: Value = serde_json::from_str(line).unwrap();
        assert_jsonrpc_shape(&v);
    }
}

#[tokio::test]
async fn acp39_long_answers_are_split_and_every_line_stays_under_the_limit() {
    // 70,000 characters that each escape to 6 bytes ("\u0001") in JSON.
    let long: String = "\u{1}".repeat(70_000);
    let h = Harness::simple(ScriptModel::new(vec![text_reply(&long)])).await;
    let mut c = h.connect(Principal::Desktop);
    c.initialize().await;
    let s = c.new_session(None).await;
    let (notes, resp) = c.prompt(&s, "hello").await;
    assert_eq!(resp["result"]["stopReason"], "end_turn");
    let ups = updates(&notes);
    assert!(
        ups.len() >= 9,
        "70,000 chars need at least 9 chunks of 8,192"
    );
    assert_eq!(agent_text(&ups), long);
    for line in &c.raw {
        assert!(
            line.encode_utf16().count() <= 65_536,
            "line of {} units",
            line.encode_utf16().count()
        );
        assert_jsonrpc_shape(&serde_json::from_str(line).unwrap());
    }
}

#[tokio::test]
async fn notifications_never_get_answers_and_unknown_ones_are_ignored() {
    let h = Harness::simple(ScriptModel::new(vec![])).await;
    let mut c = h.connect(Principal::Desktop);
    c.notify("some/unknown_notification", json!({})).await;
    c.notify("session/cancel", json!({"sessionId":"ses_nope"}))
        .await;
    let (notes, r) = c.request("session/list", json!({})).await;
    assert!(notes.is_empty(), "{notes:?}");
    assert!(r["result"]["sessions"].is_array());
}
