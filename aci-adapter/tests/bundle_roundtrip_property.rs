//! SPEC E.2a, property-based: every Bundle the codec can express survives encode → decode,
//! inside an `ACIRequest` and an `ACIResponse`, both on byte buffers and through the rsbinder
//! glue; and arbitrary bytes never make the decoder panic.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use aci_adapter::bundle::{Bundle, BundleValue};
use aci_adapter::parcel::ParcelReader;
use aci_adapter::wire::{AciRequest, AciResponse};
use proptest::prelude::*;

fn text() -> impl Strategy<Value = String> {
    // Any Unicode scalar values, including non-BMP ones (surrogate pairs on the wire).
    proptest::collection::vec(any::<char>(), 0..12).prop_map(|v| v.into_iter().collect())
}

fn leaf() -> impl Strategy<Value = BundleValue> {
    prop_oneof![
        Just(BundleValue::Null),
        proptest::option::of(text()).prop_map(BundleValue::String),
        any::<i32>().prop_map(BundleValue::Int),
        any::<i64>().prop_map(BundleValue::Long),
        (-1.0e30f32..1.0e30f32).prop_map(BundleValue::Float),
        (-1.0e300f64..1.0e300f64).prop_map(BundleValue::Double),
        any::<bool>().prop_map(BundleValue::Boolean),
        proptest::option::of(proptest::collection::vec(any::<u8>(), 0..40))
            .prop_map(BundleValue::ByteArray),
        proptest::option::of(proptest::collection::vec(
            proptest::option::of(text()),
            0..5
        ))
        .prop_map(BundleValue::StringArray),
    ]
}

fn bundle_of(value: impl Strategy<Value = BundleValue>) -> impl Strategy<Value = Bundle> {
    proptest::collection::vec((text(), value), 0..6).prop_map(|entries| {
        let mut b = Bundle::new();
        for (k, v) in entries {
            b.put(k, v);
        }
        b
    })
}

fn value() -> impl Strategy<Value = BundleValue> {
    leaf().prop_recursive(3, 24, 6, |inner| {
        prop_oneof![
            3 => leaf(),
            1 => bundle_of(inner).prop_map(BundleValue::Bundle),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn e2a_request_round_trips(
        cap in text(), version in text(), call_id in text(),
        caller in proptest::option::of(text()), params in bundle_of(value()),
    ) {
        let mut req = AciRequest::new(cap);
        req.version = version;
        req.call_id = call_id;
        req.caller_pkg = caller;
        req.params = params;
        let bytes = req.encode();
        prop_assert_eq!(bytes.len() % 4, 0);
        prop_assert_eq!(&AciRequest::decode(&bytes).unwrap(), &req);
        let via: AciRequest = rsbinder::from_bytes(&rsbinder::to_bytes(&req).unwrap()).unwrap();
        prop_assert_eq!(via, req);
    }

    #[test]
    fn e2a_response_round_trips(
        success in any::<bool>(), code in any::<i32>(), msg in proptest::option::of(text()),
        call_id in text(), result in bundle_of(value()),
    ) {
        let resp = AciResponse {
            success,
            result,
            error_code: code,
            error_message: msg,
            call_id,
            ..AciResponse::default()
        };
        prop_assert_eq!(&AciResponse::decode(&resp.encode()).unwrap(), &resp);
        let via: AciResponse = rsbinder::from_bytes(&rsbinder::to_bytes(&resp).unwrap()).unwrap();
        prop_assert_eq!(via, resp);
    }

    #[test]
    fn e2a_arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..256)) {
        let _ = AciRequest::decode(&bytes);
        let _ = AciResponse::decode(&bytes);
        let _ = ParcelReader::new(&bytes).read_bundle();
        let _ = rsbinder::from_bytes::<AciRequest>(&bytes);
    }

    #[test]
    fn e2a_mutated_valid_bytes_never_panic(
        params in bundle_of(value()), at in any::<prop::sample::Index>(), byte in any::<u8>(),
    ) {
        let mut req = AciRequest::new("c");
        req.params = params;
        let mut bytes = req.encode();
        let i = at.index(bytes.len());
        bytes[i] = byte;
        let _ = AciRequest::decode(&bytes);
    }
}
