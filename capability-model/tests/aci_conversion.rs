//! ACI capability JSON ⇄ Capability (Appendix E.3, ACI-11..13, ACI-40..43, ACI-12).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use capability_model::aci::{capabilities_from_array, capabilities_from_strings, to_aci_json};
use capability_model::{AciFlag, AciType, IssueKind, Risk, Source};
use serde_json::{Value, json};

fn one(v: Value) -> capability_model::Listing {
    capabilities_from_strings("aci.com.example", "svc", &[v.to_string()])
}

#[test]
fn param_types_map_to_json_schema() {
    let l = one(json!({
        "id": "all_types", "description": "Every type.",
        "params": [
            {"name": "s", "type": "string", "required": true, "description": "a string"},
            {"name": "i", "type": "int"},
            {"name": "b", "type": "boolean"},
            {"name": "d", "type": "double"},
            {"name": "bytes", "type": "byte[]"},
            {"name": "j", "type": "json"},
            {"name": "untyped"}
        ]
    }));
    assert!(l.issues.is_empty(), "{:?}", l.issues);
    let s = &l.capabilities[0].input_schema;
    assert_eq!(s["type"], "object");
    assert_eq!(s["additionalProperties"], false);
    assert_eq!(s["required"], json!(["s"]));
    let p = &s["properties"];
    assert_eq!(p["s"], json!({"type": "string", "description": "a string"}));
    assert_eq!(p["i"]["type"], "integer");
    assert_eq!(p["i"]["maximum"], 2147483647);
    assert_eq!(p["b"], json!({"type": "boolean"}));
    assert_eq!(p["d"], json!({"type": "number"}));
    assert_eq!(
        p["bytes"],
        json!({"type": "string", "contentEncoding": "base64"})
    );
    assert_eq!(p["j"], json!({}));
    // A missing type means string; a missing `required` means false (E.3).
    assert_eq!(p["untyped"], json!({"type": "string"}));
}

#[test]
fn result_fields_become_the_output_schema() {
    let l = one(json!({"id": "r", "description": "Result.",
        "result": [{"name": "status_code", "type": "int"}, {"name": "gz", "type": "byte[]"}]}));
    let o = l.capabilities[0].output_schema.as_ref().unwrap();
    assert_eq!(o["properties"]["status_code"]["type"], "integer");
    assert_eq!(o["properties"]["gz"]["contentEncoding"], "base64");
}

#[test]
fn aci_42_unknown_param_type_accepts_any_json_and_reports_an_issue() {
    let l = one(
        json!({"id": "x", "description": "X.", "params": [{"name": "p", "type": "Parcelable"}]}),
    );
    assert_eq!(l.capabilities.len(), 1);
    assert_eq!(l.capabilities[0].input_schema["properties"]["p"], json!({}));
    assert_eq!(l.issues.len(), 1);
    assert_eq!(l.issues[0].kind, IssueKind::UnknownParamType);
}

#[test]
fn broken_entries_are_issues_and_the_rest_still_load() {
    let entries = vec![
        json!({"id": "good", "description": "Good."}).to_string(),
        "{}".to_string(),
        "not json".to_string(),
        json!({"id": "bad name!", "description": "Bad."}).to_string(),
        json!({"id": "v", "description": "1.0"}).to_string(),
        json!({"id": "empty_desc", "description": ""}).to_string(),
        json!({"id": "p", "description": "P.", "params": "nope"}).to_string(),
        json!({"id": "also_good", "description": "Also good."}).to_string(),
    ];
    let l = capabilities_from_strings("aci.p", "s", &entries);
    let ids: Vec<&str> = l.capabilities.iter().map(|c| c.id.name.as_str()).collect();
    assert_eq!(ids, ["good", "also_good"]);
    let kinds: Vec<(Option<usize>, IssueKind)> =
        l.issues.iter().map(|i| (i.index, i.kind.clone())).collect();
    assert_eq!(
        kinds,
        [
            (Some(1), IssueKind::MalformedEntry),
            (Some(2), IssueKind::MalformedEntry),
            (Some(3), IssueKind::InvalidName),
            (Some(4), IssueKind::BadDescription),
            (Some(5), IssueKind::BadDescription),
            (Some(6), IssueKind::MalformedEntry),
        ]
    );
}

#[test]
fn aci_12_version_number_descriptions_are_linted() {
    for d in ["1.0", "v1", "v2.0.1", "  3  "] {
        let l = one(json!({"id": "x", "description": d}));
        assert!(l.capabilities.is_empty(), "{d}");
        assert_eq!(l.issues[0].kind, IssueKind::BadDescription);
    }
    let l = one(json!({"id": "x", "description": "v1 of the weather API"}));
    assert_eq!(l.capabilities.len(), 1);
}

#[test]
fn aci_41_duplicate_ids_in_one_provider_are_all_left_out() {
    let l = capabilities_from_array(
        "aci.p",
        "s",
        &json!([
            {"id": "dup", "description": "One."},
            {"id": "dup", "description": "Two."},
            {"id": "ok", "description": "Fine."}
        ]),
    );
    assert_eq!(l.capabilities.len(), 1);
    assert_eq!(l.issues.len(), 2);
    assert!(l.issues.iter().all(|i| i.kind == IssueKind::DuplicateName));
}

#[test]
fn aci_43_risk_flags_and_high_risk_ids() {
    let l = capabilities_from_array(
        "aci.p",
        "s",
        &json!([
            {"id": "plain", "description": "Plain.", "flags": ["BACKGROUND_EXECUTABLE"]},
            {"id": "danger", "description": "Danger.", "flags": ["DANGEROUS_ACTION"]},
            {"id": "http_request", "description": "HTTP."},
            {"id": "browser_script", "description": "Script."}
        ]),
    );
    let risk = |id: &str| {
        l.capabilities
            .iter()
            .find(|c| c.id.name == id)
            .unwrap()
            .risk()
    };
    assert_eq!(risk("plain"), Risk::Write);
    assert_eq!(risk("danger"), Risk::High);
    assert_eq!(risk("http_request"), Risk::High);
    assert_eq!(risk("browser_script"), Risk::High);
    let http = l
        .capabilities
        .iter()
        .find(|c| c.id.name == "http_request")
        .unwrap();
    assert_eq!(http.effective_annotations().open_world_hint, Some(true));
    // ACI capabilities carry no MCP annotations of their own.
    assert!(http.annotations.is_empty());
    let plain = l
        .capabilities
        .iter()
        .find(|c| c.id.name == "plain")
        .unwrap();
    assert_eq!(
        plain.aci.as_ref().unwrap().flags,
        [AciFlag::BackgroundExecutable]
    );
    assert_eq!(plain.id.source, Source::Aci);
}

#[test]
fn seed_flag_spelling_and_permission_fields() {
    let l = one(
        json!({"id": "x", "description": "X.", "flags": ["FLAG_BACKGROUND", "CUSTOM"],
        "requirePermission": "com.p.PERM", "requireUserConfirm": true}),
    );
    let c = &l.capabilities[0];
    let aci = c.aci.as_ref().unwrap();
    assert_eq!(
        aci.flags,
        [
            AciFlag::BackgroundExecutable,
            AciFlag::Other("CUSTOM".into())
        ]
    );
    assert_eq!(aci.version, "1.0");
    assert_eq!(c.require_permission.as_deref(), Some("com.p.PERM"));
    assert!(c.require_user_confirm);
}

#[test]
fn capability_json_round_trips() {
    let original = json!({
        "id": "kv_put", "version": "1.0", "description": "Store a value.",
        "params": [
            {"name": "key", "type": "string", "required": true, "description": "Key."},
            {"name": "value", "type": "json", "required": true, "description": "Value."},
            {"name": "ttl", "type": "int", "required": false, "description": "TTL."},
            {"name": "blob", "type": "byte[]", "required": false, "description": "Blob."},
            {"name": "ratio", "type": "double", "required": false, "description": "Ratio."},
            {"name": "force", "type": "boolean", "required": false, "description": "Force."}
        ],
        "result": [{"name": "ok", "type": "boolean", "description": "Stored."}],
        "flags": ["NO_UI_REQUIRED", "DANGEROUS_ACTION"],
        "requirePermission": "p.PERM",
        "requireUserConfirm": true
    });
    let l = one(original.clone());
    let back = to_aci_json(&l.capabilities[0]);
    assert_eq!(back, original);
    let again = one(back);
    assert_eq!(again.capabilities[0], l.capabilities[0]);
}

#[test]
fn an_mcp_capability_exports_params_from_its_schema() {
    use capability_model::{Capability, CapabilityId};
    let mut c = Capability::new(CapabilityId::mcp("p", "s", "t"), "T.");
    c.input_schema = json!({"type": "object", "properties": {
        "n": {"type": "integer"}, "x": {"type": "number"}, "s": {"type": "string", "description": "S"},
        "b64": {"type": "string", "contentEncoding": "base64"}, "o": {"type": "object"}
    }, "required": ["s"]});
    let v = to_aci_json(&c);
    let params = v["params"].as_array().unwrap();
    let ty = |n: &str| params.iter().find(|p| p["name"] == n).unwrap()["type"].clone();
    assert_eq!(ty("n"), "int");
    assert_eq!(ty("x"), "double");
    assert_eq!(ty("s"), "string");
    assert_eq!(ty("b64"), "byte[]");
    assert_eq!(ty("o"), "json");
    assert_eq!(AciType::parse("byte[]"), AciType::Bytes);
}

#[test]
fn deep_nesting_is_a_clear_issue_not_a_crash() {
    let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
    let entries = vec![format!(
        r#"{{"id":"x","description":"X.","params":{deep}}}"#
    )];
    let l = capabilities_from_strings("aci.p", "s", &entries);
    assert!(l.capabilities.is_empty());
    assert_eq!(l.issues[0].kind, IssueKind::MalformedEntry);
}

#[test]
fn a_large_capability_list_loads() {
    // 2 MB of capability JSON (the ACI adapter's bad-input case).
    let entries: Vec<String> = (0..8000)
        .map(|i| {
            json!({"id": format!("cap_{i}"), "description": "x".repeat(200),
                   "params": [{"name": "a", "type": "string"}]})
            .to_string()
        })
        .collect();
    assert!(entries.iter().map(String::len).sum::<usize>() > 2_000_000);
    let l = capabilities_from_strings("aci.p", "s", &entries);
    assert_eq!(l.capabilities.len(), 8000);
}
