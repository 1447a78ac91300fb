//! `ChannelTransport` applies the binder-channel size rule (CH-12/CH-13) to rmcp's messages:
//! an rmcp server's response over 65,536 UTF-16 units reaches our client as an error response
//! with the same id (MCP-22 `Rpc`, the connection stays up); an rmcp client's request over the
//! limit fails locally and never reaches our provider.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use capability_model::{Annotations, CancelToken, ToolOutput};
use mcp_adapter::{ChannelTransport, ClientError, McpClient, McpServer};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ServerCapabilities,
    ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Map, Value, json};

struct Big;

impl ServerHandler for Big {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        // 40,000 "é" = 40,000 UTF-16 units but 80,000 bytes; "😀" is 2 units each.
        let text = match request.name.as_ref() {
            "big" => "😀".repeat(40_000),
            _ => "é".repeat(40_000),
        };
        Ok(CallToolResult::success(vec![ContentBlock::text(text)]).into())
    }
}

fn args(v: Value) -> Map<String, Value> {
    v.as_object().cloned().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_oversize_rmcp_response_becomes_an_error_with_the_same_id() {
    let (host, plugin) = binder_channel::memory::pair(1_000, 10_123).unwrap();
    tokio::spawn(async move {
        if let Ok(running) = Big.serve(ChannelTransport::<RoleServer>::new(plugin)).await {
            let _ = running.waiting().await;
        }
    });
    let client = McpClient::connect(host).await.unwrap();
    let t = Duration::from_secs(10);
    let none = CancelToken::new();
    let e = client
        .call_tool("big", args(json!({})), t, &none)
        .await
        .unwrap_err();
    match e {
        ClientError::Rpc { code, message } => {
            assert_eq!(code, -32603);
            assert!(
                message.starts_with("binder-channel-v1: message of"),
                "{message}"
            );
        }
        other => panic!("expected Rpc, got {other:?}"),
    }
    // Under the limit in UTF-16 units though over it in bytes: delivered whole.
    let out = client
        .call_tool("wide", args(json!({})), t, &none)
        .await
        .unwrap();
    assert_eq!(out.joined_text().encode_utf16().count(), 40_000);
    assert!(!client.is_closed());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_oversize_rmcp_request_is_never_sent() {
    let runs = Arc::new(AtomicUsize::new(0));
    let r2 = runs.clone();
    let server = McpServer::new("notes", move |r| {
        let r2 = r2.clone();
        r.tool(
            "note_add",
            None,
            "Add a note.",
            json!({"type": "object", "properties": {"text": {"type": "string"}}}),
            Annotations::default(),
            move |_, _| {
                r2.fetch_add(1, Ordering::SeqCst);
                async { Ok(ToolOutput::text("added")) }
            },
        )?;
        Ok(())
    })
    .unwrap();
    let (host, plugin) = binder_channel::memory::pair(1_000, 10_123).unwrap();
    server.serve(plugin);
    let client = ().serve(ChannelTransport::new(host)).await.unwrap();
    let huge = CallToolRequestParams::new("note_add")
        .with_arguments(args(json!({"text": "x".repeat(70_000)})));
    let result = tokio::time::timeout(Duration::from_secs(10), client.peer().call_tool(huge))
        .await
        .expect("the oversize request neither failed nor was answered");
    let error = format!("{:?}", result.unwrap_err());
    assert!(error.contains("RequestTooLarge"), "{error}");
    // Nothing reached the provider.
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(runs.load(Ordering::SeqCst), 0);
    assert_eq!(server.calls_in_flight(), 0);
}
