//! SMS-02 / SMS-03: the whole `mcpServers` batch is validated; any broken rule refuses the
//! batch (no session, no connection), and the message names the rule and index only, never a
//! value the caller wrote (SEC-15).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod sms_support;

use mcp_adapter::session_http::{
    BatchError, BatchRule, McpHttpServer, SessionHttpConfig, SessionMcpServers, SessionUrlPolicy,
    parse_batch, validate_batch,
};
use serde_json::{Value, json};
use sms_support::{Behaviour, FakeServer};

const SECRET: &str = "Zq9SECRETvalue";

fn entry(name: &str, url: &str, headers: Value) -> Value {
    json!({"type": "http", "name": name, "url": url, "headers": headers})
}

fn ok_url() -> String {
    format!("https://mcp.example.com/{SECRET}")
}

/// Validates `[ok, bad]` (the bad entry second) and returns the error, checking that no
/// caller value leaks into its text.
fn refuse(bad: Value) -> BatchError {
    let batch = json!([entry("fine", &ok_url(), json!([])), bad]);
    let err = parse_batch(Some(&batch), SessionUrlPolicy::strict()).unwrap_err();
    let shown = format!("{err} {err:?}");
    assert!(!shown.contains(SECRET), "{shown}");
    assert!(!shown.contains("example"), "{shown}");
    assert_eq!(
        err.to_string(),
        format!("mcpServers[1]: {}", err.rule.code())
    );
    err
}

fn url_rule(url: &str) -> BatchRule {
    let err = refuse(entry("s", url, json!([])));
    assert_eq!(err.index, Some(1));
    if !url.is_empty() {
        assert!(!err.to_string().contains(url));
    }
    err.rule
}

#[test]
fn sms03_a_valid_batch_passes() {
    let batch = json!([
        entry("orders", &ok_url(), json!([{"name": "Authorization", "value": format!("Bearer {SECRET}")}])),
        entry("a.b-c_D9", "https://93.184.216.34:8443/mcp", json!([])),
        entry("v6", "https://[2606:4700::1111]/mcp", json!(null)),
        {"type": "http", "name": "noheaders", "url": "https://api.example.org/mcp"},
    ]);
    let servers = parse_batch(Some(&batch), SessionUrlPolicy::strict()).unwrap();
    assert_eq!(servers.len(), 4);
    assert_eq!(servers[0].headers()[0].0, "Authorization");
    assert!(
        parse_batch(None, SessionUrlPolicy::strict())
            .unwrap()
            .is_empty()
    );
    assert!(
        parse_batch(Some(&Value::Null), SessionUrlPolicy::strict())
            .unwrap()
            .is_empty()
    );
}

#[test]
fn sms03_too_many_servers() {
    let batch: Vec<Value> = (0..5)
        .map(|i| entry(&format!("s{i}"), &ok_url(), json!([])))
        .collect();
    let err = parse_batch(Some(&Value::Array(batch)), SessionUrlPolicy::strict()).unwrap_err();
    assert_eq!(
        err,
        BatchError {
            rule: BatchRule::TooManyServers,
            index: None
        }
    );
    assert_eq!(err.to_string(), "mcpServers: too_many_servers");
}

#[test]
fn sms03_server_names() {
    for bad in [
        "",
        "has space",
        "slash/",
        "ünï",
        &"x".repeat(49),
        &format!("{SECRET}!"),
    ] {
        assert_eq!(
            refuse(entry(bad, &ok_url(), json!([]))).rule,
            BatchRule::ServerName,
            "{bad}"
        );
    }
    let fine = "x".repeat(48);
    let batch = json!([entry(&fine, &ok_url(), json!([]))]);
    assert!(parse_batch(Some(&batch), SessionUrlPolicy::strict()).is_ok());
}

#[test]
fn sms03_duplicate_server_names_case_insensitively() {
    assert_eq!(
        refuse(entry("FINE", &ok_url(), json!([]))).rule,
        BatchRule::DuplicateServer
    );
}

#[test]
fn sms03_url_length_counts_utf16_units() {
    let base = "https://mcp.example.com/";
    let long = format!("{base}{}", "a".repeat(2_049 - base.len()));
    assert_eq!(url_rule(&long), BatchRule::UrlTooLong);
    let max = format!("{base}{}", "a".repeat(2_048 - base.len()));
    let batch = json!([entry("s", &max, json!([]))]);
    assert!(parse_batch(Some(&batch), SessionUrlPolicy::strict()).is_ok());
}

#[test]
fn sms03_url_shape() {
    assert_eq!(
        url_rule("https://mcp.example.com/a b"),
        BatchRule::UrlInvalid
    );
    assert_eq!(
        url_rule("https://mcp.example.com/\u{7}"),
        BatchRule::UrlInvalid
    );
    assert_eq!(url_rule("/relative/path"), BatchRule::UrlInvalid);
    assert_eq!(
        url_rule("mailto:someone@example.com"),
        BatchRule::UrlInvalid
    );
    assert_eq!(url_rule(""), BatchRule::UrlInvalid);
    assert_eq!(
        url_rule(&format!("https://user:{SECRET}@mcp.example.com/")),
        BatchRule::UrlUserinfo
    );
    assert_eq!(
        url_rule("https://user@mcp.example.com/"),
        BatchRule::UrlUserinfo
    );
    assert_eq!(url_rule("http://mcp.example.com/mcp"), BatchRule::UrlScheme);
    assert_eq!(url_rule("ftp://mcp.example.com/mcp"), BatchRule::UrlScheme);
    assert_eq!(url_rule("wss://mcp.example.com/mcp"), BatchRule::UrlScheme);
}

#[test]
fn sms03_private_and_single_label_host_names() {
    for host in [
        "localhost",
        "LOCALHOST",
        "localhost.",
        "api.localhost",
        "printer.local",
        "box.localdomain",
        "svc.internal",
        "nas.lan",
        "router.home.arpa",
        "intranet",
    ] {
        assert_eq!(
            url_rule(&format!("https://{host}/mcp")),
            BatchRule::UrlHost,
            "{host}"
        );
    }
}

#[test]
fn sms03_numeric_hosts_must_be_canonical_dotted_decimal() {
    for host in [
        "2130706433",
        "127.1",
        "0x7f.0.0.1",
        "0x7f000001",
        "010.0.0.1",
        "8.8.8.08",
    ] {
        assert_eq!(
            url_rule(&format!("https://{host}/mcp")),
            BatchRule::UrlHost,
            "{host}"
        );
    }
}

#[test]
fn sms03_ip_literals_must_be_public() {
    for host in [
        "127.0.0.1",
        "10.1.2.3",
        "100.64.0.1",
        "169.254.169.254",
        "172.16.0.1",
        "192.168.1.1",
        "198.18.0.1",
        "192.0.2.1",
        "203.0.113.5",
        "224.0.0.1",
        "0.0.0.0",
        "[::1]",
        "[fe80::1]",
        "[fd00::1]",
        "[2001:db8::1]",
        "[2001::1]",
        "[::ffff:127.0.0.1]",
        "[::ffff:10.0.0.1]",
        "[64:ff9b::7f00:1]",
        "[2002:a00:1::1]",
    ] {
        assert_eq!(
            url_rule(&format!("https://{host}/mcp")),
            BatchRule::UrlIp,
            "{host}"
        );
    }
}

#[test]
fn sms03_headers() {
    let h = |name: &str, value: &str| json!([{"name": name, "value": value}]);
    let rule = |headers: Value| refuse(entry("s", &ok_url(), headers)).rule;
    let many: Vec<Value> = (0..17)
        .map(|i| json!({"name": format!("x-h{i}"), "value": "v"}))
        .collect();
    assert_eq!(rule(Value::Array(many)), BatchRule::HeaderCount);
    assert_eq!(rule(h("", "v")), BatchRule::HeaderName);
    assert_eq!(rule(h("bad name", SECRET)), BatchRule::HeaderName);
    assert_eq!(rule(h("bad:name", SECRET)), BatchRule::HeaderName);
    assert_eq!(rule(h(&"x".repeat(129), SECRET)), BatchRule::HeaderName);
    for forbidden in [
        "Host",
        "content-length",
        "Content-Type",
        "accept",
        "Mcp-Session-Id",
        "MCP-Protocol-Version",
        "transfer-encoding",
        "connection",
        "upgrade",
        "te",
        "trailer",
        "Proxy-Authorization",
        "expect",
        "origin",
    ] {
        assert_eq!(
            rule(h(forbidden, SECRET)),
            BatchRule::HeaderForbidden,
            "{forbidden}"
        );
    }
    assert_eq!(
        rule(json!([{"name": "X-Key", "value": SECRET}, {"name": "x-key", "value": SECRET}])),
        BatchRule::HeaderDuplicate
    );
    assert_eq!(
        rule(h("X-Key", &format!("{SECRET}\n"))),
        BatchRule::HeaderValue
    );
    assert_eq!(
        rule(h("X-Key", &format!("{SECRET}\t"))),
        BatchRule::HeaderValue
    );
    assert_eq!(
        rule(h("X-Key", &format!("{SECRET}é"))),
        BatchRule::HeaderValue
    );
    assert_eq!(rule(h("X-Key", &"v".repeat(4_097))), BatchRule::HeaderValue);
    let batch = json!([entry("s", &ok_url(), h("X-Key", &"v ".repeat(2_048)))]);
    assert!(parse_batch(Some(&batch), SessionUrlPolicy::strict()).is_ok());
}

#[test]
fn sms01_only_http_entries_of_the_acp_shape_are_accepted() {
    let stdio = json!({"name": "s", "command": "/bin/sh", "args": [], "env": []});
    assert_eq!(refuse(stdio).rule, BatchRule::ServerType);
    let sse = json!({"type": "sse", "name": "s", "url": ok_url(), "headers": []});
    assert_eq!(refuse(sse).rule, BatchRule::ServerType);
    assert_eq!(
        refuse(json!({"type": "http", "name": "s"})).rule,
        BatchRule::Malformed
    );
    assert_eq!(
        refuse(json!({"type": "http", "name": "s", "url": ok_url(), "headers": [SECRET]})).rule,
        BatchRule::Malformed
    );
    let err = parse_batch(
        Some(&json!({"not": "an array"})),
        SessionUrlPolicy::strict(),
    )
    .unwrap_err();
    assert_eq!(
        err,
        BatchError {
            rule: BatchRule::Malformed,
            index: None
        }
    );
}

#[test]
fn sms03_the_first_broken_rule_in_entry_order_is_reported() {
    let servers = vec![
        McpHttpServer::new("a", ok_url(), vec![]),
        McpHttpServer::new("b", "http://mcp.example.com/", vec![]),
        McpHttpServer::new("bad name", ok_url(), vec![]),
    ];
    let err = validate_batch(&servers, SessionUrlPolicy::strict()).unwrap_err();
    assert_eq!(
        err,
        BatchError {
            rule: BatchRule::UrlScheme,
            index: Some(1)
        }
    );
}

#[test]
fn sms03_the_test_policy_admits_loopback_literals_only() {
    let tests = SessionUrlPolicy::loopback_for_tests();
    let ok = [
        McpHttpServer::new("a", "http://127.0.0.1:9/mcp", vec![]),
        McpHttpServer::new("b", "http://[::1]:9/", vec![]),
    ];
    assert!(validate_batch(&ok, tests).is_ok());
    let name = [McpHttpServer::new("a", "http://localhost:9/mcp", vec![])];
    assert_eq!(
        validate_batch(&name, tests).unwrap_err().rule,
        BatchRule::UrlHost
    );
    let private = [McpHttpServer::new("a", "http://10.0.0.1/mcp", vec![])];
    assert_eq!(
        validate_batch(&private, tests).unwrap_err().rule,
        BatchRule::UrlIp
    );
}

/// SMS-02: a refused batch connects to nothing — not even its valid entries.
#[tokio::test]
async fn sms02_a_refused_batch_makes_no_connection() {
    let server = FakeServer::start(Behaviour::default()).await;
    let servers = vec![
        McpHttpServer::new("good", server.url(), vec![]),
        McpHttpServer::new("good", server.url(), vec![]),
    ];
    let config = SessionHttpConfig {
        policy: SessionUrlPolicy::loopback_for_tests(),
        ..SessionHttpConfig::default()
    };
    let err = SessionMcpServers::start(servers, config).await.unwrap_err();
    assert_eq!(
        err,
        BatchError {
            rule: BatchRule::DuplicateServer,
            index: Some(1)
        }
    );
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    assert!(server.requests().is_empty());
    // The strict policy refuses the loopback test server itself.
    let strict = SessionMcpServers::start(
        vec![McpHttpServer::new("s", server.url(), vec![])],
        SessionHttpConfig::default(),
    )
    .await
    .unwrap_err();
    assert_eq!(strict.rule, BatchRule::UrlScheme);
    assert!(server.requests().is_empty());
}
