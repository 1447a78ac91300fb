//! Why a call failed: one `#[non_exhaustive]` enum, its ACI error code (Appendix E.4) and its
//! AgentOS tool-error code (Appendix B). Every message is one sentence for the model and never
//! contains the URL, headers, body or anything else the caller passed (SEC-12).

use capability_model::{CallError, ToolOutput};

use crate::policy::PolicyViolation;

/// Why the arguments were rejected before any network I/O (HTTP-07, HTTP-11, HTTP-03).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum InvalidParameter {
    /// `url` is missing, not a string, or blank.
    #[error("url is required")]
    MissingUrl,
    /// `url` does not parse as an absolute URL with a host.
    #[error("url must be an absolute http or https URL")]
    InvalidUrl,
    /// `url` has a scheme other than `http` / `https` (`file:`, `ftp:`, `data:` …).
    #[error("url must use the http or https scheme")]
    UnsupportedScheme,
    /// `method` is not an RFC 9110 token.
    #[error("method must be an HTTP method token such as GET or POST")]
    InvalidMethod,
    /// A parameter has the wrong JSON type.
    #[error("{0} must be a string")]
    NotAString(&'static str),
    /// `headers` is not a JSON object whose values are all strings.
    #[error("headers must be a JSON object of header names to string values")]
    HeadersNotObject,
    /// `headers` is larger than [`crate::limits::HEADERS_ARG_MAX_BYTES`].
    #[error("headers is too large")]
    HeadersTooLarge,
    /// A header name or value contains CR or LF (header injection).
    #[error("header names and values must not contain CR or LF")]
    HeaderInjection,
    /// A header name is not a token, or a value is not a valid header value.
    #[error("headers contains an invalid header name or value")]
    InvalidHeader,
    /// The caller tried to set a header the client manages (HTTP-11).
    #[error("the {0} header is managed by the client and may not be set")]
    ForbiddenHeader(&'static str),
}

/// Why `http_request` did not produce a result.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum HttpError {
    /// Bad arguments; nothing was sent (ACI `INVALID_PARAMETER`).
    #[error("Invalid parameter: {0}.")]
    InvalidParameter(#[from] InvalidParameter),
    /// The network policy refused the destination (or a redirect target); nothing was sent to it.
    #[error("{0}")]
    Refused(#[from] PolicyViolation),
    /// A redirect pointed at a destination the network policy refuses; the redirect was not
    /// followed.
    #[error("A redirect was not followed: {0}")]
    RedirectRefused(PolicyViolation),
    /// The connect or total timeout elapsed (HTTP-12 → `tool_timeout`).
    #[error("The request did not complete in time.")]
    Timeout,
    /// The host could not be resolved or the connection failed; nothing was received.
    #[error("The server could not be reached.")]
    Connect,
    /// TLS handshake or certificate verification failed.
    #[error("The TLS connection to the server could not be established or verified.")]
    Tls,
    /// The server redirected more often than the configured limit.
    #[error("The server redirected too many times.")]
    TooManyRedirects,
    /// The server sent a redirect without a usable `Location`.
    #[error("The server sent a redirect without a valid Location.")]
    BadRedirect,
    /// The server closed the connection, or answered something that is not HTTP, before a
    /// response head arrived (the request may have been processed).
    #[error("The server closed the connection or did not send a valid HTTP response.")]
    NoResponse,
    /// The connection closed before the whole body arrived.
    #[error("The connection closed before the whole response body arrived.")]
    BodyIncomplete,
    /// The body claims a content encoding (gzip) it does not have.
    #[error("The response body could not be decoded from its declared content encoding.")]
    BodyDecode,
    /// Processing the response failed inside capbridge.
    #[error("The response could not be processed.")]
    Internal,
    /// The caller cancelled the call.
    #[error("The request was cancelled.")]
    Cancelled,
}

/// ACI error codes (SPEC Appendix E.4, table (a)).
pub mod aci_code {
    /// `BAD_REQUEST`; seed 003's `INVALID_PARAMETER`.
    pub const BAD_REQUEST: i32 = 400;
    /// `PERMISSION_DENIED`.
    pub const PERMISSION_DENIED: i32 = 403;
    /// `INTERNAL_ERROR`.
    pub const INTERNAL_ERROR: i32 = 500;
    /// `SERVICE_UNAVAILABLE`.
    pub const SERVICE_UNAVAILABLE: i32 = 503;
    /// `TIMEOUT`.
    pub const TIMEOUT: i32 = 504;
}

impl HttpError {
    /// The ACI error code an ACI provider answers with (Appendix E.4).
    pub fn aci_error_code(&self) -> i32 {
        match self {
            HttpError::InvalidParameter(_) => aci_code::BAD_REQUEST,
            HttpError::Refused(_) | HttpError::RedirectRefused(_) => aci_code::PERMISSION_DENIED,
            HttpError::Timeout => aci_code::TIMEOUT,
            HttpError::Connect | HttpError::Tls => aci_code::SERVICE_UNAVAILABLE,
            _ => aci_code::INTERNAL_ERROR,
        }
    }

    /// The ACI error name (`INVALID_PARAMETER` for bad input, as seed 003 §6.1 spells it).
    pub fn aci_error_name(&self) -> &'static str {
        match self {
            HttpError::InvalidParameter(_) => "INVALID_PARAMETER",
            HttpError::Refused(_) | HttpError::RedirectRefused(_) => "PERMISSION_DENIED",
            HttpError::Timeout => "TIMEOUT",
            HttpError::Connect | HttpError::Tls => "SERVICE_UNAVAILABLE",
            _ => "INTERNAL_ERROR",
        }
    }

    /// The AgentOS tool-error code the model sees (Appendix B "Tool errors").
    pub fn agentos_code(&self) -> &'static str {
        match self {
            HttpError::Timeout => "tool_timeout",
            _ => "tool_failed",
        }
    }

    /// Maps to the `CapabilitySource::call` outcome: bad arguments and timeouts are
    /// [`CallError`]s; every other failure, a policy refusal included, is a tool error result
    /// (`isError: true`) with a one-sentence reason.
    pub fn into_call_result(self) -> Result<ToolOutput, CallError> {
        match self {
            HttpError::InvalidParameter(p) => Err(CallError::InvalidArguments(format!(
                "Invalid parameter: {p}."
            ))),
            HttpError::Timeout => Err(CallError::Timeout),
            HttpError::Cancelled => Err(CallError::Cancelled),
            other => Ok(ToolOutput::error(other.to_string())),
        }
    }
}
