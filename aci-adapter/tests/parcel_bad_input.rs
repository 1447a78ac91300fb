//! SPEC E.2 / E.2a bad input: a Parcel from a peer is read defensively. Truncation at every
//! offset, an unsupported value tag, a wrong magic, negative and huge lengths, a misaligned
//! Bundle length, broken UTF-16 and runaway nesting are typed errors — never a panic, never a
//! huge allocation, never a misread of the following fields. A 2 MB Bundle round-trips.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use aci_adapter::bundle::{Bundle, BundleValue};
use aci_adapter::parcel::{MAX_BUNDLE_DEPTH, ParcelError, ParcelReader, ParcelWriter, tag};
use aci_adapter::wire::{AciRequest, AciResponse};

fn rich_request() -> AciRequest {
    let mut inner = Bundle::new();
    inner.put("n", BundleValue::Long(1 << 40));
    inner.put(
        "names",
        BundleValue::StringArray(Some(vec![Some("a".into()), None])),
    );
    AciRequest::new("cap.x")
        .param("s", BundleValue::String(Some("héllo 😀".into())))
        .param("i", BundleValue::Int(-7))
        .param("b", BundleValue::Boolean(true))
        .param("d", BundleValue::Double(-0.25))
        .param("f", BundleValue::Float(3.5))
        .param("bytes", BundleValue::ByteArray(Some(vec![9, 8, 7, 6, 5])))
        .param("null", BundleValue::Null)
        .param("inner", BundleValue::Bundle(inner))
}

#[test]
fn e2a_truncated_at_every_offset_is_an_error_not_a_panic() {
    let mut req = rich_request();
    req.caller_pkg = Some("org.agentos.app".into());
    let bytes = req.encode();
    assert_eq!(AciRequest::decode(&bytes).unwrap(), req);
    for cut in 0..bytes.len() {
        assert!(
            AciRequest::decode(&bytes[..cut]).is_err(),
            "a request cut at {cut} of {} must not decode",
            bytes.len()
        );
    }
    let resp = AciResponse::success()
        .put_string("text", "ok")
        .put_bytes("gz", vec![1; 33])
        .with_call_id("id-1");
    let bytes = resp.encode();
    for cut in 0..bytes.len() {
        assert!(AciResponse::decode(&bytes[..cut]).is_err(), "cut at {cut}");
    }
}

/// `params` whose second entry has `tag`, with an Android-13 length prefix when the tag has one.
fn request_with_tag(t: i32) -> Vec<u8> {
    let mut body = ParcelWriter::new();
    body.write_i32(2); // 2 entries
    body.write_string(Some("ok"));
    body.write_value(&BundleValue::Int(1));
    body.write_string(Some("weird"));
    body.write_i32(t);
    if tag::is_length_prefixed(t) {
        body.write_i32(8); // byte length of the payload
    }
    body.write_i32(0x1234_5678);
    body.write_i32(0x1234_5678);
    let body = body.into_bytes();

    let mut w = ParcelWriter::new();
    w.write_string(Some("cap"));
    w.write_string(Some("1.0"));
    w.write_i32(body.len() as i32);
    w.write_i32(0x4C44_4E42);
    let mut bytes = w.into_bytes();
    bytes.extend_from_slice(&body);
    let mut tail = ParcelWriter::new();
    tail.write_string(Some("call-7"));
    tail.write_string(Some("com.spoof"));
    bytes.extend_from_slice(tail.as_bytes());
    bytes
}

#[test]
fn e2a_unsupported_tag_is_a_typed_error_and_later_fields_still_read() {
    for t in [
        tag::MAP,
        tag::PARCELABLE,
        tag::SERIALIZABLE,
        tag::LIST,
        tag::CHARSEQUENCE,
        tag::INTARRAY,
        tag::IBINDER,
        99,
        -7,
    ] {
        let bytes = request_with_tag(t);
        match AciRequest::decode(&bytes) {
            Err(ParcelError::UnsupportedTag { tag, key_units }) => {
                assert_eq!(tag, t);
                assert_eq!(key_units, 5, "the key's length is reported, not the key");
            }
            other => panic!("tag {t}: {other:?}"),
        }
        // Lenient read: the Bundle's length frames it, so callId and callerPkg are intact.
        let mut r = ParcelReader::new(&bytes);
        let req = AciRequest::read(&mut r).unwrap();
        r.finish().unwrap();
        assert!(matches!(
            req.params_error(),
            Some(ParcelError::UnsupportedTag { .. })
        ));
        assert!(req.params.is_empty(), "no partial Bundle is handed on");
        assert_eq!(req.call_id, "call-7");
        assert_eq!(req.caller_pkg.as_deref(), Some("com.spoof"));
    }
}

#[test]
fn e2a_wrong_magic_is_refused() {
    let mut w = ParcelWriter::new();
    w.write_i32(4);
    w.write_i32(0x1122_3344);
    w.write_i32(0);
    assert_eq!(
        ParcelReader::new(w.as_bytes()).read_bundle(),
        Err(ParcelError::BadMagic(0x1122_3344))
    );
}

#[test]
fn e2a_negative_huge_and_misaligned_lengths_are_refused() {
    let one = |words: &[i32]| {
        let mut w = ParcelWriter::new();
        for x in words {
            w.write_i32(*x);
        }
        w.into_bytes()
    };
    // Strings.
    assert_eq!(
        ParcelReader::new(&one(&[-2])).read_string(),
        Err(ParcelError::NegativeLength(-2))
    );
    assert!(matches!(
        ParcelReader::new(&one(&[i32::MAX, 0])).read_string(),
        Err(ParcelError::LengthTooLarge { .. })
    ));
    // Byte arrays.
    assert!(matches!(
        ParcelReader::new(&one(&[i32::MAX])).read_byte_array(),
        Err(ParcelError::LengthTooLarge { .. })
    ));
    assert_eq!(
        ParcelReader::new(&one(&[i32::MIN])).read_byte_array(),
        Err(ParcelError::NegativeLength(i32::MIN))
    );
    // String arrays: a count that cannot fit.
    assert!(matches!(
        ParcelReader::new(&one(&[1 << 30, 0])).read_string_array(),
        Err(ParcelError::LengthTooLarge { .. })
    ));
    // Bundles.
    assert_eq!(
        ParcelReader::new(&one(&[-5])).read_bundle(),
        Err(ParcelError::NegativeLength(-5))
    );
    assert_eq!(
        ParcelReader::new(&one(&[6, 0x4C44_4E42, 0, 0])).read_bundle(),
        Err(ParcelError::MisalignedBundle(6))
    );
    assert!(matches!(
        ParcelReader::new(&one(&[i32::MAX - 3, 0x4C44_4E42])).read_bundle(),
        Err(ParcelError::LengthTooLarge { .. })
    ));
    // An entry count beyond what the declared length holds.
    assert_eq!(
        ParcelReader::new(&one(&[8, 0x4C44_4E42, 1_000_000, 0])).read_bundle(),
        Err(ParcelError::BundleOverrun)
    );
    assert_eq!(
        ParcelReader::new(&one(&[4, 0x4C44_4E42, -1])).read_bundle(),
        Err(ParcelError::NegativeLength(-1))
    );
    // An entry running past the Bundle's declared length (but not past the parcel).
    let mut inner = Bundle::new();
    inner.put("k", BundleValue::Int(1));
    let mut w = ParcelWriter::new();
    w.write_bundle(&inner);
    let mut bytes = w.into_bytes();
    bytes[0] = 12; // claims 12 bytes; the entry needs 16
    bytes.extend_from_slice(&[0; 16]);
    assert_eq!(
        ParcelReader::new(&bytes).read_bundle(),
        Err(ParcelError::BundleOverrun)
    );
}

#[test]
fn e2a_broken_utf16_and_missing_terminator_are_refused() {
    // A lone high surrogate.
    let bytes = [1, 0, 0, 0, 0x3D, 0xD8, 0, 0];
    assert_eq!(
        ParcelReader::new(&bytes).read_string(),
        Err(ParcelError::BadUtf16)
    );
    // "ab" without its NUL.
    let bytes = [2, 0, 0, 0, b'a', 0, b'b', 0, b'c', 0, 0, 0];
    assert_eq!(
        ParcelReader::new(&bytes).read_string(),
        Err(ParcelError::MissingTerminator)
    );
}

#[test]
fn e2a_runaway_nesting_stops_at_the_depth_limit() {
    let mut b = Bundle::new();
    b.put("leaf", BundleValue::Int(1));
    for _ in 0..MAX_BUNDLE_DEPTH + 2 {
        let mut outer = Bundle::new();
        outer.put("n", BundleValue::Bundle(b));
        b = outer;
    }
    let mut w = ParcelWriter::new();
    w.write_bundle(&b);
    assert_eq!(
        ParcelReader::new(w.as_bytes()).read_bundle(),
        Err(ParcelError::TooDeep)
    );
}

#[test]
fn e2a_two_megabyte_bundle_round_trips() {
    let mut b = Bundle::new();
    b.put(
        "blob",
        BundleValue::ByteArray(Some(
            (0..2 * 1024 * 1024).map(|i| (i % 251) as u8).collect(),
        )),
    );
    for i in 0..2000 {
        b.put(
            format!("key{i}"),
            BundleValue::String(Some("v".repeat(i % 50))),
        );
    }
    let mut req = AciRequest::new("big");
    req.params = b;
    let bytes = req.encode();
    assert!(bytes.len() > 2 * 1024 * 1024);
    assert_eq!(AciRequest::decode(&bytes).unwrap(), req);
    // And through the rsbinder glue.
    let via: AciRequest = rsbinder::from_bytes(&rsbinder::to_bytes(&req).unwrap()).unwrap();
    assert_eq!(via, req);
}

#[test]
fn e2a_rsbinder_glue_reports_truncation_and_bad_markers() {
    let bytes = rsbinder::to_bytes(&rich_request()).unwrap();
    for cut in (0..bytes.len()).step_by(4) {
        assert!(
            rsbinder::from_bytes::<AciRequest>(&bytes[..cut]).is_err(),
            "cut at {cut}"
        );
    }
    let mut bad = bytes.clone();
    bad[0] = 2; // neither null (0) nor non-null (1)
    assert!(rsbinder::from_bytes::<AciRequest>(&bad).is_err());
}

#[test]
fn e2a_response_with_unsupported_tag_keeps_its_call_id_through_the_binder_glue() {
    // result = {"x": <Serializable, length-prefixed>} in an otherwise valid response.
    let mut entries = ParcelWriter::new();
    entries.write_i32(1);
    entries.write_string(Some("x"));
    entries.write_i32(tag::SERIALIZABLE);
    entries.write_i32(4);
    entries.write_i32(0);
    let entries = entries.into_bytes();
    let mut w = ParcelWriter::new();
    w.write_i32(1); // non-null parcelable
    w.write_byte(1); // success
    w.write_i32(entries.len() as i32);
    w.write_i32(0x4C44_4E42);
    let mut bytes = w.into_bytes();
    bytes.extend(entries);
    let mut tail = ParcelWriter::new();
    tail.write_i32(0);
    tail.write_string(None);
    tail.write_string(Some("id-9"));
    bytes.extend(tail.into_bytes());

    assert!(AciResponse::decode(&bytes[4..]).is_err());
    let resp: AciResponse = rsbinder::from_bytes(&bytes).unwrap();
    assert!(matches!(
        resp.result_error(),
        Some(ParcelError::UnsupportedTag { tag: 21, .. })
    ));
    assert!(resp.result.is_empty());
    assert_eq!(resp.call_id, "id-9");
}
