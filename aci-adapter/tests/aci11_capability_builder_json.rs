//! ACI-11 / ACI-13 / E.3: `CapabilitySpec::create(id, description).add_param(…).add_flag(…)`
//! produces aci-core's capability JSON, which capability-model reads back into the same
//! params, flags and requirements; and ACI-14's typed getters on `ACIRequest`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use aci_adapter::bundle::BundleValue;
use aci_adapter::provider::CapabilitySpec;
use aci_adapter::wire::AciRequest;
use capability_model::{AciFlag, AciType};
use serde_json::json;

#[test]
fn aci11_e3_builder_produces_the_capability_json() {
    let spec = CapabilitySpec::create("send_sms", "Sends a text message.")
        .add_param("to", "string", true, "Phone number")
        .add_param("body", "string", false, "Text")
        .add_param("meta", "json", false, "Extra")
        .add_result("id", "string", "Message id")
        .add_flag("FLAG_BACKGROUND")
        .add_flag(CapabilitySpec::FLAG_DANGEROUS_ACTION)
        .add_flag(CapabilitySpec::FLAG_DANGEROUS_ACTION)
        .require_permission("android.permission.SEND_SMS")
        .require_user_confirm(true);
    assert_eq!(
        spec.to_json(),
        json!({
            "id": "send_sms",
            "version": "1.0",
            "description": "Sends a text message.",
            "params": [
                {"name": "to", "type": "string", "required": true, "description": "Phone number"},
                {"name": "body", "type": "string", "required": false, "description": "Text"},
                {"name": "meta", "type": "json", "required": false, "description": "Extra"},
            ],
            "result": [{"name": "id", "type": "string", "description": "Message id"}],
            "flags": ["BACKGROUND_EXECUTABLE", "DANGEROUS_ACTION"],
            "requirePermission": "android.permission.SEND_SMS",
            "requireUserConfirm": true,
        })
    );
    let listing = capability_model::aci::capabilities_from_strings(
        "aci.com.example",
        "svc",
        &[spec.to_json_string()],
    );
    assert!(listing.issues.is_empty(), "{:?}", listing.issues);
    let cap = &listing.capabilities[0];
    let aci = cap.aci.as_ref().unwrap();
    assert_eq!(aci.version, "1.0");
    assert_eq!(aci.params[2].ty, AciType::Json);
    assert!(aci.flags.contains(&AciFlag::BackgroundExecutable));
    assert!(aci.flags.contains(&AciFlag::DangerousAction));
    assert_eq!(
        cap.require_permission.as_deref(),
        Some("android.permission.SEND_SMS")
    );
    assert!(cap.require_user_confirm);
    assert_eq!(cap.input_schema["required"], json!(["to"]));
}

#[test]
fn aci11_minimal_capability_has_empty_lists_and_no_permission() {
    let json = CapabilitySpec::create("ping", "Answers.").to_json();
    assert_eq!(json["params"], json!([]));
    assert_eq!(json["flags"], json!([]));
    assert_eq!(json["requireUserConfirm"], false);
    assert!(json.get("requirePermission").is_none());
}

#[test]
fn aci14_typed_getters_return_none_when_absent_or_of_another_type() {
    let req = AciRequest::new("x")
        .param("s", BundleValue::String(Some("v".into())))
        .param("n", BundleValue::Int(3))
        .param("b", BundleValue::Boolean(true))
        .param("d", BundleValue::Double(2.5))
        .param("bytes", BundleValue::ByteArray(Some(vec![1])))
        .param("null", BundleValue::String(None));
    assert_eq!(req.capability, "x");
    assert_eq!(req.version, "1.0");
    assert_eq!(req.call_id.len(), 36);
    assert_eq!(req.get_string("s"), Some("v"));
    assert_eq!(req.get_string("missing"), None);
    assert_eq!(req.get_string("null"), None);
    assert_eq!(req.get_string("n"), None);
    assert_eq!(req.get_int("n"), Some(3));
    assert_eq!(req.get_bool("b"), Some(true));
    assert_eq!(req.get_double("d"), Some(2.5));
    assert_eq!(
        req.get_double("n"),
        Some(3.0),
        "an int is widened for a double param"
    );
    assert_eq!(req.get_double("s"), None);
    assert_eq!(req.get_bytes("bytes"), Some(&[1u8][..]));
}
