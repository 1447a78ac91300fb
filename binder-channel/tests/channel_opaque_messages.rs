//! CH-04: the channel core treats messages as opaque strings; JSON-RPC lives above it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use binder_channel::memory;

#[tokio::test]
async fn ch04_any_string_passes_unchanged() {
    let (a, b) = memory::pair(1_000, 10_123).unwrap();
    let messages = [
        "not json at all",
        "{\"jsonrpc\":\"1.0\",\"id\":[]}",
        "[{\"batch\":true}]",
        "",
        "日本語 😀 \u{202E} mixed",
        "{\"jsonrpc\":\"2.0\",\"method\":\"x\",\"extra\":{\"kept\":1}}",
    ];
    for m in messages {
        a.send(m).unwrap();
    }
    for m in messages {
        assert_eq!(b.recv().await.unwrap(), m);
    }
}
