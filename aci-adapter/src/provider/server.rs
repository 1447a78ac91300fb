//! [`AciServer`]: an [`AciService`] served as `ai.aci.core.IACIService`.

use std::collections::{HashMap, HashSet};
use std::panic::AssertUnwindSafe;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use capability_model::Capability;
use futures::FutureExt as _;
use permissions::aci::{AciCallContext, AciDenialReason, AciInboundCall};
use permissions::identity::Uid;
use permissions::{AciDenial, AciPermissionGate, AciPermissionHook, ConsentBroker};
use rsbinder::{BinderResult, Interface, SIBinder, ServerGuard, Strong, Uri};
use serde_json::{Map, Value};
use tokio::sync::mpsc;

use super::{AciService, CapabilitySpec, Progress};
use crate::bundle::{Bundle, BundleValue};
use crate::wire::{AciRequest, AciResponse, BnACIService, IACICallback, IACIService, error_code};

/// Plugin and server segments of the capability records the gate sees (identity only; the
/// provider's own records never reach a catalog).
const SELF_PLUGIN: &str = "aci.self";
const SELF_SERVER: &str = "provider";

/// Why a server could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AciServerError {
    /// Not called inside a tokio runtime (calls run on it).
    #[error("no tokio runtime to run the ACI service on")]
    NoRuntime,
    /// The URI names no service (`…#name`, `binder://name`).
    #[error("the URI names no service")]
    MissingServiceName,
    /// rsbinder could not serve.
    #[error("binder: {0:?}")]
    Binder(rsbinder::StatusCode),
}

impl From<rsbinder::StatusCode> for AciServerError {
    fn from(code: rsbinder::StatusCode) -> Self {
        AciServerError::Binder(code)
    }
}

/// What the server knows about its own health (ACI-17).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ProviderStatus {
    /// Set when [`AciService::capabilities`] failed or panicked: every call answers `503`.
    pub broken: Option<String>,
    /// Capabilities left out, with why (invalid id, bad description, duplicate id, bad
    /// declaration); calls to them answer `503`.
    pub issues: Vec<String>,
    /// Ids of the capabilities served.
    pub capabilities: Vec<String>,
}

/// One servable capability.
struct Served {
    spec: CapabilitySpec,
    record: Capability,
}

/// The built capability list.
struct Declared {
    served: HashMap<String, Served>,
    json: Vec<String>,
    rejected: HashSet<String>,
    status: ProviderStatus,
}

impl Declared {
    fn build(service: &dyn AciService) -> Self {
        let built = std::panic::catch_unwind(AssertUnwindSafe(|| service.capabilities()));
        let specs = match built {
            Ok(Ok(specs)) => specs,
            Ok(Err(e)) => {
                return Self::broken(format!("capabilities failed to build: {}", e.sentence()));
            }
            Err(_) => {
                return Self::broken(
                    "capabilities failed to build: the provider panicked".to_owned(),
                );
            }
        };
        let mut out = Declared {
            served: HashMap::new(),
            json: Vec::new(),
            rejected: HashSet::new(),
            status: ProviderStatus::default(),
        };
        let mut seen: HashMap<String, usize> = HashMap::new();
        for spec in &specs {
            *seen.entry(spec.id().to_owned()).or_default() += 1;
        }
        for (i, spec) in specs.into_iter().enumerate() {
            let id = spec.id().to_owned();
            if seen.get(&id).copied().unwrap_or(0) > 1 {
                out.status
                    .issues
                    .push(format!("capability #{i}: id declared more than once"));
                out.rejected.insert(id);
                continue;
            }
            let mut issues = Vec::new();
            match capability_model::aci::capability_from_value(
                SELF_PLUGIN,
                SELF_SERVER,
                &spec.to_json(),
                &mut issues,
                i,
            ) {
                Ok(record) => {
                    out.json.push(spec.to_json_string());
                    out.status.capabilities.push(id.clone());
                    out.served.insert(id, Served { spec, record });
                }
                Err(issue) => {
                    out.status
                        .issues
                        .push(format!("capability #{i}: {}", issue.message));
                    out.rejected.insert(id);
                }
            }
            for issue in issues {
                out.status
                    .issues
                    .push(format!("capability #{i}: {}", issue.message));
            }
        }
        for issue in &out.status.issues {
            tracing::warn!(issue = %issue, "ACI provider: capability left out");
        }
        out
    }

    fn broken(reason: String) -> Self {
        tracing::error!(reason = %reason, "ACI provider is broken; it stays up and answers 503");
        Declared {
            served: HashMap::new(),
            json: Vec::new(),
            rejected: HashSet::new(),
            status: ProviderStatus {
                broken: Some(reason),
                ..ProviderStatus::default()
            },
        }
    }
}

/// Shared state of a server.
struct Inner {
    service: Arc<dyn AciService>,
    gate: AciPermissionGate,
    consent: Option<Arc<ConsentBroker>>,
    runtime: tokio::runtime::Handle,
    declared: Declared,
}

/// An [`AciService`] wrapped as `ai.aci.core.IACIService`, enforcing what the reference
/// `BaseACIService` leaves out (E.6). See the [module docs](super) for the order of checks.
#[derive(Clone)]
pub struct AciServer {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for AciServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AciServer")
            .field("status", &self.inner.declared.status)
            .finish_non_exhaustive()
    }
}

impl AciServer {
    /// Builds the capability list (once) and prepares the server. `consent` is asked for
    /// `requireUserConfirm` capabilities; without it they are refused (fail closed). Must be
    /// called inside a tokio runtime: calls run on it, while a sync `call` holds its Binder
    /// thread until the answer — so the runtime must not run on Binder threads (a multi-thread
    /// runtime, as in the tests, is the simple choice).
    pub fn new(
        service: Arc<dyn AciService>,
        gate: AciPermissionGate,
        consent: Option<Arc<ConsentBroker>>,
    ) -> Result<Self, AciServerError> {
        let runtime =
            tokio::runtime::Handle::try_current().map_err(|_| AciServerError::NoRuntime)?;
        let declared = Declared::build(service.as_ref());
        Ok(Self {
            inner: Arc::new(Inner {
                service,
                gate,
                consent,
                runtime,
                declared,
            }),
        })
    }

    /// Health and the served ids.
    pub fn status(&self) -> &ProviderStatus {
        &self.inner.declared.status
    }

    /// What `getCapabilities()` returns: one E.3 JSON object per entry, valid ones only.
    pub fn capability_json(&self) -> &[String] {
        &self.inner.declared.json
    }

    /// A native `IACIService` binder for this server (to register anywhere).
    pub fn binder(&self) -> SIBinder {
        BnACIService::new_binder(Entry(self.inner.clone())).as_binder()
    }

    /// Serves under the name [`Uri::service`] at `uri`: kernel Binder (`binder://name`) or
    /// rsbinder RPC (`unix:///path?…#name`). Keep the guard: dropping it stops an RPC server.
    pub fn serve(&self, uri: Uri) -> Result<ServerGuard, AciServerError> {
        let name = uri
            .service()
            .ok_or(AciServerError::MissingServiceName)?
            .to_owned();
        let guard = rsbinder::serve(uri)?.add(&name, self.binder())?.spawn()?;
        tracing::info!(service = %name, capabilities = self.inner.declared.json.len(), "ACI provider serving");
        Ok(guard)
    }

    /// Serves over rsbinder RPC on the Unix socket at `path` as `name` (android-13+ wire, so
    /// the controller's callback reaches back), with `SO_PEERCRED` as the caller UID.
    pub fn serve_unix(
        &self,
        path: impl AsRef<Path>,
        name: &str,
    ) -> Result<ServerGuard, AciServerError> {
        self.serve(binder_channel::binder::rpc_uri(path, name))
    }

    /// Serves on kernel Binder as `name` when `/dev/binder` exists.
    pub fn serve_kernel(&self, name: &str) -> Result<ServerGuard, AciServerError> {
        self.serve(binder_channel::binder::kernel_uri(name))
    }

    /// Handles one call as the Binder entry does, for `uid` (tests, in-process use).
    pub async fn handle(&self, uid: u32, request: AciRequest) -> AciResponse {
        self.inner
            .clone()
            .process(uid, request, Progress::discard(), false)
            .await
    }
}

/// What the async delivery thread sends to the controller's callback, in order.
#[derive(Debug)]
pub(super) enum Delivery {
    Progress(i32, Option<String>),
    Result(Box<AciResponse>),
}

/// A capability id as logged or echoed: ids are at most 128 characters (MCP-05), so anything
/// longer from a peer is cut there.
fn bounded_id(id: &str) -> String {
    const MAX: usize = 128;
    match id.char_indices().nth(MAX) {
        None => id.to_owned(),
        Some((at, _)) => format!("{}…", &id[..at]),
    }
}

fn error(code: i32, message: impl Into<String>) -> AciResponse {
    AciResponse::error(code, message)
}

/// Bundle → JSON for the permission hook and the consent card (values never logged).
fn bundle_to_args(bundle: &Bundle) -> Map<String, Value> {
    bundle
        .iter()
        .map(|(k, v)| (k.to_owned(), value_to_json(v)))
        .collect()
}

fn value_to_json(v: &BundleValue) -> Value {
    match v {
        BundleValue::Null | BundleValue::String(None) => Value::Null,
        BundleValue::String(Some(s)) => Value::String(s.clone()),
        BundleValue::Int(i) => Value::from(*i),
        BundleValue::Long(i) => Value::from(*i),
        BundleValue::Float(f) => Value::from(f64::from(*f)),
        BundleValue::Double(f) => Value::from(*f),
        BundleValue::Boolean(b) => Value::Bool(*b),
        BundleValue::ByteArray(None) | BundleValue::StringArray(None) => Value::Null,
        BundleValue::ByteArray(Some(b)) => Value::String(format!("<{} bytes>", b.len())),
        BundleValue::StringArray(Some(a)) => Value::Array(
            a.iter()
                .map(|s| s.clone().map_or(Value::Null, Value::String))
                .collect(),
        ),
        BundleValue::Bundle(b) => Value::Object(bundle_to_args(b)),
    }
}

/// ACI-16: missing or blank required params, and values of the wrong type.
fn check_params(spec: &CapabilitySpec, params: &Bundle) -> Result<(), String> {
    for p in spec.params() {
        let value = params.get(&p.name);
        let present = match value {
            None | Some(BundleValue::Null) => false,
            Some(BundleValue::String(s)) => s.as_deref().is_some_and(|s| !s.trim().is_empty()),
            Some(BundleValue::ByteArray(b)) => b.is_some(),
            Some(BundleValue::StringArray(a)) => a.is_some(),
            Some(_) => true,
        };
        if !present {
            if p.required {
                return Err(format!("missing required parameter: {}", p.name));
            }
            continue;
        }
        let Some(value) = value else { continue };
        let ok = match p.ty.as_str() {
            "string" | "String" | "json" | "JSON" => matches!(value, BundleValue::String(_)),
            "int" | "integer" | "Integer" => matches!(value, BundleValue::Int(_)),
            "boolean" | "bool" | "Boolean" => matches!(value, BundleValue::Boolean(_)),
            "double" | "Double" => matches!(value, BundleValue::Double(_) | BundleValue::Int(_)),
            "byte[]" | "bytes" => matches!(value, BundleValue::ByteArray(_)),
            _ => true,
        };
        if !ok {
            return Err(format!("parameter {} must be of type {}", p.name, p.ty));
        }
    }
    Ok(())
}

fn denial_sentence(d: &AciDenial) -> String {
    let why = match d.reason {
        AciDenialReason::MissingCallPermission => "the caller lacks ai.aci.permission.CALL",
        AciDenialReason::MissingDangerousPermission => {
            "the caller lacks ai.aci.permission.CALL_DANGEROUS"
        }
        AciDenialReason::UnknownCaller => "the caller's UID belongs to no known package",
        AciDenialReason::SharedUid => "the caller's UID is shared by several packages",
        AciDenialReason::RegistryUnavailable => "the caller could not be identified",
        AciDenialReason::HookRefused => "the provider refused this caller",
        AciDenialReason::PolicyDenied => "aci_permissions.xml denies this call",
        AciDenialReason::MissingRequiredPermission => {
            "the caller lacks the permission this capability requires"
        }
        AciDenialReason::UserDeclined(_) => "the user did not confirm the call",
        AciDenialReason::ConsentUnavailable => "user confirmation could not be asked",
        _ => "the call is not allowed",
    };
    format!("permission denied at layer {}: {why}", d.layer as u8)
}

/// Layer 3 through the provider's hook, with the resolved `callerPkg`.
struct Hook<'a> {
    service: &'a dyn AciService,
    request: &'a AciRequest,
}

impl AciPermissionHook for Hook<'_> {
    fn on_check_permission(&self, ctx: &AciCallContext<'_>) -> bool {
        let mut request = self.request.clone();
        request.caller_pkg = Some(ctx.caller_pkg.to_owned());
        std::panic::catch_unwind(AssertUnwindSafe(|| {
            self.service.on_check_permission(&request, ctx.caller_pkg)
        }))
        .unwrap_or(false)
    }
}

impl Inner {
    /// Steps 1–8 of the module docs; the response always carries the request's call id.
    async fn process(
        self: Arc<Self>,
        uid: u32,
        mut request: AciRequest,
        progress: Progress,
        is_async: bool,
    ) -> AciResponse {
        let started = Instant::now();
        let call_id = request.call_id.clone();
        let mut package = None;
        let mut response = self
            .admit_and_run(uid, &mut request, progress, is_async, &mut package)
            .await;
        response.call_id = call_id;
        tracing::info!(
            uid,
            package = package.as_deref().unwrap_or("-"),
            capability = %bounded_id(&request.capability),
            params = request.params.len(),
            is_async,
            success = response.success,
            code = response.error_code,
            elapsed_us = started.elapsed().as_micros() as u64,
            "ACI call"
        );
        response
    }

    async fn admit_and_run(
        &self,
        uid: u32,
        request: &mut AciRequest,
        progress: Progress,
        is_async: bool,
        package: &mut Option<String>,
    ) -> AciResponse {
        if let Some(e) = request.params_error() {
            return error(
                error_code::BAD_REQUEST,
                format!("the request's params could not be read: {e}"),
            );
        }
        if let Some(reason) = &self.declared.status.broken {
            return error(
                error_code::SERVICE_UNAVAILABLE,
                format!("the provider is unavailable: {reason}"),
            );
        }
        let Some(served) = self.declared.served.get(&request.capability) else {
            if self.declared.rejected.contains(&request.capability) {
                return error(
                    error_code::SERVICE_UNAVAILABLE,
                    format!(
                        "capability {} is unavailable: its declaration is invalid",
                        bounded_id(&request.capability)
                    ),
                );
            }
            return error(
                error_code::CAPABILITY_NOT_FOUND,
                format!("unknown capability: {}", bounded_id(&request.capability)),
            );
        };
        if let Err(msg) = check_params(&served.spec, &request.params) {
            return error(error_code::BAD_REQUEST, msg);
        }

        // The five layers, before any hook but `onCheckPermission` (which is layer 3).
        let arguments = bundle_to_args(&request.params);
        let admitted = {
            let hook = Hook {
                service: self.service.as_ref(),
                request,
            };
            let inbound = AciInboundCall {
                uid: Uid(uid),
                capability: &served.record,
                claimed_caller_pkg: request.caller_pkg.as_deref(),
                arguments: &arguments,
            };
            self.gate
                .authorize(&inbound, &hook, self.consent.as_deref())
                .await
        };
        let admitted = match admitted {
            Ok(a) => a,
            Err(d) => return error(error_code::PERMISSION_DENIED, denial_sentence(&d)),
        };
        // E.6: callerPkg comes from the kernel UID, whatever the request said.
        request.caller_pkg = Some(admitted.caller_pkg().to_owned());
        *package = request.caller_pkg.clone();

        let service = self.service.as_ref();
        if std::panic::catch_unwind(AssertUnwindSafe(|| service.on_before_call(request))).is_err() {
            return error(
                error_code::INTERNAL_ERROR,
                "the capability failed unexpectedly",
            );
        }
        let request_ref: &AciRequest = request;
        let outcome = if is_async {
            AssertUnwindSafe(service.on_call_async(request_ref, &progress))
                .catch_unwind()
                .await
        } else {
            AssertUnwindSafe(service.on_call(request_ref))
                .catch_unwind()
                .await
        };
        let response = match outcome {
            Ok(Ok(r)) => r,
            Ok(Err(e)) => error(error_code::INTERNAL_ERROR, e.sentence()),
            Err(_) => error(
                error_code::INTERNAL_ERROR,
                "the capability failed unexpectedly",
            ),
        };
        let _ = std::panic::catch_unwind(AssertUnwindSafe(|| {
            service.on_after_call(request_ref, &response)
        }));
        response
    }
}

/// The Binder entry object.
struct Entry(Arc<Inner>);

impl Interface for Entry {}

impl IACIService for Entry {
    fn r#call(&self, request: &AciRequest) -> BinderResult<AciResponse> {
        let uid = rsbinder::get_calling_uid();
        let (tx, rx) = std::sync::mpsc::channel();
        let inner = self.0.clone();
        let request = request.clone();
        self.0.runtime.spawn(async move {
            let _ = tx.send(
                inner
                    .process(uid, request, Progress::discard(), false)
                    .await,
            );
        });
        // The Binder thread waits for the answer (that is what a sync `call` is).
        Ok(rx.recv().unwrap_or_else(|_| {
            error(
                error_code::INTERNAL_ERROR,
                "the capability failed unexpectedly",
            )
        }))
    }

    fn r#callAsync(
        &self,
        request: &AciRequest,
        callback: &Strong<dyn IACICallback>,
    ) -> BinderResult<()> {
        let uid = rsbinder::get_calling_uid();
        let (tx, mut rx) = mpsc::unbounded_channel::<Delivery>();
        let callback = callback.clone();
        let capability = bounded_id(&request.capability);
        // One delivery task per call keeps progress before the result, and the result once.
        // A blocking thread is held only while one callback transaction is in flight, so many
        // slow async calls do not pin threads.
        self.0.runtime.spawn(async move {
            while let Some(d) = rx.recv().await {
                let cb = callback.clone();
                let is_result = matches!(d, Delivery::Result(_));
                let sent = tokio::task::spawn_blocking(move || match d {
                    Delivery::Progress(p, msg) => cb.r#onProgress(p, msg.as_deref()),
                    Delivery::Result(resp) => cb.r#onResult(&resp),
                })
                .await;
                match sent {
                    Ok(Ok(())) => {}
                    Ok(Err(e)) if is_result => {
                        tracing::warn!(uid, capability = %capability, error = ?e, "ACI onResult not delivered");
                    }
                    Ok(Err(e)) => {
                        tracing::debug!(uid, capability = %capability, error = ?e, "ACI onProgress not delivered");
                    }
                    Err(_) => tracing::warn!(uid, capability = %capability, "ACI callback task failed"),
                }
                if is_result {
                    // Exactly once: nothing is delivered after the result.
                    return;
                }
            }
        });
        let inner = self.0.clone();
        let request = request.clone();
        let progress = Progress {
            tx: Some(tx.clone()),
        };
        self.0.runtime.spawn(async move {
            let response = inner.process(uid, request, progress, true).await;
            let _ = tx.send(Delivery::Result(Box::new(response)));
        });
        Ok(())
    }

    fn r#getCapabilities(&self) -> BinderResult<Vec<String>> {
        Ok(self.0.declared.json.clone())
    }

    fn r#ping(&self) -> BinderResult<bool> {
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aci16_blank_required_string_is_missing() {
        let spec = CapabilitySpec::create("c", "Does c.").add_param("q", "string", true, "Q");
        let mut b = Bundle::new();
        b.put("q", BundleValue::String(Some("  ".into())));
        assert_eq!(
            check_params(&spec, &b),
            Err("missing required parameter: q".to_owned())
        );
        b.put("q", BundleValue::Int(3));
        assert!(check_params(&spec, &b).is_err());
        b.put("q", BundleValue::String(Some("x".into())));
        assert_eq!(check_params(&spec, &b), Ok(()));
    }
}
