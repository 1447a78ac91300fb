//! Real peer, direction (a): rmcp's own client (`rmcp::ServiceExt::serve` with the unit
//! `ClientHandler`) talks to OUR provider (`McpServer`) through [`ChannelTransport`], over the
//! in-memory binder-channel pair and over rsbinder RPC on a Unix socket: initialize
//! (MCP-20/MCP-21, serverInfo MCP-03, tools capability MCP-04), tools/list (MCP-05),
//! tools/call (MCP-06..MCP-09, argument validation before the handler), and a cancel round
//! (MCP-29: rmcp's `notifications/cancelled` fires our handler's token).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use binder_channel::Channel;
use binder_channel::binder::{
    AdmitAll, ConnectOptions, ServiceKind, connect, rpc_uri, serve_channels,
};
use capability_model::{Annotations, ToolOutput};
use mcp_adapter::protocol::SUPPORTED_VERSIONS;
use mcp_adapter::{ChannelTransport, McpServer};
use rmcp::ServiceExt;
use rmcp::model::{CallToolRequest, CallToolRequestParams, ClientRequest, ServerResult};
use rmcp::service::PeerRequestOptions;
use serde_json::{Value, json};
use tokio::sync::oneshot;

/// Signals from the provider's `wait` handler: it started; its token fired.
#[derive(Default)]
struct Probe {
    entered: Mutex<Option<oneshot::Sender<()>>>,
    cancelled: Mutex<Option<oneshot::Sender<()>>>,
}

fn provider(probe: Arc<Probe>) -> McpServer {
    McpServer::with_version("notes", "1.2.0", move |r| {
        r.tool(
            "note_add",
            Some("Add a note"),
            "Add a note with the given text.",
            json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
            Annotations { idempotent_hint: Some(false), ..Annotations::default() },
            |a, _| async move { Ok(ToolOutput::json(json!({"id": 7, "text": a["text"]}))) },
        )?;
        r.tool(
            "note_count",
            None,
            "Count the notes.",
            json!({"type": "object"}),
            Annotations { read_only_hint: Some(true), ..Annotations::default() },
            |_, _| async { Ok(ToolOutput::text("3 notes")) },
        )?;
        let probe = probe.clone();
        r.tool("wait", None, "Waits until cancelled.", json!({"type": "object"}), Annotations::default(), move |_, token| {
            let probe = probe.clone();
            async move {
                if let Some(tx) = probe.entered.lock().unwrap().take() {
                    let _ = tx.send(());
                }
                token.cancelled().await;
                if let Some(tx) = probe.cancelled.lock().unwrap().take() {
                    let _ = tx.send(());
                }
                Ok(ToolOutput::text("stopped"))
            }
        })?;
        Ok(())
    })
    .unwrap()
}

fn call(name: &str, arguments: Value) -> CallToolRequestParams {
    CallToolRequestParams::new(name.to_owned())
        .with_arguments(arguments.as_object().cloned().unwrap())
}

/// The whole round, rmcp client side, over an opened channel to `server`.
async fn round(host_end: Channel, server: &McpServer, probe: &Probe) {
    let (entered_tx, entered_rx) = oneshot::channel();
    let (cancelled_tx, cancelled_rx) = oneshot::channel();
    *probe.entered.lock().unwrap() = Some(entered_tx);
    *probe.cancelled.lock().unwrap() = Some(cancelled_tx);

    // initialize + notifications/initialized, done by rmcp.
    let client = ().serve(ChannelTransport::new(host_end)).await.unwrap();
    let info = client.peer().peer_info().unwrap();
    let server_info = info.server_info.clone().unwrap();
    assert_eq!(server_info.name, "notes");
    assert_eq!(server_info.version, "1.2.0");
    assert!(
        SUPPORTED_VERSIONS.contains(&info.protocol_version.to_string().as_str()),
        "{}",
        info.protocol_version
    );
    let tools_cap = info.capabilities.tools.clone().unwrap();
    assert_eq!(tools_cap.list_changed, Some(true));

    // tools/list
    let tools = client.peer().list_all_tools().await.unwrap();
    let names: Vec<_> = tools.iter().map(|t| t.name.to_string()).collect();
    assert_eq!(names, ["note_add", "note_count", "wait"]);
    assert_eq!(tools[0].title.as_deref(), Some("Add a note"));
    assert_eq!(
        tools[1].annotations.as_ref().unwrap().read_only_hint,
        Some(true)
    );
    assert_eq!(tools[0].input_schema["required"], json!(["text"]));

    // tools/call: JSON object → structuredContent and a text block.
    let out = client
        .peer()
        .call_tool(call("note_add", json!({"text": "milk"})))
        .await
        .unwrap();
    assert_eq!(
        out.structured_content,
        Some(json!({"id": 7, "text": "milk"}))
    );
    assert_ne!(out.is_error, Some(true));
    assert!(!out.content.is_empty());
    let out = client
        .peer()
        .call_tool(call("note_count", json!({})))
        .await
        .unwrap();
    assert_eq!(out.content[0].as_text().unwrap().text, "3 notes");
    // Arguments are validated before the handler: a tool-level error, not a protocol one.
    let out = client
        .peer()
        .call_tool(call("note_add", json!({"text": 5})))
        .await
        .unwrap();
    assert_eq!(out.is_error, Some(true));
    // An unknown tool is a JSON-RPC error.
    assert!(
        client
            .peer()
            .call_tool(call("nope", json!({})))
            .await
            .is_err()
    );

    // Cancel round: rmcp sends notifications/cancelled; our handler's token fires.
    let handle = client
        .peer()
        .send_cancellable_request(
            ClientRequest::CallToolRequest(CallToolRequest::new(call("wait", json!({})))),
            PeerRequestOptions::no_options(),
        )
        .await
        .unwrap();
    entered_rx.await.unwrap();
    assert_eq!(server.calls_in_flight(), 1);
    handle
        .cancel(Some("the user stopped it".into()))
        .await
        .unwrap();
    cancelled_rx.await.unwrap();
    while server.calls_in_flight() != 0 {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    // The session goes on after the cancellation.
    let out = client
        .peer()
        .call_tool(call("note_count", json!({})))
        .await
        .unwrap();
    assert_eq!(out.content[0].as_text().unwrap().text, "3 notes");
    let pong = client
        .peer()
        .send_request(ClientRequest::PingRequest(Default::default()))
        .await
        .unwrap();
    assert!(matches!(pong, ServerResult::EmptyResult(_)));
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rmcp_client_lists_calls_and_cancels_on_our_provider_in_memory() {
    let probe = Arc::new(Probe::default());
    let server = provider(probe.clone());
    let (host_end, plugin_end) = binder_channel::memory::pair(1_000, 10_123).unwrap();
    server.serve(plugin_end);
    tokio::time::timeout(Duration::from_secs(30), round(host_end, &server, &probe))
        .await
        .expect("the round took over 30 s");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rmcp_client_lists_calls_and_cancels_on_our_provider_over_rsbinder_rpc() {
    let probe = Arc::new(Probe::default());
    let server = provider(probe.clone());
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("notes.sock");
    let (_guard, incoming) =
        serve_channels(rpc_uri(&path, "notes"), ServiceKind::Mcp, AdmitAll).unwrap();
    server.serve_incoming(incoming);
    let opened = connect(
        rpc_uri(&path, "notes"),
        ServiceKind::Mcp,
        ConnectOptions::default(),
    )
    .await
    .unwrap();
    // The provider side sees the kernel-given UID of this process (SO_PEERCRED).
    tokio::time::timeout(
        Duration::from_secs(30),
        round(opened.channel, &server, &probe),
    )
    .await
    .expect("the round took over 30 s");
}

/// Something rmcp cannot read is answered the binder-channel way and the session goes on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unreadable_input_to_an_rmcp_server_gets_the_framing_answer() {
    use rmcp::{RoleServer, ServerHandler};
    struct Bare;
    impl ServerHandler for Bare {}
    let (raw, rmcp_end) = binder_channel::memory::pair(1_000, 10_123).unwrap();
    tokio::spawn(async move {
        if let Ok(running) = Bare
            .serve(ChannelTransport::<RoleServer>::new(rmcp_end))
            .await
        {
            let _ = running.waiting().await;
        }
    });
    raw.send("not json").unwrap();
    let answer: Value = serde_json::from_str(&raw.recv().await.unwrap()).unwrap();
    assert_eq!(answer["error"]["code"], -32700);
    raw.send(r#"{"jsonrpc":"2.0","id":4,"method":7}"#).unwrap();
    let answer: Value = serde_json::from_str(&raw.recv().await.unwrap()).unwrap();
    assert_eq!(answer["error"]["code"], -32600);
    assert_eq!(answer["id"], 4);
}
