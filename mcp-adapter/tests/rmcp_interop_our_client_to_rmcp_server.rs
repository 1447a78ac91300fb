//! Real peer, direction (b): OUR host client (`McpClient`) talks to an rmcp server (a
//! `ServerHandler` served by rmcp's own service layer through [`ChannelTransport`]), over the
//! in-memory binder-channel pair and over rsbinder RPC on a Unix socket: initialize (MCP-20,
//! MCP-21), tools/list into catalog records (MCP-31), tools/call results (MCP-06..MCP-08), the
//! server's JSON-RPC error as `Rpc` (MCP-22), and cancellation / timeout sending
//! `notifications/cancelled` that fires the rmcp handler's token (MCP-29).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::Duration;

use binder_channel::Channel;
use binder_channel::binder::{
    AdmitAll, ConnectOptions, ServiceKind, connect, rpc_uri, serve_channels,
};
use capability_model::CancelToken;
use mcp_adapter::{ChannelTransport, ClientError, McpClient};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
    ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Map, Value, json};
use tokio::sync::Notify;

/// An rmcp server with four tools; `wait_for_cancel` blocks until rmcp's cancellation token
/// for the request fires, and counts how often that happened.
#[derive(Clone, Default)]
struct RmcpNotes {
    entered: Arc<Notify>,
    cancelled: Arc<Notify>,
}

fn schema(v: Value) -> Arc<Map<String, Value>> {
    Arc::new(v.as_object().cloned().unwrap())
}

impl ServerHandler for RmcpNotes {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("rmcp-notes", "3.11.0"))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let mut upper = Tool::new(
            "upper",
            "Upper-case the text.",
            schema(
                json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
            ),
        );
        upper.annotations = Some(ToolAnnotations::from_raw(
            None,
            Some(true),
            None,
            Some(true),
            None,
        ));
        Ok(ListToolsResult::with_all_items(vec![
            upper,
            Tool::new(
                "stats",
                "Note statistics.",
                schema(json!({"type": "object"})),
            ),
            Tool::new("refuse", "Always fails.", schema(json!({"type": "object"}))),
            Tool::new(
                "wait_for_cancel",
                "Waits until cancelled.",
                schema(json!({"type": "object"})),
            ),
        ]))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let args = request.arguments.unwrap_or_default();
        match request.name.as_ref() {
            "upper" => {
                let text = args.get("text").and_then(Value::as_str).unwrap_or_default();
                Ok(CallToolResult::success(vec![ContentBlock::text(text.to_uppercase())]).into())
            }
            "stats" => Ok(CallToolResult::structured(json!({"notes": 3, "archived": 1})).into()),
            "refuse" => Ok(CallToolResult::error(vec![ContentBlock::text(
                "The notebook is locked.",
            )])
            .into()),
            "wait_for_cancel" => {
                self.entered.notify_one();
                context.ct.cancelled().await;
                self.cancelled.notify_one();
                Ok(CallToolResult::success(vec![ContentBlock::text("late")]).into())
            }
            _ => Err(McpError::invalid_params("unknown tool", None)),
        }
    }
}

fn serve_rmcp(handler: RmcpNotes, channel: Channel) {
    tokio::spawn(async move {
        if let Ok(running) = handler
            .serve(ChannelTransport::<RoleServer>::new(channel))
            .await
        {
            let _ = running.waiting().await;
        }
    });
}

fn args(v: Value) -> Map<String, Value> {
    v.as_object().cloned().unwrap()
}

async fn round(host_end: Channel, handler: &RmcpNotes) {
    let client = McpClient::connect(host_end).await.unwrap();
    assert_eq!(client.server_info().name, "rmcp-notes");
    assert_eq!(client.protocol_version(), "2025-11-25");

    let listing = client
        .list_capabilities("rmcp-notes", "notes")
        .await
        .unwrap();
    let names: Vec<_> = listing
        .capabilities
        .iter()
        .map(|c| c.id.name.as_str())
        .collect();
    assert_eq!(names, ["upper", "stats", "refuse", "wait_for_cancel"]);
    assert!(listing.issues.is_empty(), "{:?}", listing.issues);
    assert_eq!(
        listing.capabilities[0].annotations.read_only_hint,
        Some(true)
    );
    assert_eq!(
        listing.capabilities[0].annotations.idempotent_hint,
        Some(true)
    );

    let t = Duration::from_secs(10);
    let none = CancelToken::new();
    let out = client
        .call_tool("upper", args(json!({"text": "milk"})), t, &none)
        .await
        .unwrap();
    assert_eq!(out.joined_text(), "MILK");
    assert!(!out.is_error);
    let out = client
        .call_tool("stats", args(json!({})), t, &none)
        .await
        .unwrap();
    assert_eq!(
        out.structured_content,
        Some(json!({"notes": 3, "archived": 1}))
    );
    let out = client
        .call_tool("refuse", args(json!({})), t, &none)
        .await
        .unwrap();
    assert!(out.is_error);
    assert_eq!(out.joined_text(), "The notebook is locked.");
    let e = client
        .call_tool("missing", args(json!({})), t, &none)
        .await
        .unwrap_err();
    assert!(matches!(e, ClientError::Rpc { code: -32602, .. }), "{e:?}");

    // Cancel: our notifications/cancelled reaches rmcp, whose token fires in the handler.
    let cancel = CancelToken::new();
    let call = client.call_tool(
        "wait_for_cancel",
        args(json!({})),
        Duration::from_secs(20),
        &cancel,
    );
    let fire = async {
        handler.entered.notified().await;
        cancel.cancel();
    };
    let (result, ()) = tokio::join!(call, fire);
    assert_eq!(result.unwrap_err(), ClientError::Cancelled);
    handler.cancelled.notified().await;

    // Timeout: the call ends as Timeout and the provider is told to stop (MCP-29).
    let e = client
        .call_tool(
            "wait_for_cancel",
            args(json!({})),
            Duration::from_millis(300),
            &none,
        )
        .await
        .unwrap_err();
    assert_eq!(e, ClientError::Timeout);
    handler.cancelled.notified().await;

    // The connection is still good.
    let out = client
        .call_tool("upper", args(json!({"text": "ok"})), t, &none)
        .await
        .unwrap();
    assert_eq!(out.joined_text(), "OK");
    assert_eq!(client.malformed_messages(), 0);
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn our_client_lists_calls_and_cancels_on_an_rmcp_server_in_memory() {
    let handler = RmcpNotes::default();
    let (host_end, rmcp_end) = binder_channel::memory::pair(1_000, 10_123).unwrap();
    serve_rmcp(handler.clone(), rmcp_end);
    tokio::time::timeout(Duration::from_secs(30), round(host_end, &handler))
        .await
        .expect("the round took over 30 s");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn our_client_lists_calls_and_cancels_on_an_rmcp_server_over_rsbinder_rpc() {
    let handler = RmcpNotes::default();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rmcp.sock");
    let (_guard, mut incoming) =
        serve_channels(rpc_uri(&path, "rmcp-notes"), ServiceKind::Mcp, AdmitAll).unwrap();
    let h = handler.clone();
    tokio::spawn(async move {
        while let Some(channel) = incoming.accept().await {
            serve_rmcp(h.clone(), channel);
        }
    });
    let opened = connect(
        rpc_uri(&path, "rmcp-notes"),
        ServiceKind::Mcp,
        ConnectOptions::default(),
    )
    .await
    .unwrap();
    tokio::time::timeout(Duration::from_secs(30), round(opened.channel, &handler))
        .await
        .expect("the round took over 30 s");
}
