//! The sans-IO binder-channel-v1 state machine (GEN-03): sender window, receiver acks,
//! violation detection, close and retry timers. It performs no I/O and reads no clock: every
//! call that depends on time takes `now`, and the driver around it (see [`crate::Channel`])
//! performs the [`Action`]s it returns and reports their outcome.
//!
//! ```
//! use std::time::Instant;
//! use binder_channel::flow::{Action, FlowCore, FlowMode};
//!
//! let now = Instant::now();
//! let mut core = FlowCore::new(FlowMode::Credit, 10_123);
//! core.enqueue("{\"jsonrpc\":\"2.0\",\"method\":\"ping\"}".to_owned())?;
//! let Some(Action::Send(message)) = core.poll_action(now) else { unreachable!() };
//! // ... hand `message` to the carrier, then report how it went:
//! core.on_action_result(Ok(()), true, now);
//! assert_eq!(core.inflight_messages(), 1);
//! core.on_ack(10_123, 1, now); // the peer processed it
//! assert_eq!(core.inflight_messages(), 0);
//! # Ok::<(), binder_channel::SendError>(())
//! ```

use std::collections::VecDeque;
use std::time::Instant;

use crate::limits::{
    ACK_EVERY_CHARS, ACK_EVERY_MESSAGES, ACK_TIMEOUT, CLOSE_FLUSH_TIMEOUT, MAX_BACKLOG_CHARS,
    MAX_INFLIGHT_CHARS, MAX_INFLIGHT_MESSAGES, MAX_MESSAGE_CHARS, RETRY_BACKOFF,
    VIOLATION_UNACKED_CHARS, VIOLATION_UNACKED_MESSAGES,
};
use crate::reason::{CloseClass, CloseReason, Failure, SendError, Violation};
use crate::text::{decode_utf16_strict, utf16_len as utf16_units};

/// True when `text` holds a `\n` or `\r` (which a line carrier cannot frame). A branch-free
/// fold over all bytes, which vectorizes: `str::contains([char; 2])` decodes char by char
/// (~20 µs for 16,000 chars; this takes ~1 µs), and a well-formed message is scanned to the
/// end either way.
fn has_line_break(text: &str) -> bool {
    text.as_bytes().iter().fold(0u8, |found, &byte| {
        found | u8::from(byte == b'\n') | u8::from(byte == b'\r')
    }) != 0
}

/// How the channel is flow-controlled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FlowMode {
    /// binder-channel-v1: the CH-20 window, CH-31 acks and CH-32 violation checks.
    Credit,
    /// A byte stream with its own back-pressure (line-delimited carrier): no acks, no window;
    /// one message is handed to the stream at a time.
    Stream,
}

/// What the driver must do next on the carrier.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Call the peer's `send(message)`.
    Send(String),
    /// Call the peer's `ack(consumed)` with the cumulative processed count.
    Ack(i64),
    /// Call the peer's `close(reason)`; `reason` is the CH-45 class name.
    Close(&'static str),
}

/// Counters for logs, tests and benches.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FlowStats {
    /// Messages handed to the carrier.
    pub sent: u64,
    /// Highest ack the peer sent.
    pub peer_acked: u64,
    /// Messages received and accepted.
    pub received: u64,
    /// Messages handed to the layer above.
    pub processed: u64,
    /// `ack` calls that succeeded.
    pub acks_sent: u64,
    /// `ack` calls that failed and were retried.
    pub ack_failures: u64,
    /// `close` calls that failed and were retried.
    pub close_failures: u64,
}

#[derive(Debug, Clone, Copy)]
struct Retry {
    attempt: usize,
    at: Instant,
}

impl Retry {
    fn first(now: Instant) -> Retry {
        Retry {
            attempt: 0,
            at: now + RETRY_BACKOFF[0],
        }
    }

    fn next(self, now: Instant) -> Retry {
        let attempt = self.attempt + 1;
        let delay = RETRY_BACKOFF[attempt.min(RETRY_BACKOFF.len() - 1)];
        Retry {
            attempt,
            at: now + delay,
        }
    }
}

#[derive(Debug, Clone, Copy)]
enum Phase {
    /// Sending and receiving.
    Open,
    /// Local close requested: drain the backlog until `deadline`, then notify (CH-40).
    Flushing { deadline: Instant },
    /// Closed; the peer's `close` still has to be called (retried per CH-44).
    Notifying { retry: Option<Retry> },
    /// Closed; nothing left to do on the carrier.
    Closed,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outstanding {
    Send,
    /// An ack being handed to the carrier: the cumulative `count`, the processed chars at
    /// that count, and how many unacked messages / chars it covers.
    Ack {
        count: u64,
        chars: u64,
        covers: usize,
        covers_chars: usize,
    },
    Close,
}

/// The binder-channel-v1 state machine for one channel end. See the [module docs](self).
#[derive(Debug)]
pub struct FlowCore {
    mode: FlowMode,
    peer_uid: u32,
    phase: Phase,
    reason: Option<CloseReason>,
    outstanding: Option<Outstanding>,
    // sender
    backlog: VecDeque<(String, usize)>,
    backlog_chars: usize,
    inflight_lens: VecDeque<usize>,
    inflight_chars: usize,
    blocked_since: Option<Instant>,
    // receiver
    inbox: VecDeque<(String, usize)>,
    unacked_lens: VecDeque<usize>,
    unacked_chars: usize,
    processed_chars: u64,
    acked_chars: u64,
    ack_retry: Option<Retry>,
    stats: FlowStats,
}

impl FlowCore {
    /// A new open channel end whose peer the kernel identified as `peer_uid` (CH-08: every
    /// inbound call is checked against it).
    pub fn new(mode: FlowMode, peer_uid: u32) -> FlowCore {
        FlowCore {
            mode,
            peer_uid,
            phase: Phase::Open,
            reason: None,
            outstanding: None,
            backlog: VecDeque::new(),
            backlog_chars: 0,
            inflight_lens: VecDeque::new(),
            inflight_chars: 0,
            blocked_since: None,
            inbox: VecDeque::new(),
            unacked_lens: VecDeque::new(),
            unacked_chars: 0,
            processed_chars: 0,
            acked_chars: 0,
            ack_retry: None,
            stats: FlowStats::default(),
        }
    }

    /// The UID bound to this channel.
    pub fn peer_uid(&self) -> u32 {
        self.peer_uid
    }

    /// The flow mode.
    pub fn mode(&self) -> FlowMode {
        self.mode
    }

    // ----- producer side -------------------------------------------------------------------

    /// Queues `message` for sending (CH-21: never blocks). Refuses a message longer than
    /// [`MAX_MESSAGE_CHARS`] (CH-12) and any message once close has begun (CH-41). A backlog
    /// past [`MAX_BACKLOG_CHARS`] closes the channel with `failure` (CH-22).
    pub fn enqueue(&mut self, message: String) -> Result<(), SendError> {
        if let Some(reason) = &self.reason {
            return Err(SendError::Closed(reason.class()));
        }
        if matches!(self.phase, Phase::Flushing { .. }) {
            return Err(SendError::Closed(CloseClass::Local));
        }
        if self.mode == FlowMode::Stream && has_line_break(&message) {
            return Err(SendError::LineBreak);
        }
        let chars = utf16_units(&message);
        if chars > MAX_MESSAGE_CHARS {
            return Err(SendError::TooLarge { chars });
        }
        let total = self.backlog_chars + chars;
        if total > MAX_BACKLOG_CHARS {
            tracing::warn!(
                peer_uid = self.peer_uid,
                backlog_chars = total,
                "backlog overflow"
            );
            self.fail(CloseReason::Failure(Failure::BacklogOverflow {
                chars: total,
            }));
            return Err(SendError::BacklogOverflow);
        }
        self.backlog_chars = total;
        self.backlog.push_back((message, chars));
        Ok(())
    }

    /// True while the backlog holds fewer than `max_queued_chars` UTF-16 units (CH-24). A
    /// closed channel is never writable.
    pub fn is_writable(&self, max_queued_chars: usize) -> bool {
        self.accepts_messages() && self.backlog_chars < max_queued_chars
    }

    /// True while [`FlowCore::enqueue`] would queue a (well-formed) message.
    pub fn accepts_messages(&self) -> bool {
        self.reason.is_none() && matches!(self.phase, Phase::Open)
    }

    /// Starts a local close: the backlog is flushed for at most [`CLOSE_FLUSH_TIMEOUT`], then
    /// the peer's `close` is called (CH-40). Does nothing if close has already begun.
    pub fn close(&mut self, now: Instant) {
        if self.reason.is_none() && matches!(self.phase, Phase::Open) {
            self.phase = Phase::Flushing {
                deadline: now + CLOSE_FLUSH_TIMEOUT,
            };
        }
    }

    // ----- inbound calls -------------------------------------------------------------------

    /// An inbound `send(message)` from `caller_uid` (CH-08, CH-12, CH-32).
    pub fn on_send(&mut self, caller_uid: u32, message: String) {
        if !self.receiving() || !self.check_uid(caller_uid) {
            return;
        }
        let chars = utf16_units(&message);
        self.accept(message, chars);
    }

    /// An inbound `send` whose text arrived as raw UTF-16 units (a Binder `String16`). A lone
    /// surrogate is a violation: it cannot be a JSON text.
    pub fn on_send_utf16(&mut self, caller_uid: u32, units: &[u16]) {
        if !self.receiving() || !self.check_uid(caller_uid) {
            return;
        }
        // Length first (CH-12): never decode more than the limit allows.
        if units.len() > MAX_MESSAGE_CHARS {
            self.violate(Violation::Oversize { chars: units.len() });
            return;
        }
        match decode_utf16_strict(units) {
            Some(message) => self.accept(message, units.len()),
            None => self.violate(Violation::InvalidText),
        }
    }

    /// An inbound `ack(consumed)` from `caller_uid` (CH-08, CH-25).
    pub fn on_ack(&mut self, caller_uid: u32, consumed: i64, now: Instant) {
        if !self.receiving() || !self.check_uid(caller_uid) || self.mode == FlowMode::Stream {
            return;
        }
        let sent = self.stats.sent;
        let previous = self.stats.peer_acked;
        let Ok(count) = u64::try_from(consumed) else {
            self.violate(Violation::AckBeyondSent {
                acked: consumed,
                sent,
            });
            return;
        };
        if count > sent {
            self.violate(Violation::AckBeyondSent {
                acked: consumed,
                sent,
            });
            return;
        }
        if count < previous {
            self.violate(Violation::AckBackwards {
                acked: consumed,
                previous,
            });
            return;
        }
        if count == previous {
            return;
        }
        for _ in previous..count {
            if let Some(len) = self.inflight_lens.pop_front() {
                self.inflight_chars -= len;
            }
        }
        self.stats.peer_acked = count;
        // CH-23: an advancing ack restarts the timer; it re-arms if the window still blocks.
        self.blocked_since = if self.window_blocked() {
            Some(now)
        } else {
            None
        };
    }

    /// An inbound `close(reason)` from `caller_uid`: stop sending, keep what was received for
    /// delivery, then end (CH-41). The peer's reason text is informational only.
    pub fn on_close(&mut self, caller_uid: u32) {
        if !self.receiving() || !self.check_uid(caller_uid) {
            return;
        }
        tracing::debug!(peer_uid = self.peer_uid, "peer closed the channel");
        self.drop_outgoing();
        self.reason = Some(CloseReason::Remote);
        self.phase = Phase::Closed;
    }

    /// The peer died (death notification). Closes locally without notifying the peer (CH-42).
    /// A pending close notification is abandoned.
    pub fn on_peer_died(&mut self) {
        if matches!(self.phase, Phase::Closed) {
            return;
        }
        self.drop_outgoing();
        if self.reason.is_none() {
            self.reason = Some(CloseReason::PeerDied);
        }
        self.phase = Phase::Closed;
    }

    /// A violation the carrier detected in its own framing (an endless or malformed line).
    pub fn on_violation(&mut self, violation: Violation) {
        if self.receiving() {
            self.violate(violation);
        }
    }

    /// A carrier-side failure (e.g. a read error on a stream).
    pub fn on_failure(&mut self, failure: Failure) {
        if self.receiving() {
            self.fail(CloseReason::Failure(failure));
        }
    }

    // ----- consumer side -------------------------------------------------------------------

    /// Hands the next received message to the layer above; it now counts as processed
    /// (CH-31). Messages received before a close are still delivered (CH-41).
    pub fn take_message(&mut self) -> Option<String> {
        let (message, chars) = self.inbox.pop_front()?;
        self.stats.processed += 1;
        self.processed_chars += chars as u64;
        Some(message)
    }

    /// Received messages not yet taken.
    pub fn queued_messages(&self) -> usize {
        self.inbox.len()
    }

    /// True once the channel is closed and every received message has been taken: the
    /// receive stream ends here.
    pub fn is_drained(&self) -> bool {
        self.is_closed() && self.inbox.is_empty()
    }

    // ----- driver side ---------------------------------------------------------------------

    /// The next call the driver should make on the carrier, if any. Only one action is
    /// outstanding at a time; report its outcome with [`FlowCore::on_action_result`].
    pub fn poll_action(&mut self, now: Instant) -> Option<Action> {
        if self.outstanding.is_some() {
            return None;
        }
        match self.phase {
            Phase::Closed => None,
            Phase::Notifying { retry } => {
                if retry.is_some_and(|r| r.at > now) {
                    return None;
                }
                self.outstanding = Some(Outstanding::Close);
                let class = self
                    .reason
                    .as_ref()
                    .map_or(CloseClass::Local, CloseReason::class);
                Some(Action::Close(class.as_str()))
            }
            Phase::Open | Phase::Flushing { .. } => {
                if let Some(action) = self.poll_ack(now) {
                    return Some(action);
                }
                if let Some(action) = self.poll_send(now) {
                    return Some(action);
                }
                if matches!(self.phase, Phase::Flushing { .. }) && self.backlog.is_empty() {
                    self.reason = Some(CloseReason::Local);
                    self.phase = Phase::Notifying { retry: None };
                    return self.poll_action(now);
                }
                None
            }
        }
    }

    /// The ack the CH-31 policy calls for now, if any, and only if no other action is
    /// outstanding — for a driver that lets the consumer make the ack call itself right after
    /// taking messages, instead of waking its writer. Calls still never overlap and keep the
    /// order [`FlowCore::poll_action`] would give them (it, too, offers a due ack first).
    /// Report the outcome with [`FlowCore::on_action_result`].
    pub fn poll_ack_action(&mut self, now: Instant) -> Option<Action> {
        if self.outstanding.is_some() {
            return None;
        }
        self.poll_ack(now)
    }

    /// True when [`FlowCore::poll_action`] or the timers may have something for the driver:
    /// the channel is closing or closed, messages are queued, an ack is due, or a failed ack
    /// waits for its retry. False means a writer that found an action outstanding and went
    /// to sleep has missed nothing.
    pub fn driver_has_work(&self, now: Instant) -> bool {
        !matches!(self.phase, Phase::Open)
            || !self.backlog.is_empty()
            || self.ack_retry.is_some()
            || self.ack_due(now)
    }

    /// True while the CH-20 window holds back the next queued message and the CH-23 timer
    /// runs: only an ack (or the timer) gives the driver something to do, so a message queued
    /// behind it does not need to wake the driver.
    pub fn awaits_ack(&self) -> bool {
        self.mode == FlowMode::Credit && self.blocked_since.is_some()
    }

    /// True when a CH-31 ack is due now (see [`FlowCore::poll_ack_action`]).
    pub fn wants_ack(&self, now: Instant) -> bool {
        self.ack_due(now)
    }

    /// Reports the outcome of the last [`Action`]. `peer_alive` is the carrier's liveness
    /// check (`isBinderAlive`); a failed oneway call alone is not proof of death (CH-43).
    pub fn on_action_result(
        &mut self,
        result: Result<(), crate::LinkError>,
        peer_alive: bool,
        now: Instant,
    ) {
        let Some(outstanding) = self.outstanding.take() else {
            return;
        };
        match (outstanding, result) {
            (Outstanding::Send, Ok(())) => {}
            (Outstanding::Send, Err(_)) => {
                if !self.receiving() {
                    return;
                }
                tracing::warn!(peer_uid = self.peer_uid, "send to peer failed");
                if peer_alive {
                    self.fail(CloseReason::Failure(Failure::SendFailed));
                } else {
                    self.on_peer_died();
                }
            }
            (Outstanding::Ack { count, chars, .. }, Ok(())) => {
                let previous = self.acked_count();
                for _ in previous..count {
                    if let Some(len) = self.unacked_lens.pop_front() {
                        self.unacked_chars -= len;
                    }
                }
                self.acked_chars = chars;
                self.stats.acks_sent += 1;
                self.ack_retry = None;
            }
            (Outstanding::Ack { .. }, Err(_)) => {
                self.stats.ack_failures += 1;
                if !peer_alive {
                    self.on_peer_died();
                    return;
                }
                // CH-33: not a reason to close; retry with the latest count after a backoff.
                self.ack_retry = Some(match self.ack_retry {
                    None => Retry::first(now),
                    Some(retry) => retry.next(now),
                });
            }
            (Outstanding::Close, Ok(())) => {
                self.phase = Phase::Closed;
            }
            (Outstanding::Close, Err(_)) => {
                self.stats.close_failures += 1;
                if !peer_alive || self.mode == FlowMode::Stream {
                    self.phase = Phase::Closed;
                    return;
                }
                // CH-44: retried with the CH-33 backoff until it succeeds or the peer dies.
                if let Phase::Notifying { retry } = self.phase {
                    self.phase = Phase::Notifying {
                        retry: Some(match retry {
                            None => Retry::first(now),
                            Some(retry) => retry.next(now),
                        }),
                    };
                }
            }
        }
    }

    /// The earliest instant at which [`FlowCore::handle_timeout`] or
    /// [`FlowCore::poll_action`] has something to do, if any.
    pub fn poll_timeout(&self) -> Option<Instant> {
        let mut earliest: Option<Instant> = None;
        let mut consider = |at: Instant| {
            earliest = Some(earliest.map_or(at, |e| e.min(at)));
        };
        match self.phase {
            Phase::Closed => {}
            Phase::Notifying { retry } => {
                if let Some(retry) = retry {
                    consider(retry.at);
                }
            }
            Phase::Open | Phase::Flushing { .. } => {
                if let Phase::Flushing { deadline } = self.phase {
                    consider(deadline);
                }
                if let Some(since) = self.blocked_since {
                    consider(since + ACK_TIMEOUT);
                }
                if let Some(retry) = self.ack_retry {
                    consider(retry.at);
                }
            }
        }
        earliest
    }

    /// Fires the timers due at `now`: the CH-23 ack timeout and the CH-40 flush deadline.
    /// (Retry timers need no handling: [`FlowCore::poll_action`] checks them.)
    pub fn handle_timeout(&mut self, now: Instant) {
        if !matches!(self.phase, Phase::Open | Phase::Flushing { .. }) {
            return;
        }
        if let Some(since) = self.blocked_since
            && now >= since + ACK_TIMEOUT
        {
            tracing::warn!(
                peer_uid = self.peer_uid,
                inflight = self.inflight_lens.len(),
                "ack timeout"
            );
            self.fail(CloseReason::Failure(Failure::AckTimeout));
            return;
        }
        if let Phase::Flushing { deadline } = self.phase
            && now >= deadline
        {
            tracing::debug!(
                peer_uid = self.peer_uid,
                dropped_chars = self.backlog_chars,
                "close flush deadline passed"
            );
            self.drop_outgoing();
            self.reason = Some(CloseReason::Local);
            self.phase = Phase::Notifying { retry: None };
        }
    }

    // ----- state ---------------------------------------------------------------------------

    /// Why the channel closed, once it has (a local close counts from the end of its flush).
    pub fn close_reason(&self) -> Option<&CloseReason> {
        self.reason.as_ref()
    }

    /// True once the channel is closed (the flush of a local close has ended).
    pub fn is_closed(&self) -> bool {
        self.reason.is_some()
    }

    /// True once nothing is left to do on the carrier: the driver may stop.
    pub fn is_finished(&self) -> bool {
        matches!(self.phase, Phase::Closed) && self.outstanding.is_none()
    }

    /// Queued, not yet handed to the carrier, in UTF-16 units.
    pub fn backlog_chars(&self) -> usize {
        self.backlog_chars
    }

    /// Queued messages not yet handed to the carrier.
    pub fn backlog_messages(&self) -> usize {
        self.backlog.len()
    }

    /// Messages handed to the carrier and not yet acked.
    pub fn inflight_messages(&self) -> usize {
        self.inflight_lens.len()
    }

    /// UTF-16 units handed to the carrier and not yet acked.
    pub fn inflight_chars(&self) -> usize {
        self.inflight_chars
    }

    /// Received messages not covered by an ack sent, and their length (CH-32).
    pub fn unacked(&self) -> (usize, usize) {
        (self.unacked_lens.len(), self.unacked_chars)
    }

    /// Counters.
    pub fn stats(&self) -> FlowStats {
        self.stats
    }

    // ----- internals -----------------------------------------------------------------------

    fn acked_count(&self) -> u64 {
        self.stats.received - self.unacked_lens.len() as u64
    }

    /// Inbound calls are processed while the channel is open or flushing a local close.
    fn receiving(&self) -> bool {
        self.reason.is_none()
    }

    fn check_uid(&mut self, caller_uid: u32) -> bool {
        if caller_uid == self.peer_uid {
            return true;
        }
        self.violate(Violation::WrongUid {
            expected: self.peer_uid,
            actual: caller_uid,
        });
        false
    }

    fn accept(&mut self, message: String, chars: usize) {
        if chars > MAX_MESSAGE_CHARS {
            self.violate(Violation::Oversize { chars });
            return;
        }
        self.stats.received += 1;
        if self.mode == FlowMode::Credit {
            self.unacked_lens.push_back(chars);
            self.unacked_chars += chars;
            // An ack being handed to the carrier counts as sent: on a synchronous carrier
            // (same process, CH-16) the peer can act on it before the call returns.
            let (covers, covers_chars) = match self.outstanding {
                Some(Outstanding::Ack {
                    covers,
                    covers_chars,
                    ..
                }) => (covers, covers_chars),
                _ => (0, 0),
            };
            let unacked_messages = self.unacked_lens.len() - covers;
            let unacked_chars = self.unacked_chars - covers_chars;
            if unacked_messages > VIOLATION_UNACKED_MESSAGES
                || (unacked_messages > 1 && unacked_chars > VIOLATION_UNACKED_CHARS)
            {
                self.violate(Violation::Window {
                    unacked_messages,
                    unacked_chars,
                });
                return;
            }
        }
        self.inbox.push_back((message, chars));
    }

    /// True when the CH-31 policy calls for an ack now: 8 messages or 8,192 chars processed
    /// since the last ack, or everything received has been processed — unless a failed ack
    /// is waiting for its CH-33 retry time.
    fn ack_due(&self, now: Instant) -> bool {
        if self.mode != FlowMode::Credit
            || !matches!(self.phase, Phase::Open | Phase::Flushing { .. })
        {
            return false;
        }
        if self.ack_retry.is_some_and(|r| r.at > now) {
            return false;
        }
        let processed = self.stats.processed;
        let acked = self.acked_count();
        if processed <= acked {
            return false;
        }
        let chars = self.processed_chars - self.acked_chars;
        let drained = processed == self.stats.received;
        processed - acked >= ACK_EVERY_MESSAGES || chars >= ACK_EVERY_CHARS || drained
    }

    fn poll_ack(&mut self, now: Instant) -> Option<Action> {
        if !self.ack_due(now) {
            return None;
        }
        let processed = self.stats.processed;
        let covers = usize::try_from(processed - self.acked_count()).unwrap_or(usize::MAX);
        let covers_chars = self.unacked_lens.iter().take(covers).sum();
        self.outstanding = Some(Outstanding::Ack {
            count: processed,
            chars: self.processed_chars,
            covers,
            covers_chars,
        });
        Some(Action::Ack(i64::try_from(processed).unwrap_or(i64::MAX)))
    }

    fn window_blocked(&self) -> bool {
        match self.backlog.front() {
            None => false,
            Some(&(_, chars)) => !self.window_admits(chars),
        }
    }

    fn window_admits(&self, chars: usize) -> bool {
        // CH-20: nothing in flight, or < 32 in flight and in-flight chars + this <= 32,768.
        self.inflight_lens.is_empty()
            || (self.inflight_lens.len() < MAX_INFLIGHT_MESSAGES
                && self.inflight_chars + chars <= MAX_INFLIGHT_CHARS)
    }

    fn poll_send(&mut self, now: Instant) -> Option<Action> {
        let chars = self.backlog.front()?.1;
        if self.mode == FlowMode::Credit && !self.window_admits(chars) {
            if self.blocked_since.is_none() {
                self.blocked_since = Some(now);
            }
            return None;
        }
        let (message, _) = self.backlog.pop_front()?;
        self.backlog_chars -= chars;
        self.blocked_since = None;
        if self.mode == FlowMode::Credit {
            self.inflight_lens.push_back(chars);
            self.inflight_chars += chars;
        }
        self.stats.sent += 1;
        self.outstanding = Some(Outstanding::Send);
        Some(Action::Send(message))
    }

    fn drop_outgoing(&mut self) {
        self.backlog.clear();
        self.backlog_chars = 0;
        self.blocked_since = None;
        self.ack_retry = None;
    }

    fn violate(&mut self, violation: Violation) {
        tracing::warn!(peer_uid = self.peer_uid, ?violation, "channel violation");
        self.fail(CloseReason::Violation(violation));
    }

    /// Ends the channel for a violation or failure: drop the backlog, notify the peer.
    fn fail(&mut self, reason: CloseReason) {
        if self.reason.is_some() {
            return;
        }
        self.drop_outgoing();
        self.reason = Some(reason);
        self.phase = Phase::Notifying { retry: None };
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use proptest::prelude::*;

    use std::time::Instant;

    use super::{Action, FlowCore, FlowMode, utf16_units};
    use crate::text::COUNT_BLOCK_BYTES;
    use crate::text::utf16_len;

    const PEER: u32 = 10_123;

    #[test]
    fn ch15_no_ack_is_offered_while_another_call_is_outstanding() {
        let now = Instant::now();
        let mut core = FlowCore::new(FlowMode::Credit, PEER);
        core.enqueue("out".to_owned()).unwrap();
        assert_eq!(core.poll_action(now), Some(Action::Send("out".into())));
        core.on_send(PEER, "in".to_owned());
        assert_eq!(core.take_message().as_deref(), Some("in"));
        assert!(core.wants_ack(now), "drained: an ack is due (CH-31)");
        assert_eq!(core.poll_ack_action(now), None, "the send is outstanding");
        core.on_action_result(Ok(()), true, now);
        assert_eq!(core.poll_ack_action(now), Some(Action::Ack(1)));
        assert_eq!(core.poll_action(now), None, "the ack is outstanding");
        core.on_action_result(Ok(()), true, now);
        assert!(!core.wants_ack(now));
        assert!(!core.driver_has_work(now));
    }

    #[test]
    fn ch33_no_ack_is_offered_before_its_retry_time() {
        let now = Instant::now();
        let mut core = FlowCore::new(FlowMode::Credit, PEER);
        core.on_send(PEER, "in".to_owned());
        core.take_message();
        assert_eq!(core.poll_ack_action(now), Some(Action::Ack(1)));
        core.on_action_result(Err(crate::LinkError::DeadObject), true, now);
        assert!(!core.wants_ack(now), "10 ms backoff");
        assert_eq!(core.poll_ack_action(now), None);
        assert!(
            core.driver_has_work(now),
            "the writer must schedule the retry"
        );
        let later = now + crate::limits::RETRY_BACKOFF[0];
        assert_eq!(core.poll_ack_action(later), Some(Action::Ack(1)));
    }

    #[test]
    fn ch20_awaits_ack_only_while_the_window_blocks_the_next_message() {
        let now = Instant::now();
        let mut core = FlowCore::new(FlowMode::Credit, PEER);
        for _ in 0..3 {
            core.enqueue("x".repeat(16_000)).unwrap();
        }
        assert!(!core.awaits_ack(), "nothing polled yet");
        assert!(matches!(core.poll_action(now), Some(Action::Send(_))));
        core.on_action_result(Ok(()), true, now);
        assert!(matches!(core.poll_action(now), Some(Action::Send(_))));
        core.on_action_result(Ok(()), true, now);
        assert!(
            !core.awaits_ack(),
            "not blocked until the driver polls again"
        );
        assert_eq!(
            core.poll_action(now),
            None,
            "2 × 16,000 in flight: the third waits"
        );
        assert!(core.awaits_ack());
        core.on_ack(PEER, 1, now);
        assert!(!core.awaits_ack(), "the ack opened the window");
        assert!(core.driver_has_work(now));
        let mut stream = FlowCore::new(FlowMode::Stream, PEER);
        stream.enqueue("x".to_owned()).unwrap();
        assert!(!stream.awaits_ack());
    }

    #[test]
    fn counts_utf16_units_of_every_utf8_width() {
        assert_eq!(utf16_units(""), 0);
        assert_eq!(utf16_units("a"), 1);
        assert_eq!(utf16_units("é"), 1); // 2 bytes
        assert_eq!(utf16_units("中"), 1); // 3 bytes
        assert_eq!(utf16_units("😀"), 2); // 4 bytes, a surrogate pair
        assert_eq!(utf16_units(&"x".repeat(16_000)), 16_000);
    }

    #[test]
    fn line_breaks_are_found_anywhere() {
        use super::has_line_break;
        assert!(!has_line_break(""));
        assert!(!has_line_break(&"x".repeat(16_000)));
        assert!(
            !has_line_break("中😀 \t\u{2028}"),
            "only \\n and \\r frame lines"
        );
        for at in [0, 1, 63, 64, 15_999] {
            for brk in ['\n', '\r'] {
                let mut text: Vec<char> = "x".repeat(16_000).chars().collect();
                text[at] = brk;
                assert!(has_line_break(&text.iter().collect::<String>()), "{at}");
            }
        }
    }

    #[test]
    fn block_counts_do_not_overflow() {
        // Every byte of a block is a continuation byte or a four-byte lead: the per-block
        // counters reach their largest values.
        let emoji = "😀".repeat(COUNT_BLOCK_BYTES); // 4 × the block size in bytes
        assert_eq!(utf16_units(&emoji), 2 * COUNT_BLOCK_BYTES);
        let cjk = "中".repeat(COUNT_BLOCK_BYTES * 3);
        assert_eq!(utf16_units(&cjk), COUNT_BLOCK_BYTES * 3);
    }

    proptest! {
        #[test]
        fn matches_encode_utf16(text in any::<String>(), pad in 0usize..600) {
            // Padding moves the text across block boundaries.
            let text = format!("{}{text}", "a".repeat(pad));
            prop_assert_eq!(utf16_units(&text), text.encode_utf16().count());
            prop_assert_eq!(utf16_units(&text), utf16_len(&text));
        }
    }
}
