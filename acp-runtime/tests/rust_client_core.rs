//! The Rust `agent-client-protocol` crate's **client side** driving the runtime over a duplex
//! pipe (issue 8 "Real clients": the Rust client for the core scenarios): initialize, a
//! streamed prompt, a tool call on a real MCP provider with consent, an out-of-catalog tool,
//! a model failure as a JSON-RPC error, cancel, and load with history replay.
//!
//! The runtime side uses the shared test support (`common/`): a real MCP notes provider
//! (`McpServer` + `McpSource` over `binder_channel::memory::pair`) and F's fake model server
//! (a real HTTP server) through `OpenAiClient`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "common/mod.rs"]
mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    CancelNotification, ContentBlock, InitializeRequest, LoadSessionRequest, NewSessionRequest,
    PromptRequest, SessionNotification, SessionUpdate, StopReason, TextContent, ToolCallStatus,
};
use agent_client_protocol::{Agent, Client, Lines};
use common::{Harness, NotesBehaviour, directive, fake_model, notes_source};
use permissions::{FixedSurface, Principal};
use serde_json::json;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

/// Everything the client saw as `session/update`.
type Seen = Arc<Mutex<Vec<SessionNotification>>>;

/// Connects the crate's client to `h.rt.serve_lines` over a duplex pipe and runs `body`.
async fn with_client<T>(
    h: &Harness,
    body: impl AsyncFnOnce(ConnectionTo<Agent>) -> Result<T, agent_client_protocol::Error>,
) -> (T, Vec<SessionNotification>) {
    let (ours, theirs) = tokio::io::duplex(1 << 20);
    let (r, w) = tokio::io::split(theirs);
    let rt = Arc::clone(&h.rt);
    tokio::spawn(async move {
        let _ = rt.serve_lines(r, w, Principal::Desktop).await;
    });
    let (cr, cw) = tokio::io::split(ours);
    let outgoing = futures::sink::unfold(cw, |mut w, line: String| async move {
        w.write_all(line.as_bytes()).await?;
        w.write_all(b"\n").await?;
        w.flush().await?;
        Ok::<_, std::io::Error>(w)
    });
    let incoming = futures::stream::unfold(BufReader::new(cr).lines(), |mut lines| async move {
        match lines.next_line().await {
            Ok(Some(l)) => Some((Ok(l), lines)),
            Ok(None) => None,
            Err(e) => Some((Err(e), lines)),
        }
    });
    let transport = Lines::new(Box::pin(outgoing), Box::pin(incoming));
    let seen: Seen = Arc::default();
    let sink = Arc::clone(&seen);
    let out = tokio::time::timeout(
        Duration::from_secs(60),
        Client
            .v1()
            .name("capbridge-rust-client-test")
            .on_receive_notification(
                async move |n: SessionNotification, _cx| {
                    sink.lock().unwrap().push(n);
                    Ok(())
                },
                agent_client_protocol::on_receive_notification!(),
            )
            .connect_with(transport, body),
    )
    .await
    .expect("the scenario finished in time")
    .expect("the client connection worked");
    let seen = seen.lock().unwrap().clone();
    (out, seen)
}

fn text(t: impl Into<String>) -> Vec<ContentBlock> {
    vec![ContentBlock::Text(TextContent::new(t.into()))]
}

fn message_text(seen: &[SessionNotification]) -> String {
    seen.iter()
        .filter_map(|n| match &n.update {
            SessionUpdate::AgentMessageChunk(c) => match &c.content {
                ContentBlock::Text(t) => Some(t.text.clone()),
                _ => None,
            },
            _ => None,
        })
        .collect()
}

fn final_statuses(seen: &[SessionNotification]) -> Vec<(String, ToolCallStatus)> {
    let mut out: Vec<(String, ToolCallStatus)> = Vec::new();
    for n in seen {
        match &n.update {
            SessionUpdate::ToolCall(c) => out.push((c.tool_call_id.to_string(), c.status)),
            SessionUpdate::ToolCallUpdate(u) => {
                if let (Some(s), Some(e)) = (
                    u.fields.status,
                    out.iter_mut()
                        .find(|(id, _)| *id == u.tool_call_id.to_string()),
                ) {
                    e.1 = s;
                }
            }
            _ => {}
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn initialize_and_a_streamed_prompt() {
    let (_server, model) = fake_model().await;
    let h = Harness::simple(model).await;
    let prompt = directive(json!({"text": "abcd", "chunks": 30, "chunkChars": 4}));
    let ((init, stop), seen) = with_client(&h, async move |cx: ConnectionTo<Agent>| {
        let init = cx
            .send_request(InitializeRequest::new(ProtocolVersion::V1))
            .block_task()
            .await?;
        let s = cx
            .send_request(NewSessionRequest::new(std::env::temp_dir()))
            .block_task()
            .await?;
        let r = cx
            .send_request(PromptRequest::new(s.session_id, text(prompt)))
            .block_task()
            .await?;
        Ok((init, r.stop_reason))
    })
    .await;
    assert_eq!(init.protocol_version, ProtocolVersion::V1);
    assert!(init.agent_capabilities.load_session);
    assert_eq!(stop, StopReason::EndTurn);
    assert_eq!(message_text(&seen), "abcd".repeat(30));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_mcp_tool_call_with_consent_and_an_out_of_catalog_tool() {
    let (_server, model) = fake_model().await;
    let b = NotesBehaviour::default();
    let calls = b.calls.clone();
    let h = Harness::start(
        model,
        vec![notes_source(b)],
        Arc::new(FixedSurface::allow()),
    )
    .await;
    let prompt = directive(json!({"tools": [
        {"name": "com.example.notes/note_add", "arguments": {"text": "from the rust client"}},
        {"name": "mcp__nobody__nothing__nope", "arguments": {}},
    ]}));
    let (stop, seen) = with_client(&h, async move |cx: ConnectionTo<Agent>| {
        cx.send_request(InitializeRequest::new(ProtocolVersion::V1))
            .block_task()
            .await?;
        let s = cx
            .send_request(NewSessionRequest::new(std::env::temp_dir()))
            .block_task()
            .await?;
        let r = cx
            .send_request(PromptRequest::new(s.session_id, text(prompt)))
            .block_task()
            .await?;
        Ok(r.stop_reason)
    })
    .await;
    assert_eq!(stop, StopReason::EndTurn);
    let statuses = final_statuses(&seen);
    assert_eq!(statuses.len(), 2, "{seen:?}");
    assert_eq!(statuses[0].1, ToolCallStatus::Completed, "{seen:?}");
    assert_eq!(statuses[1].1, ToolCallStatus::Failed, "{seen:?}");
    // The WRITE tool ran once (after consent); the unknown one was never dispatched.
    assert_eq!(calls.load(std::sync::atomic::Ordering::SeqCst), 1);
    let failed_text = format!("{:?}", seen.last());
    assert!(
        seen.iter()
            .any(|n| format!("{n:?}").contains("tool_not_in_catalog")),
        "{failed_text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_model_failure_is_a_json_rpc_error_with_the_agentos_code() {
    let (_server, model) = fake_model().await;
    let h = Harness::simple(model).await;
    let prompt = directive(json!({"fail": "model_rate_limited"}));
    let (err, _) = with_client(&h, async move |cx: ConnectionTo<Agent>| {
        cx.send_request(InitializeRequest::new(ProtocolVersion::V1))
            .block_task()
            .await?;
        let s = cx
            .send_request(NewSessionRequest::new(std::env::temp_dir()))
            .block_task()
            .await?;
        let r = cx
            .send_request(PromptRequest::new(s.session_id, text(prompt)))
            .block_task()
            .await;
        Ok(r.expect_err("a rate-limited model fails the prompt"))
    })
    .await;
    assert_eq!(err.code.value(), -32051, "{err:?}");
    let data = err.data.expect("error data");
    assert_eq!(data["agentosCode"], "model_rate_limited", "{data}");
    assert_eq!(data["retryable"], true, "{data}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn cancel_ends_the_turn_as_cancelled_and_load_replays_history() {
    let (_server, model) = fake_model().await;
    let h = Harness::simple(model).await;
    let slow = directive(json!({"text": "x", "chunks": 1, "chunkChars": 1, "awaitAbort": true}));
    let echo = "hello from the rust client".to_owned();
    let ((stop, sid), seen) = with_client(&h, async move |cx: ConnectionTo<Agent>| {
        cx.send_request(InitializeRequest::new(ProtocolVersion::V1))
            .block_task()
            .await?;
        let s = cx
            .send_request(NewSessionRequest::new(std::env::temp_dir()))
            .block_task()
            .await?;
        let sid = s.session_id.clone();
        // A finished turn first, so there is history to replay.
        cx.send_request(PromptRequest::new(sid.clone(), text(echo)))
            .block_task()
            .await?;
        let pending = cx.send_request(PromptRequest::new(sid.clone(), text(slow)));
        tokio::time::sleep(Duration::from_millis(300)).await;
        cx.send_notification(CancelNotification::new(sid.clone()))?;
        let r = pending.block_task().await?;
        Ok((r.stop_reason, sid))
    })
    .await;
    assert_eq!(stop, StopReason::Cancelled);
    assert!(message_text(&seen).contains("echo: hello from the rust client"));

    // A second connection loads the session: the history comes back as updates.
    let (_, replay) = with_client(&h, async move |cx: ConnectionTo<Agent>| {
        cx.send_request(InitializeRequest::new(ProtocolVersion::V1))
            .block_task()
            .await?;
        cx.send_request(LoadSessionRequest::new(sid, std::env::temp_dir()))
            .block_task()
            .await?;
        Ok(())
    })
    .await;
    let replayed = format!("{replay:?}");
    assert!(
        replayed.contains("hello from the rust client"),
        "{replayed}"
    );
    assert!(
        message_text(&replay).contains("echo: hello from the rust client"),
        "{replayed}"
    );
}
