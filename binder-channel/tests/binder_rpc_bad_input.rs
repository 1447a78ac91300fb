//! Bad input arriving over real Binder parcels (rsbinder RPC, two processes): the provider's
//! receiving end hands every call to the core, which closes the channel as a `violation` for
//! an oversize message (CH-12, counted in UTF-16 units, GEN-02) or a `String16` that is not
//! valid UTF-16. The calls are made on the raw `IChannel` proxy, bypassing our own sender's
//! checks, as a misbehaving peer would.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod binder_support;

use binder_channel::binder::aidl::org::agentos::channel::IChannel::IChannel;
use binder_channel::binder::{BinderChannel, ConnectOptions, ServiceKind, connect, rpc_uri};
use binder_channel::limits::MAX_MESSAGE_CHARS;
use binder_support::{Peer, other_uid, spawn_provider};
use rsbinder::{FIRST_CALL_TRANSACTION, FLAG_ONEWAY, FromIBinder, Strong};
use serde_json::{Value, json};

/// A `seq` notification of exactly `units` UTF-16 units, ending in `tail`.
fn seq_of_units(units: usize, tail: &str) -> String {
    let head = r#"{"jsonrpc":"2.0","method":"seq","params":{"n":0,"pad":""#;
    let end = r#""}}"#;
    let fixed = head.len() + tail.encode_utf16().count() + end.len();
    format!("{head}{}{tail}{end}", "x".repeat(units - fixed))
}

async fn open(name: &str) -> (Peer, BinderChannel, tempfile::TempDir) {
    let dir = binder_support::socket_dir();
    let (mut provider, path) = spawn_provider(dir.path(), name, other_uid(), &[]);
    let opened = connect(
        rpc_uri(&path, name),
        ServiceKind::Mcp,
        ConnectOptions::default(),
    )
    .await
    .unwrap();
    provider.expect("OPENED");
    (provider, opened, dir)
}

fn raw_proxy(opened: &BinderChannel) -> Strong<dyn IChannel> {
    FromIBinder::try_from(opened.peer_binder().clone()).unwrap()
}

async fn received_by_provider(opened: &BinderChannel) -> u64 {
    opened
        .channel
        .send(json!({"jsonrpc": "2.0", "id": 7, "method": "summary"}).to_string())
        .unwrap();
    let reply: Value = serde_json::from_str(&opened.channel.recv().await.unwrap()).unwrap();
    reply["result"]["received"].as_u64().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ch12_65536_units_pass_and_65537_close_as_violation() {
    let (mut provider, opened, _dir) = open("oversize").await;
    let limit = seq_of_units(MAX_MESSAGE_CHARS, "");
    assert_eq!(limit.encode_utf16().count(), 65_536);
    opened.channel.send(limit).unwrap();
    assert_eq!(received_by_provider(&opened).await, 1);

    let over = seq_of_units(MAX_MESSAGE_CHARS + 1, "");
    raw_proxy(&opened).r#send(&over).unwrap();
    let closed = provider.expect("CLOSED");
    assert!(closed.starts_with("CLOSED violation"), "{closed}");
    assert!(closed.contains("Oversize { chars: 65537 }"), "{closed}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gen02_a_surrogate_pair_straddling_the_limit_counts_two_units() {
    let (mut provider, opened, _dir) = open("straddle").await;
    let fits = seq_of_units(MAX_MESSAGE_CHARS, "😀");
    assert_eq!(fits.encode_utf16().count(), 65_536);
    opened.channel.send(fits).unwrap();
    assert_eq!(received_by_provider(&opened).await, 1);

    // 65,536 chars in Rust `char`s, 65,537 UTF-16 units: over the limit.
    let straddles = seq_of_units(MAX_MESSAGE_CHARS + 1, "😀");
    assert_eq!(straddles.chars().count(), 65_536);
    raw_proxy(&opened).r#send(&straddles).unwrap();
    let closed = provider.expect("CLOSED");
    assert!(closed.contains("Oversize { chars: 65537 }"), "{closed}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lone_surrogate_from_the_peer_closes_as_violation() {
    let (mut provider, opened, _dir) = open("surrogate").await;
    let binder = opened.peer_binder().clone();
    let remote = binder.as_remote().unwrap();
    let mut parcel = remote.prepare_transact(true).unwrap();
    // String16 "A\u{D83D}" (a high surrogate with no low one), NUL-terminated, padded.
    parcel.write(&2_i32).unwrap();
    parcel.write(&(0x0041_u32 | (0xD83D_u32 << 16))).unwrap();
    parcel.write(&0_u32).unwrap();
    remote
        .submit_transact(FIRST_CALL_TRANSACTION, &parcel, FLAG_ONEWAY)
        .unwrap();
    let closed = provider.expect("CLOSED");
    assert!(closed.starts_with("CLOSED violation"), "{closed}");
    assert!(closed.contains("InvalidText"), "{closed}");
}
