//! Identity comes from the kernel (CH-05, CH-08): the provider binds the caller's
//! `SO_PEERCRED` UID and PID at `open`; a client that expects another UID than the one that
//! owns the socket does not open at all.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod binder_support;

use std::os::unix::fs::PermissionsExt;

use binder_channel::binder::{
    AdmitAll, BinderCarrierError, ConnectOptions, ServiceKind, connect, rpc_uri, serve_channels,
};
use binder_support::{Peer, other_uid, socket_dir, spawn_provider, uri_string};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ch05_the_provider_binds_the_callers_kernel_uid_and_pid() {
    let dir = socket_dir();
    let path = dir.path().join("mcp.sock");
    let (_guard, mut incoming) =
        serve_channels(rpc_uri(&path, "mcp"), ServiceKind::Mcp, AdmitAll).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o666)).unwrap();

    let client_uid = other_uid();
    let client = Peer::spawn(dir.path(), &["hang", &uri_string(&path, "mcp")], client_uid);
    let channel = incoming.accept().await.unwrap();
    assert_eq!(channel.peer().uid, client_uid);
    assert_eq!(
        channel.peer().pid,
        Some(i32::try_from(client_pid(&client)).unwrap())
    );
    drop(client);
}

fn client_pid(peer: &Peer) -> u32 {
    peer.pid()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ch05_a_client_expecting_another_uid_does_not_open() {
    let dir = socket_dir();
    let provider_uid = other_uid();
    let (_provider, path) = spawn_provider(dir.path(), "mcp", provider_uid, &[]);
    let options = ConnectOptions::expecting_uid(provider_uid + 1);
    match connect(rpc_uri(&path, "mcp"), ServiceKind::Mcp, options).await {
        Err(BinderCarrierError::PeerUidMismatch { expected, actual }) => {
            assert_eq!(expected, provider_uid + 1);
            assert_eq!(actual, provider_uid);
        }
        other => panic!("expected a UID mismatch, got {other:?}"),
    }
}
