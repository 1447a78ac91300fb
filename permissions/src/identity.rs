//! Who is calling: kernel UID → package + signing-certificate digest (AUT-01, ACI-21, SEC-01/02).
//!
//! Identity is never read from a message. The transport hands over the kernel-given UID
//! (Binder calling UID, `SO_PEERCRED`), and an [`IdentityResolver`] maps it to exactly one
//! package. On Linux hosts that is [`RegistryResolver`], backed by a JSON file the operator (or a
//! test) writes; on Android the JNI layer will implement the trait over PackageManager.
//!
//! The registry file (JSON, at most 1 MiB; anything else is refused and the runtime fails
//! closed):
//!
//! ```json
//! {
//!   "version": 1,
//!   "packages": [
//!     { "uid": 10123, "package": "com.example.notes",
//!       "signingCertSha256": "5A:1F:…64 hex digits…",
//!       "versionCode": 42, "label": "Notes",
//!       "permissions": ["ai.aci.permission.CALL"] }
//!   ]
//! }
//! ```
//!
//! Two entries with the same `uid` describe a shared UID: [`IdentityResolver::resolve`] then
//! refuses that UID (ACI-21) rather than pick one.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::limits::{IDENTITY_REGISTRY_MAX_BYTES, SIGNING_DIGEST_SHOWN_CHARS};

/// A kernel user id (Android app UID, or the Unix UID of a socket peer).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Uid(pub u32);

impl fmt::Display for Uid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// SHA-256 of a signing certificate (DER), 32 bytes (G-25).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CertDigest(pub [u8; 32]);

impl CertDigest {
    /// Parses 64 hex digits, optionally separated by `:` (as `apksigner` prints them).
    pub fn parse(s: &str) -> Result<Self, IdentityError> {
        let hex: Vec<u8> = s.bytes().filter(|b| *b != b':').collect();
        if hex.len() != 64 {
            return Err(IdentityError::BadDigest);
        }
        let mut out = [0u8; 32];
        for (i, pair) in hex.chunks_exact(2).enumerate() {
            let hi = hex_val(pair[0]).ok_or(IdentityError::BadDigest)?;
            let lo = hex_val(pair[1]).ok_or(IdentityError::BadDigest)?;
            out[i] = (hi << 4) | lo;
        }
        Ok(CertDigest(out))
    }

    /// Lowercase hex, 64 digits.
    pub fn to_hex(&self) -> String {
        let mut s = String::with_capacity(64);
        for b in self.0 {
            s.push(char::from(HEX[usize::from(b >> 4)]));
            s.push(char::from(HEX[usize::from(b & 0x0f)]));
        }
        s
    }

    /// The first 12 hex digits, as the authorization prompt shows them (AUT-04, G-25).
    pub fn short(&self) -> String {
        self.to_hex()
            .chars()
            .take(SIGNING_DIGEST_SHOWN_CHARS)
            .collect()
    }
}

const HEX: &[u8; 16] = b"0123456789abcdef";

fn hex_val(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

impl fmt::Debug for CertDigest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CertDigest({})", self.to_hex())
    }
}

impl fmt::Display for CertDigest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_hex())
    }
}

impl Serialize for CertDigest {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_hex())
    }
}

impl<'de> Deserialize<'de> for CertDigest {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        CertDigest::parse(&s).map_err(serde::de::Error::custom)
    }
}

/// A caller's identity, resolved from the kernel UID (AUT-01). Identity proper is
/// (package, digest); `uid` and `version_code` travel along for logs and caches.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Identity {
    /// The kernel UID the request came from.
    pub uid: Uid,
    /// The one package owning that UID.
    pub package: String,
    /// SHA-256 of the package's signing certificate.
    pub signing_cert_sha256: CertDigest,
    /// The installed version (cache keys, ACI-31).
    pub version_code: i64,
}

/// What a resolver knows about a UID: its identity, a display label and the platform
/// permissions the package holds (ACI layer 1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedCaller {
    /// The identity.
    pub identity: Identity,
    /// The app label: display only, may repeat, never identity (AUT-05).
    pub label: Option<String>,
    /// Granted platform permissions (e.g. `ai.aci.permission.CALL`).
    pub permissions: BTreeSet<String>,
}

impl ResolvedCaller {
    /// Whether the package holds `permission`.
    pub fn holds(&self, permission: &str) -> bool {
        self.permissions.contains(permission)
    }
}

/// Who is on the other end of a request, as the runtime classifies the transport.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Principal {
    /// A third-party app (`APP`), identified by the kernel.
    App(ResolvedCaller),
    /// capbridge's own UI (`SELF`).
    SelfUi,
    /// A paired desktop client (`DESKTOP`).
    Desktop,
}

impl Principal {
    /// The app's identity, for `App` principals.
    pub fn app(&self) -> Option<&ResolvedCaller> {
        match self {
            Principal::App(c) => Some(c),
            _ => None,
        }
    }

    /// A short label for logs: the package, `self` or `desktop`.
    pub fn log_name(&self) -> &str {
        match self {
            Principal::App(c) => &c.identity.package,
            Principal::SelfUi => "self",
            Principal::Desktop => "desktop",
        }
    }
}

/// Why a UID could not be resolved. Messages name the UID and counts, never file contents.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum IdentityError {
    /// No package owns this UID.
    #[error("uid {0} belongs to no known package")]
    UnknownUid(Uid),
    /// Several packages share this UID; such callers are refused (ACI-21, AUT-01).
    #[error("uid {uid} is shared by {packages} packages and is refused")]
    SharedUid {
        /// The UID.
        uid: Uid,
        /// How many packages share it.
        packages: usize,
    },
    /// The registry could not be read; every UID is refused (fail closed, SEC-21).
    #[error("the identity registry is unavailable; all callers are refused")]
    RegistryUnavailable,
    /// A digest that is not 64 hex digits.
    #[error("a signing-certificate digest must be 64 hex digits")]
    BadDigest,
}

/// Maps a kernel UID to the one package that owns it.
pub trait IdentityResolver: Send + Sync {
    /// Resolves `uid`. A UID shared by several packages is an error, never a guess.
    fn resolve(&self, uid: Uid) -> Result<ResolvedCaller, IdentityError>;
}

/// Why the registry file could not be loaded.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RegistryError {
    /// The file could not be read.
    #[error("cannot read the identity registry {path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// The file is larger than [`IDENTITY_REGISTRY_MAX_BYTES`].
    #[error("the identity registry {path} is larger than {max} bytes")]
    TooLarge {
        /// The file.
        path: String,
        /// The limit.
        max: usize,
    },
    /// The file is not a valid registry (JSON error position only, no content).
    #[error("the identity registry {path} is malformed at line {line}, column {column}")]
    Malformed {
        /// The file.
        path: String,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
    },
    /// The format version is not one this build reads.
    #[error("the identity registry {path} has version {found}; this build reads version 1")]
    UnsupportedVersion {
        /// The file.
        path: String,
        /// The version found.
        found: u32,
    },
}

/// One package entry of the registry file.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RegistryEntry {
    /// Kernel UID.
    pub uid: u32,
    /// Package name.
    pub package: String,
    /// Signing-certificate SHA-256, hex.
    pub signing_cert_sha256: CertDigest,
    /// Installed version.
    #[serde(default)]
    pub version_code: i64,
    /// Display label.
    #[serde(default)]
    pub label: Option<String>,
    /// Granted permissions.
    #[serde(default)]
    pub permissions: BTreeSet<String>,
    /// What the app exports (the host's stand-in for its manifest; discovery reads this).
    #[serde(default, skip_serializing_if = "Exports::is_empty")]
    pub exports: Exports,
    /// The command that starts the app's process (argv; the ACI wake on Linux hosts runs it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub launch: Option<Vec<String>>,
}

/// What one registry entry exports. On Android this comes from the package manifest; on Linux
/// hosts the operator (or a test, or `capbridge demo`) writes it into the registry.
///
/// ```json
/// "exports": {
///   "mcp": { "pluginDir": "/opt/notes/agent-plugin", "socket": "/run/notes/mcp.sock" },
///   "aci": { "actions": ["ai.aci.core.ACTION_BIND"], "socket": "/run/netkit/aci.sock" }
/// }
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Exports {
    /// An AgentOS MCP plugin (`IMcpService`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp: Option<McpExport>,
    /// An ACI provider (`ai.aci.core.IACIService`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aci: Option<AciExport>,
}

impl Exports {
    /// `true` when nothing is exported.
    pub fn is_empty(&self) -> bool {
        self.mcp.is_none() && self.aci.is_none()
    }
}

/// An exported AgentOS MCP plugin.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct McpExport {
    /// The plugin package directory (the APK's `assets/agent-plugin/`), holding `plugin.json`.
    pub plugin_dir: std::path::PathBuf,
    /// The Unix socket serving `IMcpService` over rsbinder RPC.
    pub socket: std::path::PathBuf,
}

/// An exported ACI provider service.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AciExport {
    /// The intent actions the service declares (SPEC E.5: `ai.aci.core.ACTION_BIND` and/or
    /// `com.ai.assistance.aci.ACTION_BIND`).
    pub actions: Vec<String>,
    /// The Unix socket serving `IACIService` over rsbinder RPC.
    pub socket: std::path::PathBuf,
}

/// The registry file: `{"version": 1, "packages": [RegistryEntry…]}`. Several entries with the
/// same `uid` describe a shared UID, which resolves to an error.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RegistryFile {
    /// Format version, `1`.
    pub version: u32,
    /// Packages.
    pub packages: Vec<RegistryEntry>,
}

/// An [`IdentityResolver`] over a registry file (Linux hosts, tests).
#[derive(Debug, Clone, Default)]
pub struct RegistryResolver {
    by_uid: BTreeMap<u32, Vec<RegistryEntry>>,
    /// `true` when built by [`RegistryResolver::fail_closed`]: every lookup is refused.
    unavailable: bool,
}

impl RegistryResolver {
    /// Builds a resolver from entries.
    pub fn from_entries(entries: impl IntoIterator<Item = RegistryEntry>) -> Self {
        let mut by_uid: BTreeMap<u32, Vec<RegistryEntry>> = BTreeMap::new();
        for e in entries {
            by_uid.entry(e.uid).or_default().push(e);
        }
        Self {
            by_uid,
            unavailable: false,
        }
    }

    /// A resolver that refuses every UID (what a runtime uses when the registry is unreadable,
    /// SEC-21).
    pub fn fail_closed() -> Self {
        Self {
            by_uid: BTreeMap::new(),
            unavailable: true,
        }
    }

    /// Parses registry JSON.
    pub fn from_json(text: &str, path_for_errors: &str) -> Result<Self, RegistryError> {
        if text.len() > IDENTITY_REGISTRY_MAX_BYTES {
            return Err(RegistryError::TooLarge {
                path: path_for_errors.to_owned(),
                max: IDENTITY_REGISTRY_MAX_BYTES,
            });
        }
        let file: RegistryFile =
            serde_json::from_str(text).map_err(|e| RegistryError::Malformed {
                path: path_for_errors.to_owned(),
                line: e.line(),
                column: e.column(),
            })?;
        if file.version != 1 {
            return Err(RegistryError::UnsupportedVersion {
                path: path_for_errors.to_owned(),
                found: file.version,
            });
        }
        Ok(Self::from_entries(file.packages))
    }

    /// Every entry, ordered by UID then file order (discovery walks these).
    pub fn entries(&self) -> impl Iterator<Item = &RegistryEntry> {
        self.by_uid.values().flatten()
    }

    /// Loads a registry file.
    pub fn load(path: &Path) -> Result<Self, RegistryError> {
        let shown = path.display().to_string();
        let meta = std::fs::metadata(path).map_err(|source| RegistryError::Io {
            path: shown.clone(),
            source,
        })?;
        if meta.len() > IDENTITY_REGISTRY_MAX_BYTES as u64 {
            return Err(RegistryError::TooLarge {
                path: shown,
                max: IDENTITY_REGISTRY_MAX_BYTES,
            });
        }
        let text = std::fs::read_to_string(path).map_err(|source| RegistryError::Io {
            path: shown.clone(),
            source,
        })?;
        Self::from_json(&text, &shown)
    }

    /// Loads a registry file; on any error logs it and returns a resolver that refuses
    /// everyone (AUT-08, SEC-21), together with the error for the caller to surface.
    pub fn load_or_fail_closed(path: &Path) -> (Self, Option<RegistryError>) {
        match Self::load(path) {
            Ok(r) => (r, None),
            Err(e) => {
                tracing::warn!(error = %e, "identity registry unusable; failing closed");
                (Self::fail_closed(), Some(e))
            }
        }
    }
}

impl IdentityResolver for RegistryResolver {
    fn resolve(&self, uid: Uid) -> Result<ResolvedCaller, IdentityError> {
        if self.unavailable {
            return Err(IdentityError::RegistryUnavailable);
        }
        match self.by_uid.get(&uid.0).map(Vec::as_slice) {
            None | Some([]) => Err(IdentityError::UnknownUid(uid)),
            Some([e]) => Ok(ResolvedCaller {
                identity: Identity {
                    uid,
                    package: e.package.clone(),
                    signing_cert_sha256: e.signing_cert_sha256,
                    version_code: e.version_code,
                },
                label: e.label.clone(),
                permissions: e.permissions.clone(),
            }),
            Some(many) => Err(IdentityError::SharedUid {
                uid,
                packages: many.len(),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn digest_round_trips_and_shortens() {
        let hex = "AB:CD".to_owned() + &"0".repeat(60);
        let d = CertDigest::parse(&hex).unwrap();
        assert_eq!(d.to_hex(), format!("abcd{}", "0".repeat(60)));
        assert_eq!(d.short(), "abcd00000000");
        assert_eq!(CertDigest::parse("abc"), Err(IdentityError::BadDigest));
        assert_eq!(
            CertDigest::parse(&"g".repeat(64)),
            Err(IdentityError::BadDigest)
        );
    }

    #[test]
    fn registry_entries_carry_exports_and_launch() {
        let digest = "ab".repeat(32);
        let text = format!(
            r#"{{"version":1,"packages":[
              {{"uid":10001,"package":"com.example.notes","signingCertSha256":"{digest}",
                "exports":{{"mcp":{{"pluginDir":"/p/agent-plugin","socket":"/s/mcp.sock"}}}},
                "launch":["/bin/notes","--serve"]}},
              {{"uid":10002,"package":"com.example.netkit","signingCertSha256":"{digest}",
                "exports":{{"aci":{{"actions":["ai.aci.core.ACTION_BIND"],"socket":"/s/aci.sock"}}}}}}
            ]}}"#
        );
        let r = RegistryResolver::from_json(&text, "t").unwrap();
        let all: Vec<_> = r.entries().collect();
        assert_eq!(all.len(), 2);
        let mcp = all[0].exports.mcp.as_ref().unwrap();
        assert_eq!(mcp.socket, std::path::Path::new("/s/mcp.sock"));
        assert_eq!(all[0].launch.as_deref().unwrap()[1], "--serve");
        assert!(all[1].exports.aci.is_some() && all[1].launch.is_none());
        // Unknown export kinds are refused like any unknown field (fail closed).
        let bad = text.replace("\"aci\"", "\"acx\"");
        assert!(RegistryResolver::from_json(&bad, "t").is_err());
    }
}
