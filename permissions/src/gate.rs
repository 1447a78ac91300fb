//! [`Permissions`]: the thin async shell the runtime holds. It wires the sans-IO cores
//! (caller authorization, decision pipeline, quotas) to the policy store, the identity
//! resolver and the consent broker.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use capability_model::{Capability, CapabilityId};
use serde_json::{Map, Value};

use crate::authorization::{
    AuthEffect, CallerAuthorization, CallerStatus, OpenOutcome, RevokedCaller,
};
use crate::clock::Clock;
use crate::consent::{
    CallerChoice, CallerPrompt, ConsentBroker, ConsentOutcome, ConsentQueue, ConsentRequest,
    ConsentSurface, ConsentTicket, Initiator,
};
use crate::identity::{CertDigest, Identity, IdentityResolver, Principal, ResolvedCaller, Uid};
use crate::limits::{CONSENT_MAX_PENDING, CONSENT_TIMEOUT};
use crate::outcome::AgentosCode;
use crate::pipeline::{
    CallerPolicy, Decision, PolicyChange, PolicyEngine, ToolCall, ToolVerdict,
    verdict_without_consent,
};
use crate::policy::{PolicyError, UserPolicy};
use crate::quota::{AppUsage, PromptSlot, QuotaConfig, QuotaRefusal, Quotas};
use crate::sanitize::SanitizeConfig;
use crate::store::{PolicyStore, PolicyTarget, StoreError};

/// Configuration (CFG values default to SPEC).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PermissionsConfig {
    /// Open (default) or strict caller policy (CNS-11).
    pub caller_policy: CallerPolicy,
    /// `CallerQuotaConfig`.
    pub quotas: QuotaConfig,
    /// Sanitizer settings.
    pub sanitize: SanitizeConfig,
    /// Consent queue capacity (CNS-06).
    pub consent_max_pending: usize,
    /// Consent timeout from creation (CNS-04).
    pub consent_timeout: Duration,
}

impl Default for PermissionsConfig {
    fn default() -> Self {
        Self {
            caller_policy: CallerPolicy::Open,
            quotas: QuotaConfig::default(),
            sanitize: SanitizeConfig::default(),
            consent_max_pending: CONSENT_MAX_PENDING,
            consent_timeout: CONSENT_TIMEOUT,
        }
    }
}

/// Why `open` did not admit a caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("{}", code.channel_reason().unwrap_or("agentos.acp.not_open"))]
pub struct OpenRefusal {
    /// `authorization_pending`, `denied` or `not_open`.
    pub code: AgentosCode,
    /// For `denied` within the cooldown: time left.
    pub retry_after: Option<Duration>,
}

/// Errors of settings operations.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PermissionsError {
    /// The policy change is not allowed.
    #[error(transparent)]
    Policy(#[from] PolicyError),
    /// The store failed; the change was not made.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// A callback the runtime registers to close a revoked caller's channels and cancel its
/// running and queued tasks (ACP-55).
pub type RevocationListener = Arc<dyn Fn(&RevokedCaller) + Send + Sync>;

/// How a tool call starts: decided at once, or waiting for consent.
#[derive(Debug)]
pub enum ToolCallStart {
    /// No prompt needed (run or refused).
    Decided(ToolVerdict),
    /// Waiting for the user; finish with [`Permissions::complete_tool_call`]. The ticket id
    /// routes the caller's `session/request_permission` answer (CNS-09).
    Consent(ConsentTicket),
}

struct Shared {
    cfg: PermissionsConfig,
    clock: Arc<dyn Clock>,
    resolver: Arc<dyn IdentityResolver>,
    surface: Arc<dyn ConsentSurface>,
    broker: ConsentBroker,
    store: Mutex<Box<dyn PolicyStore>>,
    auth: Mutex<CallerAuthorization>,
    engine: Mutex<PolicyEngine>,
    quotas: Mutex<Quotas>,
    listeners: Mutex<Vec<RevocationListener>>,
    store_error: Option<String>,
    runtime: Option<tokio::runtime::Handle>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The permissions facade. Cheap to clone.
#[derive(Clone)]
pub struct Permissions {
    inner: Arc<Shared>,
}

impl std::fmt::Debug for Permissions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Permissions")
            .field("cfg", &self.inner.cfg)
            .field("store_error", &self.inner.store_error)
            .finish_non_exhaustive()
    }
}

impl Permissions {
    /// Loads the store and builds the facade. If the store cannot be loaded, caller
    /// authorization and the tool policy fail **closed** (AUT-08, SEC-21): no app is admitted
    /// and every tool call is refused; [`store_error`](Self::store_error) says why. Prompts
    /// are shown on the current tokio runtime.
    pub fn new(
        cfg: PermissionsConfig,
        store: Box<dyn PolicyStore>,
        resolver: Arc<dyn IdentityResolver>,
        surface: Arc<dyn ConsentSurface>,
        clock: Arc<dyn Clock>,
    ) -> Self {
        let (auth, engine, store_error) = match store.load() {
            Ok(stored) => (
                CallerAuthorization::new(stored.callers.values().cloned()),
                PolicyEngine::new(UserPolicy::from_stored(&stored), cfg.caller_policy),
                None,
            ),
            Err(e) => {
                tracing::error!(error = %e, "policy store unusable; failing closed");
                let mut engine = PolicyEngine::new(UserPolicy::default(), cfg.caller_policy);
                engine.unavailable = true;
                (
                    CallerAuthorization::fail_closed(),
                    engine,
                    Some(e.to_string()),
                )
            }
        };
        let broker = ConsentBroker::with_queue(
            Arc::clone(&surface),
            Arc::clone(&clock),
            ConsentQueue::new(cfg.consent_max_pending, cfg.consent_timeout),
            cfg.sanitize,
        );
        Self {
            inner: Arc::new(Shared {
                cfg,
                clock,
                resolver,
                surface,
                broker,
                store: Mutex::new(store),
                auth: Mutex::new(auth),
                engine: Mutex::new(engine),
                quotas: Mutex::new(Quotas::new(cfg.quotas)),
                listeners: Mutex::new(Vec::new()),
                store_error,
                runtime: tokio::runtime::Handle::try_current().ok(),
            }),
        }
    }

    /// Why the store could not be loaded, if it could not.
    pub fn store_error(&self) -> Option<&str> {
        self.inner.store_error.as_deref()
    }

    /// The consent broker (the ACI gate and the runtime share it).
    pub fn broker(&self) -> &ConsentBroker {
        &self.inner.broker
    }

    /// Registers a revocation listener (ACP-55).
    pub fn on_revoked(&self, listener: RevocationListener) {
        lock(&self.inner.listeners).push(listener);
    }

    // ---------------------------------------------------------------- caller authorization

    /// `open` from the kernel UID `uid` (AUT-01, AUT-02). Never takes a package name from a
    /// message. On first contact the prompt is shown (once) and `authorization_pending`
    /// returned; the SDK retries.
    pub fn open(&self, uid: Uid) -> Result<ResolvedCaller, OpenRefusal> {
        let caller = self.inner.resolver.resolve(uid).map_err(|e| {
            tracing::info!(uid = %uid, error = %e, "open refused: identity");
            OpenRefusal {
                code: AgentosCode::NotOpen,
                retry_after: None,
            }
        })?;
        let now = self.inner.clock.now();
        let (outcome, effects) = lock(&self.inner.auth).on_open(&caller, now);
        self.apply(effects);
        tracing::info!(
            uid = %uid,
            package = %caller.identity.package,
            outcome = ?outcome,
            "open"
        );
        match outcome {
            OpenOutcome::Allowed => Ok(caller),
            OpenOutcome::Pending => Err(OpenRefusal {
                code: AgentosCode::AuthorizationPending,
                retry_after: None,
            }),
            OpenOutcome::Denied { retry_after } => Err(OpenRefusal {
                code: AgentosCode::Denied,
                retry_after,
            }),
            OpenOutcome::NotOpen => Err(OpenRefusal {
                code: AgentosCode::NotOpen,
                retry_after: None,
            }),
        }
    }

    /// Whether `identity` is authorized now (AUT-09: check on every inbound request).
    pub fn is_caller_allowed(&self, identity: &Identity) -> bool {
        let now = self.inner.clock.now();
        let effects = lock(&self.inner.auth).on_tick(now);
        self.apply(effects);
        lock(&self.inner.auth).is_allowed(identity)
    }

    /// The user's answer to an authorization prompt (from the surface task, or a settings UI
    /// that shows pending prompts itself).
    pub fn answer_caller_prompt(
        &self,
        package: &str,
        cert: CertDigest,
        choice: CallerChoice,
        label: Option<String>,
    ) {
        let now = self.inner.clock.now();
        let effects = lock(&self.inner.auth).on_answer(package, cert, choice, label, now);
        self.apply(effects);
    }

    /// Settings → revoke (AUT-06, ACP-55): listeners are told at once.
    pub fn revoke_caller(&self, package: &str) {
        let now = self.inner.clock.now();
        let effects = lock(&self.inner.auth).revoke(package, now);
        self.apply(effects);
    }

    /// Settings → switch back to allowed.
    pub fn allow_caller(&self, package: &str) {
        let now = self.inner.clock.now();
        let effects = lock(&self.inner.auth).allow(package, now);
        self.apply(effects);
    }

    /// Settings → remove (the next `open` asks again).
    pub fn remove_caller(&self, package: &str) {
        let effects = lock(&self.inner.auth).remove(package);
        self.apply(effects);
    }

    /// Settings → authorized apps (AUT-06).
    pub fn callers(&self) -> Vec<CallerStatus> {
        lock(&self.inner.auth).statuses(self.inner.clock.now())
    }

    fn apply(&self, effects: Vec<AuthEffect>) {
        for effect in effects {
            match effect {
                AuthEffect::Persist(rec) => {
                    if let Err(e) = lock(&self.inner.store).put_caller(&rec) {
                        tracing::error!(package = %rec.package, error = %e, "cannot persist caller decision");
                    }
                }
                AuthEffect::Forget(pkg) => {
                    if let Err(e) = lock(&self.inner.store).remove_caller(&pkg) {
                        tracing::error!(package = %pkg, error = %e, "cannot forget caller");
                    }
                }
                AuthEffect::Revoked(r) => {
                    tracing::info!(package = %r.package, "caller revoked");
                    let listeners = lock(&self.inner.listeners).clone();
                    for l in listeners {
                        l(&r);
                    }
                }
                AuthEffect::ShowPrompt {
                    package,
                    cert,
                    label,
                    deadline,
                } => self.show_caller_prompt(package, cert, label, deadline),
            }
        }
    }

    fn show_caller_prompt(
        &self,
        package: String,
        cert: CertDigest,
        label: Option<String>,
        deadline: crate::clock::Millis,
    ) {
        let Some(rt) = self
            .inner
            .runtime
            .clone()
            .or_else(|| tokio::runtime::Handle::try_current().ok())
        else {
            tracing::warn!(package = %package, "no async runtime; authorization prompt not shown");
            return;
        };
        let prompt = CallerPrompt::build(&package, cert, label.as_deref(), self.inner.cfg.sanitize);
        let this = self.clone();
        rt.spawn(async move {
            let remaining = this.inner.clock.now().until(deadline);
            let surface = Arc::clone(&this.inner.surface);
            match tokio::time::timeout(remaining, surface.ask_caller(&prompt)).await {
                Ok(answer) => {
                    let choice = answer.unwrap_or(CallerChoice::Deny);
                    this.answer_caller_prompt(&package, cert, choice, label);
                }
                Err(_) => {
                    let now = this.inner.clock.now();
                    let effects = lock(&this.inner.auth).on_tick(now);
                    this.apply(effects);
                }
            }
        });
    }

    // ---------------------------------------------------------------- quotas

    /// Admits a prompt (QTA-01..04).
    pub fn admit_prompt(
        &self,
        principal: &Principal,
        text: &str,
    ) -> Result<PromptSlot, QuotaRefusal> {
        let now = self.inner.clock.now();
        let r = lock(&self.inner.quotas).admit(principal, text, now);
        if let Err(refusal) = &r {
            tracing::info!(
                caller = principal.log_name(),
                reason = refusal.reason(),
                "prompt refused by quota"
            );
        }
        r
    }

    /// The prompt's task ended (QTA-02).
    pub fn prompt_finished(&self, slot: PromptSlot) {
        lock(&self.inner.quotas).finish(slot);
    }

    /// The package was uninstalled: quota counters and its authorization go (QTA-05).
    pub fn package_uninstalled(&self, package: &str) {
        lock(&self.inner.quotas).forget_app(package);
        self.remove_caller(package);
    }

    /// Usage of an app (QTA-06).
    pub fn usage(&self, package: &str) -> Option<AppUsage> {
        lock(&self.inner.quotas).usage(package, self.inner.clock.now())
    }

    // ---------------------------------------------------------------- user policy

    /// Sets or clears "always allow" (refused for HIGH and session tools, CAT-68).
    pub fn set_always_allow(&self, cap: &Capability, on: bool) -> Result<(), PermissionsError> {
        let mut engine = lock(&self.inner.engine);
        let mut probe = engine.user.clone();
        probe.set_always_allow(cap, on)?;
        lock(&self.inner.store).set_always_allow(&cap.id, on)?;
        engine.user = probe;
        Ok(())
    }

    /// Disables or re-enables a plugin, server or tool.
    pub fn set_disabled(
        &self,
        target: PolicyTarget,
        disabled: bool,
    ) -> Result<(), PermissionsError> {
        lock(&self.inner.store).set_disabled(&target, disabled)?;
        lock(&self.inner.engine).user.set_disabled(target, disabled);
        Ok(())
    }

    /// Whether a tool is disabled by any target (for the catalog's CAT-03 filter).
    pub fn is_disabled(&self, id: &CapabilityId) -> bool {
        lock(&self.inner.engine).user.is_disabled(id)
    }

    /// Deletes every policy of a renamed or removed triple (CAT-05).
    pub fn forget_tool(&self, id: &CapabilityId) -> Result<(), PermissionsError> {
        lock(&self.inner.store).forget_tool(id)?;
        let mut engine = lock(&self.inner.engine);
        engine.user.forget_tool(id);
        engine.sessions.forget_tool(id);
        Ok(())
    }

    /// The session ended: its "don't ask again" grants go.
    pub fn end_session(&self, session: &str) {
        lock(&self.inner.engine).sessions.end_session(session);
    }

    // ---------------------------------------------------------------- tool calls

    fn caller_authorized(&self, p: &Principal) -> bool {
        match p {
            Principal::App(c) => self.is_caller_allowed(&c.identity),
            Principal::SelfUi | Principal::Desktop => true,
        }
    }

    /// CAT-69 steps 0–3 without consent.
    pub fn decide(&self, call: &ToolCall<'_>) -> Decision {
        let authorized = self.caller_authorized(call.principal);
        lock(&self.inner.engine).decide(call, authorized)
    }

    /// Starts a tool call: decides, and enqueues a consent request when one is needed.
    pub fn begin_tool_call(
        &self,
        call: &ToolCall<'_>,
        arguments: &Map<String, Value>,
    ) -> ToolCallStart {
        let decision = self.decide(call);
        if let Some(v) = verdict_without_consent(&decision) {
            audit(call, v);
            return ToolCallStart::Decided(v);
        }
        let Decision::Ask { risk, choices } = decision else {
            return ToolCallStart::Decided(ToolVerdict::Unavailable);
        };
        let req = ConsentRequest {
            capability: call.capability.id.clone(),
            title: call.capability.title.clone(),
            risk,
            arguments: arguments.clone(),
            initiator: Initiator::of(call.principal),
            choices,
        };
        match self.inner.broker.submit(&req) {
            Ok(ticket) => ToolCallStart::Consent(ticket),
            Err(_) => {
                let v = ToolVerdict::Unavailable;
                audit(call, v);
                ToolCallStart::Decided(v)
            }
        }
    }

    /// Finishes a call that waited for consent: records "don't ask again" / "always allow".
    pub fn complete_tool_call(&self, call: &ToolCall<'_>, outcome: ConsentOutcome) -> ToolVerdict {
        let (verdict, change) = lock(&self.inner.engine).apply_consent(call, outcome);
        if let Some(PolicyChange::AlwaysAllow(id)) = change
            && let Err(e) = lock(&self.inner.store).set_always_allow(&id, true)
        {
            tracing::error!(capability = %id, error = %e, "cannot persist always-allow");
        }
        audit(call, verdict);
        verdict
    }

    /// The whole pipeline for one call, consent included.
    pub async fn authorize_tool_call(
        &self,
        call: &ToolCall<'_>,
        arguments: &Map<String, Value>,
    ) -> ToolVerdict {
        match self.begin_tool_call(call, arguments) {
            ToolCallStart::Decided(v) => v,
            ToolCallStart::Consent(ticket) => {
                let outcome = ticket.wait().await;
                self.complete_tool_call(call, outcome)
            }
        }
    }
}

/// SEC-23: who, what, the decision — never argument values.
fn audit(call: &ToolCall<'_>, verdict: ToolVerdict) {
    tracing::info!(
        caller = call.principal.log_name(),
        capability = %call.capability.id,
        verdict = ?verdict,
        "tool call decision"
    );
}
