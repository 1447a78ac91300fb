//! MCP-27 step 4: a connection unused for 30 s is closed; the next use connects again.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use capability_model::CapabilitySource;
use common::{echo_server, pair};
use mcp_adapter::McpSource;

#[tokio::test(start_paused = true)]
async fn mcp27_idle_close_after_30_seconds_and_reconnect() {
    let server = echo_server(Arc::default());
    let connects = Arc::new(AtomicUsize::new(0));
    let (srv, n) = (server.clone(), connects.clone());
    let source = McpSource::new(
        "notes",
        "notes",
        Arc::new(move || {
            let srv = srv.clone();
            n.fetch_add(1, Ordering::SeqCst);
            Box::pin(async move {
                let (host, plugin) = pair();
                srv.serve(plugin);
                Ok(host)
            })
        }),
    );
    source.list().await.unwrap();
    assert!(source.is_connected().await);
    tokio::time::sleep(Duration::from_secs(29)).await;
    assert!(source.is_connected().await, "closed before 30 s");
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert!(!source.is_connected().await, "still open after 31 s idle");
    source.list().await.unwrap();
    assert_eq!(connects.load(Ordering::SeqCst), 2);
}
