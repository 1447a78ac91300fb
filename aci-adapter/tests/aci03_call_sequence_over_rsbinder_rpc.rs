//! ACI-03 / ACI-10 / ACI-14 / ACI-16 over real rsbinder RPC on a Unix socket: `ping`,
//! `getCapabilities` (E.3 JSON), a sync `call`, a `callAsync` with progress, 404 / 400 / 500,
//! and `callId` copied.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod provider_support;

use std::sync::{Arc, Mutex};

use aci_adapter::bundle::BundleValue;
use aci_adapter::wire::{AciRequest, error_code};
use permissions::AciPolicy;
use provider_support::{CALL, Scripted, start};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn aci03_ping_list_call_and_call_async() {
    let (svc, seen) = Scripted::new();
    let rt = start(Arc::new(svc), &[CALL], AciPolicy::allow_all(), None).await;

    assert!(rt.client.ping().await.unwrap());

    let caps = rt.client.get_capabilities().await.unwrap();
    assert_eq!(caps.len(), 9);
    let echo: serde_json::Value = serde_json::from_str(&caps[0]).unwrap();
    assert_eq!(echo["id"], "echo");
    assert_eq!(echo["version"], "1.0");
    assert_eq!(echo["params"][0]["name"], "text");
    assert_eq!(echo["params"][0]["required"], true);
    assert_eq!(echo["requireUserConfirm"], false);

    let req = AciRequest::new("echo")
        .param("text", BundleValue::String(Some("hé🙂".into())))
        .param("times", BundleValue::Int(2));
    let resp = rt.client.call(&req).await.unwrap();
    assert!(resp.success, "{resp:?}");
    assert_eq!(resp.error_code, 0);
    assert_eq!(resp.call_id, req.call_id);
    assert_eq!(
        resp.result.get("text"),
        Some(&BundleValue::String(Some("hé🙂hé🙂".into())))
    );

    let progress = Arc::new(Mutex::new(Vec::new()));
    let p2 = progress.clone();
    let req = AciRequest::new("slow");
    let resp = rt
        .client
        .call_async(&req, move |p, m| p2.lock().unwrap().push((p, m)))
        .await
        .unwrap();
    assert!(resp.success);
    assert_eq!(resp.call_id, req.call_id);
    assert_eq!(resp.result.get("count"), Some(&BundleValue::Int(100)));
    let got: Vec<i32> = progress.lock().unwrap().iter().map(|(p, _)| *p).collect();
    assert_eq!(
        got,
        vec![10, 50, 90],
        "progress arrives in order, before the result"
    );
    assert_eq!(seen.calls.load(std::sync::atomic::Ordering::SeqCst), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn aci16_unknown_capability_missing_param_and_failure() {
    let (svc, seen) = Scripted::new();
    let rt = start(Arc::new(svc), &[CALL], AciPolicy::allow_all(), None).await;

    let req = AciRequest::new("nope");
    let resp = rt.client.call(&req).await.unwrap();
    assert!(!resp.success);
    assert_eq!(resp.error_code, error_code::CAPABILITY_NOT_FOUND);
    assert_eq!(
        resp.error_message.as_deref(),
        Some("unknown capability: nope")
    );
    assert_eq!(resp.call_id, req.call_id);

    // An id no provider can have is echoed only up to 128 characters.
    let long = "x".repeat(5000);
    let resp = rt
        .client
        .call(&AciRequest::new(long.clone()))
        .await
        .unwrap();
    assert_eq!(resp.error_code, error_code::CAPABILITY_NOT_FOUND);
    assert_eq!(
        resp.error_message.unwrap(),
        format!("unknown capability: {}…", &long[..128])
    );

    for params in [
        vec![],
        vec![("text", BundleValue::String(Some("   ".into())))],
        vec![("text", BundleValue::String(None))],
    ] {
        let mut req = AciRequest::new("echo");
        for (k, v) in params {
            req.params.put(k, v);
        }
        let resp = rt.client.call(&req).await.unwrap();
        assert_eq!(resp.error_code, error_code::BAD_REQUEST);
        assert_eq!(
            resp.error_message.as_deref(),
            Some("missing required parameter: text")
        );
        assert_eq!(resp.call_id, req.call_id);
    }
    assert_eq!(seen.hooks(), 0, "no hook runs for a rejected request");

    let resp = rt.client.call(&AciRequest::new("fail")).await.unwrap();
    assert_eq!(resp.error_code, error_code::INTERNAL_ERROR);
    assert_eq!(
        resp.error_message.as_deref(),
        Some("the backing store is offline."),
        "one sentence, nothing after it"
    );

    let resp = rt
        .client
        .call_async(&AciRequest::new("boom"), |_, _| {})
        .await
        .unwrap();
    assert_eq!(resp.error_code, error_code::INTERNAL_ERROR);
    // The provider survived the panic.
    assert!(rt.client.ping().await.unwrap());
}

// ---------------------------------------------------------------------------------------------
// The provider in another process, under another UID when this test runs as root.
// ---------------------------------------------------------------------------------------------

mod child {
    use std::io::{BufRead, BufReader};
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    use std::os::unix::process::CommandExt;
    use std::path::Path;
    use std::process::{Child, Command, Stdio};
    use std::time::Duration;

    use aci_adapter::provider::{AciServer, AciService, CapabilitySpec, ProviderError};
    use aci_adapter::wire::{AciRequest, AciResponse};
    use permissions::{AciPermissionGate, AciPolicy};

    use super::provider_support::{CALL, resolver_for};

    pub(crate) const SOCKET_ENV: &str = "ACI_TEST_CHILD_PROVIDER_SOCKET";
    pub(crate) const CALLER_UID_ENV: &str = "ACI_TEST_CHILD_CALLER_UID";

    /// The child's provider: `whoami`, and `hang`, which announces itself and never returns.
    struct ChildProvider;

    #[async_trait::async_trait]
    impl AciService for ChildProvider {
        fn capabilities(&self) -> Result<Vec<CapabilitySpec>, ProviderError> {
            Ok(vec![
                CapabilitySpec::create("whoami", "Tells the caller package the provider saw."),
                CapabilitySpec::create("hang", "Never returns."),
            ])
        }

        async fn on_call(&self, request: &AciRequest) -> Result<AciResponse, ProviderError> {
            if request.capability == "hang" {
                println!("HANGING");
                std::future::pending::<()>().await;
            }
            Ok(AciResponse::success()
                .put_string("callerPkg", request.caller_pkg.clone().unwrap_or_default()))
        }
    }

    /// The child process's main (see the `#[ignore]`d entry below).
    pub(crate) fn provider_main(socket: &str) {
        let caller_uid: u32 = std::env::var(CALLER_UID_ENV).unwrap().parse().unwrap();
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            let gate =
                AciPermissionGate::new(resolver_for(caller_uid, &[CALL]), AciPolicy::allow_all());
            let server = AciServer::new(std::sync::Arc::new(ChildProvider), gate, None).unwrap();
            let _guard = server.serve_unix(socket, "aci").unwrap();
            println!("READY");
            std::future::pending::<()>().await;
        });
    }

    fn my_uid() -> u32 {
        std::fs::metadata("/proc/self").unwrap().uid()
    }

    /// Another UID when we are root and `exe` is reachable by it; else ours.
    pub(crate) fn child_uid(exe: &Path) -> u32 {
        if my_uid() != 0 {
            return my_uid();
        }
        let world_x = |p: &Path| {
            std::fs::metadata(p)
                .map(|m| m.permissions().mode() & 0o001 != 0)
                .unwrap_or(false)
        };
        if exe
            .ancestors()
            .all(|p| p.as_os_str().is_empty() || world_x(p))
        {
            65_534
        } else {
            0
        }
    }

    /// A provider process and its stdout lines.
    pub(crate) struct Provider {
        pub(crate) child: Child,
        lines: std::sync::mpsc::Receiver<String>,
    }

    impl Provider {
        pub(crate) fn spawn(socket: &Path, uid: u32) -> Provider {
            let exe = std::env::current_exe().unwrap();
            let mut cmd = Command::new(exe);
            cmd.args([
                "child_provider_process_entry",
                "--exact",
                "--ignored",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(SOCKET_ENV, socket)
            .env(CALLER_UID_ENV, my_uid().to_string())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
            if uid != my_uid() {
                cmd.uid(uid).gid(uid);
            }
            let mut child = cmd.spawn().unwrap();
            let out = child.stdout.take().unwrap();
            let (tx, lines) = std::sync::mpsc::channel();
            std::thread::spawn(move || {
                for line in BufReader::new(out).lines().map_while(Result::ok) {
                    if tx.send(line).is_err() {
                        break;
                    }
                }
            });
            Provider { child, lines }
        }

        pub(crate) fn expect(&self, what: &str) {
            let deadline = std::time::Instant::now() + Duration::from_secs(60);
            loop {
                let left = deadline.saturating_duration_since(std::time::Instant::now());
                match self.lines.recv_timeout(left) {
                    // libtest prints "test <name> ... " before the first line, without a newline.
                    Ok(l) if l.trim().ends_with(what) => return,
                    Ok(_) => continue,
                    Err(e) => panic!("provider process never printed {what}: {e}"),
                }
            }
        }
    }

    impl Drop for Provider {
        fn drop(&mut self) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }

    pub(crate) fn socket_dir() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
        dir
    }
}

/// Entry point of the child provider process that
/// `aci03_provider_process_under_another_uid_then_killed_mid_call` starts (this binary,
/// re-executed with the socket path in the environment). Not a test by itself.
#[test]
#[ignore = "entry point of the child provider process, run by the cross-process test"]
fn child_provider_process_entry() {
    if let Ok(socket) = std::env::var(child::SOCKET_ENV) {
        child::provider_main(&socket);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn aci03_provider_process_under_another_uid_then_killed_mid_call() {
    use aci_adapter::provider::{AciClient, AciClientError};
    use std::os::unix::fs::MetadataExt;

    let dir = child::socket_dir();
    let path = dir.path().join("aci.sock");
    let uid = child::child_uid(&std::env::current_exe().unwrap());
    let mut provider = child::Provider::spawn(&path, uid);
    provider.expect("READY");
    assert_eq!(
        std::fs::metadata(&path).unwrap().uid(),
        uid,
        "the socket belongs to the provider's UID"
    );

    let client = AciClient::connect_unix(&path, "aci").await.unwrap();
    assert!(client.ping().await.unwrap());
    let mut req = AciRequest::new("whoami");
    req.caller_pkg = Some("com.spoofed".into());
    let resp = client.call(&req).await.unwrap();
    assert!(resp.success, "{resp:?}");
    assert_eq!(
        resp.result.get("callerPkg"),
        Some(&BundleValue::String(Some(
            provider_support::CALLER_PKG.into()
        ))),
        "the provider process resolved our kernel UID, not the claim"
    );

    // Killed while an async call runs: the pending call ends with a dead binder.
    let c2 = client.clone();
    let pending =
        tokio::spawn(async move { c2.call_async(&AciRequest::new("hang"), |_, _| {}).await });
    provider.expect("HANGING");
    provider.child.kill().unwrap();
    provider.child.wait().unwrap();
    let r = tokio::time::timeout(std::time::Duration::from_secs(30), pending)
        .await
        .expect("the death is noticed")
        .unwrap();
    assert_eq!(r, Err(AciClientError::DeadBinder));
    let r = client.call(&AciRequest::new("whoami")).await;
    assert!(r.is_err(), "{r:?}");
    assert!(AciClient::connect_unix(&path, "aci").await.is_err());
}
