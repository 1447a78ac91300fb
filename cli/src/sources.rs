//! The host registry → capability sources, for every subcommand that needs the live catalog
//! (`demo`, `call`, and — when they switch to it — `serve` and `catalog`).
//!
//! [`from_registry`] reads the registry file (`permissions::RegistryResolver`), then
//!
//! - MCP plugins: entries with `exports.mcp` go through `mcp_adapter::discovery` (plugin
//!   package validation, enablement) and each ready, enabled plugin server becomes an
//!   `McpSource` connected over rsbinder RPC on its socket;
//! - ACI providers: entries with `exports.aci` go through `aci_adapter::controller` discovery
//!   and each provider becomes an `AciSource` (a virtual plugin, ACI-40).
//!
//! Entries that cannot become sources are reported as [`Skipped`] (with a reason), never
//! silently dropped. [`catalog`] lists every source once and builds the unified
//! [`Catalog`], remembering which source owns which capability.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use capability_model::{CapabilityId, CapabilitySource, Catalog};

/// How long listing one source may take.
const LIST_TIMEOUT: Duration = Duration::from_secs(10);

/// Why no sources could be built.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SourcesError {
    /// The registry could not be read.
    #[error(transparent)]
    Registry(#[from] permissions::identity::RegistryError),
    /// Discovery failed as a whole.
    #[error("discovery: {0}")]
    Discovery(String),
}

/// A registry entry (or one of its servers) that did not become a source.
#[derive(Debug, Clone)]
pub(crate) struct Skipped {
    /// Package name.
    pub(crate) package: String,
    /// Why (a status or error text; never file contents).
    pub(crate) reason: String,
}

/// The sources built from a registry.
#[derive(Clone)]
pub(crate) struct Sources {
    /// The sources, MCP first, then ACI, in registry order.
    pub(crate) list: Vec<Arc<dyn CapabilitySource>>,
    /// Entries that were left out, with the reason.
    pub(crate) skipped: Vec<Skipped>,
}

impl std::fmt::Debug for Sources {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sources")
            .field("sources", &self.list.len())
            .field("skipped", &self.skipped)
            .finish()
    }
}

impl Sources {
    /// Number of sources.
    pub(crate) fn len(&self) -> usize {
        self.list.len()
    }
}

/// A registry given as a directory means its `registry.json`.
pub(crate) fn registry_file(path: &Path) -> PathBuf {
    if path.is_dir() {
        path.join("registry.json")
    } else {
        path.to_path_buf()
    }
}

/// How sources are built.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SourceOptions {
    /// Start a provider that is not running with its registry `launch` argv (ACI wake). The
    /// demo, which owns its providers' processes, turns this off.
    pub(crate) wake: bool,
}

impl Default for SourceOptions {
    fn default() -> Self {
        Self { wake: true }
    }
}

/// Builds the capability sources for every MCP plugin and ACI provider in the registry.
pub(crate) async fn from_registry(
    path: &Path,
    opts: SourceOptions,
) -> Result<Sources, SourcesError> {
    let file = registry_file(path);
    let resolver = permissions::RegistryResolver::load(&file)?;
    let mut list: Vec<Arc<dyn CapabilitySource>> = Vec::new();
    let mut skipped = Vec::new();
    mcp_sources(&file, &mut list, &mut skipped)?;
    aci_sources(&opts, &resolver, &mut list, &mut skipped).await?;
    Ok(Sources { list, skipped })
}

/// Every ready and enabled plugin server, through `mcp_adapter::discovery` (plugin package
/// validation, MCP-45 names, `plugin-state.json` enablement beside the registry).
fn mcp_sources(
    file: &Path,
    list: &mut Vec<Arc<dyn CapabilitySource>>,
    skipped: &mut Vec<Skipped>,
) -> Result<(), SourcesError> {
    use mcp_adapter::discovery::{DEFAULT_CONNECT_TIMEOUT, Discovery, PluginStatus};
    let discovery = Discovery::load(file).map_err(|e| SourcesError::Discovery(e.to_string()))?;
    for plugin in &discovery.plugins {
        match plugin.status() {
            PluginStatus::Ready => {
                for source in plugin.sources(DEFAULT_CONNECT_TIMEOUT) {
                    list.push(Arc::new(source));
                }
            }
            PluginStatus::Disabled(e) => skipped.push(Skipped {
                package: plugin.identity.package.clone(),
                reason: format!("MCP plugin disabled ({e:?}); enable it in plugin-state.json"),
            }),
            PluginStatus::Unavailable(r) => skipped.push(Skipped {
                package: plugin.identity.package.clone(),
                reason: format!("MCP plugin unavailable: {r}"),
            }),
        }
    }
    Ok(())
}

/// All ACI providers of the registry behind one controller, as one source (each provider is
/// its own virtual plugin inside it, ACI-40).
///
/// Enablement (ACI-44 disables providers by default on Android until the user enables them):
/// on a Linux host the operator enables a provider by listing it in the registry, so every
/// discovered provider starts enabled here.
pub(crate) async fn aci_sources(
    opts: &SourceOptions,
    resolver: &permissions::RegistryResolver,
    list: &mut Vec<Arc<dyn CapabilitySource>>,
    skipped: &mut Vec<Skipped>,
) -> Result<(), SourcesError> {
    use aci_adapter::controller::{
        BinderConnector, Controller, ControllerConfig, LaunchWaker, NoWaker, Waker,
    };
    let waker: Arc<dyn Waker> = if opts.wake {
        Arc::new(LaunchWaker::default())
    } else {
        Arc::new(NoWaker)
    };
    let controller = Controller::new(
        Arc::new(BinderConnector::rpc()),
        waker,
        ControllerConfig {
            enabled_by_default: true,
            ..ControllerConfig::default()
        },
    );
    controller.discover_from(resolver);
    let found = controller.packages();
    for entry in resolver.entries() {
        if entry.exports.aci.is_some() && !found.contains(&entry.package) {
            skipped.push(Skipped {
                package: entry.package.clone(),
                reason: "its ACI export declares no known BIND action (SPEC E.5)".into(),
            });
        }
    }
    if !found.is_empty() {
        list.push(aci_adapter::source::shared(
            aci_adapter::source::AciSource::new(controller),
        ));
    }
    Ok(())
}

/// The unified catalog of some sources, with the owner of every capability.
#[derive(Debug)]
pub(crate) struct Listed {
    /// The catalog.
    pub(crate) catalog: Catalog,
    /// Which source (index into [`Sources::list`]) serves each capability.
    owners: HashMap<CapabilityId, usize>,
    /// Sources whose listing failed: (index, reason).
    pub(crate) failures: Vec<(usize, String)>,
}

impl Listed {
    /// The source serving `id`.
    pub(crate) fn owner<'a>(
        &self,
        sources: &'a Sources,
        id: &CapabilityId,
    ) -> Option<&'a Arc<dyn CapabilitySource>> {
        self.owners.get(id).and_then(|i| sources.list.get(*i))
    }
}

/// Lists every source once (concurrently, each bounded by a timeout) and builds the catalog.
pub(crate) async fn catalog(sources: &Sources) -> Listed {
    let listings = futures::future::join_all(sources.list.iter().map(|s| async move {
        match tokio::time::timeout(LIST_TIMEOUT, s.list()).await {
            Ok(Ok(listing)) => Ok(listing),
            Ok(Err(e)) => Err(e.to_string()),
            Err(_) => Err(format!("no answer within {LIST_TIMEOUT:?}")),
        }
    }))
    .await;
    let mut owners = HashMap::new();
    let mut caps = Vec::new();
    let mut failures = Vec::new();
    for (i, listing) in listings.into_iter().enumerate() {
        match listing {
            Ok(listing) => {
                for cap in listing.capabilities {
                    owners.entry(cap.id.clone()).or_insert(i);
                    caps.push(cap);
                }
            }
            Err(reason) => failures.push((i, reason)),
        }
    }
    Listed {
        catalog: Catalog::build(caps),
        owners,
        failures,
    }
}
