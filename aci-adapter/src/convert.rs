//! Conversions between the catalog's JSON world and ACI's Bundles (ACI-42, ACI-46, ACI-48,
//! Appendix E.3/E.4/E.7).
//!
//! - [`arguments_to_bundle`]: model arguments (a JSON object) → the typed `params` Bundle of an
//!   `ACIRequest`, checked against the capability's declared params. Errors name the field,
//!   never the value.
//! - [`bundle_to_json`]: a result Bundle → a JSON object (byte arrays as base64).
//! - [`response_to_output`]: a whole `ACIResponse` → [`ToolOutput`] or [`CallError`], mapping
//!   both error-code tables of E.4 (unknown codes kept verbatim in the structured details),
//!   decoding `*_gz` byte arrays through the http-capability renderer with a hard bound, and
//!   capping what reaches the model at 32,768 UTF-16 units.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use capability_model::{AciParam, AciType, CallError, ToolOutput};
use serde_json::{Map, Number, Value};

use crate::bundle::{Bundle, BundleValue};

/// What the model receives at most from one ACI result, in UTF-16 units (ACI-48).
pub const MODEL_RESULT_MAX_U16: usize = http_capability::limits::MODEL_RESULT_MAX_U16;

/// What a decompressed `*_gz` field may expand to, in UTF-16 units (E.7: text results are cut
/// at 150,000 characters; the gzip carries the same text).
pub const GZ_TEXT_MAX_U16: usize = http_capability::limits::RESPONSE_BODY_MAX_U16;

/// Provider-message characters kept in an error text (one sentence, not an essay).
pub const ERROR_MESSAGE_MAX_CP: usize = 512;

/// Why model arguments could not become a Bundle. Every variant names the field; none carries
/// the value (SEC-12).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConvertError {
    /// A required parameter is absent or null.
    #[error("missing required parameter \"{0}\"")]
    Missing(String),
    /// An argument the capability does not declare (`additionalProperties:false`, ACI-42).
    #[error("unknown parameter \"{0}\"")]
    Unknown(String),
    /// The value does not have the declared type.
    #[error("parameter \"{field}\" must be {expected}")]
    WrongType {
        /// The parameter.
        field: String,
        /// What was expected, in words.
        expected: &'static str,
    },
}

impl From<ConvertError> for CallError {
    fn from(e: ConvertError) -> Self {
        CallError::InvalidArguments(e.to_string())
    }
}

/// Converts model arguments into the `params` Bundle per the declared params (ACI-42):
/// `string` → String, `int` → int (32-bit range), `boolean`, `double`, `byte[]` (base64 text)
/// → byte[], `json` and unknown types → a string (compact JSON text for a non-string value).
/// A `null` argument counts as absent.
pub fn arguments_to_bundle(
    params: &[AciParam],
    arguments: &Map<String, Value>,
) -> Result<Bundle, ConvertError> {
    for name in arguments.keys() {
        if !params.iter().any(|p| p.name == *name) {
            return Err(ConvertError::Unknown(name.clone()));
        }
    }
    let mut bundle = Bundle::new();
    for p in params {
        let value = match arguments.get(&p.name) {
            None | Some(Value::Null) => {
                if p.required {
                    return Err(ConvertError::Missing(p.name.clone()));
                }
                continue;
            }
            Some(v) => v,
        };
        let wrong = |expected: &'static str| ConvertError::WrongType {
            field: p.name.clone(),
            expected,
        };
        let converted = match &p.ty {
            AciType::String => match value {
                Value::String(s) => BundleValue::String(Some(s.clone())),
                _ => return Err(wrong("a string")),
            },
            AciType::Int => match value.as_i64().and_then(|n| i32::try_from(n).ok()) {
                Some(n) => BundleValue::Int(n),
                None => return Err(wrong("an integer in the 32-bit range")),
            },
            AciType::Boolean => match value {
                Value::Bool(b) => BundleValue::Boolean(*b),
                _ => return Err(wrong("a boolean")),
            },
            AciType::Double => match value.as_f64() {
                Some(d) if value.is_number() => BundleValue::Double(d),
                _ => return Err(wrong("a number")),
            },
            AciType::Bytes => match value {
                Value::String(s) => match BASE64.decode(s.trim()) {
                    Ok(b) => BundleValue::ByteArray(Some(b)),
                    Err(_) => return Err(wrong("base64 text")),
                },
                _ => return Err(wrong("base64 text")),
            },
            AciType::Json | AciType::Other(_) => match value {
                Value::String(s) => BundleValue::String(Some(s.clone())),
                other => BundleValue::String(Some(other.to_string())),
            },
        };
        bundle.put(p.name.clone(), converted);
    }
    Ok(bundle)
}

/// Converts a Bundle into a JSON object: strings, numbers and booleans as themselves, byte
/// arrays as base64 text, string arrays as arrays, nested Bundles as objects. Non-finite
/// floating-point values become `null` (JSON has no NaN).
pub fn bundle_to_json(bundle: &Bundle) -> Map<String, Value> {
    bundle
        .iter()
        .map(|(k, v)| (k.to_owned(), value_to_json(v)))
        .collect()
}

fn value_to_json(v: &BundleValue) -> Value {
    match v {
        BundleValue::Null | BundleValue::String(None) => Value::Null,
        BundleValue::String(Some(s)) => Value::String(s.clone()),
        BundleValue::Int(n) => Value::from(*n),
        BundleValue::Long(n) => Value::from(*n),
        BundleValue::Float(f) => Number::from_f64(f64::from(*f)).map_or(Value::Null, Value::Number),
        BundleValue::Double(d) => Number::from_f64(*d).map_or(Value::Null, Value::Number),
        BundleValue::Boolean(b) => Value::Bool(*b),
        BundleValue::ByteArray(None) | BundleValue::StringArray(None) => Value::Null,
        BundleValue::ByteArray(Some(b)) => Value::String(BASE64.encode(b)),
        BundleValue::StringArray(Some(items)) => Value::Array(
            items
                .iter()
                .map(|s| s.clone().map_or(Value::Null, Value::String))
                .collect(),
        ),
        BundleValue::Bundle(b) => Value::Object(bundle_to_json(b)),
    }
}

/// The sizes of a Bundle's entries for the call log: `(name, size)` where size is UTF-16 units
/// for strings, bytes for byte arrays, the number of items for arrays and entries for nested
/// Bundles, and 0 for scalars. Never a value (ACI-32, SEC-12).
pub fn bundle_summary(bundle: &Bundle) -> Vec<(String, usize)> {
    bundle
        .iter()
        .map(|(k, v)| {
            let size = match v {
                BundleValue::String(Some(s)) => s.encode_utf16().count(),
                BundleValue::ByteArray(Some(b)) => b.len(),
                BundleValue::StringArray(Some(a)) => a.len(),
                BundleValue::Bundle(b) => b.len(),
                _ => 0,
            };
            (k.to_owned(), size)
        })
        .collect()
}

/// An ACI error code read from either table of Appendix E.4.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AciErrorKind {
    /// `REQUEST_NULL` (−1): the provider got no request.
    RequestNull,
    /// `BAD_REQUEST` / `INVALID_PARAMETER` (400).
    BadRequest,
    /// `PERMISSION_DENIED` (403): one of the five layers refused (ACI-20).
    PermissionDenied,
    /// `CAPABILITY_NOT_FOUND` (404).
    CapabilityNotFound,
    /// `INTERNAL_ERROR` (500).
    InternalError,
    /// `SERVICE_UNAVAILABLE` (503).
    ServiceUnavailable,
    /// `TIMEOUT` (504).
    Timeout,
    /// `BINDER_DIED` (505).
    BinderDied,
    /// A code in the older 1..=8 numbering of the main branch's aci-core (E.4 b). SPEC does not
    /// give the names of that table, so the code is kept as it is.
    Legacy(i32),
    /// Any other code, kept verbatim.
    Unknown(i32),
}

impl AciErrorKind {
    /// Classifies a non-zero error code.
    pub fn from_code(code: i32) -> Self {
        match code {
            -1 => Self::RequestNull,
            400 => Self::BadRequest,
            403 => Self::PermissionDenied,
            404 => Self::CapabilityNotFound,
            500 => Self::InternalError,
            503 => Self::ServiceUnavailable,
            504 => Self::Timeout,
            505 => Self::BinderDied,
            1..=8 => Self::Legacy(code),
            other => Self::Unknown(other),
        }
    }

    /// The name shown to the model (`"<X>: <message>"`, ACI-46).
    pub fn name(self) -> String {
        match self {
            Self::RequestNull => "REQUEST_NULL".into(),
            Self::BadRequest => "INVALID_PARAMETER".into(),
            Self::PermissionDenied => "PERMISSION_DENIED".into(),
            Self::CapabilityNotFound => "CAPABILITY_NOT_FOUND".into(),
            Self::InternalError => "INTERNAL_ERROR".into(),
            Self::ServiceUnavailable => "SERVICE_UNAVAILABLE".into(),
            Self::Timeout => "TIMEOUT".into(),
            Self::BinderDied => "BINDER_DIED".into(),
            Self::Legacy(c) => format!("ACI_ERROR_{c}"),
            Self::Unknown(c) => format!("ACI_ERROR_{c}"),
        }
    }
}

/// The parts of an `ACIResponse` the mapping reads (so that this module does not depend on how
/// the wire layer spells its struct).
#[derive(Debug, Clone, Copy)]
pub struct ResponseParts<'a> {
    /// `success`.
    pub success: bool,
    /// `result`.
    pub result: &'a Bundle,
    /// `errorCode` (0 = none).
    pub error_code: i32,
    /// `errorMessage`.
    pub error_message: Option<&'a str>,
}

/// How a response was classified, beside the output: the controller invalidates its cache on
/// [`Mapped::capability_not_found`] (ACI-31).
#[derive(Debug, Clone, PartialEq)]
pub struct Mapped {
    /// The model-bound result, or the call error.
    pub output: Result<ToolOutput, CallError>,
    /// The provider said `CAPABILITY_NOT_FOUND`.
    pub capability_not_found: bool,
    /// The status word for the call log (`ok`, or the error name).
    pub status: String,
}

/// Maps a response (ACI-45, ACI-46, ACI-48, E.4, E.7):
/// - success → compact JSON text of the result map (+ structured content); a result carrying
///   `status_code` and `response_body`/`response_body_gz` (an `http_request` result) is rendered
///   by http-capability's `renderHttpResult` with its untrusted-data label; any other `*_gz`
///   byte array is gunzipped with a hard bound and replaces its base field;
/// - `PERMISSION_DENIED` → [`CallError::ProviderDenied`];
/// - `SERVICE_UNAVAILABLE` → [`CallError::Unavailable`] (not executed);
/// - `TIMEOUT` → [`CallError::Timeout`];
/// - other errors → `isError` with `"<X>: <sanitized message>"` and `{errorCode, error}` as
///   structured details (the code verbatim).
pub fn response_to_output(r: ResponseParts<'_>) -> Mapped {
    if r.success && r.error_code == 0 {
        return Mapped {
            output: Ok(success_output(r.result)),
            capability_not_found: false,
            status: "ok".into(),
        };
    }
    // `success=false` with code 0 is still a failure without a known reason.
    let kind = if r.error_code == 0 {
        AciErrorKind::Unknown(0)
    } else {
        AciErrorKind::from_code(r.error_code)
    };
    let name = kind.name();
    let output = match kind {
        AciErrorKind::PermissionDenied => Err(CallError::ProviderDenied),
        AciErrorKind::ServiceUnavailable => Err(CallError::Unavailable {
            reason: "service_unavailable".into(),
        }),
        AciErrorKind::Timeout => Err(CallError::Timeout),
        _ => {
            let message = sanitize_message(r.error_message.unwrap_or(""));
            let text = if message.is_empty() {
                name.clone()
            } else {
                format!("{name}: {message}")
            };
            let mut out = ToolOutput::error(text);
            let mut details = Map::new();
            details.insert("errorCode".into(), Value::from(r.error_code));
            details.insert("error".into(), Value::String(name.clone()));
            out.structured_content = Some(Value::Object(details));
            Ok(out)
        }
    };
    Mapped {
        output,
        capability_not_found: kind == AciErrorKind::CapabilityNotFound,
        status: name,
    }
}

/// SEC-04 cleaning of a provider message (controls, bidi, zero-width removed, whitespace
/// collapsed), cut to [`ERROR_MESSAGE_MAX_CP`] code points.
pub fn sanitize_message(message: &str) -> String {
    permissions::sanitize::truncate_cp(&permissions::sanitize::clean(message), ERROR_MESSAGE_MAX_CP)
}

fn is_http_result(result: &Bundle) -> bool {
    use http_capability::render::key;
    result.get(key::STATUS_CODE).is_some()
        && (result.get(key::RESPONSE_BODY).is_some() || result.get(key::RESPONSE_BODY_GZ).is_some())
}

fn success_output(result: &Bundle) -> ToolOutput {
    let mut map = bundle_to_json(result);
    if is_http_result(result) {
        // renderHttpResult reads `response_body_gz` as base64 text, bounded (HTTP-06, ACI-33).
        return http_capability::render::render_tool_output(&map);
    }
    decode_gz_fields(result, &mut map);
    let value = Value::Object(map);
    let text = value.to_string();
    let (text, cut) = cap_u16(&text);
    ToolOutput {
        content: vec![capability_model::ContentBlock::Text { text }],
        // The structured copy is dropped when the text had to be cut: the cap exists to bound
        // what reaches the model (ACI-48).
        structured_content: if cut { None } else { Some(value) },
        is_error: false,
    }
}

/// Replaces every `<name>_gz` byte array by the decompressed text under `<name>` (at most
/// [`GZ_TEXT_MAX_U16`] units, `<name>_truncated: true` when cut). An undecodable gzip is kept as
/// base64 and flagged `<name>_gz_error`.
fn decode_gz_fields(result: &Bundle, map: &mut Map<String, Value>) {
    for (key, value) in result.iter() {
        let Some(base) = key.strip_suffix("_gz") else {
            continue;
        };
        let BundleValue::ByteArray(Some(gz)) = value else {
            continue;
        };
        match http_capability::render::gunzip_bounded(gz, GZ_TEXT_MAX_U16) {
            Ok((text, truncated)) => {
                map.remove(key);
                map.insert(base.to_owned(), Value::String(text));
                if truncated {
                    map.insert(format!("{base}_truncated"), Value::Bool(true));
                }
            }
            Err(_) => {
                map.insert(format!("{key}_error"), Value::String("undecodable".into()));
            }
        }
    }
}

/// Caps `text` at [`MODEL_RESULT_MAX_U16`] units with a note; `(text, cut)`.
pub fn cap_u16(text: &str) -> (String, bool) {
    use http_capability::text::{len_u16, truncate_u16};
    let total = len_u16(text);
    if total <= MODEL_RESULT_MAX_U16 {
        return (text.to_owned(), false);
    }
    let note = format!("\n…[truncated, original length {total}]");
    let (prefix, _) = truncate_u16(text, MODEL_RESULT_MAX_U16.saturating_sub(len_u16(&note)));
    (format!("{prefix}{note}"), true)
}
