//! ACI-22 / G-10: the `aci_permissions.xml` format. The worked example is loaded from
//! `docs/aci-permissions.md` itself, and every row of its table is checked.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::caller;
use permissions::CertDigest;
use permissions::aci::{AciPolicy, AciPolicyError, Effect};

fn worked_example() -> String {
    let doc = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../docs/aci-permissions.md"
    ))
    .unwrap();
    let section = doc
        .split("## Worked example")
        .nth(1)
        .expect("a worked example section");
    let start = section.find("```xml\n").expect("an xml block") + "```xml\n".len();
    let len = section[start..].find("```").unwrap();
    section[start..start + len].to_owned()
}

fn runtime_cert() -> CertDigest {
    CertDigest::parse("5a1f00112233445566778899aabbccddeeff00112233445566778899aabbccdd").unwrap()
}

fn with_cert(uid: u32, pkg: &str, cert: CertDigest) -> permissions::Identity {
    let mut c = caller(uid, pkg, 0).identity;
    c.signing_cert_sha256 = cert;
    c
}

#[test]
fn aci22_worked_example_from_the_docs() {
    let policy = AciPolicy::parse(&worked_example()).unwrap();
    assert_eq!(policy.default, Effect::Deny);
    assert_eq!(policy.rules.len(), 3);
    let runtime = with_cert(1000, "org.agentos.app", runtime_cert());
    let fake_runtime = with_cert(1001, "org.agentos.app", CertDigest([9; 32]));
    let widget = caller(1002, "com.example.notes.widget", 3).identity;
    let scraper = caller(1003, "com.example.scraper", 4).identity;
    // The table of docs/aci-permissions.md.
    assert_eq!(policy.evaluate(&runtime, "notes_search"), Effect::Allow);
    assert_eq!(policy.evaluate(&runtime, "notes_delete"), Effect::Allow);
    assert_eq!(policy.evaluate(&fake_runtime, "notes_search"), Effect::Deny);
    assert_eq!(policy.evaluate(&widget, "notes_search"), Effect::Allow);
    assert_eq!(policy.evaluate(&widget, "notes_delete"), Effect::Deny);
    assert_eq!(policy.evaluate(&scraper, "notes_search"), Effect::Deny);
    let del = policy.capability("notes_delete").unwrap();
    assert_eq!(
        del.require_permissions,
        vec!["com.example.notes.permission.DELETE".to_owned()]
    );
    assert!(del.require_user_confirm);
    assert!(policy.capability("notes_search").is_none());
}

#[test]
fn aci22_deny_beats_allow_regardless_of_order() {
    let xml = r#"<aci-permissions version="1" default="allow">
        <allow package="com.a"/>
        <deny package="com.a" capability="wipe"/>
    </aci-permissions>"#;
    let p = AciPolicy::parse(xml).unwrap();
    let a = caller(1, "com.a", 1).identity;
    assert_eq!(p.evaluate(&a, "read"), Effect::Allow);
    assert_eq!(p.evaluate(&a, "wipe"), Effect::Deny);
    // Default applies to everyone else.
    assert_eq!(
        p.evaluate(&caller(2, "com.b", 1).identity, "wipe"),
        Effect::Allow
    );
}

#[test]
fn aci22_default_is_deny_and_empty_root_is_fine() {
    let p = AciPolicy::parse(r#"<?xml version="1.0"?><aci-permissions version="1"/>"#).unwrap();
    assert_eq!(p.default, Effect::Deny);
    assert_eq!(
        p.evaluate(&caller(1, "com.a", 1).identity, "x"),
        Effect::Deny
    );
    // Predefined entities in attribute values are fine; comments anywhere.
    let p = AciPolicy::parse(
        "<!-- c --><aci-permissions version=\"1\"><!-- c --><allow capability=\"a&#46;b\"/></aci-permissions>",
    );
    assert!(p.is_ok(), "{p:?}");
}

fn err(xml: &str) -> AciPolicyError {
    AciPolicy::parse(xml).unwrap_err()
}

#[test]
fn bad_input_entity_bomb_is_refused_never_expanded() {
    let bomb = r#"<?xml version="1.0"?>
<!DOCTYPE lolz [
 <!ENTITY lol "lol">
 <!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
 <!ENTITY lol9 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
]>
<aci-permissions version="1"><allow package="&lol9;"/></aci-permissions>"#;
    assert_eq!(err(bomb), AciPolicyError::Doctype);
    // Without the DOCTYPE, an undeclared entity is just an error.
    let e = err(r#"<aci-permissions version="1"><allow package="&lol9;"/></aci-permissions>"#);
    assert!(
        matches!(
            e,
            AciPolicyError::InvalidValue { .. } | AciPolicyError::Malformed { .. }
        ),
        "{e:?}"
    );
    // External entities likewise.
    let xxe =
        r#"<!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]><aci-permissions version="1"/>"#;
    assert_eq!(err(xxe), AciPolicyError::Doctype);
}

#[test]
fn bad_input_oversized() {
    let big = format!(
        "<aci-permissions version=\"1\">{}</aci-permissions>",
        "<!-- padding -->".repeat(70_000)
    );
    assert!(big.len() > 1024 * 1024);
    assert!(matches!(
        err(&big),
        AciPolicyError::TooLarge { max: 1_048_576, .. }
    ));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("aci_permissions.xml");
    std::fs::write(&path, &big).unwrap();
    assert!(matches!(
        AciPolicy::load(&path),
        Err(AciPolicyError::TooLarge { .. })
    ));
    assert!(matches!(
        AciPolicy::parse_bytes(&[0xff, 0xfe, 0x00]),
        Err(AciPolicyError::NotUtf8)
    ));
}

#[test]
fn bad_input_malformed_unknown_and_misplaced() {
    assert!(matches!(
        err("<aci-permissions version=\"1\">"),
        AciPolicyError::BadRoot | AciPolicyError::Malformed { .. }
    ));
    assert!(matches!(
        err("<aci-permissions version=\"1\"></aci-perms>"),
        AciPolicyError::Malformed { .. }
    ));
    assert_eq!(err(""), AciPolicyError::BadRoot);
    assert_eq!(
        err(r#"<aci-permissions version="1"><grant package="com.a"/></aci-permissions>"#),
        AciPolicyError::UnknownElement("grant".into())
    );
    assert_eq!(
        err(r#"<policy/>"#),
        AciPolicyError::UnknownElement("policy".into())
    );
    assert_eq!(err(r#"<allow/>"#), AciPolicyError::BadRoot);
    assert_eq!(
        err(r#"<aci-permissions version="1"><allow pkg="com.a"/></aci-permissions>"#),
        AciPolicyError::UnknownAttribute {
            element: "allow".into(),
            attribute: "pkg".into()
        }
    );
    assert_eq!(
        err(r#"<aci-permissions version="1" mode="x"/>"#),
        AciPolicyError::UnknownAttribute {
            element: "aci-permissions".into(),
            attribute: "mode".into()
        }
    );
    assert!(matches!(
        err(r#"<aci-permissions version="1"><allow><deny/></allow></aci-permissions>"#),
        AciPolicyError::Misplaced(n) if n == "deny"
    ));
    assert!(matches!(
        err(r#"<aci-permissions version="1"/><aci-permissions version="1"/>"#),
        AciPolicyError::Misplaced(_)
    ));
    assert_eq!(
        err(r#"<aci-permissions version="1">allow everyone</aci-permissions>"#),
        AciPolicyError::UnexpectedText("aci-permissions".into())
    );
    assert!(matches!(
        err(r#"<aci-permissions version="1"><![CDATA[x]]></aci-permissions>"#),
        AciPolicyError::UnexpectedText(_)
    ));
}

#[test]
fn bad_input_values_and_versions() {
    assert_eq!(
        err(r#"<aci-permissions/>"#),
        AciPolicyError::MissingAttribute {
            element: "aci-permissions".into(),
            attribute: "version"
        }
    );
    assert_eq!(
        err(r#"<aci-permissions version="2"/>"#),
        AciPolicyError::UnsupportedVersion("2".into())
    );
    assert!(matches!(
        err(r#"<aci-permissions version="one"/>"#),
        AciPolicyError::InvalidValue { .. }
    ));
    assert!(matches!(
        err(r#"<aci-permissions version="1" default="maybe"/>"#),
        AciPolicyError::InvalidValue { .. }
    ));
    for bad in [
        r#"<allow package="com..a"/>"#,
        r#"<allow package="com.a b"/>"#,
        r#"<allow cert="abc"/>"#,
        r#"<allow capability="has space"/>"#,
        r#"<capability id="x" requireUserConfirm="yes"/>"#,
        r#"<capability id="x" requirePermission="not a;perm"/>"#,
    ] {
        let xml = format!(r#"<aci-permissions version="1">{bad}</aci-permissions>"#);
        let e = err(&xml);
        assert!(
            matches!(e, AciPolicyError::InvalidValue { .. }),
            "{bad}: {e:?}"
        );
        // Messages name the rule, never the value.
        assert!(!e.to_string().contains("com..a") && !e.to_string().contains("has space"));
    }
    assert_eq!(
        err(
            r#"<aci-permissions version="1"><capability requireUserConfirm="true"/></aci-permissions>"#
        ),
        AciPolicyError::MissingAttribute {
            element: "capability".into(),
            attribute: "id"
        }
    );
    assert_eq!(
        err(
            r#"<aci-permissions version="1"><capability id="a"/><capability id="a"/></aci-permissions>"#
        ),
        AciPolicyError::DuplicateCapability("a".into())
    );
}

#[test]
fn unusable_file_fails_closed_missing_file_is_permissive() {
    let any = caller(1, "com.a", 1).identity;
    assert_eq!(AciPolicy::deny_all().evaluate(&any, "x"), Effect::Deny);
    assert_eq!(AciPolicy::allow_all().evaluate(&any, "x"), Effect::Allow);
    assert!(matches!(
        AciPolicy::load(std::path::Path::new("/nonexistent/aci_permissions.xml")),
        Err(AciPolicyError::Io(_))
    ));
}
