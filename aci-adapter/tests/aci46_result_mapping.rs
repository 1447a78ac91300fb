//! ACI-45/ACI-46/ACI-48, E.4, E.7: responses → ToolOutput / CallError; both error tables;
//! `*_gz` decoded bounded; a gzip bomb stays small.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Write;

use aci_adapter::bundle::{Bundle, BundleValue};
use aci_adapter::convert::{
    AciErrorKind, MODEL_RESULT_MAX_U16, ResponseParts, bundle_to_json, response_to_output,
};
use capability_model::CallError;
use serde_json::json;

fn ok(result: &Bundle) -> ResponseParts<'_> {
    ResponseParts {
        success: true,
        result,
        error_code: 0,
        error_message: None,
    }
}

fn err<'a>(empty: &'a Bundle, code: i32, msg: &'a str) -> ResponseParts<'a> {
    ResponseParts {
        success: false,
        result: empty,
        error_code: code,
        error_message: Some(msg),
    }
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

#[test]
fn aci46_success_is_compact_json_plus_structured_content() {
    let mut b = Bundle::new();
    b.put("launched", BundleValue::Boolean(true));
    b.put("url", BundleValue::String(Some("https://x".into())));
    b.put("n", BundleValue::Int(3));
    let mut inner = Bundle::new();
    inner.put("model", BundleValue::String(Some("Pixel".into())));
    b.put("device", BundleValue::Bundle(inner));
    let m = response_to_output(ok(&b));
    let out = m.output.unwrap();
    assert!(!out.is_error);
    let expected = json!({"launched":true,"url":"https://x","n":3,"device":{"model":"Pixel"}});
    assert_eq!(out.structured_content, Some(expected.clone()));
    assert_eq!(out.joined_text(), expected.to_string());
    assert_eq!(m.status, "ok");
}

#[test]
fn aci46_error_text_is_name_and_sanitized_message() {
    let e = Bundle::new();
    let m = response_to_output(err(&e, 400, "url\u{202E} is\n\n required\u{200B}"));
    let out = m.output.unwrap();
    assert!(out.is_error);
    assert_eq!(out.joined_text(), "INVALID_PARAMETER: url is required");
    assert_eq!(
        out.structured_content,
        Some(json!({"errorCode":400,"error":"INVALID_PARAMETER"}))
    );
}

#[test]
fn aci45_permission_denied_is_provider_denied() {
    let e = Bundle::new();
    assert_eq!(
        response_to_output(err(&e, 403, "no")).output,
        Err(CallError::ProviderDenied)
    );
}

#[test]
fn e4_table_a_codes_map_to_their_kinds() {
    let e = Bundle::new();
    let nf = response_to_output(err(&e, 404, "unknown capability: x"));
    assert!(nf.capability_not_found);
    assert_eq!(
        nf.output.unwrap().joined_text(),
        "CAPABILITY_NOT_FOUND: unknown capability: x"
    );
    assert_eq!(
        response_to_output(err(&e, 504, "t")).output,
        Err(CallError::Timeout)
    );
    assert!(matches!(
        response_to_output(err(&e, 503, "busy")).output,
        Err(CallError::Unavailable { .. })
    ));
    for (code, name) in [
        (-1, "REQUEST_NULL"),
        (500, "INTERNAL_ERROR"),
        (505, "BINDER_DIED"),
    ] {
        let out = response_to_output(err(&e, code, "m")).output.unwrap();
        assert!(out.is_error);
        assert_eq!(out.joined_text(), format!("{name}: m"));
    }
}

#[test]
fn e4_legacy_and_unknown_codes_are_kept_verbatim() {
    let e = Bundle::new();
    assert_eq!(AciErrorKind::from_code(3), AciErrorKind::Legacy(3));
    assert_eq!(AciErrorKind::from_code(777), AciErrorKind::Unknown(777));
    for code in [3, 777, -42] {
        let out = response_to_output(err(&e, code, "boom")).output.unwrap();
        assert!(out.is_error);
        assert_eq!(out.structured_content.unwrap()["errorCode"], json!(code));
    }
    // success=false without a code is still a failure.
    let out = response_to_output(ResponseParts {
        success: false,
        result: &e,
        error_code: 0,
        error_message: None,
    })
    .output
    .unwrap();
    assert!(out.is_error);
}

#[test]
fn e7_gz_field_is_decoded_and_replaces_its_base() {
    let mut b = Bundle::new();
    b.put("html", BundleValue::String(Some("cut…".into())));
    b.put(
        "html_gz",
        BundleValue::ByteArray(Some(gzip("<p>full text</p>".as_bytes()))),
    );
    let out = response_to_output(ok(&b)).output.unwrap();
    let s = out.structured_content.unwrap();
    assert_eq!(s["html"], "<p>full text</p>");
    assert!(s.get("html_gz").is_none());
}

#[test]
fn e7_gzip_bomb_is_bounded_and_model_text_capped() {
    // 64 MiB of zeros compress to ~64 KiB; the decoder must stop early.
    let bomb = gzip(&vec![b'a'; 64 * 1024 * 1024]);
    assert!(bomb.len() < 1024 * 1024);
    let mut b = Bundle::new();
    b.put("html_gz", BundleValue::ByteArray(Some(bomb)));
    let out = response_to_output(ok(&b)).output.unwrap();
    let text = out.joined_text();
    assert!(
        text.encode_utf16().count() <= MODEL_RESULT_MAX_U16,
        "{}",
        text.len()
    );
    assert!(text.contains("truncated"));
}

#[test]
fn aci33_http_result_goes_through_render_http_result() {
    let mut b = Bundle::new();
    b.put("status_code", BundleValue::Int(200));
    b.put(
        "response_headers",
        BundleValue::String(Some(r#"{"content-type":"text/plain"}"#.into())),
    );
    b.put("response_body", BundleValue::String(Some("short".into())));
    b.put("truncated", BundleValue::Boolean(true));
    b.put(
        "response_body_gz",
        BundleValue::ByteArray(Some(gzip(b"the whole body"))),
    );
    let out = response_to_output(ok(&b)).output.unwrap();
    let text = out.joined_text();
    assert!(text.contains("HTTP 200"), "{text}");
    assert!(text.contains("the whole body"), "{text}");
    assert!(text.contains("untrusted"), "{text}");
}

#[test]
fn bundle_to_json_covers_every_value_type() {
    let mut b = Bundle::new();
    b.put("null", BundleValue::Null);
    b.put("long", BundleValue::Long(1 << 40));
    b.put("f", BundleValue::Float(0.5));
    b.put("nan", BundleValue::Double(f64::NAN));
    b.put("bytes", BundleValue::ByteArray(Some(vec![255, 0])));
    b.put(
        "arr",
        BundleValue::StringArray(Some(vec![Some("a".into()), None])),
    );
    let j = bundle_to_json(&b);
    assert_eq!(
        serde_json::Value::Object(j),
        json!({"null":null,"long":1099511627776i64,"f":0.5,"nan":null,"bytes":"/wA=","arr":["a",null]})
    );
}
