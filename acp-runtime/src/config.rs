//! [`RuntimeConfig`]: what the caller (the CLI, a test, the Android shell) hands the runtime.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use capability_model::CapabilitySource;
use permissions::{ConsentSurface, IdentityResolver, PermissionsConfig};

use crate::model::ModelClient;

/// The skills catalog (MCP-60..MCP-68) as the runtime needs it: a section for the system
/// prompt and the built-in `read_skill` tool. Implemented over mcp-adapter's skills catalog.
pub trait SkillsProvider: Send + Sync {
    /// The skills section of the system prompt (≤ 4,000 U16, MCP-65), or `None` when there
    /// are no skills.
    fn prompt_section(&self) -> Option<String>;
    /// The source offering `read_skill` (a built-in, shown only in unscoped sessions).
    fn read_skill(&self) -> Arc<dyn CapabilitySource>;
}

/// Limits (SPEC defaults; Appendix C).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Tool rounds per turn before `max_turn_requests` (ACP-31).
    pub max_tool_rounds: usize,
    /// Tool-result text in ACP events, U16 (ACP-40).
    pub event_result_max: usize,
    /// Tool-result text for the model, U16 (ACP-40).
    pub model_result_max: usize,
    /// Message chunk, U16 (ACP-39).
    pub chunk_max: usize,
    /// One outgoing JSON-RPC line, U16.
    pub line_max: usize,
    /// One incoming line, bytes (longer lines are refused with -32600 and skipped).
    pub incoming_line_max_bytes: usize,
    /// Protocol prompt limit, U16 (ACP-33).
    pub prompt_max: usize,
    /// Turns replayed by `session/load` (ACP-14).
    pub replay_turns: usize,
    /// How long `session/cancel` waits for the running task (ACP-51).
    pub cancel_wait: Duration,
    /// Output cap passed to the model, if any.
    pub max_tokens: Option<u32>,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_tool_rounds: 12,
            event_result_max: 8_192,
            model_result_max: 32_768,
            chunk_max: 8_192,
            line_max: 65_536,
            incoming_line_max_bytes: 4 * 1024 * 1024,
            prompt_max: 200_000,
            replay_turns: 200,
            cancel_wait: Duration::from_secs(12),
            max_tokens: None,
        }
    }
}

/// Everything the runtime needs.
#[derive(Clone)]
pub struct RuntimeConfig {
    /// SQLite db + state; created 0700, files 0600.
    pub data_dir: PathBuf,
    /// The model.
    pub model: Arc<dyn ModelClient>,
    /// The model id in use.
    pub model_name: String,
    /// Models the user's key offers (`availableModels`, ACP-21). Empty with a user-defined
    /// endpoint: then `session/set_model` answers `unsupported`.
    pub available_models: Vec<String>,
    /// Capability sources: MCP plugins, ACI providers, …
    pub sources: Vec<Arc<dyn CapabilitySource>>,
    /// The skills catalog, when there is one.
    pub skills: Option<Arc<dyn SkillsProvider>>,
    /// The consent surface (who the user is: terminal, fixed, scripted).
    pub consent: Arc<dyn ConsentSurface>,
    /// UID → package resolver (binder callers).
    pub resolver: Arc<dyn IdentityResolver>,
    /// The built-in `http_request` capability (http-capability's source), when enabled.
    pub http_request: Option<Arc<dyn CapabilitySource>>,
    /// Permissions configuration (caller policy, quotas, consent queue).
    pub permissions: PermissionsConfig,
    /// Limits.
    pub limits: Limits,
    /// URL policy of per-session MCP servers (SMS-03/SMS-04): strict by default; tests may
    /// admit loopback.
    pub session_mcp_policy: mcp_adapter::session_http::SessionUrlPolicy,
    /// Send `agent_thought_chunk` live by default (clients may also opt in per prompt with
    /// `_meta."org.agentos".includeThoughts`). Load history always includes thoughts.
    pub include_thoughts: bool,
}

impl RuntimeConfig {
    /// A configuration with no sources and SPEC defaults.
    pub fn new(
        data_dir: impl Into<PathBuf>,
        model: Arc<dyn ModelClient>,
        model_name: impl Into<String>,
        consent: Arc<dyn ConsentSurface>,
        resolver: Arc<dyn IdentityResolver>,
    ) -> Self {
        Self {
            data_dir: data_dir.into(),
            model,
            model_name: model_name.into(),
            available_models: Vec::new(),
            sources: Vec::new(),
            skills: None,
            consent,
            resolver,
            http_request: None,
            permissions: PermissionsConfig::default(),
            limits: Limits::default(),
            session_mcp_policy: mcp_adapter::session_http::SessionUrlPolicy::strict(),
            include_thoughts: false,
        }
    }
}

impl std::fmt::Debug for RuntimeConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RuntimeConfig")
            .field("data_dir", &self.data_dir)
            .field("model_name", &self.model_name)
            .field("sources", &self.sources.len())
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}
