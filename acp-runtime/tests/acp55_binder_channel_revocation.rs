//! IAcpService over binder-channel (CH-02): a channel whose kernel UID resolved to an app is
//! served with that identity; the caller must be authorized (AUT-02, AUT-09); revoking it
//! closes its channel at once and cancels its running task, other owners untouched (ACP-55).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use binder_channel::Channel;
use common::*;
use permissions::{AgentosCode, Principal, Uid};
use serde_json::{Value, json};

async fn recv(c: &Channel) -> Option<Value> {
    tokio::time::timeout(Duration::from_secs(10), c.recv())
        .await
        .expect("timed out")
        .map(|m| serde_json::from_str(&m).unwrap())
}

async fn admit(h: &Harness, uid: u32) {
    // First contact: the prompt is shown (FixedSurface allows) and `open` says pending.
    let first = h.rt.permissions().open(Uid(uid));
    assert_eq!(first.unwrap_err().code, AgentosCode::AuthorizationPending);
    for _ in 0..100 {
        if h.rt.permissions().open(Uid(uid)).is_ok() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("never admitted");
}

#[tokio::test]
async fn acp55_revoking_an_app_closes_its_channel_and_cancels_its_task() {
    let h = Harness::simple(ScriptModel::new(vec![
        Reply::Hang("working".into()),
        Reply::Hang("desk".into()),
    ]))
    .await;
    admit(&h, APP_UID).await;
    // Runtime end sees the app's UID as its peer.
    let (runtime_end, client) = binder_channel::memory::pair(1_000, APP_UID).unwrap();
    assert_eq!(runtime_end.peer().uid, APP_UID);
    let rt = h.rt.clone();
    let served =
        tokio::spawn(async move { rt.serve_channel(runtime_end, app_principal(APP_UID)).await });

    client.send(json!({"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/","mcpServers":[]}}).to_string()).unwrap();
    let r = recv(&client).await.unwrap();
    let session = r["result"]["sessionId"].as_str().unwrap().to_owned();
    client
        .send(json!({"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId": session, "prompt":[{"type":"text","text":"go"}]}}).to_string())
        .unwrap();
    let first = recv(&client).await.unwrap();
    assert_eq!(first["params"]["update"]["content"]["text"], "working");

    // Another owner's task keeps running.
    let mut desk = h.connect(Principal::Desktop);
    let ds = desk.new_session(None).await;
    let did = desk
        .start_request(
            "session/prompt",
            json!({"sessionId": ds, "prompt":[{"type":"text","text":"x"}]}),
        )
        .await;
    let n = desk.next().await;
    assert_eq!(n["params"]["update"]["content"]["text"], "desk");

    h.rt.permissions().revoke_caller("com.example.caller");
    // The channel closes at once: nothing more is delivered.
    let mut rest = Vec::new();
    while let Some(v) = recv(&client).await {
        rest.push(v);
    }
    tokio::time::timeout(Duration::from_secs(5), served)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    // The app's task was cancelled and recorded as such.
    let db = rusqlite::Connection::open(h.rt.data_dir().join("runtime.db")).unwrap();
    let mut stop = None;
    for _ in 0..100 {
        stop = db
            .query_row(
                "SELECT stop_reason FROM tasks WHERE session_id = ?1",
                [&session],
                |r| r.get::<_, Option<String>>(0),
            )
            .unwrap();
        if stop.is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(stop.as_deref(), Some("cancelled"));
    // The desktop turn is untouched: still running until its own cancel.
    desk.notify("session/cancel", json!({"sessionId": ds}))
        .await;
    let (_, r) = desk.wait_response(did).await;
    assert_eq!(r["result"]["stopReason"], "cancelled");
    // A revoked app cannot open again.
    assert_eq!(
        h.rt.permissions().open(Uid(APP_UID)).unwrap_err().code,
        AgentosCode::Denied
    );
}

#[tokio::test]
async fn aut09_an_unauthorized_channel_is_closed_on_its_first_request() {
    let h = Harness::simple(ScriptModel::new(vec![])).await;
    let (runtime_end, client) = binder_channel::memory::pair(1_000, OTHER_APP_UID).unwrap();
    assert_eq!(runtime_end.peer().uid, OTHER_APP_UID);
    let rt = h.rt.clone();
    let served = tokio::spawn(async move {
        rt.serve_channel(runtime_end, app_principal(OTHER_APP_UID))
            .await
    });
    client
        .send(json!({"jsonrpc":"2.0","id":1,"method":"session/list"}).to_string())
        .unwrap();
    assert!(recv(&client).await.is_none(), "closed without an answer");
    tokio::time::timeout(Duration::from_secs(5), served)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
}
