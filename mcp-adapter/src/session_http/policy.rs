//! Batch validation of the `mcpServers` a `session/new` (`load`, `resume`, `fork`) carries
//! (SMS-02, SMS-03) and the address rules shared with the DNS guard (SMS-04).
//!
//! Every failure is a [`BatchError`]: the rule's reason code and, where it concerns one entry,
//! that entry's index. Nothing the caller wrote (names, URLs, header names or values) ever
//! appears in it (SMS-02, SEC-15).

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use serde_json::Value;

use super::McpHttpServer;

/// At most this many servers per session (SMS-03, SPEC Appendix C).
pub const MAX_SERVERS: usize = 4;
/// Longest server name, characters (SMS-03).
pub const MAX_SERVER_NAME_CHARS: usize = 48;
/// Longest URL, UTF-16 units (SMS-03).
pub const MAX_URL_CHARS: usize = 2_048;
/// At most this many headers per server (SMS-03).
pub const MAX_HEADERS: usize = 16;
/// Longest header name, characters (SMS-03).
pub const MAX_HEADER_NAME_CHARS: usize = 128;
/// Longest header value, characters (SMS-03).
pub const MAX_HEADER_VALUE_CHARS: usize = 4_096;

/// Header names a caller may not set: the transport owns them (SMS-03).
pub const FORBIDDEN_HEADERS: [&str; 14] = [
    "host",
    "content-length",
    "content-type",
    "accept",
    "mcp-session-id",
    "mcp-protocol-version",
    "transfer-encoding",
    "connection",
    "upgrade",
    "te",
    "trailer",
    "proxy-authorization",
    "expect",
    "origin",
];

/// Host-name suffixes that name private networks (SMS-03).
const PRIVATE_SUFFIXES: [&str; 6] = [
    ".localhost",
    ".local",
    ".localdomain",
    ".internal",
    ".lan",
    ".home.arpa",
];

/// The rule a batch broke. [`BatchRule::code`] is the reason code SMS-03 lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum BatchRule {
    /// `mcpServers` is not an array, or an entry is not an object with string `name` and `url`
    /// and an array of `{name, value}` headers (local addition: the ACP shape itself).
    Malformed,
    /// An entry's `type` is not `"http"`: only Streamable HTTP servers are accepted (local
    /// addition; SMS-01 names `type:"http"`).
    ServerType,
    /// More than [`MAX_SERVERS`] servers.
    TooManyServers,
    /// A name outside `[A-Za-z0-9_.-]{1,48}`.
    ServerName,
    /// Two names equal case-insensitively.
    DuplicateServer,
    /// A URL longer than [`MAX_URL_CHARS`].
    UrlTooLong,
    /// Whitespace or control characters, not absolute, or not parseable.
    UrlInvalid,
    /// Userinfo (`user:pass@`) in the URL.
    UrlUserinfo,
    /// A scheme other than `https`.
    UrlScheme,
    /// A private or single-label host name, or a non-canonical numeric host.
    UrlHost,
    /// An IP literal that is not public.
    UrlIp,
    /// More than [`MAX_HEADERS`] headers.
    HeaderCount,
    /// A header name that is not an HTTP token of at most 128 characters.
    HeaderName,
    /// A header name the transport owns ([`FORBIDDEN_HEADERS`]).
    HeaderForbidden,
    /// Two header names equal case-insensitively.
    HeaderDuplicate,
    /// A header value too long or with characters other than visible ASCII and space.
    HeaderValue,
}

impl BatchRule {
    /// The short reason code (SMS-03).
    pub fn code(self) -> &'static str {
        match self {
            BatchRule::Malformed => "malformed",
            BatchRule::ServerType => "server_type",
            BatchRule::TooManyServers => "too_many_servers",
            BatchRule::ServerName => "server_name",
            BatchRule::DuplicateServer => "duplicate_server",
            BatchRule::UrlTooLong => "url_too_long",
            BatchRule::UrlInvalid => "url_invalid",
            BatchRule::UrlUserinfo => "url_userinfo",
            BatchRule::UrlScheme => "url_scheme",
            BatchRule::UrlHost => "url_host",
            BatchRule::UrlIp => "url_ip",
            BatchRule::HeaderCount => "header_count",
            BatchRule::HeaderName => "header_name",
            BatchRule::HeaderForbidden => "header_forbidden",
            BatchRule::HeaderDuplicate => "header_duplicate",
            BatchRule::HeaderValue => "header_value",
        }
    }
}

/// A batch failed validation: the request gets `invalid_params` and no session is created
/// (SMS-02). The message names the rule and the entry's index, never a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub struct BatchError {
    /// The rule that failed.
    pub rule: BatchRule,
    /// The index in `mcpServers` of the entry that broke it (none for batch-wide rules).
    pub index: Option<usize>,
}

impl fmt::Display for BatchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.index {
            Some(i) => write!(f, "mcpServers[{i}]: {}", self.rule.code()),
            None => write!(f, "mcpServers: {}", self.rule.code()),
        }
    }
}

impl BatchError {
    fn at(rule: BatchRule, index: usize) -> Self {
        Self {
            rule,
            index: Some(index),
        }
    }
}

/// Which URLs a session may name. [`SessionUrlPolicy::strict`] is SMS-03 as written and the
/// only policy a runtime serving real callers uses; [`SessionUrlPolicy::loopback_for_tests`]
/// additionally admits `http` and loopback IP literals, so tests can talk to servers on
/// 127.0.0.1 (every other rule still applies; host names such as `localhost` stay refused).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SessionUrlPolicy {
    allow_loopback: bool,
}

impl SessionUrlPolicy {
    /// SMS-03 / SMS-04: `https` only, public addresses only.
    pub fn strict() -> Self {
        Self {
            allow_loopback: false,
        }
    }

    /// Strict, plus `http://` and loopback IP literals (127.0.0.0/8, `::1`), and loopback
    /// addresses from resolution. For tests and local development only.
    pub fn loopback_for_tests() -> Self {
        Self {
            allow_loopback: true,
        }
    }

    /// Whether loopback is admitted.
    pub fn allows_loopback(self) -> bool {
        self.allow_loopback
    }

    /// Whether a connection to `ip` is allowed: public, or loopback under
    /// [`SessionUrlPolicy::loopback_for_tests`] (SMS-04).
    pub fn admits(self, ip: IpAddr) -> bool {
        is_public(ip) || (self.allow_loopback && is_loopback(ip))
    }
}

/// Parses the ACP `mcpServers` array (`[{type:"http", name, url, headers:[{name,value}]}]`)
/// and validates the whole batch ([`validate_batch`]). `None` and `null` are an empty batch.
pub fn parse_batch(
    value: Option<&Value>,
    policy: SessionUrlPolicy,
) -> Result<Vec<McpHttpServer>, BatchError> {
    let items = match value {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Array(items)) => items,
        Some(_) => {
            return Err(BatchError {
                rule: BatchRule::Malformed,
                index: None,
            });
        }
    };
    if items.len() > MAX_SERVERS {
        return Err(BatchError {
            rule: BatchRule::TooManyServers,
            index: None,
        });
    }
    let mut servers = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        servers.push(parse_entry(item).map_err(|rule| BatchError::at(rule, i))?);
    }
    validate_batch(&servers, policy)?;
    Ok(servers)
}

fn parse_entry(item: &Value) -> Result<McpHttpServer, BatchRule> {
    let obj = item.as_object().ok_or(BatchRule::Malformed)?;
    match obj.get("type") {
        Some(Value::String(t)) if t == "http" => {}
        Some(Value::String(_)) | None => return Err(BatchRule::ServerType),
        Some(_) => return Err(BatchRule::Malformed),
    }
    let text = |key: &str| {
        obj.get(key)
            .and_then(Value::as_str)
            .map(str::to_owned)
            .ok_or(BatchRule::Malformed)
    };
    let name = text("name")?;
    let url = text("url")?;
    let headers = match obj.get("headers") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(hs)) => {
            if hs.len() > MAX_HEADERS {
                return Err(BatchRule::HeaderCount);
            }
            let mut out = Vec::with_capacity(hs.len());
            for h in hs {
                let h = h.as_object().ok_or(BatchRule::Malformed)?;
                let field = |k: &str| {
                    h.get(k)
                        .and_then(Value::as_str)
                        .map(str::to_owned)
                        .ok_or(BatchRule::Malformed)
                };
                out.push((field("name")?, field("value")?));
            }
            out
        }
        Some(_) => return Err(BatchRule::Malformed),
    };
    Ok(McpHttpServer::new(name, url, headers))
}

/// Validates a whole batch (SMS-02, SMS-03): the first rule broken, in entry order.
pub fn validate_batch(
    servers: &[McpHttpServer],
    policy: SessionUrlPolicy,
) -> Result<(), BatchError> {
    if servers.len() > MAX_SERVERS {
        return Err(BatchError {
            rule: BatchRule::TooManyServers,
            index: None,
        });
    }
    let mut seen: Vec<String> = Vec::with_capacity(servers.len());
    for (i, s) in servers.iter().enumerate() {
        if !is_valid_server_name(s.name()) {
            return Err(BatchError::at(BatchRule::ServerName, i));
        }
        let folded = s.name().to_ascii_lowercase();
        if seen.contains(&folded) {
            return Err(BatchError::at(BatchRule::DuplicateServer, i));
        }
        seen.push(folded);
        check_url(s.url(), policy).map_err(|rule| BatchError::at(rule, i))?;
        check_headers(s.headers()).map_err(|rule| BatchError::at(rule, i))?;
    }
    Ok(())
}

fn is_valid_server_name(name: &str) -> bool {
    (1..=MAX_SERVER_NAME_CHARS).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
}

/// The URL rules of SMS-03.
pub fn check_url(url: &str, policy: SessionUrlPolicy) -> Result<(), BatchRule> {
    if url.encode_utf16().count() > MAX_URL_CHARS {
        return Err(BatchRule::UrlTooLong);
    }
    if url.is_empty() || url.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(BatchRule::UrlInvalid);
    }
    let Ok(parsed) = reqwest::Url::parse(url) else {
        // `https://8.8.8.08/` or `https://1.2.3.256/` fail to parse: still a numeric host
        // that is not canonical dotted-decimal.
        let numeric = raw_host(url).is_some_and(|h| {
            let h = h.strip_suffix('.').unwrap_or(h);
            is_numeric_label(&h.rsplit('.').next().unwrap_or(h).to_ascii_lowercase())
        });
        return Err(if numeric {
            BatchRule::UrlHost
        } else {
            BatchRule::UrlInvalid
        });
    };
    if parsed.cannot_be_a_base() || parsed.host_str().is_none() {
        return Err(BatchRule::UrlInvalid);
    }
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return Err(BatchRule::UrlUserinfo);
    }
    let scheme_ok = match parsed.scheme() {
        "https" => true,
        "http" => policy.allow_loopback,
        _ => false,
    };
    if !scheme_ok {
        return Err(BatchRule::UrlScheme);
    }
    let raw = raw_host(url).ok_or(BatchRule::UrlInvalid)?;
    if let Some(v6) = raw.strip_prefix('[') {
        let inner = v6.strip_suffix(']').ok_or(BatchRule::UrlInvalid)?;
        let ip: Ipv6Addr = inner.parse().map_err(|_| BatchRule::UrlInvalid)?;
        if !policy.admits(IpAddr::V6(ip)) {
            return Err(BatchRule::UrlIp);
        }
        return Ok(());
    }
    let host = raw.to_ascii_lowercase();
    let host = host.strip_suffix('.').unwrap_or(&host);
    let last = host.rsplit('.').next().unwrap_or(host);
    if is_numeric_label(last) {
        let ip = canonical_ipv4(host).ok_or(BatchRule::UrlHost)?;
        if !policy.admits(IpAddr::V4(ip)) {
            return Err(BatchRule::UrlIp);
        }
        return Ok(());
    }
    // A name: judged as the URL parser normalized it (lowercase, punycode).
    let name = parsed.host_str().ok_or(BatchRule::UrlInvalid)?;
    let name = name.strip_suffix('.').unwrap_or(name);
    if name == "localhost"
        || PRIVATE_SUFFIXES.iter().any(|s| name.ends_with(s))
        || !name.contains('.')
    {
        return Err(BatchRule::UrlHost);
    }
    Ok(())
}

/// The host exactly as written (before the URL parser turns `127.1` into `127.0.0.1`).
fn raw_host(url: &str) -> Option<&str> {
    let rest = &url[url.find("://")? + 3..];
    let end = rest.find(['/', '?', '#', '\\']).unwrap_or(rest.len());
    let authority = &rest[..end];
    let hostport = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    if hostport.starts_with('[') {
        let close = hostport.find(']')?;
        return Some(&hostport[..=close]);
    }
    Some(hostport.split(':').next().unwrap_or(hostport))
}

fn is_numeric_label(label: &str) -> bool {
    if label.is_empty() {
        return false;
    }
    if label.bytes().all(|b| b.is_ascii_digit()) {
        return true;
    }
    label
        .strip_prefix("0x")
        .is_some_and(|h| h.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// `a.b.c.d` with four decimal parts 0–255 and no leading zeros, else `None`.
fn canonical_ipv4(host: &str) -> Option<Ipv4Addr> {
    let parts: Vec<&str> = host.split('.').collect();
    if parts.len() != 4 {
        return None;
    }
    let mut octets = [0u8; 4];
    for (o, p) in octets.iter_mut().zip(&parts) {
        if p.is_empty()
            || p.len() > 3
            || !p.bytes().all(|b| b.is_ascii_digit())
            || (p.len() > 1 && p.starts_with('0'))
        {
            return None;
        }
        *o = p.parse().ok()?;
    }
    Some(Ipv4Addr::from(octets))
}

/// The header rules of SMS-03.
pub fn check_headers(headers: &[(String, String)]) -> Result<(), BatchRule> {
    if headers.len() > MAX_HEADERS {
        return Err(BatchRule::HeaderCount);
    }
    let mut seen: Vec<String> = Vec::with_capacity(headers.len());
    for (name, value) in headers {
        if name.is_empty() || name.len() > MAX_HEADER_NAME_CHARS || !name.bytes().all(is_tchar) {
            return Err(BatchRule::HeaderName);
        }
        let folded = name.to_ascii_lowercase();
        if FORBIDDEN_HEADERS.contains(&folded.as_str()) {
            return Err(BatchRule::HeaderForbidden);
        }
        if seen.contains(&folded) {
            return Err(BatchRule::HeaderDuplicate);
        }
        seen.push(folded);
        if value.len() > MAX_HEADER_VALUE_CHARS
            || !value.bytes().all(|b| (0x20..=0x7e).contains(&b))
        {
            return Err(BatchRule::HeaderValue);
        }
    }
    Ok(())
}

/// RFC 9110 `tchar`.
fn is_tchar(b: u8) -> bool {
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
                | b'-'
                | b'.'
                | b'^'
                | b'_'
                | b'`'
                | b'|'
                | b'~'
        )
}

fn is_loopback(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => v4.is_loopback(),
        IpAddr::V6(v6) => {
            v6.is_loopback() || v6.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback())
        }
    }
}

/// Whether `ip` is a public address by the lists of SMS-03.
pub fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_public_v4(v4),
        IpAddr::V6(v6) => is_public_v6(v6),
    }
}

fn in_v4(ip: Ipv4Addr, net: [u8; 4], prefix: u32) -> bool {
    let mask = if prefix == 0 {
        0
    } else {
        u32::MAX << (32 - prefix)
    };
    (u32::from(ip) & mask) == (u32::from(Ipv4Addr::from(net)) & mask)
}

/// IPv4: not in 0/8, 10/8, 100.64/10, 127/8, 169.254/16, 172.16/12, 192.0.0/24, 192.0.2/24,
/// 192.88.99/24, 192.168/16, 198.18/15, 198.51.100/24, 203.0.113/24, 224/4 and above.
pub fn is_public_v4(ip: Ipv4Addr) -> bool {
    const BLOCKED: [([u8; 4], u32); 14] = [
        ([0, 0, 0, 0], 8),
        ([10, 0, 0, 0], 8),
        ([100, 64, 0, 0], 10),
        ([127, 0, 0, 0], 8),
        ([169, 254, 0, 0], 16),
        ([172, 16, 0, 0], 12),
        ([192, 0, 0, 0], 24),
        ([192, 0, 2, 0], 24),
        ([192, 88, 99, 0], 24),
        ([192, 168, 0, 0], 16),
        ([198, 18, 0, 0], 15),
        ([198, 51, 100, 0], 24),
        ([203, 0, 113, 0], 24),
        ([224, 0, 0, 0], 3), // 224/4 and 240/4: everything from 224.0.0.0 up
    ];
    !BLOCKED.iter().any(|&(net, p)| in_v4(ip, net, p))
}

fn in_v6(ip: Ipv6Addr, net: Ipv6Addr, prefix: u32) -> bool {
    let mask = if prefix == 0 {
        0
    } else {
        u128::MAX << (128 - prefix)
    };
    (u128::from(ip) & mask) == (u128::from(net) & mask)
}

/// IPv6: only 2000::/3, minus Teredo (2001::/32), documentation (2001:db8::/32, 3fff::/20)
/// and benchmarking (2001:2::/48); IPv4-mapped (::ffff:0:0/96), NAT64 (64:ff9b::/96) and 6to4
/// (2002::/16) addresses are judged by the IPv4 address they embed.
pub fn is_public_v6(ip: Ipv6Addr) -> bool {
    let bits = u128::from(ip);
    if let Some(v4) = ip.to_ipv4_mapped() {
        return is_public_v4(v4);
    }
    if in_v6(ip, Ipv6Addr::new(0x64, 0xff9b, 0, 0, 0, 0, 0, 0), 96) {
        // Truncation keeps the low 32 bits: the embedded IPv4 address.
        return is_public_v4(Ipv4Addr::from(bits as u32));
    }
    if in_v6(ip, Ipv6Addr::new(0x2002, 0, 0, 0, 0, 0, 0, 0), 16) {
        return is_public_v4(Ipv4Addr::from(((bits >> 80) & 0xffff_ffff) as u32));
    }
    if !in_v6(ip, Ipv6Addr::new(0x2000, 0, 0, 0, 0, 0, 0, 0), 3) {
        return false;
    }
    let blocked = [
        (Ipv6Addr::new(0x2001, 0, 0, 0, 0, 0, 0, 0), 32),
        (Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 0), 32),
        (Ipv6Addr::new(0x3fff, 0, 0, 0, 0, 0, 0, 0), 20),
        (Ipv6Addr::new(0x2001, 2, 0, 0, 0, 0, 0, 0), 48),
    ];
    !blocked.iter().any(|&(net, p)| in_v6(ip, net, p))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn numeric_hosts_must_be_canonical_dotted_decimal() {
        for host in ["2130706433", "127.1", "0x7f.0.0.1", "1.2.3.04", "8.8.8.010"] {
            assert_eq!(
                check_url(&format!("https://{host}/mcp"), SessionUrlPolicy::strict()),
                Err(BatchRule::UrlHost),
                "{host}"
            );
        }
        assert_eq!(
            check_url("https://8.8.8.8/mcp", SessionUrlPolicy::strict()),
            Ok(())
        );
        assert_eq!(
            check_url("https://1.2.3.256/mcp", SessionUrlPolicy::strict()),
            Err(BatchRule::UrlHost)
        );
    }

    #[test]
    fn ipv4_ranges() {
        for ip in [
            "0.1.2.3",
            "10.0.0.1",
            "100.64.0.1",
            "100.127.255.255",
            "127.0.0.1",
            "169.254.1.1",
            "172.16.0.1",
            "172.31.255.255",
            "192.0.0.8",
            "192.0.2.1",
            "192.88.99.1",
            "192.168.1.1",
            "198.18.0.1",
            "198.19.255.255",
            "198.51.100.7",
            "203.0.113.9",
            "224.0.0.1",
            "240.0.0.1",
            "255.255.255.255",
        ] {
            assert!(!is_public_v4(ip.parse().unwrap()), "{ip}");
        }
        for ip in [
            "1.1.1.1",
            "100.63.255.255",
            "100.128.0.0",
            "172.15.255.255",
            "172.32.0.0",
            "198.20.0.0",
            "223.255.255.255",
        ] {
            assert!(is_public_v4(ip.parse().unwrap()), "{ip}");
        }
    }

    #[test]
    fn ipv6_ranges() {
        for ip in [
            "::1",
            "::",
            "fe80::1",
            "fc00::1",
            "ff02::1",
            "2001::1",
            "2001:db8::1",
            "3fff::1",
            "2001:2::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            "64:ff9b::a00:1",
            "2002:7f00:1::1",
            "2002:c0a8:101::1",
        ] {
            assert!(!is_public_v6(ip.parse().unwrap()), "{ip}");
        }
        for ip in [
            "2606:4700::1111",
            "::ffff:8.8.8.8",
            "64:ff9b::808:808",
            "2002:808:808::1",
            "2001:4860::8888",
        ] {
            assert!(is_public_v6(ip.parse().unwrap()), "{ip}");
        }
    }
}
