//! SMS-11: a stateful server hands out `Mcp-Session-Id` on `initialize` and gets it back on
//! every later request; a stateless one hands out none and is sent none. MCP-21: the
//! revision offered is capbridge's newest, and the answer's revision is accepted when
//! supported.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod sms_support;

use std::time::Duration;

use capability_model::{CancelToken, CapabilityId, CapabilitySource};
use mcp_adapter::session_http::{
    McpHttpServer, SessionHttpConfig, SessionMcpServers, SessionUrlPolicy,
};
use sms_support::{Behaviour, FakeServer};

async fn round(server: &FakeServer) {
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
    assert!(set.statuses()[0].connected, "{:?}", set.statuses());
    let args = serde_json::json!({"text": "x"})
        .as_object()
        .unwrap()
        .clone();
    let out = set
        .call(
            &CapabilityId::session("s", "echo"),
            args,
            CancelToken::new(),
        )
        .await
        .unwrap();
    assert_eq!(out.joined_text(), "echo: x");
}

fn session_header(r: &sms_support::Seen) -> Option<String> {
    r.headers
        .iter()
        .find(|(k, _)| k == "mcp-session-id")
        .map(|(_, v)| v.clone())
}

#[tokio::test]
async fn sms11_a_stateful_server_gets_its_session_id_back() {
    let server = FakeServer::start(Behaviour {
        session_id: Some("sess-42".into()),
        ..Behaviour::default()
    })
    .await;
    round(&server).await;
    let requests = server.requests();
    assert_eq!(requests[0].method, "initialize");
    assert_eq!(session_header(&requests[0]), None);
    let later: Vec<_> = requests
        .iter()
        .filter(|r| r.http_method == "POST")
        .skip(1)
        .collect();
    assert!(later.len() >= 3, "{requests:?}");
    for r in later {
        assert_eq!(
            session_header(r).as_deref(),
            Some("sess-42"),
            "{}",
            r.method
        );
    }
}

#[tokio::test]
async fn sms11_a_stateless_server_is_sent_no_session_id() {
    let server = FakeServer::start(Behaviour::default()).await;
    round(&server).await;
    let requests = server.requests();
    assert!(requests.iter().all(|r| session_header(r).is_none()));
    // MCP-21: the newest supported revision is offered.
    assert_eq!(requests[0].body["params"]["protocolVersion"], "2025-11-25");
}

#[tokio::test]
async fn mcp21_each_supported_revision_answered_is_accepted() {
    for version in ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"] {
        let server = FakeServer::start(Behaviour {
            protocol_version: version.into(),
            ..Behaviour::default()
        })
        .await;
        round(&server).await;
    }
}
