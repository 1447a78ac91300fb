//! AUT-01, ACI-21, SEC-01/02, AUT-08: UID → package resolution from the registry file.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use permissions::identity::{IdentityError, RegistryError};
use permissions::{IdentityResolver, RegistryResolver, Uid};

const REGISTRY: &str = r#"{
  "version": 1,
  "packages": [
    {"uid": 10001, "package": "com.example.notes",
     "signingCertSha256": "AB:CD:EF:01:23:45:67:89:AB:CD:EF:01:23:45:67:89:AB:CD:EF:01:23:45:67:89:AB:CD:EF:01:23:45:67:89",
     "versionCode": 42, "label": "Notes", "permissions": ["ai.aci.permission.CALL"]},
    {"uid": 10002, "package": "com.example.shared.one",
     "signingCertSha256": "0000000000000000000000000000000000000000000000000000000000000000"},
    {"uid": 10002, "package": "com.example.shared.two",
     "signingCertSha256": "0000000000000000000000000000000000000000000000000000000000000000"}
  ]
}"#;

#[test]
fn aut01_resolves_uid_to_package_digest_and_permissions() {
    let r = RegistryResolver::from_json(REGISTRY, "test").unwrap();
    let c = r.resolve(Uid(10_001)).unwrap();
    assert_eq!(c.identity.uid, Uid(10_001));
    assert_eq!(c.identity.package, "com.example.notes");
    assert_eq!(
        c.identity.signing_cert_sha256.to_hex(),
        "abcdef0123456789".repeat(4)
    );
    assert_eq!(c.identity.signing_cert_sha256.short(), "abcdef012345");
    assert_eq!(c.identity.version_code, 42);
    assert_eq!(c.label.as_deref(), Some("Notes"));
    assert!(c.holds("ai.aci.permission.CALL"));
    assert!(!c.holds("ai.aci.permission.CALL_DANGEROUS"));
}

#[test]
fn aci21_shared_uid_is_refused() {
    let r = RegistryResolver::from_json(REGISTRY, "test").unwrap();
    assert_eq!(
        r.resolve(Uid(10_002)).unwrap_err(),
        IdentityError::SharedUid {
            uid: Uid(10_002),
            packages: 2
        }
    );
    assert_eq!(
        r.resolve(Uid(3)).unwrap_err(),
        IdentityError::UnknownUid(Uid(3))
    );
}

#[test]
fn aut08_unreadable_registry_fails_closed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("callers.json");
    std::fs::write(&path, "{ \"version\": 1, \"packages\": [ {\"uid\": 1,").unwrap();
    let (r, e) = RegistryResolver::load_or_fail_closed(&path);
    assert!(matches!(e, Some(RegistryError::Malformed { .. })), "{e:?}");
    assert_eq!(
        r.resolve(Uid(1)).unwrap_err(),
        IdentityError::RegistryUnavailable
    );
    // Missing file, wrong version, unknown fields, bad digest: all errors.
    assert!(matches!(
        RegistryResolver::load(&dir.path().join("nope.json")),
        Err(RegistryError::Io { .. })
    ));
    assert!(matches!(
        RegistryResolver::from_json(r#"{"version":2,"packages":[]}"#, "t"),
        Err(RegistryError::UnsupportedVersion { found: 2, .. })
    ));
    assert!(matches!(
        RegistryResolver::from_json(r#"{"version":1,"packages":[],"extra":1}"#, "t"),
        Err(RegistryError::Malformed { .. })
    ));
    assert!(matches!(
        RegistryResolver::from_json(
            r#"{"version":1,"packages":[{"uid":1,"package":"a","signingCertSha256":"xyz"}]}"#,
            "t"
        ),
        Err(RegistryError::Malformed { .. })
    ));
    let big = format!(
        "{{\"version\":1,\"packages\":[],\"pad\":\"{}\"}}",
        "x".repeat(1024 * 1024)
    );
    std::fs::write(&path, big).unwrap();
    assert!(matches!(
        RegistryResolver::load(&path),
        Err(RegistryError::TooLarge { .. })
    ));
}

#[test]
fn sec02_error_messages_do_not_echo_file_contents() {
    let e = RegistryResolver::from_json(
        r#"{"version":1,"packages":[{"uid":"secret-value"}]}"#,
        "reg.json",
    )
    .unwrap_err();
    let msg = e.to_string();
    assert!(
        msg.contains("reg.json") && !msg.contains("secret-value"),
        "{msg}"
    );
}
