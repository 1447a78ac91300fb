//! User policy (CAT-68, CNS-01..03): per-plugin/server/tool enablement, per-triple "always
//! allow", and per-session "don't ask again". Keys are raw triples, never final names (CAT-05,
//! CAT-18).

use std::collections::{BTreeSet, HashMap, HashSet};

use capability_model::{Capability, CapabilityId, Risk, Source};

use crate::store::{PolicyTarget, StoredPolicy};

/// Why a policy change was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PolicyError {
    /// "Always allow" / "don't ask again" is never available for this tool: HIGH risk (CAT-68),
    /// session MCP tools (CAT-64, SMS-09), or a provider that demands confirmation.
    #[error("this tool cannot be set to always allow")]
    NotRememberable,
}

/// Whether a user's allow may be remembered for `cap` (always allow, don't ask again): only
/// WRITE tools from plugins and ACI providers that do not demand confirmation every time.
pub fn rememberable(cap: &Capability) -> bool {
    cap.risk() == Risk::Write && cap.id.source != Source::SessionMcp && !cap.require_user_confirm
}

/// Enablement and "always allow", as persisted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UserPolicy {
    disabled: BTreeSet<PolicyTarget>,
    always_allow: BTreeSet<CapabilityId>,
}

impl UserPolicy {
    /// From what a store loaded.
    pub fn from_stored(stored: &StoredPolicy) -> Self {
        Self {
            disabled: stored.disabled.clone(),
            always_allow: stored.always_allow.clone(),
        }
    }

    /// Whether any target covering `id` is disabled (plugin, server or tool).
    pub fn is_disabled(&self, id: &CapabilityId) -> bool {
        self.disabled.iter().any(|t| t.covers(id))
    }

    /// Disables or re-enables a target.
    pub fn set_disabled(&mut self, target: PolicyTarget, disabled: bool) {
        if disabled {
            self.disabled.insert(target);
        } else {
            self.disabled.remove(&target);
        }
    }

    /// Sets "always allow" for a tool; refused for tools that may not be remembered.
    pub fn set_always_allow(&mut self, cap: &Capability, on: bool) -> Result<(), PolicyError> {
        if on {
            if !rememberable(cap) {
                return Err(PolicyError::NotRememberable);
            }
            self.always_allow.insert(cap.id.clone());
        } else {
            self.always_allow.remove(&cap.id);
        }
        Ok(())
    }

    /// Whether "always allow" applies to `cap` now. A stored entry for a tool that has since
    /// become HIGH (or otherwise not rememberable) is ignored.
    pub fn always_allows(&self, cap: &Capability) -> bool {
        rememberable(cap) && self.always_allow.contains(&cap.id)
    }

    /// Drops every policy of a triple (CAT-05).
    pub fn forget_tool(&mut self, id: &CapabilityId) {
        self.always_allow.remove(id);
        self.disabled.remove(&PolicyTarget::Tool(id.clone()));
    }

    /// Disabled targets.
    pub fn disabled(&self) -> impl Iterator<Item = &PolicyTarget> {
        self.disabled.iter()
    }

    /// Triples set to "always allow".
    pub fn always_allowed(&self) -> impl Iterator<Item = &CapabilityId> {
        self.always_allow.iter()
    }
}

/// Per-session "don't ask again" grants (in memory; they end with the session).
#[derive(Debug, Clone, Default)]
pub struct SessionGrants {
    by_session: HashMap<String, HashSet<CapabilityId>>,
}

impl SessionGrants {
    /// Records "don't ask again" for `id` in `session`.
    pub fn grant(&mut self, session: &str, id: &CapabilityId) {
        self.by_session
            .entry(session.to_owned())
            .or_default()
            .insert(id.clone());
    }

    /// Whether `session` holds a grant for `cap` that still applies.
    pub fn allows(&self, session: &str, cap: &Capability) -> bool {
        rememberable(cap)
            && self
                .by_session
                .get(session)
                .is_some_and(|s| s.contains(&cap.id))
    }

    /// Forgets a session's grants.
    pub fn end_session(&mut self, session: &str) {
        self.by_session.remove(session);
    }

    /// Forgets a triple's grants in every session (CAT-05).
    pub fn forget_tool(&mut self, id: &CapabilityId) {
        for s in self.by_session.values_mut() {
            s.remove(id);
        }
    }
}
