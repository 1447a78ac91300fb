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
