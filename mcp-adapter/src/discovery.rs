//! Plugin discovery on Linux hosts (issue 6 item 7; the host counterpart of MCP-26).
//!
//! The host registry (`permissions::RegistryResolver`, the operator-written stand-in for
//! PackageManager) lists each app with its UID, package, signing digest and versionCode;
//! an entry whose `exports.mcp` is `{pluginDir, socket}` is an AgentOS MCP plugin. For each,
//! discovery reads the plugin package ([`PluginPackage::read`]), applies the device-wide name
//! rule (MCP-45) and the plugin-level enablement (MCP-50/51), and yields a
//! [`DiscoveredPlugin`]. **Discovery never connects** (MCP-26): [`DiscoveredPlugin::sources`]
//! only builds [`McpSource`]s, which connect on first use, and only for plugins that are ready
//! and enabled.
//!
//! # Enablement on Linux hosts: `plugin-state.json`
//!
//! Third-party plugins start disabled (MCP-50). The operator enables one by listing it in
//! `plugin-state.json`, next to the registry file ([`PLUGIN_STATE_FILE`]):
//!
//! ```json
//! {
//!   "version": 1,
//!   "plugins": [
//!     { "package": "com.example.notes", "signingCertSha256": "5A:1F:…", "plugin": "notes",
//!       "enabled": true }
//!   ],
//!   "bundled": ["com.example.system.tools"]
//! }
//! ```
//!
//! - A plugin is **enabled** when a record lists its package with `enabled: true` (the
//!   default) **and** the same signing digest the registry has now.
//! - A record with another digest means the plugin was re-signed: it is
//!   [`Enablement::NeedsReconfirmation`] (disabled, Skills gone, never connected) until the
//!   operator records the new digest (MCP-51).
//! - No record: packages listed in `bundled` (shipped with the host, not third-party) are
//!   enabled; every other plugin is disabled.
//! - `plugin` records which package owns a plugin name; that package is the "original owner"
//!   in the MCP-45 winner rule (bundled first, then the original owner, then the smaller
//!   package name).
//!
//! A missing state file means "nothing enabled, nothing bundled". A state file that cannot be
//! read or parsed is an error (fail closed: the caller shows it; nothing is enabled).
//!
//! # Sockets
//!
//! `exports.mcp.socket` is a Unix socket serving `IMcpService` over rsbinder RPC; each server
//! declared under `extensions."org.agentos".mcpServers` is reached under the rsbinder service
//! name equal to the server name ([`DiscoveredPlugin::server_uri`]). The client requires the
//! peer to run as the registry entry's UID (`SO_PEERCRED`), so a socket taken over by another
//! user is refused.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use binder_channel::binder::{ConnectOptions, ServiceKind, rpc_uri};
use permissions::{CertDigest, RegistryEntry, RegistryResolver};
use serde::{Deserialize, Serialize};

use crate::plugin::device::{Enablement, NameClaim, PluginIdentity, name_winners};
use crate::plugin::{PluginPackage, UnavailableReason};
use crate::skills::{SkillCatalog, SkillProvider};
use crate::source::{Connector, McpSource};

/// The enablement file, in the registry's directory.
pub const PLUGIN_STATE_FILE: &str = "plugin-state.json";
/// The registry file name looked up when a directory is given.
pub const REGISTRY_FILE: &str = "registry.json";
/// Environment variable naming the registry (file or directory).
pub const REGISTRY_ENV: &str = "CAPBRIDGE_REGISTRY";
/// Largest `plugin-state.json` read (local choice).
pub const PLUGIN_STATE_MAX_BYTES: u64 = 1024 * 1024;
/// Default deadline for opening a channel to a plugin (connect, handshake, `open`).
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// Why discovery could not run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DiscoveryError {
    /// The registry could not be loaded.
    #[error(transparent)]
    Registry(#[from] permissions::identity::RegistryError),
    /// `plugin-state.json` could not be read or parsed.
    #[error("cannot use the plugin state file {path}: {problem}")]
    State {
        /// The file.
        path: String,
        /// What was wrong (I/O kind, size, or JSON position; never contents).
        problem: String,
    },
}

/// `plugin-state.json`: which plugins the operator enabled, and which packages are bundled.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PluginStateFile {
    /// Format version, `1`.
    pub version: u32,
    /// One record per package the operator decided about.
    #[serde(default)]
    pub plugins: Vec<PluginRecord>,
    /// Packages shipped with the host (not third-party): enabled unless a record says
    /// otherwise, and first in the MCP-45 name rule.
    #[serde(default)]
    pub bundled: BTreeSet<String>,
}

/// The operator's decision about one plugin package.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PluginRecord {
    /// The package.
    pub package: String,
    /// The signing digest the decision was made for (MCP-51).
    pub signing_cert_sha256: CertDigest,
    /// The plugin name this package owns (MCP-45 "original owner").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plugin: Option<String>,
    /// Enabled (default `true`).
    #[serde(default = "enabled_by_default")]
    pub enabled: bool,
}

fn enabled_by_default() -> bool {
    true
}

impl PluginStateFile {
    /// Loads `path`; a missing file is the empty state.
    pub fn load(path: &Path) -> Result<PluginStateFile, DiscoveryError> {
        let shown = path.display().to_string();
        let err = |problem: String| DiscoveryError::State {
            path: shown.clone(),
            problem,
        };
        let meta = match std::fs::metadata(path) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(PluginStateFile {
                    version: 1,
                    ..PluginStateFile::default()
                });
            }
            Err(e) => return Err(err(e.kind().to_string())),
        };
        if meta.len() > PLUGIN_STATE_MAX_BYTES {
            return Err(err(format!("larger than {PLUGIN_STATE_MAX_BYTES} bytes")));
        }
        let text = std::fs::read_to_string(path).map_err(|e| err(e.kind().to_string()))?;
        let state: PluginStateFile = serde_json::from_str(&text).map_err(|e| {
            err(format!(
                "malformed at line {}, column {}",
                e.line(),
                e.column()
            ))
        })?;
        if state.version != 1 {
            return Err(err(format!(
                "version {} (this build reads 1)",
                state.version
            )));
        }
        Ok(state)
    }

    fn record(&self, package: &str) -> Option<&PluginRecord> {
        self.plugins.iter().find(|r| r.package == package)
    }

    /// The enablement of a plugin with this identity (rules in the module docs).
    pub fn enablement(&self, identity: &PluginIdentity) -> Enablement {
        match self.record(&identity.package) {
            Some(r) if r.signing_cert_sha256 != identity.signing_cert_sha256 => {
                Enablement::NeedsReconfirmation
            }
            Some(r) if r.enabled => Enablement::Enabled,
            Some(_) => Enablement::Disabled,
            None if self.bundled.contains(&identity.package) => Enablement::Enabled,
            None => Enablement::Disabled,
        }
    }

    fn owns(&self, package: &str, plugin: &str) -> bool {
        self.record(package)
            .and_then(|r| r.plugin.as_deref())
            .is_some_and(|p| p == plugin)
    }
}

/// A plugin found in the registry.
#[derive(Debug, Clone)]
pub struct DiscoveredPlugin {
    /// (package, signing digest, versionCode) from the registry (MCP-51).
    pub identity: PluginIdentity,
    /// The UID the provider runs as; the socket's peer must have it.
    pub uid: u32,
    /// The registry's display label.
    pub label: Option<String>,
    /// The Unix socket serving `IMcpService`.
    pub socket: PathBuf,
    /// The package as read.
    pub package: Arc<PluginPackage>,
    /// Listed as bundled in the state file.
    pub bundled: bool,
    /// Why the plugin is unavailable (package problems or a lost name, MCP-47).
    pub unavailable: Option<UnavailableReason>,
    /// Plugin-level enablement.
    pub enablement: Enablement,
}

/// What the plugin page shows for a plugin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PluginStatus {
    /// Ready and enabled: its servers may be connected.
    Ready,
    /// Ready but not enabled (disabled, or needing re-confirmation after a signature change).
    Disabled(Enablement),
    /// Cannot be used, with the reason; the issues are on the package.
    Unavailable(UnavailableReason),
}

impl DiscoveredPlugin {
    /// The plugin name, when the manifest was accepted.
    pub fn name(&self) -> Option<&str> {
        self.package.name()
    }

    /// The plugin's status.
    pub fn status(&self) -> PluginStatus {
        match (&self.unavailable, self.enablement) {
            (Some(r), _) => PluginStatus::Unavailable(r.clone()),
            (None, Enablement::Enabled) => PluginStatus::Ready,
            (None, e) => PluginStatus::Disabled(e),
        }
    }

    /// Ready and enabled (MCP-61): its servers may be connected and its Skills listed.
    pub fn is_usable(&self) -> bool {
        self.status() == PluginStatus::Ready
    }

    /// The rsbinder RPC URI of `server` on this plugin's socket.
    pub fn server_uri(&self, server: &str) -> rsbinder::Uri {
        rpc_uri(&self.socket, server)
    }

    /// One [`McpSource`] per declared Binder server, only when [`Self::is_usable`]; nothing
    /// connects until the source is used. The connector requires the peer to run as
    /// [`Self::uid`] and gives up opening after `connect_timeout`.
    pub fn sources(&self, connect_timeout: Duration) -> Vec<McpSource> {
        let (true, Some(manifest)) = (self.is_usable(), self.package.manifest()) else {
            return Vec::new();
        };
        manifest
            .servers
            .keys()
            .map(|server| {
                McpSource::new(
                    &manifest.name,
                    server,
                    checked_connector(self.server_uri(server), self.uid, connect_timeout),
                )
            })
            .collect()
    }
}

/// A connector to `uri` that requires the peer UID `uid` and opens within `timeout`.
pub fn checked_connector(uri: rsbinder::Uri, uid: u32, timeout: Duration) -> Connector {
    Arc::new(move || {
        let uri = uri.clone();
        Box::pin(async move {
            let mut options = ConnectOptions::expecting_uid(uid);
            options.timeout = Some(timeout);
            let opening = binder_channel::binder::connect(uri, ServiceKind::Mcp, options);
            match tokio::time::timeout(timeout, opening).await {
                Ok(Ok(opened)) => Ok(opened.channel),
                Ok(Err(e)) => {
                    tracing::info!(uid, error = %e, "mcp plugin connect failed");
                    Err("connect_failed".to_owned())
                }
                Err(_) => {
                    tracing::info!(uid, "mcp plugin connect timed out");
                    Err("timeout".to_owned())
                }
            }
        })
    })
}

/// Discovers the plugins of `registry` under `state`. Order: by plugin name (packages without
/// an accepted manifest last, by package).
pub fn discover(registry: &RegistryResolver, state: &PluginStateFile) -> Vec<DiscoveredPlugin> {
    let mut plugins: Vec<DiscoveredPlugin> = registry
        .entries()
        .filter_map(|e| discover_entry(e, state))
        .collect();
    // MCP-45: one winner per name, independent of registry order.
    let claims: Vec<NameClaim> = plugins
        .iter()
        .filter(|p| p.unavailable.is_none())
        .filter_map(|p| {
            p.name().map(|name| NameClaim {
                plugin: name.to_owned(),
                package: p.identity.package.clone(),
                bundled: p.bundled,
                original_owner: state.owns(&p.identity.package, name),
            })
        })
        .collect();
    let winners: BTreeMap<String, String> = name_winners(&claims);
    for p in &mut plugins {
        if p.unavailable.is_some() {
            continue;
        }
        if let Some(winner) = p.name().and_then(|n| winners.get(n))
            && *winner != p.identity.package
        {
            p.unavailable = Some(UnavailableReason::NameConflict {
                winner: winner.clone(),
            });
        }
    }
    plugins.sort_by(|a, b| {
        (a.name().is_none(), a.name(), &a.identity.package).cmp(&(
            b.name().is_none(),
            b.name(),
            &b.identity.package,
        ))
    });
    tracing::debug!(plugins = plugins.len(), "plugin discovery done");
    plugins
}

fn discover_entry(e: &RegistryEntry, state: &PluginStateFile) -> Option<DiscoveredPlugin> {
    let mcp = e.exports.mcp.as_ref()?;
    let identity = PluginIdentity {
        package: e.package.clone(),
        signing_cert_sha256: e.signing_cert_sha256,
        version_code: e.version_code,
    };
    let package = PluginPackage::read(&mcp.plugin_dir);
    Some(DiscoveredPlugin {
        enablement: state.enablement(&identity),
        bundled: state.bundled.contains(&e.package),
        identity,
        uid: e.uid,
        label: e.label.clone(),
        socket: mcp.socket.clone(),
        unavailable: package.unavailable().cloned(),
        package: Arc::new(package),
    })
}

/// The registry file for an explicit `--registry` argument (a file, or a directory holding
/// [`REGISTRY_FILE`]), else for the [`REGISTRY_ENV`] variable; `None` when neither is given.
pub fn registry_path(explicit: Option<&Path>) -> Option<PathBuf> {
    let given = explicit
        .map(Path::to_path_buf)
        .or_else(|| std::env::var_os(REGISTRY_ENV).map(PathBuf::from))?;
    Some(if given.is_dir() {
        given.join(REGISTRY_FILE)
    } else {
        given
    })
}

/// Everything discovered from one registry file.
#[derive(Debug, Clone)]
pub struct Discovery {
    /// The registry file.
    pub registry: PathBuf,
    /// The plugins, in [`discover`] order.
    pub plugins: Vec<DiscoveredPlugin>,
}

impl Discovery {
    /// Loads the registry at `registry` and the [`PLUGIN_STATE_FILE`] beside it, then
    /// [`discover`]s.
    pub fn load(registry: &Path) -> Result<Discovery, DiscoveryError> {
        let resolver = RegistryResolver::load(registry)?;
        let state_path = registry
            .parent()
            .unwrap_or(Path::new("."))
            .join(PLUGIN_STATE_FILE);
        let state = PluginStateFile::load(&state_path)?;
        Ok(Discovery {
            registry: registry.to_path_buf(),
            plugins: discover(&resolver, &state),
        })
    }

    /// Sources for every usable plugin's servers (see [`DiscoveredPlugin::sources`]).
    pub fn sources(&self, connect_timeout: Duration) -> Vec<McpSource> {
        self.plugins
            .iter()
            .flat_map(|p| p.sources(connect_timeout))
            .collect()
    }

    /// A Skill catalog snapshot of the usable plugins (MCP-61, MCP-66).
    pub fn skill_catalog(&self) -> SkillCatalog {
        SkillCatalog::build(self.plugins.iter().map(|p| SkillProvider {
            package: p.package.clone(),
            usable: p.is_usable(),
        }))
    }
}
