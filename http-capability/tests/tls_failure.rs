//! G-11 (TLS validation): `https` to a server that does not speak TLS fails cleanly as a TLS
//! tool error, never a panic. The server is on 127.0.0.1 and answers plain HTTP at once.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::net::Ipv4Addr;
use std::time::Duration;

use http_capability::{HttpError, StaticResolver};
use serde_json::json;
use support::{args, lan_executor};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpListener;

#[tokio::test]
async fn https_to_a_plaintext_server_is_a_tls_error() {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        for _ in 0..4 {
            let Ok((mut s, _)) = listener.accept().await else {
                return;
            };
            let _ = s
                .write_all(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
                .await;
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    });
    let err = lan_executor(StaticResolver::new())
        .execute(&args(
            json!({ "url": format!("https://127.0.0.1:{port}/") }),
        ))
        .await
        .unwrap_err();
    assert_eq!(err, HttpError::Tls);
    assert!(err.into_call_result().unwrap().is_error);
}
