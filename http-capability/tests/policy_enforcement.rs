//! Issue 5 §3 end to end: the policy is enforced on the resolved address of every connection,
//! before anything is sent; refusals are tool errors with one sentence. Only loopback servers
//! are ever contacted: every refused address here is refused before connecting.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::io;
use std::net::IpAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use futures::future::BoxFuture;
use http_capability::{
    HostResolver, HttpError, HttpExecutor, NetworkPolicy, PolicyViolation, StaticResolver,
};
use serde_json::json;
use support::{LOCALHOST, args, config, executor, lan_executor, response, serve_fixed};

fn ip(s: &str) -> IpAddr {
    s.parse().unwrap()
}

fn private_off() -> NetworkPolicy {
    NetworkPolicy {
        allow_private: false,
        ..NetworkPolicy::local_network()
    }
}

#[tokio::test]
async fn cloud_metadata_address_is_refused_as_a_tool_error() {
    let exec = lan_executor(StaticResolver::new());
    for url in [
        "http://169.254.169.254/latest/meta-data/",
        "https://169.254.169.254/",
        "http://[fd00:ec2::254]/",
    ] {
        let err = exec
            .execute(&args(json!({ "url": url })))
            .await
            .unwrap_err();
        assert_eq!(
            err,
            HttpError::Refused(PolicyViolation::LinkLocalOrMetadata),
            "{url}"
        );
        let out = err.into_call_result().unwrap();
        assert!(out.is_error);
        assert_eq!(
            out.joined_text(),
            "The network policy refuses link-local and cloud metadata addresses."
        );
    }
}

#[tokio::test]
async fn a_name_resolving_to_a_private_address_is_refused_when_private_access_is_off() {
    let server = serve_fixed(response("200 OK", &[], b"secret")).await;
    let resolver = StaticResolver::new().with("router.test", [LOCALHOST]);
    let exec = executor(config(private_off()), resolver.clone());
    for scheme in ["http", "https"] {
        let url = format!("{scheme}://router.test:{}/", server.port());
        let err = exec
            .execute(&args(json!({ "url": url })))
            .await
            .unwrap_err();
        assert_eq!(
            err,
            HttpError::Refused(PolicyViolation::PrivateAccessDisabled),
            "{scheme}"
        );
    }
    assert_eq!(server.accepted(), 0, "refused before connecting");

    // The same name with private access on reaches the server.
    let exec = lan_executor(resolver);
    let url = format!("http://router.test:{}/", server.port());
    let r = exec.execute(&args(json!({ "url": url }))).await.unwrap();
    assert_eq!(r.response_body, "secret");
    assert_eq!(server.accepted(), 1);
}

#[tokio::test]
async fn a_loopback_literal_is_refused_when_private_access_is_off() {
    let server = serve_fixed(response("200 OK", &[], b"x")).await;
    let exec = executor(config(private_off()), StaticResolver::new());
    let err = exec
        .execute(&args(json!({ "url": server.url("/") })))
        .await
        .unwrap_err();
    assert_eq!(
        err,
        HttpError::Refused(PolicyViolation::PrivateAccessDisabled)
    );
    assert_eq!(server.accepted(), 0);
}

#[tokio::test]
async fn one_refused_address_among_several_refuses_the_name() {
    let server = serve_fixed(response("200 OK", &[], b"x")).await;
    let resolver = StaticResolver::new().with("mixed.test", [LOCALHOST, ip("169.254.169.254")]);
    let exec = lan_executor(resolver);
    let url = format!("http://mixed.test:{}/", server.port());
    let err = exec
        .execute(&args(json!({ "url": url })))
        .await
        .unwrap_err();
    assert_eq!(
        err,
        HttpError::Refused(PolicyViolation::LinkLocalOrMetadata)
    );
    assert_eq!(server.accepted(), 0);
}

#[tokio::test]
async fn cleartext_to_a_public_address_is_refused_before_connecting() {
    // 203.0.113.0/24 is TEST-NET-3: never routed; refused here before any connect anyway.
    let exec = lan_executor(StaticResolver::new().with("public.test", [ip("203.0.113.7")]));
    for url in ["http://public.test/", "http://203.0.113.7/"] {
        let err = exec
            .execute(&args(json!({ "url": url })))
            .await
            .unwrap_err();
        assert_eq!(
            err,
            HttpError::Refused(PolicyViolation::CleartextToPublic),
            "{url}"
        );
    }
}

#[tokio::test]
async fn cleartext_is_refused_when_disabled() {
    let server = serve_fixed(response("200 OK", &[], b"x")).await;
    let policy = NetworkPolicy {
        allow_cleartext: false,
        ..NetworkPolicy::local_network()
    };
    let exec = executor(config(policy), StaticResolver::new());
    let err = exec
        .execute(&args(json!({ "url": server.url("/") })))
        .await
        .unwrap_err();
    assert_eq!(err, HttpError::Refused(PolicyViolation::CleartextDisabled));
    assert_eq!(server.accepted(), 0);
}

#[tokio::test]
async fn deny_and_allow_lists_apply_end_to_end() {
    let server = serve_fixed(response("200 OK", &[], b"x")).await;
    let resolver = StaticResolver::new()
        .with("nas.test", [LOCALHOST])
        .with("cam.test", [LOCALHOST]);
    let deny = NetworkPolicy {
        deny: vec!["127.0.0.0/8".parse().unwrap()],
        ..NetworkPolicy::local_network()
    };
    let exec = executor(config(deny), resolver.clone());
    let url = format!("http://nas.test:{}/", server.port());
    let err = exec
        .execute(&args(json!({ "url": url })))
        .await
        .unwrap_err();
    assert_eq!(err, HttpError::Refused(PolicyViolation::DenyListed));

    let allow = NetworkPolicy {
        allow: vec!["nas.test".parse().unwrap()],
        ..NetworkPolicy::local_network()
    };
    let exec = executor(config(allow), resolver);
    let url = format!("http://cam.test:{}/", server.port());
    let err = exec
        .execute(&args(json!({ "url": url })))
        .await
        .unwrap_err();
    assert_eq!(err, HttpError::Refused(PolicyViolation::NotAllowListed));
    assert_eq!(server.accepted(), 0);
    let url = format!("http://nas.test:{}/", server.port());
    assert_eq!(
        exec.execute(&args(json!({ "url": url })))
            .await
            .unwrap()
            .status_code,
        200
    );
}

/// Answers 127.0.0.1 the first time, then the metadata address: a DNS-rebinding attacker.
#[derive(Debug, Default)]
struct RebindingResolver {
    calls: AtomicUsize,
}

impl HostResolver for RebindingResolver {
    fn resolve<'a>(&'a self, _host: &'a str) -> BoxFuture<'a, io::Result<Vec<IpAddr>>> {
        let n = self.calls.fetch_add(1, Ordering::SeqCst);
        Box::pin(async move {
            Ok(vec![if n == 0 {
                LOCALHOST
            } else {
                ip("169.254.169.254")
            }])
        })
    }
}

#[tokio::test]
async fn dns_rebinding_is_caught_on_the_next_connection() {
    let server = serve_fixed(response("200 OK", &[], b"first")).await;
    let resolver = Arc::new(RebindingResolver::default());
    let exec =
        HttpExecutor::with_resolver(config(NetworkPolicy::local_network()), resolver.clone())
            .unwrap();
    let url = format!("http://rebind.test:{}/", server.port());
    let r = exec.execute(&args(json!({ "url": url }))).await.unwrap();
    assert_eq!(r.response_body, "first");
    // The server closed the connection, so the next request resolves again.
    let err = exec
        .execute(&args(json!({ "url": url })))
        .await
        .unwrap_err();
    assert_eq!(
        err,
        HttpError::Refused(PolicyViolation::LinkLocalOrMetadata)
    );
    assert_eq!(resolver.calls.load(Ordering::SeqCst), 2);
    assert_eq!(server.accepted(), 1);
}

#[tokio::test]
async fn an_unresolvable_name_is_a_connect_failure() {
    let exec = lan_executor(StaticResolver::new());
    let err = exec
        .execute(&args(json!({ "url": "http://nowhere.test/" })))
        .await
        .unwrap_err();
    assert_eq!(err, HttpError::Connect);
    assert_eq!(err.agentos_code(), "tool_failed");
}
