//! SMS-08: before each task the servers that are down are tried again, but never within 30 s
//! of their last failure. The hold-off runs on an injected clock (no real 30 s waits); the
//! servers are real sockets on 127.0.0.1.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod sms_support;

use std::sync::Arc;
use std::time::Duration;

use capability_model::{CallError, CancelToken, CapabilityId, CapabilitySource};
use mcp_adapter::session_http::{
    ManualClock, McpHttpServer, RETRY_HOLD_OFF, SessionHttpConfig, SessionMcpServers,
    SessionUrlPolicy, StatusReason,
};
use serde_json::Map;
use sms_support::{Behaviour, FakeServer};
use tokio::net::TcpListener;

fn config(clock: Arc<ManualClock>) -> SessionHttpConfig {
    SessionHttpConfig {
        policy: SessionUrlPolicy::loopback_for_tests(),
        handshake_timeout: Duration::from_secs(5),
        clock,
        ..SessionHttpConfig::default()
    }
}

#[test]
fn sms08_the_hold_off_is_thirty_seconds() {
    assert_eq!(RETRY_HOLD_OFF, Duration::from_secs(30));
    assert_eq!(SessionHttpConfig::default().retry_hold_off, RETRY_HOLD_OFF);
}

#[tokio::test]
async fn sms08_a_failed_server_is_retried_only_after_thirty_seconds() {
    // A port nobody listens on — yet.
    let reserved = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = reserved.local_addr().unwrap();
    drop(reserved);
    let clock = Arc::new(ManualClock::new());
    let url = format!("http://{addr}/mcp");
    let set = SessionMcpServers::start(
        vec![McpHttpServer::new("late", url, vec![])],
        config(clock.clone()),
    )
    .await
    .unwrap();
    assert_eq!(set.statuses()[0].reason, Some(StatusReason::ConnectFailed));
    assert_eq!(set.connect_attempts("late"), 1);

    // The server comes up on that port.
    let server = FakeServer::serve(TcpListener::bind(addr).await.unwrap(), Behaviour::default());

    // Within the hold-off: no attempt at all.
    assert!(!set.refresh_before_task().await[0].connected);
    clock.advance(Duration::from_secs(29));
    assert!(!set.refresh_before_task().await[0].connected);
    assert_eq!(set.connect_attempts("late"), 1);
    assert!(server.requests().is_empty());

    // 30 s after the failure: tried, and connected.
    clock.advance(Duration::from_secs(1));
    let status = &set.refresh_before_task().await[0];
    assert!(status.connected);
    assert_eq!(status.reason, None);
    assert_eq!(status.tool_count, 1);
    assert_eq!(set.connect_attempts("late"), 2);

    // A connected server is not reconnected before a task.
    clock.advance(Duration::from_secs(60));
    set.refresh_before_task().await;
    assert_eq!(set.connect_attempts("late"), 2);
}

#[tokio::test]
async fn sms08_after_a_lost_connection_the_next_task_tries_at_once_then_holds_off() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let server = FakeServer::serve(listener, Behaviour::default());
    let clock = Arc::new(ManualClock::new());
    let set = SessionMcpServers::start(
        vec![McpHttpServer::new(
            "s",
            format!("http://{addr}/mcp"),
            vec![],
        )],
        config(clock.clone()),
    )
    .await
    .unwrap();
    assert!(set.statuses()[0].connected);

    // The server goes away; a call finds out.
    server.stop();
    tokio::time::sleep(Duration::from_millis(50)).await;
    let id = CapabilityId::session("s", "echo");
    assert_eq!(
        set.call(&id, Map::new(), CancelToken::new()).await,
        Err(CallError::Closed { dispatched: false })
    );
    assert!(!set.statuses()[0].connected);

    // The next task tries at once (the loss itself is no failed attempt) and fails.
    let status = &set.refresh_before_task().await[0];
    assert_eq!(status.reason, Some(StatusReason::ConnectFailed));
    assert_eq!(set.connect_attempts("s"), 2);

    // Back on the same port; still held off until 30 s after that failed attempt.
    let back = FakeServer::serve(TcpListener::bind(addr).await.unwrap(), Behaviour::default());
    clock.advance(Duration::from_secs(10));
    assert!(!set.refresh_before_task().await[0].connected);
    assert_eq!(set.connect_attempts("s"), 2);
    clock.advance(Duration::from_secs(20));
    assert!(set.refresh_before_task().await[0].connected);
    assert_eq!(set.connect_attempts("s"), 3);
    let out = set
        .call(
            &id,
            serde_json::json!({"text": "again"})
                .as_object()
                .unwrap()
                .clone(),
            CancelToken::new(),
        )
        .await
        .unwrap();
    assert_eq!(out.joined_text(), "echo: again");
    drop(back);
}
