//! A peer process that dies closes the channel as `peer_died` on the other end (CH-42): the
//! RPC session's connections drop, rsbinder fires the death recipient linked at `open`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod binder_support;

use std::os::unix::fs::PermissionsExt;
use std::time::Duration;

use binder_channel::CloseReason;
use binder_channel::binder::{
    AdmitAll, ConnectOptions, ServiceKind, connect, rpc_uri, serve_channels,
};
use binder_support::{Peer, other_uid, socket_dir, spawn_provider, uri_string};

const DEATH_TIMEOUT: Duration = Duration::from_secs(30);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ch42_provider_killed_mid_stream_is_peer_died_on_the_client() {
    let dir = socket_dir();
    let (mut provider, path) = spawn_provider(dir.path(), "mcp", other_uid(), &[]);
    let opened = connect(
        rpc_uri(&path, "mcp"),
        ServiceKind::Mcp,
        ConnectOptions::default(),
    )
    .await
    .unwrap();
    let channel = opened.channel;
    provider.expect("OPENED");

    let producer = {
        let channel = channel.clone();
        tokio::spawn(async move {
            let mut n: u64 = 0;
            while channel.await_writable(16_384).await.is_ok()
                && channel
                    .send(format!(
                        r#"{{"jsonrpc":"2.0","method":"seq","params":{{"n":{n}}}}}"#
                    ))
                    .is_ok()
            {
                n += 1;
            }
            n
        })
    };
    tokio::time::sleep(Duration::from_millis(200)).await;
    provider.kill();

    let reason = tokio::time::timeout(DEATH_TIMEOUT, channel.closed())
        .await
        .expect("death noticed");
    assert_eq!(reason, CloseReason::PeerDied);
    let sent = tokio::time::timeout(DEATH_TIMEOUT, producer)
        .await
        .unwrap()
        .unwrap();
    assert!(sent > 0, "the stream was running when the provider died");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ch42_client_killed_is_peer_died_on_the_provider() {
    let dir = socket_dir();
    let path = dir.path().join("mcp.sock");
    let (_guard, mut incoming) =
        serve_channels(rpc_uri(&path, "mcp"), ServiceKind::Mcp, AdmitAll).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o666)).unwrap();

    let client_uid = other_uid();
    let mut client = Peer::spawn(dir.path(), &["hang", &uri_string(&path, "mcp")], client_uid);
    let channel = incoming.accept().await.unwrap();
    assert_eq!(channel.peer().uid, client_uid);
    client.expect("READY");
    // The messages sent before the death are delivered (CH-41) …
    for _ in 0..5 {
        assert!(channel.recv().await.unwrap().contains("\"seq\""));
    }
    client.kill();
    // … and the death closes the channel without a remote close.
    let reason = tokio::time::timeout(DEATH_TIMEOUT, channel.closed())
        .await
        .expect("death noticed");
    assert_eq!(reason, CloseReason::PeerDied);
    assert_eq!(channel.recv().await, None);
}
