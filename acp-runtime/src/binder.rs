//! `IAcpService` over binder-channel-v1 (CH-02): identity is the channel's kernel UID,
//! resolved by the [`permissions::IdentityResolver`] and admitted by
//! [`permissions::Permissions::open`] (AUT-01, AUT-02); every inbound message is checked
//! against the current authorization and a revoked caller's channel closes (AUT-09, ACP-55).

use std::path::Path;
use std::sync::Arc;

use binder_channel::Channel;
use binder_channel::binder::{Refusal, RefusalReason, ServiceKind, rpc_uri, serve_channels};
use permissions::{AgentosCode, Principal, Uid};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

use crate::errors::RuntimeError;
use crate::runtime::Runtime;

/// The service name `IAcpService` is registered under on the RPC socket.
pub const ACP_SERVICE_NAME: &str = "agentos.acp";

/// A running `IAcpService`; dropping it stops accepting channels.
pub struct BinderServer {
    _guard: Box<dyn std::any::Any + Send>,
    accept: tokio::task::JoinHandle<()>,
}

impl std::fmt::Debug for BinderServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BinderServer").finish_non_exhaustive()
    }
}

impl Drop for BinderServer {
    fn drop(&mut self) {
        self.accept.abort();
    }
}

impl Runtime {
    /// Serves `IAcpService` (service name [`ACP_SERVICE_NAME`]) on the rsbinder RPC Unix
    /// socket at `socket`. Each `open` is admitted by the caller's kernel UID (SO_PEERCRED).
    pub async fn serve_binder(
        self: &Arc<Self>,
        socket: &Path,
    ) -> Result<BinderServer, RuntimeError> {
        let uri = rpc_uri(socket, ACP_SERVICE_NAME);
        let perms = self.perms.clone();
        let admission = move |peer: binder_channel::PeerIdentity| {
            perms.open(Uid(peer.uid)).map(drop).map_err(|r| {
                let reason = match r.code {
                    AgentosCode::AuthorizationPending => RefusalReason::AuthorizationPending,
                    AgentosCode::Denied => RefusalReason::Denied,
                    _ => RefusalReason::NotOpen,
                };
                Refusal::new(reason, "the caller is not admitted")
            })
        };
        let (guard, mut incoming) = serve_channels(uri, ServiceKind::Acp, admission)
            .map_err(|e| RuntimeError::Binder(e.to_string()))?;
        let rt = Arc::clone(self);
        let accept = tokio::spawn(async move {
            while let Some(channel) = incoming.accept().await {
                let uid = channel.peer().uid;
                match rt.cfg.resolver.resolve(Uid(uid)) {
                    Ok(caller) => {
                        let rt = Arc::clone(&rt);
                        tokio::spawn(async move {
                            let _ = rt.serve_channel(channel, Principal::App(caller)).await;
                        });
                    }
                    Err(_) => {
                        channel.close().await;
                    }
                }
            }
        });
        Ok(BinderServer {
            _guard: Box::new(guard),
            accept,
        })
    }

    /// Serves one already-open channel (binder or in-memory) whose kernel identity resolved
    /// to `caller`. Each message is one JSON-RPC message.
    pub async fn serve_channel(
        self: &Arc<Self>,
        channel: Channel,
        caller: Principal,
    ) -> Result<(), RuntimeError> {
        let channel = Arc::new(channel);
        let (ours, theirs) = tokio::io::duplex(256 * 1024);
        let (their_read, mut their_write) = tokio::io::split(theirs);
        let (our_read, our_write) = tokio::io::split(ours);
        let identity = caller.app().map(|c| c.identity.clone());
        let perms = self.perms.clone();
        // Channel → connection reader.
        let inbound = {
            let channel = Arc::clone(&channel);
            tokio::spawn(async move {
                while let Some(msg) = channel.recv().await {
                    if let Some(id) = &identity
                        && !perms.is_caller_allowed(id)
                    {
                        // Revoked: close at once (AUT-09).
                        break;
                    }
                    // A line break inside a message would split it: JSON text never needs
                    // one unescaped, so such a message is malformed either way.
                    let line = msg.replace('\n', " ");
                    if their_write.write_all(line.as_bytes()).await.is_err()
                        || their_write.write_all(b"\n").await.is_err()
                    {
                        break;
                    }
                }
                let _ = their_write.shutdown().await;
                channel.close().await;
            })
        };
        // Connection writer → channel.
        let outbound = {
            let channel = Arc::clone(&channel);
            tokio::spawn(async move {
                let mut lines = BufReader::new(their_read).lines();
                while let Ok(Some(line)) = lines.next_line().await {
                    if channel.send(line).is_err() {
                        break;
                    }
                }
            })
        };
        let r = self.serve_lines(our_read, our_write, caller).await;
        inbound.abort();
        channel.close().await;
        outbound.abort();
        r
    }
}
