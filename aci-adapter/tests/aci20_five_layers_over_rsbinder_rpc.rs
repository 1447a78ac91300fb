//! ACI-20 / ACI-21 / E.6 over real rsbinder RPC: the provider sees the caller through the
//! socket's `SO_PEERCRED`, resolves it to a package through the registry, and enforces the five
//! layers of the `permissions` crate before any hook runs; `callerPkg` is overwritten.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod provider_support;

use std::sync::Arc;
use std::sync::atomic::Ordering;

use aci_adapter::bundle::BundleValue;
use aci_adapter::wire::{AciRequest, error_code};
use permissions::{AciPolicy, ConsentBroker, FixedSurface, SystemClock};
use provider_support::{CALL, CALL_DANGEROUS, CALLER_PKG, Scripted, start};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn e6_spoofed_caller_pkg_is_overwritten_before_any_hook() {
    let (svc, seen) = Scripted::new();
    let rt = start(Arc::new(svc), &[CALL], AciPolicy::allow_all(), None).await;
    let mut req = AciRequest::new("whoami");
    req.caller_pkg = Some("com.trusted.controller".into());
    let resp = rt.client.call(&req).await.unwrap();
    assert!(resp.success, "{resp:?}");
    assert_eq!(
        resp.result.get("callerPkg"),
        Some(&BundleValue::String(Some(CALLER_PKG.into())))
    );
    // The async path too.
    let resp = rt.client.call_async(&req, |_, _| {}).await.unwrap();
    assert!(resp.success);
    assert_eq!(
        seen.caller_pkgs.lock().unwrap().as_slice(),
        &[Some(CALLER_PKG.to_owned()), Some(CALLER_PKG.to_owned())]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn aci20_layer1_without_call_permission_is_denied_and_no_hook_runs() {
    let (svc, seen) = Scripted::new();
    let rt = start(Arc::new(svc), &[], AciPolicy::allow_all(), None).await;
    let req = AciRequest::new("echo").param("text", BundleValue::String(Some("x".into())));
    let resp = rt.client.call(&req).await.unwrap();
    assert!(!resp.success);
    assert_eq!(resp.error_code, error_code::PERMISSION_DENIED);
    assert_eq!(
        resp.error_message.as_deref(),
        Some("permission denied at layer 1: the caller lacks ai.aci.permission.CALL")
    );
    assert_eq!(resp.call_id, req.call_id);
    let resp = rt.client.call_async(&req, |_, _| {}).await.unwrap();
    assert_eq!(resp.error_code, error_code::PERMISSION_DENIED);
    assert_eq!(
        seen.hooks(),
        0,
        "onCheckPermission/onBeforeCall/onCall never ran"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn aci20_dangerous_action_needs_call_dangerous() {
    let (svc, seen) = Scripted::new();
    let rt = start(Arc::new(svc), &[CALL], AciPolicy::allow_all(), None).await;
    let resp = rt.client.call(&AciRequest::new("wipe")).await.unwrap();
    assert_eq!(resp.error_code, error_code::PERMISSION_DENIED);
    assert!(
        resp.error_message
            .as_deref()
            .unwrap()
            .contains("CALL_DANGEROUS")
    );
    assert_eq!(seen.hooks(), 0);

    let (svc, seen) = Scripted::new();
    let rt = start(
        Arc::new(svc),
        &[CALL, CALL_DANGEROUS],
        AciPolicy::allow_all(),
        None,
    )
    .await;
    let resp = rt.client.call(&AciRequest::new("wipe")).await.unwrap();
    assert!(resp.success, "{resp:?}");
    assert_eq!(seen.calls.load(Ordering::SeqCst), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn aci20_layer3_hook_refusal_stops_the_call() {
    let (mut svc, seen) = Scripted::new();
    svc.allow_hook = false;
    let rt = start(Arc::new(svc), &[CALL], AciPolicy::allow_all(), None).await;
    let resp = rt.client.call(&AciRequest::new("whoami")).await.unwrap();
    assert_eq!(resp.error_code, error_code::PERMISSION_DENIED);
    assert!(resp.error_message.unwrap().contains("layer 3"));
    assert_eq!(seen.check_permission.load(Ordering::SeqCst), 1);
    assert_eq!(
        seen.calls.load(Ordering::SeqCst) + seen.before.load(Ordering::SeqCst),
        0
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn aci22_layer4_policy_file_denies_one_capability() {
    let policy = AciPolicy::parse(&format!(
        r#"<aci-permissions version="1" default="allow">
             <deny package="{CALLER_PKG}" capability="whoami"/>
           </aci-permissions>"#
    ))
    .unwrap();
    let (svc, seen) = Scripted::new();
    let rt = start(Arc::new(svc), &[CALL], policy, None).await;
    let resp = rt.client.call(&AciRequest::new("whoami")).await.unwrap();
    assert_eq!(resp.error_code, error_code::PERMISSION_DENIED);
    assert!(resp.error_message.unwrap().contains("layer 4"));
    assert_eq!(seen.calls.load(Ordering::SeqCst), 0);
    let resp = rt
        .client
        .call(&AciRequest::new("echo").param("text", BundleValue::String(Some("a".into()))))
        .await
        .unwrap();
    assert!(resp.success);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn aci20_layer5_require_permission_and_user_confirm() {
    // requirePermission not held.
    let (svc, seen) = Scripted::new();
    let rt = start(Arc::new(svc), &[CALL], AciPolicy::allow_all(), None).await;
    let resp = rt.client.call(&AciRequest::new("secret")).await.unwrap();
    assert_eq!(resp.error_code, error_code::PERMISSION_DENIED);
    assert!(resp.error_message.unwrap().contains("layer 5"));
    // requireUserConfirm without a consent broker: refused (fail closed).
    let resp = rt.client.call(&AciRequest::new("confirm")).await.unwrap();
    assert_eq!(resp.error_code, error_code::PERMISSION_DENIED);
    assert_eq!(seen.calls.load(Ordering::SeqCst), 0);

    // requirePermission held.
    let (svc, _) = Scripted::new();
    let rt = start(
        Arc::new(svc),
        &[CALL, "com.example.permission.SECRET"],
        AciPolicy::allow_all(),
        None,
    )
    .await;
    assert!(
        rt.client
            .call(&AciRequest::new("secret"))
            .await
            .unwrap()
            .success
    );

    // requireUserConfirm: the user declines, then allows.
    for (surface, ok) in [(FixedSurface::deny(), false), (FixedSurface::allow(), true)] {
        let (svc, seen) = Scripted::new();
        let broker = Arc::new(ConsentBroker::new(Arc::new(surface), Arc::new(SystemClock)));
        let rt = start(Arc::new(svc), &[CALL], AciPolicy::allow_all(), Some(broker)).await;
        let resp = rt.client.call(&AciRequest::new("confirm")).await.unwrap();
        assert_eq!(resp.success, ok, "{resp:?}");
        if !ok {
            assert_eq!(resp.error_code, error_code::PERMISSION_DENIED);
            assert_eq!(
                resp.error_message.as_deref(),
                Some("permission denied at layer 5: the user did not confirm the call")
            );
        }
        assert_eq!(seen.calls.load(Ordering::SeqCst), usize::from(ok));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn aci21_unknown_uid_is_refused_at_layer2() {
    use aci_adapter::provider::{AciClient, AciServer};
    use permissions::{AciPermissionGate, RegistryResolver};
    let (svc, seen) = Scripted::new();
    let gate = AciPermissionGate::new(
        Arc::new(RegistryResolver::from_entries([])),
        AciPolicy::allow_all(),
    );
    let server = AciServer::new(Arc::new(svc), gate, None).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("aci.sock");
    let _guard = server.serve_unix(&path, "aci").unwrap();
    let client = AciClient::connect_unix(&path, "aci").await.unwrap();
    let resp = client.call(&AciRequest::new("whoami")).await.unwrap();
    assert_eq!(resp.error_code, error_code::PERMISSION_DENIED);
    assert!(resp.error_message.unwrap().contains("layer 2"));
    assert_eq!(seen.hooks(), 0);
}
