//! `tools/call` on a session server (SMS-01, MCP-22/MCP-23 kinds through
//! `capability_model::CallError`): results, the server's errors, timeout and cancellation
//! (both send `notifications/cancelled`, MCP-29), a server that dies mid-call
//! (`Closed{dispatched: true}`), a server gone before the call (`Closed{dispatched: false}`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod sms_support;

use std::time::Duration;

use capability_model::{CallError, CancelToken, CapabilityId, CapabilitySource, ContentBlock};
use mcp_adapter::session_http::{
    McpHttpServer, SessionHttpConfig, SessionMcpServers, SessionUrlPolicy, StatusReason,
};
use serde_json::{Map, Value, json};
use sms_support::{Behaviour, FakeServer};

async fn session(server: &FakeServer, call_timeout: Duration) -> SessionMcpServers {
    SessionMcpServers::start(
        vec![McpHttpServer::new("s", server.url(), vec![])],
        SessionHttpConfig {
            policy: SessionUrlPolicy::loopback_for_tests(),
            call_timeout,
            handshake_timeout: Duration::from_secs(5),
            ..SessionHttpConfig::default()
        },
    )
    .await
    .unwrap()
}

fn args(text: &str) -> Map<String, Value> {
    json!({"text": text}).as_object().unwrap().clone()
}

fn echo() -> CapabilityId {
    CapabilityId::session("s", "echo")
}

async fn wait_for(server: &FakeServer, method: &str) -> bool {
    for _ in 0..100 {
        if server.methods().iter().any(|m| m == method) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    false
}

#[tokio::test]
async fn a_call_returns_the_tool_output() {
    let server = FakeServer::start(Behaviour::default()).await;
    let set = session(&server, Duration::from_secs(5)).await;
    let out = set
        .call(&echo(), args("hi"), CancelToken::new())
        .await
        .unwrap();
    assert!(!out.is_error);
    assert_eq!(
        out.content,
        vec![ContentBlock::Text {
            text: "echo: hi".into()
        }]
    );
    let call = server
        .requests()
        .into_iter()
        .find(|r| r.method == "tools/call")
        .unwrap();
    assert_eq!(call.body["params"]["name"], "echo");
    assert_eq!(call.body["params"]["arguments"], json!({"text": "hi"}));
}

#[tokio::test]
async fn unknown_tools_and_foreign_ids_are_unknown_tool() {
    let server = FakeServer::start(Behaviour::default()).await;
    let set = session(&server, Duration::from_secs(5)).await;
    for id in [
        CapabilityId::session("s", "nope"),
        CapabilityId::session("other", "echo"),
        CapabilityId::mcp("p", "s", "echo"),
    ] {
        assert_eq!(
            set.call(&id, Map::new(), CancelToken::new()).await,
            Err(CallError::UnknownTool),
            "{id}"
        );
    }
    assert!(!server.methods().contains(&"tools/call".to_string()));
}

#[tokio::test]
async fn mcp23_a_jsonrpc_error_is_rejected_with_a_cleaned_sentence() {
    let server = FakeServer::start(Behaviour {
        call_rpc_error: true,
        ..Behaviour::default()
    })
    .await;
    let set = session(&server, Duration::from_secs(5)).await;
    assert_eq!(
        set.call(&echo(), args("x"), CancelToken::new()).await,
        Err(CallError::Rejected {
            message: "no such tool".into()
        })
    );
    // The server is still usable.
    assert!(set.statuses()[0].connected);
}

#[tokio::test]
async fn mcp22_no_answer_in_time_is_a_timeout_and_the_server_is_told() {
    let server = FakeServer::start(Behaviour {
        call_hangs: true,
        ..Behaviour::default()
    })
    .await;
    let set = session(&server, Duration::from_millis(300)).await;
    let started = std::time::Instant::now();
    assert_eq!(
        set.call(&echo(), args("x"), CancelToken::new()).await,
        Err(CallError::Timeout)
    );
    assert!(started.elapsed() < Duration::from_secs(3));
    assert!(wait_for(&server, "notifications/cancelled").await);
}

#[tokio::test]
async fn mcp29_cancelling_mid_call_sends_notifications_cancelled() {
    let server = FakeServer::start(Behaviour {
        call_hangs: true,
        ..Behaviour::default()
    })
    .await;
    let set = session(&server, Duration::from_secs(30)).await;
    let cancel = CancelToken::new();
    let trigger = cancel.clone();
    let canceller = async {
        assert!(wait_for(&server, "tools/call").await);
        trigger.cancel();
    };
    let id = echo();
    let (outcome, ()) = tokio::join!(set.call(&id, args("x"), cancel), canceller);
    assert_eq!(outcome, Err(CallError::Cancelled));
    assert!(wait_for(&server, "notifications/cancelled").await);
    let note = server
        .requests()
        .into_iter()
        .find(|r| r.method == "notifications/cancelled")
        .unwrap();
    let call = server
        .requests()
        .into_iter()
        .find(|r| r.method == "tools/call")
        .unwrap();
    assert_eq!(note.body["params"]["requestId"], call.body["id"]);
}

#[tokio::test]
async fn mcp28_a_server_dying_mid_call_is_closed_dispatched_and_leaves_the_catalog() {
    let server = FakeServer::start(Behaviour {
        call_dies: true,
        ..Behaviour::default()
    })
    .await;
    let set = session(&server, Duration::from_secs(5)).await;
    assert_eq!(
        set.call(&echo(), args("x"), CancelToken::new()).await,
        Err(CallError::Closed { dispatched: true })
    );
    let status = &set.statuses()[0];
    assert!(!status.connected);
    assert_eq!(status.reason, Some(StatusReason::ConnectFailed));
    assert!(set.list().await.unwrap().capabilities.is_empty());
    assert_eq!(
        set.call(&echo(), args("x"), CancelToken::new()).await,
        Err(CallError::Unavailable {
            reason: "connect_failed".into()
        })
    );
}

#[tokio::test]
async fn mcp22_a_server_gone_before_the_call_is_closed_not_dispatched() {
    let server = FakeServer::start(Behaviour::default()).await;
    let set = session(&server, Duration::from_secs(5)).await;
    server.stop();
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(
        set.call(&echo(), args("x"), CancelToken::new()).await,
        Err(CallError::Closed { dispatched: false })
    );
    assert!(!set.statuses()[0].connected);
}

#[tokio::test]
async fn mcp24_at_most_eight_calls_in_flight_and_queue_time_counts() {
    let server = FakeServer::start(Behaviour {
        call_hangs: true,
        ..Behaviour::default()
    })
    .await;
    let set = session(&server, Duration::from_millis(1_500)).await;
    let id = echo();
    let calls: Vec<_> = (0..9)
        .map(|i| set.call(&id, args(&format!("{i}")), CancelToken::new()))
        .collect();
    let outcomes = futures::future::join_all(calls).await;
    // Every call timed out: eight on the wire, one in the queue for the whole deadline.
    assert!(
        outcomes.iter().all(|o| *o == Err(CallError::Timeout)),
        "{outcomes:?}"
    );
    let sent = server
        .requests()
        .iter()
        .filter(|r| r.method == "tools/call")
        .count();
    assert_eq!(sent, 8);
}
