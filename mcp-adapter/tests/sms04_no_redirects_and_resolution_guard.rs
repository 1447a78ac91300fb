//! SMS-04: HTTP redirects are never followed, and a name whose resolution contains any
//! non-public address is refused (the resolver itself, through the system resolver, on a
//! name that resolves to loopback).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod sms_support;

use std::time::Duration;

use mcp_adapter::session_http::{
    GuardedResolver, McpHttpServer, SessionHttpConfig, SessionMcpServers, SessionUrlPolicy,
    StatusReason,
};
use reqwest::dns::Resolve;
use sms_support::{Behaviour, FakeServer};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// Answers every request with `307` to `target`.
async fn redirector(target: String) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut s, _)) = listener.accept().await {
            let target = target.clone();
            tokio::spawn(async move {
                let mut buf = [0u8; 8192];
                let _ = s.read(&mut buf).await;
                let answer = format!(
                    "HTTP/1.1 307 Temporary Redirect\r\nLocation: {target}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                );
                let _ = s.write_all(answer.as_bytes()).await;
                let _ = s.shutdown().await;
            });
        }
    });
    format!("http://{addr}/mcp")
}

#[tokio::test]
async fn sms04_a_redirect_is_not_followed() {
    let target = FakeServer::start(Behaviour::default()).await;
    let url = redirector(target.url()).await;
    let set = SessionMcpServers::start(
        vec![McpHttpServer::new(
            "r",
            url,
            vec![("X-Key".into(), "k".into())],
        )],
        SessionHttpConfig {
            policy: SessionUrlPolicy::loopback_for_tests(),
            handshake_timeout: Duration::from_secs(5),
            ..SessionHttpConfig::default()
        },
    )
    .await
    .unwrap();
    let status = &set.statuses()[0];
    assert!(!status.connected);
    assert_eq!(status.reason, Some(StatusReason::ConnectFailed));
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(target.requests().is_empty(), "the redirect was followed");
}

#[tokio::test]
async fn sms04_a_name_resolving_to_loopback_is_refused() {
    let strict = GuardedResolver::new(SessionUrlPolicy::strict());
    let refused = strict.resolve("localhost".parse().unwrap()).await;
    assert!(refused.is_err());
    let message = refused.err().unwrap().to_string();
    assert!(!message.contains("localhost"), "{message}");
    // The same name under the test policy resolves (so the refusal above is the guard's).
    let tests = GuardedResolver::new(SessionUrlPolicy::loopback_for_tests());
    let addrs: Vec<_> = tests
        .resolve("localhost".parse().unwrap())
        .await
        .unwrap()
        .collect();
    assert!(!addrs.is_empty());
    assert!(addrs.iter().all(|a| a.ip().is_loopback()));
}
