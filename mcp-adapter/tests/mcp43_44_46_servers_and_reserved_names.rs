//! MCP-43 (the AgentOS extension: servers and display name), MCP-44 (server names unique
//! across plugin.json and mcp.json), MCP-46 (`user.` reserved).
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "fixtures/plugins/support.rs"]
mod support;

use mcp_adapter::plugin::{PackageIssue, ServerProblem, UnavailableReason};
use serde_json::json;
use support::*;

#[test]
fn mcp43_servers_and_display_name_are_read() {
    let p = read(&fixture("notes"));
    let m = p.manifest().unwrap();
    assert_eq!(m.servers.len(), 1);
    assert_eq!(
        m.servers["notes"].service,
        "org.agentos.sample.notes.agent.NotesMcpService"
    );
    // com.openai's interface.displayName wins over the top-level displayName.
    assert_eq!(m.display_name.as_deref(), Some("备忘录"));
}

#[test]
fn mcp43_a_bad_server_is_rejected_alone() {
    let mut m = manifest("notes", &["good"]);
    m["extensions"]["org.agentos"]["mcpServers"]["noservice"] = json!({});
    m["extensions"]["org.agentos"]["mcpServers"]["notaclass"] = json!({"service": "Notes"});
    m["extensions"]["org.agentos"]["mcpServers"]["bad name"] = json!({"service": "a.B"});
    let p = read(package_dir(&m).path());
    assert!(p.is_ready(), "{:?}", p.issues());
    let servers: Vec<&String> = p.manifest().unwrap().servers.keys().collect();
    assert_eq!(servers, ["good"]);
    let problems: Vec<ServerProblem> = p
        .issues()
        .iter()
        .filter_map(|i| match i {
            PackageIssue::ServerRejected { problem, .. } => Some(*problem),
            _ => None,
        })
        .collect();
    assert_eq!(problems.len(), 3, "{:?}", p.issues());
    assert!(problems.contains(&ServerProblem::ServiceMissing));
    assert!(problems.contains(&ServerProblem::ServiceNotAClassName));
    assert!(problems.contains(&ServerProblem::BadName));
}

#[test]
fn mcp43_mcp_servers_of_the_wrong_shape_reject_the_plugin() {
    let mut m = manifest("notes", &[]);
    m["extensions"] = json!({"org.agentos": {"mcpServers": ["notes"]}});
    let p = read(package_dir(&m).path());
    assert_eq!(p.unavailable(), Some(&UnavailableReason::ManifestRejected));
}

#[test]
fn mcp44_a_server_declared_twice_in_plugin_json_fails_the_plugin() {
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        "plugin.json",
        format!(
            r#"{{"$schema":"{SCHEMA}","name":"notes","extensions":{{"org.agentos":{{"mcpServers":{{
                "notes":{{"service":"a.B"}},"notes":{{"service":"a.C"}}}}}}}}}}"#
        ),
    );
    let p = read(d.path());
    assert_eq!(p.unavailable(), Some(&UnavailableReason::ManifestRejected));
    assert!(matches!(p.issues(), [PackageIssue::DuplicateKey { .. }]));
}

#[test]
fn mcp44_the_same_name_in_plugin_json_and_mcp_json_fails_the_plugin() {
    let d = package_dir(&manifest("notes", &["notes"]));
    write(
        d.path(),
        "mcp.json",
        r#"{"mcpServers":{"notes":{"type":"streamable-http","url":"https://example.org/mcp"}}}"#,
    );
    let p = read(d.path());
    assert_eq!(p.unavailable(), Some(&UnavailableReason::ManifestRejected));
    assert!(p.issues().contains(&PackageIssue::DuplicateServer {
        server: "\"notes\"".into()
    }));
    // Distinct names: fine (the remote one is only reported unsupported).
    write(
        d.path(),
        "mcp.json",
        r#"{"mcpServers":{"remote":{"type":"streamable-http","url":"https://example.org/mcp"}}}"#,
    );
    assert!(read(d.path()).is_ready());
}

#[test]
fn mcp46_the_user_prefix_is_reserved() {
    let p = read(package_dir(&manifest("user.notes", &["notes"])).path());
    assert_eq!(p.unavailable(), Some(&UnavailableReason::ManifestRejected));
    assert!(p.issues().contains(&PackageIssue::ReservedName));

    let p = read(package_dir(&manifest("notes", &["user.main", "main"])).path());
    assert!(p.is_ready());
    assert!(p.issues().contains(&PackageIssue::ServerRejected {
        server: "\"user.main\"".into(),
        problem: ServerProblem::ReservedName
    }));
    assert_eq!(p.manifest().unwrap().servers.len(), 1);

    // Only the exact prefix is reserved.
    assert!(read(package_dir(&manifest("users", &["userx"])).path()).is_ready());
    assert!(read(package_dir(&manifest("user-notes", &[])).path()).is_ready());
}
