//! The in-memory carrier: two channel ends in one process, each end's [`Link`] delivering
//! straight into the other's [`InboundSender`]. Used by tests and benches, and by layers
//! above (MCP, ACP) to run both sides in one process. Also a [`ScriptedPeer`], a hand-driven
//! far end for testing how a channel reacts to a peer that misbehaves.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use crate::carrier::{AttachError, InboundSender, Link, LinkError, PeerIdentity};
use crate::channel::Channel;

/// One direction of the pair: calls go to the peer's inbound side, tagged with our UID as the
/// kernel would tag them.
#[derive(Debug)]
struct MemoryLink {
    own_uid: u32,
    peer: InboundSender,
    alive: Arc<AtomicBool>,
}

impl MemoryLink {
    fn check(&self) -> Result<(), LinkError> {
        // Like a oneway call to a live process whose channel already closed, a call to a
        // closed end succeeds and is ignored there.
        if self.alive.load(Ordering::Acquire) {
            Ok(())
        } else {
            Err(LinkError::DeadObject)
        }
    }
}

impl Link for MemoryLink {
    fn send(&self, message: &str) -> Result<(), LinkError> {
        self.send_owned(message.to_owned())
    }

    fn send_owned(&self, message: String) -> Result<(), LinkError> {
        self.check()?;
        self.peer.send(self.own_uid, message);
        Ok(())
    }

    fn close(&self, reason: &str) -> Result<(), LinkError> {
        self.check()?;
        self.peer.close(self.own_uid, reason);
        Ok(())
    }

    fn ack(&self, consumed: i64) -> Result<(), LinkError> {
        self.check()?;
        self.peer.ack(self.own_uid, consumed);
        Ok(())
    }

    fn is_alive(&self) -> bool {
        self.alive.load(Ordering::Acquire)
    }
}

/// A connected pair: the first end's peer is `uid_b`, the second's is `uid_a`. Requires a
/// tokio runtime.
pub fn pair(uid_a: u32, uid_b: u32) -> Result<(Channel, Channel), AttachError> {
    let (a, b, _) = pair_with_death(uid_a, uid_b)?;
    Ok((a, b))
}

/// Like [`pair`], plus a [`DeathSwitch`] that simulates the death of either side's process.
pub fn pair_with_death(
    uid_a: u32,
    uid_b: u32,
) -> Result<(Channel, Channel, DeathSwitch), AttachError> {
    let (inbound_a, pending_a) = Channel::prepare(PeerIdentity::uid(uid_b));
    let (inbound_b, pending_b) = Channel::prepare(PeerIdentity::uid(uid_a));
    let alive_a = Arc::new(AtomicBool::new(true));
    let alive_b = Arc::new(AtomicBool::new(true));
    let link_a_to_b = MemoryLink {
        own_uid: uid_a,
        peer: inbound_b.clone(),
        alive: alive_b.clone(),
    };
    let link_b_to_a = MemoryLink {
        own_uid: uid_b,
        peer: inbound_a.clone(),
        alive: alive_a.clone(),
    };
    let a = pending_a.attach(Arc::new(link_a_to_b))?;
    let b = pending_b.attach(Arc::new(link_b_to_a))?;
    let switch = DeathSwitch {
        sides: [(alive_a, inbound_a), (alive_b, inbound_b)],
    };
    Ok((a, b, switch))
}

/// Simulates process death in a [`pair_with_death`]: the dead side's link calls fail, and
/// both ends get a death notification (the survivor from `linkToDeath`, the dead one because
/// nothing of it runs any more).
#[derive(Debug, Clone)]
pub struct DeathSwitch {
    sides: [(Arc<AtomicBool>, InboundSender); 2],
}

impl DeathSwitch {
    /// Kills the first end's process.
    pub fn kill_first(&self) {
        self.kill(0);
    }

    /// Kills the second end's process.
    pub fn kill_second(&self) {
        self.kill(1);
    }

    fn kill(&self, index: usize) {
        let (alive, _) = &self.sides[index];
        alive.store(false, Ordering::Release);
        for (_, inbound) in &self.sides {
            inbound.peer_died();
        }
    }
}

/// An outbound call the channel under test made on its [`ScriptedPeer`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PeerCall {
    /// `send(message)`.
    Send(String),
    /// `close(reason)`.
    Close(String),
    /// `ack(consumed)`.
    Ack(i64),
}

#[derive(Debug, Default)]
struct Script {
    calls: Mutex<Vec<PeerCall>>,
    fail_next: AtomicUsize,
    dead: AtomicBool,
}

#[derive(Debug)]
struct ScriptLink(Arc<Script>);

impl ScriptLink {
    fn record(&self, call: PeerCall) -> Result<(), LinkError> {
        if self.0.dead.load(Ordering::Acquire) {
            return Err(LinkError::DeadObject);
        }
        let failing = self
            .0
            .fail_next
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1))
            .is_ok();
        if failing {
            return Err(LinkError::DeadObject);
        }
        self.0
            .calls
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .push(call);
        Ok(())
    }
}

impl Link for ScriptLink {
    fn send(&self, message: &str) -> Result<(), LinkError> {
        self.record(PeerCall::Send(message.to_owned()))
    }

    fn close(&self, reason: &str) -> Result<(), LinkError> {
        self.record(PeerCall::Close(reason.to_owned()))
    }

    fn ack(&self, consumed: i64) -> Result<(), LinkError> {
        self.record(PeerCall::Ack(consumed))
    }

    fn is_alive(&self) -> bool {
        !self.0.dead.load(Ordering::Acquire)
    }
}

/// A far end driven by hand: it records what the channel calls on it and lets a test make
/// inbound calls with any UID, in any order — including ones a correct peer never makes.
#[derive(Debug, Clone)]
pub struct ScriptedPeer {
    script: Arc<Script>,
    inbound: InboundSender,
    uid: u32,
}

/// A channel bound to `peer_uid` whose far end is a [`ScriptedPeer`]. Requires a tokio
/// runtime.
pub fn scripted(peer_uid: u32) -> Result<(Channel, ScriptedPeer), AttachError> {
    let (inbound, pending) = Channel::prepare(PeerIdentity::uid(peer_uid));
    let script = Arc::new(Script::default());
    let channel = pending.attach(Arc::new(ScriptLink(script.clone())))?;
    Ok((
        channel,
        ScriptedPeer {
            script,
            inbound,
            uid: peer_uid,
        },
    ))
}

impl ScriptedPeer {
    /// The calls made on this peer so far, oldest first.
    pub fn calls(&self) -> Vec<PeerCall> {
        self.script
            .calls
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone()
    }

    /// The messages sent to this peer so far.
    pub fn sent(&self) -> Vec<String> {
        self.calls()
            .into_iter()
            .filter_map(|call| match call {
                PeerCall::Send(message) => Some(message),
                _ => None,
            })
            .collect()
    }

    /// The last `ack` received, if any.
    pub fn last_ack(&self) -> Option<i64> {
        self.calls().into_iter().rev().find_map(|call| match call {
            PeerCall::Ack(count) => Some(count),
            _ => None,
        })
    }

    /// Makes the next `n` calls on this peer fail like a full buffer (`DEAD_OBJECT` while
    /// alive).
    pub fn fail_next_calls(&self, n: usize) {
        self.script.fail_next.store(n, Ordering::Release);
    }

    /// Marks the peer dead (calls fail, `is_alive` is false) and delivers the death
    /// notification.
    pub fn die(&self) {
        self.script.dead.store(true, Ordering::Release);
        self.inbound.peer_died();
    }

    /// `send(message)` from the bound UID.
    pub fn send(&self, message: impl Into<String>) {
        self.inbound.send(self.uid, message.into());
    }

    /// `ack(consumed)` from the bound UID.
    pub fn ack(&self, consumed: i64) {
        self.inbound.ack(self.uid, consumed);
    }

    /// `close(reason)` from the bound UID.
    pub fn close(&self, reason: &str) {
        self.inbound.close(self.uid, reason);
    }

    /// The raw inbound side, for calls from another UID or with raw UTF-16.
    pub fn inbound(&self) -> &InboundSender {
        &self.inbound
    }
}
