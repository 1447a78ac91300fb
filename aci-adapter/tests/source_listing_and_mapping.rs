//! AciSource over a scripted link (the real rsbinder path is in samples/aci-provider's
//! cross_process_rpc tests): E.3 one bad capability among good ones, a 2 MB capability list,
//! ACI-44 disabled providers, ACI-40 virtual plugin ids, ACI-31 CAPABILITY_NOT_FOUND
//! invalidation announced on `changes()`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use aci_adapter::bundle::{Bundle, BundleValue};
use aci_adapter::controller::{
    AciLink, CallRequest, CallResponse, Connector, Controller, ControllerConfig, LinkError,
    NoWaker, ProgressFn, ProviderInfo,
};
use aci_adapter::source::AciSource;
use capability_model::{CallError, CancelToken, CapabilityId, CapabilitySource, IssueKind, Source};
use futures::StreamExt as _;
use permissions::RegistryResolver;
use serde_json::{Map, json};

struct Link {
    caps: Arc<Mutex<Vec<String>>>,
    reads: Arc<AtomicUsize>,
    last: Arc<Mutex<Option<CallRequest>>>,
}

#[async_trait::async_trait]
impl AciLink for Link {
    async fn call(&self, request: CallRequest) -> Result<CallResponse, LinkError> {
        *self.last.lock().unwrap() = Some(request.clone());
        if request.capability == "vanished" {
            return Ok(CallResponse {
                success: false,
                error_code: 404,
                error_message: Some("unknown capability: vanished".into()),
                ..Default::default()
            });
        }
        let mut result = Bundle::new();
        result.put("ok", BundleValue::Boolean(true));
        Ok(CallResponse {
            success: true,
            result,
            ..Default::default()
        })
    }
    async fn call_async(
        &self,
        request: CallRequest,
        _p: Option<ProgressFn>,
    ) -> Result<CallResponse, LinkError> {
        self.call(request).await
    }
    async fn capabilities(&self) -> Result<Vec<String>, LinkError> {
        self.reads.fetch_add(1, Ordering::SeqCst);
        Ok(self.caps.lock().unwrap().clone())
    }
    async fn ping(&self) -> Result<bool, LinkError> {
        Ok(true)
    }
    fn is_alive(&self) -> bool {
        true
    }
}

struct Conn {
    caps: Arc<Mutex<Vec<String>>>,
    reads: Arc<AtomicUsize>,
    last: Arc<Mutex<Option<CallRequest>>>,
}

#[async_trait::async_trait]
impl Connector for Conn {
    async fn connect(&self, _p: &ProviderInfo) -> Result<Arc<dyn AciLink>, LinkError> {
        Ok(Arc::new(Link {
            caps: self.caps.clone(),
            reads: self.reads.clone(),
            last: self.last.clone(),
        }))
    }
}

fn rig(
    caps: Vec<String>,
    enabled: bool,
) -> (AciSource, Arc<AtomicUsize>, Arc<Mutex<Option<CallRequest>>>) {
    let reads = Arc::new(AtomicUsize::new(0));
    let last = Arc::new(Mutex::new(None));
    let c = Controller::new(
        Arc::new(Conn {
            caps: Arc::new(Mutex::new(caps)),
            reads: reads.clone(),
            last: last.clone(),
        }),
        Arc::new(NoWaker),
        ControllerConfig {
            enabled_by_default: enabled,
            ..Default::default()
        },
    );
    let reg = RegistryResolver::from_json(
        r#"{"version":1,"packages":[{"uid":10001,"package":"com.Example.Weather_App","signingCertSha256":"AB00000000000000000000000000000000000000000000000000000000000001",
           "exports":{"aci":{"actions":["ai.aci.core.ACTION_BIND"],"socket":"/tmp/x.sock"}}}]}"#,
        "t",
    )
    .unwrap();
    c.discover_from(&reg);
    (AciSource::new(c), reads, last)
}

fn good(id: &str) -> String {
    json!({"id": id, "description": "Does a useful thing.", "params": [
        {"name": "city", "type": "string", "required": true, "description": "City"},
        {"name": "days", "type": "int"}
    ]})
    .to_string()
}

#[tokio::test]
async fn e3_one_bad_entry_among_good_ones_is_an_issue_not_a_failure() {
    let (source, _, _) = rig(
        vec![
            good("a"),
            "{}".into(),
            "not json".into(),
            good("b"),
            r#"{"id":"c","description":"1.0"}"#.into(),
        ],
        true,
    );
    let listing = source.list().await.unwrap();
    let names: Vec<_> = listing
        .capabilities
        .iter()
        .map(|c| c.id.name.clone())
        .collect();
    assert_eq!(names, ["a", "b"]);
    assert_eq!(listing.issues.len(), 3, "{:?}", listing.issues);
    // ACI-40: the virtual plugin of the package.
    assert_eq!(
        listing.capabilities[0].id.provider,
        "aci.com.example.weather-app"
    );
    assert_eq!(listing.capabilities[0].id.source, Source::Aci);
}

#[tokio::test]
async fn e7_a_2_mb_capability_list_loads() {
    let filler = "x".repeat(1000);
    let caps: Vec<String> = (0..2100)
        .map(|i| {
            json!({"id": format!("cap_{i}"), "description": format!("Capability {i}. {filler}")})
                .to_string()
        })
        .collect();
    assert!(caps.iter().map(String::len).sum::<usize>() > 2_000_000);
    let (source, reads, _) = rig(caps, true);
    let listing = source.list().await.unwrap();
    assert_eq!(listing.capabilities.len(), 2100);
    source.list().await.unwrap();
    assert_eq!(
        reads.load(Ordering::SeqCst),
        1,
        "second listing comes from the cache"
    );
}

#[tokio::test]
async fn aci44_disabled_provider_lists_nothing_and_is_not_bound() {
    let (source, reads, _) = rig(vec![good("a")], false);
    let listing = source.list().await.unwrap();
    assert!(listing.capabilities.is_empty());
    assert_eq!(listing.issues[0].kind, IssueKind::ProviderUnavailable);
    assert!(listing.issues[0].message.contains("enable it"));
    assert_eq!(reads.load(Ordering::SeqCst), 0);
    let id = CapabilityId::new(
        Source::Aci,
        "aci.com.example.weather-app",
        "aciservice",
        "a",
    );
    let e = source
        .call(&id, Map::new(), CancelToken::new())
        .await
        .unwrap_err();
    assert!(matches!(e, CallError::Unavailable { .. }), "{e:?}");
}

#[tokio::test]
async fn aci42_call_sends_typed_bundle_and_maps_the_result() {
    let (source, _, last) = rig(vec![good("a")], true);
    let id = CapabilityId::new(
        Source::Aci,
        "aci.com.example.weather-app",
        "aciservice",
        "a",
    );
    let args = json!({"city": "Oslo", "days": 3})
        .as_object()
        .unwrap()
        .clone();
    let out = source.call(&id, args, CancelToken::new()).await.unwrap();
    assert_eq!(out.structured_content, Some(json!({"ok": true})));
    let sent = last.lock().unwrap().clone().unwrap();
    assert_eq!(sent.capability, "a");
    assert_eq!(
        sent.params.get("city"),
        Some(&BundleValue::String(Some("Oslo".into())))
    );
    assert_eq!(sent.params.get("days"), Some(&BundleValue::Int(3)));
    // A wrong type never leaves the process.
    *last.lock().unwrap() = None;
    let args = json!({"city": "Oslo", "days": "three"})
        .as_object()
        .unwrap()
        .clone();
    let e = source
        .call(&id, args, CancelToken::new())
        .await
        .unwrap_err();
    assert_eq!(
        e,
        CallError::InvalidArguments(
            "parameter \"days\" must be an integer in the 32-bit range".into()
        )
    );
    assert!(last.lock().unwrap().is_none());
    // Unknown tool of a known provider, unknown provider.
    let e = source
        .call(
            &CapabilityId::new(
                Source::Aci,
                "aci.com.example.weather-app",
                "aciservice",
                "zzz",
            ),
            Map::new(),
            CancelToken::new(),
        )
        .await
        .unwrap_err();
    assert_eq!(e, CallError::UnknownTool);
    let e = source
        .call(
            &CapabilityId::new(Source::Aci, "aci.nobody", "aciservice", "a"),
            Map::new(),
            CancelToken::new(),
        )
        .await
        .unwrap_err();
    assert_eq!(e, CallError::UnknownTool);
}

#[tokio::test]
async fn aci31_capability_not_found_invalidates_and_announces_a_change() {
    let (source, reads, _) = rig(
        vec![
            good("a"),
            json!({"id":"vanished","description":"Gone soon."}).to_string(),
        ],
        true,
    );
    let mut changes = source.changes();
    source.list().await.unwrap();
    let id = CapabilityId::new(
        Source::Aci,
        "aci.com.example.weather-app",
        "aciservice",
        "vanished",
    );
    let out = source
        .call(&id, Map::new(), CancelToken::new())
        .await
        .unwrap();
    assert!(out.is_error);
    assert_eq!(
        out.joined_text(),
        "CAPABILITY_NOT_FOUND: unknown capability: vanished"
    );
    tokio::time::timeout(std::time::Duration::from_secs(2), changes.next())
        .await
        .unwrap()
        .unwrap();
    source.list().await.unwrap();
    assert_eq!(
        reads.load(Ordering::SeqCst),
        2,
        "the cache was dropped and re-read"
    );
}
