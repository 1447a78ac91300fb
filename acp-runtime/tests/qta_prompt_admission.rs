//! Prompt admission: QTA-02 (one running prompt per app gives quota_exceeded/busy), QTA-03
//! (over 16,000 U16 gives invalid_params/too_large, third parties only), ACP-33 (empty
//! prompt; over 200,000 gives payload_too_large), ACP-32 (images are unsupported), ACP-20
//! (SELF/DESKTOP prompts queue FIFO).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;
use permissions::Principal;
use serde_json::json;

#[tokio::test]
async fn qta03_third_party_prompt_over_16000_is_too_large_desktop_is_exempt() {
    let h = Harness::simple(ScriptModel::new(vec![text_reply("ok")])).await;
    let mut app = h.connect(app_principal(APP_UID));
    app.initialize().await;
    let s = app.new_session(None).await;
    let big = "x".repeat(16_001);
    let (_, r) = app.prompt(&s, &big).await;
    assert_eq!(r["error"]["code"], -32602, "{r}");
    assert_eq!(r["error"]["data"]["agentosCode"], "invalid_params");
    assert_eq!(r["error"]["data"]["details"]["reason"], "too_large");
    assert!(!r.to_string().contains("xxxx"), "no echo");
    // 16,000 exactly is fine — in UTF-16 units: 8,000 surrogate pairs.
    let (_, r) = app.prompt(&s, &"😀".repeat(8_000)).await;
    assert_eq!(r["result"]["stopReason"], "end_turn", "{r}");

    let mut desk = h.connect(Principal::Desktop);
    let s = desk.new_session(None).await;
    let (_, r) = desk.prompt(&s, &big).await;
    assert_eq!(
        r["result"]["stopReason"], "end_turn",
        "QTA-01: desktop is exempt: {r}"
    );
    let (_, r) = desk.prompt(&s, &"y".repeat(200_001)).await;
    assert_eq!(r["error"]["code"], -32046);
    assert_eq!(r["error"]["data"]["agentosCode"], "payload_too_large");
}

#[tokio::test]
async fn acp32_images_are_unsupported_and_empty_prompts_invalid() {
    let h = Harness::simple(ScriptModel::new(vec![])).await;
    let mut c = h.connect(Principal::Desktop);
    let s = c.new_session(None).await;
    let (_, r) = c
        .request("session/prompt", json!({"sessionId": s, "prompt":[{"type":"text","text":"look"},{"type":"image","data":"AAAA","mimeType":"image/png"}]}))
        .await;
    assert_eq!(r["error"]["code"], -32602);
    assert_eq!(r["error"]["data"]["agentosCode"], "unsupported");
    let (_, r) = c
        .request("session/prompt", json!({"sessionId": s, "prompt":[]}))
        .await;
    assert_eq!(r["error"]["data"]["agentosCode"], "invalid_params");
}

#[tokio::test]
async fn acp32_resource_links_and_text_resources_become_prompt_text() {
    let model = ScriptModel::new(vec![text_reply("ok")]);
    let h = Harness::simple(model.clone()).await;
    let mut c = h.connect(Principal::Desktop);
    let s = c.new_session(None).await;
    let (_, r) = c
        .request(
            "session/prompt",
            json!({"sessionId": s, "prompt":[
                {"type":"text","text":"see"},
                {"type":"resource_link","name":"a.txt","uri":"file:///a.txt"},
                {"type":"resource","resource":{"uri":"file:///b.txt","text":"body"}}
            ]}),
        )
        .await;
    assert_eq!(r["result"]["stopReason"], "end_turn", "{r}");
    let req = model.requests.lock().unwrap()[0].clone();
    let last = req.messages.last().unwrap().clone();
    assert_eq!(
        last,
        acp_runtime::model::ChatMessage::User(
            "see\n[resource] a.txt file:///a.txt\n[resource file:///b.txt]\nbody".into()
        )
    );
}

#[tokio::test]
async fn qta02_second_prompt_of_an_app_is_busy_and_desktop_prompts_queue() {
    let h = Harness::simple(ScriptModel::new(vec![
        Reply::Hang("first".into()),
        text_reply("second"),
    ]))
    .await;
    let mut app = h.connect(app_principal(APP_UID));
    let s1 = app.new_session(None).await;
    let s2 = app.new_session(None).await;
    let id = app
        .start_request(
            "session/prompt",
            json!({"sessionId": s1, "prompt":[{"type":"text","text":"a"}]}),
        )
        .await;
    let first = app.next().await;
    assert_eq!(first["params"]["update"]["content"]["text"], "first");
    // A reconnect does not get around it (counted until the task ends).
    let mut again = h.connect(app_principal(APP_UID));
    let (_, r) = again.prompt(&s2, "b").await;
    assert_eq!(r["error"]["code"], -32048, "{r}");
    assert_eq!(r["error"]["data"]["agentosCode"], "quota_exceeded");
    assert_eq!(r["error"]["data"]["details"]["reason"], "busy");
    assert_eq!(r["error"]["data"]["retryable"], true);
    app.notify("session/cancel", json!({"sessionId": s1})).await;
    let (_, r) = app.wait_response(id).await;
    assert_eq!(r["result"]["stopReason"], "cancelled");
    let (_, r) = again.prompt(&s2, "b").await;
    assert_eq!(
        r["result"]["stopReason"], "end_turn",
        "the slot was returned: {r}"
    );
}

#[tokio::test]
async fn acp20_desktop_prompts_in_one_session_run_fifo() {
    let h = Harness::simple(ScriptModel::new(vec![text_reply("one"), text_reply("two")])).await;
    let mut c = h.connect(Principal::Desktop);
    let s = c.new_session(None).await;
    let a = c
        .start_request(
            "session/prompt",
            json!({"sessionId": s, "prompt":[{"type":"text","text":"a"}]}),
        )
        .await;
    let b = c
        .start_request(
            "session/prompt",
            json!({"sessionId": s, "prompt":[{"type":"text","text":"b"}]}),
        )
        .await;
    let mut order = Vec::new();
    let mut texts = Vec::new();
    while order.len() < 2 {
        let v = c.next().await;
        if let Some(id) = v.get("id").and_then(serde_json::Value::as_u64) {
            assert_eq!(v["result"]["stopReason"], "end_turn");
            order.push(id);
        } else {
            texts.push(
                v["params"]["update"]["content"]["text"]
                    .as_str()
                    .unwrap()
                    .to_owned(),
            );
        }
    }
    assert_eq!(order, [a, b]);
    assert_eq!(texts, ["one", "two"]);
}
