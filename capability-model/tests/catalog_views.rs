//! The catalog: naming, duplicates, scope and mode filtering, dispatch resolution, argument
//! validation (CAT-03, CAT-06, CAT-16, CAT-17, CAT-31..CAT-39, CAT-42, CAT-51..CAT-53, CAT-69
//! step 1, CAT-70, SMS-09).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use capability_model::{
    Annotations, Capability, CapabilityId, Catalog, IssueKind, Risk, ScopeEntry, SessionMode,
    Source, ToolScope,
};
use serde_json::json;

fn mcp(plugin: &str, tool: &str) -> Capability {
    Capability::new(CapabilityId::mcp(plugin, "main", tool), "Tool.")
}

fn read_skill() -> Capability {
    let mut c = Capability::new(
        CapabilityId::new(Source::Builtin, "", "", "read_skill"),
        "Read a skill.",
    );
    c.base_risk = Risk::Read;
    c
}

fn session(tool: &str) -> Capability {
    Capability::new(CapabilityId::session("weather", tool), "Session tool.")
}

fn sample() -> Catalog {
    let mut ro_builtin =
        Capability::new(CapabilityId::new(Source::Builtin, "", "", "clock"), "Time.");
    ro_builtin.base_risk = Risk::Read;
    Catalog::build(vec![
        mcp("com.example.notes", "list"),
        mcp("com.example.notes", "add"),
        mcp("org.example.cal", "event_list"),
        Capability::new(
            CapabilityId::new(
                Source::Aci,
                "aci.com.example.net",
                "netservice",
                "http_request",
            ),
            "HTTP.",
        ),
        session("forecast"),
        read_skill(),
        ro_builtin,
    ])
}

fn names<'a>(it: impl Iterator<Item = &'a capability_model::Entry>) -> Vec<&'a str> {
    it.map(|e| e.name.as_str()).collect()
}

fn entry(p: &str, t: &str) -> ScopeEntry {
    ScopeEntry {
        plugin: p.into(),
        tool: t.into(),
    }
}

#[test]
fn names_are_assigned_and_looked_up() {
    let c = sample();
    assert_eq!(c.len(), 7);
    assert!(c.get("mcp__com_example_notes__main__list").is_some());
    assert!(c.get("ses__weather__forecast").is_some());
    assert!(c.get("read_skill").is_some());
    let id = CapabilityId::mcp("org.example.cal", "main", "event_list");
    assert_eq!(
        c.by_id(&id).unwrap().name,
        "mcp__org_example_cal__main__event_list"
    );
}

#[test]
fn cat_16_duplicate_ids_across_sources_are_left_out_with_an_issue() {
    let c = Catalog::build(vec![mcp("p", "t"), mcp("p", "t"), mcp("p", "u")]);
    assert_eq!(names(c.entries().iter()), ["mcp__p__main__u"]);
    assert_eq!(c.issues().len(), 2);
    assert!(
        c.issues()
            .iter()
            .all(|i| i.issue.kind == IssueKind::DuplicateName)
    );
}

#[test]
fn cat_17_invalid_capabilities_are_reported_and_the_rest_builds() {
    let mut bad_schema = mcp("p", "s1");
    bad_schema.input_schema = json!({"type": "array"});
    let mut not_object = mcp("p", "s2");
    not_object.input_schema = json!(true);
    let bad_name = mcp("p", &"n".repeat(129));
    let empty_plugin = mcp("", "t");
    let bad_builtin = Capability::new(
        CapabilityId::new(Source::Builtin, "", "", "no spaces"),
        "X.",
    );
    let c = Catalog::build(vec![
        bad_schema,
        not_object,
        bad_name,
        empty_plugin,
        bad_builtin,
        mcp("p", "fine"),
    ]);
    assert_eq!(names(c.entries().iter()), ["mcp__p__main__fine"]);
    assert_eq!(c.issues().len(), 5);
}

#[test]
fn cat_33_unrestricted_sees_everything_and_empty_scope_sees_only_session_tools() {
    let c = sample();
    let all = names(c.visible(&ToolScope::unrestricted(), SessionMode::Default));
    assert_eq!(all.len(), 7);
    let none = names(c.visible(&ToolScope::restricted([]), SessionMode::Default));
    assert_eq!(none, ["ses__weather__forecast"]); // CAT-39: scope never affects session tools
}

#[test]
fn cat_31_37_scope_limits_listing_and_dispatch_identically() {
    let c = sample();
    let scope = ToolScope::restricted([
        entry("com.example.notes", "list"),
        entry("com.example.notes", "gone"),
    ]);
    let visible = names(c.visible(&scope, SessionMode::Default));
    assert_eq!(
        visible,
        [
            "mcp__com_example_notes__main__list",
            "ses__weather__forecast"
        ]
    );
    assert!(
        c.resolve(
            "mcp__com_example_notes__main__list",
            &scope,
            SessionMode::Default
        )
        .is_ok()
    );
    let out_of_scope = c
        .resolve(
            "mcp__com_example_notes__main__add",
            &scope,
            SessionMode::Default,
        )
        .unwrap_err();
    let nonexistent = c
        .resolve("mcp__nope__main__nope", &scope, SessionMode::Default)
        .unwrap_err();
    // CAT-37: byte-identical text for "out of scope" and "does not exist".
    assert_eq!(out_of_scope.to_string(), nonexistent.to_string());
}

#[test]
fn cat_32_unknown_scope_entries_change_nothing() {
    let c = sample();
    let a = ToolScope::restricted([entry("com.example.notes", "list")]);
    let b = ToolScope::restricted([
        entry("com.example.notes", "list"),
        entry("not.installed", "x"),
    ]);
    assert_eq!(
        names(c.visible(&a, SessionMode::Default)),
        names(c.visible(&b, SessionMode::Default))
    );
}

#[test]
fn aci_45_scope_applies_to_aci_virtual_plugins() {
    let c = sample();
    let scope = ToolScope::restricted([entry("aci.com.example.net", "http_request")]);
    let v = names(c.visible(&scope, SessionMode::Default));
    assert!(v.contains(&"mcp__aci_com_example_net__netservice__http_request"));
}

#[test]
fn cat_38_70_read_skill_only_when_unrestricted_and_not_chat() {
    let c = sample();
    assert!(
        c.resolve(
            "read_skill",
            &ToolScope::unrestricted(),
            SessionMode::Default
        )
        .is_ok()
    );
    assert!(
        c.resolve(
            "read_skill",
            &ToolScope::restricted([]),
            SessionMode::Default
        )
        .is_err()
    );
    assert!(
        c.resolve("read_skill", &ToolScope::unrestricted(), SessionMode::Chat)
            .is_err()
    );
    // read_skill is READ, so READ_ONLY keeps it.
    assert!(
        c.resolve(
            "read_skill",
            &ToolScope::unrestricted(),
            SessionMode::ReadOnly
        )
        .is_ok()
    );
}

#[test]
fn cat_51_52_modes_only_narrow() {
    let c = sample();
    let scope = ToolScope::restricted([entry("com.example.notes", "list")]);
    // READ_ONLY: only effective READ tools. Third-party tools are WRITE, session tools hidden.
    let ro = names(c.visible(&ToolScope::unrestricted(), SessionMode::ReadOnly));
    assert_eq!(ro, ["clock", "read_skill"]);
    assert!(names(c.visible(&scope, SessionMode::ReadOnly)).is_empty());
    // CHAT: nothing.
    assert!(names(c.visible(&ToolScope::unrestricted(), SessionMode::Chat)).is_empty());
    // Back to DEFAULT restores the scope and never widens beyond it.
    assert_eq!(
        names(c.visible(&scope, SessionMode::Default)),
        [
            "mcp__com_example_notes__main__list",
            "ses__weather__forecast"
        ]
    );
}

#[test]
fn cat_53_hidden_by_mode_is_not_in_catalog() {
    let c = sample();
    let e = c.resolve(
        "mcp__com_example_notes__main__add",
        &ToolScope::unrestricted(),
        SessionMode::ReadOnly,
    );
    assert!(e.is_err());
    let e = c.resolve(
        "ses__weather__forecast",
        &ToolScope::unrestricted(),
        SessionMode::ReadOnly,
    );
    assert!(e.is_err());
}

#[test]
fn read_only_hint_does_not_make_a_third_party_tool_visible_in_read_only() {
    let mut t = mcp("p", "ro");
    t.annotations = Annotations {
        read_only_hint: Some(true),
        ..Default::default()
    };
    let c = Catalog::build(vec![t]);
    assert!(names(c.visible(&ToolScope::unrestricted(), SessionMode::ReadOnly)).is_empty());
}

#[test]
fn cat_42_ref_only_for_scope_matches() {
    let c = sample();
    let list = c.get("mcp__com_example_notes__main__list").unwrap();
    let scope = ToolScope::restricted([entry("com.example.notes", "list")]);
    assert_eq!(
        Catalog::scope_ref(list, &scope),
        Some(entry("com.example.notes", "list"))
    );
    assert_eq!(Catalog::scope_ref(list, &ToolScope::unrestricted()), None);
    let ses = c.get("ses__weather__forecast").unwrap();
    assert_eq!(Catalog::scope_ref(ses, &scope), None);
}

#[test]
fn arguments_are_validated_with_a_sentence_naming_the_field() {
    let mut t = mcp("p", "t");
    t.input_schema = json!({"type": "object", "properties": {
        "count": {"type": "integer"},
        "mode": {"enum": ["a", "b"]},
        "nested": {"type": "object", "properties": {"deep": {"type": "string"}}, "required": ["deep"]}
    }, "required": ["count"], "additionalProperties": false});
    let c = Catalog::build(vec![t]);
    let e = c.entries().first().unwrap();
    assert!(e.validate_arguments(&json!({"count": 3})).is_ok());
    let msg = |v| e.validate_arguments(&v).unwrap_err().to_string();
    assert_eq!(msg(json!({})), "missing required argument `count`");
    assert_eq!(
        msg(json!({"count": "SECRET-VALUE"})),
        "argument `count` must be of type integer"
    );
    assert_eq!(
        msg(json!({"count": 1, "mode": "SECRET"})),
        "argument `mode` is not one of the allowed values"
    );
    assert_eq!(
        msg(json!({"count": 1, "zzz": 1})),
        "unexpected argument `zzz`"
    );
    assert_eq!(
        msg(json!({"count": 1, "nested": {}})),
        "missing required argument `nested.deep`"
    );
    assert_eq!(msg(json!([1])), "the arguments must be a JSON object");
    assert!(!msg(json!({"count": "SECRET-VALUE"})).contains("SECRET"));
    // null counts as no arguments.
    let free = Catalog::build(vec![mcp("p", "free")]);
    assert!(
        free.entries()[0]
            .validate_arguments(&serde_json::Value::Null)
            .is_ok()
    );
}

#[test]
fn catalog_names_are_independent_of_input_order() {
    let mut caps = vec![
        mcp("a.b", "t"),
        mcp("a_b", "t"),
        mcp("a_b", "u"),
        session("t"),
        read_skill(),
    ];
    let a: Vec<(String, CapabilityId)> = Catalog::build(caps.clone())
        .entries()
        .iter()
        .map(|e| (e.name.clone(), e.capability.id.clone()))
        .collect();
    caps.reverse();
    let b: Vec<(String, CapabilityId)> = Catalog::build(caps)
        .entries()
        .iter()
        .map(|e| (e.name.clone(), e.capability.id.clone()))
        .collect();
    assert_eq!(a, b);
}

#[test]
fn cat_16_an_aci_and_an_mcp_tool_with_the_same_triple_are_both_left_out_alone() {
    let aci = Capability::new(CapabilityId::new(Source::Aci, "aci.x", "svc", "t"), "A.");
    let m = Capability::new(CapabilityId::new(Source::Mcp, "aci.x", "svc", "t"), "M.");
    let c = Catalog::build(vec![aci, m, mcp("p", "u"), read_skill(), read_skill()]);
    // Both copies of the shared triple and both read_skill copies are reported; the rest builds.
    assert_eq!(names(c.entries().iter()), ["mcp__p__main__u"]);
    assert_eq!(c.issues().len(), 4);
}

#[test]
fn lookups_work_across_forced_suffixes_and_builtins() {
    let c = Catalog::build(vec![
        mcp("a.b", "t"),
        mcp("a_b", "t"),
        read_skill(),
        mcp("z", "z"),
        session("a"),
    ]);
    let all: Vec<&str> = names(c.entries().iter());
    let mut sorted = all.clone();
    sorted.sort();
    assert_eq!(all, sorted);
    for n in all {
        assert_eq!(c.get(n).unwrap().name, n);
    }
}
