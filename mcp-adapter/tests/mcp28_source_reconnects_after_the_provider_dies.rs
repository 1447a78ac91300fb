//! MCP-28 through the `CapabilitySource`: a provider killed mid-call ends that call as
//! `Closed{dispatched: true}`; the next call connects again and succeeds (never retried
//! automatically, MCP-25: the killed call ran once and is not sent again).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use binder_channel::memory::{self, DeathSwitch};
use capability_model::{
    Annotations, CallError, CancelToken, CapabilityId, CapabilitySource, ToolOutput,
};
use common::args;
use mcp_adapter::{McpServer, McpSource};
use serde_json::json;
use tokio::sync::Notify;

#[tokio::test]
async fn mcp28_death_mid_call_then_reconnect_on_next_use() {
    let entered = Arc::new(Notify::new());
    let e2 = entered.clone();
    let hang_runs = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let h2 = hang_runs.clone();
    let server = McpServer::new("notes", move |r| {
        r.tool(
            "quick",
            None,
            "Q.",
            json!({"type": "object"}),
            Annotations::default(),
            |_, _| async { Ok(ToolOutput::text("quick")) },
        )?;
        let (e2, h2) = (e2.clone(), h2.clone());
        r.tool(
            "hang",
            None,
            "H.",
            json!({"type": "object"}),
            Annotations::default(),
            move |_, c| {
                let e2 = e2.clone();
                h2.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                async move {
                    e2.notify_one();
                    c.cancelled().await;
                    Ok(ToolOutput::text("late"))
                }
            },
        )?;
        Ok(())
    })
    .unwrap();
    let deaths: Arc<Mutex<Vec<DeathSwitch>>> = Arc::default();
    let (srv, d2) = (server.clone(), deaths.clone());
    let source = McpSource::new(
        "notes",
        "notes",
        Arc::new(move || {
            let (srv, d2) = (srv.clone(), d2.clone());
            Box::pin(async move {
                let (host, plugin, death) =
                    memory::pair_with_death(1_000, 10_123).map_err(|_| "pair".to_owned())?;
                d2.lock().unwrap().push(death);
                srv.serve(plugin);
                Ok(host)
            })
        }),
    )
    .with_call_timeout(Duration::from_secs(30));
    let id = |t: &str| CapabilityId::mcp("notes", "notes", t);

    let out = source
        .call(&id("quick"), args(json!({})), CancelToken::new())
        .await
        .unwrap();
    assert_eq!(out.joined_text(), "quick");

    let hang_id = id("hang");
    let hang = source.call(&hang_id, args(json!({})), CancelToken::new());
    let kill = async {
        entered.notified().await;
        deaths.lock().unwrap()[0].kill_second();
    };
    let (result, ()) = tokio::join!(hang, kill);
    assert_eq!(result.unwrap_err(), CallError::Closed { dispatched: true });

    let out = source
        .call(&id("quick"), args(json!({})), CancelToken::new())
        .await
        .unwrap();
    assert_eq!(out.joined_text(), "quick");
    assert_eq!(deaths.lock().unwrap().len(), 2, "one new connection");
    assert_eq!(
        hang_runs.load(std::sync::atomic::Ordering::SeqCst),
        1,
        "never retried (MCP-25)"
    );
}

#[tokio::test]
async fn a_capability_of_another_server_is_unknown() {
    let source = McpSource::new(
        "notes",
        "notes",
        Arc::new(|| Box::pin(async { Err("unused".to_owned()) })),
    );
    let e = source
        .call(
            &CapabilityId::mcp("other", "notes", "t"),
            args(json!({})),
            CancelToken::new(),
        )
        .await
        .unwrap_err();
    assert_eq!(e, CallError::UnknownTool);
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
            reason: "unused".into()
        }
    );
}
