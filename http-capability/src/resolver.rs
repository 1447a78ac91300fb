//! Name resolution under the network policy. Every new connection the HTTP client opens — the
//! first request and each redirect hop — resolves its host through a policy resolver, which
//! checks **every** returned address and hands the connector only checked addresses. There is
//! no second lookup between check and connect, so DNS rebinding cannot slip a refused address
//! in (issue 5 §3).

use std::collections::HashMap;
use std::error::Error as StdError;
use std::fmt;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use futures::future::BoxFuture;
use reqwest::dns::{Addrs, Name, Resolve, Resolving};

use crate::policy::{NetworkPolicy, PolicyViolation, Scheme};

/// Turns a host name into addresses. Injectable so tests need no DNS.
pub trait HostResolver: Send + Sync + fmt::Debug {
    /// All addresses of `host` (a domain name, never an IP literal).
    fn resolve<'a>(&'a self, host: &'a str) -> BoxFuture<'a, io::Result<Vec<IpAddr>>>;
}

/// The operating system's resolver (`getaddrinfo` via tokio).
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemResolver;

impl HostResolver for SystemResolver {
    fn resolve<'a>(&'a self, host: &'a str) -> BoxFuture<'a, io::Result<Vec<IpAddr>>> {
        Box::pin(async move {
            let addrs = tokio::net::lookup_host((host, 0u16)).await?;
            Ok(addrs.map(|a| a.ip()).collect())
        })
    }
}

/// A fixed host → addresses table; any other name fails to resolve. For tests and for hosts the
/// embedder pins.
#[derive(Debug, Clone, Default)]
pub struct StaticResolver {
    table: HashMap<String, Vec<IpAddr>>,
}

impl StaticResolver {
    /// An empty table.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds (or replaces) `host` → `addrs`.
    pub fn with(mut self, host: &str, addrs: impl IntoIterator<Item = IpAddr>) -> Self {
        self.table.insert(
            crate::policy::normalize_host(host),
            addrs.into_iter().collect(),
        );
        self
    }
}

impl HostResolver for StaticResolver {
    fn resolve<'a>(&'a self, host: &'a str) -> BoxFuture<'a, io::Result<Vec<IpAddr>>> {
        let found = self
            .table
            .get(&crate::policy::normalize_host(host))
            .cloned();
        Box::pin(async move {
            found.ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, "unknown host"))
        })
    }
}

/// The reqwest resolver: looks the name up with a [`HostResolver`], then applies the policy for
/// one scheme to the name and to every address.
#[derive(Debug, Clone)]
pub(crate) struct PolicyResolver {
    pub(crate) inner: Arc<dyn HostResolver>,
    pub(crate) policy: Arc<NetworkPolicy>,
    pub(crate) scheme: Scheme,
}

impl Resolve for PolicyResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let this = self.clone();
        let host = name.as_str().to_owned();
        Box::pin(async move {
            let name_allowed = this.policy.check_name(&host)?;
            let ips = this.inner.resolve(&host).await?;
            if ips.is_empty() {
                return Err(PolicyViolation::NoAddress.into());
            }
            for ip in &ips {
                this.policy.check_addr(*ip, this.scheme, name_allowed)?;
            }
            let addrs: Addrs = Box::new(ips.into_iter().map(|ip| SocketAddr::new(ip, 0)));
            Ok(addrs)
        })
    }
}

/// The policy violation somewhere in an error's source chain (a refusal raised by
/// [`PolicyResolver`] reaches the caller wrapped in reqwest and hyper errors).
pub(crate) fn find_violation(err: &(dyn StdError + 'static)) -> Option<PolicyViolation> {
    error_chain(err).find_map(|e| e.downcast_ref::<PolicyViolation>().copied())
}

/// An error and everything under it. `io::Error::source` skips the error it wraps, so for an
/// `io::Error` the walk steps into [`io::Error::get_ref`] instead.
pub(crate) fn error_chain<'a>(
    err: &'a (dyn StdError + 'static),
) -> impl Iterator<Item = &'a (dyn StdError + 'static)> {
    let mut next: Option<&'a (dyn StdError + 'static)> = Some(err);
    let mut steps = 0usize;
    std::iter::from_fn(move || {
        let cur = next?;
        steps += 1;
        next = if steps > 32 {
            None
        } else if let Some(io) = cur.downcast_ref::<io::Error>() {
            match io.get_ref() {
                Some(inner) => Some(inner as &(dyn StdError + 'static)),
                None => io.source(),
            }
        } else {
            cur.source()
        };
        Some(cur)
    })
}
