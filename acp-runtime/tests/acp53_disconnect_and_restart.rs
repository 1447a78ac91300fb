//! ACP-53: a disconnect never cancels a task; its result is loadable. ACP-14: `session/load`
//! replays history (thoughts included) before its response. ACP-56: after a restart a task
//! that was running is never replayed and is marked `abandoned`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;

use common::*;
use permissions::{FixedSurface, Principal};
use serde_json::json;

#[tokio::test]
async fn acp53_disconnect_mid_turn_finishes_and_is_loadable() {
    let (server, model) = fake_model().await;
    let h = Harness::start(
        model,
        vec![notes_source(NotesBehaviour::default())],
        Arc::new(FixedSurface::allow()),
    )
    .await;
    let mut c = h.connect(Principal::Desktop);
    c.initialize().await;
    let s = c.new_session(None).await;
    let d = directive(json!({"text": "late answer", "delayMs": 400}));
    c.start_request(
        "session/prompt",
        json!({"sessionId": s, "prompt":[{"type":"text","text": d}]}),
    )
    .await;
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    drop(c); // the client goes away mid-turn
    let mut c2 = h.connect(Principal::Desktop);
    c2.initialize().await;
    let mut text = String::new();
    for _ in 0..50 {
        let (notes, r) = c2
            .request(
                "session/load",
                json!({"sessionId": s, "cwd": "/", "mcpServers": []}),
            )
            .await;
        text = agent_text(&updates(&notes));
        if r["result"]["_meta"]["org.agentos"]
            .get("activeTaskId")
            .is_none()
            && !text.is_empty()
        {
            let kinds = kinds(&updates(&notes));
            assert_eq!(
                kinds[0], "user_message_chunk",
                "history starts with the prompt"
            );
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(text, "late answer");
    drop(server);
}

#[tokio::test]
async fn acp14_load_replays_the_same_updates_as_the_live_turn_with_thoughts() {
    let (server, model) = fake_model().await;
    let h = Harness::start(
        model,
        vec![notes_source(NotesBehaviour::default())],
        Arc::new(FixedSurface::allow()),
    )
    .await;
    let mut c = h.connect(Principal::Desktop);
    c.initialize().await;
    let s = c.new_session(None).await;
    let d = directive(json!({"thought": "hmm", "tools":[{"name":"com.example.notes/note_read"}]}));
    let (live, r) = c.prompt(&s, &d).await;
    assert_eq!(r["result"]["stopReason"], "end_turn");
    let live = updates(&live);
    let mut c2 = h.connect(Principal::Desktop);
    let (replayed, r) = c2
        .request(
            "session/load",
            json!({"sessionId": s, "cwd": "/", "mcpServers": []}),
        )
        .await;
    assert!(r["result"]["modes"]["currentModeId"].is_string(), "{r}");
    let replayed = updates(&replayed);
    assert_eq!(replayed[0]["sessionUpdate"], "user_message_chunk");
    assert_eq!(replayed[0]["content"]["text"], d);
    assert_eq!(
        replayed[1]["sessionUpdate"], "agent_thought_chunk",
        "thoughts are always in history"
    );
    let without: Vec<_> = replayed[2..].to_vec();
    assert_eq!(without, live, "same mapping as the live turn");
    // resume does not replay (ACP-15).
    let (notes, r) = c2
        .request("session/resume", json!({"sessionId": s, "cwd": "/"}))
        .await;
    assert!(notes.is_empty());
    assert!(r["result"].is_object());
    drop(server);
}

#[tokio::test]
async fn acp56_restart_marks_the_running_task_abandoned_and_never_replays_it() {
    let dir = Arc::new(tempfile::tempdir().unwrap());
    let model = ScriptModel::new(vec![Reply::Hang("halfway".into())]);
    let h = Harness::start_in(
        Arc::clone(&dir),
        model.clone(),
        vec![],
        Arc::new(FixedSurface::allow()),
    )
    .await;
    let mut c = h.connect(Principal::Desktop);
    let s = c.new_session(None).await;
    c.start_request(
        "session/prompt",
        json!({"sessionId": s, "prompt":[{"type":"text","text":"go"}]}),
    )
    .await;
    let first = c.next().await;
    assert_eq!(first["params"]["update"]["content"]["text"], "halfway");
    h.rt.shutdown().await;
    drop(c);
    drop(h);

    let model2 = ScriptModel::new(vec![text_reply("fresh")]);
    let h2 = Harness::start_in(
        Arc::clone(&dir),
        model2.clone(),
        vec![],
        Arc::new(FixedSurface::allow()),
    )
    .await;
    assert!(
        model2.requests.lock().unwrap().is_empty(),
        "nothing replayed at start"
    );
    let mut c2 = h2.connect(Principal::Desktop);
    let (notes, r) = c2
        .request(
            "session/load",
            json!({"sessionId": s, "cwd": "/", "mcpServers": []}),
        )
        .await;
    assert!(
        r["result"]["_meta"]["org.agentos"]
            .get("activeTaskId")
            .is_none(),
        "{r}"
    );
    assert_eq!(agent_text(&updates(&notes)), "halfway");
    let db = rusqlite::Connection::open(h2.rt.data_dir().join("runtime.db")).unwrap();
    let (state, code): (String, Option<String>) = db
        .query_row("SELECT state, error_code FROM tasks", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .unwrap();
    assert_eq!(
        (state.as_str(), code.as_deref()),
        ("failed", Some("abandoned"))
    );
    // The session stays usable.
    let (_, r) = c2.prompt(&s, "again").await;
    assert_eq!(r["result"]["stopReason"], "end_turn");
}

#[cfg(unix)]
#[tokio::test]
async fn store_directory_is_0700_and_files_0600() {
    use std::os::unix::fs::PermissionsExt;
    let h = Harness::simple(ScriptModel::new(vec![])).await;
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(h.rt.data_dir()), 0o700);
    assert_eq!(mode(&h.rt.data_dir().join("runtime.db")), 0o600);
}
