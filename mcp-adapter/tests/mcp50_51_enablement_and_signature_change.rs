//! MCP-50 (third-party plugins start disabled; the operator enables them in
//! plugin-state.json) and MCP-51 (identity = package, digest, versionCode; a signature change
//! disables the plugin until re-confirmed, and its Skills disappear).
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "fixtures/plugins/registry.rs"]
mod registry;
#[path = "fixtures/plugins/support.rs"]
mod support;

use std::time::Duration;

use mcp_adapter::PluginStatus;
use mcp_adapter::discovery::{Discovery, PLUGIN_STATE_FILE, PluginStateFile};
use mcp_adapter::plugin::Enablement;
use mcp_adapter::plugin::device::{IdentityAction, IdentityChange, PluginIdentity};
use permissions::CertDigest;
use registry::*;
use serde_json::json;
use support::*;

fn notes_dir() -> tempfile::TempDir {
    let d = package_dir(&manifest("notes", &["notes"]));
    skill(d.path(), "howto", "How to.");
    d
}

#[test]
fn mcp50_third_party_plugins_start_disabled() {
    let d = notes_dir();
    let e = entry(
        10_000,
        "com.example.notes",
        DIGEST_A,
        d.path(),
        &d.path().join("s"),
    );
    let plugins = discover_with(std::slice::from_ref(&e), json!({"version": 1}));
    let p = &plugins[0];
    assert_eq!(p.enablement, Enablement::Disabled);
    assert_eq!(p.status(), PluginStatus::Disabled(Enablement::Disabled));
    assert!(
        p.sources(Duration::from_secs(1)).is_empty(),
        "never connected"
    );
    let found = Discovery {
        registry: "r".into(),
        plugins: plugins.clone(),
    };
    assert!(found.skill_catalog().is_empty());

    // Enabled by the operator's record (digest matching).
    let plugins = discover_with(
        std::slice::from_ref(&e),
        json!({"version": 1, "plugins": [{"package": "com.example.notes", "signingCertSha256": DIGEST_A}]}),
    );
    assert_eq!(plugins[0].status(), PluginStatus::Ready);
    assert_eq!(plugins[0].sources(Duration::from_secs(1)).len(), 1);
    let found = Discovery {
        registry: "r".into(),
        plugins,
    };
    assert_eq!(found.skill_catalog().len(), 1);

    // Explicitly disabled.
    let plugins = discover_with(
        std::slice::from_ref(&e),
        json!({"version": 1, "plugins": [{"package": "com.example.notes", "signingCertSha256": DIGEST_A, "enabled": false}]}),
    );
    assert_eq!(plugins[0].enablement, Enablement::Disabled);
    // Bundled (not third-party): enabled without a record.
    let plugins = discover_with(
        &[e],
        json!({"version": 1, "bundled": ["com.example.notes"]}),
    );
    assert_eq!(plugins[0].enablement, Enablement::Enabled);
}

#[test]
fn mcp50_discovery_load_reads_the_state_file_beside_the_registry() {
    let d = notes_dir();
    let reg = tempfile::tempdir().unwrap();
    let e = entry(
        10_000,
        "com.example.notes",
        DIGEST_A,
        d.path(),
        &d.path().join("s"),
    );
    std::fs::write(
        reg.path().join("registry.json"),
        json!({"version": 1, "packages": [e]}).to_string(),
    )
    .unwrap();
    let found = Discovery::load(&reg.path().join("registry.json")).unwrap();
    assert_eq!(found.plugins[0].enablement, Enablement::Disabled);
    std::fs::write(
        reg.path().join(PLUGIN_STATE_FILE),
        json!({"version": 1, "plugins": [{"package": "com.example.notes", "signingCertSha256": DIGEST_A}]}).to_string(),
    )
    .unwrap();
    let found = Discovery::load(&reg.path().join("registry.json")).unwrap();
    assert_eq!(found.plugins[0].enablement, Enablement::Enabled);
    // A broken state file fails closed with an error naming the file, not its contents.
    std::fs::write(
        reg.path().join(PLUGIN_STATE_FILE),
        "{\"version\": 1, \"secretstuff\"",
    )
    .unwrap();
    let e = Discovery::load(&reg.path().join("registry.json")).unwrap_err();
    assert!(e.to_string().contains(PLUGIN_STATE_FILE), "{e}");
    assert!(!e.to_string().contains("secretstuff"), "{e}");
    let missing = PluginStateFile::load(&reg.path().join("absent.json")).unwrap();
    assert!(missing.plugins.is_empty());
}

#[test]
fn mcp51_a_new_signature_needs_reconfirmation_and_hides_skills() {
    let d = notes_dir();
    // Enabled for digest A, now signed with B.
    let plugins = discover_with(
        &[entry(
            10_000,
            "com.example.notes",
            DIGEST_B,
            d.path(),
            &d.path().join("s"),
        )],
        json!({"version": 1,
               "plugins": [{"package": "com.example.notes", "signingCertSha256": DIGEST_A}],
               "bundled": ["com.example.notes"]}),
    );
    let p = &plugins[0];
    assert_eq!(p.enablement, Enablement::NeedsReconfirmation);
    assert_eq!(
        p.status(),
        PluginStatus::Disabled(Enablement::NeedsReconfirmation)
    );
    assert!(p.sources(Duration::from_secs(1)).is_empty());
    let found = Discovery {
        registry: "r".into(),
        plugins: plugins.clone(),
    };
    assert!(found.skill_catalog().is_empty(), "Skills disappear");
}

#[test]
fn mcp51_identity_change_actions() {
    let id = |digest: u8, version: i64| PluginIdentity {
        package: "com.example.notes".into(),
        signing_cert_sha256: CertDigest([digest; 32]),
        version_code: version,
    };
    assert_eq!(
        IdentityChange::between(None, &id(1, 1)),
        IdentityChange::New
    );
    assert_eq!(
        IdentityChange::between(Some(&id(1, 1)), &id(1, 1)),
        IdentityChange::Unchanged
    );
    let upd = IdentityChange::between(Some(&id(1, 1)), &id(1, 2));
    assert_eq!(upd, IdentityChange::Updated);
    assert!(upd.actions().is_empty(), "an update revokes nothing");
    let re = IdentityChange::between(Some(&id(1, 1)), &id(2, 1));
    assert_eq!(re, IdentityChange::SignatureChanged);
    assert_eq!(
        re.actions(),
        [
            IdentityAction::RevokeConnections,
            IdentityAction::ClearPolicies,
            IdentityAction::DisableNeedsReconfirmation
        ]
    );
}
