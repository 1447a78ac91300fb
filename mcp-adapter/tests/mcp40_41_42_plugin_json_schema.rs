//! MCP-40 (only the root plugin.json), MCP-41 (offline validation against the pinned schema,
//! closed top level), MCP-42 (`$schema` and the name rules), and bounded reads.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "fixtures/plugins/support.rs"]
mod support;

use mcp_adapter::plugin::{MANIFEST_MAX_BYTES, PackageIssue, UnavailableReason};
use serde_json::json;
use support::*;

#[test]
fn mcp40_the_root_plugin_json_is_read() {
    let p = read(&fixture("notes"));
    assert!(p.is_ready(), "{:?}", p.issues());
    let m = p.manifest().unwrap();
    assert_eq!(m.name, "notes");
    assert_eq!(m.version.as_deref(), Some("1.0.0"));
}

#[test]
fn mcp40_a_legacy_manifest_alone_is_not_a_plugin() {
    let p = read(&fixture("legacy-only"));
    assert_eq!(p.unavailable(), Some(&UnavailableReason::ManifestMissing));
    assert!(p.issues().contains(&PackageIssue::LegacyManifestIgnored {
        path: ".codex-plugin/plugin.json".into()
    }));
    assert!(p.issues().contains(&PackageIssue::ManifestMissing));
}

#[test]
fn mcp40_a_legacy_manifest_next_to_the_root_one_is_ignored_and_reported() {
    let d = package_dir(&manifest("notes", &["notes"]));
    write(
        d.path(),
        ".claude-plugin/plugin.json",
        r#"{"name":"other"}"#,
    );
    let p = read(d.path());
    assert!(p.is_ready());
    assert_eq!(p.name(), Some("notes"));
    assert!(p.issues().contains(&PackageIssue::LegacyManifestIgnored {
        path: ".claude-plugin/plugin.json".into()
    }));
}

#[test]
fn mcp41_an_extra_top_level_field_fails_validation() {
    let p = read(&fixture("extra-field"));
    assert_eq!(p.unavailable(), Some(&UnavailableReason::ManifestRejected));
    let texts = issue_texts(&p);
    assert_eq!(texts.len(), 1, "{texts:?}");
    assert!(texts[0].contains("additionalProperties"), "{texts:?}");
    assert!(
        texts[0].contains("\"mcpServers\""),
        "names the field: {texts:?}"
    );
    assert!(p.manifest().is_none());
}

#[test]
fn mcp41_every_documented_field_is_accepted() {
    // The fixture uses every top-level field of the schema.
    let p = read(&fixture("notes"));
    assert!(p.issues().is_empty(), "{:?}", p.issues());
}

#[test]
fn mcp41_author_is_closed_too_and_types_are_checked() {
    for (field, value) in [
        ("author", json!({"name": "x", "twitter": "@x"})),
        ("keywords", json!(["ok", 3])),
        ("extensions", json!({"org.agentos": "not an object"})),
        ("version", json!(1)),
        ("displayName", json!(["x"])),
    ] {
        let mut m = manifest("notes", &[]);
        m[field] = value;
        let p = read(package_dir(&m).path());
        assert_eq!(
            p.unavailable(),
            Some(&UnavailableReason::ManifestRejected),
            "{field}"
        );
        assert!(
            p.issues().iter().any(|i| matches!(i,
                PackageIssue::SchemaViolation { field: f, .. } if f.starts_with(&format!("/{field}")))),
            "{field}: {:?}",
            p.issues()
        );
    }
}

#[test]
fn mcp41_issue_messages_never_echo_values() {
    let mut m = manifest("notes", &[]);
    m["version"] = json!({"secret": "hunter2-TOKEN"});
    m["license"] = json!(["hunter2-TOKEN"]);
    let p = read(package_dir(&m).path());
    assert!(!p.is_ready());
    for t in issue_texts(&p) {
        assert!(!t.contains("hunter2"), "{t}");
    }
}

#[test]
fn mcp41_not_json_and_duplicate_keys_are_rejected_with_a_position() {
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        "plugin.json",
        "{\"$schema\": \"x\",\n  \"name\": }",
    );
    let p = read(d.path());
    assert!(matches!(
        p.issues(),
        [PackageIssue::NotJson {
            file: "plugin.json",
            line: 2,
            ..
        }]
    ));
    write(
        d.path(),
        "plugin.json",
        format!(r#"{{"$schema":"{SCHEMA}","name":"a","name":"b"}}"#),
    );
    let p = read(d.path());
    assert!(matches!(p.issues(), [PackageIssue::DuplicateKey { .. }]));
    assert_eq!(p.unavailable(), Some(&UnavailableReason::ManifestRejected));
}

#[test]
fn mcp41_a_2_mb_plugin_json_is_refused() {
    let mut m = manifest("notes", &[]);
    m["description"] = json!("x".repeat(2 * 1024 * 1024));
    let d = package_dir(&m);
    let p = read(d.path());
    assert_eq!(
        p.issues(),
        [PackageIssue::ManifestTooLarge {
            max: MANIFEST_MAX_BYTES
        }]
    );
    assert_eq!(p.unavailable(), Some(&UnavailableReason::ManifestRejected));
    // Just under the cap is read.
    let mut m = manifest("notes", &[]);
    m["description"] = json!("x".repeat(MANIFEST_MAX_BYTES - 200));
    assert!(read(package_dir(&m).path()).is_ready());
}

#[test]
fn mcp42_schema_must_be_the_1_0_0_url() {
    let mut m = manifest("notes", &[]);
    m["$schema"] = json!("https://agent-plugins.org/schemas/2.0.0/plugin.schema.json");
    let p = read(package_dir(&m).path());
    assert!(p.issues().iter().any(|i| matches!(i,
        PackageIssue::SchemaViolation { field, keyword } if field == "/$schema" && keyword == "const")));
    let mut m = manifest("notes", &[]);
    m.as_object_mut().unwrap().remove("$schema");
    assert!(!read(package_dir(&m).path()).is_ready());
    let mut m = manifest("notes", &[]);
    m.as_object_mut().unwrap().remove("name");
    assert!(!read(package_dir(&m).path()).is_ready());
}

#[test]
fn mcp42_name_rules_with_the_lookahead() {
    let good = [
        "a",
        "x.-y",
        "notes",
        "my.notes",
        "my-notes",
        "a1.b2-c3",
        "0",
        &"a".repeat(64),
    ];
    for name in good {
        let p = read(package_dir(&manifest(name, &[])).path());
        assert!(p.is_ready(), "{name}: {:?}", p.issues());
    }
    let sixty_five = "a".repeat(65);
    let bad = [
        "",
        "a--b",
        "a..b",
        "x..-y",
        "-a",
        "a-",
        ".a",
        "a.",
        "Notes",
        "no_tes",
        "no tes",
        "nötes",
        &sixty_five,
    ];
    for name in bad {
        let p = read(package_dir(&manifest(name, &[])).path());
        assert_eq!(
            p.unavailable(),
            Some(&UnavailableReason::ManifestRejected),
            "{name:?} must be rejected"
        );
        assert!(
            p.issues().iter().any(|i| matches!(i,
                PackageIssue::SchemaViolation { field, .. } if field == "/name")),
            "{name:?}: {:?}",
            p.issues()
        );
    }
}
