//! The catalog lists the built-in and the ACI adapter can export it: `http_request` survives
//! the capability-model catalog and the ACI capability JSON (Appendix E.3) round trip, staying
//! HIGH / open-world on the other side (HTTP-01, HTTP-02, HTTP-04, HTTP-09, ACI-43).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use capability_model::{Catalog, Risk, Source, aci};
use http_capability::{capability_id, http_request_capability};
use serde_json::json;

#[test]
fn the_catalog_lists_and_validates_http_request() {
    let catalog = Catalog::build(vec![http_request_capability()]);
    assert!(catalog.issues().is_empty(), "{:?}", catalog.issues());
    let entry = catalog.by_id(&capability_id()).unwrap();
    assert_eq!(entry.capability.risk(), Risk::High);
    assert!(entry.name.contains("http_request"), "{}", entry.name);
    // The catalog's schema check agrees with HTTP-02: url required, no extra params.
    assert!(
        entry
            .validate_arguments(&json!({"url": "https://example.com/", "method": "GET"}))
            .is_ok()
    );
    assert!(entry.validate_arguments(&json!({"method": "GET"})).is_err());
    assert!(
        entry
            .validate_arguments(&json!({"url": "https://x/", "extra": 1}))
            .is_err()
    );
}

#[test]
fn aci_capability_json_is_the_aci_contract() {
    let v = aci::to_aci_json(&http_request_capability());
    assert_eq!(v["id"], "http_request");
    assert_eq!(v["version"], "1.0");
    let params: Vec<_> = v["params"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["name"].clone(), p["type"].clone(), p["required"].clone()))
        .collect();
    assert_eq!(
        params,
        vec![
            (json!("url"), json!("string"), json!(true)),
            (json!("method"), json!("string"), json!(false)),
            (json!("headers"), json!("string"), json!(false)),
            (json!("body"), json!("string"), json!(false)),
        ]
    );
    let result: Vec<_> = v["result"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["name"].clone(), r["type"].clone()))
        .collect();
    assert_eq!(
        result[..5],
        [
            (json!("status_code"), json!("int")),
            (json!("response_headers"), json!("json")),
            (json!("response_body"), json!("string")),
            (json!("truncated"), json!("boolean")),
            (json!("response_body_gz"), json!("byte[]")),
        ]
    );
    assert_eq!(v["requireUserConfirm"], true);
    assert!(
        v["flags"]
            .as_array()
            .unwrap()
            .contains(&json!("DANGEROUS_ACTION"))
    );
}

#[test]
fn an_aci_peer_importing_the_export_sees_high_risk_open_world() {
    let exported = aci::to_aci_json(&http_request_capability()).to_string();
    let listing = aci::capabilities_from_strings("aci.org.capbridge", "capbridge", &[exported]);
    assert!(listing.issues.is_empty(), "{:?}", listing.issues);
    let imported = &listing.capabilities[0];
    assert_eq!(imported.id.source, Source::Aci);
    assert_eq!(imported.id.name, "http_request");
    assert_eq!(imported.risk(), Risk::High);
    assert_eq!(imported.effective_annotations().open_world_hint, Some(true));
    assert_eq!(imported.input_schema["required"], json!(["url"]));
}
