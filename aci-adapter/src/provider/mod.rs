//! The ACI provider SDK core (ACI-10..ACI-17, ACI-20, Appendix E.6): the [`AciService`] trait a
//! provider implements, the [`CapabilitySpec`] builder, the [`AciServer`] that serves it as
//! `ai.aci.core.IACIService` over rsbinder (RPC on a Unix socket, or kernel Binder where
//! `/dev/binder` exists), and the [`AciClient`] proxy a controller uses.
//!
//! What the server does for every `call` / `callAsync`, in this order:
//!
//! 1. a request whose `params` Bundle could not be read → `400 BAD_REQUEST`;
//! 2. a provider whose capabilities failed to build → `503 SERVICE_UNAVAILABLE` (ACI-17);
//! 3. an unknown capability → `404 CAPABILITY_NOT_FOUND`, `unknown capability: <id>` (ACI-16);
//! 4. a missing or blank required parameter, or one of the wrong type → `400` (ACI-16);
//! 5. the five permission layers of the `permissions` crate ([`permissions::AciPermissionGate`]):
//!    `ai.aci.permission.CALL`, `CALL_DANGEROUS` for `DANGEROUS_ACTION`, the kernel UID resolved
//!    to one package, [`AciService::on_check_permission`], `aci_permissions.xml`,
//!    `requirePermission` and `requireUserConfirm` (consent) → `403 PERMISSION_DENIED`;
//! 6. `callerPkg` overwritten with the package resolved from the kernel UID (E.6);
//! 7. [`AciService::on_before_call`], [`AciService::on_call`] (or
//!    [`AciService::on_call_async`]), [`AciService::on_after_call`]; a handler error or panic →
//!    `500 INTERNAL_ERROR` with one sentence;
//! 8. the response's `callId` is the request's.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//! use aci_adapter::provider::{AciServer, AciService, CapabilitySpec, ProviderError};
//! use aci_adapter::wire::{AciRequest, AciResponse};
//! use permissions::{AciPermissionGate, AciPolicy, RegistryResolver};
//!
//! struct Weather;
//!
//! #[async_trait::async_trait]
//! impl AciService for Weather {
//!     fn capabilities(&self) -> Result<Vec<CapabilitySpec>, ProviderError> {
//!         Ok(vec![CapabilitySpec::create("get_weather", "Current weather for a city.")
//!             .add_param("city", "string", true, "City name")])
//!     }
//!     async fn on_call(&self, request: &AciRequest) -> Result<AciResponse, ProviderError> {
//!         let city = request.get_string("city").unwrap_or_default();
//!         Ok(AciResponse::success().put_string("summary", format!("Sunny in {city}")))
//!     }
//! }
//!
//! let gate = AciPermissionGate::new(
//!     Arc::new(RegistryResolver::load(std::path::Path::new("/etc/capbridge/registry.json"))?),
//!     AciPolicy::allow_all(),
//! );
//! let server = AciServer::new(Arc::new(Weather), gate, None)?;
//! let _guard = server.serve_unix("/run/weather.sock", "weather")?;
//! # Ok(()) }
//! ```

mod client;
mod server;
mod spec;

use async_trait::async_trait;

use crate::wire::{AciRequest, AciResponse};

pub use client::{AciClient, AciClientError, CLIENT_INCOMING_CONNECTIONS};
pub use server::{AciServer, AciServerError, ProviderStatus};
pub use spec::{CapabilitySpec, ParamSpec, ResultSpec};

/// Why a provider's hook failed. The message becomes the `500` error sentence (first sentence,
/// at most [`ProviderError::MAX_MESSAGE_CHARS`] characters), so it must not carry argument
/// values or secrets.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ProviderError {
    message: String,
}

impl ProviderError {
    /// Characters of the message a caller sees at most.
    pub const MAX_MESSAGE_CHARS: usize = 200;

    /// An error with a one-sentence message.
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
        }
    }

    /// The message as given.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The first sentence of the message, bounded; a generic sentence when it is empty.
    pub fn sentence(&self) -> String {
        let line = self.message.lines().next().unwrap_or("").trim();
        let end = line
            .char_indices()
            .find(|&(i, c)| {
                matches!(c, '.' | '!' | '?')
                    && line[i + c.len_utf8()..]
                        .chars()
                        .next()
                        .is_none_or(char::is_whitespace)
            })
            .map_or(line.len(), |(i, c)| i + c.len_utf8());
        let s: String = line[..end].chars().take(Self::MAX_MESSAGE_CHARS).collect();
        if s.trim().is_empty() {
            "the capability failed".to_owned()
        } else {
            s
        }
    }
}

/// Progress reports of one `callAsync`: delivered to the controller's
/// `IACICallback.onProgress` in order, always before the result. Reports after the result
/// are dropped.
#[derive(Debug, Clone)]
pub struct Progress {
    tx: Option<tokio::sync::mpsc::UnboundedSender<server::Delivery>>,
}

impl Progress {
    /// A progress sink that discards everything (the sync `call` path).
    pub fn discard() -> Self {
        Self { tx: None }
    }

    /// Reports `percent` (clamped to 0..=100) with an optional message.
    pub fn report(&self, percent: i32, message: Option<&str>) {
        if let Some(tx) = &self.tx {
            let _ = tx.send(server::Delivery::Progress(
                percent.clamp(0, 100),
                message.map(str::to_owned),
            ));
        }
    }
}

/// What an ACI provider implements (`BaseACIService`, ACI-10). Every hook receives the request
/// with `callerPkg` already overwritten by the package of the kernel-given caller UID (E.6),
/// and runs only after all five permission layers passed.
#[async_trait]
pub trait AciService: Send + Sync + 'static {
    /// `onCreateCapabilities()`: the capability list, built once when the server starts. An
    /// error (or a panic) does not stop the provider: it stays up, reports itself broken and
    /// answers calls with `503` (ACI-17).
    fn capabilities(&self) -> Result<Vec<CapabilitySpec>, ProviderError>;

    /// `onCall(request)`: handles one call. `Err` becomes `500 INTERNAL_ERROR` with the
    /// error's first sentence; an `AciResponse::error(…)` is passed through as it is.
    async fn on_call(&self, request: &AciRequest) -> Result<AciResponse, ProviderError>;

    /// `onCallAsync(request, callback)`: by default runs [`AciService::on_call`]. Override to
    /// report progress. The result is delivered exactly once by the server.
    async fn on_call_async(
        &self,
        request: &AciRequest,
        progress: &Progress,
    ) -> Result<AciResponse, ProviderError> {
        let _ = progress;
        self.on_call(request).await
    }

    /// `onCheckPermission(request, callerPkg)`, layer 3 (ACI-20). `caller_pkg` is resolved
    /// from the kernel UID, never taken from the request. ACI's default is `true`; ACI-23
    /// recommends allowing only the controller and the provider itself.
    fn on_check_permission(&self, request: &AciRequest, caller_pkg: &str) -> bool {
        let _ = (request, caller_pkg);
        true
    }

    /// `onBeforeCall(request)`: by default only logs.
    fn on_before_call(&self, request: &AciRequest) {
        tracing::debug!(capability = %request.capability, "ACI call starting");
    }

    /// `onAfterCall(request, response)`: by default only logs.
    fn on_after_call(&self, request: &AciRequest, response: &AciResponse) {
        tracing::debug!(
            capability = %request.capability,
            success = response.success,
            code = response.error_code,
            "ACI call finished"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::ProviderError;

    #[test]
    fn error_sentence_is_the_first_sentence_bounded() {
        assert_eq!(
            ProviderError::new("disk full. details: /var/x").sentence(),
            "disk full."
        );
        assert_eq!(ProviderError::new("v1.2 failed").sentence(), "v1.2 failed");
        assert_eq!(
            ProviderError::new("  \n").sentence(),
            "the capability failed"
        );
        assert_eq!(
            ProviderError::new("x".repeat(500))
                .sentence()
                .chars()
                .count(),
            ProviderError::MAX_MESSAGE_CHARS
        );
    }
}
