//! HTTP-10: the consent card shows method, `scheme://host[:port]/path`, a "local network"
//! label, the query sanitized (SEC-04) and credential headers masked.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use http_capability::consent::{MASK, is_local_host, sanitize};
use http_capability::{ConsentSummary, InvalidParameter};
use serde_json::{Value, json};

fn summary(v: Value) -> ConsentSummary {
    ConsentSummary::from_arguments(v.as_object().unwrap()).unwrap()
}

#[test]
fn http_10_method_target_and_local_network_label() {
    let s = summary(json!({
        "url": "http://192.168.1.1:8080/cgi-bin/luci?x=1#frag",
        "method": "post",
        "body": "a=1"
    }));
    assert_eq!(s.method, "POST");
    assert_eq!(s.target, "http://192.168.1.1:8080/cgi-bin/luci");
    assert!(s.local_network);
    assert_eq!(
        s.to_text(),
        "POST http://192.168.1.1:8080/cgi-bin/luci (local network)\nquery: 「x=1」\nbody: 3 characters"
    );
}

#[test]
fn http_10_default_port_and_user_info_are_not_shown() {
    let s = summary(json!({"url": "https://admin:hunter2@example.com:443/a/b"}));
    assert_eq!(s.target, "https://example.com/a/b");
    assert!(!s.local_network);
    assert!(!s.to_text().contains("hunter2"));
    assert!(!s.to_text().contains("admin"));
}

#[test]
fn http_10_local_network_hosts() {
    for h in [
        "10.0.0.1",
        "172.20.1.1",
        "192.168.0.1",
        "127.0.0.1",
        "[::1]",
        "[fe80::1]",
        "169.254.1.1",
        "[fd12::1]",
        "nas.local",
        "NAS.LOCAL.",
        "localhost",
    ] {
        assert!(is_local_host(h), "{h}");
    }
    for h in [
        "example.com",
        "8.8.8.8",
        "local.example.com",
        "[2001:db8::1]",
    ] {
        assert!(!is_local_host(h), "{h}");
    }
}

#[test]
fn http_10_credential_headers_are_masked() {
    let headers = json!({
        "Authorization": "Bearer abc",
        "Cookie": "sid=1",
        "Proxy-Authorization": "Basic x",
        "X-Api-Key": "k",
        "X-Auth-Token": "t",
        "Client-Secret": "s",
        "Accept": "text/html",
    })
    .to_string();
    let s = summary(json!({"url": "https://example.com/", "headers": headers}));
    let shown: std::collections::HashMap<_, _> = s.headers.iter().cloned().collect();
    for masked in [
        "authorization",
        "cookie",
        "proxy-authorization",
        "x-api-key",
        "x-auth-token",
        "client-secret",
    ] {
        assert_eq!(shown[masked], MASK, "{masked}");
    }
    assert_eq!(shown["accept"], "「text/html」");
    let text = s.to_text();
    for secret in ["abc", "sid=1", "Basic", "hunter"] {
        assert!(!text.contains(secret), "{secret} leaked: {text}");
    }
}

#[test]
fn sec_04_vectors() {
    assert_eq!(sanitize("a\u{202E}b\u{200B}c\n\n d\u{0007}"), "「abc d」");
    assert_eq!(sanitize("a\nb"), "「a b」");
}

#[test]
fn http_10_long_query_is_truncated_by_code_point() {
    let q = "q=".to_owned() + &"é".repeat(300);
    let s = summary(json!({ "url": format!("https://example.com/?{q}") }));
    let shown = s.query.unwrap();
    // Percent-encoded by URL parsing, then cut to 256 code points, the ellipsis included
    // (the shared SEC-04 sanitizer of the permissions crate).
    let inner = shown
        .strip_prefix('「')
        .unwrap()
        .strip_suffix('」')
        .unwrap();
    assert_eq!(inner.chars().count(), 256);
    assert!(inner.ends_with('…'));
}

#[test]
fn http_10_invalid_arguments_have_no_summary() {
    let err = ConsentSummary::from_arguments(json!({"url": "file:///x"}).as_object().unwrap())
        .unwrap_err();
    assert_eq!(err, InvalidParameter::UnsupportedScheme);
}
