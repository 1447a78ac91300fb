//! Issue 5 §2 / SPEC §10 G-11: bodies are decoded by their declared charset, binary bodies are
//! base64 with `body_encoding: "base64"`; never a panic.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use base64::Engine as _;
use http_capability::{BodyEncoding, HttpResult, StaticResolver, render_http_result};
use serde_json::json;
use support::{args, lan_executor, response, serve_fixed};

async fn fetch(content_type: &str, body: &[u8]) -> HttpResult {
    let server = serve_fixed(response("200 OK", &[("Content-Type", content_type)], body)).await;
    lan_executor(StaticResolver::new())
        .execute(&args(json!({"url": server.url("/")})))
        .await
        .unwrap()
}

#[tokio::test]
async fn g_11_iso_8859_1_body_is_decoded_by_its_charset() {
    let r = fetch("text/html; charset=ISO-8859-1", b"Gr\xfc\xdfe").await;
    assert_eq!(r.response_body, "Grüße");
    assert_eq!(r.body_encoding, BodyEncoding::Text);
}

#[tokio::test]
async fn g_11_shift_jis_body_is_decoded_by_its_charset() {
    // "ルータ" in Shift_JIS.
    let r = fetch(
        "text/plain;charset=shift_jis",
        &[0x83, 0x8b, 0x81, 0x5b, 0x83, 0x5e],
    )
    .await;
    assert_eq!(r.response_body, "ルータ");
}

#[tokio::test]
async fn g_11_invalid_bytes_under_a_declared_charset_become_replacement_characters() {
    let r = fetch("text/plain; charset=utf-8", b"ok \xff\xfe end").await;
    assert_eq!(r.body_encoding, BodyEncoding::Text);
    assert!(r.response_body.starts_with("ok "));
    assert!(r.response_body.contains('\u{FFFD}'));
}

#[tokio::test]
async fn g_11_binary_body_is_base64_and_flagged() {
    let png: &[u8] = &[
        0x89, b'P', b'N', b'G', 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0xff, 0x80,
    ];
    let r = fetch("image/png", png).await;
    assert_eq!(r.body_encoding, BodyEncoding::Base64);
    assert_eq!(
        base64::engine::general_purpose::STANDARD
            .decode(&r.response_body)
            .unwrap(),
        png
    );
    let map = r.to_aci_result();
    assert_eq!(map["body_encoding"], "base64");
    // The renderer shows the base64 text (it is never mistaken for the body's own text).
    let text = render_http_result(&map).unwrap();
    assert!(text.ends_with(&r.response_body));
}

#[tokio::test]
async fn g_11_utf8_without_a_charset_is_text() {
    let r = fetch("application/json", "{\"temp\":\"21°C\"}".as_bytes()).await;
    assert_eq!(r.response_body, "{\"temp\":\"21°C\"}");
    assert_eq!(r.body_encoding, BodyEncoding::Text);
}
