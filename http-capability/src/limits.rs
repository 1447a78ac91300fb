//! Every numeric limit of `http_request`, as named constants (GEN-01, SPEC Appendix C).
//!
//! Values SPEC marks **CFG** are defaults of [`crate::HttpConfig`]; the rest are protocol
//! constants.

use std::time::Duration;

/// `response_body` maximum, in UTF-16 code units (HTTP-05, Appendix C "`http_request` body").
pub const RESPONSE_BODY_MAX_U16: usize = 150_000;

/// Largest `response_body_gz` the renderer accepts, in bytes of compressed input (HTTP-06,
/// Appendix C "gzip compressed input ≤ 1 MiB").
pub const GZ_INPUT_MAX_BYTES: usize = 1024 * 1024;

/// `response_body_gz` is attached only while the compressed body is at most this many bytes
/// (Appendix E.7 "at most 900 KB"; KB read as KiB, the larger of the two readings, still well
/// under [`GZ_INPUT_MAX_BYTES`]).
pub const GZ_OUTPUT_MAX_BYTES: usize = 900 * 1024;

/// Default hard cap on response bytes read from the network (issue 5: "configurable, default
/// 16 MiB"); counted after transfer decoding.
pub const BODY_READ_MAX_DEFAULT: usize = 16 * 1024 * 1024;

/// Default redirect limit; each hop re-checks the network policy (issue 5).
pub const MAX_REDIRECTS_DEFAULT: usize = 5;

/// Default connect timeout (HTTP-12, CFG 10 s).
pub const CONNECT_TIMEOUT_DEFAULT: Duration = Duration::from_secs(10);

/// Default total timeout of one call, redirects and body included (HTTP-12, CFG 30 s).
pub const TOTAL_TIMEOUT_DEFAULT: Duration = Duration::from_secs(30);

/// Model-bound tool result maximum, in UTF-16 code units (HTTP-13, ACI-48, Appendix C
/// "Model-bound tool result 32,768").
pub const MODEL_RESULT_MAX_U16: usize = 32_768;

/// Consent text: per-field maximum in code points before `…` is appended (SEC-04 step 6,
/// CFG 256 CP), used for the query string and header values (HTTP-10).
pub const CONSENT_FIELD_MAX_CP: usize = 256;

/// Largest request-header block a caller may pass in `headers`, in bytes of the JSON string.
/// Not in SPEC: a guard so a pathological argument cannot allocate without bound before
/// validation fails (SMS-03's 16 × 4,096 U16 would need 64 KiB; this leaves room).
pub const HEADERS_ARG_MAX_BYTES: usize = 256 * 1024;

#[cfg(test)]
mod tests {
    use super::*;

    /// GEN-01: every constant against SPEC Appendix C / E.7 / HTTP-12 and issue 5.
    #[test]
    fn gen_01_limits_match_spec_appendix_c() {
        assert_eq!(RESPONSE_BODY_MAX_U16, 150_000);
        assert_eq!(GZ_INPUT_MAX_BYTES, 1_048_576);
        assert_eq!(GZ_OUTPUT_MAX_BYTES, 921_600);
        assert_eq!(BODY_READ_MAX_DEFAULT, 16_777_216);
        assert_eq!(MAX_REDIRECTS_DEFAULT, 5);
        assert_eq!(CONNECT_TIMEOUT_DEFAULT, Duration::from_secs(10));
        assert_eq!(TOTAL_TIMEOUT_DEFAULT, Duration::from_secs(30));
        assert_eq!(MODEL_RESULT_MAX_U16, 32_768);
        assert_eq!(CONSENT_FIELD_MAX_CP, 256);
        assert_eq!(HEADERS_ARG_MAX_BYTES, 262_144);
    }
}
