//! The peer's receiving end as a [`Link`], and death notifications as
//! [`InboundSender::peer_died`].

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use rsbinder::{DeathRecipient, SIBinder, StatusCode, Strong, WIBinder};

use super::aidl::org::agentos::channel::IChannel::IChannel;
use crate::{InboundSender, Link, LinkError};

/// Forwards a death notification (`linkToDeath`, or an RPC session that ended) to the channel
/// (CH-42).
pub(crate) struct DeathForward {
    inbound: InboundSender,
    died: AtomicBool,
}

impl DeathForward {
    /// A recipient for the channel behind `inbound`.
    pub(crate) fn new(inbound: InboundSender) -> Arc<DeathForward> {
        Arc::new(DeathForward {
            inbound,
            died: AtomicBool::new(false),
        })
    }

    /// Whether a death notification arrived.
    pub(crate) fn has_died(&self) -> bool {
        self.died.load(Ordering::Acquire)
    }
}

impl DeathRecipient for DeathForward {
    fn binder_died(&self, _who: &WIBinder) {
        self.died.store(true, Ordering::Release);
        tracing::debug!("binder-channel: peer died");
        self.inbound.peer_died();
    }
}

/// The peer's `IChannel` proxy as the outbound half of a channel.
pub(crate) struct BinderLink {
    peer: Strong<dyn IChannel>,
    death: Arc<DeathForward>,
    /// Our receiving end, kept alive for as long as the channel can be called.
    _local: SIBinder,
    /// Run when the channel has finished with the carrier (closes the client's RPC session).
    /// When set, `close` waits for the peer to have dispatched it first (see [`Link::close`]).
    on_drop: Option<Box<dyn FnOnce() + Send + Sync>>,
}

impl BinderLink {
    /// A link to `peer`, watched by `death` (already linked), keeping `local` alive.
    pub(crate) fn new(
        peer: Strong<dyn IChannel>,
        death: Arc<DeathForward>,
        local: SIBinder,
        on_drop: Option<Box<dyn FnOnce() + Send + Sync>>,
    ) -> BinderLink {
        BinderLink {
            peer,
            death,
            _local: local,
            on_drop,
        }
    }
}

impl Drop for BinderLink {
    fn drop(&mut self) {
        if let Some(on_drop) = self.on_drop.take() {
            on_drop();
        }
    }
}

/// Maps a failed oneway call. `DEAD_OBJECT` is not proof of death (CH-43): the channel asks
/// [`Link::is_alive`] next.
fn link_error(status: &rsbinder::Status) -> LinkError {
    match status.transaction_error() {
        StatusCode::DeadObject => LinkError::DeadObject,
        other => LinkError::Transport(format!("{other:?}")),
    }
}

impl Link for BinderLink {
    fn send(&self, message: &str) -> Result<(), LinkError> {
        self.peer.r#send(message).map_err(|e| link_error(&e))
    }

    fn close(&self, reason: &str) -> Result<(), LinkError> {
        self.peer.r#close(reason).map_err(|e| link_error(&e))?;
        if self.on_drop.is_some() {
            // Our session ends right after this. rsbinder RPC serves one connection's frames
            // in order, but the peer learns of the session's end on any of its connections, so
            // the end could overtake the oneway `close` and read as a death (CH-41, CH-42). A
            // synchronous call on the same connection returns only after the peer's worker has
            // dispatched the `close`: a barrier. Its own failure changes nothing.
            let _ = self.peer.as_binder().ping_binder();
        }
        Ok(())
    }

    fn ack(&self, consumed: i64) -> Result<(), LinkError> {
        self.peer.r#ack(consumed).map_err(|e| link_error(&e))
    }

    fn is_alive(&self) -> bool {
        // Only a death notification or a liveness probe decides (CH-43).
        !self.death.has_died() && self.peer.as_binder().ping_binder().is_ok()
    }
}
