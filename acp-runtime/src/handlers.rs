//! ACP method handlers (ACP-02): initialize, sessions, prompt, cancel, modes, models.

use std::sync::Arc;

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    AgentCapabilities, ContentBlock, EmbeddedResourceResource, ForkSessionResponse, Implementation,
    InitializeResponse, ListSessionsResponse, LoadSessionResponse, McpCapabilities,
    NewSessionRequest, NewSessionResponse, PromptCapabilities, PromptRequest, PromptResponse,
    ResumeSessionResponse, SessionCapabilities, SessionCloseCapabilities, SessionConfigOption,
    SessionConfigOptionCategory, SessionConfigSelectOption, SessionDeleteCapabilities,
    SessionForkCapabilities, SessionInfo, SessionListCapabilities, SessionModeState,
    SessionResumeCapabilities, SetSessionConfigOptionRequest, SetSessionConfigOptionResponse,
};
use capability_model::{SessionMode, ToolScope};
use permissions::Principal;
use serde_json::{Map, Value, json};

use mcp_adapter::session_http::{BatchError, SessionHttpConfig, SessionMcpServers, parse_batch};

use crate::connection::{Peer, declared};
use crate::errors::RpcError;
use crate::ids;
use crate::runtime::{ActiveTask, LiveSession, Runtime, SessionSettings, lock, may_see, owner_key};
use crate::store::{SessionRow, TaskState, now_ms};
use crate::text::u16_len;

const METHODS: &[&str] = &[
    "initialize",
    "session/new",
    "session/load",
    "session/resume",
    "session/fork",
    "session/list",
    "session/delete",
    "session/close",
    "session/prompt",
    "session/set_mode",
    "session/set_model",
    "session/set_config_option",
];

/// Whether `method` is a request this agent handles.
pub(crate) fn is_known(method: &str) -> bool {
    METHODS.contains(&method)
}

fn org_meta(params: &Value) -> Option<&Map<String, Value>> {
    params
        .get("_meta")
        .and_then(|m| m.get("org.agentos"))
        .and_then(Value::as_object)
}

fn session_id_param(params: &Value) -> Result<String, RpcError> {
    match params.get("sessionId") {
        Some(Value::String(s)) => Ok(s.clone()),
        // A missing or non-string id is answered like an unknown one (ACP-10/12).
        _ => Err(RpcError::session_not_found()),
    }
}

fn agentos_meta(inner: Value) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("org.agentos".into(), inner);
    m
}

fn to_value<T: serde::Serialize>(v: &T) -> Result<Value, RpcError> {
    serde_json::to_value(v).map_err(|_| RpcError::internal())
}

/// The display name of a mode.
fn mode_name(m: SessionMode) -> &'static str {
    match m {
        SessionMode::Default => "Default",
        SessionMode::ReadOnly => "Read only",
        SessionMode::Chat => "Chat",
    }
}

/// What a mode does (CAT-51, CAT-52), for the mode selector.
fn mode_description(m: SessionMode) -> &'static str {
    match m {
        SessionMode::Default => {
            "The tools of the session's scope; calls still go through consent and policy"
        }
        SessionMode::ReadOnly => "Only tools whose effective risk is read",
        SessionMode::Chat => "No tools: the model answers in text only",
    }
}

fn mode_state(mode: SessionMode) -> SessionModeState {
    use agent_client_protocol::v1::schema::SessionMode as AcpMode;
    SessionModeState::new(
        mode.wire_id(),
        SessionMode::ALL
            .iter()
            .map(|&m| AcpMode::new(m.wire_id(), mode_name(m)).description(mode_description(m)))
            .collect(),
    )
}

/// The id of the model selector (ACP-21).
const MODEL_OPTION: &str = "model";
/// The id of the mode selector (CAT-50).
const MODE_OPTION: &str = "mode";

/// The session config options (ACP-21): a `model` select over the models of the user's key
/// (only the current model when the endpoint is user-defined and the list is empty) and a
/// `mode` select over the three modes.
fn config_options(rt: &Runtime, settings: &SessionSettings) -> Vec<SessionConfigOption> {
    let model_option = |id: &str| {
        let name = if id.is_empty() {
            "No model configured"
        } else {
            id
        };
        SessionConfigSelectOption::new(id.to_owned(), name)
    };
    let mut models: Vec<SessionConfigSelectOption> = rt
        .cfg
        .available_models
        .iter()
        .map(|m| model_option(m))
        .collect();
    // The current value is always one of the choices, even when the stored model has since
    // left the list (a session created under another configuration).
    if !rt.cfg.available_models.contains(&settings.model) {
        models.insert(0, model_option(&settings.model));
    }
    let model_description = if rt.cfg.available_models.is_empty() {
        "The model of the configured endpoint; it cannot be changed here"
    } else {
        "The model used from the next task on"
    };
    let modes: Vec<SessionConfigSelectOption> = SessionMode::ALL
        .iter()
        .map(|&m| {
            SessionConfigSelectOption::new(m.wire_id(), mode_name(m))
                .description(mode_description(m))
        })
        .collect();
    vec![
        SessionConfigOption::select(MODEL_OPTION, "Model", settings.model.clone(), models)
            .description(model_description)
            .category(SessionConfigOptionCategory::Model),
        SessionConfigOption::select(MODE_OPTION, "Mode", settings.mode.wire_id(), modes)
            .description("Which tools the model may see, from the next task on")
            .category(SessionConfigOptionCategory::Mode),
    ]
}

/// Handles a request; the result becomes the response.
pub(crate) async fn request(
    rt: &Arc<Runtime>,
    peer: &Arc<Peer>,
    method: &str,
    params: Value,
) -> Result<Value, RpcError> {
    match method {
        "initialize" => initialize(rt, peer, &params),
        "session/new" => new_session(rt, peer, &params).await,
        "session/load" => load_session(rt, peer, &params, true).await,
        "session/resume" => load_session(rt, peer, &params, false).await,
        "session/fork" => fork_session(rt, peer, &params).await,
        "session/list" => list_sessions(rt, peer),
        "session/delete" => delete_session(rt, peer, &params),
        "session/close" => close_session(rt, peer, &params),
        "session/set_mode" => set_mode(rt, peer, &params),
        "session/set_model" => set_model(rt, peer, &params),
        "session/set_config_option" => set_config_option(rt, peer, &params),
        "session/prompt" => prompt(rt, peer, params).await,
        _ => Err(RpcError::method_not_found()),
    }
}

/// Handles a notification (`session/cancel`); unknown notifications are ignored.
pub(crate) fn notification(rt: &Arc<Runtime>, peer: &Arc<Peer>, method: &str, params: Value) {
    if method == "session/cancel"
        && let Ok(id) = session_id_param(&params)
        && let Ok(session) = rt.session_for(&peer.caller, &id)
    {
        tracing::info!(caller = peer.caller.log_name(), session = %session.id, "cancel");
        session.cancel_all();
    }
}

fn initialize(rt: &Arc<Runtime>, peer: &Arc<Peer>, params: &Value) -> Result<Value, RpcError> {
    if let Some(ext) = org_meta(params)
        .and_then(|m| m.get("extensions"))
        .and_then(Value::as_object)
    {
        let mut d = lock(&peer.declared);
        d.extend(ext.keys().cloned());
    }
    let _ = rt;
    let caps = AgentCapabilities::new()
        .load_session(true)
        .prompt_capabilities(
            PromptCapabilities::new()
                .image(false)
                .audio(false)
                .embedded_context(true),
        )
        // Per-session Streamable HTTP MCP servers (SMS); no SSE (ACP-03).
        .mcp_capabilities(McpCapabilities::new().http(true).sse(false))
        .session_capabilities(
            SessionCapabilities::new()
                .list(SessionListCapabilities::new())
                .delete(SessionDeleteCapabilities::new())
                .resume(SessionResumeCapabilities::new())
                .close(SessionCloseCapabilities::new())
                .fork(SessionForkCapabilities::new()),
        );
    let meta = agentos_meta(json!({
        "profile": 1,
        "runtime": env!("CARGO_PKG_VERSION"),
        "securityLevel": "best_effort",
        "extensions": {
            "sessionAutoSelect": {"version": 1},
            "toolScope": {"version": 1},
            "sessionSetup": {"version": 1},
        },
    }));
    let resp = InitializeResponse::new(ProtocolVersion::V1)
        .agent_capabilities(caps)
        .auth_methods(vec![])
        .agent_info(Implementation::new("capbridge", env!("CARGO_PKG_VERSION")))
        .meta(meta);
    to_value(&resp)
}

fn scope_from(params: &Value) -> Result<Option<ToolScope>, RpcError> {
    match org_meta(params).and_then(|m| m.get("toolScope")) {
        None => Ok(None),
        Some(v) => ToolScope::from_json(Some(v))
            .map(Some)
            .map_err(|e| RpcError::invalid_params(e.to_string())),
    }
}

/// The `mcpServers` batch (SMS-01..SMS-03): validated as a whole first (any failure is
/// `invalid_params` naming the rule and index, never a value), then connected; a server that
/// cannot be reached does not fail the request (SMS-07).
async fn session_servers(
    rt: &Arc<Runtime>,
    params: &Value,
) -> Result<Option<Arc<SessionMcpServers>>, RpcError> {
    let refuse = |e: BatchError| {
        RpcError::invalid_params(format!("invalid mcpServers: {e}"))
            .with_details(json!({"reason": e.rule.code(), "index": e.index}))
    };
    let policy = rt.cfg.session_mcp_policy;
    let servers = parse_batch(params.get("mcpServers"), policy).map_err(refuse)?;
    if servers.is_empty() {
        return Ok(None);
    }
    let config = SessionHttpConfig {
        policy,
        ..SessionHttpConfig::default()
    };
    let set = SessionMcpServers::start(servers, config)
        .await
        .map_err(refuse)?;
    for st in set.statuses() {
        tracing::info!(server = %st.name, connected = st.connected, tools = st.tool_count, "session MCP server");
    }
    Ok(Some(Arc::new(set)))
}

async fn new_session(
    rt: &Arc<Runtime>,
    peer: &Arc<Peer>,
    params: &Value,
) -> Result<Value, RpcError> {
    let req: NewSessionRequest = serde_json::from_value(params.clone())
        .map_err(|_| RpcError::invalid_params("session/new needs cwd and mcpServers"))?;
    let scope = scope_from(params)?.unwrap_or(ToolScope::UNRESTRICTED);
    let owner = owner_key(&peer.caller);
    // sessionAutoSelect (CAT-43), only when negotiated (ACP-05).
    if let Some(auto) = org_meta(params).and_then(|m| m.get("autoSelect")) {
        if !declared(peer, "sessionAutoSelect") {
            return Err(RpcError::invalid_params(
                "autoSelect needs the sessionAutoSelect extension declared in initialize",
            ));
        }
        if auto.as_bool() == Some(true) {
            let rows = rt
                .store
                .sessions(Some(&owner))
                .map_err(|_| RpcError::store_failed())?;
            if let Some(row) = rows
                .into_iter()
                .find(|r| ToolScope::from_stored(&r.scope) == scope)
            {
                let settings = SessionSettings {
                    mode: SessionMode::from_stored(&row.mode),
                    model: row.model.clone(),
                };
                let resp = NewSessionResponse::new(row.id.clone())
                    .modes(mode_state(settings.mode))
                    .config_options(config_options(rt, &settings));
                return to_value(&resp);
            }
        }
    }
    let servers = session_servers(rt, params).await?;
    let id = ids::new_session_id();
    let row = SessionRow {
        id: id.clone(),
        owner,
        cwd: req.cwd.display().to_string(),
        scope: scope.to_stored(),
        mode: SessionMode::Default.wire_id().to_owned(),
        model: rt.cfg.model_name.clone(),
        title: None,
        updated_ms: now_ms(),
    };
    rt.store
        .insert_session(&row)
        .map_err(|_| RpcError::store_failed())?;
    let live = Arc::new(LiveSession::from_row(&row));
    live.set_servers(servers);
    let settings = lock(&live.settings).clone();
    lock(&rt.sessions).insert(id.clone(), live);
    tracing::info!(caller = peer.caller.log_name(), session = %id, scoped = !scope.is_unrestricted(), "session created");
    let resp = NewSessionResponse::new(id)
        .modes(mode_state(settings.mode))
        .config_options(config_options(rt, &settings));
    to_value(&resp)
}

async fn load_session(
    rt: &Arc<Runtime>,
    peer: &Arc<Peer>,
    params: &Value,
    replay: bool,
) -> Result<Value, RpcError> {
    let id = session_id_param(params)?;
    let session = rt.session_for(&peer.caller, &id)?;
    // The servers passed now replace the previous set (ACP-14, SMS-06).
    let servers = session_servers(rt, params).await?;
    session.set_servers(servers);
    if replay {
        let events = rt
            .store
            .events(&id, rt.cfg.limits.replay_turns)
            .map_err(|_| RpcError::store_failed())?;
        for update in events {
            peer.notify("session/update", json!({"sessionId": id, "update": update}));
        }
    }
    let settings = lock(&session.settings).clone();
    let mut meta = Map::new();
    if let Some(t) = session.active_task_id() {
        meta.insert("activeTaskId".into(), Value::from(t));
    }
    meta.insert("model".into(), Value::from(settings.model.clone()));
    let options = config_options(rt, &settings);
    if replay {
        let resp = LoadSessionResponse::new()
            .modes(mode_state(settings.mode))
            .config_options(options)
            .meta(agentos_meta(Value::Object(meta)));
        to_value(&resp)
    } else {
        let resp = ResumeSessionResponse::new()
            .modes(mode_state(settings.mode))
            .config_options(options)
            .meta(agentos_meta(Value::Object(meta)));
        to_value(&resp)
    }
}

async fn fork_session(
    rt: &Arc<Runtime>,
    peer: &Arc<Peer>,
    params: &Value,
) -> Result<Value, RpcError> {
    let id = session_id_param(params)?;
    let old = rt.session_for(&peer.caller, &id)?;
    let requested = scope_from(params)?;
    let servers = session_servers(rt, params).await?;
    // CAT-36: narrowing only; without a scope the old one is inherited.
    let scope = old.scope.fork(requested.as_ref());
    let new_id = ids::new_session_id();
    let settings = lock(&old.settings).clone();
    let row = SessionRow {
        id: new_id.clone(),
        owner: owner_key(&peer.caller),
        cwd: params
            .get("cwd")
            .and_then(Value::as_str)
            .unwrap_or(&old.cwd)
            .to_owned(),
        scope: scope.to_stored(),
        mode: settings.mode.wire_id().to_owned(),
        model: settings.model.clone(),
        title: None,
        updated_ms: now_ms(),
    };
    rt.store
        .insert_session(&row)
        .map_err(|_| RpcError::store_failed())?;
    rt.store
        .copy_log(&id, &new_id)
        .map_err(|_| RpcError::store_failed())?;
    let live = Arc::new(LiveSession::from_row(&row));
    live.set_servers(servers);
    lock(&rt.sessions).insert(new_id.clone(), live);
    let resp = ForkSessionResponse::new(new_id)
        .modes(mode_state(settings.mode))
        .config_options(config_options(rt, &settings));
    to_value(&resp)
}

fn list_sessions(rt: &Arc<Runtime>, peer: &Arc<Peer>) -> Result<Value, RpcError> {
    let owner = match peer.caller {
        Principal::SelfUi => None,
        _ => Some(owner_key(&peer.caller)),
    };
    let rows = rt
        .store
        .sessions(owner.as_deref())
        .map_err(|_| RpcError::store_failed())?;
    let infos = rows
        .into_iter()
        .filter(|r| may_see(&peer.caller, &r.owner))
        .map(|r| {
            SessionInfo::new(r.id, r.cwd)
                .title(r.title)
                .updated_at(rfc3339(r.updated_ms))
        })
        .collect();
    to_value(&ListSessionsResponse::new(infos))
}

fn delete_session(rt: &Arc<Runtime>, peer: &Arc<Peer>, params: &Value) -> Result<Value, RpcError> {
    let id = session_id_param(params)?;
    let session = rt.session_for(&peer.caller, &id)?;
    session.cancel_all();
    session.set_servers(None);
    lock(&rt.sessions).remove(&id);
    rt.store
        .delete_session(&id)
        .map_err(|_| RpcError::store_failed())?;
    rt.perms.end_session(&id);
    tracing::info!(caller = peer.caller.log_name(), session = %id, "session deleted");
    Ok(json!({}))
}

fn close_session(rt: &Arc<Runtime>, peer: &Arc<Peer>, params: &Value) -> Result<Value, RpcError> {
    let id = session_id_param(params)?;
    let session = rt.session_for(&peer.caller, &id)?;
    // Free memory, keep the session and its history (ACP-19). A running turn keeps its
    // own reference and finishes.
    if session.active_task_id().is_none() {
        session.set_servers(None);
        lock(&rt.sessions).remove(&id);
    }
    Ok(json!({}))
}

fn set_mode(rt: &Arc<Runtime>, peer: &Arc<Peer>, params: &Value) -> Result<Value, RpcError> {
    let id = session_id_param(params)?;
    let session = rt.session_for(&peer.caller, &id)?;
    apply_mode(rt, &session, params.get("modeId").and_then(Value::as_str))?;
    Ok(json!({}))
}

/// Stores a new mode (CAT-50, CAT-55): the running task keeps the mode it started with.
fn apply_mode(rt: &Runtime, session: &LiveSession, wire: Option<&str>) -> Result<(), RpcError> {
    let mode = wire
        .and_then(|m| SessionMode::from_wire(m).ok())
        .ok_or_else(|| RpcError::invalid_params("unknown session mode"))?;
    rt.store
        .update_session(&session.id, Some(mode.wire_id()), None, None)
        .map_err(|_| RpcError::store_failed())?;
    lock(&session.settings).mode = mode;
    tracing::info!(session = %session.id, mode = mode.wire_id(), "mode changed");
    Ok(())
}

fn set_model(rt: &Arc<Runtime>, peer: &Arc<Peer>, params: &Value) -> Result<Value, RpcError> {
    let id = session_id_param(params)?;
    let session = rt.session_for(&peer.caller, &id)?;
    apply_model(rt, &session, params.get("modelId").and_then(Value::as_str))?;
    Ok(json!({}))
}

/// Stores a new model (ACP-21): `unsupported` with a user-defined endpoint (no list),
/// `invalid_params` for an id not on the list; the change applies from the next task.
fn apply_model(rt: &Runtime, session: &LiveSession, id: Option<&str>) -> Result<(), RpcError> {
    if rt.cfg.available_models.is_empty() {
        return Err(RpcError::registry(
            "unsupported",
            "the model cannot be chosen with this endpoint",
        ));
    }
    let model = id
        .filter(|m| rt.cfg.available_models.iter().any(|a| a == m))
        .ok_or_else(|| RpcError::invalid_params("unknown model"))?
        .to_owned();
    rt.store
        .update_session(&session.id, None, Some(&model), None)
        .map_err(|_| RpcError::store_failed())?;
    tracing::info!(session = %session.id, model = %model, "model changed");
    lock(&session.settings).model = model;
    Ok(())
}

/// `session/set_config_option` (ACP-21): `mode` and `model` selects with the semantics of
/// `set_mode` / `set_model`; answers with every option and its current value.
fn set_config_option(
    rt: &Arc<Runtime>,
    peer: &Arc<Peer>,
    params: &Value,
) -> Result<Value, RpcError> {
    let id = session_id_param(params)?;
    let session = rt.session_for(&peer.caller, &id)?;
    let req: SetSessionConfigOptionRequest = serde_json::from_value(params.clone())
        .map_err(|_| RpcError::invalid_params("set_config_option needs configId and value"))?;
    let value = req.value.as_value_id().map(|v| &*v.0);
    match &*req.config_id.0 {
        MODE_OPTION => apply_mode(rt, &session, value)?,
        MODEL_OPTION => apply_model(rt, &session, value)?,
        _ => return Err(RpcError::invalid_params("unknown config option")),
    }
    let settings = lock(&session.settings).clone();
    to_value(&SetSessionConfigOptionResponse::new(config_options(
        rt, &settings,
    )))
}

/// The prompt's text (ACP-32), or why it is refused.
fn prompt_text(blocks: &[ContentBlock]) -> Result<String, RpcError> {
    let unsupported = || {
        RpcError::registry(
            "unsupported",
            "this content type is not supported in prompts",
        )
    };
    let mut parts: Vec<String> = Vec::new();
    for b in blocks {
        match b {
            ContentBlock::Text(t) => parts.push(t.text.clone()),
            ContentBlock::ResourceLink(l) => parts.push(format!("[resource] {} {}", l.name, l.uri)),
            ContentBlock::Resource(r) => match &r.resource {
                EmbeddedResourceResource::TextResourceContents(t) => {
                    parts.push(format!("[resource {}]\n{}", t.uri, t.text))
                }
                _ => return Err(unsupported()),
            },
            _ => return Err(unsupported()),
        }
    }
    Ok(parts.join("\n"))
}

async fn prompt(rt: &Arc<Runtime>, peer: &Arc<Peer>, params: Value) -> Result<Value, RpcError> {
    let id = session_id_param(&params)?;
    let session = rt.session_for(&peer.caller, &id)?;
    let req: PromptRequest = serde_json::from_value(params.clone())
        .map_err(|_| RpcError::invalid_params("prompt must be an array of content blocks"))?;
    if req.prompt.is_empty() {
        return Err(RpcError::invalid_params("the prompt is empty"));
    }
    let text = prompt_text(&req.prompt)?;
    if text.trim().is_empty() {
        return Err(RpcError::invalid_params("the prompt is empty"));
    }
    // QTA-03 (third parties, checked first), QTA-02, QTA-04.
    let slot = rt.perms.admit_prompt(&peer.caller, &text).map_err(|r| {
        let mut details = json!({"reason": r.reason()});
        match r {
            permissions::QuotaRefusal::TooLarge { limit } => details["limit"] = json!(limit),
            permissions::QuotaRefusal::Hourly {
                retry_after_secs,
                limit,
            } => {
                details["retryAfterSeconds"] = json!(retry_after_secs);
                details["limit"] = json!(limit);
            }
            permissions::QuotaRefusal::Busy => {}
        }
        let text = match r {
            permissions::QuotaRefusal::TooLarge { .. } => "the prompt is too large",
            permissions::QuotaRefusal::Busy => "another prompt of this app is still running",
            permissions::QuotaRefusal::Hourly { .. } => "the hourly prompt quota is used up",
        };
        RpcError::registry(r.code().as_str(), text).with_details(details)
    })?;
    if u16_len(&text) > rt.cfg.limits.prompt_max {
        rt.perms.prompt_finished(slot);
        return Err(RpcError::registry(
            "payload_too_large",
            "the prompt is over the protocol limit",
        )
        .with_details(json!({"limit": rt.cfg.limits.prompt_max})));
    }
    let include_thoughts = rt.cfg.include_thoughts
        || org_meta(&params)
            .and_then(|m| m.get("includeThoughts"))
            .and_then(Value::as_bool)
            .unwrap_or(false);
    let task_id = ids::new_task_id();
    if rt
        .store
        .insert_task(&task_id, &id, TaskState::Queued)
        .is_err()
    {
        rt.perms.prompt_finished(slot);
        return Err(RpcError::store_failed());
    }
    let cancel = capability_model::CancelToken::new();
    lock(&session.active).push(ActiveTask {
        id: task_id.clone(),
        owner: owner_key(&peer.caller),
        cancel: cancel.clone(),
    });
    let (done_tx, done_rx) = tokio::sync::oneshot::channel();
    let job = crate::turn::Job {
        rt: Arc::clone(rt),
        session: Arc::clone(&session),
        peer: Arc::clone(peer),
        task_id: task_id.clone(),
        cancel,
        text,
        include_thoughts,
    };
    let rt2 = Arc::clone(rt);
    // The task runs on its own: a disconnect never cancels it (ACP-53).
    let handle = tokio::spawn(async move {
        let outcome = job.run().await;
        rt2.perms.prompt_finished(slot);
        let _ = done_tx.send(outcome);
    });
    rt.track(handle);
    let outcome = done_rx.await.map_err(|_| RpcError::internal())?;
    let stop = outcome.map_err(|e| e.with_task(&task_id))?;
    let resp = PromptResponse::new(stop).meta(agentos_meta(json!({"taskId": task_id})));
    to_value(&resp)
}

/// `updatedAt` as RFC 3339 UTC.
fn rfc3339(ms: i64) -> String {
    let secs = ms.div_euclid(1000);
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = if m <= 2 { y + 1 } else { y };
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        (rem % 3600) / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn rfc3339_formats_known_instants() {
        assert_eq!(super::rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(super::rfc3339(1_709_251_199_000), "2024-02-29T23:59:59Z");
    }
}
