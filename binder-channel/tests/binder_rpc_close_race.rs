//! Close racing with sends over rsbinder RPC between two processes (CH-40, CH-41): every
//! `send` queued before `close` reaches the peer before the close does, and nothing after.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod binder_support;

use binder_channel::binder::{ConnectOptions, ServiceKind, connect, rpc_uri};
use binder_channel::{CloseClass, CloseReason, SendError};
use binder_support::{other_uid, socket_dir, spawn_provider};

const QUEUED: u64 = 500;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ch41_sends_queued_before_close_all_arrive_and_none_after() {
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

    // Queue far more than the window admits, then close at once: the backlog is flushed
    // (within CH-40's 2 s) before the peer's close is called.
    for n in 0..QUEUED {
        channel
            .send(format!(
                r#"{{"jsonrpc":"2.0","method":"seq","params":{{"n":{n}}}}}"#
            ))
            .unwrap();
    }
    let closing = channel.close();
    tokio::pin!(closing);
    // Polled once, the close has begun (and is still flushing: far more is queued than fits
    // the window).
    assert!(futures::poll!(&mut closing).is_pending());
    // From then on, nothing more is accepted.
    let late = channel.send(r#"{"jsonrpc":"2.0","method":"seq","params":{"n":-1}}"#);
    assert!(
        matches!(late, Err(SendError::Closed(CloseClass::Local))),
        "{late:?}"
    );
    assert_eq!(closing.await, CloseReason::Local);

    let closed = provider.expect("CLOSED");
    assert!(
        closed.starts_with(&format!(
            "CLOSED remote uid={} received={QUEUED} ",
            binder_support::my_uid()
        )),
        "{closed}"
    );
}
