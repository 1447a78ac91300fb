//! HTTP-06 and HTTP-14: the controller-side renderer (seed 003 `renderHttpResult`): fixed
//! format, `response_body_gz` precedence, bounded decompression, bad input as an error result.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::io::Write;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use flate2::{Compression, write::GzEncoder};
use http_capability::{
    BodyEncoding, HttpResult, RenderError, render_http_result, render_tool_output,
};
use serde_json::{Map, Value, json};

fn map(v: Value) -> Map<String, Value> {
    v.as_object().unwrap().clone()
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut e = GzEncoder::new(Vec::new(), Compression::default());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

const TRUNCATED_LINE: &str = "\n[truncated: body exceeded 150000 characters]";

#[test]
fn http_14_snapshot_of_the_fixed_format() {
    let m = map(json!({
        "status_code": 200,
        "response_headers": {"content-type": ["text/plain"], "x-a": ["1", "2"]},
        "response_body": "hello\nworld",
        "truncated": false
    }));
    assert_eq!(
        render_http_result(&m).unwrap(),
        "HTTP 200\n{\"content-type\":[\"text/plain\"],\"x-a\":[\"1\",\"2\"]}\n\nhello\nworld"
    );
}

#[test]
fn http_14_truncated_results_end_with_the_truncation_line() {
    let m = map(json!({
        "status_code": 502,
        "response_headers": {},
        "response_body": "partial",
        "truncated": true
    }));
    assert_eq!(
        render_http_result(&m).unwrap(),
        format!("HTTP 502\n{{}}\n\npartial{TRUNCATED_LINE}")
    );
}

#[test]
fn http_14_headers_given_as_a_json_string_are_re_emitted_compactly() {
    // An ACI provider's Bundle carries `json` values as text.
    let m = map(json!({
        "status_code": "301",
        "response_headers": "{ \"location\" : [\"/x\"] }",
        "response_body": ""
    }));
    assert_eq!(
        render_http_result(&m).unwrap(),
        "HTTP 301\n{\"location\":[\"/x\"]}\n\n"
    );
}

#[test]
fn http_06_gz_round_trip_and_precedence_over_response_body() {
    let full = "the whole body ✓ 😀";
    let m = map(json!({
        "status_code": 200,
        "response_headers": {},
        "response_body": "stale preview",
        "truncated": true,
        "response_body_gz": BASE64.encode(gzip(full.as_bytes())),
    }));
    assert_eq!(
        render_http_result(&m).unwrap(),
        format!("HTTP 200\n{{}}\n\n{full}")
    );
}

#[test]
fn http_06_gz_as_a_java_signed_byte_array_is_accepted() {
    let gz = gzip(b"bytes");
    let signed: Vec<i64> = gz.iter().map(|b| i64::from(*b as i8)).collect();
    let m = map(json!({"status_code": 200, "response_body_gz": signed}));
    assert_eq!(render_http_result(&m).unwrap(), "HTTP 200\n{}\n\nbytes");
}

#[test]
fn http_06_empty_body() {
    let m = map(json!({"status_code": 204, "response_body_gz": BASE64.encode(gzip(b""))}));
    assert_eq!(render_http_result(&m).unwrap(), "HTTP 204\n{}\n\n");
}

#[test]
fn http_06_a_10_mb_bomb_stops_at_150_000_units() {
    let bomb = gzip(&vec![b'A'; 10 * 1024 * 1024]);
    assert!(bomb.len() < 64 * 1024);
    let m = map(json!({"status_code": 200, "response_body_gz": BASE64.encode(&bomb)}));
    let text = render_http_result(&m).unwrap();
    let expected = format!("HTTP 200\n{{}}\n\n{}{TRUNCATED_LINE}", "A".repeat(150_000));
    assert_eq!(text, expected);
}

#[test]
fn http_06_a_multibyte_bomb_is_cut_on_a_character_boundary() {
    // 4-byte characters: each is a surrogate pair; 150,000 units = 75,000 characters.
    let bomb = gzip("😀".repeat(2_000_000).as_bytes());
    let m = map(json!({"status_code": 200, "response_body_gz": BASE64.encode(&bomb)}));
    let text = render_http_result(&m).unwrap();
    let body = text
        .strip_prefix("HTTP 200\n{}\n\n")
        .unwrap()
        .strip_suffix(TRUNCATED_LINE)
        .unwrap();
    assert_eq!(body, "😀".repeat(75_000));
    assert!(!body.contains('\u{FFFD}'));
}

#[test]
fn http_06_corrupted_trailer_is_an_error() {
    let mut gz = gzip(b"hello world, hello world");
    let n = gz.len();
    gz[n - 6] ^= 0xff; // inside the CRC32 trailer
    let m = map(json!({"status_code": 200, "response_body_gz": BASE64.encode(&gz)}));
    let err = render_http_result(&m).unwrap_err();
    assert_eq!(err, RenderError::GzUndecodable);
    assert_eq!(err.to_string(), "response_body_gz could not be decoded");
}

#[test]
fn http_06_truncated_gzip_stream_is_an_error() {
    let gz = gzip(b"hello world, hello world");
    let m =
        map(json!({"status_code": 200, "response_body_gz": BASE64.encode(&gz[..gz.len() / 2])}));
    assert_eq!(render_http_result(&m), Err(RenderError::GzUndecodable));
}

#[test]
fn http_06_multi_member_gzip_is_concatenated() {
    let mut gz = gzip(b"hello ");
    gz.extend(gzip(b"world"));
    let m = map(json!({"status_code": 200, "response_body_gz": BASE64.encode(&gz)}));
    assert_eq!(
        render_http_result(&m).unwrap(),
        "HTTP 200\n{}\n\nhello world"
    );
}

#[test]
fn http_06_invalid_base64_or_not_gzip_is_an_error_never_a_crash() {
    for gz in [
        json!("!!! not base64 !!!"),
        json!(BASE64.encode(b"plain text, not gzip")),
        json!(""),
        json!([1, 2, 999]),
        json!({"a": 1}),
    ] {
        let m = map(json!({"status_code": 200, "response_body_gz": gz}));
        assert_eq!(
            render_http_result(&m),
            Err(RenderError::GzUndecodable),
            "{gz}"
        );
    }
}

#[test]
fn http_06_compressed_input_over_1_mib_is_refused() {
    let big = vec![0u8; 1024 * 1024 + 1];
    let m = map(json!({"status_code": 200, "response_body_gz": BASE64.encode(&big)}));
    assert_eq!(render_http_result(&m), Err(RenderError::GzTooLarge));
}

#[test]
fn http_05_an_over_long_response_body_from_a_provider_is_cut_by_the_renderer() {
    let m = map(json!({
        "status_code": 200,
        "response_body": format!("{}😀", "x".repeat(149_999)),
        "truncated": false
    }));
    let text = render_http_result(&m).unwrap();
    assert_eq!(
        text,
        format!("HTTP 200\n{{}}\n\n{}{TRUNCATED_LINE}", "x".repeat(149_999))
    );
}

#[test]
fn a_result_without_status_is_refused() {
    let m = map(json!({"response_body": "x"}));
    assert_eq!(render_http_result(&m), Err(RenderError::InvalidStatus));
    let out = render_tool_output(&m);
    assert!(out.is_error);
    assert_eq!(out.joined_text(), "the result has no valid status_code.");
}

#[test]
fn http_14_typed_render_equals_rendering_the_aci_map() {
    let mut headers = BTreeMap::new();
    headers.insert("content-type".to_owned(), vec!["text/plain".to_owned()]);
    let full = format!("{}tail", "z".repeat(150_000));
    let result = HttpResult {
        status_code: 200,
        response_headers: headers,
        response_body: "z".repeat(150_000),
        truncated: true,
        body_encoding: BodyEncoding::Text,
        response_body_gz: Some(gzip(full.as_bytes())),
    };
    let via_map = render_http_result(&result.to_aci_result()).unwrap();
    assert_eq!(result.render(), via_map);
    let without_gz = HttpResult {
        response_body_gz: None,
        ..result.clone()
    };
    assert_eq!(without_gz.render(), via_map);
}
