//! The network policy of `http_request` (issue 5 §3, SPEC §10 C-12), checked on the **resolved**
//! IP address of every connection so DNS rebinding cannot bypass it.
//!
//! Pure: [`NetworkPolicy::check_url`] runs before any I/O, [`NetworkPolicy::check_name`] and
//! [`NetworkPolicy::check_addr`] run inside the resolver the HTTP client uses for every new
//! connection (see [`crate::resolver`]), and again on the peer address of every response.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::str::FromStr;

use reqwest::Url;

/// The URL scheme of a request; the cleartext rule depends on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scheme {
    /// Cleartext `http`.
    Http,
    /// `https`.
    Https,
}

impl Scheme {
    /// `Some` for `http` / `https` (case-insensitive), `None` for anything else.
    pub fn parse(s: &str) -> Option<Self> {
        if s.eq_ignore_ascii_case("http") {
            Some(Scheme::Http)
        } else if s.eq_ignore_ascii_case("https") {
            Some(Scheme::Https)
        } else {
            None
        }
    }
}

/// What kind of destination an IP address is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AddressClass {
    /// `127.0.0.0/8`, `::1`.
    Loopback,
    /// RFC 1918 (`10/8`, `172.16/12`, `192.168/16`), carrier-grade NAT `100.64/10`, IPv6 unique
    /// local `fc00::/7` and deprecated site-local `fec0::/10`: the user's own network.
    Private,
    /// Link-local (`169.254.0.0/16`, `fe80::/10`) and cloud metadata endpoints
    /// (`fd00:ec2::254`, `100.100.100.200`): always refused.
    LinkLocalOrMetadata,
    /// Unspecified (`0.0.0.0/8`, `::`), multicast, broadcast and reserved `240/4`: always refused.
    NotUnicast,
    /// Everything else.
    Public,
}

impl AddressClass {
    /// True for [`AddressClass::Loopback`] and [`AddressClass::Private`].
    pub fn is_local(self) -> bool {
        matches!(self, AddressClass::Loopback | AddressClass::Private)
    }
}

/// The IPv4 address an IPv6 address stands for, when it is IPv4-mapped (`::ffff:a.b.c.d`) or
/// in the NAT64 well-known prefix (`64:ff9b::/96`); otherwise the address itself.
pub fn canonical_ip(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return IpAddr::V4(v4);
            }
            let s = v6.segments();
            if s[0] == 0x64 && s[1] == 0xff9b && s[2..6] == [0, 0, 0, 0] {
                let o = v6.octets();
                return IpAddr::V4(Ipv4Addr::new(o[12], o[13], o[14], o[15]));
            }
            ip
        }
        IpAddr::V4(_) => ip,
    }
}

/// Classifies an address (after [`canonical_ip`]).
pub fn classify(ip: IpAddr) -> AddressClass {
    match canonical_ip(ip) {
        IpAddr::V4(v4) => classify_v4(v4),
        IpAddr::V6(v6) => classify_v6(v6),
    }
}

fn classify_v4(ip: Ipv4Addr) -> AddressClass {
    let o = ip.octets();
    if o[0] == 0 || ip.is_multicast() || o[0] >= 240 {
        AddressClass::NotUnicast
    } else if ip.is_link_local() || o == [100, 100, 100, 200] {
        AddressClass::LinkLocalOrMetadata
    } else if ip.is_loopback() {
        AddressClass::Loopback
    } else if ip.is_private() || (o[0] == 100 && (o[1] & 0xc0) == 64) {
        AddressClass::Private
    } else {
        AddressClass::Public
    }
}

/// `fd00:ec2::254`, the AWS IMDS IPv6 endpoint.
const AWS_METADATA_V6: Ipv6Addr = Ipv6Addr::new(0xfd00, 0x0ec2, 0, 0, 0, 0, 0, 0x0254);

fn classify_v6(ip: Ipv6Addr) -> AddressClass {
    let first = ip.segments()[0];
    if ip.is_unspecified() || ip.is_multicast() {
        AddressClass::NotUnicast
    } else if ip.is_loopback() {
        AddressClass::Loopback
    } else if ip == AWS_METADATA_V6 || (first & 0xffc0) == 0xfe80 {
        AddressClass::LinkLocalOrMetadata
    } else if (first & 0xfe00) == 0xfc00 || (first & 0xffc0) == 0xfec0 {
        AddressClass::Private
    } else {
        AddressClass::Public
    }
}

/// Why the policy refused a destination. The text is one sentence for the model and never names
/// the host (SEC-12).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PolicyViolation {
    /// Only `http` and `https` are fetched.
    #[error("The network policy allows only http and https URLs.")]
    UnsupportedScheme,
    /// Link-local and cloud metadata addresses are always refused.
    #[error("The network policy refuses link-local and cloud metadata addresses.")]
    LinkLocalOrMetadata,
    /// Unspecified, multicast, broadcast and reserved addresses are always refused.
    #[error("The network policy refuses unspecified, multicast and broadcast addresses.")]
    NotUnicast,
    /// Loopback and private addresses are not enabled.
    #[error("The network policy does not allow requests to loopback or private network addresses.")]
    PrivateAccessDisabled,
    /// Cleartext `http` is not enabled.
    #[error("The network policy does not allow cleartext http; use https.")]
    CleartextDisabled,
    /// Cleartext `http` is enabled only for loopback and private destinations.
    #[error("Cleartext http is allowed only to loopback and private network addresses; use https.")]
    CleartextToPublic,
    /// The host or address is on the deny list.
    #[error("The network policy's deny list blocks this destination.")]
    DenyListed,
    /// An allow list is set and the host or address is not on it.
    #[error("The destination is not on the network policy's allow list.")]
    NotAllowListed,
    /// The host name resolved to no address at all.
    #[error("The host name did not resolve to any address.")]
    NoAddress,
}

/// An IP network, `addr/prefix`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Cidr {
    addr: IpAddr,
    prefix: u8,
}

impl Cidr {
    /// A network; `None` when `prefix` is longer than the address.
    pub fn new(addr: IpAddr, prefix: u8) -> Option<Self> {
        let max = if addr.is_ipv4() { 32 } else { 128 };
        if prefix > max {
            return None;
        }
        // An IPv4-mapped IPv6 network (`::ffff:10.0.0.0/104`) is stored as its IPv4 network, so
        // it matches the same addresses whichever way they are written.
        match (addr, canonical_ip(addr)) {
            (IpAddr::V6(_), v4 @ IpAddr::V4(_)) if prefix >= 96 => Some(Self {
                addr: v4,
                prefix: prefix - 96,
            }),
            _ => Some(Self { addr, prefix }),
        }
    }

    /// Whether `ip` (after [`canonical_ip`]) is inside this network.
    pub fn contains(&self, ip: IpAddr) -> bool {
        match (self.addr, canonical_ip(ip)) {
            (IpAddr::V4(net), IpAddr::V4(ip)) => {
                let mask = u32::MAX
                    .checked_shl(32 - u32::from(self.prefix))
                    .unwrap_or(0);
                u32::from(net) & mask == u32::from(ip) & mask
            }
            (IpAddr::V6(net), IpAddr::V6(ip)) => {
                let mask = u128::MAX
                    .checked_shl(128 - u32::from(self.prefix))
                    .unwrap_or(0);
                u128::from(net) & mask == u128::from(ip) & mask
            }
            _ => false,
        }
    }
}

impl fmt::Display for Cidr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.addr, self.prefix)
    }
}

/// One allow/deny list entry: a host name, a `*.suffix` wildcard, an address or a CIDR network.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum HostPattern {
    /// Exactly this host name (lowercase, no trailing dot).
    Host(String),
    /// Any strict subdomain of this name (`*.example.com` matches `a.example.com`, not
    /// `example.com`).
    Subdomains(String),
    /// Addresses in this network (a single address is a `/32` or `/128`).
    Network(Cidr),
}

/// A malformed [`HostPattern`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not a host name, address or CIDR network")]
pub struct PatternError;

impl FromStr for HostPattern {
    type Err = PatternError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.trim();
        if let Some((addr, prefix)) = s.split_once('/') {
            let addr = parse_ip(addr).ok_or(PatternError)?;
            let prefix: u8 = prefix.parse().map_err(|_| PatternError)?;
            return Cidr::new(addr, prefix)
                .map(HostPattern::Network)
                .ok_or(PatternError);
        }
        if let Some(ip) = parse_ip(s) {
            let prefix = if ip.is_ipv4() { 32 } else { 128 };
            return Cidr::new(ip, prefix)
                .map(HostPattern::Network)
                .ok_or(PatternError);
        }
        let (wild, name) = match s.strip_prefix("*.") {
            Some(rest) => (true, rest),
            None => (false, s),
        };
        let name = normalize_host(name);
        let valid = !name.is_empty()
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.' || b == b'_');
        if !valid {
            return Err(PatternError);
        }
        Ok(if wild {
            HostPattern::Subdomains(name)
        } else {
            HostPattern::Host(name)
        })
    }
}

fn parse_ip(s: &str) -> Option<IpAddr> {
    let s = s
        .strip_prefix('[')
        .and_then(|r| r.strip_suffix(']'))
        .unwrap_or(s);
    s.parse().ok()
}

/// Lowercase, without a trailing dot.
pub fn normalize_host(host: &str) -> String {
    host.trim_end_matches('.').to_ascii_lowercase()
}

impl HostPattern {
    fn matches_name(&self, host: &str) -> bool {
        match self {
            HostPattern::Host(h) => h == host,
            HostPattern::Subdomains(suffix) => host
                .strip_suffix(suffix.as_str())
                .is_some_and(|head| head.len() > 1 && head.ends_with('.')),
            HostPattern::Network(_) => false,
        }
    }

    fn matches_addr(&self, ip: IpAddr) -> bool {
        match self {
            HostPattern::Network(net) => net.contains(ip),
            _ => false,
        }
    }
}

/// The network policy. The default is the strict one (public `https` only); ACI's LAN use needs
/// [`NetworkPolicy::local_network`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NetworkPolicy {
    /// Allow loopback and private-range destinations (`127/8`, RFC 1918, `fc00::/7` …).
    pub allow_private: bool,
    /// Allow cleartext `http`, and then only to loopback and private destinations (seed 003
    /// §4.1: LAN devices speak plain HTTP; HTTP-08).
    pub allow_cleartext: bool,
    /// When non-empty, a destination must match one entry (by name, or every resolved address
    /// by network). It never overrides the other rules.
    pub allow: Vec<HostPattern>,
    /// A destination matching any entry (by name or by any resolved address) is refused.
    pub deny: Vec<HostPattern>,
}

impl NetworkPolicy {
    /// The policy for ACI's local-network use: private destinations and cleartext `http` to
    /// them enabled; link-local and metadata addresses still refused.
    pub fn local_network() -> Self {
        Self {
            allow_private: true,
            allow_cleartext: true,
            allow: Vec::new(),
            deny: Vec::new(),
        }
    }

    /// Checks everything that can be known from the URL alone (no I/O): the scheme, the
    /// cleartext switch, and — for an IP-literal host — the full address check. For a host
    /// name, the name lists; the resolved addresses are checked by the resolver.
    pub fn check_url(&self, url: &Url) -> Result<(), PolicyViolation> {
        let scheme = Scheme::parse(url.scheme()).ok_or(PolicyViolation::UnsupportedScheme)?;
        if scheme == Scheme::Http && !self.allow_cleartext {
            return Err(PolicyViolation::CleartextDisabled);
        }
        let host = url.host_str().ok_or(PolicyViolation::NoAddress)?;
        match parse_ip(host) {
            Some(ip) => self.check_addr(ip, scheme, false),
            None => self.check_name(host).map(|_| ()),
        }
    }

    /// Checks a host name against the deny and allow lists. `Ok(true)` when the name itself is
    /// on the allow list (then the addresses need not match an allow-list network).
    pub fn check_name(&self, host: &str) -> Result<bool, PolicyViolation> {
        let host = normalize_host(host);
        if self.deny.iter().any(|p| p.matches_name(&host)) {
            return Err(PolicyViolation::DenyListed);
        }
        Ok(self.allow.iter().any(|p| p.matches_name(&host)))
    }

    /// Checks one resolved (or literal) address for a request of `scheme`.
    /// `name_allowed` is the result of [`check_name`](Self::check_name).
    pub fn check_addr(
        &self,
        ip: IpAddr,
        scheme: Scheme,
        name_allowed: bool,
    ) -> Result<(), PolicyViolation> {
        let class = classify(ip);
        match class {
            AddressClass::LinkLocalOrMetadata => return Err(PolicyViolation::LinkLocalOrMetadata),
            AddressClass::NotUnicast => return Err(PolicyViolation::NotUnicast),
            _ => {}
        }
        if self.deny.iter().any(|p| p.matches_addr(ip)) {
            return Err(PolicyViolation::DenyListed);
        }
        if !self.allow.is_empty() && !name_allowed && !self.allow.iter().any(|p| p.matches_addr(ip))
        {
            return Err(PolicyViolation::NotAllowListed);
        }
        if class.is_local() && !self.allow_private {
            return Err(PolicyViolation::PrivateAccessDisabled);
        }
        if scheme == Scheme::Http {
            if !self.allow_cleartext {
                return Err(PolicyViolation::CleartextDisabled);
            }
            if !class.is_local() {
                return Err(PolicyViolation::CleartextToPublic);
            }
        }
        Ok(())
    }
}
