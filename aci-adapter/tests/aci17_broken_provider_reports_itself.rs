//! ACI-17 / ACI-12 / E.3: a provider whose capability list fails to build (an error or a panic)
//! stays up, reports itself broken, lists nothing and answers every call 503; a provider with
//! one bad declaration among good ones serves the good ones and answers 503 for the bad one.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod provider_support;

use std::sync::Arc;

use aci_adapter::bundle::BundleValue;
use aci_adapter::provider::{AciService, CapabilitySpec, ProviderError};
use aci_adapter::wire::{AciRequest, AciResponse, error_code};
use permissions::AciPolicy;
use provider_support::{CALL, start};

enum Mode {
    Fails,
    Panics,
    OneBad,
}

struct Shaky(Mode);

#[async_trait::async_trait]
impl AciService for Shaky {
    fn capabilities(&self) -> Result<Vec<CapabilitySpec>, ProviderError> {
        match self.0 {
            Mode::Fails => Err(ProviderError::new("the asset file is missing. path=/x")),
            Mode::Panics => panic!("bug in onCreateCapabilities"),
            Mode::OneBad => Ok(vec![
                CapabilitySpec::create("good", "Does the good thing."),
                // ACI-12: the "passed 1.0 as description" pitfall.
                CapabilitySpec::create("versioned", "1.0"),
                // ACI-41 / MCP-05: not a valid id.
                CapabilitySpec::create("bad id!", "Has a space in its id."),
                CapabilitySpec::create("twice", "First."),
                CapabilitySpec::create("twice", "Second."),
            ]),
        }
    }

    async fn on_call(&self, request: &AciRequest) -> Result<AciResponse, ProviderError> {
        Ok(AciResponse::success().put_string("ran", request.capability.clone()))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn aci17_failed_or_panicking_capabilities_leave_the_provider_up_and_broken() {
    for mode in [Mode::Fails, Mode::Panics] {
        let rt = start(Arc::new(Shaky(mode)), &[CALL], AciPolicy::allow_all(), None).await;
        let status = rt.server.status().clone();
        let reason = status.broken.expect("reports itself broken");
        assert!(
            reason.starts_with("capabilities failed to build"),
            "{reason}"
        );
        assert!(!reason.contains("/x"), "one sentence only: {reason}");
        assert!(rt.client.ping().await.unwrap(), "still answers ping");
        assert!(rt.client.get_capabilities().await.unwrap().is_empty());
        for resp in [
            rt.client.call(&AciRequest::new("good")).await.unwrap(),
            rt.client
                .call_async(&AciRequest::new("good"), |_, _| {})
                .await
                .unwrap(),
        ] {
            assert!(!resp.success);
            assert_eq!(resp.error_code, error_code::SERVICE_UNAVAILABLE);
            assert!(
                resp.error_message
                    .unwrap()
                    .starts_with("the provider is unavailable")
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn e3_one_bad_declaration_among_good_ones_is_left_out() {
    let rt = start(
        Arc::new(Shaky(Mode::OneBad)),
        &[CALL],
        AciPolicy::allow_all(),
        None,
    )
    .await;
    let status = rt.server.status();
    assert_eq!(status.broken, None);
    assert_eq!(status.capabilities, vec!["good".to_owned()]);
    assert_eq!(status.issues.len(), 4, "{:?}", status.issues);

    let listed = rt.client.get_capabilities().await.unwrap();
    assert_eq!(listed.len(), 1);
    assert!(listed[0].contains("\"id\":\"good\""));

    let resp = rt.client.call(&AciRequest::new("good")).await.unwrap();
    assert_eq!(
        resp.result.get("ran"),
        Some(&BundleValue::String(Some("good".into())))
    );
    for id in ["versioned", "bad id!", "twice"] {
        let resp = rt.client.call(&AciRequest::new(id)).await.unwrap();
        assert_eq!(resp.error_code, error_code::SERVICE_UNAVAILABLE, "{id}");
        assert_eq!(
            resp.error_message.as_deref(),
            Some(format!("capability {id} is unavailable: its declaration is invalid").as_str())
        );
    }
    let resp = rt.client.call(&AciRequest::new("other")).await.unwrap();
    assert_eq!(resp.error_code, error_code::CAPABILITY_NOT_FOUND);
}
