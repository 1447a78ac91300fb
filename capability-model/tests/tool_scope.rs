//! toolScope parsing, limits, storage and fork (CAT-30..CAT-36, CAT-40, CAT-43).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use capability_model::{ScopeEntry, ScopeError, ToolScope};
use serde_json::json;

fn entry(p: &str, t: &str) -> ScopeEntry {
    ScopeEntry {
        plugin: p.into(),
        tool: t.into(),
    }
}

#[test]
fn cat_33_absent_or_null_is_unrestricted_and_empty_is_nothing() {
    assert!(ToolScope::from_json(None).unwrap().is_unrestricted());
    assert!(
        ToolScope::from_json(Some(&json!(null)))
            .unwrap()
            .is_unrestricted()
    );
    let empty = ToolScope::from_json(Some(&json!([]))).unwrap();
    assert!(!empty.is_unrestricted());
    assert!(!empty.allows("p", "t"));
}

#[test]
fn cat_34_limits_are_32_entries_and_1_to_128_units() {
    let ok: Vec<_> = (0..32)
        .map(|i| json!({"plugin": "p", "tool": format!("t{i}")}))
        .collect();
    assert!(ToolScope::from_json(Some(&json!(ok))).is_ok());
    let too_many: Vec<_> = (0..33)
        .map(|i| json!({"plugin": "p", "tool": format!("t{i}")}))
        .collect();
    assert_eq!(
        ToolScope::from_json(Some(&json!(too_many))),
        Err(ScopeError::TooManyEntries)
    );
    let s128 = "a".repeat(128);
    assert!(ToolScope::from_json(Some(&json!([{"plugin": s128, "tool": "t"}]))).is_ok());
    let s129 = "a".repeat(129);
    assert!(matches!(
        ToolScope::from_json(Some(&json!([{"plugin": s129, "tool": "t"}]))),
        Err(ScopeError::BadLength {
            index: 0,
            field: "plugin"
        })
    ));
    assert!(matches!(
        ToolScope::from_json(Some(&json!([{"plugin": "p", "tool": ""}]))),
        Err(ScopeError::BadLength { field: "tool", .. })
    ));
    // Length is in UTF-16 units: 64 emoji = 128 units is fine, 65 = 130 is not.
    let e64 = "😀".repeat(64);
    assert!(ToolScope::from_json(Some(&json!([{"plugin": e64, "tool": "t"}]))).is_ok());
    let e65 = "😀".repeat(65);
    assert!(ToolScope::from_json(Some(&json!([{"plugin": e65, "tool": "t"}]))).is_err());
}

#[test]
fn cat_35_malformed_shapes_are_rejected() {
    assert_eq!(
        ToolScope::from_json(Some(&json!({}))),
        Err(ScopeError::NotArray)
    );
    assert_eq!(
        ToolScope::from_json(Some(&json!("x"))),
        Err(ScopeError::NotArray)
    );
    assert_eq!(
        ToolScope::from_json(Some(&json!([1]))),
        Err(ScopeError::EntryNotObject(0))
    );
    assert!(matches!(
        ToolScope::from_json(Some(&json!([{"plugin": "p"}]))),
        Err(ScopeError::MissingField {
            index: 0,
            field: "tool"
        })
    ));
    assert!(matches!(
        ToolScope::from_json(Some(&json!([{"plugin": 3, "tool": "t"}]))),
        Err(ScopeError::MissingField {
            field: "plugin",
            ..
        })
    ));
}

#[test]
fn errors_never_echo_the_callers_values() {
    let secret = "s3cr3t-plugin-name".repeat(8);
    let e = ToolScope::from_json(Some(&json!([{"plugin": secret, "tool": "t"}]))).unwrap_err();
    assert!(!e.to_string().contains("s3cr3t"));
}

#[test]
fn cat_30_final_names_are_not_scope_entries() {
    let s = ToolScope::restricted([entry("com.example.notes", "list")]);
    assert!(s.allows("com.example.notes", "list"));
    assert!(!s.allows("com_example_notes", "list"));
    assert!(!s.allows("mcp__com_example_notes__main__list", "list"));
}

#[test]
fn cat_36_fork_intersects_and_inherits() {
    let old = ToolScope::restricted([entry("p", "a"), entry("p", "b")]);
    let req = ToolScope::restricted([entry("p", "b"), entry("p", "c")]);
    assert_eq!(
        old.fork(Some(&req)),
        ToolScope::restricted([entry("p", "b")])
    );
    // Empty intersection is no tools, not unrestricted.
    let disjoint = ToolScope::restricted([entry("q", "z")]);
    let f = old.fork(Some(&disjoint));
    assert!(!f.is_unrestricted());
    assert!(!f.allows("p", "a"));
    // No scope (or null) inherits.
    assert_eq!(old.fork(None), old);
    assert_eq!(old.fork(Some(&ToolScope::unrestricted())), old);
    // An unrestricted session narrows to the request.
    assert_eq!(ToolScope::unrestricted().fork(Some(&req)), req);
}

#[test]
fn cat_40_corrupt_stored_scope_is_empty_never_unrestricted() {
    for stored in ["", "{", "\"x\"", "[1,2]", "42", "[{\"plugin\":\"p\"}]"] {
        let s = ToolScope::from_stored(stored);
        assert!(!s.is_unrestricted(), "{stored:?}");
        assert!(s.entries().unwrap().is_empty());
    }
    let s = ToolScope::restricted([entry("p", "t")]);
    assert_eq!(ToolScope::from_stored(&s.to_stored()), s);
    assert!(ToolScope::from_stored(&ToolScope::unrestricted().to_stored()).is_unrestricted());
}

#[test]
fn cat_43_scopes_compare_as_sets() {
    let a = ToolScope::from_json(Some(
        &json!([{"plugin":"p","tool":"a"},{"plugin":"p","tool":"b"},{"plugin":"p","tool":"a"}]),
    ))
    .unwrap();
    let b = ToolScope::from_json(Some(
        &json!([{"plugin":"p","tool":"b"},{"plugin":"p","tool":"a"}]),
    ))
    .unwrap();
    assert_eq!(a, b);
}
