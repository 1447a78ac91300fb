//! Shared pieces of the provider tests: a scripted provider, a registry that maps this test
//! process's UID (the kernel-given `SO_PEERCRED` of every RPC connection it makes) to a
//! package, and a server on a Unix socket in a temp dir.
#![allow(dead_code, unreachable_pub, clippy::unwrap_used, clippy::expect_used)]

use std::os::unix::fs::MetadataExt;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use aci_adapter::provider::{
    AciClient, AciServer, AciService, CapabilitySpec, Progress, ProviderError,
};
use aci_adapter::wire::{AciRequest, AciResponse};
use permissions::identity::{CertDigest, RegistryEntry};
use permissions::{AciPermissionGate, AciPolicy, RegistryResolver};

/// The UID this process runs as (what the provider sees through `SO_PEERCRED`).
pub fn my_uid() -> u32 {
    let f = tempfile::NamedTempFile::new().unwrap();
    f.as_file().metadata().unwrap().uid()
}

/// The package the test caller is registered as.
pub const CALLER_PKG: &str = "org.agentos.app";

/// A registry where this process's UID is `CALLER_PKG` holding `perms`.
pub fn resolver(perms: &[&str]) -> Arc<RegistryResolver> {
    resolver_for(my_uid(), perms)
}

/// A registry where `uid` is `CALLER_PKG` holding `perms`.
pub fn resolver_for(uid: u32, perms: &[&str]) -> Arc<RegistryResolver> {
    Arc::new(RegistryResolver::from_entries([RegistryEntry {
        uid,
        package: CALLER_PKG.to_owned(),
        signing_cert_sha256: CertDigest::parse(&"ab".repeat(32)).unwrap(),
        version_code: 1,
        label: Some("AgentOS".to_owned()),
        permissions: perms.iter().map(|p| (*p).to_owned()).collect(),
        exports: Default::default(),
        launch: None,
    }]))
}

/// What the scripted provider observed.
#[derive(Debug, Default)]
pub struct Seen {
    pub check_permission: AtomicUsize,
    pub before: AtomicUsize,
    pub calls: AtomicUsize,
    pub after: AtomicUsize,
    pub caller_pkgs: std::sync::Mutex<Vec<Option<String>>>,
    /// Releases calls to `wait`.
    pub release: tokio::sync::Notify,
}

impl Seen {
    pub fn hooks(&self) -> usize {
        self.check_permission.load(Ordering::SeqCst)
            + self.before.load(Ordering::SeqCst)
            + self.calls.load(Ordering::SeqCst)
            + self.after.load(Ordering::SeqCst)
    }
}

/// A provider with one capability per behaviour under test.
pub struct Scripted {
    pub seen: Arc<Seen>,
    pub allow_hook: bool,
}

impl Scripted {
    pub fn new() -> (Self, Arc<Seen>) {
        let seen = Arc::new(Seen::default());
        (
            Self {
                seen: seen.clone(),
                allow_hook: true,
            },
            seen,
        )
    }
}

#[async_trait::async_trait]
impl AciService for Scripted {
    fn capabilities(&self) -> Result<Vec<CapabilitySpec>, ProviderError> {
        Ok(vec![
            CapabilitySpec::create("echo", "Echoes the text back.")
                .add_param("text", "string", true, "Text to echo")
                .add_param("times", "int", false, "Repetitions")
                .add_result("text", "string", "The echoed text"),
            CapabilitySpec::create("whoami", "Tells the caller package the provider saw."),
            CapabilitySpec::create("fail", "Always fails."),
            CapabilitySpec::create("boom", "Panics."),
            CapabilitySpec::create("slow", "Counts to 100 with progress.")
                .add_flag(CapabilitySpec::FLAG_BACKGROUND),
            CapabilitySpec::create("wipe", "Wipes everything.")
                .add_flag(CapabilitySpec::FLAG_DANGEROUS_ACTION),
            CapabilitySpec::create("secret", "Needs a special permission.")
                .require_permission("com.example.permission.SECRET"),
            CapabilitySpec::create("confirm", "Asks the user first.").require_user_confirm(true),
            CapabilitySpec::create("wait", "Waits until the test releases it."),
        ])
    }

    async fn on_call(&self, request: &AciRequest) -> Result<AciResponse, ProviderError> {
        self.seen.calls.fetch_add(1, Ordering::SeqCst);
        self.seen
            .caller_pkgs
            .lock()
            .unwrap()
            .push(request.caller_pkg.clone());
        match request.capability.as_str() {
            "echo" => {
                let text = request.get_string("text").unwrap_or_default();
                let times = request.get_int("times").unwrap_or(1).clamp(0, 10) as usize;
                Ok(AciResponse::success().put_string("text", text.repeat(times)))
            }
            "whoami" => Ok(AciResponse::success()
                .put_string("callerPkg", request.caller_pkg.clone().unwrap_or_default())),
            "fail" => Err(ProviderError::new(
                "the backing store is offline. Retry later with token 1234",
            )),
            "boom" => panic!("provider bug"),
            "wait" => {
                self.seen.release.notified().await;
                Ok(AciResponse::success().put_bool("released", true))
            }
            _ => Ok(AciResponse::success().put_bool("done", true)),
        }
    }

    async fn on_call_async(
        &self,
        request: &AciRequest,
        progress: &Progress,
    ) -> Result<AciResponse, ProviderError> {
        if request.capability == "slow" {
            self.seen.calls.fetch_add(1, Ordering::SeqCst);
            for p in [10, 50, 90] {
                progress.report(p, Some("working"));
                tokio::task::yield_now().await;
            }
            return Ok(AciResponse::success().put_int("count", 100));
        }
        self.on_call(request).await
    }

    fn on_check_permission(&self, _request: &AciRequest, _caller_pkg: &str) -> bool {
        self.seen.check_permission.fetch_add(1, Ordering::SeqCst);
        self.allow_hook
    }

    fn on_before_call(&self, _request: &AciRequest) {
        self.seen.before.fetch_add(1, Ordering::SeqCst);
    }

    fn on_after_call(&self, _request: &AciRequest, _response: &AciResponse) {
        self.seen.after.fetch_add(1, Ordering::SeqCst);
    }
}

/// A running server and a client connected to it over rsbinder RPC on a Unix socket.
pub struct Running {
    pub server: AciServer,
    pub client: AciClient,
    pub path: std::path::PathBuf,
    _guard: rsbinder::ServerGuard,
    _dir: tempfile::TempDir,
}

/// Serves `service` with a gate over `perms` for this process's UID, and connects a client.
pub async fn start(
    service: Arc<dyn AciService>,
    perms: &[&str],
    policy: AciPolicy,
    consent: Option<Arc<permissions::ConsentBroker>>,
) -> Running {
    let gate = AciPermissionGate::new(resolver(perms), policy);
    let server = AciServer::new(service, gate, consent).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("aci.sock");
    let guard = server.serve_unix(&path, "aci").unwrap();
    let client = AciClient::connect_unix(&path, "aci").await.unwrap();
    Running {
        server,
        client,
        path,
        _guard: guard,
        _dir: dir,
    }
}

/// Both permissions a normal controller holds.
pub const CALL: &str = "ai.aci.permission.CALL";
pub const CALL_DANGEROUS: &str = "ai.aci.permission.CALL_DANGEROUS";
