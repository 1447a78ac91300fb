//! MCP-47 (unusable plugins stay, with reason and every issue), MCP-48 (NO_USABLE_SERVER),
//! MCP-49 (mcp.json servers reported unsupported, never started), MCP-52 (Hooks never run).
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "fixtures/plugins/registry.rs"]
mod registry;
#[path = "fixtures/plugins/support.rs"]
mod support;

use std::time::Duration;

use mcp_adapter::PluginStatus;
use mcp_adapter::plugin::{PackageIssue, UnavailableReason};
use registry::*;
use serde_json::json;
use support::*;

#[test]
fn mcp47_a_missing_directory_is_assets_missing() {
    let d = tempfile::tempdir().unwrap();
    let p = read(&d.path().join("nope"));
    assert_eq!(p.unavailable(), Some(&UnavailableReason::AssetsMissing));
    assert_eq!(p.unavailable().unwrap().code(), "ASSETS_MISSING");
    assert_eq!(p.issues(), [PackageIssue::DirectoryMissing]);
}

#[test]
fn mcp47_rejected_plugins_stay_in_discovery_with_every_issue() {
    let bad = tempfile::tempdir().unwrap();
    write(
        bad.path(),
        "plugin.json",
        format!(r#"{{"$schema":"{SCHEMA}","name":"Bad Name","extra":true,"author":{{"x":1}}}}"#),
    );
    let good = package_dir(&manifest("good", &["good"]));
    let sock = good.path().join("s.sock");
    let plugins = discover_with(
        &[
            entry(10_000, "com.example.bad", DIGEST_A, bad.path(), &sock),
            entry(10_001, "com.example.good", DIGEST_A, good.path(), &sock),
            entry(
                10_002,
                "com.example.gone",
                DIGEST_A,
                &bad.path().join("missing"),
                &sock,
            ),
        ],
        json!({"version": 1, "bundled": ["com.example.bad", "com.example.good", "com.example.gone"]}),
    );
    assert_eq!(plugins.len(), 3, "nothing is dropped");
    let b = by_package(&plugins, "com.example.bad");
    assert_eq!(
        b.status(),
        PluginStatus::Unavailable(UnavailableReason::ManifestRejected)
    );
    // name pattern, extra top-level field, extra author field: all three listed.
    assert_eq!(b.package.issues().len(), 3, "{:?}", b.package.issues());
    assert_eq!(
        by_package(&plugins, "com.example.gone").status(),
        PluginStatus::Unavailable(UnavailableReason::AssetsMissing)
    );
    assert_eq!(
        by_package(&plugins, "com.example.good").status(),
        PluginStatus::Ready
    );
}

#[test]
fn mcp48_servers_declared_none_usable_no_skills_is_no_usable_server() {
    let mut m = manifest("notes", &[]);
    m["extensions"] = json!({"org.agentos": {"mcpServers": {"a": {}, "b": {"service": "x"}}}});
    let d = package_dir(&m);
    let p = read(d.path());
    assert_eq!(p.unavailable(), Some(&UnavailableReason::NoUsableServer));
    assert_eq!(p.unavailable().unwrap().code(), "NO_USABLE_SERVER");
    // With a Skill the plugin is still useful.
    skill(d.path(), "howto", "How to.");
    assert!(read(d.path()).is_ready());
    // One usable server is enough.
    assert!(read(package_dir(&manifest("notes", &["ok"])).path()).is_ready());
}

#[test]
fn mcp49_mcp_json_servers_are_reported_unsupported_and_never_become_sources() {
    let d = package_dir(&manifest("notes", &["notes"]));
    write(
        d.path(),
        "mcp.json",
        r#"{"mcpServers":{
            "remote":{"type":"streamable-http","url":"https://example.org/mcp"},
            "local":{"command":"node","args":["server.js"]},
            "events":{"type":"sse","url":"https://example.org/sse"}}}"#,
    );
    let p = read(d.path());
    assert!(p.is_ready());
    let unsupported: Vec<(String, &str)> = p
        .issues()
        .iter()
        .filter_map(|i| match i {
            PackageIssue::RemoteServerUnsupported { server, transport } => {
                Some((server.clone(), *transport))
            }
            _ => None,
        })
        .collect();
    assert_eq!(
        unsupported,
        [
            ("\"events\"".to_owned(), "sse"),
            ("\"local\"".to_owned(), "stdio"),
            ("\"remote\"".to_owned(), "streamable-http")
        ]
    );
    assert_eq!(p.remote_servers().len(), 3);
    let plugins = discover_with(
        &[entry(
            10_000,
            "com.example.notes",
            DIGEST_A,
            d.path(),
            &d.path().join("s"),
        )],
        json!({"version": 1, "bundled": ["com.example.notes"]}),
    );
    let sources = plugins[0].sources(Duration::from_secs(1));
    assert_eq!(sources.len(), 1, "only the Binder server");
}

#[test]
fn mcp49_a_malformed_mcp_json_rejects_the_plugin() {
    let d = package_dir(&manifest("notes", &["notes"]));
    write(d.path(), "mcp.json", r#"{"servers":{}}"#);
    let p = read(d.path());
    assert_eq!(p.unavailable(), Some(&UnavailableReason::ManifestRejected));
    assert!(p.issues().contains(&PackageIssue::McpJsonInvalid {
        field: "/mcpServers".into()
    }));
}

#[test]
fn mcp52_hooks_are_reported_and_never_executed() {
    let marker_dir = tempfile::tempdir().unwrap();
    let marker = marker_dir.path().join("hook-ran");
    let d = package_dir(&manifest("notes", &["notes"]));
    let hook = format!(
        r#"{{"hooks":{{"SessionStart":[{{"hooks":[{{"type":"command","command":"touch {}"}}]}}]}}}}"#,
        marker.display()
    );
    write(d.path(), "hooks.json", &hook);
    write(
        d.path(),
        "hooks/pre.sh",
        format!("#!/bin/sh\ntouch {}\n", marker.display()),
    );
    let p = read(d.path());
    assert!(p.is_ready());
    assert!(p.issues().contains(&PackageIssue::HooksNotExecuted {
        path: "hooks.json".into()
    }));
    assert!(p.issues().contains(&PackageIssue::HooksNotExecuted {
        path: "hooks/".into()
    }));
    let plugins = discover_with(
        &[entry(
            10_000,
            "com.example.notes",
            DIGEST_A,
            d.path(),
            &d.path().join("s"),
        )],
        json!({"version": 1, "bundled": ["com.example.notes"]}),
    );
    let _ = plugins[0].sources(Duration::from_secs(1));
    assert!(!marker.exists(), "a hook ran");
}
