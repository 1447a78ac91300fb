//! Risk levels and MCP annotations (CAT-60..CAT-66, ACI-43).

use serde::{Deserialize, Serialize};

/// The three ordered risk levels: `Read < Write < High` (CAT-60).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Risk {
    /// Reads data; may run without a prompt where policy allows.
    Read,
    /// Changes data; every call asks unless the user chose "always allow".
    Write,
    /// Irreversible or open-world; every call asks, "always allow" is never offered (CAT-68).
    High,
}

impl Risk {
    /// Lowercase label (`read`, `write`, `high`).
    pub fn as_str(self) -> &'static str {
        match self {
            Risk::Read => "read",
            Risk::Write => "write",
            Risk::High => "high",
        }
    }
}

impl std::fmt::Display for Risk {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// MCP tool annotations (CAT-66). Each hint is optional: *absent* is distinct from `false`, and
/// they are passed through unchanged.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Annotations {
    /// `readOnlyHint`: never lowers a third-party tool's risk (CAT-61, CAT-63).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only_hint: Option<bool>,
    /// `destructiveHint`: `true` raises the risk to [`Risk::High`] (CAT-62).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destructive_hint: Option<bool>,
    /// `idempotentHint`: never suppresses consent (CAT-67).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotent_hint: Option<bool>,
    /// `openWorldHint`: the tool reaches outside the device's data (network, other parties).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_world_hint: Option<bool>,
}

impl Annotations {
    /// True when every hint is absent.
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }
}

/// Capability ids that are always [`Risk::High`] with `openWorldHint = true`, whatever their
/// source declares (ACI-43, HTTP).
pub const OPEN_WORLD_HIGH_RISK_IDS: [&str; 2] = ["http_request", "browser_script"];
