//! `open` refuses without blocking by throwing `SecurityException("agentos.acp.<reason>: …")`
//! (CH-06); the client reads the reason (CH-07). The refusal is decided on the caller's kernel
//! UID, never on anything it sent.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod binder_support;

use binder_channel::binder::{
    BinderCarrierError, ConnectOptions, RefusalReason, ServiceKind, connect, rpc_uri,
};
use binder_support::{my_uid, other_uid, socket_dir, spawn_provider};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ch06_ch07_a_denied_uid_gets_the_denied_reason() {
    let dir = socket_dir();
    let me = my_uid().to_string();
    let (_provider, path) = spawn_provider(dir.path(), "mcp", other_uid(), &["--deny-uid", &me]);
    let result = connect(
        rpc_uri(&path, "mcp"),
        ServiceKind::Mcp,
        ConnectOptions::default(),
    )
    .await;
    match result {
        Err(BinderCarrierError::Refused { reason }) => {
            assert_eq!(reason, Some(RefusalReason::Denied));
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ch06_another_uid_denied_does_not_refuse_us() {
    let dir = socket_dir();
    let someone_else = (my_uid() + 1).to_string();
    let (mut provider, path) = spawn_provider(
        dir.path(),
        "mcp",
        other_uid(),
        &["--deny-uid", &someone_else],
    );
    let opened = connect(
        rpc_uri(&path, "mcp"),
        ServiceKind::Mcp,
        ConnectOptions::default(),
    )
    .await
    .unwrap();
    assert_eq!(
        provider.expect("OPENED"),
        format!("OPENED uid={}", my_uid())
    );
    opened.channel.close().await;
}
