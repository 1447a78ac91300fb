//! Naming golden vectors written from the rules (CAT-10..CAT-13, CAT-19, SMS-10, Appendix A).
//! Hashes were computed independently (Python hashlib) over the raw `plugin\0server\0tool`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use capability_model::naming::{
    NameKey, aci_virtual_plugin, aci_virtual_server, assign, name_of, sanitize, session_name_of,
};

#[test]
fn cat_10_layout_is_mcp_plugin_server_tool() {
    assert_eq!(
        name_of("calendar", "calendar", "event_create"),
        "mcp__calendar__calendar__event_create"
    );
    assert_eq!(
        name_of("com.example.notes", "main", "list"),
        "mcp__com_example_notes__main__list"
    );
}

#[test]
fn cat_11_every_utf16_unit_outside_the_set_becomes_one_underscore() {
    assert_eq!(sanitize("a.b c/d"), "a_b_c_d");
    assert_eq!(sanitize("keep-_Az09"), "keep-_Az09");
    // Supplementary-plane character: two UTF-16 units → two underscores.
    assert_eq!(name_of("p", "s", "😀x"), "mcp__p__s____x");
    // CJK: one unit each.
    assert_eq!(name_of("日历", "cal", "新建"), "mcp______cal____");
    // Empty segment → `_`.
    assert_eq!(sanitize(""), "_");
    assert_eq!(name_of("", "s", "t"), "mcp_____s__t");
    // Nothing is deleted: word boundaries survive.
    assert_eq!(sanitize("é"), "_");
    assert_eq!(sanitize("a\u{0}b"), "a_b");
}

#[test]
fn cat_12_a_64_character_name_is_left_alone() {
    let tool = "t".repeat(34);
    let n = name_of("com.example.notes", "main", &tool);
    assert_eq!(n.len(), 64);
    assert_eq!(n, format!("mcp__com_example_notes__main__{tool}"));
}

#[test]
fn cat_12_13_a_65_character_name_is_cut_to_57_plus_hash6() {
    let tool = "t".repeat(35);
    let n = name_of("com.example.notes", "main", &tool);
    assert_eq!(n.len(), 64);
    let base = format!("mcp__com_example_notes__main__{tool}");
    assert_eq!(n, format!("{}_d9c996", &base[..57]));
}

#[test]
fn cat_13_hash_is_over_raw_names_not_sanitized_ones() {
    // Same sanitized base, different raw names → different suffixes.
    let long = "x".repeat(60);
    let a = name_of("a.b", "s", &long);
    let b = name_of("a_b", "s", &long);
    assert_eq!(&a[..57], &b[..57]);
    assert_ne!(a, b);
}

#[test]
fn cat_14_dot_vs_underscore_collision_suffixes_both() {
    let keys = [
        NameKey::plugin("a.b", "s", "t"),
        NameKey::plugin("a_b", "s", "t"),
    ];
    let names = assign(&keys).unwrap();
    assert_eq!(names, ["mcp__a_b__s__t_0b737e", "mcp__a_b__s__t_74a108"]);
}

#[test]
fn cat_14_candidate_already_taken_escalates_to_eight_digits() {
    // `mcp__a_b__s__t_0b737e` is the plain name of a third tool, so the first colliding tool
    // cannot take it and moves on to 8 digits; the other keeps its 6-digit candidate.
    let keys = [
        NameKey::plugin("a.b", "s", "t"),
        NameKey::plugin("a_b", "s", "t"),
        NameKey::plugin("a_b", "s", "t_0b737e"),
    ];
    let names = assign(&keys).unwrap();
    assert_eq!(
        names,
        [
            "mcp__a_b__s__t_0b737e9b",
            "mcp__a_b__s__t_74a108",
            "mcp__a_b__s__t_0b737e"
        ]
    );
}

#[test]
fn cat_14_unique_names_keep_no_suffix_beside_a_collision() {
    let keys = [
        NameKey::plugin("a.b", "s", "t"),
        NameKey::plugin("a_b", "s", "t"),
        NameKey::plugin("a.b", "s", "u"),
    ];
    let names = assign(&keys).unwrap();
    assert_eq!(names[2], "mcp__a_b__s__u");
}

#[test]
fn cat_14_collision_of_truncated_names_uses_forced_suffix_of_the_full_base() {
    let long = "x".repeat(37);
    let keys = [
        NameKey::plugin("com.example.notes", "main", &long),
        NameKey::plugin("com_example_notes", "main", &long),
    ];
    let names = assign(&keys).unwrap();
    for n in &names {
        assert_eq!(n.len(), 64);
    }
    assert_ne!(names[0], names[1]);
    // The first of the two has the hash 87dea2… (computed independently).
    assert!(names[0].ends_with("_87dea2"), "{}", names[0]);
}

#[test]
fn cat_16_duplicate_triple_is_rejected() {
    let keys = [
        NameKey::plugin("p", "s", "t"),
        NameKey::plugin("p", "s", "t"),
    ];
    assert!(assign(&keys).is_err());
}

#[test]
fn sms_10_session_names_hash_server_and_tool_only() {
    assert_eq!(session_name_of("weather", "get"), "ses__weather__get");
    let tool = format!("get_forecast_{}", "x".repeat(60));
    let n = session_name_of("weather", &tool);
    assert_eq!(n.len(), 64);
    assert!(n.starts_with("ses__weather__get_forecast_"));
    assert!(n.ends_with("_01baf5"), "{n}");
    assert!(!n.starts_with("mcp__"));
}

#[test]
fn session_and_plugin_names_never_collide() {
    let keys = [NameKey::session("s", "t"), NameKey::plugin("p", "s", "t")];
    let names = assign(&keys).unwrap();
    assert_eq!(names, ["ses__s__t", "mcp__p__s__t"]);
}

#[test]
fn aci_40_virtual_plugin_and_server_names() {
    assert_eq!(
        aci_virtual_plugin("com.Example.Net_Kit"),
        "aci.com.example.net-kit"
    );
    assert_eq!(aci_virtual_plugin("--Com..x__y--"), "aci.com.x-y");
    assert_eq!(
        aci_virtual_server("com.example.netkit.NetKitService"),
        "netkitservice"
    );
    let long = format!("com.{}", "a".repeat(70));
    let p = aci_virtual_plugin(&long);
    assert_eq!(p.len(), 64);
    assert_eq!(p, format!("{}-6f8f2e", &format!("aci.{long}")[..57]));
}
