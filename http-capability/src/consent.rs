//! What the consent prompt shows for one `http_request` call (HTTP-10): method,
//! `scheme://host[:port]/path`, a "local network" label, the query string sanitized (SEC-04),
//! and header values with credentials masked. Pure; no DNS.

use std::fmt::Write as _;

use serde_json::{Map, Value};

use crate::error::InvalidParameter;
use crate::limits::CONSENT_FIELD_MAX_CP;
use crate::policy::{AddressClass, classify, normalize_host};
use crate::request::{HttpRequest, is_sensitive_header};

/// The mask shown instead of a credential header's value.
pub const MASK: &str = "•••";

/// The label shown for local-network destinations.
pub const LOCAL_NETWORK_LABEL: &str = "local network";

/// One consent card's content.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConsentSummary {
    /// The method, e.g. `GET`.
    pub method: String,
    /// `scheme://host[:port]/path` — no user info, no query, no fragment.
    pub target: String,
    /// The query string, sanitized and bracketed (SEC-04), when there is one.
    pub query: Option<String>,
    /// The host is a private, link-local or loopback address, `localhost`, or a `.local` name.
    pub local_network: bool,
    /// Header name → sanitized value, or [`MASK`] for credentials.
    pub headers: Vec<(String, String)>,
    /// Length of the body in UTF-16 units (the body itself is not shown).
    pub body_u16: usize,
}

impl ConsentSummary {
    /// Builds the summary from validated arguments; invalid arguments are the same
    /// [`InvalidParameter`] the call would fail with.
    pub fn from_arguments(args: &Map<String, Value>) -> Result<Self, InvalidParameter> {
        let req = HttpRequest::from_arguments(args)?;
        let url = &req.url;
        let host = url.host_str().unwrap_or("");
        let mut target = format!("{}://{}", url.scheme(), host);
        if let Some(port) = url.port() {
            let _ = write!(target, ":{port}");
        }
        target.push_str(url.path());
        let headers = req
            .headers
            .iter()
            .map(|(n, v)| {
                let shown = if is_sensitive_header(n.as_str()) {
                    MASK.to_owned()
                } else {
                    sanitize(&String::from_utf8_lossy(v.as_bytes()))
                };
                (n.as_str().to_owned(), shown)
            })
            .collect();
        Ok(Self {
            method: req.method.as_str().to_owned(),
            target,
            query: url.query().filter(|q| !q.is_empty()).map(sanitize),
            local_network: is_local_host(host),
            headers,
            body_u16: req.body.as_deref().map_or(0, crate::text::len_u16),
        })
    }

    /// The card text, one item per line.
    pub fn to_text(&self) -> String {
        let mut out = format!("{} {}", self.method, self.target);
        if self.local_network {
            let _ = write!(out, " ({LOCAL_NETWORK_LABEL})");
        }
        if let Some(q) = &self.query {
            let _ = write!(out, "\nquery: {q}");
        }
        for (name, value) in &self.headers {
            let _ = write!(out, "\nheader {name}: {value}");
        }
        if self.body_u16 > 0 {
            let _ = write!(out, "\nbody: {} characters", self.body_u16);
        }
        out
    }
}

/// Whether a URL host gets the "local network" label (HTTP-10).
pub fn is_local_host(host: &str) -> bool {
    let trimmed = host.trim_start_matches('[').trim_end_matches(']');
    if let Ok(ip) = trimmed.parse() {
        return matches!(
            classify(ip),
            AddressClass::Loopback | AddressClass::Private | AddressClass::LinkLocalOrMetadata
        );
    }
    let h = normalize_host(host);
    h == "localhost" || h.ends_with(".localhost") || h == "local" || h.ends_with(".local")
}

/// SEC-04 sanitizer for third-party text in consent UI (the permissions crate's, so every
/// consent card frames text the same way): whitespace collapsed; controls, bidi controls and
/// zero-width characters dropped; truncated to [`CONSENT_FIELD_MAX_CP`] code points with `…`;
/// wrapped in `「…」`.
pub fn sanitize(s: &str) -> String {
    permissions::sanitize::sanitize_field(
        s,
        permissions::sanitize::SanitizeConfig {
            field_max_cp: CONSENT_FIELD_MAX_CP,
        },
    )
}
