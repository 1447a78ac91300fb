//! The accepting side: `IMcpService.open` / `IAcpService.open` served through rsbinder
//! (CH-02, CH-03, CH-05).

use std::sync::Arc;

use rsbinder::{BinderResult, Interface, SIBinder, ServerGuard, Strong, Uri};
use tokio::sync::mpsc;

use super::aidl::org::agentos::channel::IAcpService::{BnAcpService, IAcpService};
use super::aidl::org::agentos::channel::IChannel::IChannel;
use super::aidl::org::agentos::channel::IMcpService::{BnMcpService, IMcpService};
use super::error::BinderCarrierError;
use super::link::{BinderLink, DeathForward};
use super::receiving_end::{LocalEnd, ReceivingEnd, is_remote};
use super::refusal::{Refusal, RefusalReason};
use crate::{Channel, PeerIdentity};

/// Which entry interface a service exports (both have the same `open`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ServiceKind {
    /// `org.agentos.channel.IMcpService`, returned by an MCP provider's `onBind` (CH-03).
    Mcp,
    /// `org.agentos.channel.IAcpService`, exported by the agent (CH-02).
    Acp,
}

impl ServiceKind {
    /// The AIDL descriptor of the entry interface.
    pub fn descriptor(self) -> &'static str {
        match self {
            ServiceKind::Mcp => "org.agentos.channel.IMcpService",
            ServiceKind::Acp => "org.agentos.channel.IAcpService",
        }
    }
}

/// Decides whether a caller may open a channel. It must answer at once: `open` never blocks on
/// a user decision (CH-06); a pending decision is [`RefusalReason::AuthorizationPending`].
pub trait Admission: Send + Sync + 'static {
    /// `Ok` to open a channel for `peer`, or the refusal `open` throws.
    fn admit(&self, peer: PeerIdentity) -> Result<(), Refusal>;
}

impl<F> Admission for F
where
    F: Fn(PeerIdentity) -> Result<(), Refusal> + Send + Sync + 'static,
{
    fn admit(&self, peer: PeerIdentity) -> Result<(), Refusal> {
        self(peer)
    }
}

/// Admits every caller (identity is still bound and checked on every call).
#[derive(Debug, Clone, Copy, Default)]
pub struct AdmitAll;

impl Admission for AdmitAll {
    fn admit(&self, _peer: PeerIdentity) -> Result<(), Refusal> {
        Ok(())
    }
}

/// Channels opened by callers, in the order their `open` returned.
#[derive(Debug)]
pub struct IncomingChannels {
    rx: mpsc::UnboundedReceiver<Channel>,
}

impl IncomingChannels {
    /// The next opened channel; `None` once the service is gone.
    pub async fn accept(&mut self) -> Option<Channel> {
        self.rx.recv().await
    }
}

/// What `open` does, shared by both entry interfaces.
struct Opener {
    runtime: tokio::runtime::Handle,
    admission: Box<dyn Admission>,
    opened: mpsc::UnboundedSender<Channel>,
}

impl Opener {
    /// CH-05 step 3: bind the calling UID, link to the client's death, return our receiving end.
    fn open(&self, client: &Strong<dyn IChannel>) -> BinderResult<Strong<dyn IChannel>> {
        let peer = PeerIdentity {
            uid: rsbinder::get_calling_uid(),
            pid: Some(rsbinder::get_calling_pid()),
        };
        self.admission.admit(peer).map_err(|refusal| {
            tracing::info!(uid = peer.uid, reason = %refusal.reason, "binder-channel: open refused");
            refusal.to_status()
        })?;
        let client_binder = client.as_binder();
        let (inbound, pending) = Channel::prepare(peer);
        let local = ReceivingEnd::new_binder(inbound.clone());
        let death = DeathForward::new(inbound);
        // A local client (both ends in one process, CH-16) cannot die without us.
        if is_remote(&client_binder) {
            client_binder.link_to_death_arc(&death)?;
        }
        let link = BinderLink::new(client.clone(), death, local.clone(), None);
        let channel = {
            let _runtime = self.runtime.enter();
            pending.attach(Arc::new(link)).map_err(|_| {
                Refusal::new(RefusalReason::NotOpen, "the service is shutting down").to_status()
            })?
        };
        if self.opened.send(channel).is_err() {
            return Err(
                Refusal::new(RefusalReason::NotOpen, "no one accepts channels").to_status(),
            );
        }
        tracing::info!(uid = peer.uid, pid = ?peer.pid, "binder-channel: channel opened");
        Ok(LocalEnd::strong(local))
    }
}

struct McpEntry(Opener);

impl Interface for McpEntry {}

impl IMcpService for McpEntry {
    fn r#open(&self, client: &Strong<dyn IChannel>) -> BinderResult<Strong<dyn IChannel>> {
        self.0.open(client)
    }
}

struct AcpEntry(Opener);

impl Interface for AcpEntry {}

impl IAcpService for AcpEntry {
    fn r#open(&self, client: &Strong<dyn IChannel>) -> BinderResult<Strong<dyn IChannel>> {
        self.0.open(client)
    }
}

/// A native `IMcpService` or `IAcpService` whose `open` creates channels, and the stream of
/// the channels it creates.
///
/// Must be called inside a tokio runtime: each channel's writer runs on it.
pub fn channel_service(
    kind: ServiceKind,
    admission: impl Admission,
) -> Result<(SIBinder, IncomingChannels), BinderCarrierError> {
    let runtime =
        tokio::runtime::Handle::try_current().map_err(|_| BinderCarrierError::NoRuntime)?;
    let (opened, rx) = mpsc::unbounded_channel();
    let opener = Opener {
        runtime,
        admission: Box::new(admission),
        opened,
    };
    let binder = match kind {
        ServiceKind::Mcp => BnMcpService::new_binder(McpEntry(opener)).as_binder(),
        ServiceKind::Acp => BnAcpService::new_binder(AcpEntry(opener)).as_binder(),
    };
    Ok((binder, IncomingChannels { rx }))
}

/// Serves a [`channel_service`] under the name [`Uri::service`] at `uri`: kernel Binder
/// (`binder://name`, registered with the service manager) or rsbinder RPC
/// (see [`super::rpc_uri`]). Keep the guard: dropping it stops an RPC server.
pub fn serve_channels(
    uri: Uri,
    kind: ServiceKind,
    admission: impl Admission,
) -> Result<(ServerGuard, IncomingChannels), BinderCarrierError> {
    let name = uri
        .service()
        .ok_or(BinderCarrierError::MissingServiceName)?
        .to_owned();
    let (binder, incoming) = channel_service(kind, admission)?;
    let guard = rsbinder::serve(uri)?.add(&name, binder)?.spawn()?;
    tracing::info!(service = %name, kind = ?kind, "binder-channel: serving");
    Ok((guard, incoming))
}
