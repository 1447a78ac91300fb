//! [`McpClient`]: the host side of one provider connection (what the Extension Host's
//! `McpBinderClient` does): `initialize` → `notifications/initialized` → `tools/list` →
//! `tools/call` (MCP-20), with the four failure kinds of seed 000 §5.12 (MCP-22), a per-server
//! limit of [`MAX_CALLS_IN_FLIGHT`] calls with a FIFO queue whose waiting time counts against
//! the caller's timeout (MCP-24), and `notifications/cancelled` on cancel or timeout (MCP-29).
//! Tool calls are never retried (MCP-25).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use binder_channel::jsonrpc::{self, ErrorObject, Framing, Id, Message, Outbound, code};
use binder_channel::{Channel, SendError};
use capability_model::issues::{IssueKind, ProviderIssue};
use capability_model::{CancelToken, Listing, Source, ToolOutput, mcp};
use rmcp::model::{
    CallToolRequestParams, CancelledNotificationParam, ClientCapabilities, Implementation,
    InitializeRequestParams, InitializeResult, NumberOrString, PaginatedRequestParams,
};
use serde_json::{Map, Value};
use tokio::sync::{broadcast, oneshot};
use tokio::time::Instant;

use crate::error::ClientError;
use crate::limits::{
    HANDSHAKE_TIMEOUT, MAX_CALLS_IN_FLIGHT, MAX_LIST_PAGES, TOOLS_PER_SERVER_DEFAULT,
};
use crate::protocol::{self, clean_message, from_call_result, is_supported, latest_version};
use crate::slots::CallSlots;

type Pending = HashMap<i64, oneshot::Sender<Result<Value, ErrorObject>>>;

/// A connection to one provider server. Cheap to clone; clones share the connection.
#[derive(Debug, Clone)]
pub struct McpClient {
    inner: Arc<ClientInner>,
}

#[derive(Debug)]
struct ClientInner {
    channel: Channel,
    framing: Framing,
    next_id: AtomicI64,
    /// Requests awaiting an answer, and whether the connection has ended (one lock, so a
    /// request either lands before the reader drains the map or sees the end).
    pending: Mutex<(Pending, bool)>,
    slots: CallSlots,
    list_changed: broadcast::Sender<()>,
    /// Bumped on every `notifications/tools/list_changed`.
    list_generation: AtomicU64,
    /// Messages from the provider that were not valid JSON-RPC or answered nothing we asked.
    malformed: AtomicU64,
    last_used: Mutex<Instant>,
    /// Messages this client queued on the channel so far. Held while queuing, so a
    /// message's number is its position in the channel's outgoing order (CH-15): it left
    /// the process iff the channel's `sent` count passed it.
    queued: Mutex<u64>,
    closed: AtomicBool,
    server_info: Mutex<Option<(Implementation, String)>>,
}

impl ClientInner {
    fn pending(&self) -> MutexGuard<'_, (Pending, bool)> {
        self.pending.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Queues `text` and returns its position in the outgoing order.
    fn send(&self, text: String) -> Result<u64, SendError> {
        let mut queued = self.queued.lock().unwrap_or_else(PoisonError::into_inner);
        self.channel.send(text)?;
        let position = *queued;
        *queued += 1;
        Ok(position)
    }

    /// Whether the message at `position` was handed to the carrier (it may have arrived).
    fn dispatched(&self, position: u64) -> bool {
        self.channel.stats().sent > position
    }

    fn touch(&self) {
        *self
            .last_used
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Instant::now();
    }
}

impl McpClient {
    /// Connects over an opened channel: starts the reader, sends `initialize` offering the
    /// newest revision, checks the answer (MCP-21) and sends `notifications/initialized`.
    /// Requires a tokio runtime.
    pub async fn connect(channel: Channel) -> Result<McpClient, ClientError> {
        let (list_changed, _) = broadcast::channel(16);
        let inner = Arc::new(ClientInner {
            channel,
            framing: Framing::binder_channel(),
            next_id: AtomicI64::new(1),
            pending: Mutex::new((HashMap::new(), false)),
            slots: CallSlots::new(MAX_CALLS_IN_FLIGHT),
            list_changed,
            list_generation: AtomicU64::new(0),
            malformed: AtomicU64::new(0),
            last_used: Mutex::new(Instant::now()),
            queued: Mutex::new(0),
            closed: AtomicBool::new(false),
            server_info: Mutex::new(None),
        });
        tokio::spawn(read_loop(inner.clone()));
        let client = McpClient { inner };
        let params = InitializeRequestParams::new(
            ClientCapabilities::default(),
            Implementation::new("capbridge", env!("CARGO_PKG_VERSION")),
        )
        .with_protocol_version(latest_version());
        let params = serde_json::to_value(params).map_err(|_| ClientError::TooLarge)?;
        let deadline = Instant::now() + HANDSHAKE_TIMEOUT;
        let answer = client
            .request(
                protocol::INITIALIZE,
                Some(params),
                deadline,
                &CancelToken::new(),
            )
            .await;
        let answer = match answer {
            Ok(answer) => answer,
            Err(e) => {
                client.close().await;
                return Err(e);
            }
        };
        let Ok(result) = serde_json::from_value::<InitializeResult>(answer) else {
            client.close().await;
            return Err(ClientError::InvalidResponse("initialize"));
        };
        if !is_supported(&result.protocol_version) {
            tracing::info!(server = %clean_message(&result.server_info.name), "unsupported MCP revision");
            client.close().await;
            return Err(ClientError::ProtocolVersion);
        }
        *client
            .inner
            .server_info
            .lock()
            .unwrap_or_else(PoisonError::into_inner) =
            Some((result.server_info, result.protocol_version.to_string()));
        client.notify(protocol::INITIALIZED, None)?;
        Ok(client)
    }

    /// Whether `other` is a clone of this client (the same connection).
    pub fn same_connection(&self, other: &McpClient) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }

    /// The provider's `serverInfo` from `initialize` (MCP-03).
    pub fn server_info(&self) -> Implementation {
        self.inner
            .server_info
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_ref()
            .map(|(info, _)| info.clone())
            .unwrap_or_else(|| Implementation::new("", ""))
    }

    /// The negotiated protocol revision.
    pub fn protocol_version(&self) -> String {
        self.inner
            .server_info
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_ref()
            .map(|(_, v)| v.clone())
            .unwrap_or_default()
    }

    /// Whether the connection has ended (the provider died, closed, or [`close`](Self::close)
    /// was called). A closed client stays closed; connect again.
    pub fn is_closed(&self) -> bool {
        self.inner.closed.load(Ordering::Acquire) || self.inner.channel.close_reason().is_some()
    }

    /// A receiver that gets `()` for every `notifications/tools/list_changed`.
    pub fn subscribe_list_changed(&self) -> broadcast::Receiver<()> {
        self.inner.list_changed.subscribe()
    }

    /// How many `list_changed` notifications arrived so far.
    pub fn list_generation(&self) -> u64 {
        self.inner.list_generation.load(Ordering::Acquire)
    }

    /// Messages from the provider that were ignored as malformed or unexpected.
    pub fn malformed_messages(&self) -> u64 {
        self.inner.malformed.load(Ordering::Relaxed)
    }

    /// Requests waiting for an answer now.
    pub fn requests_in_flight(&self) -> usize {
        self.inner.pending().0.len()
    }

    /// When the connection was last used (a request started or ended).
    pub fn last_used(&self) -> Instant {
        *self
            .inner
            .last_used
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Ends the connection (MCP-20). Requests still waiting fail with
    /// [`ClientError::Closed`] `{ dispatched: true }`.
    pub async fn close(&self) {
        self.inner.closed.store(true, Ordering::Release);
        self.inner.channel.close().await;
    }

    /// The raw `tools/list` entries, following `nextCursor` for at most [`MAX_LIST_PAGES`]
    /// pages. `Ok(None)` when the provider kept paging past that.
    pub async fn list_tools_raw(&self) -> Result<Option<Vec<Value>>, ClientError> {
        let mut tools = Vec::new();
        let mut cursor: Option<String> = None;
        for _ in 0..MAX_LIST_PAGES {
            let params = match cursor.take() {
                Some(c) => Some(
                    serde_json::to_value(PaginatedRequestParams::default().with_cursor(Some(c)))
                        .map_err(|_| ClientError::TooLarge)?,
                ),
                None => None,
            };
            let deadline = Instant::now() + HANDSHAKE_TIMEOUT;
            let page = self
                .request(protocol::TOOLS_LIST, params, deadline, &CancelToken::new())
                .await?;
            let Value::Object(mut page) = page else {
                return Err(ClientError::InvalidResponse("tools/list"));
            };
            match page.remove("tools") {
                Some(Value::Array(items)) => tools.extend(items),
                _ => return Err(ClientError::InvalidResponse("tools/list")),
            }
            match page.remove("nextCursor") {
                Some(Value::String(next)) => cursor = Some(next),
                _ => return Ok(Some(tools)),
            }
        }
        Ok(None)
    }

    /// `tools/list` as catalog records for plugin `plugin`, server `server`: invalid entries
    /// become issues while the rest stay usable (MCP-31); more than
    /// [`TOOLS_PER_SERVER_DEFAULT`] valid tools, or endless paging, leave the server with no
    /// tools and a `too_many_tools` issue (MCP-32).
    pub async fn list_capabilities(
        &self,
        plugin: &str,
        server: &str,
    ) -> Result<Listing, ClientError> {
        let Some(tools) = self.list_tools_raw().await? else {
            return Ok(too_many_tools());
        };
        let mut listing =
            mcp::capabilities_from_tools_list(Source::Mcp, plugin, server, &Value::Array(tools));
        if listing.capabilities.len() > TOOLS_PER_SERVER_DEFAULT {
            let mut out = too_many_tools();
            out.issues.append(&mut listing.issues);
            return Ok(out);
        }
        Ok(listing)
    }

    /// Calls tool `name`. `timeout` covers the time queued behind the
    /// [`MAX_CALLS_IN_FLIGHT`] limit plus the round trip (MCP-24). Firing `cancel` sends
    /// `notifications/cancelled` for the request if it had left (MCP-29); so does a timeout.
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: Map<String, Value>,
        timeout: Duration,
        cancel: &CancelToken,
    ) -> Result<ToolOutput, ClientError> {
        let deadline = Instant::now() + timeout;
        // Size first: a request that can never be sent does not wait for a slot (MCP-22).
        let params = CallToolRequestParams::new(name.to_owned()).with_arguments(arguments);
        let params = serde_json::to_value(params).map_err(|_| ClientError::TooLarge)?;
        let probe = Message::Request {
            id: Id::Number(i64::MIN),
            method: protocol::TOOLS_CALL.to_owned(),
            params: Some(params),
        };
        let params = match (self.inner.framing.fit(&probe), probe) {
            (Outbound::Send(_), Message::Request { params, .. }) => params,
            _ => return Err(ClientError::TooLarge),
        };
        let ticket = self.inner.slots.enqueue();
        let _slot = tokio::select! {
            slot = ticket.ready() => slot,
            () = tokio::time::sleep_until(deadline) => return Err(ClientError::Timeout),
            () = cancel.cancelled() => return Err(ClientError::Cancelled),
        };
        let started = Instant::now();
        let result = self
            .request(protocol::TOOLS_CALL, params, deadline, cancel)
            .await;
        tracing::debug!(
            uid = self.inner.channel.peer().uid,
            tool = %name,
            ms = started.elapsed().as_millis() as u64,
            ok = result.is_ok(),
            "tools/call"
        );
        from_call_result(result?).ok_or(ClientError::InvalidResponse("tools/call"))
    }

    fn notify(&self, method: &str, params: Option<Value>) -> Result<(), ClientError> {
        let message = Message::Notification {
            method: method.to_owned(),
            params,
        };
        match self.inner.framing.fit(&message) {
            Outbound::Send(text) => self
                .inner
                .send(text)
                .map(|_| ())
                .map_err(|_| ClientError::Closed { dispatched: false }),
            _ => Err(ClientError::TooLarge),
        }
    }

    /// One request/response round trip.
    async fn request(
        &self,
        method: &str,
        params: Option<Value>,
        deadline: Instant,
        cancel: &CancelToken,
    ) -> Result<Value, ClientError> {
        let id = self.inner.next_id.fetch_add(1, Ordering::Relaxed);
        let message = Message::Request {
            id: Id::Number(id),
            method: method.to_owned(),
            params,
        };
        let text = match self.inner.framing.fit(&message) {
            Outbound::Send(text) => text,
            _ => return Err(ClientError::TooLarge),
        };
        let (tx, rx) = oneshot::channel();
        {
            let mut pending = self.inner.pending();
            if pending.1 {
                return Err(ClientError::Closed { dispatched: false });
            }
            pending.0.insert(id, tx);
        }
        self.inner.touch();
        let position = match self.inner.send(text) {
            Ok(position) => position,
            Err(e) => {
                self.inner.pending().0.remove(&id);
                return Err(match e {
                    SendError::TooLarge { .. } => ClientError::TooLarge,
                    _ => ClientError::Closed { dispatched: false },
                });
            }
        };
        let outcome = tokio::select! {
            answer = rx => match answer {
                Ok(Ok(value)) => Ok(value),
                Ok(Err(error)) => Err(ClientError::Rpc {
                    code: error.code,
                    message: clean_message(&error.message),
                }),
                // The reader dropped the sender: the connection ended. The request may have
                // arrived only if it left the local backlog.
                Err(_) => Err(ClientError::Closed {
                    dispatched: self.inner.dispatched(position),
                }),
            },
            () = tokio::time::sleep_until(deadline) => {
                self.abandon(id, "timeout");
                Err(ClientError::Timeout)
            }
            () = cancel.cancelled() => {
                self.abandon(id, "cancelled by the caller");
                Err(ClientError::Cancelled)
            }
        };
        self.inner.touch();
        outcome
    }

    /// Forgets request `id` and tells the provider (MCP-29).
    fn abandon(&self, id: i64, reason: &str) {
        self.inner.pending().0.remove(&id);
        let _ = self.notify(
            protocol::CANCELLED,
            serde_json::to_value(CancelledNotificationParam::new(
                Some(NumberOrString::Number(id)),
                Some(reason.to_owned()),
            ))
            .ok(),
        );
    }
}

fn too_many_tools() -> Listing {
    Listing {
        capabilities: Vec::new(),
        issues: vec![ProviderIssue::new(
            IssueKind::TooManyTools,
            format!("the server offers more than {TOOLS_PER_SERVER_DEFAULT} tools; none are used"),
        )],
    }
}

/// Routes answers to waiting requests, list_changed to subscribers, answers the provider's
/// `ping`, and refuses its other requests (this host offers no client capabilities, MCP-04).
async fn read_loop(inner: Arc<ClientInner>) {
    while let Some(text) = inner.channel.recv().await {
        match jsonrpc::parse(&text) {
            Err(rejection) => {
                inner.malformed.fetch_add(1, Ordering::Relaxed);
                tracing::debug!(code = rejection.code, "invalid JSON-RPC from the provider");
                if let Some(reply) = rejection.reply {
                    let _ = inner.send(reply);
                }
            }
            Ok(Message::Response { id, outcome }) => {
                let waiter = match id {
                    Some(Id::Number(n)) => inner.pending().0.remove(&n),
                    _ => None,
                };
                match waiter {
                    Some(tx) => {
                        let _ = tx.send(outcome);
                    }
                    None => {
                        inner.malformed.fetch_add(1, Ordering::Relaxed);
                    }
                }
            }
            Ok(Message::Notification { method, .. }) => {
                if method == protocol::TOOLS_LIST_CHANGED {
                    inner.list_generation.fetch_add(1, Ordering::AcqRel);
                    let _ = inner.list_changed.send(());
                }
            }
            Ok(Message::Request { id, method, .. }) => {
                let reply = if method == protocol::PING {
                    Message::Response {
                        id: Some(id),
                        outcome: Ok(Value::Object(Map::new())),
                    }
                } else {
                    Message::error(Some(id), code::METHOD_NOT_FOUND, "Method not found")
                };
                let _ = inner.send(reply.to_json());
            }
        }
    }
    inner.closed.store(true, Ordering::Release);
    // Dropping the senders tells every waiting request the connection ended after its send.
    let drained = {
        let mut pending = inner.pending();
        pending.1 = true;
        std::mem::take(&mut pending.0)
    };
    drop(drained);
}
