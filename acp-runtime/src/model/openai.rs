//! The OpenAI-compatible Chat Completions client (`POST {base}/chat/completions`, `stream:
//! true`, SSE), mapping every failure to one [`ModelError`] per SPEC Appendix B.
//!
//! - Endpoint, model and key come from [`ModelConfig`] (`CAPBRIDGE_MODEL_URL`,
//!   `CAPBRIDGE_MODEL`, `CAPBRIDGE_MODEL_KEY`). The key goes only into the `Authorization`
//!   header: [`ApiKey`]'s `Debug` is redacted and no [`ModelError`] carries text.
//! - Streamed `tool_calls` fragments are assembled by `index` into complete
//!   [`ToolCallRequest`]s, emitted (in index order) just before [`ModelEvent::Finished`].
//! - `reasoning_content` / `reasoning` deltas become [`ModelEvent::ThoughtDelta`].
//! - Bounded: one SSE line ≤ [`MAX_SSE_LINE`] bytes, a whole reply ≤ [`MAX_REPLY_BYTES`];
//!   beyond either, or on anything that is not SSE / JSON, the stream ends with
//!   [`ModelError::Protocol`].
//! - A provider that answers `application/json` (ignoring `stream: true`) is read as one
//!   non-streamed completion.
//! - The [`CancelToken`] is raced against every network wait: once it fires, the request (or
//!   the body read) is dropped, which closes the connection, and the stream ends with
//!   [`ModelError::Cancelled`].

use std::collections::{BTreeMap, VecDeque};
use std::fmt;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use capability_model::CancelToken;
use futures::StreamExt;
use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, HeaderMap, HeaderValue, RETRY_AFTER};
use serde_json::{Map, Value, json};

use super::{
    ChatMessage, ChatRequest, FinishReason, ModelClient, ModelError, ModelEvent, ModelStream,
    ToolCallRequest,
};

/// Environment variable with the API base URL (e.g. `https://api.openai.com/v1`).
pub const ENV_MODEL_URL: &str = "CAPBRIDGE_MODEL_URL";
/// Environment variable with the model id.
pub const ENV_MODEL: &str = "CAPBRIDGE_MODEL";
/// Environment variable with the API key (optional: local servers often need none).
pub const ENV_MODEL_KEY: &str = "CAPBRIDGE_MODEL_KEY";

/// Longest accepted SSE line, in bytes.
pub const MAX_SSE_LINE: usize = 1 << 20;
/// Largest accepted reply body, in bytes (streamed or not).
pub const MAX_REPLY_BYTES: usize = 32 << 20;
/// Most tool calls accepted in one reply.
pub const MAX_TOOL_CALLS: usize = 128;
/// Longest accepted tool name or call id, in bytes.
const MAX_TOOL_NAME: usize = 1024;
/// Largest `Retry-After` honoured, in seconds (a day).
const MAX_RETRY_AFTER: u64 = 86_400;

/// An API key. Its `Debug` never shows it; it is only ever written into the `Authorization`
/// header.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    /// Wraps a key.
    pub fn new(key: impl Into<String>) -> Self {
        Self(key.into())
    }

    fn bearer(&self) -> Result<HeaderValue, ModelError> {
        let mut v = HeaderValue::from_str(&format!("Bearer {}", self.0))
            .map_err(|_| ModelError::NotConfigured)?;
        v.set_sensitive(true);
        Ok(v)
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey(<redacted>)")
    }
}

/// Where the model is and how to reach it. `Debug` shows the URL without user info, query
/// or fragment, and never the key.
#[derive(Clone)]
pub struct ModelConfig {
    /// API base URL; requests go to `{base_url}/chat/completions`.
    pub base_url: String,
    /// Model id sent when the request names none.
    pub model: String,
    /// Bearer key, if the provider needs one.
    pub key: Option<ApiKey>,
    /// TCP + TLS connect timeout (→ `model_timeout`).
    pub connect_timeout: Duration,
    /// Longest wait for the next bytes of the response (→ `model_timeout`).
    pub read_timeout: Duration,
}

impl fmt::Debug for ModelConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let url = match reqwest::Url::parse(&self.base_url) {
            Ok(mut u) => {
                let _ = u.set_username("");
                let _ = u.set_password(None);
                u.set_query(None);
                u.set_fragment(None);
                u.to_string()
            }
            Err(_) => "<unparseable>".to_owned(),
        };
        f.debug_struct("ModelConfig")
            .field("base_url", &url)
            .field("model", &self.model)
            .field("key", &self.key)
            .field("connect_timeout", &self.connect_timeout)
            .field("read_timeout", &self.read_timeout)
            .finish()
    }
}

impl ModelConfig {
    /// A config with default timeouts (connect 15 s, read 180 s) and no key.
    pub fn new(base_url: impl Into<String>, model: impl Into<String>) -> Self {
        Self {
            base_url: base_url.into(),
            model: model.into(),
            key: None,
            connect_timeout: Duration::from_secs(15),
            read_timeout: Duration::from_secs(180),
        }
    }

    /// The same config with a key.
    pub fn with_key(mut self, key: impl Into<String>) -> Self {
        self.key = Some(ApiKey::new(key));
        self
    }

    /// Reads `CAPBRIDGE_MODEL_URL`, `CAPBRIDGE_MODEL` and (optional) `CAPBRIDGE_MODEL_KEY`.
    /// A missing or empty URL or model is [`ModelError::NotConfigured`].
    pub fn from_env() -> Result<Self, ModelError> {
        Self::from_lookup(|name| std::env::var(name).ok())
    }

    /// Like [`from_env`](Self::from_env), reading variables through `lookup`.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, ModelError> {
        let get = |name: &str| lookup(name).filter(|v| !v.trim().is_empty());
        let url = get(ENV_MODEL_URL).ok_or(ModelError::NotConfigured)?;
        let model = get(ENV_MODEL).ok_or(ModelError::NotConfigured)?;
        let mut config = Self::new(url.trim(), model.trim());
        config.key = get(ENV_MODEL_KEY).map(|k| ApiKey::new(k.trim()));
        Ok(config)
    }
}

/// The OpenAI-compatible streaming client.
pub struct OpenAiClient {
    http: reqwest::Client,
    endpoint: reqwest::Url,
    model: String,
    auth: Option<HeaderValue>,
}

impl fmt::Debug for OpenAiClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OpenAiClient")
            .field("host", &self.endpoint.host_str().unwrap_or(""))
            .field("model", &self.model)
            .field("key", &self.auth.as_ref().map(|_| "<redacted>"))
            .finish()
    }
}

impl OpenAiClient {
    /// Builds a client. An unusable URL or a key that cannot be a header value is
    /// [`ModelError::NotConfigured`].
    pub fn new(config: ModelConfig) -> Result<Self, ModelError> {
        let base = config.base_url.trim_end_matches('/');
        let endpoint = reqwest::Url::parse(&format!("{base}/chat/completions"))
            .map_err(|_| ModelError::NotConfigured)?;
        if !matches!(endpoint.scheme(), "http" | "https") || config.model.is_empty() {
            return Err(ModelError::NotConfigured);
        }
        let auth = config.key.as_ref().map(ApiKey::bearer).transpose()?;
        let mut builder = reqwest::Client::builder()
            .connect_timeout(config.connect_timeout)
            .read_timeout(config.read_timeout);
        if is_loopback(&endpoint) {
            builder = builder.no_proxy();
        }
        let http = builder.build().map_err(|_| ModelError::NotConfigured)?;
        Ok(Self {
            http,
            endpoint,
            model: config.model,
            auth,
        })
    }

    /// The model id used when a request names none.
    pub fn model(&self) -> &str {
        &self.model
    }
}

fn is_loopback(url: &reqwest::Url) -> bool {
    let Some(host) = url.host_str() else {
        return false;
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|a| a.is_loopback())
}

#[async_trait]
impl ModelClient for OpenAiClient {
    async fn stream(
        &self,
        request: ChatRequest,
        cancel: CancelToken,
    ) -> Result<ModelStream, ModelError> {
        if cancel.is_cancelled() {
            return Err(ModelError::Cancelled);
        }
        let model = if request.model.is_empty() {
            self.model.clone()
        } else {
            request.model.clone()
        };
        let body = serde_json::to_vec(&request_body(&model, &request))
            .map_err(|_| ModelError::Protocol)?;
        let body_len = body.len();
        let started = Instant::now();
        let mut builder = self
            .http
            .post(self.endpoint.clone())
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, "text/event-stream, application/json")
            .body(body);
        if let Some(auth) = &self.auth {
            builder = builder.header(AUTHORIZATION, auth.clone());
        }
        let response = tokio::select! {
            biased;
            () = cancel.cancelled() => return Err(ModelError::Cancelled),
            r = builder.send() => r.map_err(|e| map_send_error(&e))?,
        };
        let status = response.status().as_u16();
        tracing::debug!(
            model = %model,
            host = self.endpoint.host_str().unwrap_or(""),
            status,
            request_bytes = body_len,
            wait_ms = started.elapsed().as_millis() as u64,
            "model response"
        );
        if !(200..300).contains(&status) {
            let error = map_status(status, retry_after(response.headers()));
            tracing::warn!(model = %model, status, code = error.agentos_code(), "model error");
            return Err(error);
        }
        let is_json = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.trim_start().starts_with("application/json"));
        if is_json {
            let events = read_json_reply(response, &cancel).await?;
            return Ok(futures::stream::iter(events.into_iter().map(Ok)).boxed());
        }
        let state = SseState {
            response,
            cancel,
            decoder: SseDecoder::default(),
            pending: VecDeque::new(),
            done: false,
            model,
            started,
        };
        Ok(futures::stream::unfold(state, next_event).boxed())
    }
}

/// The JSON body of one request.
fn request_body(model: &str, request: &ChatRequest) -> Value {
    let messages: Vec<Value> = request.messages.iter().map(message_json).collect();
    let mut body = Map::new();
    body.insert("model".into(), Value::String(model.to_owned()));
    body.insert("stream".into(), Value::Bool(true));
    body.insert("messages".into(), Value::Array(messages));
    if !request.tools.is_empty() {
        let tools = request
            .tools
            .iter()
            .map(|t| {
                json!({
                    "type": "function",
                    "function": {
                        "name": t.name,
                        "description": t.description,
                        "parameters": t.parameters,
                    }
                })
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    if let Some(max) = request.max_tokens {
        body.insert("max_tokens".into(), Value::from(max));
    }
    Value::Object(body)
}

fn message_json(m: &ChatMessage) -> Value {
    match m {
        ChatMessage::System(text) => json!({"role": "system", "content": text}),
        ChatMessage::User(text) => json!({"role": "user", "content": text}),
        ChatMessage::Assistant { text, tool_calls } => {
            let mut o = Map::new();
            o.insert("role".into(), "assistant".into());
            o.insert(
                "content".into(),
                if text.is_empty() && !tool_calls.is_empty() {
                    Value::Null
                } else {
                    Value::String(text.clone())
                },
            );
            if !tool_calls.is_empty() {
                let calls = tool_calls
                    .iter()
                    .map(|c| {
                        json!({
                            "id": c.id,
                            "type": "function",
                            "function": {"name": c.name, "arguments": c.arguments},
                        })
                    })
                    .collect();
                o.insert("tool_calls".into(), Value::Array(calls));
            }
            Value::Object(o)
        }
        ChatMessage::Tool { call_id, content } => {
            json!({"role": "tool", "tool_call_id": call_id, "content": content})
        }
    }
}

/// Appendix B: HTTP status → model error.
pub fn map_status(status: u16, retry_after_seconds: Option<u64>) -> ModelError {
    match status {
        401 | 403 => ModelError::AuthFailed { status },
        402 => ModelError::QuotaExhausted,
        408 => ModelError::Timeout,
        413 => ModelError::RequestTooLarge,
        425 | 429 => ModelError::RateLimited {
            retry_after_seconds,
        },
        400..=499 => ModelError::BadRequest { status },
        500..=599 => ModelError::Unavailable { status },
        _ => ModelError::Protocol,
    }
}

/// `Retry-After` in delta-seconds (the HTTP-date form is not honoured).
fn retry_after(headers: &HeaderMap) -> Option<u64> {
    headers
        .get(RETRY_AFTER)?
        .to_str()
        .ok()?
        .trim()
        .parse::<u64>()
        .ok()
        .map(|s| s.min(MAX_RETRY_AFTER))
}

/// A failure before any response: timeout, TLS, or network.
fn map_send_error(e: &reqwest::Error) -> ModelError {
    let mapped = if e.is_timeout() {
        ModelError::Timeout
    } else if is_tls_failure(e) {
        ModelError::TlsFailed
    } else {
        ModelError::Network
    };
    tracing::debug!(
        code = mapped.agentos_code(),
        connect = e.is_connect(),
        "model request failed"
    );
    mapped
}

/// Whether the error chain mentions a TLS or certificate failure (rustls errors are wrapped
/// in `io::Error`s inside hyper's connect error, so their text is all there is).
fn is_tls_failure(e: &reqwest::Error) -> bool {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(err) = source {
        let text = err.to_string().to_ascii_lowercase();
        if [
            "tls",
            "certificate",
            "handshake",
            "corrupt message",
            "peer sent",
            "alert",
        ]
        .iter()
        .any(|needle| text.contains(needle))
        {
            return true;
        }
        source = err.source();
    }
    false
}

/// A failure while reading the body.
fn map_body_error(e: &reqwest::Error) -> ModelError {
    if e.is_timeout() {
        ModelError::Timeout
    } else {
        ModelError::StreamInterrupted
    }
}

/// Reads a non-streamed `chat.completion` body (bounded, cancellable) into events.
async fn read_json_reply(
    mut response: reqwest::Response,
    cancel: &CancelToken,
) -> Result<Vec<ModelEvent>, ModelError> {
    let mut body = Vec::new();
    loop {
        let chunk = tokio::select! {
            biased;
            () = cancel.cancelled() => return Err(ModelError::Cancelled),
            c = response.chunk() => c.map_err(|e| map_body_error(&e))?,
        };
        match chunk {
            Some(bytes) => {
                if body.len() + bytes.len() > MAX_REPLY_BYTES {
                    return Err(ModelError::Protocol);
                }
                body.extend_from_slice(&bytes);
            }
            None => break,
        }
    }
    let value: Value = serde_json::from_slice(&body).map_err(|_| ModelError::Protocol)?;
    let mut out = VecDeque::new();
    let mut reply = ReplyAssembler::default();
    reply.on_complete_json(&value, &mut out)?;
    reply.complete(&mut out)?;
    Ok(out.into_iter().collect())
}

struct SseState {
    response: reqwest::Response,
    cancel: CancelToken,
    decoder: SseDecoder,
    pending: VecDeque<ModelEvent>,
    done: bool,
    model: String,
    started: Instant,
}

type Step = Option<(Result<ModelEvent, ModelError>, SseState)>;

async fn next_event(mut st: SseState) -> Step {
    loop {
        if st.done && st.pending.is_empty() {
            return None;
        }
        if st.cancel.is_cancelled() {
            return finish_with(st, Err(ModelError::Cancelled));
        }
        if let Some(event) = st.pending.pop_front() {
            return Some((Ok(event), st));
        }
        let chunk = tokio::select! {
            biased;
            () = st.cancel.cancelled() => return finish_with(st, Err(ModelError::Cancelled)),
            c = st.response.chunk() => c,
        };
        let result = match chunk {
            Ok(Some(bytes)) => st.decoder.feed(&bytes, &mut st.pending),
            Ok(None) => st.decoder.end_of_body(&mut st.pending).map(|()| Flow::Done),
            Err(e) => Err(map_body_error(&e)),
        };
        match result {
            Ok(Flow::Continue) => {}
            Ok(Flow::Done) => {
                st.done = true;
                tracing::debug!(
                    model = %st.model,
                    reply_bytes = st.decoder.total,
                    duration_ms = st.started.elapsed().as_millis() as u64,
                    "model reply complete"
                );
            }
            Err(e) => {
                // Events decoded before the failure are dropped with the reply: the error is
                // what the turn ends with.
                st.pending.clear();
                return finish_with(st, Err(e));
            }
        }
    }
}

fn finish_with(mut st: SseState, item: Result<ModelEvent, ModelError>) -> Step {
    if let Err(e) = &item {
        tracing::debug!(
            model = %st.model,
            code = e.agentos_code(),
            reply_bytes = st.decoder.total,
            duration_ms = st.started.elapsed().as_millis() as u64,
            "model reply ended"
        );
    }
    st.done = true;
    st.pending.clear();
    Some((item, st))
}

/// Whether the decoder saw the end of the reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Flow {
    Continue,
    Done,
}

/// Sans-IO SSE decoder: bytes in, [`ModelEvent`]s out.
#[derive(Debug, Default)]
pub(crate) struct SseDecoder {
    line: Vec<u8>,
    data: String,
    has_data: bool,
    total: usize,
    finished: bool,
    reply: ReplyAssembler,
}

impl SseDecoder {
    /// Feeds body bytes; complete events are appended to `out`.
    pub(crate) fn feed(
        &mut self,
        bytes: &[u8],
        out: &mut VecDeque<ModelEvent>,
    ) -> Result<Flow, ModelError> {
        if self.finished {
            return Ok(Flow::Done);
        }
        self.total = self.total.saturating_add(bytes.len());
        if self.total > MAX_REPLY_BYTES {
            return Err(ModelError::Protocol);
        }
        let mut rest = bytes;
        while let Some(pos) = rest.iter().position(|&b| b == b'\n') {
            let (head, tail) = rest.split_at(pos);
            rest = &tail[1..];
            if self.line.len() + head.len() > MAX_SSE_LINE {
                return Err(ModelError::Protocol);
            }
            let flow = if self.line.is_empty() {
                self.on_line(head, out)?
            } else {
                let mut line = std::mem::take(&mut self.line);
                line.extend_from_slice(head);
                self.on_line(&line, out)?
            };
            if flow == Flow::Done {
                self.finished = true;
                return Ok(Flow::Done);
            }
        }
        if self.line.len() + rest.len() > MAX_SSE_LINE {
            return Err(ModelError::Protocol);
        }
        self.line.extend_from_slice(rest);
        Ok(Flow::Continue)
    }

    /// The body ended. A reply that said why it finished is accepted without `[DONE]`; one
    /// cut before that is [`ModelError::StreamInterrupted`]; one with nothing readable is
    /// [`ModelError::Protocol`].
    pub(crate) fn end_of_body(&mut self, out: &mut VecDeque<ModelEvent>) -> Result<(), ModelError> {
        if self.finished {
            return Ok(());
        }
        if !self.line.is_empty() {
            let line = std::mem::take(&mut self.line);
            if self.on_line(&line, out)? == Flow::Done {
                return Ok(());
            }
        }
        if self.has_data && self.dispatch(out)? == Flow::Done {
            return Ok(());
        }
        if self.reply.finish.is_some() {
            self.finished = true;
            return self.reply.complete(out);
        }
        if self.reply.saw_chunk {
            Err(ModelError::StreamInterrupted)
        } else {
            Err(ModelError::Protocol)
        }
    }

    fn on_line(&mut self, line: &[u8], out: &mut VecDeque<ModelEvent>) -> Result<Flow, ModelError> {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.is_empty() {
            return if self.has_data {
                self.dispatch(out)
            } else {
                Ok(Flow::Continue)
            };
        }
        if line[0] == b':' {
            return Ok(Flow::Continue);
        }
        let line = std::str::from_utf8(line).map_err(|_| ModelError::Protocol)?;
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (line, ""),
        };
        match field {
            "data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.has_data = true;
                Ok(Flow::Continue)
            }
            "event" | "id" | "retry" => Ok(Flow::Continue),
            _ => Err(ModelError::Protocol),
        }
    }

    fn dispatch(&mut self, out: &mut VecDeque<ModelEvent>) -> Result<Flow, ModelError> {
        self.has_data = false;
        let data = std::mem::take(&mut self.data);
        if data.trim() == "[DONE]" {
            self.finished = true;
            self.reply.complete(out)?;
            return Ok(Flow::Done);
        }
        let value: Value = serde_json::from_str(&data).map_err(|_| ModelError::Protocol)?;
        self.reply.on_chunk(&value, out)?;
        Ok(Flow::Continue)
    }
}

#[derive(Debug, Default)]
struct PartialCall {
    id: String,
    name: String,
    arguments: String,
}

/// Assembles one reply: deltas pass through, tool-call fragments are merged by index, and
/// the finish reason is held until the end.
#[derive(Debug, Default)]
struct ReplyAssembler {
    calls: BTreeMap<u64, PartialCall>,
    finish: Option<Option<FinishReason>>,
    saw_chunk: bool,
}

impl ReplyAssembler {
    /// One streamed `chat.completion.chunk`.
    fn on_chunk(&mut self, v: &Value, out: &mut VecDeque<ModelEvent>) -> Result<(), ModelError> {
        let obj = v.as_object().ok_or(ModelError::Protocol)?;
        if let Some(err) = obj.get("error") {
            return Err(stream_error(err));
        }
        self.saw_chunk = true;
        let Some(choices) = obj.get("choices") else {
            return Ok(()); // e.g. a usage-only chunk
        };
        let choices = choices.as_array().ok_or(ModelError::Protocol)?;
        for choice in choices {
            let choice = choice.as_object().ok_or(ModelError::Protocol)?;
            if choice.get("index").and_then(Value::as_u64).unwrap_or(0) != 0 {
                continue;
            }
            if let Some(delta) = choice.get("delta").filter(|d| !d.is_null()) {
                let delta = delta.as_object().ok_or(ModelError::Protocol)?;
                push_text(delta, out)?;
                if let Some(calls) = delta.get("tool_calls").filter(|c| !c.is_null()) {
                    let calls = calls.as_array().ok_or(ModelError::Protocol)?;
                    for (position, call) in calls.iter().enumerate() {
                        self.on_call_fragment(position, call)?;
                    }
                }
            }
            self.on_finish_reason(choice.get("finish_reason"))?;
        }
        Ok(())
    }

    /// A whole non-streamed `chat.completion`.
    fn on_complete_json(
        &mut self,
        v: &Value,
        out: &mut VecDeque<ModelEvent>,
    ) -> Result<(), ModelError> {
        let obj = v.as_object().ok_or(ModelError::Protocol)?;
        if let Some(err) = obj.get("error") {
            return Err(stream_error(err));
        }
        self.saw_chunk = true;
        let choice = obj
            .get("choices")
            .and_then(Value::as_array)
            .and_then(|c| c.first())
            .and_then(Value::as_object)
            .ok_or(ModelError::Protocol)?;
        let message = choice
            .get("message")
            .and_then(Value::as_object)
            .ok_or(ModelError::Protocol)?;
        push_text(message, out)?;
        if let Some(calls) = message.get("tool_calls").filter(|c| !c.is_null()) {
            let calls = calls.as_array().ok_or(ModelError::Protocol)?;
            for (position, call) in calls.iter().enumerate() {
                self.on_call_fragment(position, call)?;
            }
        }
        self.on_finish_reason(choice.get("finish_reason"))?;
        if self.finish.is_none() {
            self.finish = Some(None);
        }
        Ok(())
    }

    fn on_finish_reason(&mut self, reason: Option<&Value>) -> Result<(), ModelError> {
        match reason {
            None | Some(Value::Null) => Ok(()),
            Some(Value::String(s)) => {
                self.finish = Some(finish_reason(s));
                Ok(())
            }
            Some(_) => Err(ModelError::Protocol),
        }
    }

    fn on_call_fragment(&mut self, position: usize, call: &Value) -> Result<(), ModelError> {
        let call = call.as_object().ok_or(ModelError::Protocol)?;
        let index = match call.get("index") {
            None | Some(Value::Null) => position as u64,
            Some(v) => v.as_u64().ok_or(ModelError::Protocol)?,
        };
        if !self.calls.contains_key(&index) && self.calls.len() >= MAX_TOOL_CALLS {
            return Err(ModelError::Protocol);
        }
        let partial = self.calls.entry(index).or_default();
        if let Some(id) = opt_str(call.get("id"))? {
            merge_fragment(&mut partial.id, id)?;
        }
        if let Some(function) = call.get("function").filter(|f| !f.is_null()) {
            let function = function.as_object().ok_or(ModelError::Protocol)?;
            if let Some(name) = opt_str(function.get("name"))? {
                merge_fragment(&mut partial.name, name)?;
            }
            match function.get("arguments") {
                None | Some(Value::Null) => {}
                Some(Value::String(s)) => partial.arguments.push_str(s),
                // A provider that sends parsed arguments: keep their JSON text.
                Some(v @ Value::Object(_)) => partial.arguments.push_str(&v.to_string()),
                Some(_) => return Err(ModelError::Protocol),
            }
        }
        Ok(())
    }

    /// The end of the reply: complete tool calls in index order, then `Finished`.
    fn complete(&mut self, out: &mut VecDeque<ModelEvent>) -> Result<(), ModelError> {
        let calls = std::mem::take(&mut self.calls);
        let has_calls = !calls.is_empty();
        for (index, p) in calls {
            if p.name.is_empty() {
                return Err(ModelError::Protocol);
            }
            let id = if p.id.is_empty() {
                format!("call_{index}")
            } else {
                p.id
            };
            let arguments = if p.arguments.trim().is_empty() {
                "{}".to_owned()
            } else {
                p.arguments
            };
            out.push_back(ModelEvent::ToolCall(ToolCallRequest {
                id,
                name: p.name,
                arguments,
            }));
        }
        let reason = match self.finish.flatten() {
            Some(FinishReason::Stop) | None if has_calls => FinishReason::ToolCalls,
            Some(FinishReason::ToolCalls) if !has_calls => FinishReason::Stop,
            Some(r) => r,
            None => FinishReason::Stop,
        };
        out.push_back(ModelEvent::Finished(reason));
        Ok(())
    }
}

/// Text and reasoning deltas of one `delta` / `message` object.
fn push_text(obj: &Map<String, Value>, out: &mut VecDeque<ModelEvent>) -> Result<(), ModelError> {
    for key in ["reasoning_content", "reasoning"] {
        if let Some(t) = opt_str(obj.get(key))?.filter(|t| !t.is_empty()) {
            out.push_back(ModelEvent::ThoughtDelta(t.to_owned()));
            break;
        }
    }
    if let Some(t) = opt_str(obj.get("content"))?.filter(|t| !t.is_empty()) {
        out.push_back(ModelEvent::TextDelta(t.to_owned()));
    }
    Ok(())
}

fn opt_str(v: Option<&Value>) -> Result<Option<&str>, ModelError> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(ModelError::Protocol),
    }
}

/// Ids and names normally arrive whole in the first fragment; some providers repeat them in
/// every fragment, others split them. A repeat is ignored, anything else is appended.
fn merge_fragment(current: &mut String, fragment: &str) -> Result<(), ModelError> {
    if fragment.is_empty() || current == fragment {
        return Ok(());
    }
    if current.len() + fragment.len() > MAX_TOOL_NAME {
        return Err(ModelError::Protocol);
    }
    current.push_str(fragment);
    Ok(())
}

fn finish_reason(s: &str) -> Option<FinishReason> {
    match s {
        "stop" | "end_turn" | "eos" | "stop_sequence" => Some(FinishReason::Stop),
        "tool_calls" | "function_call" | "tool_use" => Some(FinishReason::ToolCalls),
        "length" | "max_tokens" => Some(FinishReason::Length),
        "content_filter" | "refusal" | "safety" => Some(FinishReason::ContentFilter),
        _ => None,
    }
}

/// An `{"error": …}` object inside a 200 reply: a numeric `code` (or `status`) is mapped like
/// an HTTP status, anything else is the provider failing mid-reply (`model_unavailable`).
fn stream_error(err: &Value) -> ModelError {
    let code = ["code", "status"].iter().find_map(|k| {
        let v = err.get(k)?;
        v.as_u64()
            .or_else(|| v.as_str().and_then(|s| s.parse::<u64>().ok()))
    });
    match code.and_then(|c| u16::try_from(c).ok()) {
        Some(status) if (400..=599).contains(&status) => map_status(status, None),
        _ => ModelError::Unavailable { status: 500 },
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    fn decode_all(pieces: &[&[u8]]) -> Result<Vec<ModelEvent>, ModelError> {
        let mut d = SseDecoder::default();
        let mut out = VecDeque::new();
        for p in pieces {
            if d.feed(p, &mut out)? == Flow::Done {
                return Ok(out.into_iter().collect());
            }
        }
        d.end_of_body(&mut out)?;
        Ok(out.into_iter().collect())
    }

    #[test]
    fn byte_by_byte_split_matches_whole() {
        let body = concat!(
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"h\u{e9}llo\"}}]}\r\n\r\n",
            ": keep-alive\n\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c1\",",
            "\"function\":{\"name\":\"mcp__a\",\"arguments\":\"{\\\"x\\\"\"}}]}}]}\n\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,",
            "\"function\":{\"name\":\"__b\",\"arguments\":\":1}\"}}]},\"finish_reason\":\"tool_calls\"}]}\n\n",
            "data: [DONE]\n\n"
        )
        .as_bytes();
        let whole = decode_all(&[body]).unwrap();
        let split: Vec<&[u8]> = body.chunks(1).collect();
        assert_eq!(decode_all(&split).unwrap(), whole);
        assert_eq!(
            whole,
            vec![
                ModelEvent::TextDelta("h\u{e9}llo".into()),
                ModelEvent::ToolCall(ToolCallRequest {
                    id: "c1".into(),
                    name: "mcp__a__b".into(),
                    arguments: "{\"x\":1}".into()
                }),
                ModelEvent::Finished(FinishReason::ToolCalls),
            ]
        );
    }

    #[test]
    fn overlong_line_is_protocol() {
        let line = vec![b'a'; MAX_SSE_LINE + 1];
        assert_eq!(decode_all(&[b"data: ", &line]), Err(ModelError::Protocol));
    }

    #[test]
    fn end_without_finish_is_interrupted_and_garbage_is_protocol() {
        let one = b"data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\n";
        assert_eq!(decode_all(&[one]), Err(ModelError::StreamInterrupted));
        assert_eq!(
            decode_all(&[b"<html>oops</html>\n"]),
            Err(ModelError::Protocol)
        );
        assert_eq!(decode_all(&[b""]), Err(ModelError::Protocol));
    }

    #[test]
    fn status_mapping_follows_appendix_b() {
        assert_eq!(
            map_status(401, None),
            ModelError::AuthFailed { status: 401 }
        );
        assert_eq!(
            map_status(403, None),
            ModelError::AuthFailed { status: 403 }
        );
        assert_eq!(map_status(402, None), ModelError::QuotaExhausted);
        assert_eq!(map_status(408, None), ModelError::Timeout);
        assert_eq!(map_status(413, None), ModelError::RequestTooLarge);
        assert_eq!(
            map_status(425, Some(3)),
            ModelError::RateLimited {
                retry_after_seconds: Some(3)
            }
        );
        assert_eq!(
            map_status(422, None),
            ModelError::BadRequest { status: 422 }
        );
        assert_eq!(
            map_status(529, None),
            ModelError::Unavailable { status: 529 }
        );
        assert_eq!(map_status(302, None), ModelError::Protocol);
    }
}
