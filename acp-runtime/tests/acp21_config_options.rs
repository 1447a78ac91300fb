//! ACP-21 (modes and models) through the ACP v1 session config options: the `model` and
//! `mode` selects in every session response, and `session/set_config_option` with the
//! semantics of `set_model` / `set_mode` (CAT-50..55), driven over raw JSON-RPC lines.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::*;
use permissions::{FixedSurface, Principal};
use serde_json::{Value, json};

const SMALL: &str = "fake-model";
const LARGE: &str = "fake-large";

/// A runtime whose key offers two models, with the notes plugin as a source.
async fn two_models(model: Arc<ScriptModel>, notes: NotesBehaviour) -> Harness {
    let dir = Arc::new(tempfile::tempdir().unwrap());
    two_models_in(dir, model, notes).await
}

async fn two_models_in(
    dir: Arc<tempfile::TempDir>,
    model: Arc<ScriptModel>,
    notes: NotesBehaviour,
) -> Harness {
    Harness::start_with(
        dir,
        model,
        vec![notes_source(notes)],
        Arc::new(FixedSurface::allow()),
        |cfg| cfg.available_models = vec![SMALL.into(), LARGE.into()],
    )
    .await
}

/// The option with this id in a response's `configOptions`.
fn option<'a>(result: &'a Value, id: &str) -> &'a Value {
    result["configOptions"]
        .as_array()
        .unwrap_or_else(|| panic!("no configOptions in {result}"))
        .iter()
        .find(|o| o["id"] == id)
        .unwrap_or_else(|| panic!("no option {id} in {result}"))
}

fn current(result: &Value, id: &str) -> String {
    option(result, id)["currentValue"]
        .as_str()
        .unwrap()
        .to_owned()
}

fn values(opt: &Value) -> Vec<String> {
    opt["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["value"].as_str().unwrap().to_owned())
        .collect()
}

async fn set_option(c: &mut Client, session: &str, config: &str, value: Value) -> Value {
    let mut p = json!({"sessionId": session, "configId": config});
    if !value.is_null() {
        p["value"] = value;
    }
    c.request("session/set_config_option", p).await.1
}

async fn load(c: &mut Client, session: &str) -> Value {
    let (_, r) = c
        .request(
            "session/load",
            json!({"sessionId": session, "cwd": "/", "mcpServers": []}),
        )
        .await;
    r["result"].clone()
}

fn tools_of(model: &ScriptModel, request: usize) -> Vec<String> {
    let mut names: Vec<String> = model.requests.lock().unwrap()[request]
        .tools
        .iter()
        .map(|t| t.name.clone())
        .collect();
    names.sort();
    names
}

fn model_of(model: &ScriptModel, request: usize) -> String {
    model.requests.lock().unwrap()[request].model.clone()
}

#[tokio::test]
async fn acp21_new_load_resume_fork_carry_model_and_mode_selects() {
    let h = two_models(ScriptModel::new(vec![]), NotesBehaviour::default()).await;
    let mut c = h.connect(Principal::Desktop);
    c.initialize().await;
    let (_, r) = c
        .request("session/new", json!({"cwd": "/", "mcpServers": []}))
        .await;
    let new = r["result"].clone();
    let s = new["sessionId"].as_str().unwrap().to_owned();

    let model = option(&new, "model");
    assert_eq!(model["type"], "select");
    assert_eq!(model["category"], "model");
    assert_eq!(model["currentValue"], SMALL);
    assert_eq!(values(model), [SMALL, LARGE]);
    let mode = option(&new, "mode");
    assert_eq!(mode["type"], "select");
    assert_eq!(mode["category"], "mode");
    assert_eq!(mode["currentValue"], "default");
    assert_eq!(values(mode), ["default", "read_only", "chat"]);
    for o in mode["options"].as_array().unwrap() {
        assert!(!o["name"].as_str().unwrap().is_empty(), "{o}");
        assert!(!o["description"].as_str().unwrap().is_empty(), "{o}");
    }
    // The legacy mode state stays beside the options.
    assert_eq!(new["modes"]["currentModeId"], "default");

    let loaded = load(&mut c, &s).await;
    assert_eq!(loaded["configOptions"], new["configOptions"]);
    let (_, r) = c
        .request("session/resume", json!({"sessionId": s, "cwd": "/"}))
        .await;
    assert_eq!(r["result"]["configOptions"], new["configOptions"], "{r}");
    let (_, r) = c
        .request("session/fork", json!({"sessionId": s, "cwd": "/"}))
        .await;
    assert_ne!(r["result"]["sessionId"], json!(s));
    assert_eq!(r["result"]["configOptions"], new["configOptions"], "{r}");
}

#[tokio::test]
async fn acp21_mode_option_hides_tools_from_the_next_task_and_survives_a_restart() {
    let dir = Arc::new(tempfile::tempdir().unwrap());
    let model = ScriptModel::new(vec![
        text_reply("one"),
        text_reply("two"),
        text_reply("three"),
        text_reply("four"),
    ]);
    let h = two_models_in(Arc::clone(&dir), model.clone(), NotesBehaviour::default()).await;
    let mut c = h.connect(Principal::Desktop);
    c.initialize().await;
    let s = c.new_session(None).await;

    let (_, r) = c.prompt(&s, "with every tool").await;
    assert_eq!(r["result"]["stopReason"], "end_turn", "{r}");
    let mut all = vec![ADD.to_owned(), READ.to_owned(), SLOW.to_owned()];
    all.sort();
    assert_eq!(tools_of(&model, 0), all);

    // READ_ONLY: only tools whose effective risk is read (CAT-52); a third-party MCP tool's
    // readOnlyHint does not lower its risk, so none of the notes tools remain.
    let r = set_option(&mut c, &s, "mode", json!("read_only")).await;
    assert_eq!(current(&r["result"], "mode"), "read_only", "{r}");
    assert_eq!(current(&r["result"], "model"), SMALL, "full set returned");
    let (_, r) = c.prompt(&s, "read only").await;
    assert_eq!(r["result"]["stopReason"], "end_turn", "{r}");
    assert!(tools_of(&model, 1).is_empty(), "{:?}", tools_of(&model, 1));

    // Back to DEFAULT restores the session scope (CAT-51).
    let r = set_option(&mut c, &s, "mode", json!("default")).await;
    assert_eq!(current(&r["result"], "mode"), "default", "{r}");
    let (_, r) = c.prompt(&s, "default again").await;
    assert_eq!(r["result"]["stopReason"], "end_turn", "{r}");
    assert_eq!(tools_of(&model, 2), all);

    // CHAT: no tools at all, exactly as `session/set_mode` would do.
    let r = set_option(&mut c, &s, "mode", json!("chat")).await;
    assert_eq!(current(&r["result"], "mode"), "chat", "{r}");
    let (_, r) = c.prompt(&s, "chat").await;
    assert_eq!(r["result"]["stopReason"], "end_turn", "{r}");
    assert!(tools_of(&model, 3).is_empty());

    let loaded = load(&mut c, &s).await;
    assert_eq!(current(&loaded, "mode"), "chat");
    assert_eq!(loaded["modes"]["currentModeId"], "chat");

    // The mode is stored with the session (CAT-50): a restarted runtime reports it.
    h.rt.shutdown().await;
    drop(c);
    drop(h);
    let h2 = two_models_in(dir, ScriptModel::new(vec![]), NotesBehaviour::default()).await;
    let mut c2 = h2.connect(Principal::Desktop);
    c2.initialize().await;
    let loaded = load(&mut c2, &s).await;
    assert_eq!(current(&loaded, "mode"), "chat", "{loaded}");

    // And set_mode is reflected in the options too.
    let (_, r) = c2
        .request(
            "session/set_mode",
            json!({"sessionId": s, "modeId": "default"}),
        )
        .await;
    assert_eq!(r["result"], json!({}));
    assert_eq!(current(&load(&mut c2, &s).await, "mode"), "default");
}

#[tokio::test]
async fn acp21_model_option_applies_from_the_next_task_and_is_reported_on_load() {
    // Turn 1: a tool round (note_slow takes a second), during which the model is switched;
    // the second model round of that turn keeps the old model, turn 2 uses the new one.
    let model = ScriptModel::new(vec![
        tool_reply(SLOW, "{}"),
        text_reply("done"),
        text_reply("next"),
    ]);
    let notes = NotesBehaviour {
        slow: Some(Duration::from_secs(1)),
        ..NotesBehaviour::default()
    };
    let h = two_models(model.clone(), notes).await;
    let mut c = h.connect(Principal::Desktop);
    c.initialize().await;
    let s = c.new_session(None).await;
    let mut other_conn = h.connect(Principal::Desktop);
    other_conn.initialize().await;

    let turn = c
        .start_request(
            "session/prompt",
            json!({"sessionId": s, "prompt": [{"type": "text", "text": "slow"}]}),
        )
        .await;
    loop {
        let v = c.next().await;
        assert!(v.get("id").is_none(), "turn ended early: {v}");
        if v["params"]["update"]["sessionUpdate"] == "tool_call_update"
            && v["params"]["update"]["status"] == "in_progress"
        {
            break;
        }
    }
    let r = set_option(&mut other_conn, &s, "model", json!(LARGE)).await;
    assert_eq!(current(&r["result"], "model"), LARGE, "{r}");
    let (_, r) = c.wait_response(turn).await;
    assert_eq!(r["result"]["stopReason"], "end_turn", "{r}");
    assert_eq!(model_of(&model, 0), SMALL);
    assert_eq!(model_of(&model, 1), SMALL, "the running task is unaffected");

    let (_, r) = c.prompt(&s, "next task").await;
    assert_eq!(r["result"]["stopReason"], "end_turn", "{r}");
    assert_eq!(model_of(&model, 2), LARGE);

    let loaded = load(&mut c, &s).await;
    assert_eq!(current(&loaded, "model"), LARGE);
    assert_eq!(loaded["_meta"]["org.agentos"]["model"], LARGE);
    // The list is the list of the key, not of the sessions' choices.
    assert_eq!(values(option(&loaded, "model")), [SMALL, LARGE]);
}

#[tokio::test]
async fn acp21_unknown_model_is_invalid_params_without_echo_and_changes_nothing() {
    let h = two_models(ScriptModel::new(vec![]), NotesBehaviour::default()).await;
    let mut c = h.connect(Principal::Desktop);
    c.initialize().await;
    let s = c.new_session(None).await;
    let r = set_option(&mut c, &s, "model", json!("secret-model-xyz")).await;
    assert_eq!(r["error"]["code"], -32602, "{r}");
    assert_eq!(r["error"]["data"]["agentosCode"], "invalid_params");
    assert!(!r.to_string().contains("secret-model-xyz"), "no echo: {r}");
    let (_, r) = c
        .request(
            "session/set_model",
            json!({"sessionId": s, "modelId": "secret-model-xyz"}),
        )
        .await;
    assert_eq!(r["error"]["data"]["agentosCode"], "invalid_params", "{r}");
    assert_eq!(current(&load(&mut c, &s).await, "model"), SMALL);
}

#[tokio::test]
async fn acp21_user_defined_endpoint_offers_only_the_current_model_and_refuses_changes() {
    // `available_models` empty: a user-defined endpoint.
    let h = Harness::simple(ScriptModel::new(vec![])).await;
    let mut c = h.connect(Principal::Desktop);
    c.initialize().await;
    let (_, r) = c
        .request("session/new", json!({"cwd": "/", "mcpServers": []}))
        .await;
    let new = r["result"].clone();
    let s = new["sessionId"].as_str().unwrap().to_owned();
    assert_eq!(values(option(&new, "model")), ["fake-model"]);
    assert_eq!(current(&new, "model"), "fake-model");

    for value in [json!("fake-model"), json!("other-model")] {
        let r = set_option(&mut c, &s, "model", value).await;
        assert_eq!(r["error"]["data"]["agentosCode"], "unsupported", "{r}");
    }
    let (_, r) = c
        .request(
            "session/set_model",
            json!({"sessionId": s, "modelId": "fake-model"}),
        )
        .await;
    assert_eq!(r["error"]["data"]["agentosCode"], "unsupported", "{r}");
    // The mode still works.
    let r = set_option(&mut c, &s, "mode", json!("chat")).await;
    assert_eq!(current(&r["result"], "mode"), "chat", "{r}");
}

#[tokio::test]
async fn acp21_unknown_config_ids_and_wrong_value_shapes_are_invalid_params() {
    let h = two_models(ScriptModel::new(vec![]), NotesBehaviour::default()).await;
    let mut c = h.connect(Principal::Desktop);
    c.initialize().await;
    let s = c.new_session(None).await;
    let cases = [
        ("temperature-zz", json!("warm-zz")),
        ("mode", json!("turbo-zz")),
        ("mode", json!(5)),
        ("mode", json!({"nested": "chat"})),
        ("mode", Value::Null),
        ("model", json!(["fake-large"])),
    ];
    for (config, value) in cases {
        let r = set_option(&mut c, &s, config, value.clone()).await;
        assert_eq!(r["error"]["code"], -32602, "{config} {value} → {r}");
        assert_eq!(r["error"]["data"]["agentosCode"], "invalid_params", "{r}");
        assert!(!r.to_string().contains("zz"), "no echo: {r}");
    }
    // A boolean value for a select.
    let (_, r) = c
        .request(
            "session/set_config_option",
            json!({"sessionId": s, "configId": "mode", "type": "boolean", "value": true}),
        )
        .await;
    assert_eq!(r["error"]["data"]["agentosCode"], "invalid_params", "{r}");
    // Nothing changed.
    let loaded = load(&mut c, &s).await;
    assert_eq!(current(&loaded, "mode"), "default");
    assert_eq!(current(&loaded, "model"), SMALL);
}

#[tokio::test]
async fn acp21_foreign_deleted_and_unknown_sessions_answer_session_not_found() {
    let h = two_models(ScriptModel::new(vec![]), NotesBehaviour::default()).await;
    let mut owner = h.connect(app_principal(APP_UID));
    let mut other = h.connect(app_principal(OTHER_APP_UID));
    owner.initialize().await;
    other.initialize().await;
    let mine = owner.new_session(None).await;
    let deleted = owner.new_session(None).await;
    let (_, r) = owner
        .request("session/delete", json!({"sessionId": deleted}))
        .await;
    assert_eq!(r["result"], json!({}));

    let mut bodies = Vec::new();
    for (config, value) in [("mode", json!("chat")), ("model", json!(LARGE))] {
        bodies.push(set_option(&mut other, &mine, config, value.clone()).await["error"].clone());
        bodies.push(set_option(&mut owner, &deleted, config, value.clone()).await["error"].clone());
        bodies.push(
            set_option(&mut owner, "ses_00000000000000000000000000", config, value).await["error"]
                .clone(),
        );
    }
    // The same body set_mode gives for a foreign session.
    let (_, r) = other
        .request(
            "session/set_mode",
            json!({"sessionId": mine, "modeId": "chat"}),
        )
        .await;
    bodies.push(r["error"].clone());
    assert!(bodies.iter().all(|b| b == &bodies[0]), "{bodies:#?}");
    assert_eq!(bodies[0]["code"], -32002);
    assert_eq!(bodies[0]["data"]["agentosCode"], "session_not_found");
    // The owner's session is untouched.
    let loaded = load(&mut owner, &mine).await;
    assert_eq!(current(&loaded, "mode"), "default");
    assert_eq!(current(&loaded, "model"), SMALL);
}
