//! [`McpSource`]: one provider server as a [`CapabilitySource`] — connects on first use,
//! caches `tools/list` until `list_changed` (MCP-27), reconnects on the next use after the
//! provider died (MCP-28), and closes a connection idle for [`IDLE_DISCONNECT`].

use std::sync::Arc;
use std::time::Duration;

use binder_channel::Channel;
use binder_channel::binder::{ConnectOptions, ServiceKind};
use capability_model::{
    CallError, CancelToken, CapabilityId, CapabilitySource, ListError, Listing, Source, ToolOutput,
};
use futures::future::BoxFuture;
use futures::stream::BoxStream;
use serde_json::{Map, Value};
use tokio::sync::broadcast;

use crate::client::McpClient;
use crate::error::ClientError;
use crate::limits::{DEFAULT_CALL_TIMEOUT, IDLE_DISCONNECT};

/// Opens a fresh channel to the provider (binds the service and calls `IMcpService.open`).
/// The error is a short reason code such as `bind_failed`.
pub type Connector = Arc<dyn Fn() -> BoxFuture<'static, Result<Channel, String>> + Send + Sync>;

/// One provider server (plugin + server name) as a capability source.
pub struct McpSource {
    plugin: String,
    server: String,
    connector: Connector,
    call_timeout: Duration,
    idle: Duration,
    state: tokio::sync::Mutex<SourceState>,
    changes: broadcast::Sender<()>,
}

impl std::fmt::Debug for McpSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpSource")
            .field("plugin", &self.plugin)
            .field("server", &self.server)
            .finish_non_exhaustive()
    }
}

#[derive(Default)]
struct SourceState {
    client: Option<McpClient>,
    /// The last listing and the `list_changed` generation it was taken at.
    cached: Option<(u64, Listing)>,
}

impl McpSource {
    /// A source for `server` of `plugin`, connecting through `connector` on first use.
    pub fn new(plugin: &str, server: &str, connector: Connector) -> McpSource {
        let (changes, _) = broadcast::channel(16);
        McpSource {
            plugin: plugin.to_owned(),
            server: server.to_owned(),
            connector,
            call_timeout: DEFAULT_CALL_TIMEOUT,
            idle: IDLE_DISCONNECT,
            state: tokio::sync::Mutex::new(SourceState::default()),
            changes,
        }
    }

    /// Sets the deadline of each `tools/call`, queue time included (MCP-24).
    pub fn with_call_timeout(mut self, timeout: Duration) -> McpSource {
        self.call_timeout = timeout;
        self
    }

    /// Whether a connection is open now.
    pub async fn is_connected(&self) -> bool {
        let state = self.state.lock().await;
        state.client.as_ref().is_some_and(|c| !c.is_closed())
    }

    /// The live client, connecting (again) when there is none or the last one ended.
    async fn client(&self, state: &mut SourceState) -> Result<McpClient, String> {
        if let Some(client) = state.client.as_ref().filter(|c| !c.is_closed()) {
            return Ok(client.clone());
        }
        state.cached = None;
        let channel = (self.connector)().await?;
        let client = McpClient::connect(channel).await.map_err(|e| match e {
            ClientError::ProtocolVersion => "protocol_version".to_owned(),
            ClientError::Timeout => "timeout".to_owned(),
            _ => "connect_failed".to_owned(),
        })?;
        tracing::debug!(plugin = %self.plugin, server = %self.server, "mcp provider connected");
        // list_changed → the catalog re-lists (MCP-27).
        let mut notes = client.subscribe_list_changed();
        let changes = self.changes.clone();
        tokio::spawn(async move {
            while let Ok(()) | Err(broadcast::error::RecvError::Lagged(_)) = notes.recv().await {
                let _ = changes.send(());
            }
        });
        tokio::spawn(close_when_idle(client.clone(), self.idle));
        state.client = Some(client.clone());
        Ok(client)
    }
}

/// Opens channels to the `IMcpService` at `uri` through the rsbinder carrier (kernel Binder
/// `binder://name`, or rsbinder RPC on Linux hosts, see [`binder_channel::binder::rpc_uri`]).
/// Failures are reported as the reason `connect_failed`.
pub fn binder_connector(uri: rsbinder::Uri) -> Connector {
    Arc::new(move || {
        let uri = uri.clone();
        Box::pin(async move {
            binder_channel::binder::connect(uri, ServiceKind::Mcp, ConnectOptions::default())
                .await
                .map(|opened| opened.channel)
                .map_err(|e| {
                    tracing::info!(error = %e, "mcp provider connect failed");
                    "connect_failed".to_owned()
                })
        })
    })
}

/// Closes `client` once nothing has used it for `idle` (MCP-27 step 4).
async fn close_when_idle(client: McpClient, idle: Duration) {
    loop {
        if client.is_closed() {
            return;
        }
        let now = tokio::time::Instant::now();
        let due = client.last_used() + idle;
        if now < due {
            tokio::time::sleep_until(due).await;
        } else if client.requests_in_flight() > 0 {
            // A long call is not idleness; its end touches the connection again.
            tokio::time::sleep(idle).await;
        } else {
            tracing::debug!("closing an idle mcp connection");
            client.close().await;
            return;
        }
    }
}

#[async_trait::async_trait]
impl CapabilitySource for McpSource {
    fn source(&self) -> Source {
        Source::Mcp
    }

    async fn list(&self) -> Result<Listing, ListError> {
        // The lock covers connecting and the cache, not the round trip, so a slow listing
        // does not hold up calls.
        let (client, cached) = {
            let mut state = self.state.lock().await;
            let client = self
                .client(&mut state)
                .await
                .map_err(|reason| ListError::Unavailable { reason })?;
            (client, state.cached.clone())
        };
        let generation = client.list_generation();
        if let Some((_, listing)) = cached.filter(|(at, _)| *at == generation) {
            return Ok(listing);
        }
        let listing = client
            .list_capabilities(&self.plugin, &self.server)
            .await
            .map_err(|e| match e {
                ClientError::InvalidResponse(_) => ListError::Invalid(e.to_string()),
                other => ListError::Unavailable {
                    reason: other.tool_error_code().to_owned(),
                },
            })?;
        let mut state = self.state.lock().await;
        if state
            .client
            .as_ref()
            .is_some_and(|c| c.same_connection(&client))
        {
            state.cached = Some((generation, listing.clone()));
        }
        Ok(listing)
    }

    async fn call(
        &self,
        id: &CapabilityId,
        arguments: Map<String, Value>,
        cancel: CancelToken,
    ) -> Result<ToolOutput, CallError> {
        if id.source != Source::Mcp || id.provider != self.plugin || id.server != self.server {
            return Err(CallError::UnknownTool);
        }
        let client = {
            let mut state = self.state.lock().await;
            self.client(&mut state)
                .await
                .map_err(|reason| CallError::Unavailable { reason })?
        };
        // Never retried, whatever happens (MCP-25).
        client
            .call_tool(&id.name, arguments, self.call_timeout, &cancel)
            .await
            .map_err(ClientError::into_call_error)
    }

    fn changes(&self) -> BoxStream<'static, ()> {
        let rx = self.changes.subscribe();
        Box::pin(futures::stream::unfold(rx, |mut rx| async move {
            match rx.recv().await {
                Ok(()) | Err(broadcast::error::RecvError::Lagged(_)) => Some(((), rx)),
                Err(broadcast::error::RecvError::Closed) => None,
            }
        }))
    }
}
