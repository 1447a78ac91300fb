//! Risk levels (CAT-60..CAT-65, SMS-09, ACI-43).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use capability_model::{Annotations, Capability, CapabilityId, Risk, Source};
use proptest::prelude::*;

fn cap(source: Source, name: &str, a: Annotations) -> Capability {
    let mut c = Capability::new(CapabilityId::new(source, "p", "s", name), "T.");
    c.annotations = a;
    c
}

#[test]
fn cat_60_levels_are_ordered() {
    assert!(Risk::Read < Risk::Write && Risk::Write < Risk::High);
}

#[test]
fn cat_61_third_party_defaults_to_write_even_when_read_only() {
    let ro = Annotations {
        read_only_hint: Some(true),
        ..Default::default()
    };
    assert_eq!(cap(Source::Mcp, "t", ro).risk(), Risk::Write);
    assert_eq!(cap(Source::Aci, "t", ro).risk(), Risk::Write);
    assert_eq!(
        cap(Source::Mcp, "t", Annotations::default()).risk(),
        Risk::Write
    );
}

#[test]
fn cat_62_destructive_raises_to_high() {
    let d = Annotations {
        destructive_hint: Some(true),
        ..Default::default()
    };
    assert_eq!(cap(Source::Mcp, "t", d).risk(), Risk::High);
    let not = Annotations {
        destructive_hint: Some(false),
        ..Default::default()
    };
    assert_eq!(cap(Source::Mcp, "t", not).risk(), Risk::Write);
}

#[test]
fn cat_64_session_tools_are_at_least_write() {
    let mut c = cap(
        Source::SessionMcp,
        "t",
        Annotations {
            read_only_hint: Some(true),
            ..Default::default()
        },
    );
    c.base_risk = Risk::Read; // even if someone lowers the base, session tools stay ≥ WRITE
    assert_eq!(c.risk(), Risk::Write);
    let d = cap(
        Source::SessionMcp,
        "t",
        Annotations {
            destructive_hint: Some(true),
            ..Default::default()
        },
    );
    assert_eq!(d.risk(), Risk::High);
}

#[test]
fn cat_65_builtins_may_be_read() {
    let mut c = cap(Source::Builtin, "read_skill", Annotations::default());
    c.base_risk = Risk::Read;
    assert_eq!(c.risk(), Risk::Read);
}

#[test]
fn http_request_is_high_and_open_world() {
    for source in [Source::Aci, Source::Builtin] {
        let c = cap(source, "http_request", Annotations::default());
        assert_eq!(c.risk(), Risk::High);
        assert_eq!(c.effective_annotations().open_world_hint, Some(true));
    }
    // An MCP plugin tool that happens to be called http_request follows its own annotations.
    assert_eq!(
        cap(Source::Mcp, "http_request", Annotations::default()).risk(),
        Risk::Write
    );
}

fn hint() -> impl Strategy<Value = Option<bool>> {
    prop_oneof![Just(None), Just(Some(false)), Just(Some(true))]
}

proptest! {
    /// CAT-63: for any annotation combination, effective risk ≥ default risk.
    #[test]
    fn cat_63_annotations_only_raise(r in hint(), d in hint(), i in hint(), o in hint(),
                                     base in prop_oneof![Just(Risk::Read), Just(Risk::Write), Just(Risk::High)],
                                     source in prop_oneof![Just(Source::Mcp), Just(Source::Aci), Just(Source::SessionMcp), Just(Source::Builtin)]) {
        let mut c = cap(source, "t", Annotations { read_only_hint: r, destructive_hint: d, idempotent_hint: i, open_world_hint: o });
        c.base_risk = base;
        prop_assert!(c.risk() >= base);
        if d == Some(true) { prop_assert_eq!(c.risk(), Risk::High); }
    }
}
