//! Discovery on a Linux host end to end: a registry entry exporting an MCP plugin (package
//! directory + socket), a real provider serving `IMcpService` over rsbinder RPC on that
//! socket, and the `McpSource`s discovery builds: listed and called through the catalog
//! types, with the peer UID checked against the registry.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "fixtures/plugins/registry.rs"]
mod registry;
#[path = "fixtures/plugins/support.rs"]
mod support;

use std::os::unix::fs::MetadataExt;
use std::time::Duration;

use binder_channel::binder::{AdmitAll, ServiceKind, rpc_uri, serve_channels};
use capability_model::{
    Annotations, CancelToken, CapabilityId, CapabilitySource, ListError, ToolOutput,
};
use mcp_adapter::discovery::Discovery;
use mcp_adapter::{McpServer, PluginStatus};
use registry::*;
use serde_json::json;
use support::*;

fn server() -> McpServer {
    McpServer::new("notes", |r| {
        r.tool(
            "note_count",
            None,
            "Count the notes.",
            json!({"type": "object"}),
            Annotations::default(),
            |_, _| async { Ok(ToolOutput::json(json!({"count": 3}))) },
        )?;
        Ok(())
    })
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn discovered_plugin_sources_list_and_call_over_rsbinder_rpc() {
    let d = package_dir(&manifest("notes", &["notes"]));
    skill(d.path(), "howto", "How to count.");
    let uid = std::fs::metadata(d.path()).unwrap().uid();
    let sock = d.path().join("notes.sock");
    let (_guard, incoming) =
        serve_channels(rpc_uri(&sock, "notes"), ServiceKind::Mcp, AdmitAll).unwrap();
    server().serve_incoming(incoming);

    let plugins = discover_with(
        &[entry(uid, "com.example.notes", DIGEST_A, d.path(), &sock)],
        json!({"version": 1, "plugins": [
            {"package": "com.example.notes", "signingCertSha256": DIGEST_A, "plugin": "notes"}]}),
    );
    assert_eq!(plugins[0].status(), PluginStatus::Ready);
    let found = Discovery {
        registry: "r".into(),
        plugins,
    };
    let sources = found.sources(Duration::from_secs(5));
    assert_eq!(sources.len(), 1);
    assert!(!sources[0].is_connected().await, "discovery never connects");
    let listing = sources[0].list().await.unwrap();
    assert_eq!(listing.capabilities.len(), 1);
    assert_eq!(
        listing.capabilities[0].id,
        CapabilityId::mcp("notes", "notes", "note_count")
    );
    let out = sources[0]
        .call(
            &listing.capabilities[0].id,
            serde_json::Map::new(),
            CancelToken::new(),
        )
        .await
        .unwrap();
    assert_eq!(out.structured_content, Some(json!({"count": 3})));
    let skills = found.skill_catalog();
    assert_eq!(skills.len(), 1);
    assert!(
        skills
            .read("howto", None)
            .unwrap()
            .contains("Body of howto.")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_peer_with_another_uid_than_the_registry_says_is_refused() {
    let d = package_dir(&manifest("notes", &["notes"]));
    let uid = std::fs::metadata(d.path()).unwrap().uid();
    let sock = d.path().join("notes.sock");
    let (_guard, incoming) =
        serve_channels(rpc_uri(&sock, "notes"), ServiceKind::Mcp, AdmitAll).unwrap();
    server().serve_incoming(incoming);
    let plugins = discover_with(
        &[entry(
            uid.wrapping_add(777),
            "com.example.notes",
            DIGEST_A,
            d.path(),
            &sock,
        )],
        json!({"version": 1, "bundled": ["com.example.notes"]}),
    );
    let found = Discovery {
        registry: "r".into(),
        plugins,
    };
    let sources = found.sources(Duration::from_secs(5));
    match sources[0].list().await {
        Err(ListError::Unavailable { reason }) => assert_eq!(reason, "connect_failed"),
        other => panic!("{other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plugin_that_is_not_running_is_unavailable_not_hung() {
    let d = package_dir(&manifest("notes", &["notes"]));
    let uid = std::fs::metadata(d.path()).unwrap().uid();
    let plugins = discover_with(
        &[entry(
            uid,
            "com.example.notes",
            DIGEST_A,
            d.path(),
            &d.path().join("absent.sock"),
        )],
        json!({"version": 1, "bundled": ["com.example.notes"]}),
    );
    let found = Discovery {
        registry: "r".into(),
        plugins,
    };
    let sources = found.sources(Duration::from_secs(2));
    let started = std::time::Instant::now();
    assert!(matches!(
        sources[0].list().await,
        Err(ListError::Unavailable { .. })
    ));
    assert!(started.elapsed() < Duration::from_secs(10));
}
