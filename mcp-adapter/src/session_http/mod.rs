//! Per-session MCP servers over Streamable HTTP (`McpHttpServer`, SPEC SMS-01..SMS-11,
//! seed 000 §4.8).
//!
//! An ACP client may pass its own MCP servers in `session/new` (`load`, `resume`, `fork`):
//! `{type:"http", name, url, headers[]}`. They are visible only to that session.
//!
//! - [`parse_batch`] / [`validate_batch`] check the whole batch (SMS-02, SMS-03); a
//!   [`BatchError`] names the rule and the entry's index, never a value.
//! - [`SessionMcpServers::start`] connects every server (rmcp's Streamable HTTP client over
//!   [`http::GuardedHttpClient`]: `initialize` → `tools/list`), and is the
//!   [`CapabilitySource`] the runtime puts in the session's catalog. Tools are
//!   [`Source::SessionMcp`] records (`ses__<server>__<tool>` names, risk ≥ WRITE, never
//!   "always allow": SMS-09, SMS-10, CAT-64).
//! - A server that cannot be used does not fail the session: [`ServerStatus`] says
//!   `connected` and a short [`StatusReason`] (SMS-07).
//!   [`SessionMcpServers::refresh_before_task`] retries the ones that are down, but not within
//!   [`RETRY_HOLD_OFF`] of their last failure (SMS-08).
//! - A server's `notifications/tools/list_changed` is announced on `changes()` at once and its
//!   tools are listed again (same connection) by the next `refresh_before_task`.
//! - URL and headers live only in [`McpHttpServer`], in memory: its `Debug` and `Display`
//!   print the name only, and no log line, status or error carries them (SMS-05).
//!
//! ```
//! use mcp_adapter::session_http::{parse_batch, BatchRule, SessionUrlPolicy};
//! use serde_json::json;
//! let batch = json!([{"type": "http", "name": "orders", "url": "http://10.0.0.1/mcp",
//!                     "headers": [{"name": "Authorization", "value": "Bearer s3cret"}]}]);
//! let err = parse_batch(Some(&batch), SessionUrlPolicy::strict()).unwrap_err();
//! assert_eq!(err.rule, BatchRule::UrlScheme);
//! assert_eq!(err.to_string(), "mcpServers[0]: url_scheme");
//! ```

pub mod http;
pub mod policy;

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use capability_model::{
    CallError, CancelToken, Capability, CapabilityId, CapabilitySource, IssueKind, ListError,
    Listing, ProviderIssue, Source, ToolOutput, mcp,
};
use futures::StreamExt;
use futures::stream::BoxStream;
use reqwest::header::{HeaderName, HeaderValue};
use rmcp::ClientHandler;
use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation, PaginatedRequestParams,
};
use rmcp::service::{
    NotificationContext, Peer, RoleClient, RunningService, ServiceError, ServiceExt,
};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::common::client_side_sse::NeverRetry;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde::Serialize;
use serde_json::{Map, Value};
use tokio::sync::{Semaphore, broadcast};

use crate::limits::{
    DEFAULT_CALL_TIMEOUT, HANDSHAKE_TIMEOUT, MAX_CALLS_IN_FLIGHT, MAX_LIST_PAGES,
    TOOLS_PER_SERVER_DEFAULT,
};
use crate::protocol::{clean_message, from_call_result, is_supported, latest_version};

pub use http::{GuardedHttpClient, GuardedResolver};
pub use policy::{
    BatchError, BatchRule, SessionUrlPolicy, check_headers, check_url, parse_batch, validate_batch,
};

/// A failed server is not retried within this long of its last failure (SMS-08, SPEC
/// Appendix C "Session MCP reconnect hold-off").
pub const RETRY_HOLD_OFF: Duration = Duration::from_secs(30);

/// One per-session MCP server as the ACP client passed it. URL and headers stay in memory:
/// `Debug` and `Display` show the name only (SMS-05), and there is no `Serialize`.
#[derive(Clone, PartialEq, Eq)]
pub struct McpHttpServer {
    name: String,
    url: String,
    headers: Vec<(String, String)>,
}

impl McpHttpServer {
    /// A server entry (not validated; see [`validate_batch`]).
    pub fn new(
        name: impl Into<String>,
        url: impl Into<String>,
        headers: Vec<(String, String)>,
    ) -> Self {
        Self {
            name: name.into(),
            url: url.into(),
            headers,
        }
    }

    /// The name the client gave (the `<server>` of `ses__<server>__<tool>`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The URL. Secret (SMS-05): never log, store or show it.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The headers `(name, value)`. Secret (SMS-05): never log, store or show them.
    pub fn headers(&self) -> &[(String, String)] {
        &self.headers
    }
}

impl fmt::Debug for McpHttpServer {
    /// The name only (SMS-05: `McpHttpServer.toString()` prints only the name).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpHttpServer")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl fmt::Display for McpHttpServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)
    }
}

/// Why a server is not connected (SMS-07). Short codes; never a URL or a header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum StatusReason {
    /// The server could not be reached, refused the connection or the `initialize`, its name
    /// resolved to a non-public address (SMS-04), or the connection was lost.
    ConnectFailed,
    /// `initialize` or `tools/list` got no answer in time.
    Timeout,
    /// `tools/list` failed or answered something that is not a tool list.
    ListFailed,
    /// More than the per-server tool limit (MCP-32); the server contributes no tools.
    TooManyTools,
    /// The server answered `initialize` with a revision capbridge does not speak (MCP-21).
    ProtocolVersion,
}

impl StatusReason {
    /// The wire code (`connect_failed`, `timeout`, `list_failed`, `too_many_tools`,
    /// `protocol_version`).
    pub fn code(self) -> &'static str {
        match self {
            StatusReason::ConnectFailed => "connect_failed",
            StatusReason::Timeout => "timeout",
            StatusReason::ListFailed => "list_failed",
            StatusReason::TooManyTools => "too_many_tools",
            StatusReason::ProtocolVersion => "protocol_version",
        }
    }
}

impl fmt::Display for StatusReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code())
    }
}

/// One server's status as the session shows it (SMS-07): `{name, connected, toolCount,
/// reason}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerStatus {
    /// The server's name.
    pub name: String,
    /// Whether its tools are in the catalog now.
    pub connected: bool,
    /// How many of its tools are in the catalog.
    pub tool_count: usize,
    /// Why it is not connected; `None` when connected.
    pub reason: Option<StatusReason>,
}

/// A source of "now" for the retry hold-off (SMS-08); tests inject a manual one.
pub trait Clock: Send + Sync + fmt::Debug {
    /// The current instant.
    fn now(&self) -> Instant;
}

/// [`Instant::now`].
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Instant {
        Instant::now()
    }
}

/// A clock that moves only when told to.
#[derive(Debug)]
pub struct ManualClock {
    base: Instant,
    offset: Mutex<Duration>,
}

impl ManualClock {
    /// A clock standing at the real "now".
    pub fn new() -> Self {
        Self {
            base: Instant::now(),
            offset: Mutex::new(Duration::ZERO),
        }
    }

    /// Moves the clock forward.
    pub fn advance(&self, by: Duration) {
        *self.offset.lock().unwrap_or_else(PoisonError::into_inner) += by;
    }
}

impl Default for ManualClock {
    fn default() -> Self {
        Self::new()
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Instant {
        self.base + *self.offset.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Settings of a session's server set.
#[derive(Debug, Clone)]
pub struct SessionHttpConfig {
    /// Which URLs and addresses are allowed (SMS-03, SMS-04).
    pub policy: SessionUrlPolicy,
    /// Deadline of the connect + `initialize` round trip, and separately of the `tools/list`
    /// round trips.
    pub handshake_timeout: Duration,
    /// Deadline of one `tools/call`, queue time included (MCP-24).
    pub call_timeout: Duration,
    /// No retry within this long of a failure (SMS-08).
    pub retry_hold_off: Duration,
    /// Tools per server before `too_many_tools` (MCP-32).
    pub max_tools: usize,
    /// The clock of the hold-off.
    pub clock: Arc<dyn Clock>,
}

impl Default for SessionHttpConfig {
    fn default() -> Self {
        Self {
            policy: SessionUrlPolicy::strict(),
            handshake_timeout: HANDSHAKE_TIMEOUT,
            call_timeout: DEFAULT_CALL_TIMEOUT,
            retry_hold_off: RETRY_HOLD_OFF,
            max_tools: TOOLS_PER_SERVER_DEFAULT,
            clock: Arc::new(SystemClock),
        }
    }
}

type Service = RunningService<RoleClient, SessionClient>;

/// The client side of one connection: our `initialize` parameters, and a flag the server's
/// `notifications/tools/list_changed` raises (the tools are listed again before the next
/// task, and the catalog is told through [`CapabilitySource::changes`]).
#[derive(Debug, Clone)]
struct SessionClient {
    config: ClientConfig,
    list_changed: Arc<std::sync::atomic::AtomicBool>,
    changes: broadcast::Sender<()>,
}

impl ClientHandler for SessionClient {
    fn get_info(&self) -> ClientConfig {
        self.config.clone()
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.list_changed
            .store(true, std::sync::atomic::Ordering::Relaxed);
        let _ = self.changes.send(());
    }
}

/// A live connection and the tools it listed.
struct Conn {
    service: Service,
    listed: Mutex<Listed>,
    list_changed: Arc<std::sync::atomic::AtomicBool>,
}

/// The tools of one connection, replaced when the server says they changed.
struct Listed {
    tools: Vec<Capability>,
    names: HashSet<String>,
}

impl Listed {
    fn new(tools: Vec<Capability>) -> Self {
        let names = tools.iter().map(|c| c.id.name.clone()).collect();
        Self { tools, names }
    }
}

impl Conn {
    fn peer(&self) -> &Peer<RoleClient> {
        self.service.peer()
    }

    fn listed(&self) -> std::sync::MutexGuard<'_, Listed> {
        self.listed.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[derive(Default)]
struct SlotState {
    conn: Option<Arc<Conn>>,
    reason: Option<StatusReason>,
    last_failure: Option<Instant>,
    issues: Vec<ProviderIssue>,
}

struct Slot {
    server: McpHttpServer,
    state: Mutex<SlotState>,
    /// Serializes connection attempts of this server.
    connecting: tokio::sync::Mutex<()>,
    /// At most [`MAX_CALLS_IN_FLIGHT`] calls in flight; the rest wait FIFO (MCP-24).
    calls: Semaphore,
    attempts: std::sync::atomic::AtomicU64,
}

impl Slot {
    fn state(&self) -> std::sync::MutexGuard<'_, SlotState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The per-session set of HTTP MCP servers: connects them, keeps their status, and serves
/// their tools as a [`CapabilitySource`] ([`Source::SessionMcp`]).
pub struct SessionMcpServers {
    slots: Vec<Slot>,
    config: SessionHttpConfig,
    changes: broadcast::Sender<()>,
}

impl fmt::Debug for SessionMcpServers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SessionMcpServers")
            .field("servers", &self.statuses())
            .finish_non_exhaustive()
    }
}

impl SessionMcpServers {
    /// Validates the batch (SMS-02: any failure → `invalid_params`, no session), then
    /// connects every server concurrently. A server that cannot be used does not fail the
    /// call: see [`SessionMcpServers::statuses`] (SMS-07).
    pub async fn start(
        servers: Vec<McpHttpServer>,
        config: SessionHttpConfig,
    ) -> Result<SessionMcpServers, BatchError> {
        validate_batch(&servers, config.policy)?;
        let (changes, _) = broadcast::channel(16);
        let set = SessionMcpServers {
            slots: servers
                .into_iter()
                .map(|server| Slot {
                    server,
                    state: Mutex::new(SlotState::default()),
                    connecting: tokio::sync::Mutex::new(()),
                    calls: Semaphore::new(MAX_CALLS_IN_FLIGHT),
                    attempts: std::sync::atomic::AtomicU64::new(0),
                })
                .collect(),
            config,
            changes,
        };
        futures::future::join_all(set.slots.iter().map(|s| set.connect_slot(s))).await;
        Ok(set)
    }

    /// The status of every server, in batch order (SMS-07).
    pub fn statuses(&self) -> Vec<ServerStatus> {
        self.slots
            .iter()
            .map(|s| {
                let st = s.state();
                ServerStatus {
                    name: s.server.name.clone(),
                    connected: st.conn.is_some(),
                    tool_count: st.conn.as_ref().map_or(0, |c| c.listed().tools.len()),
                    reason: if st.conn.is_some() { None } else { st.reason },
                }
            })
            .collect()
    }

    /// How many connection attempts were made to server `name` (diagnostics and tests).
    pub fn connect_attempts(&self, name: &str) -> u64 {
        self.slots
            .iter()
            .find(|s| s.server.name == name)
            .map_or(0, |s| s.attempts.load(std::sync::atomic::Ordering::Relaxed))
    }

    /// Before each task (SMS-08): retries every server that is not connected, unless its
    /// last failure was less than the hold-off ago. Returns the statuses afterwards.
    pub async fn refresh_before_task(&self) -> Vec<ServerStatus> {
        let now = self.config.clock.now();
        let due: Vec<&Slot> = self
            .slots
            .iter()
            .filter(|s| {
                let st = s.state();
                st.conn.is_none()
                    && st.last_failure.is_none_or(|t| {
                        now.saturating_duration_since(t) >= self.config.retry_hold_off
                    })
            })
            .collect();
        futures::future::join_all(due.into_iter().map(|s| self.connect_slot(s))).await;
        let changed: Vec<&Slot> = self
            .slots
            .iter()
            .filter(|s| {
                s.state().conn.as_ref().is_some_and(|c| {
                    c.list_changed
                        .swap(false, std::sync::atomic::Ordering::Relaxed)
                })
            })
            .collect();
        futures::future::join_all(changed.into_iter().map(|s| self.relist_slot(s))).await;
        self.statuses()
    }

    /// The server said its tools changed: list them again on the same connection. A failure
    /// takes the server out like a failed connection attempt (with the hold-off).
    async fn relist_slot(&self, slot: &Slot) {
        let _guard = slot.connecting.lock().await;
        let Some(conn) = slot.state().conn.clone() else {
            return;
        };
        let outcome = list_tools(conn.peer(), &slot.server.name, &self.config).await;
        let mut st = slot.state();
        if !st.conn.as_ref().is_some_and(|c| Arc::ptr_eq(c, &conn)) {
            return;
        }
        match outcome {
            Ok(listing) => {
                tracing::info!(
                    server = %slot.server.name,
                    tools = listing.capabilities.len(),
                    "session MCP server tools listed again"
                );
                *conn.listed() = Listed::new(listing.capabilities);
                st.issues = listing.issues;
            }
            Err((reason, issues)) => {
                tracing::info!(
                    server = %slot.server.name,
                    reason = reason.code(),
                    "session MCP server not connected"
                );
                st.conn = None;
                st.reason = Some(reason);
                st.last_failure = Some(self.config.clock.now());
                st.issues = issues;
                conn.service.cancellation_token().cancel();
            }
        }
        drop(st);
        let _ = self.changes.send(());
    }

    /// Closes every connection (the session ended).
    pub async fn close(&self) {
        for s in &self.slots {
            let conn = s.state().conn.take();
            if let Some(conn) = conn {
                conn.service.cancellation_token().cancel();
            }
        }
    }

    async fn connect_slot(&self, slot: &Slot) {
        let _guard = slot.connecting.lock().await;
        if slot.state().conn.is_some() {
            return;
        }
        slot.attempts
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let started = Instant::now();
        let outcome = connect(&slot.server, &self.config, self.changes.clone()).await;
        let mut st = slot.state();
        match outcome {
            Ok((conn, issues)) => {
                tracing::info!(
                    server = %slot.server.name,
                    tools = conn.listed().tools.len(),
                    elapsed_ms = started.elapsed().as_millis() as u64,
                    "session MCP server connected"
                );
                st.conn = Some(Arc::new(conn));
                st.reason = None;
                st.last_failure = None;
                st.issues = issues;
            }
            Err((reason, issues)) => {
                tracing::info!(
                    server = %slot.server.name,
                    reason = reason.code(),
                    elapsed_ms = started.elapsed().as_millis() as u64,
                    "session MCP server not connected"
                );
                st.conn = None;
                st.reason = Some(reason);
                st.last_failure = Some(self.config.clock.now());
                st.issues = issues;
            }
        }
        drop(st);
        let _ = self.changes.send(());
    }

    /// The connection broke under a call: the server's tools leave the catalog, and the next
    /// [`refresh_before_task`](Self::refresh_before_task) tries again (no hold-off: that
    /// attempt is the first failure, if any).
    fn mark_lost(&self, slot: &Slot, conn: &Arc<Conn>) {
        let mut st = slot.state();
        if st.conn.as_ref().is_some_and(|c| Arc::ptr_eq(c, conn)) {
            st.conn = None;
            st.reason = Some(StatusReason::ConnectFailed);
            drop(st);
            conn.service.cancellation_token().cancel();
            tracing::info!(server = %slot.server.name, "session MCP server connection lost");
            let _ = self.changes.send(());
        }
    }
}

fn client_config() -> ClientConfig {
    ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("capbridge", env!("CARGO_PKG_VERSION")),
    )
    .with_protocol_version(latest_version())
}

type ConnectFailure = (StatusReason, Vec<ProviderIssue>);

async fn connect(
    server: &McpHttpServer,
    config: &SessionHttpConfig,
    changes: broadcast::Sender<()>,
) -> Result<(Conn, Vec<ProviderIssue>), ConnectFailure> {
    let fail = |r: StatusReason| (r, Vec::new());
    // Re-checked here so nothing that skipped `start` can reach a forbidden address.
    check_url(server.url(), config.policy).map_err(|_| fail(StatusReason::ConnectFailed))?;
    check_headers(server.headers()).map_err(|_| fail(StatusReason::ConnectFailed))?;
    let mut headers = HashMap::with_capacity(server.headers.len());
    for (name, value) in &server.headers {
        let name = HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| fail(StatusReason::ConnectFailed))?;
        let mut value =
            HeaderValue::from_str(value).map_err(|_| fail(StatusReason::ConnectFailed))?;
        value.set_sensitive(true);
        headers.insert(name, value);
    }
    let client = GuardedHttpClient::new(config.policy, config.handshake_timeout)
        .map_err(|_| fail(StatusReason::ConnectFailed))?;
    let mut transport_config =
        StreamableHttpClientTransportConfig::with_uri(server.url.as_str()).custom_headers(headers);
    transport_config.retry_config = Arc::new(NeverRetry::default());
    let transport = StreamableHttpClientTransport::with_client(client, transport_config);

    let list_changed = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let handler = SessionClient {
        config: client_config(),
        list_changed: list_changed.clone(),
        changes,
    };
    let service =
        match tokio::time::timeout(config.handshake_timeout, handler.serve(transport)).await {
            Err(_) => return Err(fail(StatusReason::Timeout)),
            Ok(Err(_)) => return Err(fail(StatusReason::ConnectFailed)),
            Ok(Ok(service)) => service,
        };
    let supported = service
        .peer_info()
        .is_some_and(|info| is_supported(&info.protocol_version));
    if !supported {
        service.cancellation_token().cancel();
        return Err(fail(StatusReason::ProtocolVersion));
    }
    match list_tools(service.peer(), &server.name, config).await {
        Ok(listing) => Ok((
            Conn {
                service,
                listed: Mutex::new(Listed::new(listing.capabilities)),
                list_changed,
            },
            listing.issues,
        )),
        Err(failure) => {
            service.cancellation_token().cancel();
            Err(failure)
        }
    }
}

async fn list_tools(
    peer: &Peer<RoleClient>,
    server: &str,
    config: &SessionHttpConfig,
) -> Result<Listing, ConnectFailure> {
    let mut raw: Vec<Value> = Vec::new();
    let mut cursor: Option<String> = None;
    for _ in 0..MAX_LIST_PAGES {
        let params = cursor
            .take()
            .map(|c| PaginatedRequestParams::default().with_cursor(Some(c)));
        let page =
            match tokio::time::timeout(config.handshake_timeout, peer.list_tools(params)).await {
                Err(_) => return Err((StatusReason::Timeout, Vec::new())),
                Ok(Err(ServiceError::Timeout { .. })) => {
                    return Err((StatusReason::Timeout, Vec::new()));
                }
                Ok(Err(_)) => return Err((StatusReason::ListFailed, Vec::new())),
                Ok(Ok(page)) => page,
            };
        for tool in page.tools {
            raw.push(
                serde_json::to_value(&tool).map_err(|_| (StatusReason::ListFailed, Vec::new()))?,
            );
        }
        if raw.len() > config.max_tools.saturating_mul(4).max(1_024) {
            return Err(too_many(config.max_tools));
        }
        match page.next_cursor {
            Some(next) if !next.is_empty() => cursor = Some(next),
            _ => {
                let listing = mcp::capabilities_from_tools_list(
                    Source::SessionMcp,
                    "",
                    server,
                    &Value::Array(raw),
                );
                if listing.capabilities.len() > config.max_tools {
                    let (reason, mut issues) = too_many(config.max_tools);
                    issues.extend(listing.issues);
                    return Err((reason, issues));
                }
                return Ok(listing);
            }
        }
    }
    // A server that pages forever offers more than anyone can use.
    Err(too_many(config.max_tools))
}

fn too_many(max: usize) -> ConnectFailure {
    (
        StatusReason::TooManyTools,
        vec![ProviderIssue::new(
            IssueKind::TooManyTools,
            format!("the server offers more than {max} tools; none are used"),
        )],
    )
}

/// rmcp's marker on the error it synthesizes when a response stream closed before the
/// answer (the request had been sent).
const TRANSPORT_CLOSED_MARKER: &str = "io.modelcontextprotocol/transportClosed";

#[async_trait::async_trait]
impl CapabilitySource for SessionMcpServers {
    fn source(&self) -> Source {
        Source::SessionMcp
    }

    /// The tools of every connected server; servers that are down contribute none (their
    /// status says why). Never fails: a session MCP failure never fails the session (SMS-07).
    async fn list(&self) -> Result<Listing, ListError> {
        let mut listing = Listing::default();
        for s in &self.slots {
            let st = s.state();
            if let Some(conn) = &st.conn {
                listing
                    .capabilities
                    .extend(conn.listed().tools.iter().cloned());
            }
            listing.issues.extend(st.issues.iter().cloned());
        }
        Ok(listing)
    }

    async fn call(
        &self,
        id: &CapabilityId,
        arguments: Map<String, Value>,
        cancel: CancelToken,
    ) -> Result<ToolOutput, CallError> {
        if id.source != Source::SessionMcp || !id.provider.is_empty() {
            return Err(CallError::UnknownTool);
        }
        let slot = self
            .slots
            .iter()
            .find(|s| s.server.name == id.server)
            .ok_or(CallError::UnknownTool)?;
        let conn = {
            let st = slot.state();
            match &st.conn {
                Some(c) => c.clone(),
                None => {
                    return Err(CallError::Unavailable {
                        reason: st
                            .reason
                            .unwrap_or(StatusReason::ConnectFailed)
                            .code()
                            .to_owned(),
                    });
                }
            }
        };
        if !conn.listed().names.contains(&id.name) {
            return Err(CallError::UnknownTool);
        }
        let started = Instant::now();
        let deadline = tokio::time::Instant::now() + self.config.call_timeout;
        // Queue time counts against the deadline (MCP-24).
        let _permit = tokio::select! {
            biased;
            _ = cancel.cancelled() => return Err(CallError::Cancelled),
            p = tokio::time::timeout_at(deadline, slot.calls.acquire()) => match p {
                Ok(Ok(p)) => p,
                Ok(Err(_)) => return Err(CallError::Closed { dispatched: false }),
                // Queue time counts against the caller's deadline (MCP-24, as McpClient).
                Err(_) => return Err(CallError::Timeout),
            },
        };
        if conn.service.is_closed() {
            self.mark_lost(slot, &conn);
            return Err(CallError::Closed { dispatched: false });
        }
        let params = CallToolRequestParams::new(id.name.clone()).with_arguments(arguments);
        // Dropping rmcp's call future sends `notifications/cancelled` (MCP-29).
        let outcome = tokio::select! {
            biased;
            _ = cancel.cancelled() => Err(CallError::Cancelled),
            _ = tokio::time::sleep_until(deadline) => Err(CallError::Timeout),
            r = conn.peer().call_tool(params) => map_call(r),
        };
        if matches!(outcome, Err(CallError::Closed { .. })) {
            self.mark_lost(slot, &conn);
        }
        tracing::info!(
            server = %slot.server.name,
            tool = %id.name,
            elapsed_ms = started.elapsed().as_millis() as u64,
            outcome = match &outcome {
                Ok(o) if o.is_error => "tool_error",
                Ok(_) => "ok",
                Err(e) => call_error_code(e),
            },
            "session MCP tools/call"
        );
        outcome
    }

    fn changes(&self) -> BoxStream<'static, ()> {
        let rx = self.changes.subscribe();
        futures::stream::unfold(rx, |mut rx| async move {
            match rx.recv().await {
                Ok(()) | Err(broadcast::error::RecvError::Lagged(_)) => Some(((), rx)),
                Err(broadcast::error::RecvError::Closed) => None,
            }
        })
        .boxed()
    }
}

fn call_error_code(e: &CallError) -> &'static str {
    match e {
        CallError::Rejected { .. } => "rejected",
        CallError::Closed { dispatched: true } => "closed_dispatched",
        CallError::Closed { dispatched: false } => "closed_not_dispatched",
        CallError::Timeout => "timeout",
        CallError::Cancelled => "cancelled",
        CallError::Unavailable { .. } => "unavailable",
        CallError::InvalidResult => "invalid_result",
        _ => "other",
    }
}

fn map_call(r: Result<rmcp::model::CallToolResult, ServiceError>) -> Result<ToolOutput, CallError> {
    match r {
        Ok(result) => serde_json::to_value(&result)
            .ok()
            .and_then(from_call_result)
            .ok_or(CallError::InvalidResult),
        Err(ServiceError::McpError(e)) => {
            let closed = e
                .data
                .as_ref()
                .and_then(Value::as_object)
                .is_some_and(|d| d.contains_key(TRANSPORT_CLOSED_MARKER));
            if closed {
                Err(CallError::Closed { dispatched: true })
            } else {
                Err(CallError::Rejected {
                    message: clean_message(&e.message),
                })
            }
        }
        Err(ServiceError::TransportSend(e)) => Err(CallError::Closed {
            dispatched: !http::is_connect_error(&e),
        }),
        Err(ServiceError::TransportClosed) => Err(CallError::Closed { dispatched: true }),
        Err(ServiceError::Timeout { .. }) => Err(CallError::Timeout),
        Err(ServiceError::Cancelled { .. }) => Err(CallError::Cancelled),
        Err(_) => Err(CallError::InvalidResult),
    }
}
