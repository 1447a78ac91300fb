//! HTTP-07, HTTP-03, HTTP-11: invalid input is INVALID_PARAMETER with no network I/O.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use http_capability::{HttpError, InvalidParameter};
use serde_json::json;
use support::{args, lan_executor, response, serve_fixed};

/// Runs `arguments` (with `{url}` replaced by a live loopback server URL) and returns the
/// error, asserting the server saw no connection.
async fn rejected(arguments: serde_json::Value) -> InvalidParameter {
    let server = serve_fixed(response("200 OK", &[], b"ok")).await;
    let text = arguments.to_string().replace("{url}", &server.url("/"));
    let a = args(serde_json::from_str(&text).unwrap());
    let exec = lan_executor(Default::default());
    let err = exec.execute(&a).await.unwrap_err();
    assert_eq!(server.accepted(), 0, "no network I/O for invalid input");
    assert_eq!(err.aci_error_code(), 400);
    assert_eq!(err.aci_error_name(), "INVALID_PARAMETER");
    match err {
        HttpError::InvalidParameter(p) => p,
        other => panic!("expected InvalidParameter, got {other:?}"),
    }
}

#[tokio::test]
async fn http_07_missing_or_blank_url() {
    assert_eq!(rejected(json!({})).await, InvalidParameter::MissingUrl);
    assert_eq!(
        rejected(json!({"url": "  "})).await,
        InvalidParameter::MissingUrl
    );
    assert_eq!(
        rejected(json!({"url": null})).await,
        InvalidParameter::MissingUrl
    );
    assert_eq!(
        rejected(json!({"url": 42})).await,
        InvalidParameter::NotAString("url")
    );
}

#[tokio::test]
async fn http_07_relative_or_malformed_url() {
    for url in [
        "/relative/path",
        "example.com/x",
        "http://",
        "http://[::1/",
        "http//x",
    ] {
        let p = rejected(json!({ "url": url })).await;
        assert!(
            matches!(
                p,
                InvalidParameter::InvalidUrl | InvalidParameter::UnsupportedScheme
            ),
            "{url}: {p:?}"
        );
    }
}

#[tokio::test]
async fn http_07_unsupported_schemes_file_ftp_data() {
    for url in [
        "file:///etc/passwd",
        "ftp://127.0.0.1/x",
        "data:text/plain,hello",
        "gopher://127.0.0.1/",
        "ws://127.0.0.1/",
    ] {
        assert_eq!(
            rejected(json!({ "url": url })).await,
            InvalidParameter::UnsupportedScheme,
            "{url}"
        );
    }
}

#[tokio::test]
async fn http_07_headers_must_be_a_json_object_of_strings() {
    for headers in [
        json!("not json"),
        json!("[\"a\"]"),
        json!("{\"a\": 1}"),
        json!("{\"a\": {\"b\": \"c\"}}"),
        json!(17),
        json!(["x"]),
    ] {
        assert_eq!(
            rejected(json!({"url": "{url}", "headers": headers})).await,
            InvalidParameter::HeadersNotObject,
            "{headers}"
        );
    }
}

#[tokio::test]
async fn http_07_cr_lf_in_header_name_or_value_is_injection() {
    for headers in [
        json!({"X-A": "ok\r\nInjected: yes"}).to_string(),
        json!({"X-A\nInjected": "v"}).to_string(),
        json!({"X-A": "line\nbreak"}).to_string(),
        json!({"X-A": "carriage\rreturn"}).to_string(),
    ] {
        assert_eq!(
            rejected(json!({"url": "{url}", "headers": headers})).await,
            InvalidParameter::HeaderInjection,
            "{headers}"
        );
    }
}

#[tokio::test]
async fn http_07_header_names_must_be_tokens() {
    let headers = json!({"bad name": "v"}).to_string();
    assert_eq!(
        rejected(json!({"url": "{url}", "headers": headers})).await,
        InvalidParameter::InvalidHeader
    );
    let headers = json!({"X-Nul": "a\u{0}b"}).to_string();
    assert_eq!(
        rejected(json!({"url": "{url}", "headers": headers})).await,
        InvalidParameter::InvalidHeader
    );
}

#[tokio::test]
async fn http_11_client_managed_headers_are_rejected() {
    for name in [
        "Content-Length",
        "transfer-encoding",
        "Connection",
        "Upgrade",
        "TE",
        "Trailer",
        "Expect",
        "Host",
    ] {
        let headers = json!({ name: "x" }).to_string();
        let p = rejected(json!({"url": "{url}", "headers": headers})).await;
        assert_eq!(
            p,
            InvalidParameter::ForbiddenHeader(Box::leak(
                name.to_ascii_lowercase().into_boxed_str()
            )),
            "{name}"
        );
    }
}

#[tokio::test]
async fn http_03_method_must_be_a_token() {
    for m in ["GET /x", "PO\"ST", "GÉT", "a(b)", "M\r\nX"] {
        assert_eq!(
            rejected(json!({"url": "{url}", "method": m})).await,
            InvalidParameter::InvalidMethod,
            "{m}"
        );
    }
    assert_eq!(
        rejected(json!({"url": "{url}", "method": 5})).await,
        InvalidParameter::NotAString("method")
    );
}

#[tokio::test]
async fn body_must_be_a_string() {
    assert_eq!(
        rejected(json!({"url": "{url}", "body": {"a": 1}})).await,
        InvalidParameter::NotAString("body")
    );
}

#[test]
fn http_07_error_text_is_one_sentence_without_the_argument() {
    let e = HttpError::from(InvalidParameter::HeaderInjection);
    let text = e.to_string();
    assert_eq!(
        text,
        "Invalid parameter: header names and values must not contain CR or LF."
    );
}
