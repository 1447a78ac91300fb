//! HTTP-12: the total timeout bounds slow-loris servers (slow headers, slow bodies, no answer);
//! timeouts are `tool_timeout`. Servers stop by themselves after a bounded number of steps.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::time::Duration;

use capability_model::{CallError, CancelToken, CapabilitySource};
use http_capability::{
    HttpCapabilitySource, HttpConfig, HttpError, NetworkPolicy, StaticResolver, capability_id,
};
use serde_json::json;
use support::{args, config, executor, serve};
use tokio::io::AsyncWriteExt;

fn short() -> HttpConfig {
    HttpConfig {
        total_timeout: Duration::from_millis(600),
        ..config(NetworkPolicy::local_network())
    }
}

/// Writes `prefix`, then `drip` one byte at a time every 100 ms (at most 100 steps).
async fn slow_server(prefix: &'static [u8], drip: &'static [u8]) -> support::TestServer {
    serve(move |_req, mut stream| async move {
        if stream.write_all(prefix).await.is_err() {
            return;
        }
        for b in drip.iter().cycle().take(100) {
            tokio::time::sleep(Duration::from_millis(100)).await;
            if stream.write_all(&[*b]).await.is_err() {
                return;
            }
        }
    })
    .await
}

#[tokio::test]
async fn slow_loris_headers_time_out() {
    let server = slow_server(b"HTTP/1.1 200 OK\r\n", b"X-Slow: aaaaaaaa").await;
    let err = executor(short(), StaticResolver::new())
        .execute(&args(json!({"url": server.url("/")})))
        .await
        .unwrap_err();
    assert_eq!(err, HttpError::Timeout);
    assert_eq!(err.agentos_code(), "tool_timeout");
    assert_eq!(err.aci_error_code(), 504);
}

#[tokio::test]
async fn a_trickling_body_times_out() {
    let server = slow_server(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n", b"x").await;
    let err = executor(short(), StaticResolver::new())
        .execute(&args(json!({"url": server.url("/")})))
        .await
        .unwrap_err();
    assert_eq!(err, HttpError::Timeout);
}

#[tokio::test]
async fn a_server_that_never_answers_times_out_as_call_error_timeout() {
    let server = serve(|_req, stream| async move {
        let _held_open = stream;
        tokio::time::sleep(Duration::from_secs(10)).await;
    })
    .await;
    let source = HttpCapabilitySource::new(executor(short(), StaticResolver::new()));
    let err = source
        .call(
            &capability_id(),
            args(json!({"url": server.url("/")})),
            CancelToken::new(),
        )
        .await
        .unwrap_err();
    assert_eq!(err, CallError::Timeout);
}

#[tokio::test]
async fn cancelling_ends_a_call_in_flight() {
    let server = serve(|_req, stream| async move {
        let _held_open = stream;
        tokio::time::sleep(Duration::from_secs(10)).await;
    })
    .await;
    let source = HttpCapabilitySource::new(executor(
        config(NetworkPolicy::local_network()),
        StaticResolver::new(),
    ));
    let cancel = CancelToken::new();
    let c = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        c.cancel();
    });
    let err = source
        .call(
            &capability_id(),
            args(json!({"url": server.url("/")})),
            cancel,
        )
        .await
        .unwrap_err();
    assert_eq!(err, CallError::Cancelled);
}
