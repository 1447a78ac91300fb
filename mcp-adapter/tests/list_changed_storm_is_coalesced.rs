//! Bad input: a provider flooding `notifications/tools/list_changed` does not grow memory or
//! multiply work — the source's change stream coalesces (lagging receivers see one change)
//! and one `list()` re-lists once.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use capability_model::CapabilitySource;
use common::{Raw, pair};
use futures::StreamExt;
use mcp_adapter::McpSource;
use serde_json::json;

#[tokio::test]
async fn list_changed_storm_costs_one_relist() {
    let fakes: Arc<Mutex<Vec<Raw>>> = Arc::default();
    let (plugin_tx, mut plugin_rx) = tokio::sync::mpsc::unbounded_channel();
    let source = McpSource::new(
        "p",
        "s",
        Arc::new(move || {
            let plugin_tx = plugin_tx.clone();
            Box::pin(async move {
                let (host, plugin) = pair();
                plugin_tx.send(plugin).unwrap();
                Ok(host)
            })
        }),
    );
    let mut changes = source.changes();
    let provider = async {
        let fake = Raw {
            ch: plugin_rx.recv().await.unwrap(),
        };
        fake.accept("2025-11-25").await;
        let list = fake.next().await;
        fake.answer(
            &list["id"],
            json!({"tools": [{"name": "a", "inputSchema": {"type": "object"}}]}),
        );
        fakes.lock().unwrap().push(fake);
    };
    let (first, ()) = tokio::join!(source.list(), provider);
    assert_eq!(first.unwrap().capabilities.len(), 1);

    let fake = fakes.lock().unwrap().pop().unwrap();
    for _ in 0..5_000 {
        fake.send(json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}));
        fake.ch.await_writable(16_384).await.unwrap();
    }
    tokio::time::timeout(Duration::from_secs(10), changes.next())
        .await
        .unwrap()
        .unwrap();

    // One list() after the storm: exactly one tools/list request.
    let relist = async {
        let list = fake.next().await;
        assert_eq!(list["method"], "tools/list");
        fake.answer(
            &list["id"],
            json!({"tools": [
            {"name": "a", "inputSchema": {"type": "object"}},
            {"name": "b", "inputSchema": {"type": "object"}}]}),
        );
    };
    // Let every notification reach the client before listing.
    while fake.ch.stats().peer_acked < fake.ch.stats().sent {
        tokio::task::yield_now().await;
    }
    let (second, ()) = tokio::join!(source.list(), relist);
    assert_eq!(second.unwrap().capabilities.len(), 2);
    let extra = tokio::time::timeout(Duration::from_millis(200), fake.ch.recv()).await;
    assert!(extra.is_err(), "more than one tools/list: {extra:?}");
}
