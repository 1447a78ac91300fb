//! Controller logic behind the link seam (ACI-30, ACI-31, ACI-32, ACI-44, ACI-47, E.5):
//! discovery, pool reuse, wake then retry, rebind once after a death, timeout, FIFO limit of 8,
//! cache keyed by (package, digest, versionCode), protocol negotiation, call log.
//! The real rsbinder link is exercised in `cross_process_*.rs`; here a scripted in-process link
//! stands in for the provider so that deaths and stalls can be placed exactly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use aci_adapter::bundle::{Bundle, BundleValue};
use aci_adapter::controller::{
    AciLink, CallMode, CallRequest, CallResponse, Connector, Controller, ControllerConfig,
    ControllerError, LinkError, ProgressFn, ProviderInfo, WakeError, Waker, discover,
};
use permissions::{CertDigest, RegistryResolver};

#[derive(Default)]
struct Script {
    connects: AtomicUsize,
    calls: AtomicUsize,
    in_flight: AtomicUsize,
    max_in_flight: AtomicUsize,
    refuse_connect: AtomicBool,
    /// The next call dies (dispatched).
    die_dispatched: AtomicBool,
    /// The next call dies before sending.
    die_undispatched: AtomicBool,
    /// Calls never answer.
    stall: AtomicBool,
    /// Calls take this long.
    delay_ms: AtomicUsize,
    caps: Mutex<Vec<String>>,
    order: Mutex<Vec<String>>,
    cap_reads: AtomicUsize,
    /// The waker fails.
    wake_fails: AtomicBool,
}

struct FakeLink {
    script: Arc<Script>,
    alive: AtomicBool,
}

#[async_trait::async_trait]
impl AciLink for FakeLink {
    async fn call(&self, request: CallRequest) -> Result<CallResponse, LinkError> {
        let s = &self.script;
        s.calls.fetch_add(1, Ordering::SeqCst);
        if s.die_undispatched.swap(false, Ordering::SeqCst) {
            self.alive.store(false, Ordering::SeqCst);
            return Err(LinkError::Dead { dispatched: false });
        }
        if s.die_dispatched.swap(false, Ordering::SeqCst) {
            self.alive.store(false, Ordering::SeqCst);
            return Err(LinkError::Dead { dispatched: true });
        }
        let now = s.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        s.max_in_flight.fetch_max(now, Ordering::SeqCst);
        s.order.lock().unwrap().push(request.capability.clone());
        if s.stall.load(Ordering::SeqCst) {
            futures::future::pending::<()>().await;
        }
        let d = s.delay_ms.load(Ordering::SeqCst);
        if d > 0 {
            tokio::time::sleep(Duration::from_millis(d as u64)).await;
        }
        s.in_flight.fetch_sub(1, Ordering::SeqCst);
        let mut result = Bundle::new();
        if request.capability == "aci_protocol" {
            result.put(
                "protocol_version",
                BundleValue::String(Some("aci-protocol-v1".into())),
            );
        } else if request.capability == "gone" {
            return Ok(CallResponse {
                success: false,
                error_code: 404,
                error_message: Some("unknown capability: gone".into()),
                call_id: Some(request.call_id),
                ..Default::default()
            });
        } else {
            result.put(
                "echo",
                BundleValue::String(Some(request.capability.clone())),
            );
        }
        Ok(CallResponse {
            success: true,
            result,
            call_id: Some(request.call_id),
            ..Default::default()
        })
    }
    async fn call_async(
        &self,
        request: CallRequest,
        progress: Option<ProgressFn>,
    ) -> Result<CallResponse, LinkError> {
        if let Some(p) = progress {
            p(50, Some("half"));
        }
        self.call(request).await
    }
    async fn capabilities(&self) -> Result<Vec<String>, LinkError> {
        self.script.cap_reads.fetch_add(1, Ordering::SeqCst);
        Ok(self.script.caps.lock().unwrap().clone())
    }
    async fn ping(&self) -> Result<bool, LinkError> {
        Ok(self.alive.load(Ordering::SeqCst))
    }
    fn is_alive(&self) -> bool {
        self.alive.load(Ordering::SeqCst)
    }
}

struct FakeConnector(Arc<Script>);

#[async_trait::async_trait]
impl Connector for FakeConnector {
    async fn connect(&self, _p: &ProviderInfo) -> Result<Arc<dyn AciLink>, LinkError> {
        if self.0.refuse_connect.load(Ordering::SeqCst) {
            return Err(LinkError::Unreachable("connection refused".into()));
        }
        self.0.connects.fetch_add(1, Ordering::SeqCst);
        Ok(Arc::new(FakeLink {
            script: self.0.clone(),
            alive: AtomicBool::new(true),
        }))
    }
}

struct FakeWaker {
    script: Arc<Script>,
    wakes: AtomicUsize,
}

#[async_trait::async_trait]
impl Waker for FakeWaker {
    async fn wake(&self, _p: &ProviderInfo) -> Result<(), WakeError> {
        self.wakes.fetch_add(1, Ordering::SeqCst);
        if self.script.wake_fails.load(Ordering::SeqCst) {
            return Err(WakeError::Timeout(Duration::from_secs(1)));
        }
        self.script.refuse_connect.store(false, Ordering::SeqCst);
        Ok(())
    }
}

const DIGEST: &str = "5A1F000000000000000000000000000000000000000000000000000000000001";

fn registry(version: i64, digest: &str) -> RegistryResolver {
    RegistryResolver::from_json(
        &format!(
            r#"{{"version":1,"packages":[
            {{"uid":10001,"package":"com.example.one","signingCertSha256":"{digest}","versionCode":{version},
              "exports":{{"aci":{{"actions":["ai.aci.core.ACTION_BIND"],"socket":"/tmp/none-1.sock"}}}},
              "launch":["/bin/true"]}},
            {{"uid":10002,"package":"com.example.two","signingCertSha256":"{digest}",
              "exports":{{"aci":{{"actions":["com.ai.assistance.aci.ACTION_BIND"],"socket":"/tmp/none-2.sock"}}}}}},
            {{"uid":10003,"package":"com.example.nobind","signingCertSha256":"{digest}",
              "exports":{{"aci":{{"actions":["ai.aci.core.ACTION_WAKE"],"socket":"/tmp/none-3.sock"}}}}}},
            {{"uid":10004,"package":"com.example.mcp","signingCertSha256":"{digest}"}}
            ]}}"#
        ),
        "test",
    )
    .unwrap()
}

fn caps() -> Vec<String> {
    vec![
        r#"{"id":"echo","description":"Echo a word back.","params":[{"name":"w","type":"string","required":false}]}"#.into(),
        r#"{"id":"aci_protocol","description":"Protocol version of this provider."}"#.into(),
    ]
}

struct Rig {
    script: Arc<Script>,
    waker: Arc<FakeWaker>,
    controller: Controller,
}

fn rig(config: ControllerConfig) -> Rig {
    let script = Arc::new(Script::default());
    *script.caps.lock().unwrap() = caps();
    let waker = Arc::new(FakeWaker {
        script: script.clone(),
        wakes: AtomicUsize::new(0),
    });
    let controller = Controller::new(
        Arc::new(FakeConnector(script.clone())),
        waker.clone(),
        ControllerConfig {
            enabled_by_default: true,
            ..config
        },
    );
    controller.discover_from(&registry(1, DIGEST));
    Rig {
        script,
        waker,
        controller,
    }
}

fn req(cap: &str) -> CallRequest {
    CallRequest::new(cap, Bundle::new())
}

#[test]
fn aci06_discovery_takes_both_bind_spellings_only() {
    let found = discover(&registry(1, DIGEST));
    let pkgs: Vec<_> = found.iter().map(|p| p.package.as_str()).collect();
    assert_eq!(pkgs, ["com.example.one", "com.example.two"]);
    assert_eq!(found[0].plugin, "aci.com.example.one");
    assert_eq!(
        found[0].launch.as_deref(),
        Some(&["/bin/true".to_owned()][..])
    );
    assert_eq!(
        found[0].signing_cert_sha256,
        CertDigest::parse(DIGEST).unwrap()
    );
}

#[tokio::test]
async fn aci44_disabled_provider_is_never_bound() {
    let r = rig(ControllerConfig::default());
    r.controller.set_enabled("com.example.one", false).unwrap();
    let e = r
        .controller
        .call("com.example.one", req("echo"), CallMode::Sync, None)
        .await
        .unwrap_err();
    assert_eq!(e, ControllerError::Disabled("com.example.one".into()));
    assert_eq!(r.script.connects.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn aci30_one_pooled_link_serves_many_calls() {
    let r = rig(ControllerConfig::default());
    for _ in 0..5 {
        r.controller
            .call("com.example.one", req("echo"), CallMode::Sync, None)
            .await
            .unwrap();
    }
    assert_eq!(r.script.connects.load(Ordering::SeqCst), 1);
    assert!(r.controller.is_bound("com.example.one").await);
}

#[tokio::test]
async fn aci04_wake_then_retry_when_bind_fails() {
    let r = rig(ControllerConfig::default());
    r.script.refuse_connect.store(true, Ordering::SeqCst);
    let resp = r
        .controller
        .call("com.example.one", req("echo"), CallMode::Sync, None)
        .await
        .unwrap();
    assert!(resp.success);
    assert_eq!(r.waker.wakes.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn aci04_no_wake_path_is_a_clear_unavailable() {
    let script = Arc::new(Script::default());
    script.refuse_connect.store(true, Ordering::SeqCst);
    let c = Controller::new(
        Arc::new(FakeConnector(script)),
        Arc::new(aci_adapter::controller::NoWaker),
        ControllerConfig {
            enabled_by_default: true,
            ..Default::default()
        },
    );
    c.discover_from(&registry(1, DIGEST));
    let e = c
        .call("com.example.two", req("echo"), CallMode::Sync, None)
        .await
        .unwrap_err();
    match e {
        ControllerError::Unavailable { package, reason } => {
            assert_eq!(package, "com.example.two");
            assert!(reason.contains("no launch command"), "{reason}");
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn e5_undispatched_death_rebinds_once_and_resends() {
    let r = rig(ControllerConfig::default());
    r.controller.bind("com.example.one").await.unwrap();
    r.script.die_undispatched.store(true, Ordering::SeqCst);
    let resp = r
        .controller
        .call("com.example.one", req("echo"), CallMode::Sync, None)
        .await
        .unwrap();
    assert!(resp.success);
    assert_eq!(r.script.connects.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn e5_dispatched_death_rebinds_but_does_not_resend() {
    let r = rig(ControllerConfig::default());
    r.controller.bind("com.example.one").await.unwrap();
    r.script.die_dispatched.store(true, Ordering::SeqCst);
    let e = r
        .controller
        .call("com.example.one", req("echo"), CallMode::Sync, None)
        .await
        .unwrap_err();
    assert_eq!(
        e,
        ControllerError::ProviderDied {
            dispatched: true,
            rebound: true
        }
    );
    // Sent once, never again.
    assert_eq!(r.script.calls.load(Ordering::SeqCst), 1);
    // The pool already holds the new link: the next call works without another bind.
    r.controller
        .call("com.example.one", req("echo"), CallMode::Sync, None)
        .await
        .unwrap();
    assert_eq!(r.script.connects.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn e5_death_with_failed_rebind_is_a_clear_error() {
    let r = rig(ControllerConfig::default());
    r.controller.bind("com.example.two").await.unwrap();
    r.script.die_dispatched.store(true, Ordering::SeqCst);
    r.script.refuse_connect.store(true, Ordering::SeqCst);
    r.script.wake_fails.store(true, Ordering::SeqCst);
    let e = r
        .controller
        .call("com.example.two", req("echo"), CallMode::Sync, None)
        .await
        .unwrap_err();
    assert_eq!(
        e,
        ControllerError::ProviderDied {
            dispatched: true,
            rebound: false
        }
    );
    assert!(e.to_string().contains("died during the call"));
}

#[tokio::test(start_paused = true)]
async fn e5_call_times_out_after_15_s() {
    let r = rig(ControllerConfig::default());
    r.script.stall.store(true, Ordering::SeqCst);
    let started = tokio::time::Instant::now();
    let e = r
        .controller
        .call("com.example.one", req("echo"), CallMode::Async, None)
        .await
        .unwrap_err();
    assert_eq!(e, ControllerError::Timeout(Duration::from_secs(15)));
    assert!(started.elapsed() >= Duration::from_secs(15));
    assert_eq!(r.controller.call_log().last().unwrap().status, "timeout");
}

#[tokio::test]
async fn aci47_at_most_8_in_flight_fifo() {
    let r = rig(ControllerConfig::default());
    r.controller.bind("com.example.one").await.unwrap();
    r.script.delay_ms.store(30, Ordering::SeqCst);
    let mut tasks = Vec::new();
    for i in 0..20 {
        let c = r.controller.clone();
        tasks.push(tokio::spawn(async move {
            c.call(
                "com.example.one",
                req(&format!("c{i}")),
                CallMode::Sync,
                None,
            )
            .await
        }));
        // Let each task queue before the next one starts.
        tokio::task::yield_now().await;
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    for t in tasks {
        assert!(t.await.unwrap().unwrap().success);
    }
    assert_eq!(r.script.max_in_flight.load(Ordering::SeqCst), 8);
    let order = r.script.order.lock().unwrap().clone();
    let expected: Vec<String> = (0..20).map(|i| format!("c{i}")).collect();
    assert_eq!(order, expected);
}

#[tokio::test]
async fn aci31_cache_is_reused_and_keyed_by_package_digest_version() {
    let r = rig(ControllerConfig::default());
    let first = r.controller.capabilities("com.example.one").await.unwrap();
    assert_eq!(first.listing.capabilities.len(), 2);
    r.controller.capabilities("com.example.one").await.unwrap();
    assert_eq!(r.script.cap_reads.load(Ordering::SeqCst), 1);
    let mut changes = r.controller.subscribe();

    // PACKAGE_REPLACED: a new versionCode drops the entry.
    r.controller.discover_from(&registry(2, DIGEST));
    assert!(changes.try_recv().is_ok());
    let second = r.controller.capabilities("com.example.one").await.unwrap();
    assert_eq!(second.key.version_code, 2);
    assert_eq!(r.script.cap_reads.load(Ordering::SeqCst), 2);

    // Signature change drops it as well.
    let other = "5A1F000000000000000000000000000000000000000000000000000000000002";
    r.controller.discover_from(&registry(2, other));
    r.controller.capabilities("com.example.one").await.unwrap();
    assert_eq!(r.script.cap_reads.load(Ordering::SeqCst), 3);

    // Unchanged registry: cache kept.
    r.controller.discover_from(&registry(2, other));
    r.controller.capabilities("com.example.one").await.unwrap();
    assert_eq!(r.script.cap_reads.load(Ordering::SeqCst), 3);

    // CAPABILITY_NOT_FOUND → invalidate.
    r.controller.invalidate("com.example.one");
    r.controller.capabilities("com.example.one").await.unwrap();
    assert_eq!(r.script.cap_reads.load(Ordering::SeqCst), 4);
}

#[tokio::test]
async fn aci31_removed_package_is_forgotten() {
    let r = rig(ControllerConfig::default());
    r.controller.capabilities("com.example.one").await.unwrap();
    r.controller.update_providers(vec![]);
    assert_eq!(
        r.controller
            .capabilities("com.example.one")
            .await
            .unwrap_err(),
        ControllerError::UnknownProvider("com.example.one".into())
    );
}

#[tokio::test]
async fn e5_aci_protocol_is_negotiated() {
    let r = rig(ControllerConfig::default());
    let c = r.controller.capabilities("com.example.one").await.unwrap();
    assert_eq!(c.protocol.as_deref(), Some("aci-protocol-v1"));
    assert_eq!(
        r.controller.protocol("com.example.one").as_deref(),
        Some("aci-protocol-v1")
    );
    // A provider without the capability is not asked.
    *r.script.caps.lock().unwrap() = vec![caps()[0].clone()];
    let c = r.controller.capabilities("com.example.two").await.unwrap();
    assert_eq!(c.protocol, None);
}

#[tokio::test]
async fn aci32_call_log_has_names_sizes_status_never_values() {
    let r = rig(ControllerConfig {
        call_log_capacity: 3,
        ..Default::default()
    });
    let mut params = Bundle::new();
    params.put("w", BundleValue::String(Some("topsecret".into())));
    let progress_seen = Arc::new(AtomicUsize::new(0));
    let seen = progress_seen.clone();
    let p: ProgressFn = Arc::new(move |n, _m| {
        seen.store(n as usize, Ordering::SeqCst);
    });
    r.controller
        .call(
            "com.example.one",
            CallRequest::new("echo", params),
            CallMode::Async,
            Some(p),
        )
        .await
        .unwrap();
    assert_eq!(progress_seen.load(Ordering::SeqCst), 50);
    r.controller
        .call("com.example.one", req("gone"), CallMode::Sync, None)
        .await
        .unwrap();
    let log = r.controller.call_log();
    assert_eq!(log.len(), 2);
    assert_eq!(log[0].capability, "echo");
    assert_eq!(log[0].package, "com.example.one");
    assert_eq!(log[0].service, "aciservice");
    assert_eq!(log[0].arguments[0].name, "w");
    assert_eq!(log[0].arguments[0].size, 9);
    assert_eq!(log[0].status, "ok");
    assert_eq!(log[0].mode, CallMode::Async);
    assert_eq!(log[1].status, "CAPABILITY_NOT_FOUND");
    assert!(!format!("{log:?}").contains("topsecret"));
    // Bounded ring.
    for _ in 0..5 {
        r.controller
            .call("com.example.one", req("echo"), CallMode::Sync, None)
            .await
            .unwrap();
    }
    assert_eq!(r.controller.call_log().len(), 3);
}
