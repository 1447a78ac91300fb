//! SPEC Appendix E.2 / E.2a: the exact bytes Android's `Parcel` writes for `ACIRequest`,
//! `ACIResponse` and each Bundle value type, computed by hand from the format (little-endian,
//! 4-byte aligned; `writeString` = int32 UTF-16 length, units, 16-bit NUL, padding; `writeBundle`
//! = length of what follows the magic, `BNDL`, count, key/`writeValue` pairs). Every 4-byte
//! word is commented. The encoder must produce these bytes, and the decoder must read them back
//! into the same value; the rsbinder glue must put the same bytes after the non-null marker.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use aci_adapter::bundle::{Bundle, BundleValue};
use aci_adapter::parcel::{ParcelReader, ParcelWriter};
use aci_adapter::wire::{AciRequest, AciResponse};

/// `params` {"text": "hi"} of the golden request.
fn text_hi() -> Bundle {
    let mut b = Bundle::new();
    b.put("text", BundleValue::String(Some("hi".into())));
    b
}

fn golden_request() -> AciRequest {
    let mut r = AciRequest::new("echo");
    r.params = text_hi();
    r.call_id = "c1".into();
    r.caller_pkg = None;
    r
}

#[rustfmt::skip]
const REQUEST: &[u8] = &[
    // capability = "echo"
    0x04, 0x00, 0x00, 0x00, // length 4 (UTF-16 units)
    0x65, 0x00, 0x63, 0x00, // 'e' 'c'
    0x68, 0x00, 0x6F, 0x00, // 'h' 'o'
    0x00, 0x00, 0x00, 0x00, // NUL terminator + 2 bytes padding
    // version = "1.0"
    0x03, 0x00, 0x00, 0x00, // length 3
    0x31, 0x00, 0x2E, 0x00, // '1' '.'
    0x30, 0x00, 0x00, 0x00, // '0' NUL
    // params = Bundle {"text": "hi"}
    0x24, 0x00, 0x00, 0x00, // length 36: bytes after the magic
    0x42, 0x4E, 0x44, 0x4C, // magic 0x4C444E42 "BNDL"
    0x01, 0x00, 0x00, 0x00, // 1 entry
    0x04, 0x00, 0x00, 0x00, //   key length 4
    0x74, 0x00, 0x65, 0x00, //   't' 'e'
    0x78, 0x00, 0x74, 0x00, //   'x' 't'
    0x00, 0x00, 0x00, 0x00, //   NUL + padding
    0x00, 0x00, 0x00, 0x00, //   tag 0 = VAL_STRING
    0x02, 0x00, 0x00, 0x00, //   string length 2
    0x68, 0x00, 0x69, 0x00, //   'h' 'i'
    0x00, 0x00, 0x00, 0x00, //   NUL + padding
    // callId = "c1"
    0x02, 0x00, 0x00, 0x00, // length 2
    0x63, 0x00, 0x31, 0x00, // 'c' '1'
    0x00, 0x00, 0x00, 0x00, // NUL + padding
    // callerPkg = null
    0xFF, 0xFF, 0xFF, 0xFF, // length -1: null string
];

#[test]
fn e2_request_encodes_to_golden_bytes() {
    assert_eq!(golden_request().encode(), REQUEST);
}

#[test]
fn e2_request_decodes_from_golden_bytes() {
    assert_eq!(AciRequest::decode(REQUEST).unwrap(), golden_request());
}

#[test]
fn e2a_request_through_rsbinder_is_marker_then_golden_bytes() {
    // As an `in` argument: int32 1 (non-null), then the parcelable's own bytes, no size prefix.
    let bytes = rsbinder::to_bytes(&golden_request()).unwrap();
    assert_eq!(&bytes[..4], &[0x01, 0x00, 0x00, 0x00]);
    assert_eq!(&bytes[4..], REQUEST);
    let back: AciRequest = rsbinder::from_bytes(&bytes).unwrap();
    assert_eq!(back, golden_request());
}

#[rustfmt::skip]
const RESPONSE_OK: &[u8] = &[
    0x01, 0x00, 0x00, 0x00, // success: writeByte(1), an int32 on the wire
    // result = Bundle {"k": "ok"}
    0x1C, 0x00, 0x00, 0x00, // length 28
    0x42, 0x4E, 0x44, 0x4C, // "BNDL"
    0x01, 0x00, 0x00, 0x00, // 1 entry
    0x01, 0x00, 0x00, 0x00, //   key length 1
    0x6B, 0x00, 0x00, 0x00, //   'k' NUL
    0x00, 0x00, 0x00, 0x00, //   tag 0 = VAL_STRING
    0x02, 0x00, 0x00, 0x00, //   length 2
    0x6F, 0x00, 0x6B, 0x00, //   'o' 'k'
    0x00, 0x00, 0x00, 0x00, //   NUL + padding
    0x00, 0x00, 0x00, 0x00, // errorCode 0
    0xFF, 0xFF, 0xFF, 0xFF, // errorMessage null
    0x02, 0x00, 0x00, 0x00, // callId length 2
    0x63, 0x00, 0x31, 0x00, // 'c' '1'
    0x00, 0x00, 0x00, 0x00, // NUL + padding
];

#[rustfmt::skip]
const RESPONSE_ERR: &[u8] = &[
    0x00, 0x00, 0x00, 0x00, // success: writeByte(0)
    0x00, 0x00, 0x00, 0x00, // result: empty Bundle is int32 0
    0x94, 0x01, 0x00, 0x00, // errorCode 404 (CAPABILITY_NOT_FOUND)
    0x02, 0x00, 0x00, 0x00, // errorMessage length 2
    0x6E, 0x00, 0x6F, 0x00, // 'n' 'o'
    0x00, 0x00, 0x00, 0x00, // NUL + padding
    0x02, 0x00, 0x00, 0x00, // callId length 2
    0x63, 0x00, 0x31, 0x00, // 'c' '1'
    0x00, 0x00, 0x00, 0x00, // NUL + padding
];

#[test]
fn e2_response_success_and_error_golden_bytes() {
    let ok = AciResponse::success()
        .put_string("k", "ok")
        .with_call_id("c1");
    assert_eq!(ok.encode(), RESPONSE_OK);
    assert_eq!(AciResponse::decode(RESPONSE_OK).unwrap(), ok);

    let err = AciResponse::error(404, "no").with_call_id("c1");
    assert_eq!(err.encode(), RESPONSE_ERR);
    assert_eq!(AciResponse::decode(RESPONSE_ERR).unwrap(), err);
    assert_eq!(err.error_name(), Some("CAPABILITY_NOT_FOUND"));

    let bytes = rsbinder::to_bytes(&ok).unwrap();
    assert_eq!(&bytes[..4], &[1, 0, 0, 0]);
    assert_eq!(&bytes[4..], RESPONSE_OK);
}

/// A one-entry Bundle {"k": value}: what `writeBundle` writes, with the payload's own words.
fn one_entry(value: BundleValue) -> Vec<u8> {
    let mut b = Bundle::new();
    b.put("k", value);
    let mut w = ParcelWriter::new();
    w.write_bundle(&b);
    w.into_bytes()
}

/// The fixed head of a one-entry Bundle with key "k": length, magic, count, key.
#[rustfmt::skip]
fn head(length: u8) -> Vec<u8> {
    vec![
        length, 0x00, 0x00, 0x00, // length of what follows the magic
        0x42, 0x4E, 0x44, 0x4C,   // "BNDL"
        0x01, 0x00, 0x00, 0x00,   // 1 entry
        0x01, 0x00, 0x00, 0x00,   // key length 1
        0x6B, 0x00, 0x00, 0x00,   // 'k' NUL
    ]
}

fn check(value: BundleValue, length: u8, tail: &[u8]) {
    let mut golden = head(length);
    golden.extend_from_slice(tail);
    assert_eq!(one_entry(value.clone()), golden, "encode {value:?}");
    let mut r = ParcelReader::new(&golden);
    let b = r.read_bundle().unwrap();
    r.finish().unwrap();
    assert_eq!(b.get("k"), Some(&value), "decode {value:?}");
}

#[rustfmt::skip]
#[test]
fn e2a_each_value_type_golden_bytes() {
    // int 7: 12 bytes of head after the magic + tag + value = 20.
    check(BundleValue::Int(7), 20, &[
        0x01, 0x00, 0x00, 0x00, // tag 1 = VAL_INTEGER
        0x07, 0x00, 0x00, 0x00, // 7
    ]);
    check(BundleValue::Boolean(true), 20, &[
        0x09, 0x00, 0x00, 0x00, // tag 9 = VAL_BOOLEAN
        0x01, 0x00, 0x00, 0x00, // true, as an int32
    ]);
    check(BundleValue::Double(1.5), 24, &[
        0x08, 0x00, 0x00, 0x00, // tag 8 = VAL_DOUBLE
        0x00, 0x00, 0x00, 0x00, // 1.5 = 0x3FF8000000000000, low word
        0x00, 0x00, 0xF8, 0x3F, //   high word
    ]);
    check(BundleValue::Long(-2), 24, &[
        0x06, 0x00, 0x00, 0x00, // tag 6 = VAL_LONG
        0xFE, 0xFF, 0xFF, 0xFF, // -2, low word
        0xFF, 0xFF, 0xFF, 0xFF, //   high word
    ]);
    check(BundleValue::Float(0.5), 20, &[
        0x07, 0x00, 0x00, 0x00, // tag 7 = VAL_FLOAT
        0x00, 0x00, 0x00, 0x3F, // 0.5 = 0x3F000000
    ]);
    check(BundleValue::ByteArray(Some(vec![1, 2, 3])), 24, &[
        0x0D, 0x00, 0x00, 0x00, // tag 13 = VAL_BYTEARRAY
        0x03, 0x00, 0x00, 0x00, // length 3
        0x01, 0x02, 0x03, 0x00, // bytes + 1 byte padding
    ]);
    check(BundleValue::ByteArray(None), 20, &[
        0x0D, 0x00, 0x00, 0x00, // tag 13
        0xFF, 0xFF, 0xFF, 0xFF, // null array
    ]);
    check(BundleValue::String(None), 20, &[
        0x00, 0x00, 0x00, 0x00, // tag 0 = VAL_STRING
        0xFF, 0xFF, 0xFF, 0xFF, // null string
    ]);
    check(BundleValue::Null, 16, &[
        0xFF, 0xFF, 0xFF, 0xFF, // tag -1 = VAL_NULL, no payload
    ]);
    check(BundleValue::StringArray(Some(vec![Some("a".into()), None])), 32, &[
        0x0E, 0x00, 0x00, 0x00, // tag 14 = VAL_STRINGARRAY
        0x02, 0x00, 0x00, 0x00, // 2 elements
        0x01, 0x00, 0x00, 0x00, //   length 1
        0x61, 0x00, 0x00, 0x00, //   'a' NUL
        0xFF, 0xFF, 0xFF, 0xFF, //   null
    ]);
    let mut inner = Bundle::new();
    inner.put("k", BundleValue::Int(7));
    check(BundleValue::Bundle(inner), 44, &[
        0x03, 0x00, 0x00, 0x00, // tag 3 = VAL_BUNDLE (no Android-13 length prefix)
        0x14, 0x00, 0x00, 0x00, //   nested length 20
        0x42, 0x4E, 0x44, 0x4C, //   "BNDL"
        0x01, 0x00, 0x00, 0x00, //   1 entry
        0x01, 0x00, 0x00, 0x00, //     key length 1
        0x6B, 0x00, 0x00, 0x00, //     'k' NUL
        0x01, 0x00, 0x00, 0x00, //     tag 1 = VAL_INTEGER
        0x07, 0x00, 0x00, 0x00, //     7
    ]);
    check(BundleValue::Bundle(Bundle::new()), 20, &[
        0x03, 0x00, 0x00, 0x00, // tag 3
        0x00, 0x00, 0x00, 0x00, //   empty Bundle
    ]);
    // A non-BMP character: a surrogate pair, 2 units.
    check(BundleValue::String(Some("😀".into())), 28, &[
        0x00, 0x00, 0x00, 0x00, // tag 0
        0x02, 0x00, 0x00, 0x00, // length 2 units
        0x3D, 0xD8, 0x00, 0xDE, // U+1F600 = D83D DE00
        0x00, 0x00, 0x00, 0x00, // NUL + padding
    ]);
}

#[rustfmt::skip]
#[test]
fn e2a_native_bndn_magic_is_accepted_and_entry_order_is_free() {
    let bytes: &[u8] = &[
        0x24, 0x00, 0x00, 0x00, // length 36
        0x44, 0x4E, 0x44, 0x4C, // magic 0x4C444E44 "BNDN" (parcelled by native code)
        0x02, 0x00, 0x00, 0x00, // 2 entries
        0x01, 0x00, 0x00, 0x00, //   key length 1
        0x62, 0x00, 0x00, 0x00, //   'b' NUL
        0x09, 0x00, 0x00, 0x00, //   tag 9 = VAL_BOOLEAN
        0x00, 0x00, 0x00, 0x00, //   false
        0x01, 0x00, 0x00, 0x00, //   key length 1
        0x61, 0x00, 0x00, 0x00, //   'a' NUL
        0x01, 0x00, 0x00, 0x00, //   tag 1 = VAL_INTEGER
        0x05, 0x00, 0x00, 0x00, //   5
    ];
    let b = ParcelReader::new(bytes).read_bundle().unwrap();
    assert_eq!(b.get("a"), Some(&BundleValue::Int(5)));
    assert_eq!(b.get("b"), Some(&BundleValue::Boolean(false)));
    assert_eq!(b.len(), 2);
}

#[test]
fn e2a_null_bundle_minus_one_reads_as_empty() {
    let mut r = ParcelReader::new(&[0xFF, 0xFF, 0xFF, 0xFF]);
    assert!(r.read_bundle().unwrap().is_empty());
    let mut w = ParcelWriter::new();
    w.write_nullable_bundle(None);
    assert_eq!(w.as_bytes(), &[0xFF, 0xFF, 0xFF, 0xFF]);
}

#[test]
fn e2a_golden_files_match_the_commented_constants() {
    assert_eq!(
        include_bytes!("golden/aci_request_echo.bin").as_slice(),
        REQUEST
    );
    assert_eq!(
        include_bytes!("golden/aci_response_ok.bin").as_slice(),
        RESPONSE_OK
    );
    assert_eq!(
        include_bytes!("golden/aci_response_404.bin").as_slice(),
        RESPONSE_ERR
    );
}
