//! The decision pipeline for one tool call, in the order of SPEC CAT-69 and §10 C-02:
//!
//! 0. the caller's authorization is current (AUT-09);
//! 1. catalog membership ∧ toolScope ∧ mode — supplied by whoever holds the catalog as a
//!    [`CatalogVerdict`] — and user disablement; otherwise `tool_not_in_catalog`, no prompt;
//! 2. effective risk (`Capability::risk`);
//! 3. user policy ("always allow", per-session "don't ask again");
//! 4. consent (CNS).
//!
//! "Always allow" sits in step 3, so it can never bypass step 1. The engine is sans-IO; the
//! async shell ([`crate::gate::Permissions`]) runs step 4 through the consent broker.

use capability_model::{Capability, Risk};

use crate::consent::{Choice, ConsentOutcome};
use crate::identity::Principal;
use crate::outcome::AgentosCode;
use crate::policy::{PolicyError, SessionGrants, UserPolicy, rememberable};

/// CAT-69 step 1 as computed by the catalog holder (catalog ∩ toolScope ∩ mode).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CatalogVerdict {
    /// The tool is in the current catalog, in the session's scope, and shown in its mode.
    Visible,
    /// Not in the current catalog (never existed, removed, plugin disabled).
    NotInCatalog,
    /// Outside the session's toolScope (CAT-37).
    OutOfScope,
    /// Hidden by the session mode (CAT-53).
    HiddenByMode,
}

/// Which consent policy applies (CNS-01, CNS-11).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum CallerPolicy {
    /// `OpenCallerPolicy`: the same rules for every caller (default).
    #[default]
    Open,
    /// `StrictCallerPolicy`: third-party sessions without a scope have no tools, and every
    /// third-party call is prompted with only "allow once" / "deny".
    Strict,
}

/// One tool call as the pipeline sees it.
#[derive(Debug, Clone, Copy)]
pub struct ToolCall<'a> {
    /// Who started the work (kernel-resolved).
    pub principal: &'a Principal,
    /// The session id (for "don't ask again").
    pub session: &'a str,
    /// The capability record from the current catalog.
    pub capability: &'a Capability,
    /// Step 1, from the catalog holder.
    pub catalog: CatalogVerdict,
    /// Whether the session was created with a toolScope (CNS-11 only).
    pub session_has_scope: bool,
}

/// Why a call is refused without asking anyone.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Refusal {
    /// The caller's authorization is gone (revoked, denied) — AUT-09.
    CallerNotAuthorized,
    /// Step 1 failed: not in catalog, out of scope or hidden by mode (CAT-37, CAT-53).
    NotInCatalog,
    /// The user disabled the plugin, server or tool (CAT-03).
    Disabled,
    /// `StrictCallerPolicy`: a third-party session without a scope has no tools (CNS-11).
    StrictUnscoped,
    /// The user policy could not be loaded; every tool call is refused (fail closed, SEC-21).
    PolicyUnavailable,
}

impl Refusal {
    /// The `agentosCode`. Every step-1 refusal maps to the same `tool_not_in_catalog`, so the
    /// model cannot tell them apart (CAT-37).
    pub fn code(self) -> AgentosCode {
        match self {
            Refusal::CallerNotAuthorized => AgentosCode::Denied,
            Refusal::NotInCatalog | Refusal::Disabled | Refusal::StrictUnscoped => {
                AgentosCode::ToolNotInCatalog
            }
            Refusal::PolicyUnavailable => AgentosCode::ToolBlocked,
        }
    }
}

/// Why a call may run without a prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Allowance {
    /// READ risk under the open policy (CNS-01).
    ReadRisk,
    /// The user set "always allow" for the triple (CNS-01, CNS-03).
    AlwaysAllow,
    /// The user chose "don't ask again" in this session.
    SessionGrant,
    /// The user just answered the prompt with this choice.
    User(Choice),
}

/// The pipeline's verdict before consent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Refused, no prompt.
    Refuse(Refusal),
    /// May run without a prompt.
    Allow(Allowance),
    /// Ask the user, offering these choices.
    Ask {
        /// Effective risk.
        risk: Risk,
        /// The choices to offer (CNS-02).
        choices: Vec<Choice>,
    },
}

/// The final verdict for a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ToolVerdict {
    /// Dispatch it.
    Run(Allowance),
    /// Refused before any prompt.
    Refused(Refusal),
    /// Asked and not allowed (user, timeout, caller denial) — `tool_denied`.
    Denied(crate::consent::DenyReason),
    /// The consent queue was full — `tool_unavailable` (CNS-06, G-15).
    Unavailable,
}

impl ToolVerdict {
    /// Whether the call may be dispatched.
    pub fn may_run(self) -> bool {
        matches!(self, ToolVerdict::Run(_))
    }

    /// The `agentosCode` for a call that may not run.
    pub fn code(self) -> Option<AgentosCode> {
        match self {
            ToolVerdict::Run(_) => None,
            ToolVerdict::Refused(r) => Some(r.code()),
            ToolVerdict::Denied(_) => Some(AgentosCode::ToolDenied),
            ToolVerdict::Unavailable => Some(AgentosCode::ToolUnavailable),
        }
    }
}

/// A persisted change the shell must write after a consent answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PolicyChange {
    /// Persist "always allow" for the triple.
    AlwaysAllow(capability_model::CapabilityId),
}

/// The sans-IO decision engine: user policy, session grants, caller policy.
#[derive(Debug, Clone, Default)]
pub struct PolicyEngine {
    /// Persisted user policy.
    pub user: UserPolicy,
    /// Per-session grants.
    pub sessions: SessionGrants,
    /// Open or strict.
    pub caller_policy: CallerPolicy,
    /// Set when the user policy could not be loaded (fail closed).
    pub unavailable: bool,
}

impl PolicyEngine {
    /// An engine over a loaded user policy.
    pub fn new(user: UserPolicy, caller_policy: CallerPolicy) -> Self {
        Self {
            user,
            sessions: SessionGrants::default(),
            caller_policy,
            unavailable: false,
        }
    }

    /// Steps 0–3 of CAT-69 for `call`. `caller_authorized` is the current AUT state of the
    /// caller (always `true` for SELF and DESKTOP principals).
    pub fn decide(&self, call: &ToolCall<'_>, caller_authorized: bool) -> Decision {
        // Step 0 (C-02 (1), AUT-09).
        if !caller_authorized {
            return Decision::Refuse(Refusal::CallerNotAuthorized);
        }
        if self.unavailable {
            return Decision::Refuse(Refusal::PolicyUnavailable);
        }
        // Step 1: catalog ∩ scope ∩ mode, then disablement. Nothing below can override it.
        if call.catalog != CatalogVerdict::Visible {
            return Decision::Refuse(Refusal::NotInCatalog);
        }
        let cap = call.capability;
        if self.user.is_disabled(&cap.id) {
            return Decision::Refuse(Refusal::Disabled);
        }
        let strict_app = self.caller_policy == CallerPolicy::Strict
            && matches!(call.principal, Principal::App(_));
        if strict_app && !call.session_has_scope {
            return Decision::Refuse(Refusal::StrictUnscoped);
        }
        // Step 2.
        let risk = cap.risk();
        // Step 3 and 4.
        if strict_app {
            return Decision::Ask {
                risk,
                choices: Choice::offered(false),
            };
        }
        if risk == Risk::Read && !cap.require_user_confirm {
            return Decision::Allow(Allowance::ReadRisk);
        }
        if self.user.always_allows(cap) {
            return Decision::Allow(Allowance::AlwaysAllow);
        }
        if self.sessions.allows(call.session, cap) {
            return Decision::Allow(Allowance::SessionGrant);
        }
        Decision::Ask {
            risk,
            choices: Choice::offered(rememberable(cap)),
        }
    }

    /// Applies the consent outcome of a call that was asked: remembers "don't ask again" for
    /// the session and "always allow" (returned as a change to persist).
    pub fn apply_consent(
        &mut self,
        call: &ToolCall<'_>,
        outcome: ConsentOutcome,
    ) -> (ToolVerdict, Option<PolicyChange>) {
        match outcome {
            ConsentOutcome::Allowed(choice) => {
                let cap = call.capability;
                let change = match choice {
                    Choice::DontAskAgainThisSession if rememberable(cap) => {
                        self.sessions.grant(call.session, &cap.id);
                        None
                    }
                    Choice::AlwaysAllow => match self.user.set_always_allow(cap, true) {
                        Ok(()) => Some(PolicyChange::AlwaysAllow(cap.id.clone())),
                        Err(PolicyError::NotRememberable) => None,
                    },
                    _ => None,
                };
                (ToolVerdict::Run(Allowance::User(choice)), change)
            }
            ConsentOutcome::Denied(reason) => (ToolVerdict::Denied(reason), None),
            ConsentOutcome::Unavailable => (ToolVerdict::Unavailable, None),
        }
    }
}

/// Maps a decision that needs no consent to its verdict.
pub fn verdict_without_consent(d: &Decision) -> Option<ToolVerdict> {
    match d {
        Decision::Refuse(r) => Some(ToolVerdict::Refused(*r)),
        Decision::Allow(a) => Some(ToolVerdict::Run(*a)),
        Decision::Ask { .. } => None,
    }
}
