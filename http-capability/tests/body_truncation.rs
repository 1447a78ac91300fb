//! HTTP-05 / GEN-02: `response_body` is cut at 150,000 UTF-16 units (149,999 when a surrogate
//! pair would be split), `truncated` says so, and `response_body_gz` keeps the whole body.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::io::Read;

use http_capability::{HttpResult, StaticResolver};
use serde_json::json;
use support::{args, lan_executor, response, serve_fixed};

async fn fetch(body: &str) -> HttpResult {
    let server = serve_fixed(response(
        "200 OK",
        &[("Content-Type", "text/plain; charset=utf-8")],
        body.as_bytes(),
    ))
    .await;
    lan_executor(StaticResolver::new())
        .execute(&args(json!({"url": server.url("/")})))
        .await
        .unwrap()
}

fn gunzip(gz: &[u8]) -> String {
    let mut s = String::new();
    flate2::read::GzDecoder::new(gz)
        .read_to_string(&mut s)
        .unwrap();
    s
}

fn units(s: &str) -> usize {
    s.encode_utf16().count()
}

#[tokio::test]
async fn http_05_149_999_units_is_not_truncated() {
    let body = "a".repeat(149_999);
    let r = fetch(&body).await;
    assert_eq!(r.response_body, body);
    assert!(!r.truncated);
}

#[tokio::test]
async fn http_05_150_000_units_is_not_truncated() {
    let body = "b".repeat(150_000);
    let r = fetch(&body).await;
    assert_eq!(units(&r.response_body), 150_000);
    assert!(!r.truncated);
}

#[tokio::test]
async fn http_05_150_001_units_is_truncated_and_gz_keeps_everything() {
    let body = "c".repeat(150_001);
    let r = fetch(&body).await;
    assert_eq!(r.response_body, "c".repeat(150_000));
    assert!(r.truncated);
    assert_eq!(gunzip(r.response_body_gz.as_ref().unwrap()), body);
    assert_eq!(r.to_aci_result()["truncated"], true);
}

#[tokio::test]
async fn http_05_a_surrogate_pair_straddling_the_cut_is_left_out_whole() {
    // 149,999 units, then 😀 (2 units: 150,000 and 150,001), then more.
    let body = format!("{}😀tail", "d".repeat(149_999));
    let r = fetch(&body).await;
    assert_eq!(units(&r.response_body), 149_999);
    assert_eq!(r.response_body, "d".repeat(149_999));
    assert!(r.truncated);
}

#[tokio::test]
async fn http_05_counts_utf16_units_not_bytes() {
    // 150,000 CJK characters: 450,000 UTF-8 bytes but exactly 150,000 units.
    let body = "字".repeat(150_000);
    let r = fetch(&body).await;
    assert!(!r.truncated);
    assert_eq!(r.response_body, body);
}
