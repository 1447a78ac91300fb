//! ACI-42: JSON arguments → typed Bundle values per the declared params; errors name the field,
//! never the value.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use aci_adapter::bundle::BundleValue;
use aci_adapter::convert::{ConvertError, arguments_to_bundle, bundle_summary};
use capability_model::{AciParam, AciType, CallError};
use serde_json::{Map, Value, json};

fn p(name: &str, ty: AciType, required: bool) -> AciParam {
    AciParam {
        name: name.into(),
        ty,
        required,
        description: String::new(),
    }
}

fn args(v: Value) -> Map<String, Value> {
    v.as_object().unwrap().clone()
}

fn params() -> Vec<AciParam> {
    vec![
        p("s", AciType::String, true),
        p("i", AciType::Int, false),
        p("b", AciType::Boolean, false),
        p("d", AciType::Double, false),
        p("bytes", AciType::Bytes, false),
        p("j", AciType::Json, false),
        p("o", AciType::Other("weird".into()), false),
    ]
}

#[test]
fn aci42_every_type_becomes_its_bundle_type() {
    let b = arguments_to_bundle(
        &params(),
        &args(json!({"s":"x","i":-7,"b":true,"d":1.5,"bytes":"AAEC","j":{"k":[1,2]},"o":"raw"})),
    )
    .unwrap();
    assert_eq!(b.get("s"), Some(&BundleValue::String(Some("x".into()))));
    assert_eq!(b.get("i"), Some(&BundleValue::Int(-7)));
    assert_eq!(b.get("b"), Some(&BundleValue::Boolean(true)));
    assert_eq!(b.get("d"), Some(&BundleValue::Double(1.5)));
    assert_eq!(
        b.get("bytes"),
        Some(&BundleValue::ByteArray(Some(vec![0, 1, 2])))
    );
    // json: a non-string value is serialized to compact JSON text (ACI-42).
    assert_eq!(
        b.get("j"),
        Some(&BundleValue::String(Some(r#"{"k":[1,2]}"#.into())))
    );
    assert_eq!(b.get("o"), Some(&BundleValue::String(Some("raw".into()))));
}

#[test]
fn aci42_integer_double_is_accepted_as_double_and_int_range_is_checked() {
    let b = arguments_to_bundle(&params(), &args(json!({"s":"x","d":3}))).unwrap();
    assert_eq!(b.get("d"), Some(&BundleValue::Double(3.0)));
    let e = arguments_to_bundle(&params(), &args(json!({"s":"x","i":2147483648i64}))).unwrap_err();
    assert_eq!(
        e,
        ConvertError::WrongType {
            field: "i".into(),
            expected: "an integer in the 32-bit range"
        }
    );
    assert!(arguments_to_bundle(&params(), &args(json!({"s":"x","i":1.5}))).is_err());
}

#[test]
fn aci42_missing_required_and_null_name_the_field() {
    let e = arguments_to_bundle(&params(), &args(json!({}))).unwrap_err();
    assert_eq!(e, ConvertError::Missing("s".into()));
    let e = arguments_to_bundle(&params(), &args(json!({"s": null}))).unwrap_err();
    assert_eq!(e, ConvertError::Missing("s".into()));
    // An optional null is simply absent.
    let b = arguments_to_bundle(&params(), &args(json!({"s":"x","i":null}))).unwrap();
    assert!(b.get("i").is_none());
}

#[test]
fn aci42_errors_never_echo_the_value() {
    let secret = "hunter2-secret-value";
    for bad in [
        json!({"s": 5, "i": secret}),
        json!({"s": secret, "i": secret}),
        json!({"s": secret, "bytes": format!("{secret}!!")}),
        json!({"s": secret, "unknown_field": secret}),
        json!({"s": [secret]}),
    ] {
        let e = arguments_to_bundle(&params(), &args(bad)).unwrap_err();
        let text = e.to_string();
        assert!(!text.contains(secret), "{text}");
        let call: CallError = e.into();
        assert!(!call.to_string().contains(secret));
    }
}

#[test]
fn aci42_unknown_argument_is_refused_by_name() {
    let e = arguments_to_bundle(&params(), &args(json!({"s":"x","extra":1}))).unwrap_err();
    assert_eq!(e, ConvertError::Unknown("extra".into()));
    assert!(e.to_string().contains("\"extra\""));
}

#[test]
fn aci32_summary_has_names_and_sizes_only() {
    let b = arguments_to_bundle(
        &params(),
        &args(json!({"s":"héllo😀","bytes":"AAECAw==","b":false})),
    )
    .unwrap();
    let summary = bundle_summary(&b);
    // "héllo😀" = 5 + 2 UTF-16 units.
    assert_eq!(
        summary,
        vec![
            ("s".to_owned(), 7),
            ("b".to_owned(), 0),
            ("bytes".to_owned(), 4)
        ]
    );
}
