//! Redirects (issue 5 §2, HTTP-12): followed by hand at most 5 times, the policy re-checked on
//! every hop; credentials dropped across origins; `max_redirects = 0` returns the 3xx as-is.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use http_capability::{HttpConfig, HttpError, NetworkPolicy, PolicyViolation, StaticResolver};
use serde_json::json;
use support::{LOCALHOST, args, config, executor, lan_executor, response, serve, serve_fixed};
use tokio::io::AsyncWriteExt;

/// A server that redirects `/start` to `location` with `status`, and answers anything else
/// with the method and body it received.
async fn redirecting(status: &'static str, location: String) -> support::TestServer {
    let location = Arc::new(location);
    serve(move |req, mut stream| {
        let location = location.clone();
        async move {
            let bytes = if req.target == "/start" {
                response(status, &[("Location", location.as_str())], b"")
            } else {
                let body = format!("{} {}", req.method, String::from_utf8_lossy(&req.body));
                response("200 OK", &[], body.as_bytes())
            };
            let _ = stream.write_all(&bytes).await;
        }
    })
    .await
}

#[tokio::test]
async fn a_relative_redirect_is_followed() {
    let server = redirecting("302 Found", "/final".into()).await;
    let r = lan_executor(StaticResolver::new())
        .execute(&args(json!({"url": server.url("/start")})))
        .await
        .unwrap();
    assert_eq!(r.status_code, 200);
    assert_eq!(r.response_body, "GET ");
    assert_eq!(server.accepted(), 2);
}

#[tokio::test]
async fn see_other_turns_post_into_get_and_307_keeps_it() {
    let server = redirecting("303 See Other", "/final".into()).await;
    let r = lan_executor(StaticResolver::new())
        .execute(&args(
            json!({"url": server.url("/start"), "method": "POST", "body": "b"}),
        ))
        .await
        .unwrap();
    assert_eq!(r.response_body, "GET ");

    let server = redirecting("307 Temporary Redirect", "/final".into()).await;
    let r = lan_executor(StaticResolver::new())
        .execute(&args(
            json!({"url": server.url("/start"), "method": "POST", "body": "b"}),
        ))
        .await
        .unwrap();
    assert_eq!(r.response_body, "POST b");
}

#[tokio::test]
async fn a_redirect_to_the_metadata_address_is_not_followed() {
    let server = redirecting(
        "302 Found",
        "http://169.254.169.254/latest/meta-data/".into(),
    )
    .await;
    let err = lan_executor(StaticResolver::new())
        .execute(&args(json!({"url": server.url("/start")})))
        .await
        .unwrap_err();
    assert_eq!(
        err,
        HttpError::RedirectRefused(PolicyViolation::LinkLocalOrMetadata)
    );
    assert!(err.to_string().starts_with("A redirect was not followed: "));
    assert!(err.into_call_result().unwrap().is_error);
}

#[tokio::test]
async fn a_redirect_to_a_name_that_resolves_to_a_refused_address_is_not_followed() {
    let target = serve_fixed(response("200 OK", &[], b"internal")).await;
    let source = redirecting(
        "301 Moved Permanently",
        format!("http://evil.test:{}/", target.port()),
    )
    .await;
    let resolver = StaticResolver::new().with("evil.test", [LOCALHOST]);
    let policy = NetworkPolicy {
        deny: vec!["evil.test".parse().unwrap()],
        ..NetworkPolicy::local_network()
    };
    let err = executor(config(policy), resolver.clone())
        .execute(&args(json!({"url": source.url("/start")})))
        .await
        .unwrap_err();
    assert_eq!(err, HttpError::RedirectRefused(PolicyViolation::DenyListed));

    // Refused at resolution time: the name passes, the address it resolves to does not.
    let source = redirecting(
        "302 Found",
        format!("http://internal.test:{}/", target.port()),
    )
    .await;
    let resolver = resolver.with("internal.test", ["169.254.169.254".parse().unwrap()]);
    let err = lan_executor(resolver)
        .execute(&args(json!({"url": source.url("/start")})))
        .await
        .unwrap_err();
    assert_eq!(
        err,
        HttpError::RedirectRefused(PolicyViolation::LinkLocalOrMetadata)
    );
    assert_eq!(
        target.accepted(),
        0,
        "the refused target was never contacted"
    );
}

#[tokio::test]
async fn a_redirect_to_a_non_http_scheme_is_refused() {
    let server = redirecting("302 Found", "file:///etc/passwd".into()).await;
    let err = lan_executor(StaticResolver::new())
        .execute(&args(json!({"url": server.url("/start")})))
        .await
        .unwrap_err();
    assert_eq!(
        err,
        HttpError::RedirectRefused(PolicyViolation::UnsupportedScheme)
    );
}

#[tokio::test]
async fn at_most_five_redirects_are_followed() {
    let hits = Arc::new(AtomicUsize::new(0));
    let h = hits.clone();
    let server = serve(move |_req, mut stream| {
        let h = h.clone();
        async move {
            let n = h.fetch_add(1, Ordering::SeqCst);
            let loc = format!("/hop{n}");
            let _ = stream
                .write_all(&response("302 Found", &[("Location", &loc)], b""))
                .await;
        }
    })
    .await;
    let err = lan_executor(StaticResolver::new())
        .execute(&args(json!({"url": server.url("/")})))
        .await
        .unwrap_err();
    assert_eq!(err, HttpError::TooManyRedirects);
    assert_eq!(
        hits.load(Ordering::SeqCst),
        6,
        "the request plus 5 redirects"
    );
}

#[tokio::test]
async fn http_12_with_redirects_off_the_3xx_is_returned_with_its_location() {
    let server = redirecting("302 Found", "/final".into()).await;
    let cfg = HttpConfig {
        max_redirects: 0,
        ..config(NetworkPolicy::local_network())
    };
    let r = executor(cfg, StaticResolver::new())
        .execute(&args(json!({"url": server.url("/start")})))
        .await
        .unwrap();
    assert_eq!(r.status_code, 302);
    assert_eq!(r.response_headers["location"], vec!["/final"]);
    assert_eq!(server.accepted(), 1);
}

#[tokio::test]
async fn credentials_are_dropped_when_a_redirect_changes_origin() {
    let target = serve_fixed(response("200 OK", &[], b"ok")).await;
    let source = redirecting("302 Found", format!("http://other.test:{}/", target.port())).await;
    let headers = json!({
        "Authorization": "Bearer s3cret",
        "X-Api-Key": "k",
        "Cookie": "sid=1",
        "Accept": "text/plain",
    })
    .to_string();
    let r = lan_executor(StaticResolver::new().with("other.test", [LOCALHOST]))
        .execute(&args(
            json!({"url": source.url("/start"), "headers": headers}),
        ))
        .await
        .unwrap();
    assert_eq!(r.status_code, 200);
    let first = &source.requests()[0];
    assert_eq!(first.header("authorization"), Some("Bearer s3cret"));
    let second = &target.requests()[0];
    assert_eq!(second.header("authorization"), None);
    assert_eq!(second.header("x-api-key"), None);
    assert_eq!(second.header("cookie"), None);
    assert_eq!(second.header("accept"), Some("text/plain"));
}

#[tokio::test]
async fn credentials_are_kept_on_a_same_origin_redirect() {
    let server = redirecting("302 Found", "/final".into()).await;
    let headers = json!({"Authorization": "Bearer s3cret"}).to_string();
    lan_executor(StaticResolver::new())
        .execute(&args(
            json!({"url": server.url("/start"), "headers": headers}),
        ))
        .await
        .unwrap();
    let reqs = server.requests();
    assert_eq!(reqs.len(), 2);
    assert_eq!(reqs[1].header("authorization"), Some("Bearer s3cret"));
}
