//! The ACI controller: what seed 003's `QuroAciManager` does (ACI-01, ACI-03, ACI-30..ACI-32,
//! ACI-44, ACI-47, Appendix E.5).
//!
//! - **Discovery** ([`discover`]): on Linux hosts, the host registry entries that export an ACI
//!   service declaring either BIND action spelling of E.5. (Android: PackageManager, later,
//!   through JNI.)
//! - **Bind, ping, wake**: a [`Connector`] opens an [`AciLink`] to the provider's socket; when
//!   that fails the [`Waker`] starts the provider ([`LaunchWaker`] runs the registry's `launch`
//!   argv, detached, and waits for the socket), then the bind is retried once. Every new link
//!   must answer `ping()` with `true` before it is used.
//! - **Pool** (ACI-30, ACI-47): one live link per provider, reused by every call and replaced
//!   after a death; at most [`MAX_IN_FLIGHT`] calls in flight per provider, the rest wait in a
//!   FIFO queue (Tokio's semaphore is fair).
//! - **Calls**: 15 s deadline ([`CALL_TIMEOUT`], E.5), `callAsync` resolves on the callback's
//!   `onResult` (a callback that never comes is a timeout); after a dead binder the controller
//!   rebinds **once**: a request that had not left this process is then sent again, one that had
//!   is not (its side effects are unknown) and the call fails with
//!   [`ControllerError::ProviderDied`].
//! - **Capability cache** (ACI-31): keyed by (package, signing digest, versionCode); replaced
//!   when [`Controller::update_providers`] sees a package replaced, removed or re-signed, and
//!   dropped when the provider answers `CAPABILITY_NOT_FOUND` ([`Controller::invalidate`]).
//! - **`aci_protocol`** (E.5): when a provider lists a capability with that id, the controller
//!   asks it for `protocol_version` once per cache fill ([`Controller::protocol`]).
//! - **Call log** (ACI-32, SEC-12): a bounded ring of [`CallRecord`]s — timestamp, service,
//!   capability id, argument names and sizes (never values), status, duration.

use std::collections::{BTreeMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant, SystemTime};

use capability_model::Listing;
use permissions::{CertDigest, RegistryEntry, RegistryResolver};
use tokio::sync::{Semaphore, broadcast};

use crate::bundle::{Bundle, BundleValue};
use crate::convert::bundle_summary;

/// Deadline of one call (E.5: 15,000 ms).
pub const CALL_TIMEOUT: Duration = Duration::from_millis(15_000);
/// Calls in flight per provider; more wait in FIFO order (ACI-47).
pub const MAX_IN_FLIGHT: usize = 8;
/// Records kept by the call log.
pub const CALL_LOG_CAPACITY: usize = 1024;
/// How long a wake waits for the provider's socket to accept connections.
pub const WAKE_TIMEOUT: Duration = Duration::from_secs(10);
/// Deadline of `ping()` and `getCapabilities()` on bind.
pub const BIND_TIMEOUT: Duration = Duration::from_secs(15);
/// The BIND actions a provider may declare (E.5: the aci-core spelling and seed 003's).
pub const BIND_ACTIONS: [&str; 2] = [
    "ai.aci.core.ACTION_BIND",
    "com.ai.assistance.aci.ACTION_BIND",
];
/// The protocol capability (E.5).
pub const ACI_PROTOCOL_CAPABILITY: &str = "aci_protocol";
/// The result key holding the protocol version (E.5).
pub const PROTOCOL_VERSION_KEY: &str = "protocol_version";
/// The protocol version this controller speaks (E.5).
pub const ACI_PROTOCOL_V1: &str = "aci-protocol-v1";
/// Service name used for a provider on Linux hosts, where the registry carries no class name
/// (the virtual server segment of ACI-40).
pub const HOST_SERVICE_NAME: &str = "AciService";
/// The name a provider registers its `IACIService` under on rsbinder RPC sockets and on kernel
/// Binder's service manager (Linux hosts).
pub const BINDER_SERVICE_NAME: &str = "ai.aci.core.IACIService";
/// What providers see as `callerPkg` when the controller is capbridge (ACI-49). A capbridge
/// provider ignores it and resolves the kernel UID instead (E.6); a reference provider reads it.
pub const CONTROLLER_PACKAGE: &str = "org.agentos.app";

/// One discovered provider.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProviderInfo {
    /// Package name.
    pub package: String,
    /// The provider's UID (what its socket peer credentials must show).
    pub uid: u32,
    /// Signing-certificate digest.
    pub signing_cert_sha256: CertDigest,
    /// Installed version.
    pub version_code: i64,
    /// The Unix socket serving `IACIService`.
    pub socket: PathBuf,
    /// The command that starts it (the Linux-host wake).
    pub launch: Option<Vec<String>>,
    /// Virtual plugin name (`aci.<package>`, ACI-40).
    pub plugin: String,
    /// Virtual server name (ACI-40).
    pub server: String,
}

impl ProviderInfo {
    /// A provider from a registry entry, when it exports an ACI service with a BIND action.
    pub fn from_entry(entry: &RegistryEntry) -> Option<Self> {
        let aci = entry.exports.aci.as_ref()?;
        if !aci
            .actions
            .iter()
            .any(|a| BIND_ACTIONS.contains(&a.as_str()))
        {
            return None;
        }
        Some(Self {
            package: entry.package.clone(),
            uid: entry.uid,
            signing_cert_sha256: entry.signing_cert_sha256,
            version_code: entry.version_code,
            socket: aci.socket.clone(),
            launch: entry.launch.clone(),
            plugin: capability_model::naming::aci_virtual_plugin(&entry.package),
            server: capability_model::naming::aci_virtual_server(HOST_SERVICE_NAME),
        })
    }

    /// The cache key (ACI-31).
    pub fn cache_key(&self) -> CacheKey {
        CacheKey {
            package: self.package.clone(),
            signing_cert_sha256: self.signing_cert_sha256,
            version_code: self.version_code,
        }
    }
}

/// Discovery on Linux hosts: every registry entry exporting an ACI service that declares
/// `ai.aci.core.ACTION_BIND` or `com.ai.assistance.aci.ACTION_BIND` (E.5, ACI-06).
pub fn discover(registry: &RegistryResolver) -> Vec<ProviderInfo> {
    registry
        .entries()
        .filter_map(ProviderInfo::from_entry)
        .collect()
}

/// The capability cache key (ACI-31).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CacheKey {
    /// Package name.
    pub package: String,
    /// Signing-certificate digest.
    pub signing_cert_sha256: CertDigest,
    /// versionCode.
    pub version_code: i64,
}

/// One request as the controller sends it (E.2 `ACIRequest` minus `version`, which is always
/// `"1.0"`, and `callerPkg`, which the provider derives from the kernel UID).
#[derive(Debug, Clone, PartialEq)]
pub struct CallRequest {
    /// Capability id.
    pub capability: String,
    /// Typed parameters.
    pub params: Bundle,
    /// Call id, echoed by the provider.
    pub call_id: String,
}

impl CallRequest {
    /// A request with a fresh call id.
    pub fn new(capability: impl Into<String>, params: Bundle) -> Self {
        Self {
            capability: capability.into(),
            params,
            call_id: new_call_id(),
        }
    }
}

/// One response (E.2 `ACIResponse`).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CallResponse {
    /// `success`.
    pub success: bool,
    /// `result`.
    pub result: Bundle,
    /// `errorCode` (0 = none).
    pub error_code: i32,
    /// `errorMessage`.
    pub error_message: Option<String>,
    /// `callId`.
    pub call_id: Option<String>,
}

impl CallResponse {
    /// The parts the result mapping reads.
    pub fn parts(&self) -> crate::convert::ResponseParts<'_> {
        crate::convert::ResponseParts {
            success: self.success,
            result: &self.result,
            error_code: self.error_code,
            error_message: self.error_message.as_deref(),
        }
    }
}

/// A progress observer for `callAsync` (`onProgress(progress 0..100, message)`).
pub type ProgressFn = Arc<dyn Fn(i32, Option<&str>) + Send + Sync>;

/// Why a link operation failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LinkError {
    /// The provider could not be reached; nothing was sent.
    #[error("the provider cannot be reached: {0}")]
    Unreachable(String),
    /// The binder is dead. `dispatched` says whether the request had been sent.
    #[error("the provider's binder is dead")]
    Dead {
        /// The request left this process before the death was seen.
        dispatched: bool,
    },
    /// The peer answered something unreadable, or refused the transaction.
    #[error("protocol error: {0}")]
    Protocol(String),
}

/// One bound connection to a provider: `IACIService` as the controller uses it.
#[async_trait::async_trait]
pub trait AciLink: Send + Sync {
    /// `call` (transaction 1).
    async fn call(&self, request: CallRequest) -> Result<CallResponse, LinkError>;
    /// `callAsync` (transaction 2), resolving on the callback's `onResult`; `progress` sees
    /// every `onProgress`. A callback that never comes leaves the future pending (the
    /// controller's deadline ends it).
    async fn call_async(
        &self,
        request: CallRequest,
        progress: Option<ProgressFn>,
    ) -> Result<CallResponse, LinkError>;
    /// `getCapabilities` (transaction 3): one capability JSON per entry.
    async fn capabilities(&self) -> Result<Vec<String>, LinkError>;
    /// `ping` (transaction 4).
    async fn ping(&self) -> Result<bool, LinkError>;
    /// `false` once the binder is known dead.
    fn is_alive(&self) -> bool;
}

/// Opens links (binds).
#[async_trait::async_trait]
pub trait Connector: Send + Sync {
    /// Binds to `provider`.
    async fn connect(&self, provider: &ProviderInfo) -> Result<Arc<dyn AciLink>, LinkError>;
}

/// Why a wake failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum WakeError {
    /// The provider has no wake path (no launch command).
    #[error("the provider has no launch command")]
    NoLaunchCommand,
    /// The launch command could not be started.
    #[error("the launch command could not be started: {0}")]
    Spawn(String),
    /// The provider did not come up in time.
    #[error("the provider did not come up within {0:?}")]
    Timeout(Duration),
}

/// Wakes a provider that is not running (E.5 `ACTION_WAKE`; Linux hosts: the launch command).
#[async_trait::async_trait]
pub trait Waker: Send + Sync {
    /// Wakes `provider` and returns once it should accept a bind.
    async fn wake(&self, provider: &ProviderInfo) -> Result<(), WakeError>;
}

/// Never wakes anything.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoWaker;

#[async_trait::async_trait]
impl Waker for NoWaker {
    async fn wake(&self, _provider: &ProviderInfo) -> Result<(), WakeError> {
        Err(WakeError::NoLaunchCommand)
    }
}

/// The Linux-host waker: runs the registry's `launch` argv detached (stdio to `/dev/null`, the
/// child reaped by a thread when it exits) and waits until the provider's socket accepts a
/// connection.
#[derive(Debug, Clone)]
pub struct LaunchWaker {
    /// How long to wait for the socket.
    pub timeout: Duration,
}

impl Default for LaunchWaker {
    fn default() -> Self {
        Self {
            timeout: WAKE_TIMEOUT,
        }
    }
}

#[async_trait::async_trait]
impl Waker for LaunchWaker {
    async fn wake(&self, provider: &ProviderInfo) -> Result<(), WakeError> {
        let argv = provider
            .launch
            .as_ref()
            .filter(|a| !a.is_empty())
            .ok_or(WakeError::NoLaunchCommand)?;
        let mut cmd = std::process::Command::new(&argv[0]);
        cmd.args(&argv[1..])
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        let mut child = cmd
            .spawn()
            .map_err(|e| WakeError::Spawn(e.kind().to_string()))?;
        tracing::info!(package = %provider.package, pid = child.id(), "aci wake: launched");
        // Detached: nobody waits for it but this reaper, so it never lingers as a zombie.
        std::thread::spawn(move || {
            let _ = child.wait();
        });
        wait_for_socket(&provider.socket, self.timeout).await
    }
}

async fn wait_for_socket(path: &Path, timeout: Duration) -> Result<(), WakeError> {
    let deadline = Instant::now() + timeout;
    loop {
        if tokio::net::UnixStream::connect(path).await.is_ok() {
            return Ok(());
        }
        if Instant::now() >= deadline {
            return Err(WakeError::Timeout(timeout));
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// How a call is sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallMode {
    /// `call` (blocks a provider binder thread).
    Sync,
    /// `callAsync` with a callback (preferred, ACI-47).
    Async,
}

/// Why the controller could not get an answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ControllerError {
    /// No discovered provider has this package.
    #[error("no ACI provider {0} is known")]
    UnknownProvider(String),
    /// The provider is disabled (ACI-44: enable it to bind).
    #[error("the ACI provider {0} is disabled")]
    Disabled(String),
    /// Bind (and wake) failed; nothing was sent.
    #[error("the ACI provider {package} is unavailable: {reason}")]
    Unavailable {
        /// The provider.
        package: String,
        /// Why.
        reason: String,
    },
    /// No answer within the deadline.
    #[error("the ACI provider did not answer within {0:?}")]
    Timeout(Duration),
    /// The binder died during the call. The controller rebound once (`rebound` says whether
    /// that worked); a dispatched request is not sent again.
    #[error("the ACI provider died during the call (rebound: {rebound})")]
    ProviderDied {
        /// The request had been sent (side effects unknown).
        dispatched: bool,
        /// A new link is in the pool.
        rebound: bool,
    },
    /// The provider answered something unreadable.
    #[error("the ACI provider sent an unreadable answer: {0}")]
    Protocol(String),
}

impl ControllerError {
    /// The call-log status word.
    pub fn status(&self) -> &'static str {
        match self {
            Self::UnknownProvider(_) => "unknown_provider",
            Self::Disabled(_) => "disabled",
            Self::Unavailable { .. } => "unavailable",
            Self::Timeout(_) => "timeout",
            Self::ProviderDied { .. } => "provider_died",
            Self::Protocol(_) => "protocol_error",
        }
    }
}

/// Controller settings.
#[derive(Debug, Clone)]
pub struct ControllerConfig {
    /// Call deadline (E.5: 15 s).
    pub call_timeout: Duration,
    /// Bind deadline (connect + ping + getCapabilities).
    pub bind_timeout: Duration,
    /// Calls in flight per provider (ACI-47: 8).
    pub max_in_flight: usize,
    /// Call-log ring size.
    pub call_log_capacity: usize,
    /// Providers start enabled (hosts, tests); ACI-44's default is disabled.
    pub enabled_by_default: bool,
}

impl Default for ControllerConfig {
    fn default() -> Self {
        Self {
            call_timeout: CALL_TIMEOUT,
            bind_timeout: BIND_TIMEOUT,
            max_in_flight: MAX_IN_FLIGHT,
            call_log_capacity: CALL_LOG_CAPACITY,
            enabled_by_default: false,
        }
    }
}

/// Argument name and size in the call log (never the value).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArgSummary {
    /// Parameter name.
    pub name: String,
    /// UTF-16 units for strings, bytes for byte arrays, items for arrays, 0 for scalars.
    pub size: usize,
}

/// One call-log record (ACI-32).
#[derive(Debug, Clone, PartialEq)]
pub struct CallRecord {
    /// When the call started.
    pub at: SystemTime,
    /// Provider package.
    pub package: String,
    /// Service (virtual server name).
    pub service: String,
    /// Capability id.
    pub capability: String,
    /// Argument names and sizes.
    pub arguments: Vec<ArgSummary>,
    /// `ok`, the ACI error name, or the controller error status.
    pub status: String,
    /// How long it took.
    pub duration: Duration,
    /// Sync or async.
    pub mode: CallMode,
}

/// What the cache holds for one provider.
#[derive(Debug, Clone)]
pub struct CachedCapabilities {
    /// The key it was filled under.
    pub key: CacheKey,
    /// What `getCapabilities()` returned.
    pub raw: Arc<Vec<String>>,
    /// The converted listing (virtual plugin ids).
    pub listing: Arc<Listing>,
    /// The negotiated `aci_protocol` version, when the provider has that capability.
    pub protocol: Option<String>,
}

struct Slot {
    info: Mutex<ProviderInfo>,
    enabled: AtomicBool,
    link: tokio::sync::Mutex<Option<Arc<dyn AciLink>>>,
    gate: Semaphore,
    cache: Mutex<Option<CachedCapabilities>>,
    fill: tokio::sync::Mutex<()>,
}

struct Inner {
    config: ControllerConfig,
    connector: Arc<dyn Connector>,
    waker: Arc<dyn Waker>,
    slots: Mutex<BTreeMap<String, Arc<Slot>>>,
    log: Mutex<VecDeque<CallRecord>>,
    changes: broadcast::Sender<()>,
}

/// The controller. Cheap to clone (shared state inside).
#[derive(Clone)]
pub struct Controller {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Controller {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Controller")
            .field("providers", &self.packages())
            .finish()
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Controller {
    /// A controller with no providers yet.
    pub fn new(
        connector: Arc<dyn Connector>,
        waker: Arc<dyn Waker>,
        config: ControllerConfig,
    ) -> Self {
        let (changes, _) = broadcast::channel(16);
        Self {
            inner: Arc::new(Inner {
                config,
                connector,
                waker,
                slots: Mutex::new(BTreeMap::new()),
                log: Mutex::new(VecDeque::new()),
                changes,
            }),
        }
    }

    /// The settings.
    pub fn config(&self) -> &ControllerConfig {
        &self.inner.config
    }

    /// Replaces the provider set (a fresh discovery). A provider whose (package, digest,
    /// versionCode) changed loses its cache and its link (package replaced, re-signed); a
    /// provider no longer present is dropped (package removed). Listeners of
    /// [`Controller::subscribe`] hear about any change.
    pub fn update_providers(&self, providers: Vec<ProviderInfo>) {
        let mut changed = false;
        {
            let mut slots = lock(&self.inner.slots);
            let keep: std::collections::BTreeSet<&str> =
                providers.iter().map(|p| p.package.as_str()).collect();
            let before = slots.len();
            slots.retain(|k, _| keep.contains(k.as_str()));
            changed |= slots.len() != before;
            for p in providers {
                match slots.get(&p.package) {
                    Some(slot) => {
                        let mut info = lock(&slot.info);
                        if *info != p {
                            tracing::info!(package = %p.package, version = p.version_code, "aci provider changed; cache dropped");
                            *info = p;
                            *lock(&slot.cache) = None;
                            if let Ok(mut l) = slot.link.try_lock() {
                                *l = None;
                            }
                            changed = true;
                        }
                    }
                    None => {
                        slots.insert(
                            p.package.clone(),
                            Arc::new(Slot {
                                info: Mutex::new(p),
                                enabled: AtomicBool::new(self.inner.config.enabled_by_default),
                                link: tokio::sync::Mutex::new(None),
                                gate: Semaphore::new(self.inner.config.max_in_flight.max(1)),
                                cache: Mutex::new(None),
                                fill: tokio::sync::Mutex::new(()),
                            }),
                        );
                        changed = true;
                    }
                }
            }
        }
        if changed {
            let _ = self.inner.changes.send(());
        }
    }

    /// Discovers from a host registry and replaces the provider set.
    pub fn discover_from(&self, registry: &RegistryResolver) {
        self.update_providers(discover(registry));
    }

    /// Known packages.
    pub fn packages(&self) -> Vec<String> {
        lock(&self.inner.slots).keys().cloned().collect()
    }

    /// Known providers.
    pub fn providers(&self) -> Vec<ProviderInfo> {
        lock(&self.inner.slots)
            .values()
            .map(|s| lock(&s.info).clone())
            .collect()
    }

    fn slot(&self, package: &str) -> Result<Arc<Slot>, ControllerError> {
        lock(&self.inner.slots)
            .get(package)
            .cloned()
            .ok_or_else(|| ControllerError::UnknownProvider(package.to_owned()))
    }

    /// The provider whose virtual plugin and server are `(plugin, server)`.
    pub fn provider_for(&self, plugin: &str, server: &str) -> Option<ProviderInfo> {
        lock(&self.inner.slots)
            .values()
            .map(|s| lock(&s.info).clone())
            .find(|i| i.plugin == plugin && i.server == server)
    }

    /// Enables or disables a provider (ACI-44). Disabling drops its link.
    pub fn set_enabled(&self, package: &str, enabled: bool) -> Result<(), ControllerError> {
        let slot = self.slot(package)?;
        let was = slot.enabled.swap(enabled, Ordering::SeqCst);
        if !enabled && let Ok(mut l) = slot.link.try_lock() {
            *l = None;
        }
        if was != enabled {
            let _ = self.inner.changes.send(());
        }
        Ok(())
    }

    /// Whether a provider is enabled.
    pub fn is_enabled(&self, package: &str) -> bool {
        self.slot(package)
            .map(|s| s.enabled.load(Ordering::SeqCst))
            .unwrap_or(false)
    }

    /// A receiver that gets `()` whenever the provider set or a capability cache changes.
    pub fn subscribe(&self) -> broadcast::Receiver<()> {
        self.inner.changes.subscribe()
    }

    /// Drops a provider's cached capabilities (ACI-31: `CAPABILITY_NOT_FOUND` for a cached id).
    pub fn invalidate(&self, package: &str) {
        if let Ok(slot) = self.slot(package)
            && lock(&slot.cache).take().is_some()
        {
            tracing::info!(package, "aci capability cache invalidated");
            let _ = self.inner.changes.send(());
        }
    }

    /// Whether a link to `package` is in the pool and alive.
    pub async fn is_bound(&self, package: &str) -> bool {
        match self.slot(package) {
            Ok(slot) => slot
                .link
                .lock()
                .await
                .as_ref()
                .is_some_and(|l| l.is_alive()),
            Err(_) => false,
        }
    }

    /// Binds (waking the provider when needed) and pings.
    pub async fn bind(&self, package: &str) -> Result<(), ControllerError> {
        let slot = self.enabled_slot(package)?;
        self.link(&slot).await.map(|_| ())
    }

    fn enabled_slot(&self, package: &str) -> Result<Arc<Slot>, ControllerError> {
        let slot = self.slot(package)?;
        if !slot.enabled.load(Ordering::SeqCst) {
            return Err(ControllerError::Disabled(package.to_owned()));
        }
        Ok(slot)
    }

    /// The pooled link, or a new one: connect; on failure wake and connect once more; then
    /// `ping()` must say `true`.
    async fn link(&self, slot: &Slot) -> Result<Arc<dyn AciLink>, ControllerError> {
        let mut pooled = slot.link.lock().await;
        if let Some(l) = pooled.as_ref() {
            if l.is_alive() {
                return Ok(l.clone());
            }
            *pooled = None;
        }
        let info = lock(&slot.info).clone();
        let unavailable = |reason: String| ControllerError::Unavailable {
            package: info.package.clone(),
            reason,
        };
        let timeout = self.inner.config.bind_timeout;
        let link = match tokio::time::timeout(timeout, self.inner.connector.connect(&info)).await {
            Ok(Ok(l)) => l,
            first => {
                let why = match first {
                    Ok(Err(e)) => e.to_string(),
                    _ => "bind timed out".to_owned(),
                };
                tracing::info!(package = %info.package, "aci bind failed; waking the provider");
                self.inner
                    .waker
                    .wake(&info)
                    .await
                    .map_err(|w| unavailable(format!("{why}; wake failed: {w}")))?;
                match tokio::time::timeout(timeout, self.inner.connector.connect(&info)).await {
                    Ok(Ok(l)) => l,
                    Ok(Err(e)) => return Err(unavailable(format!("bind after wake: {e}"))),
                    Err(_) => return Err(unavailable("bind after wake timed out".into())),
                }
            }
        };
        match tokio::time::timeout(timeout, link.ping()).await {
            Ok(Ok(true)) => {}
            Ok(Ok(false)) => return Err(unavailable("ping answered false".into())),
            Ok(Err(e)) => return Err(unavailable(format!("ping failed: {e}"))),
            Err(_) => return Err(unavailable("ping timed out".into())),
        }
        tracing::info!(package = %info.package, "aci provider bound");
        *pooled = Some(link.clone());
        Ok(link)
    }

    /// Drops `link` from the pool if it is still the pooled one.
    async fn discard(&self, slot: &Slot, link: &Arc<dyn AciLink>) {
        let mut pooled = slot.link.lock().await;
        if pooled.as_ref().is_some_and(|p| Arc::ptr_eq(p, link)) {
            *pooled = None;
        }
    }

    /// The provider's capabilities, from the cache or from `getCapabilities()` (binding first;
    /// ACI-31). Negotiates `aci_protocol` on every fill.
    pub async fn capabilities(&self, package: &str) -> Result<CachedCapabilities, ControllerError> {
        let slot = self.enabled_slot(package)?;
        let key = lock(&slot.info).cache_key();
        if let Some(c) = lock(&slot.cache).as_ref().filter(|c| c.key == key) {
            return Ok(c.clone());
        }
        let _filling = slot.fill.lock().await;
        if let Some(c) = lock(&slot.cache).as_ref().filter(|c| c.key == key) {
            return Ok(c.clone());
        }
        let info = lock(&slot.info).clone();
        let mut raw = None;
        for attempt in 0..2 {
            let link = self.link(&slot).await?;
            match tokio::time::timeout(self.inner.config.bind_timeout, link.capabilities()).await {
                Ok(Ok(r)) => {
                    raw = Some(r);
                    break;
                }
                Ok(Err(LinkError::Dead { .. } | LinkError::Unreachable(_))) if attempt == 0 => {
                    self.discard(&slot, &link).await;
                }
                Ok(Err(e)) => {
                    self.discard(&slot, &link).await;
                    return Err(ControllerError::Unavailable {
                        package: info.package.clone(),
                        reason: format!("getCapabilities failed: {e}"),
                    });
                }
                Err(_) => return Err(ControllerError::Timeout(self.inner.config.bind_timeout)),
            }
        }
        let raw = raw.ok_or_else(|| ControllerError::Unavailable {
            package: info.package.clone(),
            reason: "getCapabilities failed twice".into(),
        })?;
        let listing =
            capability_model::aci::capabilities_from_strings(&info.plugin, &info.server, &raw);
        let protocol = if listing
            .capabilities
            .iter()
            .any(|c| c.id.name == ACI_PROTOCOL_CAPABILITY)
        {
            self.negotiate(&slot).await
        } else {
            None
        };
        tracing::info!(
            package = %info.package,
            capabilities = listing.capabilities.len(),
            issues = listing.issues.len(),
            protocol = protocol.as_deref().unwrap_or("-"),
            "aci capabilities cached"
        );
        let cached = CachedCapabilities {
            key,
            raw: Arc::new(raw),
            listing: Arc::new(listing),
            protocol,
        };
        *lock(&slot.cache) = Some(cached.clone());
        Ok(cached)
    }

    async fn negotiate(&self, slot: &Slot) -> Option<String> {
        let link = self.link(slot).await.ok()?;
        let req = CallRequest::new(ACI_PROTOCOL_CAPABILITY, Bundle::new());
        let resp = tokio::time::timeout(self.inner.config.call_timeout, link.call(req))
            .await
            .ok()?
            .ok()?;
        if !resp.success {
            return None;
        }
        match resp.result.get(PROTOCOL_VERSION_KEY) {
            Some(BundleValue::String(Some(v))) => {
                if v != ACI_PROTOCOL_V1 {
                    tracing::warn!(protocol = %v, "aci provider speaks another protocol version");
                }
                Some(v.clone())
            }
            _ => None,
        }
    }

    /// The negotiated `aci_protocol` version of a provider (after its capabilities were read).
    pub fn protocol(&self, package: &str) -> Option<String> {
        let slot = self.slot(package).ok()?;
        lock(&slot.cache).as_ref().and_then(|c| c.protocol.clone())
    }

    /// Calls a capability (queued FIFO behind [`MAX_IN_FLIGHT`] calls to the same provider),
    /// under the call deadline, rebinding once after a dead binder. Every call is logged.
    pub async fn call(
        &self,
        package: &str,
        request: CallRequest,
        mode: CallMode,
        progress: Option<ProgressFn>,
    ) -> Result<CallResponse, ControllerError> {
        let started_at = SystemTime::now();
        let started = Instant::now();
        let arguments = bundle_summary(&request.params)
            .into_iter()
            .map(|(name, size)| ArgSummary { name, size })
            .collect();
        let capability = request.capability.clone();
        let (outcome, service) = match self.enabled_slot(package) {
            Ok(slot) => {
                let service = lock(&slot.info).server.clone();
                (
                    self.call_in_slot(&slot, request, mode, progress).await,
                    service,
                )
            }
            Err(e) => (Err(e), String::new()),
        };
        let status = match &outcome {
            Ok(r) if r.success && r.error_code == 0 => "ok".to_owned(),
            Ok(r) => crate::convert::AciErrorKind::from_code(r.error_code).name(),
            Err(e) => e.status().to_owned(),
        };
        let duration = started.elapsed();
        tracing::info!(
            package,
            capability = %capability,
            status = %status,
            duration_ms = duration.as_millis() as u64,
            "aci call"
        );
        self.record(CallRecord {
            at: started_at,
            package: package.to_owned(),
            service,
            capability,
            arguments,
            status,
            duration,
            mode,
        });
        outcome
    }

    async fn call_in_slot(
        &self,
        slot: &Slot,
        request: CallRequest,
        mode: CallMode,
        progress: Option<ProgressFn>,
    ) -> Result<CallResponse, ControllerError> {
        let _permit = slot
            .gate
            .acquire()
            .await
            .map_err(|_| ControllerError::Unavailable {
                package: lock(&slot.info).package.clone(),
                reason: "queue closed".into(),
            })?;
        let timeout = self.inner.config.call_timeout;
        let mut rebound = false;
        loop {
            let link = self.link(slot).await?;
            let send = async {
                match mode {
                    CallMode::Sync => link.call(request.clone()).await,
                    CallMode::Async => link.call_async(request.clone(), progress.clone()).await,
                }
            };
            let outcome = match tokio::time::timeout(timeout, send).await {
                Ok(o) => o,
                Err(_) => return Err(ControllerError::Timeout(timeout)),
            };
            match outcome {
                Ok(resp) => return Ok(resp),
                Err(LinkError::Protocol(m)) => return Err(ControllerError::Protocol(m)),
                Err(LinkError::Dead { dispatched }) => {
                    self.discard(slot, &link).await;
                    if rebound {
                        return Err(ControllerError::ProviderDied {
                            dispatched,
                            rebound: false,
                        });
                    }
                    rebound = true;
                    let again = self.link(slot).await.is_ok();
                    tracing::warn!(dispatched, rebound = again, "aci binder died during a call");
                    if dispatched || !again {
                        return Err(ControllerError::ProviderDied {
                            dispatched,
                            rebound: again,
                        });
                    }
                }
                Err(LinkError::Unreachable(reason)) => {
                    self.discard(slot, &link).await;
                    if rebound {
                        return Err(ControllerError::Unavailable {
                            package: lock(&slot.info).package.clone(),
                            reason,
                        });
                    }
                    rebound = true;
                }
            }
        }
    }

    fn record(&self, record: CallRecord) {
        let mut log = lock(&self.inner.log);
        if log.len() >= self.inner.config.call_log_capacity.max(1) {
            log.pop_front();
        }
        log.push_back(record);
    }

    /// The call log, oldest first.
    pub fn call_log(&self) -> Vec<CallRecord> {
        lock(&self.inner.log).iter().cloned().collect()
    }
}

/// A fresh call id in UUID form (E.2: a random UUID by default). Built from the clock, the
/// process id and a counter: unique per process run, which is all a call id needs.
pub fn new_call_id() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let nanos = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let mixed = nanos ^ (u128::from(std::process::id()) << 64) ^ (u128::from(n) << 96);
    let mut h = mixed ^ u128::from(n).wrapping_mul(0x9E37_79B9_7F4A_7C15_F39C_C060_5CED_C835);
    h = (h & !(0xF << 76)) | (0x4 << 76); // version 4 nibble
    h = (h & !(0x3 << 62)) | (0x2 << 62); // variant bits
    let s = format!("{h:032x}");
    format!(
        "{}-{}-{}-{}-{}",
        &s[0..8],
        &s[8..12],
        &s[12..16],
        &s[16..20],
        &s[20..32]
    )
}

/// Where a [`BinderConnector`] finds providers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinderTransport {
    /// rsbinder RPC on the provider's Unix socket ([`ProviderInfo::socket`]), whose owner must
    /// be the provider's UID.
    Rpc,
    /// Kernel Binder (`/dev/binder`), the service looked up by name in the service manager.
    Kernel,
}

/// The real [`Connector`]: binds over rsbinder with [`crate::provider::AciClient`] and watches
/// the provider's binder for death (`linkToDeath`; on RPC, the session ending).
#[derive(Debug, Clone)]
pub struct BinderConnector {
    /// Transport.
    pub transport: BinderTransport,
    /// The service name ([`BINDER_SERVICE_NAME`] by default).
    pub service_name: String,
    /// `callerPkg` written into requests ([`CONTROLLER_PACKAGE`], ACI-49).
    pub caller_pkg: String,
    /// rsbinder RPC session timeout (how long the peer may take to answer a transaction
    /// before the session counts as broken); `None` = rsbinder's default.
    pub rpc_timeout: Option<Duration>,
}

impl BinderConnector {
    /// rsbinder RPC on Unix sockets.
    pub fn rpc() -> Self {
        Self {
            transport: BinderTransport::Rpc,
            service_name: BINDER_SERVICE_NAME.to_owned(),
            caller_pkg: CONTROLLER_PACKAGE.to_owned(),
            rpc_timeout: None,
        }
    }

    /// Kernel Binder.
    pub fn kernel() -> Self {
        Self {
            transport: BinderTransport::Kernel,
            ..Self::rpc()
        }
    }
}

struct DeathFlag(AtomicBool);

impl rsbinder::DeathRecipient for DeathFlag {
    fn binder_died(&self, _who: &rsbinder::WIBinder) {
        self.0.store(true, Ordering::Release);
        tracing::debug!("aci provider binder died");
    }
}

#[async_trait::async_trait]
impl Connector for BinderConnector {
    async fn connect(&self, provider: &ProviderInfo) -> Result<Arc<dyn AciLink>, LinkError> {
        let uri = match self.transport {
            BinderTransport::Rpc => {
                use std::os::unix::fs::MetadataExt as _;
                let meta = std::fs::metadata(&provider.socket)
                    .map_err(|e| LinkError::Unreachable(format!("socket: {}", e.kind())))?;
                // On hosts the socket's owner stands for the provider's identity (DESIGN
                // "Identity is the kernel's"): a socket planted by someone else is not bound.
                if meta.uid() != provider.uid {
                    return Err(LinkError::Unreachable(format!(
                        "the socket belongs to uid {}, not the provider's uid {}",
                        meta.uid(),
                        provider.uid
                    )));
                }
                binder_channel::binder::rpc_uri(&provider.socket, &self.service_name)
            }
            BinderTransport::Kernel => binder_channel::binder::kernel_uri(&self.service_name),
        };
        let client = crate::provider::AciClient::connect(uri, self.rpc_timeout)
            .await
            .map_err(|e| LinkError::Unreachable(e.to_string()))?;
        let death = Arc::new(DeathFlag(AtomicBool::new(false)));
        if let Err(code) = client.binder().link_to_death_arc(&death) {
            tracing::debug!(
                ?code,
                "aci: linkToDeath unavailable; deaths seen on use only"
            );
        }
        Ok(Arc::new(BinderLink {
            client,
            death,
            caller_pkg: self.caller_pkg.clone(),
        }))
    }
}

struct BinderLink {
    client: crate::provider::AciClient,
    death: Arc<DeathFlag>,
    caller_pkg: String,
}

impl BinderLink {
    fn request(&self, r: CallRequest) -> crate::wire::AciRequest {
        let mut w = crate::wire::AciRequest::new(r.capability);
        w.params = r.params;
        w.call_id = r.call_id;
        w.caller_pkg = Some(self.caller_pkg.clone());
        w
    }

    fn fail(&self, e: crate::provider::AciClientError, dispatched: bool) -> LinkError {
        use crate::provider::AciClientError as E;
        match e {
            E::DeadBinder => {
                self.death.0.store(true, Ordering::Release);
                LinkError::Dead { dispatched }
            }
            other => LinkError::Protocol(other.to_string()),
        }
    }

    fn response(r: crate::wire::AciResponse) -> Result<CallResponse, LinkError> {
        if r.result_error().is_some() {
            return Err(LinkError::Protocol(
                "the result Bundle could not be read".into(),
            ));
        }
        Ok(CallResponse {
            success: r.success,
            result: r.result,
            error_code: r.error_code,
            error_message: r.error_message,
            call_id: Some(r.call_id),
        })
    }
}

#[async_trait::async_trait]
impl AciLink for BinderLink {
    async fn call(&self, request: CallRequest) -> Result<CallResponse, LinkError> {
        let req = self.request(request);
        match self.client.call(&req).await {
            Ok(r) => Self::response(r),
            // A sync transaction that met a dead binder may have run: dispatched.
            Err(e) => Err(self.fail(e, true)),
        }
    }

    async fn call_async(
        &self,
        request: CallRequest,
        progress: Option<ProgressFn>,
    ) -> Result<CallResponse, LinkError> {
        let req = self.request(request);
        let on_progress = move |n: i32, m: Option<String>| {
            if let Some(p) = &progress {
                p(n, m.as_deref());
            }
        };
        // The result waits on the callback; a provider dying meanwhile is seen through the
        // death flag, polled while waiting.
        let call = self.client.call_async(&req, on_progress);
        tokio::pin!(call);
        let mut tick = tokio::time::interval(Duration::from_millis(100));
        loop {
            tokio::select! {
                r = &mut call => {
                    return match r {
                        Ok(r) => Self::response(r),
                        Err(e) => Err(self.fail(e, true)),
                    };
                }
                _ = tick.tick() => {
                    if self.death.0.load(Ordering::Acquire) {
                        return Err(LinkError::Dead { dispatched: true });
                    }
                }
            }
        }
    }

    async fn capabilities(&self) -> Result<Vec<String>, LinkError> {
        self.client
            .get_capabilities()
            .await
            .map_err(|e| self.fail(e, false))
    }

    async fn ping(&self) -> Result<bool, LinkError> {
        self.client.ping().await.map_err(|e| self.fail(e, false))
    }

    fn is_alive(&self) -> bool {
        !self.death.0.load(Ordering::Acquire)
    }
}
