//! The provider served as a real `IMcpService` through the rsbinder carrier (RPC over a Unix
//! socket, the Linux stand-in for kernel Binder) and the host reaching it through
//! `binder_connector`: initialize, tools/list, tools/call and cancellation, with the kernel-
//! given peer UID (`SO_PEERCRED`) on the provider's channel.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use binder_channel::binder::{AdmitAll, ServiceKind, rpc_uri, serve_channels};
use capability_model::{
    Annotations, CallError, CancelToken, CapabilityId, CapabilitySource, ToolOutput,
};
use common::args;
use mcp_adapter::{McpServer, McpSource, binder_connector};
use serde_json::json;
use tokio::sync::oneshot;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_call_and_cancel_over_rsbinder_rpc() {
    let (entered_tx, entered_rx) = oneshot::channel::<()>();
    let entered = Arc::new(Mutex::new(Some(entered_tx)));
    let server = McpServer::new("notes", move |r| {
        r.tool(
            "note_add",
            None,
            "Add a note.",
            json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
            Annotations::default(),
            |a, _| async move { Ok(ToolOutput::json(json!({"id": 1, "text": a["text"]}))) },
        )?;
        let entered = entered.clone();
        r.tool("wait", None, "Waits.", json!({"type": "object"}), Annotations::default(), move |_, c| {
            let entered = entered.clone();
            async move {
                if let Some(tx) = entered.lock().unwrap().take() {
                    let _ = tx.send(());
                }
                c.cancelled().await;
                Ok(ToolOutput::text("stopped"))
            }
        })?;
        Ok(())
    })
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("notes.sock");
    let (_guard, incoming) =
        serve_channels(rpc_uri(&path, "notes"), ServiceKind::Mcp, AdmitAll).unwrap();
    server.serve_incoming(incoming);

    let source = McpSource::new("notes", "notes", binder_connector(rpc_uri(&path, "notes")));
    let listing = source.list().await.unwrap();
    let names: Vec<_> = listing
        .capabilities
        .iter()
        .map(|c| c.id.name.as_str())
        .collect();
    assert_eq!(names, ["note_add", "wait"]);

    let out = source
        .call(
            &CapabilityId::mcp("notes", "notes", "note_add"),
            args(json!({"text": "milk"})),
            CancelToken::new(),
        )
        .await
        .unwrap();
    assert_eq!(
        out.structured_content,
        Some(json!({"id": 1, "text": "milk"}))
    );

    let cancel = CancelToken::new();
    let wait_id = CapabilityId::mcp("notes", "notes", "wait");
    let call = source.call(&wait_id, args(json!({})), cancel.clone());
    let fire = async {
        entered_rx.await.unwrap();
        cancel.cancel();
    };
    let (result, ()) =
        tokio::time::timeout(Duration::from_secs(20), async { tokio::join!(call, fire) })
            .await
            .unwrap();
    assert_eq!(result.unwrap_err(), CallError::Cancelled);
    while server.calls_in_flight() != 0 {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_provider_that_is_not_running_is_unavailable() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("absent.sock");
    let source = McpSource::new("notes", "notes", binder_connector(rpc_uri(&path, "notes")));
    let e = source
        .call(
            &CapabilityId::mcp("notes", "notes", "t"),
            args(json!({})),
            CancelToken::new(),
        )
        .await
        .unwrap_err();
    assert_eq!(
        e,
        CallError::Unavailable {
            reason: "connect_failed".into()
        }
    );
}
