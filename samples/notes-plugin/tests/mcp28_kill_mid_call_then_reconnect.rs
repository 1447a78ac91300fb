//! MCP-22 / MCP-28 with a real process: the notes plugin runs as its own process serving
//! rsbinder RPC; the host kills it (SIGKILL) while a `tools/call` is in flight, reports
//! `Closed { dispatched: true }` (`tool_result_unknown`), and after the process is started
//! again the next call reconnects and succeeds, seeing exactly the data persisted before the
//! kill. "In flight" is not a race: the binary's `--slow-ms` test aid makes each call announce
//! itself on stderr and wait before it runs, and the kill happens after that announcement.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use binder_channel::binder::{ConnectOptions, ServiceKind, connect, rpc_uri};
use capability_model::{CallError, CancelToken, CapabilitySource};
use common::{Home, Plugin, args, id};
use mcp_adapter::{ClientError, McpClient};
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp28_source_reports_closed_dispatched_then_reconnects_to_the_restarted_process() {
    let home = Home::new();
    let mut plugin = Plugin::start(&home, &["--slow-ms", "400"]).await;
    let source = home.source();

    let out = source
        .call(
            &id("note_add"),
            args(json!({"title": "Before", "content": "persisted before the kill"})),
            CancelToken::new(),
        )
        .await
        .unwrap();
    assert_eq!(out.structured_content.as_ref().unwrap()["id"], 1);
    plugin.stderr_line("note_add started").await;

    // The second add is in the handler's wait when the process dies.
    let add = id("note_add");
    let in_flight = source.call(
        &add,
        args(json!({"title": "Lost", "content": "in flight at the kill"})),
        CancelToken::new(),
    );
    let kill = async {
        plugin.stderr_line("note_add started").await;
        plugin.kill().await;
    };
    let (result, ()) = tokio::time::timeout(Duration::from_secs(30), async {
        tokio::join!(in_flight, kill)
    })
    .await
    .expect("the in-flight call did not end within 30 s of the kill");
    let error = result.unwrap_err();
    assert_eq!(error, CallError::Closed { dispatched: true });
    assert_eq!(
        ClientError::Closed { dispatched: true }.tool_error_code(),
        "tool_result_unknown"
    );
    assert!(!source.is_connected().await);

    // Started again on the same socket and data file: the next call reconnects and works.
    let _plugin = Plugin::start(&home, &[]).await;
    let out = source
        .call(&id("note_list"), args(json!({})), CancelToken::new())
        .await
        .unwrap();
    let listed = out.structured_content.unwrap();
    assert_eq!(listed["total"], 1, "{listed}");
    assert_eq!(listed["notes"][0]["title"], "Before");
    assert!(source.is_connected().await);
    // The id counter was persisted too: the next note is 2, not a reused 1.
    let out = source
        .call(
            &id("note_add"),
            args(json!({"content": "after the restart"})),
            CancelToken::new(),
        )
        .await
        .unwrap();
    assert_eq!(out.structured_content.unwrap()["id"], 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp22_client_reports_closed_dispatched_when_the_process_dies_mid_call() {
    let home = Home::new();
    let mut plugin = Plugin::start(&home, &["--slow-ms", "10000"]).await;
    let uri = rpc_uri(home.socket(), "notes");
    let opened = connect(uri, ServiceKind::Mcp, ConnectOptions::default())
        .await
        .unwrap();
    let client = McpClient::connect(opened.channel).await.unwrap();
    assert_eq!(client.server_info().name, "notes");

    let none = CancelToken::new();
    let call = client.call_tool(
        "note_search",
        args(json!({"query": "milk"})),
        Duration::from_secs(30),
        &none,
    );
    let kill = async {
        plugin.stderr_line("note_search started").await;
        plugin.kill().await;
    };
    let (result, ()) =
        tokio::time::timeout(Duration::from_secs(30), async { tokio::join!(call, kill) })
            .await
            .expect("the call did not end within 30 s of the kill");
    assert_eq!(
        result.unwrap_err(),
        ClientError::Closed { dispatched: true }
    );
    assert!(client.is_closed());
    // A call on the dead connection was never sent.
    let e = client
        .call_tool(
            "note_list",
            args(json!({})),
            Duration::from_secs(5),
            &CancelToken::new(),
        )
        .await
        .unwrap_err();
    assert_eq!(e, ClientError::Closed { dispatched: false });
}
