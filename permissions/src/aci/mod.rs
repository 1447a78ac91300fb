//! ACI's five provider-side permission layers (ACI-20..23, Appendix E.5/E.6), enforced before a
//! provider's `onCall` runs. Any denial → ACI `PERMISSION_DENIED` (403), nothing dispatched.
//!
//! 1. **Manifest permission**: the caller holds `ai.aci.permission.CALL`, and
//!    `ai.aci.permission.CALL_DANGEROUS` for `DANGEROUS_ACTION` capabilities.
//! 2. **Binder UID**: the kernel UID resolves to exactly one package; `callerPkg` is
//!    overwritten with it (whatever the request claimed, E.6).
//! 3. **`onCheckPermission`**: the provider's hook, given the resolved package.
//! 4. **`aci_permissions.xml`**: rules by package / certificate / capability ([`AciPolicy`]).
//! 5. **Capability level**: every `requirePermission` held; `requireUserConfirm` → consent.
//!
//! Layer 1 needs the caller's grants, so the UID is resolved first; a UID that does not resolve
//! is refused as a layer-2 failure.

mod xml;

use std::collections::BTreeSet;
use std::sync::Arc;

use capability_model::{AciFlag, Capability};
use serde_json::{Map, Value};

use crate::consent::{
    Choice, ConsentBroker, ConsentOutcome, ConsentRequest, DenyReason, Initiator,
};
use crate::identity::{IdentityError, IdentityResolver, ResolvedCaller, Uid};
use crate::outcome::AciErrorCode;

pub use xml::{
    ACI_PERMISSIONS_VERSION, AciPolicy, AciPolicyError, CapabilityRule, Effect, ROOT_ELEMENT, Rule,
};

/// Permission every ACI caller needs (E.5).
pub const PERMISSION_CALL: &str = "ai.aci.permission.CALL";
/// Permission needed for `DANGEROUS_ACTION` capabilities (E.5).
pub const PERMISSION_CALL_DANGEROUS: &str = "ai.aci.permission.CALL_DANGEROUS";
/// Permission to discover providers (E.5).
pub const PERMISSION_DISCOVER: &str = "ai.aci.permission.DISCOVER";

/// The five layers, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum AciLayer {
    /// 1: manifest permission.
    ManifestPermission = 1,
    /// 2: Binder UID → one package.
    BinderUid = 2,
    /// 3: `onCheckPermission`.
    CheckPermissionHook = 3,
    /// 4: `aci_permissions.xml`.
    PolicyFile = 4,
    /// 5: capability-level permission and confirmation.
    Capability = 5,
}

/// What exactly was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum AciDenialReason {
    /// No `ai.aci.permission.CALL`.
    MissingCallPermission,
    /// `DANGEROUS_ACTION` without `ai.aci.permission.CALL_DANGEROUS`.
    MissingDangerousPermission,
    /// The UID belongs to no known package.
    UnknownCaller,
    /// The UID is shared by several packages (ACI-21).
    SharedUid,
    /// The identity registry is unusable (fail closed).
    RegistryUnavailable,
    /// `onCheckPermission` returned false.
    HookRefused,
    /// An `aci_permissions.xml` rule (or its default) denied.
    PolicyDenied,
    /// A `requirePermission` is not held.
    MissingRequiredPermission,
    /// `requireUserConfirm` and the user did not allow.
    UserDeclined(DenyReason),
    /// `requireUserConfirm` and consent could not be asked (queue full, no surface).
    ConsentUnavailable,
}

/// A refusal at one layer. Maps to ACI `PERMISSION_DENIED` (403).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, thiserror::Error)]
#[error("permission denied (ACI layer {})", *layer as u8)]
pub struct AciDenial {
    /// The layer that refused.
    pub layer: AciLayer,
    /// Why.
    pub reason: AciDenialReason,
}

impl AciDenial {
    fn new(layer: AciLayer, reason: AciDenialReason) -> Self {
        Self { layer, reason }
    }

    /// Always `PERMISSION_DENIED`.
    pub fn error_code(&self) -> AciErrorCode {
        AciErrorCode::PermissionDenied
    }
}

/// What the provider's `onCheckPermission` sees: `caller_pkg` is the kernel-resolved package,
/// never the request's claim.
#[derive(Debug, Clone, Copy)]
pub struct AciCallContext<'a> {
    /// The capability id.
    pub capability: &'a str,
    /// The resolved package (`callerPkg`).
    pub caller_pkg: &'a str,
    /// Everything resolved about the caller.
    pub caller: &'a ResolvedCaller,
    /// The call's parameters.
    pub arguments: &'a Map<String, Value>,
}

/// Layer 3: the provider's `onCheckPermission(request, callerPkg)`.
pub trait AciPermissionHook: Send + Sync {
    /// Whether the provider lets this caller make this call. ACI's default is `true` (ACI-10).
    fn on_check_permission(&self, ctx: &AciCallContext<'_>) -> bool {
        let _ = ctx;
        true
    }
}

/// ACI's permissive default hook.
#[derive(Debug, Clone, Copy, Default)]
pub struct DefaultHook;

impl AciPermissionHook for DefaultHook {}

/// The hook ACI-23 recommends: only listed packages (the controller and the provider itself).
#[derive(Debug, Clone, Default)]
pub struct AllowListHook {
    packages: BTreeSet<String>,
}

impl AllowListHook {
    /// Allows exactly these packages.
    pub fn new<I: IntoIterator<Item = S>, S: Into<String>>(packages: I) -> Self {
        Self {
            packages: packages.into_iter().map(Into::into).collect(),
        }
    }
}

impl AciPermissionHook for AllowListHook {
    fn on_check_permission(&self, ctx: &AciCallContext<'_>) -> bool {
        self.packages.contains(ctx.caller_pkg)
    }
}

/// An inbound ACI call as the provider side receives it.
#[derive(Debug, Clone, Copy)]
pub struct AciInboundCall<'a> {
    /// The kernel-given calling UID.
    pub uid: Uid,
    /// The capability called (the provider's own record).
    pub capability: &'a Capability,
    /// `ACIRequest.callerPkg` as sent: untrusted, only logged as "spoofed" when it differs.
    pub claimed_caller_pkg: Option<&'a str>,
    /// The parameters.
    pub arguments: &'a Map<String, Value>,
}

/// A call that passed layers 1–4 and the permission half of layer 5.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AciAdmitted {
    /// The resolved caller; `caller.identity.package` is the `callerPkg` to pass on.
    pub caller: ResolvedCaller,
    /// Whether layer 5 still needs the user's confirmation.
    pub needs_user_confirm: bool,
}

impl AciAdmitted {
    /// The overwritten `callerPkg`.
    pub fn caller_pkg(&self) -> &str {
        &self.caller.identity.package
    }
}

/// The provider-side gate.
pub struct AciPermissionGate {
    resolver: Arc<dyn IdentityResolver>,
    policy: AciPolicy,
}

impl std::fmt::Debug for AciPermissionGate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AciPermissionGate")
            .field("policy", &self.policy)
            .finish_non_exhaustive()
    }
}

impl AciPermissionGate {
    /// A gate over a resolver and a parsed policy (use [`AciPolicy::allow_all`] when the
    /// provider ships no file, [`AciPolicy::deny_all`] when its file is unusable).
    pub fn new(resolver: Arc<dyn IdentityResolver>, policy: AciPolicy) -> Self {
        Self { resolver, policy }
    }

    /// The policy.
    pub fn policy(&self) -> &AciPolicy {
        &self.policy
    }

    /// Layers 1–5 without the consent wait (sans-IO).
    pub fn check(
        &self,
        call: &AciInboundCall<'_>,
        hook: &dyn AciPermissionHook,
    ) -> Result<AciAdmitted, AciDenial> {
        let cap = call.capability;
        let cap_id = cap.id.name.as_str();
        let caller = self.resolver.resolve(call.uid).map_err(|e| {
            let reason = match e {
                IdentityError::SharedUid { .. } => AciDenialReason::SharedUid,
                IdentityError::RegistryUnavailable => AciDenialReason::RegistryUnavailable,
                _ => AciDenialReason::UnknownCaller,
            };
            deny_log(call, AciDenial::new(AciLayer::BinderUid, reason))
        })?;

        // Layer 1.
        if !caller.holds(PERMISSION_CALL) {
            return Err(deny_log(
                call,
                AciDenial::new(
                    AciLayer::ManifestPermission,
                    AciDenialReason::MissingCallPermission,
                ),
            ));
        }
        let dangerous = cap
            .aci
            .as_ref()
            .is_some_and(|a| a.flags.contains(&AciFlag::DangerousAction));
        if dangerous && !caller.holds(PERMISSION_CALL_DANGEROUS) {
            return Err(deny_log(
                call,
                AciDenial::new(
                    AciLayer::ManifestPermission,
                    AciDenialReason::MissingDangerousPermission,
                ),
            ));
        }

        // Layer 2: callerPkg comes from the UID, never from the request (E.6).
        let caller_pkg = caller.identity.package.as_str();
        if let Some(claimed) = call.claimed_caller_pkg
            && claimed != caller_pkg
        {
            tracing::warn!(
                uid = %call.uid,
                package = %caller_pkg,
                capability = cap_id,
                "ACI request claimed another callerPkg; overwritten with the UID's package"
            );
        }

        // Layer 3.
        let ctx = AciCallContext {
            capability: cap_id,
            caller_pkg,
            caller: &caller,
            arguments: call.arguments,
        };
        if !hook.on_check_permission(&ctx) {
            return Err(deny_log(
                call,
                AciDenial::new(AciLayer::CheckPermissionHook, AciDenialReason::HookRefused),
            ));
        }

        // Layer 4.
        if self.policy.evaluate(&caller.identity, cap_id) == Effect::Deny {
            return Err(deny_log(
                call,
                AciDenial::new(AciLayer::PolicyFile, AciDenialReason::PolicyDenied),
            ));
        }

        // Layer 5.
        let from_file = self.policy.capability(cap_id);
        let required = cap
            .require_permission
            .iter()
            .chain(from_file.iter().flat_map(|r| r.require_permissions.iter()));
        for p in required {
            if !caller.holds(p) {
                return Err(deny_log(
                    call,
                    AciDenial::new(
                        AciLayer::Capability,
                        AciDenialReason::MissingRequiredPermission,
                    ),
                ));
            }
        }
        let needs_user_confirm =
            cap.require_user_confirm || from_file.is_some_and(|r| r.require_user_confirm);
        Ok(AciAdmitted {
            caller,
            needs_user_confirm,
        })
    }

    /// All five layers, asking the user through `consent` when layer 5 requires it. Without a
    /// broker, a capability that requires confirmation is refused (fail closed).
    pub async fn authorize(
        &self,
        call: &AciInboundCall<'_>,
        hook: &dyn AciPermissionHook,
        consent: Option<&ConsentBroker>,
    ) -> Result<AciAdmitted, AciDenial> {
        let admitted = self.check(call, hook)?;
        if !admitted.needs_user_confirm {
            return Ok(admitted);
        }
        let Some(broker) = consent else {
            return Err(deny_log(
                call,
                AciDenial::new(AciLayer::Capability, AciDenialReason::ConsentUnavailable),
            ));
        };
        let req = ConsentRequest {
            capability: call.capability.id.clone(),
            title: call.capability.title.clone(),
            risk: call.capability.risk(),
            arguments: call.arguments.clone(),
            initiator: Initiator::App {
                package: admitted.caller.identity.package.clone(),
                label: admitted.caller.label.clone(),
            },
            choices: Choice::offered(false),
        };
        match broker.request(&req).await {
            ConsentOutcome::Allowed(_) => Ok(admitted),
            ConsentOutcome::Denied(r) => Err(deny_log(
                call,
                AciDenial::new(AciLayer::Capability, AciDenialReason::UserDeclined(r)),
            )),
            ConsentOutcome::Unavailable => Err(deny_log(
                call,
                AciDenial::new(AciLayer::Capability, AciDenialReason::ConsentUnavailable),
            )),
        }
    }
}

fn deny_log(call: &AciInboundCall<'_>, d: AciDenial) -> AciDenial {
    tracing::info!(
        uid = %call.uid,
        capability = %call.capability.id.name,
        layer = d.layer as u8,
        reason = ?d.reason,
        "ACI call denied"
    );
    d
}
