//! Sessions: ids (ACP-10), ownership and indistinguishable `session_not_found` (ACP-11/12),
//! toolScope validation (CAT-34/35) and immutability (CAT-36), list/delete/close/fork/resume
//! (ACP-15..19), initialize (ACP-03, CAT-41), autoSelect negotiation (ACP-05, CAT-43).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;
use permissions::Principal;
use serde_json::{Value, json};

#[tokio::test]
async fn acp03_initialize_declares_extensions_and_honest_capabilities() {
    let h = Harness::simple(ScriptModel::new(vec![])).await;
    let mut c = h.connect(Principal::Desktop);
    let r = c.initialize().await["result"].clone();
    assert_eq!(r["protocolVersion"], 1);
    assert_eq!(r["authMethods"], json!([]));
    let caps = &r["agentCapabilities"];
    assert_eq!(caps["loadSession"], true);
    assert_eq!(caps["promptCapabilities"]["image"], false);
    assert_eq!(caps["promptCapabilities"]["audio"], false);
    assert_eq!(caps["mcpCapabilities"]["sse"], false);
    let meta = &r["_meta"]["org.agentos"];
    assert_eq!(meta["profile"], 1);
    assert_eq!(meta["securityLevel"], "best_effort");
    for ext in ["toolScope", "sessionSetup", "sessionAutoSelect"] {
        assert_eq!(meta["extensions"][ext], json!({"version": 1}), "{ext}");
    }
    // Nothing added at the root (ACP-04).
    for k in r.as_object().unwrap().keys() {
        assert!(
            [
                "protocolVersion",
                "agentCapabilities",
                "authMethods",
                "agentInfo",
                "_meta"
            ]
            .contains(&k.as_str()),
            "{k}"
        );
    }
}

fn session_ids(list: &Value) -> Vec<String> {
    list["result"]["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["sessionId"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn cat34_bad_tool_scopes_are_invalid_params_and_create_no_session() {
    let h = Harness::simple(ScriptModel::new(vec![])).await;
    let mut c = h.connect(Principal::Desktop);
    c.initialize().await;
    let long = "p".repeat(129);
    let too_many: Vec<Value> = (0..33)
        .map(|i| json!({"plugin": format!("p{i}"), "tool": "t"}))
        .collect();
    let bad = [
        json!("not an array"),
        json!({"plugin": "a", "tool": "b"}),
        json!([1]),
        json!([{"plugin": "a"}]),
        json!([{"plugin": "a", "tool": 5}]),
        json!([{"plugin": "", "tool": "b"}]),
        json!([{"plugin": long, "tool": "b"}]),
        Value::Array(too_many),
    ];
    for scope in bad {
        let (_, r) = c
            .request("session/new", json!({"cwd": "/", "mcpServers": [], "_meta": {"org.agentos": {"toolScope": scope}}}))
            .await;
        assert_eq!(r["error"]["code"], -32602, "{scope} → {r}");
        assert_eq!(r["error"]["data"]["agentosCode"], "invalid_params");
        assert!(
            !r["error"]["message"].as_str().unwrap().contains("ppppp"),
            "no echo (ACP-63)"
        );
    }
    let (_, list) = c.request("session/list", json!({})).await;
    assert!(
        session_ids(&list).is_empty(),
        "no session was created: {list}"
    );
    // 32 entries of 128 characters are fine; null is unrestricted.
    let ok: Vec<Value> = (0..32)
        .map(|i| json!({"plugin": format!("{i:0>128}"), "tool": "t"}))
        .collect();
    c.new_session(Some(json!({"toolScope": ok}))).await;
    c.new_session(Some(json!({"toolScope": null}))).await;
}

#[tokio::test]
async fn acp12_foreign_deleted_unknown_and_malformed_ids_answer_identically() {
    let h = Harness::simple(ScriptModel::new(vec![text_reply("hi")])).await;
    let mut owner = h.connect(app_principal(APP_UID));
    let mut other = h.connect(app_principal(OTHER_APP_UID));
    owner.initialize().await;
    other.initialize().await;
    let mine = owner.new_session(None).await;
    assert!(mine.starts_with("ses_") && mine.len() == 30, "{mine}");
    let deleted = owner.new_session(None).await;
    let (_, r) = owner
        .request("session/delete", json!({"sessionId": deleted}))
        .await;
    assert_eq!(r["result"], json!({}));

    let unknown = "ses_00000000000000000000000000";
    let malformed = "ses_not-a-ulid";
    let mut bodies = Vec::new();
    for (use_other, id) in [
        (true, mine.as_str()),
        (false, deleted.as_str()),
        (false, unknown),
        (false, malformed),
    ] {
        let client = if use_other { &mut other } else { &mut owner };
        for method in [
            "session/load",
            "session/prompt",
            "session/set_mode",
            "session/delete",
        ] {
            let (_, r) = client
                .request(method, json!({"sessionId": id, "cwd": "/", "mcpServers": [], "prompt": [{"type":"text","text":"x"}], "modeId": "chat"}))
                .await;
            bodies.push(r["error"].to_string());
        }
    }
    assert!(bodies.iter().all(|b| b == &bodies[0]), "{bodies:#?}");
    let e: Value = serde_json::from_str(&bodies[0]).unwrap();
    assert_eq!(e["code"], -32002);
    assert_eq!(e["data"]["agentosCode"], "session_not_found");
    // Lists are per owner (ACP-11, ACP-17); SELF sees all.
    let (_, l) = other.request("session/list", json!({})).await;
    assert!(session_ids(&l).is_empty());
    let (_, l) = owner.request("session/list", json!({})).await;
    assert_eq!(session_ids(&l), std::slice::from_ref(&mine));
    let mut ui = h.connect(Principal::SelfUi);
    let (_, l) = ui.request("session/list", json!({})).await;
    assert_eq!(session_ids(&l), std::slice::from_ref(&mine));
    let (_, r) = ui
        .request("session/resume", json!({"sessionId": mine, "cwd": "/"}))
        .await;
    assert!(r["result"].is_object(), "{r}");
}

#[tokio::test]
async fn cat36_fork_narrows_scope_and_load_ignores_a_new_scope() {
    let h = Harness::simple(ScriptModel::new(vec![])).await;
    let mut c = h.connect(Principal::Desktop);
    c.initialize().await;
    let a = json!({"plugin":"p","tool":"a"});
    let b = json!({"plugin":"p","tool":"b"});
    let s = c
        .new_session(Some(json!({"toolScope": [a.clone(), b.clone()]})))
        .await;
    // Fork with a disjoint scope: empty intersection = no tools, not unrestricted.
    let (_, f) = c
        .request("session/fork", json!({"sessionId": s, "cwd": "/", "_meta": {"org.agentos": {"toolScope": [{"plugin":"p","tool":"z"}]}}}))
        .await;
    let forked = f["result"]["sessionId"].as_str().unwrap().to_owned();
    assert_ne!(forked, s);
    let (_, f2) = c
        .request("session/fork", json!({"sessionId": s, "cwd": "/", "_meta": {"org.agentos": {"toolScope": [b.clone(), {"plugin":"q","tool":"c"}]}}}))
        .await;
    let narrowed = f2["result"]["sessionId"].as_str().unwrap().to_owned();
    // Read the stored scopes through the store.
    let store = acp_runtime::store::Store::open(h.rt.data_dir()).unwrap();
    let scope_of = |id: &str| {
        capability_model::ToolScope::from_stored(&store.session(id).unwrap().unwrap().scope)
    };
    assert_eq!(
        scope_of(&forked),
        capability_model::ToolScope::restricted([])
    );
    assert_eq!(scope_of(&narrowed).to_json(), json!([b]));
    // load and resume ignore a scope in the request.
    let (_, r) = c
        .request("session/load", json!({"sessionId": s, "cwd": "/", "mcpServers": [], "_meta": {"org.agentos": {"toolScope": []}}}))
        .await;
    assert!(r["result"].is_object());
    assert_eq!(scope_of(&s).to_json().as_array().unwrap().len(), 2);
}

#[tokio::test]
async fn acp19_close_keeps_the_session_and_delete_removes_it() {
    let h = Harness::simple(ScriptModel::new(vec![text_reply("one")])).await;
    let mut c = h.connect(Principal::Desktop);
    c.initialize().await;
    let s = c.new_session(None).await;
    let (_, r) = c.prompt(&s, "hello").await;
    assert_eq!(r["result"]["stopReason"], "end_turn");
    let (_, r) = c.request("session/close", json!({"sessionId": s})).await;
    assert_eq!(r["result"], json!({}));
    let (notes, r) = c
        .request(
            "session/load",
            json!({"sessionId": s, "cwd": "/", "mcpServers": []}),
        )
        .await;
    assert!(r["result"].is_object());
    assert_eq!(agent_text(&updates(&notes)), "one");
    let (_, r) = c.request("session/delete", json!({"sessionId": s})).await;
    assert_eq!(r["result"], json!({}));
    let (_, r) = c
        .request(
            "session/load",
            json!({"sessionId": s, "cwd": "/", "mcpServers": []}),
        )
        .await;
    assert_eq!(r["error"]["code"], -32002);
}

#[tokio::test]
async fn acp05_auto_select_needs_negotiation_and_matches_scope_as_a_set() {
    let h = Harness::simple(ScriptModel::new(vec![])).await;
    let mut c = h.connect(Principal::Desktop);
    c.initialize().await;
    let scope = json!([{"plugin":"p","tool":"a"},{"plugin":"p","tool":"b"}]);
    let (_, r) = c
        .request("session/new", json!({"cwd":"/","mcpServers":[],"_meta":{"org.agentos":{"toolScope": scope, "autoSelect": true}}}))
        .await;
    assert_eq!(r["error"]["code"], -32602, "not negotiated: {r}");
    let mut c2 = h.connect(Principal::Desktop);
    c2.request("initialize", json!({"protocolVersion":1,"_meta":{"org.agentos":{"extensions":{"sessionAutoSelect":{"version":1}}}}})).await;
    let first = c2.new_session(Some(json!({"toolScope": scope}))).await;
    let reordered =
        json!([{"plugin":"p","tool":"b"},{"plugin":"p","tool":"a"},{"plugin":"p","tool":"a"}]);
    let again = c2
        .new_session(Some(json!({"toolScope": reordered, "autoSelect": true})))
        .await;
    assert_eq!(first, again);
    let other = c2
        .new_session(Some(json!({"toolScope": [], "autoSelect": true})))
        .await;
    assert_ne!(first, other);
}
