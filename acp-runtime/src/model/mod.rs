//! The model the agent loop talks to: one streamed Chat Completions turn at a time.
//!
//! [`ModelClient`] is what the agent loop uses; [`openai::OpenAiClient`] speaks the
//! OpenAI-compatible API over HTTP (SSE streaming, tool calls); [`fake::FakeModelServer`] is a
//! real HTTP server on 127.0.0.1 speaking the same API, driven by directives in the prompt
//! (`docs/fake-model.md`).

use async_trait::async_trait;
use capability_model::CancelToken;
use futures::stream::BoxStream;
use serde_json::Value;

pub mod fake;
pub mod openai;

/// One message of the conversation sent to the model.
#[derive(Debug, Clone, PartialEq)]
pub enum ChatMessage {
    /// The system prompt.
    System(String),
    /// The user's text.
    User(String),
    /// What the model said before, with the tool calls it asked for.
    Assistant {
        /// Text (may be empty).
        text: String,
        /// Tool calls it asked for.
        tool_calls: Vec<ToolCallRequest>,
    },
    /// The result of one tool call, as the model sees it.
    Tool {
        /// The model's id for the call it answers.
        call_id: String,
        /// The result text (already capped and framed by the runtime).
        content: String,
    },
}

/// A tool offered to the model (the catalog's model-facing view).
#[derive(Debug, Clone, PartialEq)]
pub struct ToolSpec {
    /// Model-facing name (`mcp__…`, `aci__…`, `ses__…`, built-ins).
    pub name: String,
    /// Description shown to the model.
    pub description: String,
    /// JSON Schema of the arguments (an object schema).
    pub parameters: Value,
}

/// One tool call the model asked for.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCallRequest {
    /// The model's id for this call (echoed back in [`ChatMessage::Tool`]).
    pub id: String,
    /// Model-facing tool name as the model wrote it.
    pub name: String,
    /// Arguments; the raw JSON text the model produced (it may be malformed).
    pub arguments: String,
}

/// One request: a whole conversation plus the tools on offer.
#[derive(Debug, Clone, PartialEq)]
pub struct ChatRequest {
    /// The model id (`CAPBRIDGE_MODEL`).
    pub model: String,
    /// The conversation.
    pub messages: Vec<ChatMessage>,
    /// Tools on offer (may be empty).
    pub tools: Vec<ToolSpec>,
    /// Output cap, if any.
    pub max_tokens: Option<u32>,
}

/// Why the model stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FinishReason {
    /// Finished its answer (`stop`).
    Stop,
    /// Wants the tool calls it streamed (`tool_calls`).
    ToolCalls,
    /// Hit the output cap (`length`) → stop reason `max_tokens`.
    Length,
    /// Refused (`content_filter`) → stop reason `refusal`.
    ContentFilter,
}

/// One event of a streamed reply, in order.
#[derive(Debug, Clone, PartialEq)]
pub enum ModelEvent {
    /// A piece of the visible answer.
    TextDelta(String),
    /// A piece of reasoning (only when the provider sends it).
    ThoughtDelta(String),
    /// A complete tool call (assembled from the streamed fragments).
    ToolCall(ToolCallRequest),
    /// The end of the reply; always the last event of a successful stream.
    Finished(FinishReason),
}

/// Model failures, one per `model_*` code of SPEC Appendix B. Messages never contain the key,
/// headers, the prompt or the provider's response body.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ModelError {
    /// No endpoint, model or key configured (`model_not_configured`).
    #[error("no model is configured")]
    NotConfigured,
    /// HTTP 401/403 (`model_auth_failed`).
    #[error("the model provider refused the credentials (HTTP {status})")]
    AuthFailed {
        /// HTTP status.
        status: u16,
    },
    /// HTTP 402 (`model_quota_exhausted`).
    #[error("the model account's quota is exhausted")]
    QuotaExhausted,
    /// Other 4xx (`model_bad_request`).
    #[error("the model provider rejected the request (HTTP {status})")]
    BadRequest {
        /// HTTP status.
        status: u16,
    },
    /// HTTP 413 (`model_request_too_large`).
    #[error("the request is too large for the model")]
    RequestTooLarge,
    /// HTTP 429/425 (`model_rate_limited`).
    #[error("the model provider is rate limiting requests")]
    RateLimited {
        /// `Retry-After`, when the provider sent one.
        retry_after_seconds: Option<u64>,
    },
    /// 5xx / 529 (`model_unavailable`).
    #[error("the model provider is unavailable (HTTP {status})")]
    Unavailable {
        /// HTTP status.
        status: u16,
    },
    /// Failure before any response (`model_network`).
    #[error("could not reach the model provider")]
    Network,
    /// HTTP 408 or a connect/read timeout (`model_timeout`).
    #[error("the model provider timed out")]
    Timeout,
    /// The connection was lost mid-body (`model_stream_interrupted`).
    #[error("the model's reply was interrupted")]
    StreamInterrupted,
    /// TLS or certificate failure (`model_tls_failed`).
    #[error("TLS with the model provider failed")]
    TlsFailed,
    /// Unparseable response (`model_protocol`).
    #[error("the model provider sent a reply that could not be read")]
    Protocol,
    /// The turn was cancelled while waiting for the model.
    #[error("cancelled")]
    Cancelled,
}

impl ModelError {
    /// The Appendix B `agentosCode` (`Cancelled` has none: the turn ends with stop reason
    /// `cancelled`, and this returns `"cancelled"`).
    pub fn agentos_code(&self) -> &'static str {
        match self {
            ModelError::NotConfigured => "model_not_configured",
            ModelError::AuthFailed { .. } => "model_auth_failed",
            ModelError::QuotaExhausted => "model_quota_exhausted",
            ModelError::BadRequest { .. } => "model_bad_request",
            ModelError::RequestTooLarge => "model_request_too_large",
            ModelError::RateLimited { .. } => "model_rate_limited",
            ModelError::Unavailable { .. } => "model_unavailable",
            ModelError::Network => "model_network",
            ModelError::Timeout => "model_timeout",
            ModelError::StreamInterrupted => "model_stream_interrupted",
            ModelError::TlsFailed => "model_tls_failed",
            ModelError::Protocol => "model_protocol",
            ModelError::Cancelled => "cancelled",
        }
    }

    /// Whether Appendix B marks it retryable.
    pub fn retryable(&self) -> bool {
        matches!(
            self,
            ModelError::RateLimited { .. }
                | ModelError::Unavailable { .. }
                | ModelError::Network
                | ModelError::Timeout
                | ModelError::StreamInterrupted
        )
    }
}

/// A streamed reply: events in order, ending with [`ModelEvent::Finished`] or an error.
pub type ModelStream = BoxStream<'static, Result<ModelEvent, ModelError>>;

/// What the agent loop calls. Implementations stop promptly (≤ 1 s) once `cancel` fires,
/// ending the stream with [`ModelError::Cancelled`].
#[async_trait]
pub trait ModelClient: Send + Sync + std::fmt::Debug {
    /// Starts one streamed completion.
    async fn stream(
        &self,
        request: ChatRequest,
        cancel: CancelToken,
    ) -> Result<ModelStream, ModelError>;
}

pub use fake::FakeModelServer;
pub use openai::{ApiKey, ModelConfig, OpenAiClient};
