//! The ACI wire contract (SPEC Appendix E.1, E.2, E.4): the hand-written `ACIRequest` /
//! `ACIResponse` parcelables, the error codes, and the rsbinder stubs generated from
//! `aidl/ai/aci/core/*.aidl` ([`aidl`]).
//!
//! `ACIRequest` and `ACIResponse` are hand-written Java `Parcelable`s in aci-core, declared
//! unstructured in AIDL (`parcelable ACIRequest rust_type "crate::wire::AciRequest";`), so their
//! bytes are exactly the field sequence of E.2 with no size prefix:
//!
//! - `ACIRequest`: `String capability`, `String version`, `Bundle params`, `String callId`,
//!   `String callerPkg`;
//! - `ACIResponse`: `success` (`writeByte`, an int32 1/0), `Bundle result`, `int errorCode`,
//!   `String errorMessage`, `String callId`.
//!
//! As an `in` argument or a return value, a non-null parcelable is preceded by int32 `1`
//! (null: `0`); rsbinder's generated code writes that marker, the bytes here start after it.
//!
//! ```
//! # #![allow(clippy::unwrap_used)]
//! use aci_adapter::bundle::BundleValue;
//! use aci_adapter::wire::{AciRequest, AciResponse, error_code};
//!
//! let mut req = AciRequest::new("get_weather");
//! req.params.put("city", BundleValue::String(Some("Oslo".into())));
//! let bytes = req.encode();
//! assert_eq!(AciRequest::decode(&bytes).unwrap(), req);
//!
//! let resp = AciResponse::error(error_code::CAPABILITY_NOT_FOUND, "unknown capability: x")
//!     .with_call_id(&req.call_id);
//! assert_eq!(AciResponse::decode(&resp.encode()).unwrap(), resp);
//! ```

use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::bundle::{Bundle, BundleValue};
use crate::parcel::{BinderParcelReader, ParcelError, ParcelReader, ParcelWriter, write_to_binder};

/// Rust stubs generated from `aidl/ai/aci/core/*.aidl` by `rsbinder-aidl` at build time:
/// `ai::aci::core::IACIService` (`BnACIService`, `BpACIService`, `transactions`) and
/// `ai::aci::core::IACICallback`.
pub mod aidl {
    #![allow(
        missing_docs,
        missing_debug_implementations,
        unreachable_pub,
        clippy::all,
        clippy::unwrap_used,
        clippy::expect_used,
        non_snake_case,
        non_camel_case_types,
        unused_imports,
        unused_qualifications,
        dead_code
    )]

    rsbinder::include_aidl!("aci_aidl");
}

pub use aidl::ai::aci::core::IACICallback::{BnACICallback, IACICallback};
pub use aidl::ai::aci::core::IACIService::{BnACIService, IACIService};

/// The Binder interface descriptor of the provider service (E.1).
pub const IACISERVICE_DESCRIPTOR: &str = "ai.aci.core.IACIService";
/// The Binder interface descriptor of the controller's callback (E.1).
pub const IACICALLBACK_DESCRIPTOR: &str = "ai.aci.core.IACICallback";
/// The version every request carries by default (ACI-11).
pub const DEFAULT_VERSION: &str = "1.0";

/// ACI error codes (E.4, table (a)). `INVALID_PARAMETER` of seed 003 is [`BAD_REQUEST`](error_code::BAD_REQUEST).
/// Codes from the older 0..8 table, and unknown codes, are kept verbatim in
/// [`AciResponse::error_code`]; mapping them is the controller's job.
pub mod error_code {
    /// No error.
    pub const SUCCESS: i32 = 0;
    /// The request was null.
    pub const REQUEST_NULL: i32 = -1;
    /// A missing, blank or malformed parameter (seed 003 `INVALID_PARAMETER`).
    pub const BAD_REQUEST: i32 = 400;
    /// One of the five permission layers refused (ACI-20).
    pub const PERMISSION_DENIED: i32 = 403;
    /// The provider has no capability with that id (ACI-16).
    pub const CAPABILITY_NOT_FOUND: i32 = 404;
    /// The provider failed while handling the call.
    pub const INTERNAL_ERROR: i32 = 500;
    /// The provider cannot serve calls (e.g. its capabilities failed to build, ACI-17).
    pub const SERVICE_UNAVAILABLE: i32 = 503;
    /// The call timed out.
    pub const TIMEOUT: i32 = 504;
    /// The Binder connection died.
    pub const BINDER_DIED: i32 = 505;

    /// The ACI name of a table-(a) code, `None` for others.
    pub fn name(code: i32) -> Option<&'static str> {
        Some(match code {
            SUCCESS => "SUCCESS",
            REQUEST_NULL => "REQUEST_NULL",
            BAD_REQUEST => "BAD_REQUEST",
            PERMISSION_DENIED => "PERMISSION_DENIED",
            CAPABILITY_NOT_FOUND => "CAPABILITY_NOT_FOUND",
            INTERNAL_ERROR => "INTERNAL_ERROR",
            SERVICE_UNAVAILABLE => "SERVICE_UNAVAILABLE",
            TIMEOUT => "TIMEOUT",
            BINDER_DIED => "BINDER_DIED",
            _ => return None,
        })
    }
}

/// A fresh call id in the 8-4-4-4-12 UUID form (version 4 bits set). Unique per process run and
/// unpredictable enough to tell calls apart; not a secret.
pub fn new_call_id() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let state = std::collections::hash_map::RandomState::new();
    let mut h1 = state.build_hasher();
    h1.write_u64(n);
    h1.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0),
    );
    let a = h1.finish();
    let mut h2 = state.build_hasher();
    h2.write_u64(a ^ n.rotate_left(17));
    let b = h2.finish();
    let mut bytes = [0u8; 16];
    bytes[..8].copy_from_slice(&a.to_be_bytes());
    bytes[8..].copy_from_slice(&b.to_be_bytes());
    bytes[6] = (bytes[6] & 0x0f) | 0x40;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}

/// `ai.aci.core.ACIRequest` (E.2). A null string from a peer reads as `""`, except `callerPkg`,
/// which keeps `None`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct AciRequest {
    /// The capability id.
    pub capability: String,
    /// The capability version (`"1.0"`).
    pub version: String,
    /// Parameters by name.
    pub params: Bundle,
    /// The call id the response copies.
    pub call_id: String,
    /// The caller's package as *claimed* by the sender. A capbridge provider overwrites it with
    /// the package resolved from the kernel UID before any hook sees it (E.6).
    pub caller_pkg: Option<String>,
    /// Set when the request was framed correctly but its `params` Bundle could not be read
    /// (an unsupported value tag, a bad string): `params` is then empty and the call must be
    /// answered with an error, never run. Always `None` for requests built locally.
    pub params_error: Option<ParcelError>,
}

impl AciRequest {
    /// A request for `capability` with version `"1.0"`, no params, a fresh call id and no
    /// `callerPkg`.
    pub fn new(capability: impl Into<String>) -> Self {
        Self {
            capability: capability.into(),
            version: DEFAULT_VERSION.to_owned(),
            params: Bundle::new(),
            call_id: new_call_id(),
            caller_pkg: None,
            params_error: None,
        }
    }

    /// Builder form of `params.put`.
    pub fn param(mut self, key: impl Into<String>, value: BundleValue) -> Self {
        self.params.put(key, value);
        self
    }

    /// `getString(name)`: the string parameter, `None` when absent, null or of another type
    /// (ACI-14).
    pub fn get_string(&self, name: &str) -> Option<&str> {
        match self.params.get(name) {
            Some(BundleValue::String(Some(s))) => Some(s),
            _ => None,
        }
    }

    /// `getInt(name)`.
    pub fn get_int(&self, name: &str) -> Option<i32> {
        match self.params.get(name) {
            Some(BundleValue::Int(v)) => Some(*v),
            _ => None,
        }
    }

    /// `getBoolean(name)`.
    pub fn get_bool(&self, name: &str) -> Option<bool> {
        match self.params.get(name) {
            Some(BundleValue::Boolean(v)) => Some(*v),
            _ => None,
        }
    }

    /// `getDouble(name)`; an `int` value is widened, as the server's type check accepts one
    /// for a `double` parameter.
    pub fn get_double(&self, name: &str) -> Option<f64> {
        match self.params.get(name) {
            Some(BundleValue::Double(v)) => Some(*v),
            Some(BundleValue::Int(v)) => Some(f64::from(*v)),
            _ => None,
        }
    }

    /// `getByteArray(name)`.
    pub fn get_bytes(&self, name: &str) -> Option<&[u8]> {
        match self.params.get(name) {
            Some(BundleValue::ByteArray(Some(v))) => Some(v),
            _ => None,
        }
    }

    /// Why `params` could not be read, when the request arrived through Binder with a bad
    /// Bundle (see the field docs). [`AciRequest::decode`] returns such errors directly.
    pub fn params_error(&self) -> Option<&ParcelError> {
        self.params_error.as_ref()
    }

    /// The parcelable's bytes (after the non-null marker), in E.2 order.
    pub fn encode(&self) -> Vec<u8> {
        let mut w = ParcelWriter::new();
        self.write(&mut w);
        w.into_bytes()
    }

    /// Appends the parcelable's bytes to `w`.
    pub fn write(&self, w: &mut ParcelWriter) {
        w.write_string(Some(&self.capability));
        w.write_string(Some(&self.version));
        w.write_bundle(&self.params);
        w.write_string(Some(&self.call_id));
        w.write_string(self.caller_pkg.as_deref());
    }

    /// Reads exactly one request from `bytes` (no marker, no trailing bytes). Any error,
    /// including one inside `params`, is returned.
    pub fn decode(bytes: &[u8]) -> Result<Self, ParcelError> {
        let mut r = ParcelReader::new(bytes);
        let req = Self::read(&mut r)?;
        r.finish()?;
        match req.params_error {
            Some(e) => Err(e),
            None => Ok(req),
        }
    }

    /// Reads one request; an error inside a well-framed `params` Bundle is kept in
    /// [`AciRequest::params_error`] so the caller can still answer with the call id.
    pub fn read(r: &mut ParcelReader<'_>) -> Result<Self, ParcelError> {
        let capability = r.read_string()?.unwrap_or_default();
        let version = r.read_string()?.unwrap_or_default();
        let (params, params_error) = r.read_bundle_lenient()?;
        let call_id = r.read_string()?.unwrap_or_default();
        let caller_pkg = r.read_string()?;
        Ok(Self {
            capability,
            version,
            params,
            call_id,
            caller_pkg,
            params_error,
        })
    }

    fn read_binder(r: &mut BinderParcelReader<'_>) -> Result<Self, ParcelError> {
        let capability = r.read_string()?.unwrap_or_default();
        let version = r.read_string()?.unwrap_or_default();
        let (params, params_error) = r.read_bundle_lenient()?;
        let call_id = r.read_string()?.unwrap_or_default();
        let caller_pkg = r.read_string()?;
        Ok(Self {
            capability,
            version,
            params,
            call_id,
            caller_pkg,
            params_error,
        })
    }
}

/// `ai.aci.core.ACIResponse` (E.2).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct AciResponse {
    /// Whether the call succeeded.
    pub success: bool,
    /// Result values by name.
    pub result: Bundle,
    /// [`error_code`]; `0` on success.
    pub error_code: i32,
    /// One sentence on failure; `None` (a null string) on success.
    pub error_message: Option<String>,
    /// Copied from the request. A null string from a peer reads as `""`.
    pub call_id: String,
    /// Set when the response was framed correctly but its `result` Bundle could not be read:
    /// `result` is then empty. Always `None` for responses built locally.
    pub result_error: Option<ParcelError>,
}

impl AciResponse {
    /// `ACIResponse.success()`: no results yet, no call id (set it with
    /// [`AciResponse::with_call_id`]).
    pub fn success() -> Self {
        Self {
            success: true,
            ..Self::default()
        }
    }

    /// `ACIResponse.error(code, message)`.
    pub fn error(code: i32, message: impl Into<String>) -> Self {
        Self {
            success: false,
            error_code: code,
            error_message: Some(message.into()),
            ..Self::default()
        }
    }

    /// `putResult(key, value)`.
    pub fn put_result(mut self, key: impl Into<String>, value: BundleValue) -> Self {
        self.result.put(key, value);
        self
    }

    /// `putResult(key, String)`.
    pub fn put_string(self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.put_result(key, BundleValue::String(Some(value.into())))
    }

    /// `putResult(key, boolean)`.
    pub fn put_bool(self, key: impl Into<String>, value: bool) -> Self {
        self.put_result(key, BundleValue::Boolean(value))
    }

    /// `putResult(key, int)`.
    pub fn put_int(self, key: impl Into<String>, value: i32) -> Self {
        self.put_result(key, BundleValue::Int(value))
    }

    /// `putResult(key, double)`.
    pub fn put_double(self, key: impl Into<String>, value: f64) -> Self {
        self.put_result(key, BundleValue::Double(value))
    }

    /// `putResult(key, byte[])`.
    pub fn put_bytes(self, key: impl Into<String>, value: Vec<u8>) -> Self {
        self.put_result(key, BundleValue::ByteArray(Some(value)))
    }

    /// Sets the call id.
    pub fn with_call_id(mut self, call_id: impl Into<String>) -> Self {
        self.call_id = call_id.into();
        self
    }

    /// The ACI name of [`AciResponse::error_code`] (table (a)), if it has one.
    pub fn error_name(&self) -> Option<&'static str> {
        error_code::name(self.error_code)
    }

    /// Why `result` could not be read, when the response arrived through Binder with a bad
    /// Bundle. [`AciResponse::decode`] returns such errors directly.
    pub fn result_error(&self) -> Option<&ParcelError> {
        self.result_error.as_ref()
    }

    /// The parcelable's bytes (after the non-null marker), in E.2 order.
    pub fn encode(&self) -> Vec<u8> {
        let mut w = ParcelWriter::new();
        self.write(&mut w);
        w.into_bytes()
    }

    /// Appends the parcelable's bytes to `w`.
    pub fn write(&self, w: &mut ParcelWriter) {
        w.write_byte(i8::from(self.success));
        w.write_bundle(&self.result);
        w.write_i32(self.error_code);
        w.write_string(self.error_message.as_deref());
        w.write_string(Some(&self.call_id));
    }

    /// Reads exactly one response from `bytes`. Any error, including one inside `result`, is
    /// returned.
    pub fn decode(bytes: &[u8]) -> Result<Self, ParcelError> {
        let mut r = ParcelReader::new(bytes);
        let resp = Self::read(&mut r)?;
        r.finish()?;
        match resp.result_error {
            Some(e) => Err(e),
            None => Ok(resp),
        }
    }

    /// Reads one response; an error inside a well-framed `result` Bundle is kept in
    /// [`AciResponse::result_error`].
    pub fn read(r: &mut ParcelReader<'_>) -> Result<Self, ParcelError> {
        let success = r.read_byte()? != 0;
        let (result, result_error) = r.read_bundle_lenient()?;
        let error_code = r.read_i32()?;
        let error_message = r.read_string()?;
        let call_id = r.read_string()?.unwrap_or_default();
        Ok(Self {
            success,
            result,
            error_code,
            error_message,
            call_id,
            result_error,
        })
    }

    fn read_binder(r: &mut BinderParcelReader<'_>) -> Result<Self, ParcelError> {
        let success = (r.read_i32()? as i8) != 0;
        let (result, result_error) = r.read_bundle_lenient()?;
        let error_code = r.read_i32()?;
        let error_message = r.read_string()?;
        let call_id = r.read_string()?.unwrap_or_default();
        Ok(Self {
            success,
            result,
            error_code,
            error_message,
            call_id,
            result_error,
        })
    }
}

impl rsbinder::Parcelable for AciRequest {
    fn write_to_parcel(&self, parcel: &mut rsbinder::Parcel) -> rsbinder::Result<()> {
        write_to_binder(parcel, &self.encode())
    }

    fn read_from_parcel(&mut self, parcel: &mut rsbinder::Parcel) -> rsbinder::Result<()> {
        let mut r = BinderParcelReader::new(parcel);
        *self = Self::read_binder(&mut r).map_err(|e| {
            tracing::warn!(error = %e, "ACIRequest parcel unreadable");
            e.status()
        })?;
        Ok(())
    }
}

impl rsbinder::Parcelable for AciResponse {
    fn write_to_parcel(&self, parcel: &mut rsbinder::Parcel) -> rsbinder::Result<()> {
        write_to_binder(parcel, &self.encode())
    }

    fn read_from_parcel(&mut self, parcel: &mut rsbinder::Parcel) -> rsbinder::Result<()> {
        let mut r = BinderParcelReader::new(parcel);
        *self = Self::read_binder(&mut r).map_err(|e| {
            tracing::warn!(error = %e, "ACIResponse parcel unreadable");
            e.status()
        })?;
        Ok(())
    }
}

impl rsbinder::ParcelableMetadata for AciRequest {
    fn descriptor() -> &'static str {
        "ai.aci.core.ACIRequest"
    }
}

impl rsbinder::ParcelableMetadata for AciResponse {
    fn descriptor() -> &'static str {
        "ai.aci.core.ACIResponse"
    }
}

rsbinder::impl_serialize_for_parcelable!(AciRequest);
rsbinder::impl_deserialize_for_parcelable!(AciRequest);
rsbinder::impl_serialize_for_parcelable!(AciResponse);
rsbinder::impl_deserialize_for_parcelable!(AciResponse);

#[cfg(test)]
mod tests {
    use super::aidl::ai::aci::core::{IACICallback, IACIService};

    #[test]
    fn e1_transaction_codes_follow_method_order() {
        assert_eq!(rsbinder::FIRST_CALL_TRANSACTION, 1);
        assert_eq!(IACIService::transactions::r#call, 1);
        assert_eq!(IACIService::transactions::r#callAsync, 2);
        assert_eq!(IACIService::transactions::r#getCapabilities, 3);
        assert_eq!(IACIService::transactions::r#ping, 4);
        assert_eq!(IACICallback::transactions::r#onResult, 1);
        assert_eq!(IACICallback::transactions::r#onProgress, 2);
    }

    #[test]
    fn e1_descriptors_are_aci_core_names() {
        use rsbinder::Remotable;
        assert_eq!(
            IACIService::BnACIService::descriptor(),
            super::IACISERVICE_DESCRIPTOR
        );
        assert_eq!(
            IACICallback::BnACICallback::descriptor(),
            super::IACICALLBACK_DESCRIPTOR
        );
    }

    #[test]
    fn call_ids_are_uuid_shaped_and_distinct() {
        let a = super::new_call_id();
        let b = super::new_call_id();
        assert_ne!(a, b);
        assert_eq!(a.len(), 36);
        assert_eq!(&a[14..15], "4");
    }
}
