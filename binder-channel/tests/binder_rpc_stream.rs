//! Two processes, two UIDs, rsbinder RPC over a Unix socket: open (CH-05), ≥ 10,000
//! flow-controlled messages each way in order (CH-15, CH-20, CH-31), close (CH-40, CH-41).
//! Every inbound call on both ends is checked against the UID bound at `open` (CH-08), so the
//! stream only completes if `SO_PEERCRED` reported the right UID on every call.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod binder_support;

use binder_channel::CloseReason;
use binder_channel::binder::{ConnectOptions, ServiceKind, connect, rpc_uri};
use binder_support::{my_uid, other_uid, socket_dir, spawn_provider};
use serde_json::{Value, json};

const MESSAGES: u64 = 10_000;
const SIZE: usize = 100;
const WRITABLE_MARK: usize = 16_384;

fn seq(n: u64) -> String {
    let bare =
        json!({"jsonrpc": "2.0", "method": "seq", "params": {"n": n, "pad": ""}}).to_string();
    let pad = "x".repeat(SIZE.saturating_sub(bare.len()));
    json!({"jsonrpc": "2.0", "method": "seq", "params": {"n": n, "pad": pad}}).to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ch05_ch15_ch20_ten_thousand_messages_each_way_between_two_uids() {
    let dir = socket_dir();
    let provider_uid = other_uid();
    let (mut provider, path) = spawn_provider(dir.path(), "mcp", provider_uid, &[]);

    let opened = connect(
        rpc_uri(&path, "mcp"),
        ServiceKind::Mcp,
        ConnectOptions::default(),
    )
    .await
    .unwrap();
    let channel = opened.channel;
    // Our side bound the provider's UID (the socket's owner, set by the kernel at bind).
    assert_eq!(channel.peer().uid, provider_uid);
    // Their side bound ours (SO_PEERCRED at open).
    assert_eq!(
        provider.expect("OPENED"),
        format!("OPENED uid={}", my_uid())
    );

    for n in 0..MESSAGES {
        channel.await_writable(WRITABLE_MARK).await.unwrap();
        channel.send(seq(n)).unwrap();
    }
    channel
        .send(json!({"jsonrpc": "2.0", "id": 1, "method": "summary"}).to_string())
        .unwrap();
    let summary: Value = serde_json::from_str(&channel.recv().await.unwrap()).unwrap();
    assert_eq!(summary["id"], 1);
    assert_eq!(summary["result"]["received"], MESSAGES);
    assert_eq!(summary["result"]["in_order"], true);
    assert_eq!(summary["result"]["peer_uid"], my_uid());

    let request = json!({"jsonrpc": "2.0", "id": 2, "method": "stream",
        "params": {"count": MESSAGES, "size": SIZE}});
    channel.send(request.to_string()).unwrap();
    for n in 0..MESSAGES {
        let message: Value = serde_json::from_str(&channel.recv().await.unwrap()).unwrap();
        assert_eq!(message["params"]["n"], n, "message {n} out of order");
    }
    let done: Value = serde_json::from_str(&channel.recv().await.unwrap()).unwrap();
    assert_eq!(done["id"], 2);
    assert_eq!(done["result"]["sent"], MESSAGES);

    let stats = channel.stats();
    assert_eq!(stats.received, MESSAGES + 2);
    assert!(stats.acks_sent > 0, "the receiver acked (CH-31)");

    assert_eq!(channel.close().await, CloseReason::Local);
    // Every send before close arrived first, then the close itself (CH-41).
    assert!(provider.expect("CLOSED").starts_with("CLOSED remote"));
}
