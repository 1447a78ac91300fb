//! The executor: reqwest (rustls, gzip), no cookie store, no proxy, manual redirects with the
//! policy re-checked on every hop, a connect and a total timeout, and a hard cap on bytes read
//! (issue 5 §2, HTTP-12).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use reqwest::header::{CONTENT_TYPE, HeaderName, HeaderValue, LOCATION};
use reqwest::{Method, StatusCode, Url};
use serde_json::{Map, Value};

use crate::body::{decode_body, gzip_text, truncate_body};
use crate::error::HttpError;
use crate::limits::{
    BODY_READ_MAX_DEFAULT, CONNECT_TIMEOUT_DEFAULT, GZ_OUTPUT_MAX_BYTES, MAX_REDIRECTS_DEFAULT,
    RESPONSE_BODY_MAX_U16, TOTAL_TIMEOUT_DEFAULT,
};
use crate::policy::{NetworkPolicy, PolicyViolation, Scheme};
use crate::request::{HttpRequest, is_sensitive_header};
use crate::resolver::{HostResolver, PolicyResolver, SystemResolver, find_violation};
use crate::result::HttpResult;

/// When to attach `response_body_gz` (HTTP-06, E.7).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum GzipMode {
    /// Whenever the gzip of the whole body fits in 900 KiB (the ACI reference behaviour).
    #[default]
    Always,
    /// Only when `response_body` was truncated (the only case where it adds information).
    WhenTruncated,
    /// Never.
    Never,
}

/// Configuration of the executor. [`Default`] uses the SPEC defaults and the strict policy.
#[derive(Debug, Clone)]
pub struct HttpConfig {
    /// The network policy.
    pub policy: NetworkPolicy,
    /// Connect timeout (HTTP-12, CFG 10 s).
    pub connect_timeout: Duration,
    /// Total timeout of a call, redirects and body included (HTTP-12, CFG 30 s).
    pub total_timeout: Duration,
    /// Hard cap on (decompressed) body bytes read; beyond it the body is cut and
    /// `truncated = true` (default 16 MiB).
    pub max_body_bytes: usize,
    /// Redirects followed, each re-checked against the policy (default 5). `0` returns every
    /// 3xx as-is with its `Location` header (SPEC HTTP-12's reading).
    pub max_redirects: usize,
    /// When `response_body_gz` is attached.
    pub gzip_mode: GzipMode,
    /// `User-Agent` sent unless the caller sets one.
    pub user_agent: String,
}

impl Default for HttpConfig {
    fn default() -> Self {
        Self {
            policy: NetworkPolicy::default(),
            connect_timeout: CONNECT_TIMEOUT_DEFAULT,
            total_timeout: TOTAL_TIMEOUT_DEFAULT,
            max_body_bytes: BODY_READ_MAX_DEFAULT,
            max_redirects: MAX_REDIRECTS_DEFAULT,
            gzip_mode: GzipMode::Always,
            user_agent: concat!("capbridge-http_request/", env!("CARGO_PKG_VERSION")).to_owned(),
        }
    }
}

/// The HTTP client could not be built (TLS roots or crypto provider unavailable).
#[derive(Debug, thiserror::Error)]
#[error("the HTTP client could not be built")]
pub struct BuildError(#[source] reqwest::Error);

/// Runs `http_request` calls. Cheap to share (`Arc` inside reqwest); one per process is enough.
#[derive(Debug, Clone)]
pub struct HttpExecutor {
    config: Arc<HttpConfig>,
    /// Client for cleartext `http`: its resolver applies the cleartext rule.
    http: reqwest::Client,
    /// Client for `https`.
    https: reqwest::Client,
}

impl HttpExecutor {
    /// An executor resolving names with the operating system's resolver.
    pub fn new(config: HttpConfig) -> Result<Self, BuildError> {
        Self::with_resolver(config, Arc::new(SystemResolver))
    }

    /// An executor resolving names with `resolver` (tests use a
    /// [`crate::StaticResolver`]). Every resolved address goes through the policy.
    pub fn with_resolver(
        config: HttpConfig,
        resolver: Arc<dyn HostResolver>,
    ) -> Result<Self, BuildError> {
        let policy = Arc::new(config.policy.clone());
        let build = |scheme: Scheme| {
            reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .no_proxy()
                .connect_timeout(config.connect_timeout)
                .user_agent(config.user_agent.clone())
                .gzip(true)
                .dns_resolver(Arc::new(PolicyResolver {
                    inner: resolver.clone(),
                    policy: policy.clone(),
                    scheme,
                }))
                .build()
                .map_err(BuildError)
        };
        Ok(Self {
            http: build(Scheme::Http)?,
            https: build(Scheme::Https)?,
            config: Arc::new(config),
        })
    }

    /// The configuration in use.
    pub fn config(&self) -> &HttpConfig {
        &self.config
    }

    /// Validates `arguments` (HTTP-07; no I/O on failure) and runs the request.
    pub async fn execute(&self, arguments: &Map<String, Value>) -> Result<HttpResult, HttpError> {
        let request = HttpRequest::from_arguments(arguments)?;
        self.send(request).await
    }

    /// Runs a validated request under the total timeout.
    pub async fn send(&self, request: HttpRequest) -> Result<HttpResult, HttpError> {
        let started = Instant::now();
        let outcome = tokio::time::timeout(self.config.total_timeout, self.run(request))
            .await
            .unwrap_or(Err(HttpError::Timeout));
        let elapsed_ms = started.elapsed().as_millis() as u64;
        match &outcome {
            Ok(r) => tracing::info!(
                capability = "http_request",
                status = r.status_code,
                body_bytes = r.response_body.len(),
                truncated = r.truncated,
                gz_bytes = r.response_body_gz.as_ref().map_or(0, Vec::len),
                elapsed_ms,
                "http_request done"
            ),
            Err(e) => tracing::info!(
                capability = "http_request",
                error = e.agentos_code(),
                aci_code = e.aci_error_code(),
                elapsed_ms,
                "http_request failed"
            ),
        }
        outcome
    }

    async fn run(&self, request: HttpRequest) -> Result<HttpResult, HttpError> {
        let policy = &self.config.policy;
        policy.check_url(&request.url)?;
        let HttpRequest {
            mut url,
            mut scheme,
            mut method,
            mut headers,
            mut body,
        } = request;
        let mut hops = 0usize;
        loop {
            let client = match scheme {
                Scheme::Http => &self.http,
                Scheme::Https => &self.https,
            };
            let mut rb = client.request(method.clone(), url.clone());
            for (name, value) in &headers {
                rb = rb.header(name, value);
            }
            if let Some(b) = &body {
                rb = rb.body(b.clone());
            }
            let response = rb.send().await.map_err(|e| send_error(&e, hops))?;
            self.check_peer(&url, scheme, &response, hops)?;

            let status = response.status();
            let location = response.headers().get(LOCATION);
            if let Some(location) =
                location.filter(|_| self.config.max_redirects > 0 && is_followed_redirect(status))
            {
                if hops >= self.config.max_redirects {
                    return Err(HttpError::TooManyRedirects);
                }
                let next = redirect_target(&url, location)?;
                scheme = Scheme::parse(next.scheme()).ok_or(HttpError::RedirectRefused(
                    PolicyViolation::UnsupportedScheme,
                ))?;
                policy
                    .check_url(&next)
                    .map_err(HttpError::RedirectRefused)?;
                rewrite_for_redirect(status, &mut method, &mut body, &mut headers);
                if !same_origin(&url, &next) {
                    headers.retain(|(n, _)| !is_sensitive_header(n.as_str()));
                }
                url = next;
                hops += 1;
                continue;
            }
            return self.read_response(response).await;
        }
    }

    /// Defence in depth: the peer address of the response must pass the policy too.
    fn check_peer(
        &self,
        url: &Url,
        scheme: Scheme,
        response: &reqwest::Response,
        hops: usize,
    ) -> Result<(), HttpError> {
        let Some(peer) = response.remote_addr() else {
            return Ok(());
        };
        let policy = &self.config.policy;
        let host = url.host_str().unwrap_or("");
        let name_allowed = policy.check_name(host).unwrap_or(false);
        policy
            .check_addr(peer.ip(), scheme, name_allowed)
            .map_err(|v| refused(v, hops))
    }

    async fn read_response(
        &self,
        mut response: reqwest::Response,
    ) -> Result<HttpResult, HttpError> {
        let status_code = response.status().as_u16();
        let mut response_headers: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for (name, value) in response.headers() {
            response_headers
                .entry(name.as_str().to_owned())
                .or_default()
                .push(String::from_utf8_lossy(value.as_bytes()).into_owned());
        }
        let content_type = response
            .headers()
            .get(CONTENT_TYPE)
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());

        let cap = self.config.max_body_bytes;
        let hint = response.content_length().unwrap_or(0) as usize;
        let mut buf: Vec<u8> = Vec::with_capacity(hint.min(cap).min(1024 * 1024));
        let mut over_cap = false;
        while let Some(chunk) = response.chunk().await.map_err(|e| body_error(&e))? {
            let room = cap - buf.len();
            if chunk.len() > room {
                buf.extend_from_slice(&chunk[..room]);
                over_cap = true;
                break;
            }
            buf.extend_from_slice(&chunk);
        }
        drop(response);

        let gzip_mode = self.config.gzip_mode;
        let large = buf.len() > BLOCKING_THRESHOLD_BYTES;
        let finish = move || {
            let decoded = decode_body(&buf, content_type.as_deref());
            drop(buf);
            let (response_body, cut) = truncate_body(&decoded.text, RESPONSE_BODY_MAX_U16);
            let truncated = cut || over_cap;
            let response_body_gz = match gzip_mode {
                GzipMode::Always => gzip_text(&decoded.text, GZ_OUTPUT_MAX_BYTES),
                GzipMode::WhenTruncated if truncated => {
                    gzip_text(&decoded.text, GZ_OUTPUT_MAX_BYTES)
                }
                _ => None,
            };
            HttpResult {
                status_code,
                response_headers,
                response_body,
                truncated,
                body_encoding: decoded.encoding,
                response_body_gz,
            }
        };
        // Decoding and compressing a large body is CPU work: keep it off the async workers.
        if large {
            tokio::task::spawn_blocking(finish)
                .await
                .map_err(|_| HttpError::Internal)
        } else {
            Ok(finish())
        }
    }
}

/// Bodies larger than this are decoded and compressed on a blocking thread.
const BLOCKING_THRESHOLD_BYTES: usize = 256 * 1024;

fn is_followed_redirect(status: StatusCode) -> bool {
    matches!(status.as_u16(), 301 | 302 | 303 | 307 | 308)
}

fn redirect_target(base: &Url, location: &HeaderValue) -> Result<Url, HttpError> {
    let loc = location.to_str().map_err(|_| HttpError::BadRedirect)?;
    let next = base.join(loc.trim()).map_err(|_| HttpError::BadRedirect)?;
    if next.host_str().is_none_or(str::is_empty) {
        return Err(HttpError::RedirectRefused(
            PolicyViolation::UnsupportedScheme,
        ));
    }
    Ok(next)
}

/// RFC 9110 §15.4: 303 turns everything but HEAD into GET; 301/302 turn POST into GET (as
/// every browser does); 307/308 keep method and body.
fn rewrite_for_redirect(
    status: StatusCode,
    method: &mut Method,
    body: &mut Option<String>,
    headers: &mut Vec<(HeaderName, HeaderValue)>,
) {
    let to_get = match status.as_u16() {
        303 => *method != Method::HEAD && *method != Method::GET,
        301 | 302 => *method == Method::POST,
        _ => false,
    };
    if to_get {
        *method = Method::GET;
        *body = None;
        headers.retain(|(n, _)| !matches!(n.as_str(), "content-type" | "content-encoding"));
    }
}

fn same_origin(a: &Url, b: &Url) -> bool {
    a.scheme() == b.scheme()
        && a.host_str() == b.host_str()
        && a.port_or_known_default() == b.port_or_known_default()
}

fn refused(v: PolicyViolation, hops: usize) -> HttpError {
    if hops == 0 {
        HttpError::Refused(v)
    } else {
        HttpError::RedirectRefused(v)
    }
}

fn send_error(e: &reqwest::Error, hops: usize) -> HttpError {
    if let Some(v) = find_violation(e) {
        return refused(v, hops);
    }
    if e.is_timeout() || has_io_kind(e, std::io::ErrorKind::TimedOut) {
        return HttpError::Timeout;
    }
    if has_io_kind(e, std::io::ErrorKind::InvalidData) {
        return HttpError::Tls;
    }
    if e.is_connect() {
        return HttpError::Connect;
    }
    HttpError::NoResponse
}

/// Body errors: with the gzip layer every body error is a reqwest "decode" error, so the io
/// error kind underneath tells a cut-off body (`UnexpectedEof`) from bad gzip (`InvalidData`).
fn body_error(e: &reqwest::Error) -> HttpError {
    if e.is_timeout() || has_io_kind(e, std::io::ErrorKind::TimedOut) {
        HttpError::Timeout
    } else if has_io_kind(e, std::io::ErrorKind::UnexpectedEof) {
        HttpError::BodyIncomplete
    } else if has_io_kind(e, std::io::ErrorKind::InvalidData) {
        HttpError::BodyDecode
    } else {
        HttpError::BodyIncomplete
    }
}

fn has_io_kind(e: &(dyn std::error::Error + 'static), kind: std::io::ErrorKind) -> bool {
    crate::resolver::error_chain(e).any(|err| {
        err.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == kind)
    })
}
