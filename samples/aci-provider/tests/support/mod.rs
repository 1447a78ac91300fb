//! Shared rig for the cross-process tests: the real `aci-provider` binary as a separate
//! process, and a controller over rsbinder RPC on a Unix socket in a temp dir.
//!
//! Both processes run as the test's UID (different UIDs need root, which the test does not
//! have). Each side's registry maps that UID to the *other* side's package, as the device's
//! PackageManager would: the controller's registry says the socket's owner is the provider
//! `com.example.acidemo`; the provider's registry says its caller is `org.agentos.app` (or an
//! intruder, for the denial tests).
#![allow(dead_code, unreachable_pub, clippy::unwrap_used, clippy::expect_used)]

use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use aci_adapter::controller::{BinderConnector, Controller, ControllerConfig, LaunchWaker};
use permissions::RegistryResolver;

pub const PROVIDER_PKG: &str = "com.example.acidemo";
pub const DIGEST: &str = "AB00000000000000000000000000000000000000000000000000000000000001";

pub fn provider_bin() -> &'static str {
    env!("CARGO_BIN_EXE_aci-provider")
}

pub struct Rig {
    pub dir: tempfile::TempDir,
    pub uid: u32,
}

impl Rig {
    pub fn new() -> Rig {
        let dir = tempfile::tempdir().unwrap();
        let uid = std::fs::metadata(dir.path()).unwrap().uid();
        std::fs::create_dir_all(dir.path().join("data/files")).unwrap();
        Rig { dir, uid }
    }
    pub fn path(&self, p: &str) -> PathBuf {
        self.dir.path().join(p)
    }
    pub fn socket(&self) -> PathBuf {
        self.path("aci.sock")
    }

    /// The provider's view: who calls it (`caller`, holding `perms`).
    pub fn write_provider_registry(&self, caller: &str, perms: &[&str]) -> PathBuf {
        let perms: Vec<String> = perms.iter().map(|p| format!("\"{p}\"")).collect();
        let text = format!(
            r#"{{"version":1,"packages":[{{"uid":{},"package":"{caller}","signingCertSha256":"{DIGEST}","permissions":[{}]}}]}}"#,
            self.uid,
            perms.join(",")
        );
        let p = self.path("provider-registry.json");
        std::fs::write(&p, text).unwrap();
        p
    }

    pub fn provider_args(&self, extra: &[&str]) -> Vec<String> {
        let mut v = vec![
            provider_bin().to_owned(),
            "--socket".into(),
            self.socket().display().to_string(),
            "--data".into(),
            self.path("data").display().to_string(),
            "--registry".into(),
            self.path("provider-registry.json").display().to_string(),
            "--pid-file".into(),
            self.path("provider.pid").display().to_string(),
        ];
        v.extend(extra.iter().map(|s| (*s).to_owned()));
        v
    }

    /// The controller's view: the provider's socket and (optionally) how to launch it.
    pub fn controller_registry(&self, launch: Option<Vec<String>>) -> RegistryResolver {
        let launch = match launch {
            Some(argv) => format!(",\"launch\":{}", serde_json::to_string(&argv).unwrap()),
            None => String::new(),
        };
        let text = format!(
            r#"{{"version":1,"packages":[{{"uid":{},"package":"{PROVIDER_PKG}","signingCertSha256":"{DIGEST}","versionCode":3,
               "exports":{{"aci":{{"actions":["com.ai.assistance.aci.ACTION_BIND","com.ai.assistance.aci.ACTION_WAKE"],"socket":"{}"}}}}{launch}}}]}}"#,
            self.uid,
            self.socket().display()
        );
        RegistryResolver::from_json(&text, "controller-registry").unwrap()
    }

    pub fn controller(&self, launch: Option<Vec<String>>, config: ControllerConfig) -> Controller {
        let c = Controller::new(
            Arc::new(BinderConnector::rpc()),
            Arc::new(LaunchWaker {
                timeout: Duration::from_secs(20),
            }),
            ControllerConfig {
                enabled_by_default: true,
                ..config
            },
        );
        c.discover_from(&self.controller_registry(launch));
        c
    }

    /// Starts the provider as a child process and waits for its socket.
    pub fn spawn_provider(&self, extra: &[&str]) -> Provider {
        let args = self.provider_args(extra);
        let child = Command::new(&args[0])
            .args(&args[1..])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        wait_for_socket(&self.socket());
        Provider { child: Some(child) }
    }

    /// Stops a provider started by the launch command (by the pid it wrote).
    pub fn stop_launched(&self) {
        if let Ok(pid) = std::fs::read_to_string(self.path("provider.pid")) {
            let _ = Command::new("kill").arg("-TERM").arg(pid.trim()).status();
        }
    }
}

pub fn wait_for_socket(path: &Path) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while Instant::now() < deadline {
        if std::os::unix::net::UnixStream::connect(path).is_ok() {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    panic!("the provider did not come up");
}

pub struct Provider {
    pub child: Option<Child>,
}

impl Provider {
    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

impl Drop for Provider {
    fn drop(&mut self) {
        self.kill();
    }
}
