//! SPEC Appendix B model errors, for real: the fake server answers each `fail` code with the
//! status and body a provider sends, and the OpenAI client maps what arrives on the socket.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod model_support;

use acp_runtime::model::{FakeModelServer, ModelConfig, ModelError, ModelEvent};
use model_support::{client, request, run};
use tokio::io::AsyncWriteExt;

async fn fail_with(directive: &str) -> (Vec<ModelEvent>, Option<ModelError>) {
    let server = FakeModelServer::start_local().await.unwrap();
    let out = run(&client(&server.url()), request(directive, &[])).await;
    server.shutdown().await;
    out
}

async fn error_of(directive: &str) -> ModelError {
    fail_with(directive).await.1.expect("an error")
}

#[tokio::test]
async fn appendix_b_rate_limited_429_carries_retry_after() {
    let e = error_of(r#"{"fake":{"fail":"model_rate_limited","retryAfter":7}}"#).await;
    assert_eq!(
        e,
        ModelError::RateLimited {
            retry_after_seconds: Some(7)
        }
    );
    assert_eq!(e.agentos_code(), "model_rate_limited");
    assert!(e.retryable());
    let e = error_of(r#"{"fake":{"fail":"model_rate_limited","status":425}}"#).await;
    assert_eq!(
        e,
        ModelError::RateLimited {
            retry_after_seconds: Some(2)
        }
    );
}

#[tokio::test]
async fn appendix_b_auth_failed_401_and_403() {
    let e = error_of(r#"{"fake":{"fail":"model_auth_failed"}}"#).await;
    assert_eq!(e, ModelError::AuthFailed { status: 401 });
    assert!(!e.retryable());
    let e = error_of(r#"{"fake":{"fail":"model_auth_failed","status":403}}"#).await;
    assert_eq!(e, ModelError::AuthFailed { status: 403 });
}

#[tokio::test]
async fn appendix_b_quota_402_too_large_413_bad_request_400() {
    assert_eq!(
        error_of(r#"{"fake":{"fail":"model_quota_exhausted"}}"#).await,
        ModelError::QuotaExhausted
    );
    assert_eq!(
        error_of(r#"{"fake":{"fail":"model_request_too_large"}}"#).await,
        ModelError::RequestTooLarge
    );
    assert_eq!(
        error_of(r#"{"fake":{"fail":"model_bad_request"}}"#).await,
        ModelError::BadRequest { status: 400 }
    );
    assert_eq!(
        error_of(r#"{"fake":{"fail":"model_bad_request","status":422}}"#).await,
        ModelError::BadRequest { status: 422 }
    );
}

#[tokio::test]
async fn appendix_b_unavailable_5xx_and_529() {
    let e = error_of(r#"{"fake":{"fail":"model_unavailable"}}"#).await;
    assert_eq!(e, ModelError::Unavailable { status: 503 });
    assert!(e.retryable());
    assert_eq!(
        error_of(r#"{"fake":{"fail":"model_unavailable","status":529}}"#).await,
        ModelError::Unavailable { status: 529 }
    );
    assert_eq!(
        error_of(r#"{"fake":{"fail":"model_unavailable","status":500}}"#).await,
        ModelError::Unavailable { status: 500 }
    );
}

#[tokio::test]
async fn appendix_b_timeout_408() {
    let e = error_of(r#"{"fake":{"fail":"model_timeout"}}"#).await;
    assert_eq!(e, ModelError::Timeout);
    assert!(e.retryable());
}

#[tokio::test]
async fn appendix_b_stream_interrupted_after_some_text() {
    let (events, err) =
        fail_with(r#"{"fake":{"fail":"model_stream_interrupted","text":"par","chunks":3}}"#).await;
    assert_eq!(err, Some(ModelError::StreamInterrupted));
    assert!(!events.iter().any(|e| matches!(e, ModelEvent::Finished(_))));
}

#[tokio::test]
async fn appendix_b_protocol_on_garbage() {
    assert_eq!(
        error_of(r#"{"fake":{"fail":"model_protocol"}}"#).await,
        ModelError::Protocol
    );
}

#[tokio::test]
async fn appendix_b_network_when_closed_before_any_response() {
    assert_eq!(
        error_of(r#"{"fake":{"fail":"model_network"}}"#).await,
        ModelError::Network
    );
    // Nobody listening at all.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    let (_, err) = run(&client(&format!("http://{addr}/v1")), request("hi", &[])).await;
    assert_eq!(err, Some(ModelError::Network));
}

/// An `https://` URL pointed at a plain-HTTP server: the TLS handshake reads HTTP bytes.
#[tokio::test]
async fn appendix_b_tls_failed_on_handshake_garbage() {
    let server = FakeModelServer::start_local().await.unwrap();
    let url = format!("https://{}/v1", server.addr());
    let (_, err) = run(&client(&url), request("hi", &[])).await;
    assert_eq!(err, Some(ModelError::TlsFailed));
}

/// A peer that is not TLS at all and answers the ClientHello with junk, then closes.
#[tokio::test]
async fn appendix_b_tls_failed_on_junk_server() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut s, _)) = listener.accept().await {
            let _ = s.write_all(b"SSH-2.0-OpenSSH_9.6\r\n").await;
        }
    });
    let (_, err) = run(&client(&format!("https://{addr}/v1")), request("hi", &[])).await;
    assert_eq!(err, Some(ModelError::TlsFailed));
}

#[test]
fn appendix_b_not_configured_without_url_or_model() {
    let env = |pairs: &'static [(&'static str, &'static str)]| {
        move |k: &str| {
            pairs
                .iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| (*v).to_owned())
        }
    };
    assert_eq!(
        ModelConfig::from_lookup(env(&[("CAPBRIDGE_MODEL", "m")])).unwrap_err(),
        ModelError::NotConfigured
    );
    assert_eq!(
        ModelConfig::from_lookup(env(&[("CAPBRIDGE_MODEL_URL", "http://127.0.0.1:1/v1")]))
            .unwrap_err(),
        ModelError::NotConfigured
    );
    let c = ModelConfig::from_lookup(env(&[
        ("CAPBRIDGE_MODEL_URL", "http://127.0.0.1:1/v1"),
        ("CAPBRIDGE_MODEL", "m"),
        ("CAPBRIDGE_MODEL_KEY", ""),
    ]))
    .unwrap();
    assert!(c.key.is_none());
    assert_eq!(
        acp_runtime::model::OpenAiClient::new(ModelConfig::new("not a url", "m")).unwrap_err(),
        ModelError::NotConfigured
    );
}
