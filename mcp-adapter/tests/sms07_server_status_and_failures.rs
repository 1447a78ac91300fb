//! SMS-07: a server that cannot be used does not fail the session; each has
//! `{name, connected, toolCount, reason}` with a short reason code. Every failure is a real
//! socket on 127.0.0.1: refused, never answering, a failing `tools/list`, too many tools, an
//! unsupported protocol revision (MCP-21).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod sms_support;

use std::time::Duration;

use capability_model::{CapabilitySource, IssueKind, Source};
use mcp_adapter::session_http::{
    McpHttpServer, ServerStatus, SessionHttpConfig, SessionMcpServers, SessionUrlPolicy,
    StatusReason,
};
use sms_support::{Behaviour, FakeServer, many_tools, refused_url};

fn config() -> SessionHttpConfig {
    SessionHttpConfig {
        policy: SessionUrlPolicy::loopback_for_tests(),
        handshake_timeout: Duration::from_millis(700),
        ..SessionHttpConfig::default()
    }
}

fn server(name: &str, url: String) -> McpHttpServer {
    McpHttpServer::new(name, url, vec![])
}

fn status(set: &SessionMcpServers, name: &str) -> ServerStatus {
    set.statuses().into_iter().find(|s| s.name == name).unwrap()
}

#[tokio::test]
async fn sms07_a_healthy_server_connects_and_lists_its_tools() {
    let ok = FakeServer::start(Behaviour::default()).await;
    let set = SessionMcpServers::start(vec![server("ok", ok.url())], config())
        .await
        .unwrap();
    assert_eq!(
        set.statuses(),
        vec![ServerStatus {
            name: "ok".into(),
            connected: true,
            tool_count: 1,
            reason: None
        }]
    );
    let listing = set.list().await.unwrap();
    assert_eq!(listing.capabilities.len(), 1);
    let cap = &listing.capabilities[0];
    assert_eq!(cap.id.source, Source::SessionMcp);
    assert_eq!(
        (
            cap.id.provider.as_str(),
            cap.id.server.as_str(),
            cap.id.name.as_str()
        ),
        ("", "ok", "echo")
    );
    let methods = ok.methods();
    assert_eq!(methods[0], "initialize");
    assert!(methods.contains(&"notifications/initialized".to_string()));
    assert!(methods.contains(&"tools/list".to_string()));
}

#[tokio::test]
async fn sms07_failures_do_not_fail_the_session_and_each_gets_its_reason() {
    let ok = FakeServer::start(Behaviour::default()).await;
    let silent = FakeServer::start(Behaviour {
        never_answer: true,
        ..Behaviour::default()
    })
    .await;
    let list_fails = FakeServer::start(Behaviour {
        list_fails: true,
        ..Behaviour::default()
    })
    .await;
    let too_many = FakeServer::start(Behaviour {
        tools: many_tools(129),
        ..Behaviour::default()
    })
    .await;
    let set = SessionMcpServers::start(
        vec![
            server("refused", refused_url().await),
            server("silent", silent.url()),
            server("list_fails", list_fails.url()),
            server("too_many", too_many.url()),
        ],
        config(),
    )
    .await
    .unwrap();
    let expect = |name: &str, reason: StatusReason| ServerStatus {
        name: name.into(),
        connected: false,
        tool_count: 0,
        reason: Some(reason),
    };
    assert_eq!(
        set.statuses(),
        vec![
            expect("refused", StatusReason::ConnectFailed),
            expect("silent", StatusReason::Timeout),
            expect("list_fails", StatusReason::ListFailed),
            expect("too_many", StatusReason::TooManyTools),
        ]
    );
    let listing = set.list().await.unwrap();
    assert!(listing.capabilities.is_empty());
    assert!(
        listing
            .issues
            .iter()
            .any(|i| i.kind == IssueKind::TooManyTools)
    );
    // The codes on the wire.
    let json = serde_json::to_value(set.statuses()).unwrap();
    let reasons: Vec<&str> = json
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["reason"].as_str().unwrap())
        .collect();
    assert_eq!(
        reasons,
        ["connect_failed", "timeout", "list_failed", "too_many_tools"]
    );
    assert_eq!(json[0]["toolCount"], 0);
    assert_eq!(json[0]["connected"], false);
    drop(ok);
}

#[tokio::test]
async fn mcp32_exactly_the_limit_is_still_accepted() {
    let at_limit = FakeServer::start(Behaviour {
        tools: many_tools(128),
        ..Behaviour::default()
    })
    .await;
    let set = SessionMcpServers::start(vec![server("s", at_limit.url())], config())
        .await
        .unwrap();
    assert_eq!(status(&set, "s").tool_count, 128);
}

#[tokio::test]
async fn sms07_a_server_with_ten_thousand_tools_is_too_many_tools() {
    let huge = FakeServer::start(Behaviour {
        tools: many_tools(10_000),
        ..Behaviour::default()
    })
    .await;
    let set = SessionMcpServers::start(vec![server("s", huge.url())], config())
        .await
        .unwrap();
    assert_eq!(status(&set, "s").reason, Some(StatusReason::TooManyTools));
}

#[tokio::test]
async fn mcp21_an_unsupported_revision_marks_the_server_protocol_version() {
    let old = FakeServer::start(Behaviour {
        protocol_version: "2023-01-01".into(),
        ..Behaviour::default()
    })
    .await;
    let set = SessionMcpServers::start(vec![server("old", old.url())], config())
        .await
        .unwrap();
    assert_eq!(
        status(&set, "old").reason,
        Some(StatusReason::ProtocolVersion)
    );
    assert!(!old.methods().contains(&"tools/list".to_string()));
}

#[tokio::test]
async fn sms07_bad_tool_entries_are_left_out_and_the_rest_stay_usable() {
    let mixed = FakeServer::start(Behaviour {
        tools: vec![
            serde_json::json!({"name": "good", "inputSchema": {"type": "object"}}),
            serde_json::json!({"name": "bad name!", "inputSchema": {"type": "object"}}),
        ],
        ..Behaviour::default()
    })
    .await;
    let set = SessionMcpServers::start(vec![server("m", mixed.url())], config())
        .await
        .unwrap();
    let listing = set.list().await.unwrap();
    let names: Vec<&str> = listing
        .capabilities
        .iter()
        .map(|c| c.id.name.as_str())
        .collect();
    assert_eq!(names, ["good"]);
    assert_eq!(listing.issues.len(), 1);
}
