//! MCP-24 on the host: at most 8 calls are sent to one server; the rest wait FIFO, and the
//! time spent waiting counts against the caller's timeout.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use capability_model::CancelToken;
use common::{args, connect_fake};
use futures::future::join_all;
use mcp_adapter::ClientError;
use serde_json::json;

#[tokio::test]
async fn mcp24_only_eight_requests_leave_and_the_ninth_follows_a_free_slot() {
    let (client, fake) = connect_fake().await;
    let cancel = CancelToken::new();
    let calls = (0..10).map(|n| {
        let client = client.clone();
        let cancel = cancel.clone();
        async move {
            client
                .call_tool(
                    &format!("t{n}"),
                    args(json!({})),
                    Duration::from_secs(30),
                    &cancel,
                )
                .await
        }
    });
    let script = async {
        let mut seen = Vec::new();
        for _ in 0..8 {
            seen.push(fake.next().await);
        }
        // Nothing more while all eight are unanswered.
        let extra = tokio::time::timeout(Duration::from_millis(200), fake.ch.recv()).await;
        assert!(extra.is_err(), "a ninth request left early");
        let names: Vec<_> = seen.iter().map(|m| m["params"]["name"].clone()).collect();
        assert_eq!(
            names,
            (0..8).map(|n| json!(format!("t{n}"))).collect::<Vec<_>>()
        );
        fake.answer(&seen[0]["id"], json!({"content": []}));
        let ninth = fake.next().await;
        assert_eq!(ninth["params"]["name"], "t8");
        seen.push(ninth);
        fake.answer(&seen[1]["id"], json!({"content": []}));
        let tenth = fake.next().await;
        assert_eq!(tenth["params"]["name"], "t9");
        seen.push(tenth);
        for m in &seen[2..] {
            fake.answer(&m["id"], json!({"content": []}));
        }
    };
    let (results, ()) = tokio::join!(join_all(calls), script);
    assert!(results.iter().all(Result::is_ok));
}

#[tokio::test(start_paused = true)]
async fn mcp24_time_spent_queued_counts_against_the_timeout() {
    let (client, fake) = connect_fake().await;
    let never = CancelToken::new();
    let blockers: Vec<_> = (0..8)
        .map(|_| {
            let client = client.clone();
            let never = never.clone();
            tokio::spawn(async move {
                client
                    .call_tool("slow", args(json!({})), Duration::from_secs(3600), &never)
                    .await
            })
        })
        .collect();
    for _ in 0..8 {
        fake.next().await;
    }
    let start = tokio::time::Instant::now();
    let queued = client
        .call_tool("queued", args(json!({})), Duration::from_secs(2), &never)
        .await;
    assert_eq!(queued.unwrap_err(), ClientError::Timeout);
    assert_eq!(start.elapsed(), Duration::from_secs(2));
    // It timed out in the queue: it was never sent.
    let sent = tokio::time::timeout(Duration::from_millis(10), fake.ch.recv()).await;
    assert!(sent.is_err());
    for b in blockers {
        b.abort();
    }
}
