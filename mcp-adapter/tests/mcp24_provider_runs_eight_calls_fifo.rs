//! MCP-24 on the provider: at most 8 handlers run at once per server; the rest wait and
//! start in arrival order.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::{Arc, Mutex};

use capability_model::{Annotations, ToolOutput};
use common::{Raw, pair};
use mcp_adapter::McpServer;
use serde_json::json;
use tokio::sync::Semaphore;

#[tokio::test]
async fn mcp24_ninth_call_waits_and_calls_start_in_order() {
    let gate = Arc::new(Semaphore::new(0));
    let started = Arc::new(Mutex::new(Vec::<i64>::new()));
    let (g, st) = (gate.clone(), started.clone());
    let server = McpServer::new("s", move |r| {
        let (g, st) = (g.clone(), st.clone());
        r.tool(
            "block",
            None,
            "Blocks until released.",
            json!({"type": "object", "properties": {"n": {"type": "integer"}}}),
            Annotations::default(),
            move |a, _| {
                let (g, st) = (g.clone(), st.clone());
                async move {
                    st.lock().unwrap().push(a["n"].as_i64().unwrap());
                    g.acquire().await.unwrap().forget();
                    Ok(ToolOutput::text("done"))
                }
            },
        )?;
        Ok(())
    })
    .unwrap();
    let (host, plugin) = pair();
    server.serve(plugin);
    let raw = Raw { ch: host };
    raw.initialize("2025-11-25").await;
    for n in 0..12 {
        raw.send(
            json!({"jsonrpc": "2.0", "id": n + 1, "method": "tools/call",
                        "params": {"name": "block", "arguments": {"n": n}}}),
        );
    }
    while started.lock().unwrap().len() < 8 {
        tokio::task::yield_now().await;
    }
    for _ in 0..50 {
        tokio::task::yield_now().await;
    }
    assert_eq!(server.calls_in_flight(), 8);
    assert_eq!(started.lock().unwrap().len(), 8);
    gate.add_permits(12);
    let mut answered = 0;
    while answered < 12 {
        let m = raw.next().await;
        if m.get("result").is_some() {
            answered += 1;
        }
    }
    let order = started.lock().unwrap().clone();
    assert_eq!(
        order[8..],
        [8, 9, 10, 11],
        "queued calls start in arrival order"
    );
}
