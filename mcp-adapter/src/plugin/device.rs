//! Device-level plugin rules: unique names (MCP-45), identity and signature changes (MCP-51),
//! and plugin-level enablement (MCP-50).

use std::collections::BTreeMap;

use permissions::CertDigest;

/// One plugin's claim on its name, for the device-wide uniqueness rule (MCP-45).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NameClaim {
    /// The `plugin.json` name.
    pub plugin: String,
    /// The package (the plugin's id; "smaller id" compares package names).
    pub package: String,
    /// Shipped with the device (system image / host operator's bundled list).
    pub bundled: bool,
    /// The package held this name before (the recorded owner).
    pub original_owner: bool,
}

impl NameClaim {
    /// Smaller wins: bundled first, then the original owner, then the smaller id.
    fn rank(&self) -> (bool, bool, &str) {
        (!self.bundled, !self.original_owner, self.package.as_str())
    }
}

/// The winning package for each claimed plugin name (MCP-45). The result depends only on
/// the set of claims, never on their order. A package claiming a name it lost keeps its
/// plugin in the registry as unavailable (`NAME_CONFLICT`, MCP-47).
pub fn name_winners(claims: &[NameClaim]) -> BTreeMap<String, String> {
    let mut best: BTreeMap<&str, &NameClaim> = BTreeMap::new();
    for c in claims {
        best.entry(c.plugin.as_str())
            .and_modify(|b| {
                if c.rank() < b.rank() {
                    *b = c;
                }
            })
            .or_insert(c);
    }
    best.into_iter()
        .map(|(name, c)| (name.to_owned(), c.package.clone()))
        .collect()
}

/// A plugin's identity: (package, signing-certificate digest, versionCode) (MCP-51).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PluginIdentity {
    /// The package.
    pub package: String,
    /// SHA-256 of its signing certificate.
    pub signing_cert_sha256: CertDigest,
    /// The installed version.
    pub version_code: i64,
}

/// How a plugin's identity changed since it was last seen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdentityChange {
    /// Never seen before.
    New,
    /// Same package, digest and version.
    Unchanged,
    /// Same signature, another versionCode (an update): nothing is revoked.
    Updated,
    /// The signing certificate changed: see [`IdentityChange::actions`].
    SignatureChanged,
}

/// What the runtime must do when a plugin's identity changed (MCP-51).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IdentityAction {
    /// Close every open connection to the plugin's servers.
    RevokeConnections,
    /// Clear the plugin's stored policies (enable/disable, "always allow").
    ClearPolicies,
    /// Disable the plugin and mark it as needing re-confirmation; its Skills disappear.
    DisableNeedsReconfirmation,
}

impl IdentityChange {
    /// Compares the identity recorded earlier (if any) with the current one.
    pub fn between(previous: Option<&PluginIdentity>, current: &PluginIdentity) -> IdentityChange {
        match previous {
            None => IdentityChange::New,
            Some(p) if p.package != current.package => IdentityChange::New,
            Some(p) if p.signing_cert_sha256 != current.signing_cert_sha256 => {
                IdentityChange::SignatureChanged
            }
            Some(p) if p.version_code != current.version_code => IdentityChange::Updated,
            Some(_) => IdentityChange::Unchanged,
        }
    }

    /// The actions MCP-51 requires, in order.
    pub fn actions(self) -> &'static [IdentityAction] {
        match self {
            IdentityChange::SignatureChanged => &[
                IdentityAction::RevokeConnections,
                IdentityAction::ClearPolicies,
                IdentityAction::DisableNeedsReconfirmation,
            ],
            _ => &[],
        }
    }
}

/// Plugin-level enablement (MCP-50, MCP-51).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Enablement {
    /// Enabled: its servers may be connected and its Skills listed.
    Enabled,
    /// Disabled (third-party plugins start here): never connected, not even to show tools
    /// (MCP-26).
    Disabled,
    /// Was enabled for another signing certificate: disabled until the user confirms again.
    NeedsReconfirmation,
}

impl Enablement {
    /// `enabled`, `disabled` or `needs_reconfirmation`.
    pub fn as_str(self) -> &'static str {
        match self {
            Enablement::Enabled => "enabled",
            Enablement::Disabled => "disabled",
            Enablement::NeedsReconfirmation => "needs_reconfirmation",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn digest(b: u8) -> CertDigest {
        CertDigest([b; 32])
    }

    #[test]
    fn identity_changes() {
        let a = PluginIdentity {
            package: "p".into(),
            signing_cert_sha256: digest(1),
            version_code: 1,
        };
        let mut b = a.clone();
        b.version_code = 2;
        assert_eq!(IdentityChange::between(None, &a), IdentityChange::New);
        assert_eq!(
            IdentityChange::between(Some(&a), &a),
            IdentityChange::Unchanged
        );
        assert_eq!(
            IdentityChange::between(Some(&a), &b),
            IdentityChange::Updated
        );
        assert!(IdentityChange::Updated.actions().is_empty());
        b.signing_cert_sha256 = digest(2);
        let c = IdentityChange::between(Some(&a), &b);
        assert_eq!(c, IdentityChange::SignatureChanged);
        assert_eq!(c.actions().len(), 3);
    }
}
