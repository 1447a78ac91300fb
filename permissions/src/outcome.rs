//! Decision outcomes and the SPEC error codes they map to (Appendix B, E.4).
//!
//! The permissions crate decides; the runtime builds wire errors. [`AgentosCode`] names the
//! exact `agentosCode` strings of SPEC Appendix B with their JSON-RPC numbers and `retryable`
//! flags, so the mapping lives in one place.

use std::fmt;

/// The `agentosCode`s this crate's decisions map to (SPEC Appendix B). Names and numbers are
/// published and never change (GEN-04).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum AgentosCode {
    /// `invalid_params` (−32602): e.g. a prompt over 16,000 U16, `details.reason = too_large`.
    InvalidParams,
    /// `not_open` (−32040): this class of caller is not admitted (shared UID, unknown package).
    NotOpen,
    /// `forbidden` (−32041): not allowed.
    Forbidden,
    /// `busy` (−32047, retryable): the runtime cannot accept now.
    Busy,
    /// `quota_exceeded` (−32048, retryable): `details.reason` ∈ {`busy`, `hourly`}.
    QuotaExceeded,
    /// `tool_not_in_catalog`: not in the catalog, out of scope, hidden by mode or disabled.
    ToolNotInCatalog,
    /// `tool_denied`: the user declined, or the 60 s passed.
    ToolDenied,
    /// `tool_blocked`: blocked by risk policy or a hook.
    ToolBlocked,
    /// `tool_failed`: the provider returned an error or denied the call (ACI, `provider_denied`).
    ToolFailed,
    /// `tool_unavailable` (retryable): certainly not delivered — e.g. consent queue full (G-15).
    ToolUnavailable,
    /// Channel-level `agentos.acp.authorization_pending`: the prompt is up, retry `open`.
    AuthorizationPending,
    /// Channel-level `agentos.acp.denied`: the user denied (or revoked) this caller.
    Denied,
}

impl AgentosCode {
    /// The exact `agentosCode` string (for channel-level reasons, the reason code).
    pub fn as_str(self) -> &'static str {
        match self {
            AgentosCode::InvalidParams => "invalid_params",
            AgentosCode::NotOpen => "not_open",
            AgentosCode::Forbidden => "forbidden",
            AgentosCode::Busy => "busy",
            AgentosCode::QuotaExceeded => "quota_exceeded",
            AgentosCode::ToolNotInCatalog => "tool_not_in_catalog",
            AgentosCode::ToolDenied => "tool_denied",
            AgentosCode::ToolBlocked => "tool_blocked",
            AgentosCode::ToolFailed => "tool_failed",
            AgentosCode::ToolUnavailable => "tool_unavailable",
            AgentosCode::AuthorizationPending => "authorization_pending",
            AgentosCode::Denied => "denied",
        }
    }

    /// The JSON-RPC error code for request errors; `None` for tool errors (returned to the model
    /// as `isError` results) and channel-level `SecurityException` reasons.
    pub fn json_rpc_code(self) -> Option<i32> {
        match self {
            AgentosCode::InvalidParams => Some(-32602),
            AgentosCode::NotOpen => Some(-32040),
            AgentosCode::Forbidden => Some(-32041),
            AgentosCode::Busy => Some(-32047),
            AgentosCode::QuotaExceeded => Some(-32048),
            _ => None,
        }
    }

    /// Whether doing the same later may succeed without repeating side effects (ACP-62).
    pub fn retryable(self) -> bool {
        matches!(
            self,
            AgentosCode::Busy
                | AgentosCode::QuotaExceeded
                | AgentosCode::ToolUnavailable
                | AgentosCode::AuthorizationPending
        )
    }

    /// The channel-level `SecurityException` message prefix (`agentos.acp.<reason>`), for the
    /// three reasons `open` can throw (SPEC Appendix B, last paragraph).
    pub fn channel_reason(self) -> Option<&'static str> {
        match self {
            AgentosCode::AuthorizationPending => Some("agentos.acp.authorization_pending"),
            AgentosCode::Denied => Some("agentos.acp.denied"),
            AgentosCode::NotOpen => Some("agentos.acp.not_open"),
            _ => None,
        }
    }

    /// For tool errors: the exact text handed to the model, `[agentos:<code>] <sentence>`
    /// (ACP-57, CNS-07). The `tool_not_in_catalog` text is the same whatever the cause (CAT-37).
    pub fn model_text(self) -> Option<&'static str> {
        Some(match self {
            AgentosCode::ToolDenied => "[agentos:tool_denied] The user declined this tool call.",
            AgentosCode::ToolNotInCatalog => {
                "[agentos:tool_not_in_catalog] There is no such tool in this session."
            }
            AgentosCode::ToolBlocked => {
                "[agentos:tool_blocked] This tool call is blocked by policy."
            }
            AgentosCode::ToolUnavailable => {
                "[agentos:tool_unavailable] The tool is unavailable right now; try again later."
            }
            AgentosCode::ToolFailed => "[agentos:tool_failed] The tool provider refused the call.",
            _ => return None,
        })
    }
}

impl fmt::Display for AgentosCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// ACI error codes a provider answers with (SPEC Appendix E.4, table (a)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum AciErrorCode {
    /// `PERMISSION_DENIED` — 403: any of the five layers refused (ACI-20).
    PermissionDenied,
}

impl AciErrorCode {
    /// The numeric code.
    pub fn code(self) -> i32 {
        match self {
            AciErrorCode::PermissionDenied => 403,
        }
    }

    /// The ACI name.
    pub fn name(self) -> &'static str {
        match self {
            AciErrorCode::PermissionDenied => "PERMISSION_DENIED",
        }
    }
}
