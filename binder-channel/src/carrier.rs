//! The carrier abstraction: how a [`Channel`](crate::Channel) reaches its peer.
//!
//! binder-channel-v1 is three oneway calls on the peer's receiving end, `IChannel`
//! (CH-01): `send(String)`, `close(String)`, `ack(long)`. A carrier provides:
//!
//! - **outbound**: a [`Link`], the peer's `IChannel` (for Binder: the rsbinder proxy). Its
//!   calls return at once; a failed oneway call returns a [`LinkError`] and is *not* proof of
//!   death (CH-43) — [`Link::is_alive`] decides.
//! - **inbound**: the carrier's own `IChannel` stub forwards every call it receives, tagged
//!   with the **kernel-given caller UID** (`getCallingUid`, `SO_PEERCRED`), into an
//!   [`InboundSender`]. It only validates and enqueues, then returns (CH-30). UID binding
//!   (CH-08), size limits (CH-12) and window violations (CH-32) are checked in the core, not in
//!   each carrier. A death notification (`linkToDeath`) becomes [`InboundSender::peer_died`].
//!
//! The flow-control core ([`crate::flow::FlowCore`]) sits between the two and is the same for
//! every carrier.
//!
//! # Example: plugging a carrier in
//!
//! Establishment follows CH-05: the receiving end must exist before `open` is called, so a
//! channel is built in two steps — [`Channel::prepare`](crate::Channel::prepare) gives the [`InboundSender`] the stub
//! forwards to (calls that arrive early are queued), and [`PendingChannel::attach`] adds the
//! peer's [`Link`] once `open` has returned it.
//!
//! ```
//! use std::sync::Arc;
//! use binder_channel::{Channel, InboundSender, Link, LinkError, PeerIdentity};
//!
//! /// The peer's receiving end: for rsbinder, a wrapper around the `IChannel` proxy.
//! struct PeerProxy { /* rsbinder: Strong<dyn IChannel> */ }
//!
//! impl Link for PeerProxy {
//!     fn send(&self, message: &str) -> Result<(), LinkError> {
//!         // proxy.send(message) — a oneway transaction; map a failure to LinkError.
//!         # let _ = message;
//!         Ok(())
//!     }
//!     fn close(&self, reason: &str) -> Result<(), LinkError> {
//!         # let _ = reason;
//!         Ok(())
//!     }
//!     fn ack(&self, consumed: i64) -> Result<(), LinkError> {
//!         # let _ = consumed;
//!         Ok(())
//!     }
//!     fn is_alive(&self) -> bool {
//!         true // proxy.as_binder().is_binder_alive()
//!     }
//! }
//!
//! /// Our receiving end: the rsbinder `IChannel` stub. Each method forwards to the channel.
//! struct ChannelStub { inbound: InboundSender }
//!
//! impl ChannelStub {
//!     fn send(&self, message: &str) {
//!         let uid = 10_123; // rsbinder: the calling UID / SO_PEERCRED of this call
//!         self.inbound.send(uid, message.to_owned());
//!     }
//!     fn close(&self, reason: &str) { self.inbound.close(10_123, reason) }
//!     fn ack(&self, consumed: i64) { self.inbound.ack(10_123, consumed) }
//!     fn binder_died(&self) { self.inbound.peer_died() }
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! // Server side, inside `open(client)`: the caller's UID is bound to the channel (CH-05 step 3).
//! let (inbound, pending) = Channel::prepare(PeerIdentity::uid(10_123));
//! let _stub = ChannelStub { inbound };                 // returned from `open`
//! let channel = pending.attach(Arc::new(PeerProxy {}))?; // `client` wrapped as a Link
//! channel.send(r#"{"jsonrpc":"2.0","method":"ping"}"#)?;
//! channel.close().await;
//! # Ok(()) }
//! ```

use std::sync::{Arc, Weak};

use crate::channel::{Shared, Wakes};

/// A failed outbound call on a [`Link`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LinkError {
    /// The oneway call failed: `DeadObjectException` / `DEAD_OBJECT`. This is also what a full
    /// peer buffer looks like, so it is **not** proof of death (CH-43).
    #[error("dead object")]
    DeadObject,
    /// The carrier is gone for good (stream closed, peer dropped).
    #[error("carrier closed")]
    Closed,
    /// Any other transport failure, with a short description (never message content).
    #[error("transport failure: {0}")]
    Transport(String),
}

/// The peer's receiving end: the three oneway calls of `IChannel` (CH-01).
///
/// Calls must not block for long: a Binder oneway call returns once the kernel has the
/// transaction. Calls on one link never overlap (CH-15): the channel's writer task makes them,
/// except that a consumer taking a message makes the ack that falls due itself when no other
/// call is outstanding (so `ack` may come from any thread).
pub trait Link: Send + Sync + 'static {
    /// `send(message)`, transaction 1: one complete JSON-RPC message.
    fn send(&self, message: &str) -> Result<(), LinkError>;
    /// `send(message)` handing over the message itself. The writer calls this one; override it
    /// when the carrier can keep the `String` (an in-process carrier) to save a copy.
    fn send_owned(&self, message: String) -> Result<(), LinkError> {
        self.send(&message)
    }
    /// `close(reason)`, transaction 2. `reason` is a CH-45 class name.
    fn close(&self, reason: &str) -> Result<(), LinkError>;
    /// `ack(consumed)`, transaction 3: cumulative count of messages processed.
    fn ack(&self, consumed: i64) -> Result<(), LinkError>;
    /// Whether the peer is alive (`IBinder.isBinderAlive()`). Consulted after a failed call:
    /// only this or a death notification proves death (CH-43).
    fn is_alive(&self) -> bool {
        true
    }
}

/// Who is on the other end, as the kernel reported it (never read from a message).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PeerIdentity {
    /// The peer's UID (`getCallingUid` at `open`, `SO_PEERCRED`, or the local user).
    pub uid: u32,
    /// The peer's PID when the kernel reports one (`SO_PEERCRED`, `getCallingPid`).
    pub pid: Option<i32>,
}

impl PeerIdentity {
    /// An identity with a UID only.
    pub fn uid(uid: u32) -> PeerIdentity {
        PeerIdentity { uid, pid: None }
    }
}

/// Where a carrier delivers the calls its receiving end gets (CH-30: validate, enqueue,
/// return). Cheap to clone; safe to call from any thread, including Binder threads. Calls
/// after the channel has gone away are ignored.
#[derive(Clone, Debug)]
pub struct InboundSender {
    shared: Weak<Shared>,
}

impl InboundSender {
    pub(crate) fn new(shared: &Arc<Shared>) -> InboundSender {
        InboundSender {
            shared: Arc::downgrade(shared),
        }
    }

    /// An inbound `send(message)` from `caller_uid`.
    pub fn send(&self, caller_uid: u32, message: String) {
        if let Some(shared) = self.shared.upgrade() {
            shared.inbound(Wakes::Receivers, |core, _| {
                core.on_send(caller_uid, message)
            });
        }
    }

    /// An inbound `send` whose string arrived as raw UTF-16 units (a Binder `String16` that
    /// may hold lone surrogates). Invalid UTF-16 closes the channel as a violation.
    pub fn send_utf16(&self, caller_uid: u32, units: &[u16]) {
        if let Some(shared) = self.shared.upgrade() {
            shared.inbound(Wakes::Receivers, |core, _| {
                core.on_send_utf16(caller_uid, units)
            });
        }
    }

    /// An inbound `close(reason)` from `caller_uid`. The text is not interpreted.
    pub fn close(&self, caller_uid: u32, reason: &str) {
        if let Some(shared) = self.shared.upgrade() {
            tracing::debug!(caller_uid, reason_len = reason.len(), "inbound close");
            shared.inbound(Wakes::All, |core, _| core.on_close(caller_uid));
        }
    }

    /// An inbound `ack(consumed)` from `caller_uid`.
    pub fn ack(&self, caller_uid: u32, consumed: i64) {
        if let Some(shared) = self.shared.upgrade() {
            shared.inbound(Wakes::Writer, |core, now| {
                core.on_ack(caller_uid, consumed, now)
            });
        }
    }

    /// The peer died (death notification, `linkToDeath`) (CH-42).
    pub fn peer_died(&self) {
        if let Some(shared) = self.shared.upgrade() {
            shared.inbound(Wakes::All, |core, _| core.on_peer_died());
        }
    }

    /// Whether the channel still exists and accepts inbound calls.
    pub fn is_connected(&self) -> bool {
        self.shared
            .upgrade()
            .is_some_and(|shared| !shared.is_closed())
    }
}

/// A channel whose receiving end exists but whose peer [`Link`] is not known yet (CH-05:
/// the client creates its receiving end before calling `open`). Inbound calls that arrive
/// meanwhile are queued and checked as usual.
#[derive(Debug)]
pub struct PendingChannel {
    pub(crate) shared: Arc<Shared>,
}

/// Why a channel could not be started.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AttachError {
    /// No tokio runtime is running on this thread, so the writer task cannot be spawned.
    #[error("no tokio runtime to run the channel's writer on")]
    NoRuntime,
}
