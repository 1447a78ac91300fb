//! Real peers (issue 7): the `aci-provider` binary and the controller in separate processes,
//! over rsbinder RPC on a Unix socket, identities from the kernel's peer credentials mapped by
//! each side's registry. ACI-03 (discover → bind → getCapabilities → call/callAsync), ACI-20/45
//! (denials), ACI-30 and E.5 (rebind once, wake by launch command, 15 s deadline), ACI-40.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use aci_adapter::bundle::{Bundle, BundleValue};
use aci_adapter::controller::{CallMode, CallRequest, ControllerConfig, ControllerError};
use aci_adapter::source::AciSource;
use capability_model::{CallError, CancelToken, CapabilityId, CapabilitySource, Source};
use serde_json::{Map, Value, json};
use sha2::Digest as _;
use support::{PROVIDER_PKG, Rig};

const CALL: &str = "ai.aci.permission.CALL";
const CALL_DANGEROUS: &str = "ai.aci.permission.CALL_DANGEROUS";

fn id(name: &str) -> CapabilityId {
    CapabilityId::new(Source::Aci, "aci.com.example.acidemo", "aciservice", name)
}

fn args(v: Value) -> Map<String, Value> {
    v.as_object().unwrap().clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn aci03_discover_list_sync_and_async_with_progress() {
    let rig = Rig::new();
    rig.write_provider_registry("org.agentos.app", &[CALL]);
    let _p = rig.spawn_provider(&[]);
    let controller = rig.controller(None, ControllerConfig::default());
    let source = AciSource::new(controller.clone()).with_mode(CallMode::Sync);

    // ACI-40: one virtual plugin; aci_protocol is the controller's, not the model's.
    let listing = source.list().await.unwrap();
    let names: Vec<&str> = listing
        .capabilities
        .iter()
        .map(|c| c.id.name.as_str())
        .collect();
    for expected in [
        "device_info",
        "kv_get",
        "kv_put",
        "kv_list",
        "kv_delete",
        "hash_file",
        "countdown",
        "http_request",
    ] {
        assert!(
            names.contains(&expected),
            "{expected} missing from {names:?}"
        );
    }
    assert!(!names.contains(&"aci_protocol"));
    assert!(
        listing
            .capabilities
            .iter()
            .all(|c| c.id.provider == "aci.com.example.acidemo")
    );
    assert!(listing.issues.is_empty(), "{:?}", listing.issues);
    assert_eq!(
        controller.protocol(PROVIDER_PKG).as_deref(),
        Some("aci-protocol-v1")
    );

    // Sync call, real host values.
    let out = source
        .call(&id("device_info"), Map::new(), CancelToken::new())
        .await
        .unwrap();
    let s = out.structured_content.unwrap();
    let hostname = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    assert_eq!(s["hostname"], hostname.trim());
    assert_eq!(
        s["cpu_count"],
        json!(std::thread::available_parallelism().unwrap().get())
    );

    // File-backed store round trip.
    let out = source
        .call(
            &id("kv_put"),
            args(json!({"key":"greeting","value":"héllo"})),
            CancelToken::new(),
        )
        .await
        .unwrap();
    assert_eq!(out.structured_content.unwrap()["replaced"], false);
    let out = source
        .call(
            &id("kv_get"),
            args(json!({"key":"greeting"})),
            CancelToken::new(),
        )
        .await
        .unwrap();
    assert_eq!(
        out.structured_content.unwrap(),
        json!({"found":true,"value":"héllo"})
    );
    let stored = std::fs::read_to_string(rig.path("data/kv.json")).unwrap();
    assert!(stored.contains("greeting"));

    // Validation names the field before anything is sent.
    let e = source
        .call(&id("kv_put"), args(json!({"key":"k"})), CancelToken::new())
        .await
        .unwrap_err();
    assert_eq!(
        e,
        CallError::InvalidArguments("missing required parameter \"value\"".into())
    );

    // Async with real progress: hash a 3 MiB file.
    let data: Vec<u8> = (0..3 * 1024 * 1024u32).map(|i| (i % 251) as u8).collect();
    std::fs::write(rig.path("data/files/blob.bin"), &data).unwrap();
    let seen = Arc::new(Mutex::new(Vec::<i32>::new()));
    let sink = seen.clone();
    let async_source = AciSource::new(controller.clone()).with_progress(Arc::new(move |n, _m| {
        sink.lock().unwrap().push(n);
    }));
    let out = async_source
        .call(
            &id("hash_file"),
            args(json!({"name":"blob.bin"})),
            CancelToken::new(),
        )
        .await
        .unwrap();
    let s = out.structured_content.unwrap();
    let expected: String = sha2::Sha256::digest(&data)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(s["sha256"], expected);
    let seen = seen.lock().unwrap().clone();
    assert!(seen.len() >= 3, "{seen:?}");
    assert!(seen.windows(2).all(|w| w[0] <= w[1]), "{seen:?}");
    assert_eq!(seen.last(), Some(&100));

    // Unknown capability of the provider → tool error + cache invalidation (ACI-31).
    let mut changes = controller.subscribe();
    let resp = controller
        .call(
            PROVIDER_PKG,
            CallRequest::new("no_such_cap", Bundle::new()),
            CallMode::Sync,
            None,
        )
        .await
        .unwrap();
    assert_eq!(resp.error_code, 404);
    assert_eq!(
        resp.error_message.as_deref(),
        Some("unknown capability: no_such_cap")
    );

    // ACI-32: the log has names and sizes, never values.
    let log = controller.call_log();
    let put = log.iter().find(|r| r.capability == "kv_put").unwrap();
    assert_eq!(
        put.arguments
            .iter()
            .map(|a| (a.name.as_str(), a.size))
            .collect::<Vec<_>>(),
        [("key", 8), ("value", 5)]
    );
    assert!(!format!("{log:?}").contains("héllo"));
    let _ = changes.try_recv();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn aci20_dangerous_capability_without_call_dangerous_is_provider_denied() {
    let rig = Rig::new();
    rig.write_provider_registry("org.agentos.app", &[CALL]);
    let _p = rig.spawn_provider(&["--confirm", "allow"]);
    let source = AciSource::new(rig.controller(None, ControllerConfig::default()));
    source
        .call(
            &id("kv_put"),
            args(json!({"key":"a","value":"1"})),
            CancelToken::new(),
        )
        .await
        .unwrap();
    let e = source
        .call(
            &id("kv_delete"),
            args(json!({"key":"a"})),
            CancelToken::new(),
        )
        .await
        .unwrap_err();
    assert_eq!(e, CallError::ProviderDenied);
    // Nothing was deleted.
    assert!(
        std::fs::read_to_string(rig.path("data/kv.json"))
            .unwrap()
            .contains("\"a\"")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn aci20_require_user_confirm_is_asked_and_honoured() {
    let rig = Rig::new();
    rig.write_provider_registry("org.agentos.app", &[CALL, CALL_DANGEROUS]);
    let mut p = rig.spawn_provider(&["--confirm", "deny"]);
    let source = AciSource::new(rig.controller(None, ControllerConfig::default()));
    source
        .call(
            &id("kv_put"),
            args(json!({"key":"a","value":"1"})),
            CancelToken::new(),
        )
        .await
        .unwrap();
    let e = source
        .call(
            &id("kv_delete"),
            args(json!({"key":"a"})),
            CancelToken::new(),
        )
        .await
        .unwrap_err();
    assert_eq!(e, CallError::ProviderDenied);
    p.kill();

    // Same store, the operator now allows confirmations: the delete goes through.
    let _p = rig.spawn_provider(&["--confirm", "allow"]);
    let source = AciSource::new(rig.controller(None, ControllerConfig::default()));
    let out = source
        .call(
            &id("kv_delete"),
            args(json!({"key":"a"})),
            CancelToken::new(),
        )
        .await
        .unwrap();
    assert_eq!(out.structured_content.unwrap()["deleted"], true);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn e6_spoofed_caller_pkg_does_not_help_an_intruder() {
    // The controller writes callerPkg = org.agentos.app, but the kernel says the caller's UID
    // belongs to com.example.intruder: onCheckPermission (ACI-23) and the XML policy refuse.
    let rig = Rig::new();
    rig.write_provider_registry("com.example.intruder", &[CALL, CALL_DANGEROUS]);
    let xml = concat!(env!("CARGO_MANIFEST_DIR"), "/aci_permissions.xml");
    let _p = rig.spawn_provider(&["--permissions", xml]);
    let source = AciSource::new(rig.controller(None, ControllerConfig::default()));
    let e = source
        .call(&id("device_info"), Map::new(), CancelToken::new())
        .await
        .unwrap_err();
    assert_eq!(e, CallError::ProviderDenied);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn e5_provider_killed_mid_call_rebinds_once_then_clear_error() {
    let rig = Rig::new();
    rig.write_provider_registry("org.agentos.app", &[CALL]);
    let mut p = rig.spawn_provider(&[]);
    let controller = rig.controller(None, ControllerConfig::default());
    controller.bind(PROVIDER_PKG).await.unwrap();
    let c = controller.clone();
    let call = tokio::spawn(async move {
        let mut params = Bundle::new();
        params.put("seconds", BundleValue::Int(10));
        c.call(
            PROVIDER_PKG,
            CallRequest::new("countdown", params),
            CallMode::Async,
            None,
        )
        .await
    });
    tokio::time::sleep(Duration::from_millis(700)).await;
    p.kill();
    let started = std::time::Instant::now();
    let e = call.await.unwrap().unwrap_err();
    // Dispatched, so not re-sent; the rebind found no provider (no launch command).
    assert_eq!(
        e,
        ControllerError::ProviderDied {
            dispatched: true,
            rebound: false
        }
    );
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    // The next call fails cleanly before anything is sent.
    let e = controller
        .call(
            PROVIDER_PKG,
            CallRequest::new("device_info", Bundle::new()),
            CallMode::Sync,
            None,
        )
        .await
        .unwrap_err();
    assert!(matches!(e, ControllerError::Unavailable { .. }), "{e:?}");
    let log = controller.call_log();
    assert_eq!(log[0].status, "provider_died");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn e5_wake_by_launch_command_when_not_running() {
    let rig = Rig::new();
    rig.write_provider_registry("org.agentos.app", &[CALL]);
    let launch = rig.provider_args(&[]);
    let controller = rig.controller(Some(launch), ControllerConfig::default());
    assert!(!rig.socket().exists());
    let source = AciSource::new(controller.clone());
    let out = source
        .call(&id("device_info"), Map::new(), CancelToken::new())
        .await;
    rig.stop_launched();
    let out = out.unwrap();
    assert!(out.structured_content.unwrap()["hostname"].is_string());
    assert!(rig.path("provider.pid").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn e5_async_result_that_never_comes_in_time_is_a_timeout() {
    let rig = Rig::new();
    rig.write_provider_registry("org.agentos.app", &[CALL]);
    let _p = rig.spawn_provider(&[]);
    let controller = rig.controller(
        None,
        ControllerConfig {
            call_timeout: Duration::from_millis(1500),
            ..Default::default()
        },
    );
    let source = AciSource::new(controller.clone());
    let e = source
        .call(
            &id("countdown"),
            args(json!({"seconds": 5})),
            CancelToken::new(),
        )
        .await
        .unwrap_err();
    assert_eq!(e, CallError::Timeout);
    assert_eq!(controller.call_log().last().unwrap().status, "timeout");
    // The link survives a timeout: the next call works.
    let out = source
        .call(&id("device_info"), Map::new(), CancelToken::new())
        .await
        .unwrap();
    assert!(!out.is_error);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn aci33_http_request_through_the_provider_is_rendered() {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut s, _)) = listener.accept().await {
            let mut buf = vec![0u8; 4096];
            let _ = s.read(&mut buf).await;
            let body = "hello from the LAN device";
            let resp = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = s.write_all(resp.as_bytes()).await;
        }
    });
    let rig = Rig::new();
    rig.write_provider_registry(
        "org.agentos.app",
        &[CALL, CALL_DANGEROUS, "capbridge.sample.permission.NETWORK"],
    );
    let _p = rig.spawn_provider(&["--network", "local"]);
    let source = AciSource::new(rig.controller(None, ControllerConfig::default()));
    let out = source
        .call(
            &id("http_request"),
            args(json!({"url": format!("http://{addr}/status")})),
            CancelToken::new(),
        )
        .await
        .unwrap();
    let text = out.joined_text();
    assert!(text.contains("HTTP 200"), "{text}");
    assert!(text.contains("hello from the LAN device"), "{text}");
    assert!(text.contains("untrusted"), "{text}");

    // The strict default policy keeps the same provider off the LAN.
    drop(_p);
    let rig2 = Rig::new();
    rig2.write_provider_registry(
        "org.agentos.app",
        &[CALL, CALL_DANGEROUS, "capbridge.sample.permission.NETWORK"],
    );
    let _p2 = rig2.spawn_provider(&[]);
    let source = AciSource::new(rig2.controller(None, ControllerConfig::default()));
    let e = source
        .call(
            &id("http_request"),
            args(json!({"url": format!("http://{addr}/status")})),
            CancelToken::new(),
        )
        .await;
    // http-capability answers a policy refusal with PERMISSION_DENIED (E.4 403).
    assert_eq!(e.unwrap_err(), CallError::ProviderDenied);
}
