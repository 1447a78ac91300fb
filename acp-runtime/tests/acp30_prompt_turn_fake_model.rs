//! Prompt turns end to end: raw JSON-RPC lines over a pipe, F's fake model server (real HTTP)
//! through `OpenAiClient`, a real MCP provider over `memory::pair`. ACP-30..ACP-40, ACP-57,
//! CAT-37/38, CNS-07, Appendix B model errors.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use common::*;
use permissions::consent::ScriptStep;
use permissions::{Choice, FixedSurface, Principal, ScriptedSurface};
use serde_json::{Value, json};

async fn setup(
    consent: Arc<dyn permissions::ConsentSurface>,
    b: NotesBehaviour,
) -> (Harness, acp_runtime::model::FakeModelServer) {
    let (server, model) = fake_model().await;
    let h = Harness::start(model, vec![notes_source(b)], consent).await;
    (h, server)
}

fn is_task_id(v: &Value) -> bool {
    v.as_str().is_some_and(|s| {
        s.len() == 30
            && s.starts_with("tsk_")
            && s[4..]
                .bytes()
                .all(|b| b.is_ascii_digit() || b.is_ascii_uppercase())
    })
}

#[tokio::test]
async fn acp30_streamed_prompt_ends_with_end_turn_and_task_id() {
    let (h, _server) = setup(Arc::new(FixedSurface::allow()), NotesBehaviour::default()).await;
    let mut c = h.connect(Principal::Desktop);
    c.initialize().await;
    let s = c.new_session(None).await;
    let (notes, resp) = c
        .prompt(
            &s,
            &directive(json!({"text": "hello streamed world", "chunks": 4, "chunkChars": 5})),
        )
        .await;
    let ups = updates(&notes);
    assert_eq!(agent_text(&ups), "hello streamed world");
    assert!(
        ups.iter()
            .all(|u| u["sessionUpdate"] == "agent_message_chunk"),
        "{ups:?}"
    );
    assert_eq!(resp["result"]["stopReason"], "end_turn");
    assert!(
        is_task_id(&resp["result"]["_meta"]["org.agentos"]["taskId"]),
        "{resp}"
    );
    // The user's message is not echoed live (ACP-34).
    assert!(!kinds(&ups).contains(&"user_message_chunk".to_owned()));
}

#[tokio::test]
async fn acp36_tool_call_with_consent_runs_and_reports_in_progress_then_completed() {
    let consent = Arc::new(ScriptedSurface::new());
    consent.push_tool(ScriptStep::Answer(Some(Choice::AllowOnce)));
    let b = NotesBehaviour::default();
    let (h, _server) = setup(consent.clone(), b.clone()).await;
    let mut c = h.connect(Principal::Desktop);
    c.initialize().await;
    let s = c.new_session(None).await;
    let d = directive(
        json!({"tools":[{"name":"com.example.notes/note_add","arguments":{"text":"milk"}}]}),
    );
    let (notes, resp) = c.prompt(&s, &d).await;
    let ups = updates(&notes);
    assert_eq!(
        kinds(&ups),
        [
            "tool_call:pending",
            "tool_call_update:in_progress",
            "tool_call_update:completed",
            "agent_message_chunk"
        ]
    );
    assert_eq!(ups[0]["title"], ADD);
    assert_eq!(ups[0]["kind"], "other");
    assert_eq!(ups[0]["rawInput"], json!({"text":"milk"}));
    assert_eq!(ups[2]["content"][0]["content"]["text"], "added: milk");
    assert_eq!(ups[0]["toolCallId"], ups[2]["toolCallId"]);
    assert_eq!(agent_text(&ups), "done: 1 tool results");
    assert_eq!(resp["result"]["stopReason"], "end_turn");
    assert_eq!(b.calls.load(Ordering::SeqCst), 1);
    assert_eq!(
        consent.shown_tools().len(),
        1,
        "a WRITE tool is asked about (CNS-01)"
    );
}

#[tokio::test]
async fn acp37_denied_call_goes_straight_to_failed_and_is_never_dispatched() {
    let consent = Arc::new(ScriptedSurface::new());
    consent.push_tool(ScriptStep::Answer(Some(Choice::Deny)));
    let b = NotesBehaviour::default();
    let (h, server) = setup(consent, b.clone()).await;
    let mut c = h.connect(Principal::Desktop);
    c.initialize().await;
    let s = c.new_session(None).await;
    let d = directive(
        json!({"tools":[{"name":"com.example.notes/note_add","arguments":{"text":"x"}}]}),
    );
    let (notes, resp) = c.prompt(&s, &d).await;
    let ups = updates(&notes);
    assert_eq!(
        kinds(&ups),
        [
            "tool_call:pending",
            "tool_call_update:failed",
            "agent_message_chunk"
        ]
    );
    assert_eq!(
        ups[1]["content"][0]["content"]["text"],
        "[agentos:tool_denied] The user declined this tool call."
    );
    assert_eq!(b.calls.load(Ordering::SeqCst), 0);
    assert_eq!(resp["result"]["stopReason"], "end_turn");
    // The model got exactly the CNS-07 text.
    let last = server.requests().last().cloned().unwrap();
    let tool_msg = last["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|m| m["role"] == "tool")
        .cloned()
        .unwrap();
    assert_eq!(
        tool_msg["content"],
        "[agentos:tool_denied] The user declined this tool call."
    );
}

/// The failed text a session gives for calling `name`.
async fn refusal_text(c: &mut Client, session: &str, name: &str) -> (Vec<String>, String) {
    let d = directive(json!({"tools":[{"name": name, "arguments":{"text":"x"}}]}));
    let (notes, resp) = c.prompt(session, &d).await;
    assert_eq!(resp["result"]["stopReason"], "end_turn", "{resp}");
    let ups = updates(&notes);
    (
        kinds(&ups),
        ups[1]["content"][0]["content"]["text"]
            .as_str()
            .unwrap()
            .to_owned(),
    )
}

#[tokio::test]
async fn cat37_out_of_scope_and_unknown_tools_get_byte_identical_refusals() {
    let b = NotesBehaviour::default();
    let (h, server) = setup(Arc::new(FixedSurface::allow()), b.clone()).await;
    let mut c = h.connect(Principal::Desktop);
    c.initialize().await;
    let scoped = c
        .new_session(Some(json!({"toolScope":[{"plugin":"com.example.notes","tool":"note_read"},{"plugin":"nope","tool":"nothing"}]})))
        .await;
    let (k1, out_of_scope) = refusal_text(&mut c, &scoped, ADD).await;
    let offered: Vec<String> = server.requests().last().unwrap()["tools"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|t| t["function"]["name"].as_str().unwrap().to_owned())
                .collect()
        })
        .unwrap_or_default();
    assert_eq!(
        offered,
        [READ],
        "only the scoped tool is offered, no read_skill (CAT-38)"
    );
    let unscoped = c.new_session(None).await;
    let (k2, unknown) = refusal_text(&mut c, &unscoped, "mcp__no_such__server__tool").await;
    assert_eq!(
        k1,
        [
            "tool_call:pending",
            "tool_call_update:failed",
            "agent_message_chunk"
        ]
    );
    assert_eq!(k1, k2);
    assert_eq!(out_of_scope, unknown);
    assert!(out_of_scope.starts_with("[agentos:tool_not_in_catalog] "));
    assert_eq!(b.calls.load(Ordering::SeqCst), 0);

    // An empty scope offers no tools at all.
    let empty = c.new_session(Some(json!({"toolScope": []}))).await;
    let (_, resp) = c.prompt(&empty, "hi").await;
    assert_eq!(resp["result"]["stopReason"], "end_turn");
    let tools = server.requests().last().unwrap()["tools"].clone();
    assert!(
        tools.is_null() || tools.as_array().unwrap().is_empty(),
        "{tools}"
    );
}

#[tokio::test]
async fn cat52_read_only_and_chat_modes_hide_tools_without_asking() {
    let b = NotesBehaviour::default();
    let consent = Arc::new(ScriptedSurface::new());
    let (h, server) = setup(consent.clone(), b.clone()).await;
    let mut c = h.connect(Principal::Desktop);
    c.initialize().await;
    let s = c.new_session(None).await;
    let (_, r) = c
        .request(
            "session/set_mode",
            json!({"sessionId": s, "modeId": "chat"}),
        )
        .await;
    assert_eq!(r["result"], json!({}));
    let (kinds_chat, text) = refusal_text(&mut c, &s, ADD).await;
    assert_eq!(
        kinds_chat,
        [
            "tool_call:pending",
            "tool_call_update:failed",
            "agent_message_chunk"
        ]
    );
    assert!(text.starts_with("[agentos:tool_not_in_catalog] "));
    let tools = server.requests().last().unwrap()["tools"].clone();
    assert!(tools.is_null() || tools.as_array().unwrap().is_empty());
    assert!(
        consent.shown_tools().is_empty(),
        "no consent prompt (CAT-53)"
    );
    let (_, r) = c
        .request(
            "session/set_mode",
            json!({"sessionId": s, "modeId": "nonsense"}),
        )
        .await;
    assert_eq!(r["error"]["code"], -32602);
}

#[tokio::test]
async fn acp31_max_tokens_refusal_and_max_turn_requests_are_stop_reasons() {
    let b = NotesBehaviour::default();
    let (h, _server) = setup(Arc::new(FixedSurface::allow()), b.clone()).await;
    let mut c = h.connect(Principal::Desktop);
    c.initialize().await;
    let s = c.new_session(None).await;
    let (_, r) = c
        .prompt(&s, &directive(json!({"text":"abc","maxTokens":true})))
        .await;
    assert_eq!(r["result"]["stopReason"], "max_tokens");
    let (_, r) = c.prompt(&s, &directive(json!({"refuse":true}))).await;
    assert_eq!(r["result"]["stopReason"], "refusal");
    let d = directive(json!({"toolLoop": 30, "tools":[{"name":"com.example.notes/note_read"}]}));
    let (notes, r) = c.prompt(&s, &d).await;
    assert_eq!(r["result"]["stopReason"], "max_turn_requests", "{r}");
    assert_eq!(b.calls.load(Ordering::SeqCst), 12, "12 tool rounds ran");
    let completed = kinds(&updates(&notes))
        .iter()
        .filter(|k| *k == "tool_call_update:completed")
        .count();
    assert_eq!(completed, 12);
}

#[tokio::test]
async fn acp60_model_failure_is_32051_with_agentos_code_and_retryable() {
    let (h, _server) = setup(Arc::new(FixedSurface::allow()), NotesBehaviour::default()).await;
    let mut c = h.connect(Principal::Desktop);
    c.initialize().await;
    let s = c.new_session(None).await;
    let (_, r) = c
        .prompt(
            &s,
            &directive(json!({"fail":"model_rate_limited","retryAfter":7})),
        )
        .await;
    let e = &r["error"];
    assert_eq!(e["code"], -32051, "{r}");
    assert_eq!(e["data"]["agentosCode"], "model_rate_limited");
    assert_eq!(e["data"]["retryable"], true);
    assert_eq!(e["data"]["details"]["retryAfterSeconds"], 7);
    assert!(is_task_id(&e["data"]["taskId"]));
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .starts_with("model_rate_limited: ")
    );
    let (_, r) = c
        .prompt(&s, &directive(json!({"fail":"model_auth_failed"})))
        .await;
    assert_eq!(r["error"]["data"]["agentosCode"], "model_auth_failed");
    assert_eq!(r["error"]["data"]["retryable"], false);
    // The session stays usable.
    let (_, r) = c.prompt(&s, "hello").await;
    assert_eq!(r["result"]["stopReason"], "end_turn");
}

#[tokio::test]
async fn model_server_dying_mid_stream_fails_the_turn_retryably() {
    let (h, server) = setup(Arc::new(FixedSurface::allow()), NotesBehaviour::default()).await;
    let mut c = h.connect(Principal::Desktop);
    c.initialize().await;
    let s = c.new_session(None).await;
    let (notes, r) = c
        .prompt(&s, &directive(json!({"fail":"model_stream_interrupted"})))
        .await;
    assert_eq!(
        r["error"]["data"]["agentosCode"], "model_stream_interrupted",
        "{r}"
    );
    assert_eq!(r["error"]["data"]["retryable"], true);
    assert!(!updates(&notes).is_empty(), "the partial text was streamed");
    // The whole server goes away while a reply is held open.
    let id = c
        .start_request("session/prompt", json!({"sessionId": s, "prompt":[{"type":"text","text": directive(json!({"text":"partial","awaitAbort":true}))}]}))
        .await;
    let first = c.next().await;
    assert_eq!(
        first["params"]["update"]["sessionUpdate"],
        "agent_message_chunk"
    );
    server.shutdown().await;
    let (_, r) = c.wait_response(id).await;
    let code = r["error"]["data"]["agentosCode"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        code == "model_stream_interrupted" || code == "model_network",
        "{r}"
    );
    assert_eq!(r["error"]["code"], -32051);
}

#[tokio::test]
async fn acp50_cancel_returns_cancelled_within_a_second_and_session_stays_usable() {
    let (h, _server) = setup(Arc::new(FixedSurface::allow()), NotesBehaviour::default()).await;
    let mut c = h.connect(Principal::Desktop);
    c.initialize().await;
    let s = c.new_session(None).await;
    let id = c
        .start_request("session/prompt", json!({"sessionId": s, "prompt":[{"type":"text","text": directive(json!({"text":"thinking","awaitAbort":true}))}]}))
        .await;
    let first = c.next().await;
    assert_eq!(first["params"]["update"]["content"]["text"], "thinking");
    let t = std::time::Instant::now();
    c.notify("session/cancel", json!({"sessionId": s})).await;
    let (_, r) = c.wait_response(id).await;
    assert!(
        t.elapsed() < std::time::Duration::from_secs(1),
        "{:?}",
        t.elapsed()
    );
    assert_eq!(r["result"]["stopReason"], "cancelled");
    let (_, r) = c.prompt(&s, "again").await;
    assert_eq!(r["result"]["stopReason"], "end_turn");
}

#[tokio::test]
async fn acp50_cancel_during_a_running_tool_call() {
    let b = NotesBehaviour::default();
    let (h, _server) = setup(Arc::new(FixedSurface::allow()), b).await;
    let mut c = h.connect(Principal::Desktop);
    c.initialize().await;
    let s = c.new_session(None).await;
    let d = directive(json!({"tools":[{"name":"com.example.notes/note_slow"}]}));
    let id = c
        .start_request(
            "session/prompt",
            json!({"sessionId": s, "prompt":[{"type":"text","text": d}]}),
        )
        .await;
    loop {
        let n = c.next().await;
        if n["params"]["update"]["status"] == "in_progress" {
            break;
        }
    }
    c.notify("session/cancel", json!({"sessionId": s})).await;
    let (_, r) = c.wait_response(id).await;
    assert_eq!(r["result"]["stopReason"], "cancelled");
}

#[tokio::test]
async fn provider_dying_mid_call_is_a_tool_error_and_the_turn_goes_on() {
    let death = Arc::new(Mutex::new(None));
    let (server, model) = fake_model().await;
    let src = notes_source_with_death(NotesBehaviour::default(), Arc::clone(&death));
    let h = Harness::start(model, vec![src], Arc::new(FixedSurface::allow())).await;
    let mut c = h.connect(Principal::Desktop);
    c.initialize().await;
    let s = c.new_session(None).await;
    let d = directive(json!({"tools":[{"name":"com.example.notes/note_slow"}]}));
    let id = c
        .start_request(
            "session/prompt",
            json!({"sessionId": s, "prompt":[{"type":"text","text": d}]}),
        )
        .await;
    loop {
        let n = c.next().await;
        if n["params"]["update"]["status"] == "in_progress" {
            break;
        }
    }
    death.lock().unwrap().as_ref().unwrap().kill_second();
    let (notes, r) = c.wait_response(id).await;
    assert_eq!(r["result"]["stopReason"], "end_turn", "{r}");
    let ups = updates(&notes);
    assert_eq!(ups[0]["status"], "failed");
    let text = ups[0]["content"][0]["content"]["text"].as_str().unwrap();
    assert!(text.starts_with("[agentos:tool_result_unknown] "), "{text}");
    drop(server);
}

#[tokio::test]
async fn acp40_long_tool_results_are_capped_in_events_and_for_the_model() {
    let long = "r".repeat(40_000);
    let b = NotesBehaviour {
        read_text: Some(long),
        ..Default::default()
    };
    let (h, server) = setup(Arc::new(FixedSurface::allow()), b).await;
    let mut c = h.connect(Principal::Desktop);
    c.initialize().await;
    let s = c.new_session(None).await;
    let d = directive(json!({"tools":[{"name":"com.example.notes/note_read"}]}));
    let (notes, _) = c.prompt(&s, &d).await;
    let ups = updates(&notes);
    let shown = ups[2]["content"][0]["content"]["text"].as_str().unwrap();
    assert_eq!(shown.encode_utf16().count(), 8_192);
    assert!(shown.ends_with("…[truncated, original length 40000]"));
    let last = server.requests().last().cloned().unwrap();
    let tool_msg = last["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|m| m["role"] == "tool")
        .cloned()
        .unwrap();
    let for_model = tool_msg["content"].as_str().unwrap();
    assert_eq!(for_model.encode_utf16().count(), 32_768);
}

#[tokio::test]
async fn acp34_thoughts_are_opt_in_live() {
    let (h, _server) = setup(Arc::new(FixedSurface::allow()), NotesBehaviour::default()).await;
    let mut c = h.connect(Principal::Desktop);
    c.initialize().await;
    let s = c.new_session(None).await;
    let d = directive(json!({"thought":"pondering","text":"answer"}));
    let (notes, _) = c.prompt(&s, &d).await;
    assert!(!kinds(&updates(&notes)).contains(&"agent_thought_chunk".to_owned()));
    let (notes, _) = c
        .request("session/prompt", json!({"sessionId": s, "prompt":[{"type":"text","text": d}], "_meta":{"org.agentos":{"includeThoughts":true}}}))
        .await;
    let ups = updates(&notes);
    assert_eq!(ups[0]["sessionUpdate"], "agent_thought_chunk");
    assert_eq!(ups[0]["content"]["text"], "pondering");
}
