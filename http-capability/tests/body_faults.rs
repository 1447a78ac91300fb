//! Faulty and hostile bodies (issue 5 "Bad input and faults"): a server that closes mid-body,
//! a body that claims gzip but is not, a 200 MB body, a gzip bomb from the server. Each ends in
//! a bounded result or a one-sentence tool error, never a hang or a panic.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::io::Write;

use flate2::{Compression, write::GzEncoder};
use http_capability::{HttpConfig, HttpError, NetworkPolicy, StaticResolver};
use serde_json::json;
use support::{args, config, executor, lan_executor, response, serve, serve_fixed};
use tokio::io::AsyncWriteExt;

#[tokio::test]
async fn a_server_closing_mid_body_is_a_tool_error() {
    let server = serve(|_req, mut stream| async move {
        let _ = stream
            .write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\nonly ten b")
            .await;
        // Dropping the stream closes the connection 990 bytes early.
    })
    .await;
    let err = lan_executor(StaticResolver::new())
        .execute(&args(json!({"url": server.url("/")})))
        .await
        .unwrap_err();
    assert_eq!(err, HttpError::BodyIncomplete);
    let out = err.into_call_result().unwrap();
    assert!(out.is_error);
    assert_eq!(
        out.joined_text(),
        "The connection closed before the whole response body arrived."
    );
}

#[tokio::test]
async fn a_chunked_body_cut_off_mid_chunk_is_a_tool_error() {
    let server = serve(|_req, mut stream| async move {
        let _ = stream
            .write_all(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10\r\nonly-")
            .await;
    })
    .await;
    let err = lan_executor(StaticResolver::new())
        .execute(&args(json!({"url": server.url("/")})))
        .await
        .unwrap_err();
    assert_eq!(err, HttpError::BodyIncomplete);
}

#[tokio::test]
async fn a_body_claiming_gzip_that_is_not_gzip_is_a_tool_error() {
    let server = serve_fixed(response(
        "200 OK",
        &[("Content-Encoding", "gzip"), ("Content-Type", "text/plain")],
        b"this is plain text, not gzip at all",
    ))
    .await;
    let err = lan_executor(StaticResolver::new())
        .execute(&args(json!({"url": server.url("/")})))
        .await
        .unwrap_err();
    assert_eq!(err, HttpError::BodyDecode);
    assert!(err.into_call_result().unwrap().is_error);
}

/// Writes `total` bytes of `a` in 64 KiB chunks (Content-Length set), stopping as soon as the
/// client goes away.
async fn streaming_server(total: u64) -> support::TestServer {
    serve(move |_req, mut stream| async move {
        let head = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {total}\r\n\r\n"
        );
        if stream.write_all(head.as_bytes()).await.is_err() {
            return;
        }
        let chunk = vec![b'a'; 64 * 1024];
        let mut sent = 0u64;
        while sent < total {
            let n = chunk.len().min((total - sent) as usize);
            if stream.write_all(&chunk[..n]).await.is_err() {
                return;
            }
            sent += n as u64;
        }
    })
    .await
}

#[tokio::test]
async fn a_200_mb_body_is_cut_at_the_byte_cap() {
    let server = streaming_server(200 * 1024 * 1024).await;
    let cfg = HttpConfig {
        max_body_bytes: 1024 * 1024,
        ..config(NetworkPolicy::local_network())
    };
    let r = executor(cfg, StaticResolver::new())
        .execute(&args(json!({"url": server.url("/")})))
        .await
        .unwrap();
    assert_eq!(r.status_code, 200);
    assert!(r.truncated);
    assert_eq!(r.response_body.len(), 150_000);
    // The gzip holds what was read: exactly the cap.
    let gz = r.response_body_gz.unwrap();
    let mut out = Vec::new();
    std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&gz[..]), &mut out).unwrap();
    assert_eq!(out.len(), 1024 * 1024);
}

#[tokio::test]
async fn the_default_cap_is_16_mib() {
    let server = streaming_server(200 * 1024 * 1024).await;
    let cfg = HttpConfig {
        gzip_mode: http_capability::GzipMode::Never,
        ..config(NetworkPolicy::local_network())
    };
    assert_eq!(cfg.max_body_bytes, 16 * 1024 * 1024);
    let r = executor(cfg, StaticResolver::new())
        .execute(&args(json!({"url": server.url("/")})))
        .await
        .unwrap();
    assert!(r.truncated);
    assert_eq!(r.response_body.len(), 150_000);
    assert!(r.response_body_gz.is_none());
}

#[tokio::test]
async fn a_gzip_bomb_from_the_server_stops_at_the_byte_cap() {
    // 32 MiB of zeros compress to ~32 KiB.
    let mut enc = GzEncoder::new(Vec::new(), Compression::fast());
    let zeros = vec![0u8; 1024 * 1024];
    for _ in 0..32 {
        enc.write_all(&zeros).unwrap();
    }
    let bomb = enc.finish().unwrap();
    assert!(bomb.len() < 1024 * 1024);
    let server = serve_fixed(response(
        "200 OK",
        &[
            ("Content-Encoding", "gzip"),
            ("Content-Type", "application/octet-stream"),
        ],
        &bomb,
    ))
    .await;
    let cfg = HttpConfig {
        max_body_bytes: 512 * 1024,
        ..config(NetworkPolicy::local_network())
    };
    let r = executor(cfg, StaticResolver::new())
        .execute(&args(json!({"url": server.url("/")})))
        .await
        .unwrap();
    assert!(r.truncated);
    // Zeros are valid UTF-8: text, cut at 150,000 units.
    assert_eq!(r.response_body.len(), 150_000);
}

#[tokio::test]
async fn a_server_closing_before_answering_is_a_tool_error() {
    let server = serve(|_req, _stream| async move {}).await;
    let err = lan_executor(StaticResolver::new())
        .execute(&args(json!({"url": server.url("/")})))
        .await
        .unwrap_err();
    assert_eq!(err, HttpError::NoResponse);
    assert!(err.into_call_result().unwrap().is_error);
}
