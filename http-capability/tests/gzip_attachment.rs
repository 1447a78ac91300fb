//! HTTP-06 / Appendix E.7: when `response_body_gz` travels — the gzip of the whole body text,
//! only while it is at most 900 KiB — and the `GzipMode` switch.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::io::Read;

use http_capability::{GzipMode, HttpConfig, HttpResult, NetworkPolicy, StaticResolver};
use serde_json::json;
use support::{args, config, executor, response, serve_fixed};

async fn fetch(mode: GzipMode, body: &[u8]) -> HttpResult {
    let server = serve_fixed(response("200 OK", &[("Content-Type", "text/plain")], body)).await;
    let cfg = HttpConfig {
        gzip_mode: mode,
        ..config(NetworkPolicy::local_network())
    };
    executor(cfg, StaticResolver::new())
        .execute(&args(json!({"url": server.url("/")})))
        .await
        .unwrap()
}

/// Printable but incompressible-ish text: hex of an xorshift stream (gzip gets ~50 %).
fn noisy_text(len: usize) -> String {
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    let mut s = String::with_capacity(len + 16);
    while s.len() < len {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        s.push_str(&format!("{x:016x}"));
    }
    s.truncate(len);
    s
}

#[tokio::test]
async fn e_7_gz_of_the_whole_body_is_attached_while_it_fits() {
    let body = noisy_text(400_000);
    let r = fetch(GzipMode::Always, body.as_bytes()).await;
    assert!(r.truncated);
    let gz = r.response_body_gz.unwrap();
    assert!(gz.len() <= 900 * 1024);
    let mut full = String::new();
    flate2::read::GzDecoder::new(&gz[..])
        .read_to_string(&mut full)
        .unwrap();
    assert_eq!(full, body);
}

#[tokio::test]
async fn e_7_gz_over_900_kib_is_left_out() {
    // ~2.5 MB of hex compresses to well over 900 KiB.
    let body = noisy_text(2_500_000);
    let r = fetch(GzipMode::Always, body.as_bytes()).await;
    assert!(r.truncated);
    assert!(r.response_body_gz.is_none());
    assert!(r.to_aci_result().get("response_body_gz").is_none());
}

#[tokio::test]
async fn when_truncated_mode_skips_short_bodies() {
    let short = fetch(GzipMode::WhenTruncated, b"short").await;
    assert!(short.response_body_gz.is_none());
    let long = fetch(GzipMode::WhenTruncated, "x".repeat(150_001).as_bytes()).await;
    assert!(long.response_body_gz.is_some());
    let never = fetch(GzipMode::Never, "x".repeat(150_001).as_bytes()).await;
    assert!(never.response_body_gz.is_none());
    let always = fetch(GzipMode::Always, b"short").await;
    assert!(always.response_body_gz.is_some());
}
