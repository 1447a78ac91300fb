//! The codes decisions map to agree with SPEC Appendix B (ACP-61, GEN-04) and E.4.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use permissions::{AciErrorCode, AgentosCode};

#[test]
fn appendix_b_request_codes() {
    let table = [
        (
            AgentosCode::InvalidParams,
            "invalid_params",
            Some(-32602),
            false,
        ),
        (AgentosCode::NotOpen, "not_open", Some(-32040), false),
        (AgentosCode::Forbidden, "forbidden", Some(-32041), false),
        (AgentosCode::Busy, "busy", Some(-32047), true),
        (
            AgentosCode::QuotaExceeded,
            "quota_exceeded",
            Some(-32048),
            true,
        ),
    ];
    for (code, name, rpc, retry) in table {
        assert_eq!(code.as_str(), name);
        assert_eq!(code.json_rpc_code(), rpc, "{name}");
        assert_eq!(code.retryable(), retry, "{name}");
    }
}

#[test]
fn appendix_b_tool_codes_and_model_texts() {
    let table = [
        (AgentosCode::ToolNotInCatalog, "tool_not_in_catalog", false),
        (AgentosCode::ToolDenied, "tool_denied", false),
        (AgentosCode::ToolBlocked, "tool_blocked", false),
        (AgentosCode::ToolFailed, "tool_failed", false),
        (AgentosCode::ToolUnavailable, "tool_unavailable", true),
    ];
    for (code, name, retry) in table {
        assert_eq!(code.as_str(), name);
        assert_eq!(code.json_rpc_code(), None);
        assert_eq!(code.retryable(), retry, "{name}");
        let text = code.model_text().unwrap();
        assert!(text.starts_with(&format!("[agentos:{name}] ")), "{text}");
    }
    // CNS-07: the exact sentence.
    assert_eq!(
        AgentosCode::ToolDenied.model_text(),
        Some("[agentos:tool_denied] The user declined this tool call.")
    );
}

#[test]
fn channel_level_reasons() {
    assert_eq!(
        AgentosCode::AuthorizationPending.channel_reason(),
        Some("agentos.acp.authorization_pending")
    );
    assert_eq!(
        AgentosCode::Denied.channel_reason(),
        Some("agentos.acp.denied")
    );
    assert_eq!(
        AgentosCode::NotOpen.channel_reason(),
        Some("agentos.acp.not_open")
    );
    assert!(AgentosCode::AuthorizationPending.retryable());
    assert!(!AgentosCode::Denied.retryable());
}

#[test]
fn aci_permission_denied_is_403() {
    assert_eq!(AciErrorCode::PermissionDenied.code(), 403);
    assert_eq!(AciErrorCode::PermissionDenied.name(), "PERMISSION_DENIED");
}
