//! [`AciSource`]: the controller's providers as a [`CapabilitySource`] — each provider is a
//! virtual plugin `aci.<package>` (ACI-40), its capabilities converted from E.3 JSON by
//! [`capability_model::aci`].
//!
//! - `list` reads every **enabled** provider's capabilities (cached, ACI-31); a disabled one is
//!   an issue saying to enable it (ACI-44), an unreachable one or one whose `getCapabilities`
//!   fails is an issue (ACI-17), never a failure of the whole listing. The protocol capability
//!   `aci_protocol` is the controller's, not the model's, and is left out.
//! - `call` converts the JSON arguments to a typed Bundle ([`crate::convert`]), sends
//!   `callAsync` (ACI-47) or `call`, and maps the response (ACI-45, ACI-46). A
//!   `CAPABILITY_NOT_FOUND` answer drops the provider's cache and announces a change (ACI-31).

use std::sync::Arc;

use capability_model::{
    CallError, CancelToken, CapabilityId, CapabilitySource, IssueKind, ListError, Listing,
    ProviderIssue, Source, ToolOutput,
};
use futures::stream::BoxStream;
use serde_json::{Map, Value};

use crate::controller::{
    ACI_PROTOCOL_CAPABILITY, CallMode, CallRequest, Controller, ControllerError, ProgressFn,
};
use crate::convert::{arguments_to_bundle, response_to_output};

/// The ACI providers of one [`Controller`] as a capability source.
#[derive(Clone)]
pub struct AciSource {
    controller: Controller,
    mode: CallMode,
    progress: Option<ProgressFn>,
}

impl std::fmt::Debug for AciSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AciSource")
            .field("controller", &self.controller)
            .field("mode", &self.mode)
            .finish()
    }
}

impl AciSource {
    /// A source over `controller`, sending `callAsync` (ACI-47).
    pub fn new(controller: Controller) -> Self {
        Self {
            controller,
            mode: CallMode::Async,
            progress: None,
        }
    }

    /// Sends `call` or `callAsync`.
    pub fn with_mode(mut self, mode: CallMode) -> Self {
        self.mode = mode;
        self
    }

    /// Observes `onProgress` of async calls.
    pub fn with_progress(mut self, progress: ProgressFn) -> Self {
        self.progress = Some(progress);
        self
    }

    /// The controller.
    pub fn controller(&self) -> &Controller {
        &self.controller
    }
}

fn to_call_error(e: ControllerError) -> CallError {
    match e {
        ControllerError::UnknownProvider(_) => CallError::UnknownTool,
        ControllerError::Disabled(_) => CallError::Unavailable {
            reason: "provider_disabled".into(),
        },
        ControllerError::Unavailable { .. } => CallError::Unavailable {
            reason: "provider_unavailable".into(),
        },
        ControllerError::Timeout(_) => CallError::Timeout,
        ControllerError::ProviderDied {
            dispatched: true, ..
        } => CallError::Closed { dispatched: true },
        ControllerError::ProviderDied { .. } => CallError::Unavailable {
            reason: "provider_died".into(),
        },
        ControllerError::Protocol(_) => CallError::InvalidResult,
    }
}

#[async_trait::async_trait]
impl CapabilitySource for AciSource {
    fn source(&self) -> Source {
        Source::Aci
    }

    async fn list(&self) -> Result<Listing, ListError> {
        let mut out = Listing::default();
        for info in self.controller.providers() {
            if !self.controller.is_enabled(&info.package) {
                out.issues.push(ProviderIssue::new(
                    IssueKind::ProviderUnavailable,
                    format!(
                        "the ACI provider {} is disabled; enable it to view its tools",
                        info.plugin
                    ),
                ));
                continue;
            }
            match self.controller.capabilities(&info.package).await {
                Ok(cached) => {
                    out.capabilities.extend(
                        cached
                            .listing
                            .capabilities
                            .iter()
                            .filter(|c| c.id.name != ACI_PROTOCOL_CAPABILITY)
                            .cloned(),
                    );
                    out.issues.extend(cached.listing.issues.iter().cloned());
                }
                Err(e) => {
                    tracing::warn!(package = %info.package, error = %e, "aci provider not listed");
                    out.issues.push(ProviderIssue::new(
                        IssueKind::ProviderUnavailable,
                        format!("the ACI provider {} is unavailable", info.plugin),
                    ));
                }
            }
        }
        Ok(out)
    }

    async fn call(
        &self,
        id: &CapabilityId,
        arguments: Map<String, Value>,
        cancel: CancelToken,
    ) -> Result<ToolOutput, CallError> {
        if id.source != Source::Aci || id.name == ACI_PROTOCOL_CAPABILITY {
            return Err(CallError::UnknownTool);
        }
        let info = self
            .controller
            .provider_for(&id.provider, &id.server)
            .ok_or(CallError::UnknownTool)?;
        let cached = self
            .controller
            .capabilities(&info.package)
            .await
            .map_err(to_call_error)?;
        let cap = cached
            .listing
            .capabilities
            .iter()
            .find(|c| c.id.name == id.name)
            .ok_or(CallError::UnknownTool)?;
        let params = cap.aci.as_ref().map(|a| a.params.as_slice()).unwrap_or(&[]);
        let bundle = arguments_to_bundle(params, &arguments)?;
        let request = CallRequest::new(id.name.clone(), bundle);
        let call = self
            .controller
            .call(&info.package, request, self.mode, self.progress.clone());
        let response = tokio::select! {
            r = call => r.map_err(to_call_error)?,
            () = cancel.cancelled() => return Err(CallError::Cancelled),
        };
        let mapped = response_to_output(response.parts());
        if mapped.capability_not_found {
            self.controller.invalidate(&info.package);
        }
        mapped.output
    }

    fn changes(&self) -> BoxStream<'static, ()> {
        let rx = self.controller.subscribe();
        Box::pin(futures::stream::unfold(rx, |mut rx| async move {
            match rx.recv().await {
                Ok(()) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => Some(((), rx)),
                Err(tokio::sync::broadcast::error::RecvError::Closed) => None,
            }
        }))
    }
}

/// Shares a source as `Arc<dyn CapabilitySource>`.
pub fn shared(source: AciSource) -> Arc<dyn CapabilitySource> {
    Arc::new(source)
}
