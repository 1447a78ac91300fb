//! The API key goes only into the `Authorization` header: never in `Debug`, never in an
//! error's text (issue 8 item 2).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod model_support;

use acp_runtime::model::{ApiKey, FakeModelServer, ModelConfig, ModelError, OpenAiClient};
use model_support::{request, run};

const KEY: &str = "sk-SECRET-5f1e9c0a7b";

#[tokio::test]
async fn key_never_in_debug_or_error_text() {
    let server = FakeModelServer::start_with_key("127.0.0.1:0".parse().unwrap(), KEY)
        .await
        .unwrap();
    let config = ModelConfig::new(server.url(), "fake").with_key(KEY);
    let client = OpenAiClient::new(config.clone()).unwrap();
    for text in [
        format!("{config:?}"),
        format!("{:?}", ApiKey::new(KEY)),
        format!("{client:?}"),
        format!("{server:?}"),
    ] {
        assert!(!text.contains(KEY), "key leaked in {text}");
        assert!(!text.contains("SECRET"), "part of the key leaked in {text}");
    }

    // The right key works, so it was sent.
    let (_, err) = run(&client, request("hi", &[])).await;
    assert_eq!(err, None);

    // Every error the client can produce against this server, and a wrong key.
    let mut errors = Vec::new();
    for code in [
        "model_rate_limited",
        "model_auth_failed",
        "model_quota_exhausted",
        "model_request_too_large",
        "model_bad_request",
        "model_unavailable",
        "model_timeout",
        "model_stream_interrupted",
        "model_protocol",
        "model_network",
    ] {
        let prompt = format!(r#"{{"fake":{{"fail":"{code}","text":"{KEY}"}}}}"#);
        let (_, err) = run(&client, request(&prompt, &[])).await;
        errors.push(err.expect("an error"));
    }
    let wrong =
        OpenAiClient::new(ModelConfig::new(server.url(), "fake").with_key("sk-wrong")).unwrap();
    errors.push(run(&wrong, request("hi", &[])).await.1.expect("401"));
    let tls = OpenAiClient::new(
        ModelConfig::new(format!("https://{}/v1", server.addr()), "fake").with_key(KEY),
    )
    .unwrap();
    errors.push(run(&tls, request("hi", &[])).await.1.expect("tls"));
    errors.push(ModelError::NotConfigured);
    errors.push(ModelError::Cancelled);
    assert!(errors.contains(&ModelError::AuthFailed { status: 401 }));
    assert!(errors.contains(&ModelError::TlsFailed));
    for e in &errors {
        for text in [e.to_string(), format!("{e:?}")] {
            assert!(!text.contains(KEY), "key leaked in {text}");
        }
    }
    server.shutdown().await;
}

#[test]
fn key_with_newline_is_not_configured_and_not_echoed() {
    let err = OpenAiClient::new(ModelConfig::new("http://127.0.0.1:1/v1", "m").with_key("a\nb"))
        .unwrap_err();
    assert_eq!(err, ModelError::NotConfigured);
}

#[test]
fn url_credentials_are_not_in_debug() {
    let config = ModelConfig::new(
        "https://user:pw-SECRET@example.invalid/v1?key=q-SECRET",
        "m",
    );
    let text = format!("{config:?}");
    assert!(!text.contains("SECRET"), "{text}");
    assert!(text.contains("example.invalid"), "{text}");
}
