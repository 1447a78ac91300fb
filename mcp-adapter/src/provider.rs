//! [`McpServer`]: the provider side of an AgentOS MCP plugin (what `McpBinderService` does),
//! serving one [`McpToolRegistry`] to every client that opens a channel.
//!
//! Per channel: `initialize` (revision negotiation, MCP-21; `serverInfo` = server name and
//! version, MCP-03; only the `tools` capability with `listChanged`, MCP-04), `ping`,
//! `tools/list`, `tools/call` (arguments validated before the handler runs; at most
//! [`MAX_CALLS_IN_FLIGHT`] calls in flight per server, the rest queued FIFO, MCP-24), and
//! `notifications/cancelled` firing the call's [`CancelToken`]. Handler failures and panics
//! become a generic `isError` sentence (MCP-09). Anything that is not JSON-RPC 2.0 gets the
//! framing layer's error answer and the channel stays open (CH-10).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::Instant;

use binder_channel::Channel;
use binder_channel::jsonrpc::{self, Framing, Id, Message, Outbound, code};
use capability_model::{CancelToken, ToolOutput};
use rmcp::model::{
    CallToolRequestParams, CancelledNotificationParam, Implementation, InitializeRequestParams,
    InitializeResult, ListToolsResult, NumberOrString, ServerCapabilities, ToolsCapability,
};
use serde_json::Value;

use crate::limits::{CANCEL_GRACE, DEFAULT_SERVER_VERSION, MAX_CALLS_IN_FLIGHT};
use crate::protocol::{self, negotiate, to_call_result};
use crate::registry::{Dispatch, McpToolRegistry, RegistryError, ToolSet};
use crate::slots::CallSlots;

/// The sentence a client sees when a handler fails or panics (MCP-09).
pub const GENERIC_FAILURE: &str = "The tool failed because of an internal error.";

type Register = dyn Fn(&mut McpToolRegistry) -> Result<(), RegistryError> + Send + Sync;

/// One provider server: a name, a version, and the registration function that fills its
/// [`McpToolRegistry`]. Cheap to clone; clones serve the same tools and share the
/// [`MAX_CALLS_IN_FLIGHT`] limit.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use capability_model::{Annotations, CancelToken, ToolOutput};
/// use mcp_adapter::{McpClient, McpServer};
/// use serde_json::json;
///
/// let server = McpServer::new("echo", |r| {
///     r.tool("echo", None, "Echo the text back.",
///         json!({"type": "object", "properties": {"text": {"type": "string"}}}),
///         Annotations::default(),
///         |args, _| async move { Ok(ToolOutput::json(serde_json::Value::Object(args))) })?;
///     Ok(())
/// })?;
/// let (host_end, plugin_end) = binder_channel::memory::pair(1_000, 10_123)?;
/// server.serve(plugin_end);
/// let client = McpClient::connect(host_end).await?;
/// assert_eq!(client.server_info().name, "echo");
/// let args = json!({"text": "hi"}).as_object().cloned().unwrap_or_default();
/// let out = client
///     .call_tool("echo", args, std::time::Duration::from_secs(5), &CancelToken::new())
///     .await?;
/// assert_eq!(out.structured_content, Some(json!({"text": "hi"})));
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct McpServer {
    inner: Arc<ServerInner>,
}

impl std::fmt::Debug for McpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpServer")
            .field("name", &self.inner.name)
            .field("version", &self.inner.version)
            .finish_non_exhaustive()
    }
}

struct ServerInner {
    name: String,
    version: String,
    register: Box<Register>,
    tools: RwLock<Arc<ToolSet>>,
    slots: CallSlots,
    sessions: Mutex<Vec<Arc<Session>>>,
}

impl McpServer {
    /// A server named `server_name` (the key under `extensions."org.agentos".mcpServers`,
    /// MCP-03) with version [`DEFAULT_SERVER_VERSION`]. `register` runs now and again on
    /// every [`notify_tools_changed`](Self::notify_tools_changed) (MCP-10).
    pub fn new<F>(server_name: &str, register: F) -> Result<McpServer, RegistryError>
    where
        F: Fn(&mut McpToolRegistry) -> Result<(), RegistryError> + Send + Sync + 'static,
    {
        McpServer::with_version(server_name, DEFAULT_SERVER_VERSION, register)
    }

    /// Like [`new`](Self::new) with an explicit `serverInfo.version`.
    pub fn with_version<F>(
        server_name: &str,
        version: &str,
        register: F,
    ) -> Result<McpServer, RegistryError>
    where
        F: Fn(&mut McpToolRegistry) -> Result<(), RegistryError> + Send + Sync + 'static,
    {
        let inner = ServerInner {
            name: server_name.to_owned(),
            version: version.to_owned(),
            register: Box::new(register),
            tools: RwLock::new(Arc::new(ToolSet::empty(server_name))),
            slots: CallSlots::new(MAX_CALLS_IN_FLIGHT),
            sessions: Mutex::new(Vec::new()),
        };
        let tools = inner.build_tools()?;
        *inner.tools.write().unwrap_or_else(PoisonError::into_inner) = tools;
        Ok(McpServer {
            inner: Arc::new(inner),
        })
    }

    /// `serverInfo.name`.
    pub fn server_name(&self) -> &str {
        &self.inner.name
    }

    /// The names of the tools served now.
    pub fn tool_names(&self) -> Vec<String> {
        self.inner
            .current_tools()
            .tools
            .iter()
            .map(|t| t.tool.name.to_string())
            .collect()
    }

    /// `tools/call` handlers running now (at most [`MAX_CALLS_IN_FLIGHT`]).
    pub fn calls_in_flight(&self) -> usize {
        self.inner.slots.in_use()
    }

    /// Serves one client on `channel` (what `IMcpService.open` does) until the channel ends.
    /// Requires a tokio runtime.
    pub fn serve(&self, channel: Channel) -> tokio::task::JoinHandle<()> {
        let session = Arc::new(Session {
            channel,
            framing: Framing::binder_channel(),
            initialized: AtomicBool::new(false),
            calls: Mutex::new(HashMap::new()),
        });
        self.inner
            .sessions
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(session.clone());
        let server = self.inner.clone();
        tokio::spawn(async move {
            let peer = session.channel.peer().uid;
            tracing::debug!(uid = peer, server = %server.name, "mcp session opened");
            run_session(&server, &session).await;
            session.cancel_all();
            server
                .sessions
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .retain(|s| !Arc::ptr_eq(s, &session));
            tracing::debug!(uid = peer, server = %server.name, "mcp session ended");
        })
    }

    /// Serves every channel a binder-channel `IMcpService` opens (see
    /// [`binder_channel::binder::serve_channels`]), until the service goes away.
    pub fn serve_incoming(
        &self,
        mut incoming: binder_channel::binder::IncomingChannels,
    ) -> tokio::task::JoinHandle<()> {
        let server = self.clone();
        tokio::spawn(async move {
            while let Some(channel) = incoming.accept().await {
                server.serve(channel);
            }
        })
    }

    /// Re-runs the registration and sends `notifications/tools/list_changed` to every
    /// initialized client (MCP-10). On a registration error the served tools stay as they
    /// were and nothing is sent.
    pub fn notify_tools_changed(&self) -> Result<(), RegistryError> {
        let tools = self.inner.build_tools()?;
        *self
            .inner
            .tools
            .write()
            .unwrap_or_else(PoisonError::into_inner) = tools;
        let sessions = self
            .inner
            .sessions
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        let note = Message::Notification {
            method: protocol::TOOLS_LIST_CHANGED.to_owned(),
            params: None,
        };
        for session in sessions {
            if session.initialized.load(Ordering::Acquire) {
                session.send(&note);
            }
        }
        Ok(())
    }
}

impl ServerInner {
    fn build_tools(&self) -> Result<Arc<ToolSet>, RegistryError> {
        let mut registry = McpToolRegistry::new(self.name.clone());
        (self.register)(&mut registry)?;
        Ok(Arc::new(registry.finish()))
    }

    fn current_tools(&self) -> Arc<ToolSet> {
        self.tools
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    fn initialize_result(&self, params: Option<Value>) -> Result<Value, (i64, &'static str)> {
        let params: InitializeRequestParams =
            params
                .and_then(|p| serde_json::from_value(p).ok())
                .ok_or((code::INVALID_PARAMS, "Invalid params: initialize"))?;
        let mut capabilities = ServerCapabilities::default();
        let mut tools = ToolsCapability::default();
        tools.list_changed = Some(true);
        capabilities.tools = Some(tools);
        let result = InitializeResult::new(capabilities)
            .with_protocol_version(negotiate(&params.protocol_version))
            .with_server_info(Implementation::new(self.name.clone(), self.version.clone()));
        serde_json::to_value(result).map_err(|_| (code::INTERNAL_ERROR, "Internal error"))
    }
}

/// One client connection.
struct Session {
    channel: Channel,
    framing: Framing,
    /// `initialize` was answered; `list_changed` goes only to initialized clients.
    initialized: AtomicBool,
    /// Calls not yet answered, by request id: their cancellation tokens.
    calls: Mutex<HashMap<Id, CancelToken>>,
}

impl Session {
    /// Sends `message`, applying CH-13 to an oversize response (replaced by an error with the
    /// same id). A closed channel just ends the session.
    fn send(&self, message: &Message) {
        let text = match self.framing.fit(message) {
            Outbound::Send(text) | Outbound::Replace(text) => text,
            Outbound::LocalError(_) | Outbound::Dropped => return,
        };
        if let Err(e) = self.channel.send(text) {
            tracing::debug!(error = %e, "mcp response not sent");
        }
    }

    fn reply(&self, id: Id, outcome: Result<Value, (i64, &str)>) {
        let message = match outcome {
            Ok(result) => Message::Response {
                id: Some(id),
                outcome: Ok(result),
            },
            Err((code, text)) => Message::error(Some(id), code, text),
        };
        self.send(&message);
    }

    fn cancel_all(&self) {
        let calls = std::mem::take(&mut *self.calls.lock().unwrap_or_else(PoisonError::into_inner));
        for token in calls.into_values() {
            token.cancel();
        }
    }

    fn cancel(&self, params: Option<Value>) {
        let Some(params) =
            params.and_then(|p| serde_json::from_value::<CancelledNotificationParam>(p).ok())
        else {
            return;
        };
        let id = match params.request_id {
            Some(NumberOrString::Number(n)) => Id::Number(n),
            Some(NumberOrString::String(s)) => Id::String(s.to_string()),
            None => return,
        };
        let token = self
            .calls
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&id)
            .cloned();
        if let Some(token) = token {
            token.cancel();
        }
    }
}

async fn run_session(server: &Arc<ServerInner>, session: &Arc<Session>) {
    while let Some(text) = session.channel.recv().await {
        match jsonrpc::parse(&text) {
            Err(rejection) => {
                tracing::debug!(code = rejection.code, "invalid JSON-RPC from the client");
                if let Some(reply) = rejection.reply {
                    let _ = session.channel.send(reply);
                }
            }
            Ok(Message::Request { id, method, params }) => {
                handle_request(server, session, id, &method, params);
            }
            // `initialized` and unknown notifications need nothing.
            Ok(Message::Notification { method, params }) => {
                if method == protocol::CANCELLED {
                    session.cancel(params);
                }
            }
            // This server sends no requests, so there is nothing a response could answer.
            Ok(Message::Response { .. }) => {}
        }
    }
}

fn handle_request(
    server: &Arc<ServerInner>,
    session: &Arc<Session>,
    id: Id,
    method: &str,
    params: Option<Value>,
) {
    match method {
        protocol::INITIALIZE => {
            let result = server.initialize_result(params);
            let ok = result.is_ok();
            session.reply(id, result);
            if ok {
                session.initialized.store(true, Ordering::Release);
            }
        }
        protocol::PING => session.reply(id, Ok(Value::Object(Default::default()))),
        protocol::TOOLS_LIST | protocol::TOOLS_CALL
            if !session.initialized.load(Ordering::Acquire) =>
        {
            session.reply(
                id,
                Err((code::INVALID_REQUEST, "Invalid Request: initialize first")),
            );
        }
        protocol::TOOLS_LIST => {
            let mut result = ListToolsResult::with_all_items(server.current_tools().list());
            result.result_type = None;
            let value =
                serde_json::to_value(result).map_err(|_| (code::INTERNAL_ERROR, "Internal error"));
            session.reply(id, value);
        }
        protocol::TOOLS_CALL => start_call(server, session, id, params),
        _ => session.reply(id, Err((code::METHOD_NOT_FOUND, "Method not found"))),
    }
}

fn start_call(server: &Arc<ServerInner>, session: &Arc<Session>, id: Id, params: Option<Value>) {
    let Some(params) = params.and_then(|p| serde_json::from_value::<CallToolRequestParams>(p).ok())
    else {
        session.reply(
            id,
            Err((code::INVALID_PARAMS, "Invalid params: tools/call")),
        );
        return;
    };
    let tools = server.current_tools();
    let arguments = params.arguments.map_or(Value::Null, Value::Object);
    let (handler, arguments) = match tools.dispatch(&params.name, &arguments) {
        Dispatch::Run(handler, arguments) => (handler.clone(), arguments),
        Dispatch::UnknownTool => {
            session.reply(id, Err((code::INVALID_PARAMS, "Unknown tool")));
            return;
        }
        Dispatch::InvalidArguments(sentence) => {
            // A tool-level error the model can act on; the handler never runs.
            let output = ToolOutput::error(format!("Invalid arguments: {sentence}."));
            session.reply(id, call_result_value(&output));
            return;
        }
    };
    let token = CancelToken::new();
    {
        let mut calls = session.calls.lock().unwrap_or_else(PoisonError::into_inner);
        if calls.contains_key(&id) {
            drop(calls);
            session.reply(
                id,
                Err((code::INVALID_REQUEST, "Invalid Request: duplicate id")),
            );
            return;
        }
        calls.insert(id.clone(), token.clone());
    }
    // The place in the queue is taken now, in arrival order (MCP-24).
    let ticket = server.slots.enqueue();
    let session = session.clone();
    let server_name = server.name.clone();
    let tool = params.name.to_string();
    tokio::spawn(async move {
        let queued_at = Instant::now();
        let slot = tokio::select! {
            slot = ticket.ready() => slot,
            () = token.cancelled() => {
                session.forget(&id);
                return;
            }
        };
        let started = Instant::now();
        // The handler is called inside the task, so even a panic while building its future
        // is caught (MCP-09).
        let handler_token = token.clone();
        let mut task = tokio::spawn(async move { handler(arguments, handler_token).await });
        let joined = tokio::select! {
            joined = &mut task => Some(joined),
            () = async {
                token.cancelled().await;
                tokio::time::sleep(CANCEL_GRACE).await;
            } => {
                task.abort();
                None
            }
        };
        drop(slot);
        session.forget(&id);
        let output = match joined {
            Some(Ok(Ok(output))) => output,
            Some(Ok(Err(_))) | Some(Err(_)) => {
                tracing::warn!(server = %server_name, tool = %tool, "tool handler failed");
                ToolOutput::error(GENERIC_FAILURE)
            }
            None => return,
        };
        tracing::debug!(
            uid = session.channel.peer().uid,
            server = %server_name,
            tool = %tool,
            queued_ms = started.duration_since(queued_at).as_millis() as u64,
            run_ms = started.elapsed().as_millis() as u64,
            is_error = output.is_error,
            "tools/call done"
        );
        // A cancelled request gets no response (MCP cancellation).
        if token.is_cancelled() {
            return;
        }
        session.reply(id, call_result_value(&output));
    });
}

impl Session {
    fn forget(&self, id: &Id) {
        self.calls
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(id);
    }
}

fn call_result_value(output: &ToolOutput) -> Result<Value, (i64, &'static str)> {
    serde_json::to_value(to_call_result(output))
        .map_err(|_| (code::INTERNAL_ERROR, "Internal error"))
}
