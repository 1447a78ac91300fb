//! A session server's `notifications/tools/list_changed` (here inside the SSE answer of a
//! call) makes the set tell the catalog (`changes()`), and the tools are listed again before
//! the next task (SMS-08's per-task refresh), on the same connection.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod sms_support;

use std::time::Duration;

use capability_model::{CancelToken, CapabilityId, CapabilitySource};
use futures::StreamExt;
use mcp_adapter::session_http::{
    McpHttpServer, SessionHttpConfig, SessionMcpServers, SessionUrlPolicy,
};
use serde_json::Map;
use sms_support::{Behaviour, FakeServer};

#[tokio::test]
async fn list_changed_is_announced_and_relisted_before_the_next_task() {
    let server = FakeServer::start(Behaviour {
        call_changes_tools: true,
        ..Behaviour::default()
    })
    .await;
    let set = SessionMcpServers::start(
        vec![McpHttpServer::new("s", server.url(), vec![])],
        SessionHttpConfig {
            policy: SessionUrlPolicy::loopback_for_tests(),
            handshake_timeout: Duration::from_secs(5),
            ..SessionHttpConfig::default()
        },
    )
    .await
    .unwrap();
    assert_eq!(set.statuses()[0].tool_count, 1);
    let mut changes = set.changes();
    let out = set
        .call(
            &CapabilityId::session("s", "echo"),
            Map::new(),
            CancelToken::new(),
        )
        .await
        .unwrap();
    assert_eq!(out.joined_text(), "grown");
    tokio::time::timeout(Duration::from_secs(5), changes.next())
        .await
        .expect("no change announced")
        .unwrap();
    let status = &set.refresh_before_task().await[0];
    assert!(status.connected);
    assert_eq!(status.tool_count, 2);
    let names: Vec<String> = set
        .list()
        .await
        .unwrap()
        .capabilities
        .into_iter()
        .map(|c| c.id.name)
        .collect();
    assert_eq!(names, ["echo", "extra"]);
    // Same connection: one initialize, two tools/list.
    let methods = server.methods();
    assert_eq!(methods.iter().filter(|m| *m == "initialize").count(), 1);
    assert_eq!(methods.iter().filter(|m| *m == "tools/list").count(), 2);
    // Without a new announcement the next task lists nothing again.
    set.refresh_before_task().await;
    assert_eq!(
        server
            .methods()
            .iter()
            .filter(|m| *m == "tools/list")
            .count(),
        2
    );
}
