//! HTTP-01, HTTP-02, HTTP-04, HTTP-09: the catalog record and its ACI contract.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use capability_model::{
    AciFlag, AciType, Capability, CapabilityId, CapabilitySource, Risk, Source,
};
use http_capability::{HttpCapabilitySource, HttpConfig, HttpExecutor, http_request_capability};

#[test]
fn http_01_id_is_http_request_from_builtin_source() {
    let c = http_request_capability();
    assert_eq!(c.id.name, "http_request");
    assert_eq!(c.id.source, Source::Builtin);
    assert_eq!(c.aci.as_ref().unwrap().version, "1.0");
    assert!(!c.description.trim().is_empty());
}

#[test]
fn http_02_params_url_required_method_headers_body_strings() {
    let c = http_request_capability();
    let aci = c.aci.unwrap();
    let params: Vec<(&str, &AciType, bool)> = aci
        .params
        .iter()
        .map(|p| (p.name.as_str(), &p.ty, p.required))
        .collect();
    assert_eq!(
        params,
        vec![
            ("url", &AciType::String, true),
            ("method", &AciType::String, false),
            ("headers", &AciType::String, false),
            ("body", &AciType::String, false),
        ]
    );
    assert_eq!(c.input_schema["required"], serde_json::json!(["url"]));
    assert_eq!(c.input_schema["type"], "object");
    for p in ["url", "method", "headers", "body"] {
        assert_eq!(c.input_schema["properties"][p]["type"], "string", "{p}");
    }
}

#[test]
fn http_04_result_fields_match_the_aci_contract() {
    let aci = http_request_capability().aci.unwrap();
    let result: Vec<(&str, &AciType)> = aci
        .result
        .iter()
        .map(|r| (r.name.as_str(), &r.ty))
        .collect();
    assert_eq!(
        &result[..5],
        &[
            ("status_code", &AciType::Int),
            ("response_headers", &AciType::Json),
            ("response_body", &AciType::String),
            ("truncated", &AciType::Boolean),
            ("response_body_gz", &AciType::Bytes),
        ]
    );
}

#[test]
fn http_09_risk_is_high_with_open_world_hint() {
    let c = http_request_capability();
    assert_eq!(c.risk(), Risk::High);
    assert_eq!(c.effective_annotations().open_world_hint, Some(true));
    assert!(c.aci.unwrap().flags.contains(&AciFlag::DangerousAction));
}

/// The capability-model rule (ACI-43) alone raises a bare `http_request` from an ACI provider
/// or a built-in, with no annotations or flags, to HIGH + openWorldHint; not from MCP.
#[test]
fn http_09_capability_model_raises_bare_http_request_to_high() {
    for source in [Source::Aci, Source::Builtin] {
        let bare = Capability::new(CapabilityId::new(source, "p", "s", "http_request"), "d");
        assert_eq!(bare.risk(), Risk::High, "{source}");
        assert_eq!(bare.effective_annotations().open_world_hint, Some(true));
    }
    let mcp = Capability::new(CapabilityId::mcp("p", "s", "http_request"), "d");
    assert_eq!(mcp.risk(), Risk::Write);
}

#[tokio::test]
async fn builtin_source_lists_exactly_http_request() {
    let src = HttpCapabilitySource::new(HttpExecutor::new(HttpConfig::default()).unwrap());
    assert_eq!(src.source(), Source::Builtin);
    let listing = src.list().await.unwrap();
    assert_eq!(listing.capabilities, vec![http_request_capability()]);
    assert!(listing.issues.is_empty());
}
