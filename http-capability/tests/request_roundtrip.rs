//! HTTP-02, HTTP-03, HTTP-04, G-11: what is sent (method, headers, body as is) and what comes
//! back (status, lowercased multi-value headers, body).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use http_capability::BodyEncoding;
use serde_json::json;
use support::{args, lan_executor, response, serve, serve_fixed};
use tokio::io::AsyncWriteExt;

#[tokio::test]
async fn http_02_method_defaults_to_get() {
    let server = serve_fixed(response("200 OK", &[], b"hi")).await;
    let r = lan_executor(Default::default())
        .execute(&args(json!({"url": server.url("/a?b=c")})))
        .await
        .unwrap();
    assert_eq!(r.status_code, 200);
    assert_eq!(r.response_body, "hi");
    assert!(!r.truncated);
    let seen = server.requests();
    assert_eq!(seen[0].method, "GET");
    assert_eq!(seen[0].target, "/a?b=c");
}

#[tokio::test]
async fn http_02_body_and_headers_are_sent_unchanged() {
    let server = serve_fixed(response("201 Created", &[], b"")).await;
    let body = "{\"on\": true,  \"name\":\"lämp 💡\"}\n";
    let headers = json!({"Content-Type": "application/json", "X-Token-Id": "abc"}).to_string();
    let r = lan_executor(Default::default())
        .execute(&args(json!({
            "url": server.url("/light"),
            "method": "post",
            "headers": headers,
            "body": body,
        })))
        .await
        .unwrap();
    assert_eq!(r.status_code, 201);
    let seen = &server.requests()[0];
    assert_eq!(seen.method, "POST", "standard methods are upper-cased");
    assert_eq!(seen.body, body.as_bytes());
    assert_eq!(seen.header("content-type"), Some("application/json"));
    assert_eq!(seen.header("x-token-id"), Some("abc"));
    assert!(seen.header("cookie").is_none(), "no cookie store");
}

#[tokio::test]
async fn http_03_standard_and_custom_methods() {
    for (given, sent) in [
        ("PUT", "PUT"),
        ("delete", "DELETE"),
        ("Patch", "PATCH"),
        ("PROPFIND", "PROPFIND"),
        ("M-SEARCH", "M-SEARCH"),
        ("purge", "purge"),
    ] {
        let server = serve_fixed(response("204 No Content", &[], b"")).await;
        let r = lan_executor(Default::default())
            .execute(&args(json!({"url": server.url("/"), "method": given})))
            .await
            .unwrap();
        assert_eq!(r.status_code, 204);
        assert_eq!(server.requests()[0].method, sent, "{given}");
    }
}

#[tokio::test]
async fn http_03_head_returns_headers_without_body() {
    // A HEAD response carries Content-Length of the would-be body but no body bytes.
    let server = serve(|_req, mut stream| async move {
        let _ = stream
            .write_all(
                b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nX-Thing: 1\r\nConnection: close\r\n\r\n",
            )
            .await;
    })
    .await;
    let r = lan_executor(Default::default())
        .execute(&args(json!({"url": server.url("/"), "method": "HEAD"})))
        .await
        .unwrap();
    assert_eq!(server.requests()[0].method, "HEAD");
    assert_eq!(r.response_body, "");
    assert_eq!(r.response_headers["x-thing"], vec!["1"]);
}

#[tokio::test]
async fn g_11_response_headers_are_lowercased_arrays_keeping_every_value() {
    let server = serve_fixed(response(
        "404 Not Found",
        &[
            ("Set-Cookie", "a=1"),
            ("X-Multi", "one"),
            ("set-cookie", "b=2"),
            ("Content-Type", "text/plain"),
        ],
        b"nope",
    ))
    .await;
    let r = lan_executor(Default::default())
        .execute(&args(json!({"url": server.url("/")})))
        .await
        .unwrap();
    assert_eq!(r.status_code, 404, "non-2xx is a result, not an error");
    assert_eq!(r.response_headers["set-cookie"], vec!["a=1", "b=2"]);
    assert_eq!(r.response_headers["x-multi"], vec!["one"]);
    assert_eq!(r.response_headers["content-length"], vec!["4"]);
    let map = r.to_aci_result();
    assert_eq!(map["status_code"], 404);
    assert_eq!(map["response_headers"]["set-cookie"], json!(["a=1", "b=2"]));
    assert_eq!(map["truncated"], false);
    assert_eq!(r.body_encoding, BodyEncoding::Text);
    assert!(map.get("body_encoding").is_none());
    assert!(
        map.get("response_body_gz").unwrap().is_string(),
        "byte[] as base64"
    );
    assert_eq!(
        serde_json::to_value(&r).unwrap(),
        serde_json::Value::Object(map)
    );
}

#[tokio::test]
async fn server_gzip_is_decoded_transparently() {
    use flate2::{Compression, write::GzEncoder};
    use std::io::Write;
    let mut enc = GzEncoder::new(Vec::new(), Compression::default());
    enc.write_all("compressed hello".as_bytes()).unwrap();
    let gz = enc.finish().unwrap();
    let server = serve_fixed(response(
        "200 OK",
        &[("Content-Encoding", "gzip"), ("Content-Type", "text/plain")],
        &gz,
    ))
    .await;
    let r = lan_executor(Default::default())
        .execute(&args(json!({"url": server.url("/")})))
        .await
        .unwrap();
    assert_eq!(r.response_body, "compressed hello");
    assert!(
        server.requests()[0]
            .header("accept-encoding")
            .unwrap()
            .contains("gzip")
    );
}
