//! SPEC Appendix B: the runtime's code table agrees with the registry (copied below from
//! SPEC.md Appendix B "Error code registry", so this test runs in a fresh clone) and with the
//! permissions crate's `AgentosCode` and the model client's `ModelError`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use acp_runtime::errors::{CODE_TABLE, RpcError, lookup};
use acp_runtime::model::ModelError;
use permissions::AgentosCode;

/// SPEC Appendix B, every row: (agentosCode, JSON-RPC code or None for tool errors, retryable).
const APPENDIX_B: &[(&str, Option<i32>, bool)] = &[
    ("invalid_params", Some(-32602), false),
    ("unsupported", Some(-32602), false),
    ("auth_required", Some(-32000), false),
    ("not_open", Some(-32040), false),
    ("forbidden", Some(-32041), false),
    ("session_not_found", Some(-32002), false),
    ("task_not_found", Some(-32002), false),
    ("invalid_state", Some(-32042), false),
    ("request_conflict", Some(-32043), false),
    ("session_terminal", Some(-32044), false),
    ("cursor_too_old", Some(-32045), false),
    ("payload_too_large", Some(-32046), false),
    ("busy", Some(-32047), true),
    ("quota_exceeded", Some(-32048), true),
    ("recovery_required", Some(-32049), false),
    ("safe_mode", Some(-32050), false),
    ("model_not_configured", Some(-32051), false),
    ("model_auth_failed", Some(-32051), false),
    ("model_quota_exhausted", Some(-32051), false),
    ("model_bad_request", Some(-32051), false),
    ("model_request_too_large", Some(-32051), false),
    ("model_rate_limited", Some(-32051), true),
    ("model_unavailable", Some(-32051), true),
    ("model_network", Some(-32051), true),
    ("model_timeout", Some(-32051), true),
    ("model_stream_interrupted", Some(-32051), true),
    ("model_tls_failed", Some(-32051), false),
    ("model_protocol", Some(-32051), false),
    ("tool_not_in_catalog", None, false),
    ("tool_denied", None, false),
    ("tool_blocked", None, false),
    ("tool_failed", None, false),
    ("tool_timeout", None, false),
    ("tool_unavailable", None, true),
    ("tool_result_unknown", None, false),
    ("tool_result_too_large", None, false),
    ("queue_timeout", Some(-32051), true),
    ("execution_timeout", Some(-32051), false),
    ("agent_core_failed", Some(-32051), false),
    ("abandoned", Some(-32051), false),
    ("recovery_expired", Some(-32051), false),
    ("store_failed", Some(-32603), false),
    ("internal", Some(-32603), false),
];

#[test]
fn appendix_b_runtime_table_equals_the_registry() {
    assert_eq!(CODE_TABLE, APPENDIX_B);
    for (code, n, _) in CODE_TABLE {
        if let Some(n) = n {
            // AgentOS numbers stay in -32040..-32059 unless they are standard or ACP codes.
            assert!(
                (-32059..=-32040).contains(n) || [-32602, -32603, -32000, -32002].contains(n),
                "{code}"
            );
        }
    }
}

#[test]
fn appendix_b_permissions_codes_agree() {
    for c in [
        AgentosCode::InvalidParams,
        AgentosCode::NotOpen,
        AgentosCode::Forbidden,
        AgentosCode::Busy,
        AgentosCode::QuotaExceeded,
        AgentosCode::ToolNotInCatalog,
        AgentosCode::ToolDenied,
        AgentosCode::ToolBlocked,
        AgentosCode::ToolFailed,
        AgentosCode::ToolUnavailable,
    ] {
        let (n, retryable) = lookup(c.as_str()).unwrap_or_else(|| panic!("{c} missing"));
        assert_eq!(n, c.json_rpc_code(), "{c}");
        assert_eq!(retryable, c.retryable(), "{c}");
        if let Some(text) = c.model_text() {
            assert!(text.starts_with(&format!("[agentos:{c}] ")), "{text}");
        }
    }
}

#[test]
fn appendix_b_model_errors_agree() {
    let all = [
        ModelError::NotConfigured,
        ModelError::AuthFailed { status: 401 },
        ModelError::QuotaExhausted,
        ModelError::BadRequest { status: 400 },
        ModelError::RequestTooLarge,
        ModelError::RateLimited {
            retry_after_seconds: Some(3),
        },
        ModelError::Unavailable { status: 503 },
        ModelError::Network,
        ModelError::Timeout,
        ModelError::StreamInterrupted,
        ModelError::TlsFailed,
        ModelError::Protocol,
    ];
    for e in all {
        let (n, retryable) = lookup(e.agentos_code()).unwrap();
        assert_eq!(n, Some(-32051));
        assert_eq!(retryable, e.retryable(), "{e:?}");
        let wire = RpcError::model(&e).to_json();
        assert_eq!(wire["code"], -32051);
        assert_eq!(wire["data"]["agentosCode"], e.agentos_code());
        assert_eq!(wire["data"]["retryable"], e.retryable());
    }
}

#[test]
fn acp60_wire_shape_message_is_code_colon_text() {
    let e = RpcError::registry(
        "quota_exceeded",
        "another prompt of this app is still running",
    )
    .with_details(serde_json::json!({"reason": "busy"}));
    let v = e.to_json();
    assert_eq!(v["code"], -32048);
    assert_eq!(
        v["message"],
        "quota_exceeded: another prompt of this app is still running"
    );
    assert_eq!(v["data"]["retryable"], true);
    assert_eq!(v["data"]["details"]["reason"], "busy");
}
