//! Errors: the wire errors of SPEC ACP-60..ACP-63 and Appendix B, built in one place, and the
//! crate's own [`RuntimeError`].
//!
//! Wire shape (ACP-60): `{"code", "message": "<agentosCode>: <text>", "data": {"agentosCode",
//! "retryable", "sessionId"?, "taskId"?, "details"?}}`. Texts are fixed sentences: they never
//! contain a value the caller supplied (ACP-63).

use std::borrow::Cow;

use serde_json::{Map, Value, json};

use crate::model::ModelError;

/// Every `agentosCode` of SPEC Appendix B with its JSON-RPC code (`None` for tool errors, which
/// never fail a request) and `retryable` flag. Codes may only be appended (GEN-04).
pub const CODE_TABLE: &[(&str, Option<i32>, bool)] = &[
    // Request errors.
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
    // Model errors (all -32051).
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
    // Tool errors (text for the model, never a request error).
    ("tool_not_in_catalog", None, false),
    ("tool_denied", None, false),
    ("tool_blocked", None, false),
    ("tool_failed", None, false),
    ("tool_timeout", None, false),
    ("tool_unavailable", None, true),
    ("tool_result_unknown", None, false),
    ("tool_result_too_large", None, false),
    // Task errors.
    ("queue_timeout", Some(-32051), true),
    ("execution_timeout", Some(-32051), false),
    ("agent_core_failed", Some(-32051), false),
    ("abandoned", Some(-32051), false),
    ("recovery_expired", Some(-32051), false),
    ("store_failed", Some(-32603), false),
    ("internal", Some(-32603), false),
];

/// Looks a code up in [`CODE_TABLE`].
pub fn lookup(agentos_code: &str) -> Option<(Option<i32>, bool)> {
    CODE_TABLE
        .iter()
        .find(|(c, _, _)| *c == agentos_code)
        .map(|&(_, n, r)| (n, r))
}

/// JSON-RPC parse error (passed through as-is, ACP-61).
pub const PARSE_ERROR: i32 = -32700;
/// JSON-RPC invalid request.
pub const INVALID_REQUEST: i32 = -32600;
/// JSON-RPC method not found.
pub const METHOD_NOT_FOUND: i32 = -32601;

/// Optional members of `data`.
#[derive(Debug, Clone, PartialEq, Default)]
struct ErrorExtra {
    /// Reason codes, limits — never caller values.
    details: Option<Value>,
    session_id: Option<String>,
    task_id: Option<String>,
}

/// One wire error.
#[derive(Debug, Clone, PartialEq)]
pub struct RpcError {
    /// JSON-RPC code.
    pub code: i32,
    /// Appendix B `agentosCode`.
    pub agentos_code: &'static str,
    /// Appendix B `retryable`.
    pub retryable: bool,
    /// One fixed sentence (never a caller value).
    pub text: Cow<'static, str>,
    /// `data.details` / `sessionId` / `taskId`, when any (boxed: errors stay small).
    extra: Option<Box<ErrorExtra>>,
}

impl RpcError {
    /// An error from the registry: code and `retryable` come from [`CODE_TABLE`].
    pub fn registry(agentos_code: &'static str, text: impl Into<Cow<'static, str>>) -> Self {
        let (code, retryable) = lookup(agentos_code).unwrap_or((Some(-32603), false));
        Self {
            code: code.unwrap_or(-32051),
            agentos_code,
            retryable,
            text: text.into(),
            extra: None,
        }
    }

    /// Adds `data.details`.
    pub fn with_details(mut self, details: Value) -> Self {
        self.extra.get_or_insert_with(Default::default).details = Some(details);
        self
    }

    /// `data.details`, if any.
    pub fn details(&self) -> Option<&Value> {
        self.extra.as_ref().and_then(|e| e.details.as_ref())
    }

    /// Adds `data.taskId`.
    pub fn with_task(mut self, task_id: &str) -> Self {
        self.extra.get_or_insert_with(Default::default).task_id = Some(task_id.to_owned());
        self
    }

    /// `invalid_params` with a fixed rule sentence.
    pub fn invalid_params(text: impl Into<Cow<'static, str>>) -> Self {
        Self::registry("invalid_params", text)
    }

    /// `session_not_found`: byte-identical for foreign, deleted, unknown and malformed ids
    /// (ACP-12) — hence no `sessionId` in `data`.
    pub fn session_not_found() -> Self {
        Self::registry("session_not_found", "no such session")
    }

    /// `internal`.
    pub fn internal() -> Self {
        Self::registry("internal", "internal error")
    }

    /// `store_failed`.
    pub fn store_failed() -> Self {
        Self::registry("store_failed", "the session store failed")
    }

    /// `-32700`.
    pub fn parse_error() -> Self {
        Self {
            code: PARSE_ERROR,
            agentos_code: "invalid_params",
            retryable: false,
            text: Cow::Borrowed("the message is not valid JSON"),
            extra: None,
        }
    }

    /// `-32600`.
    pub fn invalid_request() -> Self {
        Self {
            code: INVALID_REQUEST,
            agentos_code: "invalid_params",
            retryable: false,
            text: Cow::Borrowed("the message is not a valid JSON-RPC 2.0 request"),
            extra: None,
        }
    }

    /// `-32601` (the SDK maps it to `UNSUPPORTED`, ACP-64).
    pub fn method_not_found() -> Self {
        Self {
            code: METHOD_NOT_FOUND,
            agentos_code: "unsupported",
            retryable: false,
            text: Cow::Borrowed("the method is not supported"),
            extra: None,
        }
    }

    /// `-32051` for a model failure (Appendix B model errors; `retryAfterSeconds` when sent).
    pub fn model(e: &ModelError) -> Self {
        let code = e.agentos_code();
        let mut err = Self::registry(code, model_text(e));
        err.code = -32051;
        err.retryable = e.retryable();
        if let ModelError::RateLimited {
            retry_after_seconds: Some(s),
        } = e
        {
            err = err.with_details(json!({ "retryAfterSeconds": s }));
        }
        err
    }

    /// The JSON-RPC `error` object.
    pub fn to_json(&self) -> Value {
        let mut data = Map::new();
        data.insert("agentosCode".into(), Value::from(self.agentos_code));
        data.insert("retryable".into(), Value::from(self.retryable));
        if let Some(extra) = &self.extra {
            if let Some(s) = &extra.session_id {
                data.insert("sessionId".into(), Value::from(s.as_str()));
            }
            if let Some(t) = &extra.task_id {
                data.insert("taskId".into(), Value::from(t.as_str()));
            }
            if let Some(d) = &extra.details {
                data.insert("details".into(), d.clone());
            }
        }
        json!({
            "code": self.code,
            "message": format!("{}: {}", self.agentos_code, self.text),
            "data": Value::Object(data),
        })
    }
}

fn model_text(e: &ModelError) -> &'static str {
    match e {
        ModelError::NotConfigured => "no model is configured",
        ModelError::AuthFailed { .. } => "the model provider refused the credentials",
        ModelError::QuotaExhausted => "the model account's quota is exhausted",
        ModelError::BadRequest { .. } => "the model provider rejected the request",
        ModelError::RequestTooLarge => "the request is too large for the model",
        ModelError::RateLimited { .. } => "the model provider is rate limiting requests",
        ModelError::Unavailable { .. } => "the model provider is unavailable",
        ModelError::Network => "could not reach the model provider",
        ModelError::Timeout => "the model provider timed out",
        ModelError::StreamInterrupted => "the model's reply was interrupted",
        ModelError::TlsFailed => "TLS with the model provider failed",
        ModelError::Protocol => "the model provider sent a reply that could not be read",
        ModelError::Cancelled => "cancelled",
    }
}

/// Errors of the runtime's own operations (start, serve, storage).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RuntimeError {
    /// The data directory or a transport failed.
    #[error("i/o error: {0}")]
    Io(#[from] std::io::Error),
    /// The session store failed.
    #[error("session store error: {0}")]
    Store(#[from] rusqlite::Error),
    /// The permissions store failed.
    #[error("permissions store error: {0}")]
    Permissions(#[from] permissions::StoreError),
    /// The binder transport failed.
    #[error("binder transport error: {0}")]
    Binder(String),
    /// The runtime is shutting down.
    #[error("the runtime is shutting down")]
    ShuttingDown,
}
