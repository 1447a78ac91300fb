//! Cancellation (issue 8 item 2; ACP cancel within a second): once the `CancelToken` fires,
//! the HTTP request is dropped and the stream ends with `ModelError::Cancelled`. Outcomes and
//! order are asserted; the timeouts below are hang guards only.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod model_support;

use std::time::Duration;

use acp_runtime::model::{FakeModelServer, ModelClient, ModelError, ModelEvent};
use capability_model::CancelToken;
use futures::StreamExt;
use model_support::{client, request};
use tokio::io::AsyncReadExt;

const GUARD: Duration = Duration::from_secs(20);

#[tokio::test]
async fn cancel_during_await_abort_ends_with_cancelled() {
    let server = FakeModelServer::start_local().await.unwrap();
    let client = client(&server.url());
    let cancel = CancelToken::new();
    let prompt = r#"{"fake":{"awaitAbort":true,"text":"wait","chunks":2}}"#;
    let mut stream = client
        .stream(request(prompt, &[]), cancel.clone())
        .await
        .unwrap();
    // Both chunks arrive, then the server holds the reply open.
    let mut seen = Vec::new();
    while seen.len() < 2 {
        let ev = tokio::time::timeout(GUARD, stream.next()).await.unwrap();
        seen.push(ev.unwrap().unwrap());
    }
    assert_eq!(
        seen,
        vec![
            ModelEvent::TextDelta("wait".into()),
            ModelEvent::TextDelta("wait".into())
        ]
    );
    // Nothing more comes by itself.
    assert!(
        tokio::time::timeout(Duration::from_millis(200), stream.next())
            .await
            .is_err()
    );
    cancel.cancel();
    let end = tokio::time::timeout(GUARD, stream.next()).await.unwrap();
    assert_eq!(end, Some(Err(ModelError::Cancelled)));
    assert_eq!(
        tokio::time::timeout(GUARD, stream.next()).await.unwrap(),
        None
    );
    server.shutdown().await;
}

/// Cancelled while waiting for the response head: `stream()` itself returns `Cancelled`, and
/// the connection to the provider is closed (the provider sees EOF).
#[tokio::test]
async fn cancel_before_response_closes_the_connection() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (closed_tx, closed_rx) = tokio::sync::oneshot::channel();
    tokio::spawn(async move {
        let (mut s, _) = listener.accept().await.unwrap();
        let mut buf = vec![0u8; 65536];
        // Read the request, never answer, report when the client hangs up.
        loop {
            match s.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
        }
        let _ = closed_tx.send(());
    });
    let client = client(&format!("http://{addr}/v1"));
    let cancel = CancelToken::new();
    let canceller = {
        let cancel = cancel.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(100)).await;
            cancel.cancel();
        })
    };
    let result = tokio::time::timeout(GUARD, client.stream(request("hi", &[]), cancel))
        .await
        .unwrap();
    assert_eq!(result.err(), Some(ModelError::Cancelled));
    canceller.await.unwrap();
    tokio::time::timeout(GUARD, closed_rx)
        .await
        .unwrap()
        .unwrap();
}

#[tokio::test]
async fn already_cancelled_token_sends_nothing() {
    let server = FakeModelServer::start_local().await.unwrap();
    let cancel = CancelToken::new();
    cancel.cancel();
    let result = client(&server.url())
        .stream(request("hi", &[]), cancel)
        .await;
    assert_eq!(result.err(), Some(ModelError::Cancelled));
    assert!(server.requests().is_empty());
}
