//! The `http_request` arguments, validated before any network I/O (HTTP-02, HTTP-03, HTTP-07,
//! HTTP-11).

use reqwest::Method;
use reqwest::Url;
use reqwest::header::{HeaderName, HeaderValue};
use serde_json::{Map, Value};

use crate::error::InvalidParameter;
use crate::limits::HEADERS_ARG_MAX_BYTES;
use crate::policy::Scheme;

/// Parameter names (HTTP-02).
pub mod param {
    /// Target URL, required.
    pub const URL: &str = "url";
    /// HTTP method, default `GET`.
    pub const METHOD: &str = "method";
    /// Request headers: a JSON object encoded as a string.
    pub const HEADERS: &str = "headers";
    /// Request body, sent unchanged.
    pub const BODY: &str = "body";
}

/// Header names the caller may not set (HTTP-11); the client manages them.
pub const FORBIDDEN_HEADERS: [&str; 8] = [
    "content-length",
    "transfer-encoding",
    "connection",
    "upgrade",
    "te",
    "trailer",
    "expect",
    "host",
];

/// A validated request: what will be sent, before the network policy runs.
#[derive(Debug, Clone)]
pub struct HttpRequest {
    /// Absolute `http`/`https` URL, fragment removed.
    pub url: Url,
    /// The scheme of [`url`](Self::url).
    pub scheme: Scheme,
    /// Method; the six standard ones upper-cased, custom tokens as given.
    pub method: Method,
    /// Caller headers, in the order given.
    pub headers: Vec<(HeaderName, HeaderValue)>,
    /// Body, sent unchanged; `None` when absent.
    pub body: Option<String>,
}

impl HttpRequest {
    /// Validates tool arguments (HTTP-07). Pure: never touches the network.
    pub fn from_arguments(args: &Map<String, Value>) -> Result<Self, InvalidParameter> {
        let (url, scheme) = parse_url(args.get(param::URL))?;
        let method = parse_method(args.get(param::METHOD))?;
        let headers = parse_headers(args.get(param::HEADERS))?;
        let body = match args.get(param::BODY) {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(_) => return Err(InvalidParameter::NotAString(param::BODY)),
        };
        Ok(Self {
            url,
            scheme,
            method,
            headers,
            body,
        })
    }
}

/// Parses `url`: present, not blank, absolute, `http`/`https`, with a host.
pub fn parse_url(v: Option<&Value>) -> Result<(Url, Scheme), InvalidParameter> {
    let raw = match v {
        None | Some(Value::Null) => return Err(InvalidParameter::MissingUrl),
        Some(Value::String(s)) => s,
        Some(_) => return Err(InvalidParameter::NotAString(param::URL)),
    };
    if raw.trim().is_empty() {
        return Err(InvalidParameter::MissingUrl);
    }
    let mut url = Url::parse(raw.trim()).map_err(|_| InvalidParameter::InvalidUrl)?;
    let scheme = Scheme::parse(url.scheme()).ok_or(InvalidParameter::UnsupportedScheme)?;
    match url.host_str() {
        Some(h) if !h.is_empty() => {}
        _ => return Err(InvalidParameter::InvalidUrl),
    }
    url.set_fragment(None);
    Ok((url, scheme))
}

/// True when `s` is an RFC 9110 token: `[!#$%&'*+.^_`|~0-9A-Za-z-]+` (HTTP-03).
pub fn is_token(s: &str) -> bool {
    !s.is_empty()
        && s.bytes().all(|b| {
            b.is_ascii_alphanumeric()
                || matches!(
                    b,
                    b'!' | b'#'
                        | b'$'
                        | b'%'
                        | b'&'
                        | b'\''
                        | b'*'
                        | b'+'
                        | b'.'
                        | b'^'
                        | b'_'
                        | b'`'
                        | b'|'
                        | b'~'
                        | b'-'
                )
        })
}

const STANDARD_METHODS: [&str; 6] = ["GET", "POST", "PUT", "DELETE", "PATCH", "HEAD"];

/// Parses `method`: absent or blank is `GET`; the six standard methods in any case; any other
/// token is a custom method sent as given (HTTP-03).
pub fn parse_method(v: Option<&Value>) -> Result<Method, InvalidParameter> {
    let raw = match v {
        None | Some(Value::Null) => return Ok(Method::GET),
        Some(Value::String(s)) => s.trim(),
        Some(_) => return Err(InvalidParameter::NotAString(param::METHOD)),
    };
    if raw.is_empty() {
        return Ok(Method::GET);
    }
    if !is_token(raw) {
        return Err(InvalidParameter::InvalidMethod);
    }
    let name = STANDARD_METHODS
        .iter()
        .find(|m| m.eq_ignore_ascii_case(raw))
        .copied()
        .unwrap_or(raw);
    Method::from_bytes(name.as_bytes()).map_err(|_| InvalidParameter::InvalidMethod)
}

/// Parses `headers`: a JSON string encoding an object of string → string (HTTP-02, HTTP-07).
/// An object value is accepted too (ACI `json` params may arrive unserialized, ACI-42).
pub fn parse_headers(
    v: Option<&Value>,
) -> Result<Vec<(HeaderName, HeaderValue)>, InvalidParameter> {
    let parsed;
    let obj = match v {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::String(s)) if s.trim().is_empty() => return Ok(Vec::new()),
        Some(Value::String(s)) => {
            if s.len() > HEADERS_ARG_MAX_BYTES {
                return Err(InvalidParameter::HeadersTooLarge);
            }
            parsed =
                serde_json::from_str::<Value>(s).map_err(|_| InvalidParameter::HeadersNotObject)?;
            match &parsed {
                Value::Object(m) => m,
                _ => return Err(InvalidParameter::HeadersNotObject),
            }
        }
        Some(Value::Object(m)) => m,
        Some(_) => return Err(InvalidParameter::HeadersNotObject),
    };
    let mut out = Vec::with_capacity(obj.len());
    for (name, value) in obj {
        let Value::String(value) = value else {
            return Err(InvalidParameter::HeadersNotObject);
        };
        if has_cr_or_lf(name) || has_cr_or_lf(value) {
            return Err(InvalidParameter::HeaderInjection);
        }
        if let Some(forbidden) = FORBIDDEN_HEADERS
            .iter()
            .find(|f| f.eq_ignore_ascii_case(name.trim()))
        {
            return Err(InvalidParameter::ForbiddenHeader(forbidden));
        }
        let name =
            HeaderName::from_bytes(name.as_bytes()).map_err(|_| InvalidParameter::InvalidHeader)?;
        let value = HeaderValue::from_bytes(value.trim().as_bytes())
            .map_err(|_| InvalidParameter::InvalidHeader)?;
        out.push((name, value));
    }
    Ok(out)
}

fn has_cr_or_lf(s: &str) -> bool {
    s.bytes().any(|b| b == b'\r' || b == b'\n')
}

/// Headers whose values are credentials: masked in consent text (HTTP-10) and dropped when a
/// redirect leaves the original origin. `Authorization`, `Cookie`, `Proxy-Authorization`, and
/// any name containing `token`, `key` or `secret` (case-insensitive).
pub fn is_sensitive_header(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    matches!(
        lower.as_str(),
        "authorization" | "cookie" | "proxy-authorization"
    ) || ["token", "key", "secret"].iter().any(|w| lower.contains(w))
}
