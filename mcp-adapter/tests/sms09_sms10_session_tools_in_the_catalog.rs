//! SMS-09 / SMS-10 / CAT-64: session tools enter the catalog as `ses__<server>__<tool>`
//! (never `mcp__`, never `read_skill`), at risk ≥ WRITE whatever `readOnlyHint` says, HIGH
//! with `destructiveHint`; never rememberable ("always allow"); hidden in READ_ONLY and
//! CHAT; untouched by toolScope.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod sms_support;

use std::time::Duration;

use capability_model::{
    CapabilitySource, Catalog, Risk, ScopeEntry, SessionMode, Source, ToolScope, naming,
};
use mcp_adapter::session_http::{
    McpHttpServer, SessionHttpConfig, SessionMcpServers, SessionUrlPolicy,
};
use serde_json::json;
use sms_support::{Behaviour, FakeServer};

#[tokio::test]
async fn sms09_sms10_names_risk_modes_scope_and_no_always_allow() {
    let long_tool = "a_really_long_tool_name_that_will_not_fit_in_sixty_four_characters";
    let server = FakeServer::start(Behaviour {
        tools: vec![
            json!({"name": "lookup", "inputSchema": {"type": "object"},
                   "annotations": {"readOnlyHint": true}}),
            json!({"name": "wipe", "inputSchema": {"type": "object"},
                   "annotations": {"destructiveHint": true}}),
            json!({"name": "read_skill", "inputSchema": {"type": "object"}}),
            json!({"name": long_tool, "inputSchema": {"type": "object"}}),
        ],
        ..Behaviour::default()
    })
    .await;
    let set = SessionMcpServers::start(
        vec![McpHttpServer::new("orders.v2", server.url(), vec![])],
        SessionHttpConfig {
            policy: SessionUrlPolicy::loopback_for_tests(),
            handshake_timeout: Duration::from_secs(5),
            ..SessionHttpConfig::default()
        },
    )
    .await
    .unwrap();
    assert_eq!(set.source(), Source::SessionMcp);
    let listing = set.list().await.unwrap();
    assert_eq!(listing.capabilities.len(), 4);
    let catalog = Catalog::build(listing.capabilities);
    let name = |tool: &str| {
        catalog
            .entries()
            .iter()
            .find(|e| e.capability.id.name == tool)
            .unwrap()
            .name
            .clone()
    };
    assert_eq!(name("lookup"), "ses__orders_v2__lookup");
    assert_eq!(name("read_skill"), "ses__orders_v2__read_skill");
    let long = name(long_tool);
    assert_eq!(long.len(), 64);
    assert_eq!(long, naming::session_name_of("orders.v2", long_tool));
    for e in catalog.entries() {
        assert!(
            e.name.starts_with("ses__") && !e.name.starts_with("mcp__"),
            "{}",
            e.name
        );
        assert_ne!(e.name, "read_skill");
        assert!(e.capability.risk() >= Risk::Write);
        assert!(
            !permissions::policy::rememberable(&e.capability),
            "{}",
            e.name
        );
    }
    let entry = |tool: &str| {
        catalog
            .entries()
            .iter()
            .find(|e| e.capability.id.name == tool)
            .unwrap()
    };
    assert_eq!(entry("lookup").capability.risk(), Risk::Write);
    assert_eq!(entry("wipe").capability.risk(), Risk::High);

    let visible = |scope: &ToolScope, mode| catalog.visible(scope, mode).count();
    let none = ToolScope::restricted(Vec::<ScopeEntry>::new());
    assert_eq!(visible(&ToolScope::unrestricted(), SessionMode::Default), 4);
    assert_eq!(visible(&none, SessionMode::Default), 4);
    assert_eq!(
        visible(&ToolScope::unrestricted(), SessionMode::ReadOnly),
        0
    );
    assert_eq!(visible(&ToolScope::unrestricted(), SessionMode::Chat), 0);
}
