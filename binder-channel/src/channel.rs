//! The async [`Channel`]: a thin tokio shell around [`FlowCore`] that works over any carrier.

use std::fmt;
use std::future::Future;
use std::pin::pin;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::Instant;

use futures::Stream;
use tokio::sync::Notify;

use crate::carrier::{AttachError, InboundSender, Link, LinkError, PeerIdentity, PendingChannel};
use crate::flow::{Action, FlowCore, FlowMode, FlowStats};
use crate::reason::{CloseClass, CloseReason, SendError};

/// The current instant on tokio's clock, so tests with paused time drive every timer.
pub(crate) fn now() -> Instant {
    tokio::time::Instant::now().into_std()
}

/// Which waiters an inbound event can give something to do. Whatever the event, a channel
/// that it closed wakes everyone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Wakes {
    /// A received message: receivers. The writer has nothing to do with it (an ack follows
    /// only once the message is taken).
    Receivers,
    /// An ack: the writer (the window may have opened).
    Writer,
    /// Close, death, violations, failures: everyone.
    All,
}

/// The peer's [`Link`] when the consumer may make due acks itself (see [`Channel::recv`]).
#[derive(Default)]
struct DirectAcks(OnceLock<Arc<dyn Link>>);

impl fmt::Debug for DirectAcks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("DirectAcks")
            .field(&self.0.get().is_some())
            .finish()
    }
}

/// What `recv` does about acks after taking a message.
enum AckStep {
    /// No ack is due.
    Nothing,
    /// An ack is due but the consumer cannot make it: the writer must.
    WakeWriter,
    /// The consumer makes this ack call itself (the core holds it as outstanding).
    Direct(Arc<dyn Link>, i64),
}

/// State shared by the channel handles, the writer task and the carrier's inbound side.
#[derive(Debug)]
pub(crate) struct Shared {
    core: Mutex<FlowCore>,
    peer: PeerIdentity,
    /// Set for [`Link`] carriers: acks are made by the consumer when the writer is idle.
    direct_acks: DirectAcks,
    /// Wakes the writer task (`notify_one`: it keeps a permit).
    writer: Notify,
    /// Wakes receivers and close waiters (`notify_waiters`): a message arrived or the
    /// channel closed.
    readable: Notify,
    /// Wakes producers waiting for room (`notify_waiters`): the backlog shrank or the
    /// channel closed.
    writable: Notify,
    /// Wakes a carrier reader waiting for the consumer to take messages.
    taken: Notify,
}

impl Shared {
    pub(crate) fn new(mode: FlowMode, peer: PeerIdentity) -> Arc<Shared> {
        Arc::new(Shared {
            core: Mutex::new(FlowCore::new(mode, peer.uid)),
            peer,
            direct_acks: DirectAcks::default(),
            writer: Notify::new(),
            readable: Notify::new(),
            writable: Notify::new(),
            taken: Notify::new(),
        })
    }

    fn lock(&self) -> MutexGuard<'_, FlowCore> {
        // A panic while holding the lock cannot leave the core half-updated in a way that
        // matters more than losing the channel; keep serving it.
        self.core
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Applies an inbound event, then wakes whoever may now have work: the waiters `wakes`
    /// names, or everyone if the event closed the channel. (Each needless wake-up is a
    /// context switch on the message path.)
    pub(crate) fn inbound(&self, wakes: Wakes, event: impl FnOnce(&mut FlowCore, Instant)) {
        let closed = {
            let mut core = self.lock();
            let was_closed = core.is_closed();
            event(&mut core, now());
            !was_closed && core.is_closed()
        };
        if closed || wakes != Wakes::Receivers {
            self.writer.notify_one();
        }
        if closed || wakes != Wakes::Writer {
            self.readable.notify_waiters();
        }
        if closed {
            self.writable.notify_waiters();
        }
    }

    /// Decides, under the lock that just took a message, who sends the ack that may be due.
    fn ack_step(&self, core: &mut FlowCore, now: Instant) -> AckStep {
        if !core.wants_ack(now) {
            return AckStep::Nothing;
        }
        match self.direct_acks.0.get() {
            Some(link) => match core.poll_ack_action(now) {
                Some(Action::Ack(count)) => AckStep::Direct(link.clone(), count),
                // Another call is outstanding: the writer sends the ack once it is done.
                _ => AckStep::WakeWriter,
            },
            None => AckStep::WakeWriter,
        }
    }

    /// Makes an ack call the core handed to the consumer, then wakes the writer if it may
    /// have missed work while the call was outstanding (or must schedule a CH-33 retry).
    fn direct_ack(&self, link: &dyn Link, count: i64) {
        let result = link.ack(count);
        let alive = result.is_ok() || link.is_alive();
        let (wake_writer, closed) = {
            let mut core = self.lock();
            let was_closed = core.is_closed();
            let now = now();
            core.on_action_result(result, alive, now);
            (core.driver_has_work(now), !was_closed && core.is_closed())
        };
        if wake_writer || closed {
            self.writer.notify_one();
        }
        if closed {
            self.wake_all();
        }
    }

    /// Wakes every waiter (after a state change that may have closed the channel).
    fn wake_all(&self) {
        self.readable.notify_waiters();
        self.writable.notify_waiters();
    }

    pub(crate) fn is_closed(&self) -> bool {
        self.lock().is_closed()
    }

    /// Waits until the consumer has taken a message or the channel closed.
    pub(crate) async fn wait_for_room(&self, max_queued: usize) {
        loop {
            let mut notified = pin!(self.taken.notified());
            notified.as_mut().enable();
            {
                let core = self.lock();
                if core.queued_messages() < max_queued || core.is_closed() {
                    return;
                }
            }
            notified.await;
        }
    }

    /// Waits until `ready` holds on the core, re-checking whenever `notify` fires.
    async fn wait_until<T>(
        &self,
        notify: &Notify,
        mut ready: impl FnMut(&mut FlowCore) -> Option<T>,
    ) -> T {
        loop {
            let mut notified = pin!(notify.notified());
            notified.as_mut().enable();
            if let Some(value) = ready(&mut self.lock()) {
                return value;
            }
            notified.await;
        }
    }

    pub(crate) async fn closed(&self) -> CloseReason {
        self.wait_until(&self.readable, |core| core.close_reason().cloned())
            .await
    }
}

/// How the writer task performs the core's [`Action`]s on a carrier.
pub(crate) trait Outbound: Send + 'static {
    /// Performs one action.
    fn perform(&mut self, action: Action) -> impl Future<Output = Result<(), LinkError>> + Send;
    /// Pushes out anything buffered (stream carriers); called when the writer goes idle.
    fn flush(&mut self) -> impl Future<Output = Result<(), LinkError>> + Send;
    /// The peer's liveness (CH-43).
    fn is_alive(&self) -> bool;
}

/// A [`Link`] as an [`Outbound`]: each action is one oneway call.
struct LinkOutbound(Arc<dyn Link>);

impl Outbound for LinkOutbound {
    async fn perform(&mut self, action: Action) -> Result<(), LinkError> {
        match action {
            Action::Send(message) => self.0.send_owned(message),
            Action::Ack(count) => self.0.ack(count),
            Action::Close(reason) => self.0.close(reason),
        }
    }

    async fn flush(&mut self) -> Result<(), LinkError> {
        Ok(())
    }

    fn is_alive(&self) -> bool {
        self.0.is_alive()
    }
}

/// The single writer (CH-15, CH-21): drains the backlog, sends acks and the close call, runs
/// the timers, and stops once the core has nothing left to do on the carrier.
pub(crate) async fn run_writer<O: Outbound>(shared: Arc<Shared>, mut outbound: O) {
    let mut needs_flush = false;
    let mut closed = false;
    // Wakes everyone once the channel turns closed, whoever closed it.
    let note_closed = |core: &FlowCore, closed: &mut bool| {
        if !*closed && core.is_closed() {
            *closed = true;
            shared.wake_all();
        }
    };
    loop {
        let action = {
            let mut core = shared.lock();
            let now = now();
            core.handle_timeout(now);
            let action = core.poll_action(now);
            note_closed(&core, &mut closed);
            action
        };
        match action {
            Some(action) => {
                let is_send = matches!(action, Action::Send(_));
                if is_send {
                    // The backlog just shrank: let producers queue more while this goes out.
                    shared.writable.notify_waiters();
                }
                let result = outbound.perform(action).await;
                needs_flush |= is_send;
                let alive = result.is_ok() || outbound.is_alive();
                let mut core = shared.lock();
                core.on_action_result(result, alive, now());
                note_closed(&core, &mut closed);
            }
            None => {
                if needs_flush {
                    needs_flush = false;
                    if outbound.flush().await.is_err() {
                        let alive = outbound.is_alive();
                        let mut core = shared.lock();
                        if alive {
                            core.on_failure(crate::reason::Failure::SendFailed);
                        } else {
                            core.on_peer_died();
                        }
                        note_closed(&core, &mut closed);
                    }
                    continue;
                }
                let (finished, deadline) = {
                    let core = shared.lock();
                    note_closed(&core, &mut closed);
                    (core.is_finished(), core.poll_timeout())
                };
                if finished {
                    break;
                }
                match deadline {
                    Some(at) => {
                        let at = tokio::time::Instant::from_std(at);
                        tokio::select! {
                            () = shared.writer.notified() => {}
                            () = tokio::time::sleep_until(at) => {}
                        }
                    }
                    None => shared.writer.notified().await,
                }
            }
        }
    }
    shared.wake_all();
    shared.taken.notify_waiters();
}

/// Closes the channel when the last [`Channel`] handle is dropped, like dropping a socket.
#[derive(Debug)]
struct Handle {
    shared: Arc<Shared>,
}

impl Drop for Handle {
    fn drop(&mut self) {
        self.shared.lock().close(now());
        self.shared.writer.notify_one();
    }
}

/// One end of a binder-channel-v1 channel, over any carrier.
///
/// - [`Channel::send`] queues a message and returns at once (CH-21); the writer task hands it
///   to the carrier when the window allows (CH-20).
/// - [`Channel::recv`] / [`Channel::messages`] deliver received messages in order (CH-15);
///   taking one counts as processing it, which drives the acks (CH-31).
/// - [`Channel::await_writable`] is the producer back-pressure gate (CH-24).
/// - [`Channel::close`] flushes for at most 2 s, then calls the peer's `close` (CH-40).
/// - [`Channel::peer`] is the kernel-reported identity of the other end.
///
/// Clones share the channel; dropping the last clone closes it locally.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let (client, server) = binder_channel::memory::pair(10_123, 1_000)?;
/// client.send(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#)?;
/// assert_eq!(server.recv().await.as_deref(), Some(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#));
/// assert_eq!(server.peer().uid, 10_123);
/// client.close().await;
/// assert_eq!(server.recv().await, None); // every send before close arrived first (CH-41)
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct Channel {
    handle: Arc<Handle>,
}

impl Channel {
    /// Starts a binder-channel-v1 channel whose receiving end exists before the peer's
    /// [`Link`] is known (CH-05). The carrier forwards its inbound calls to the
    /// [`InboundSender`]; [`PendingChannel::attach`] completes the channel.
    pub fn prepare(peer: PeerIdentity) -> (InboundSender, PendingChannel) {
        let shared = Shared::new(FlowMode::Credit, peer);
        (InboundSender::new(&shared), PendingChannel { shared })
    }

    /// A binder-channel-v1 channel over `link` in one step. Requires a tokio runtime.
    pub fn over_link(
        link: Arc<dyn Link>,
        peer: PeerIdentity,
    ) -> Result<(Channel, InboundSender), AttachError> {
        let (inbound, pending) = Channel::prepare(peer);
        Ok((pending.attach(link)?, inbound))
    }

    /// Spawns the writer task for `outbound` and returns the channel.
    pub(crate) fn start<O: Outbound>(
        shared: Arc<Shared>,
        outbound: O,
    ) -> Result<Channel, AttachError> {
        let runtime = tokio::runtime::Handle::try_current().map_err(|_| AttachError::NoRuntime)?;
        runtime.spawn(run_writer(shared.clone(), outbound));
        Ok(Channel {
            handle: Arc::new(Handle { shared }),
        })
    }

    pub(crate) fn shared(&self) -> &Arc<Shared> {
        &self.handle.shared
    }

    /// Queues `message` for sending; never blocks (CH-21). Refused when longer than 65,536
    /// UTF-16 units (CH-12; the channel stays open), once close has begun (CH-41), or when it
    /// would push the backlog past 4,194,304 units (CH-22; the channel closes with `failure`).
    pub fn send(&self, message: impl Into<String>) -> Result<(), SendError> {
        let shared = self.shared();
        let (result, awaits_ack) = {
            let mut core = shared.lock();
            let result = core.enqueue(message.into());
            (result, core.awaits_ack())
        };
        // Behind a full window the writer can do nothing with the message until an ack
        // arrives, and the ack wakes it: skip the needless wake-up.
        if result.is_err() || !awaits_ack {
            shared.writer.notify_one();
        }
        if result.is_err() {
            shared.wake_all();
        }
        result
    }

    /// The next received message, or `None` once the channel has closed and everything
    /// received before the close has been delivered (CH-41).
    ///
    /// Taking a message counts as processing it (CH-31). When that makes an ack due and no
    /// other call is outstanding, `recv` makes the ack call itself (a oneway call that returns
    /// at once) rather than waking the writer task for it: the ack reaches the sender one
    /// task hand-off sooner. Calls on the carrier still never overlap (CH-15).
    pub async fn recv(&self) -> Option<String> {
        let shared = self.shared();
        let (message, ack) = shared
            .wait_until(&shared.readable, |core| match core.take_message() {
                Some(message) => Some((Some(message), shared.ack_step(core, now()))),
                None if core.is_closed() => Some((None, AckStep::Nothing)),
                None => None,
            })
            .await;
        if message.is_some() {
            shared.taken.notify_waiters();
        }
        match ack {
            AckStep::Nothing => {}
            AckStep::WakeWriter => shared.writer.notify_one(),
            AckStep::Direct(link, count) => shared.direct_ack(link.as_ref(), count),
        }
        message
    }

    /// Every received message, in order, until the channel ends (see [`Channel::recv`]).
    pub fn messages(&self) -> impl Stream<Item = String> + Send + 'static {
        futures::stream::unfold(self.clone(), |channel| async move {
            let message = channel.recv().await?;
            Some((message, channel))
        })
    }

    /// Waits until the local backlog is below `max_queued_chars` UTF-16 units (CH-24; use
    /// [`crate::limits::PRODUCER_HIGH_WATER_CHARS`] for streaming producers). Fails once the
    /// channel is closing.
    pub async fn await_writable(&self, max_queued_chars: usize) -> Result<(), SendError> {
        let shared = self.shared();
        shared
            .wait_until(&shared.writable, |core| {
                if core.is_writable(max_queued_chars) {
                    Some(Ok(()))
                } else if !core.accepts_messages() {
                    let class = core
                        .close_reason()
                        .map_or(CloseClass::Local, CloseReason::class);
                    Some(Err(SendError::Closed(class)))
                } else {
                    None
                }
            })
            .await
    }

    /// Closes the channel locally: the backlog is flushed for at most 2 s, then the peer's
    /// `close` is called (CH-40). Returns the reason the channel ended with, which is not
    /// `Local` if it had already closed for another reason. The procedure runs in the writer
    /// task, so it completes even if this future is dropped (CH-44).
    pub async fn close(&self) -> CloseReason {
        let shared = self.shared();
        shared.lock().close(now());
        shared.writer.notify_one();
        shared.closed().await
    }

    /// Waits until the channel has closed and returns why.
    pub async fn closed(&self) -> CloseReason {
        self.shared().closed().await
    }

    /// Why the channel closed, if it has.
    pub fn close_reason(&self) -> Option<CloseReason> {
        self.shared().lock().close_reason().cloned()
    }

    /// The kernel-reported identity of the peer (bound at `open`, CH-05/CH-08).
    pub fn peer(&self) -> PeerIdentity {
        self.shared().peer
    }

    /// Flow-control counters.
    pub fn stats(&self) -> FlowStats {
        self.shared().lock().stats()
    }

    /// The local backlog in UTF-16 units (queued, not yet handed to the carrier).
    pub fn backlog_chars(&self) -> usize {
        self.shared().lock().backlog_chars()
    }
}

impl PendingChannel {
    /// Adds the peer's receiving end and starts the writer task. Requires a tokio runtime.
    pub fn attach(self, link: Arc<dyn Link>) -> Result<Channel, AttachError> {
        // A fresh shared state: the link cannot have been set before.
        let _ = self.shared.direct_acks.0.set(link.clone());
        Channel::start(self.shared, LinkOutbound(link))
    }

    /// The identity bound to this channel.
    pub fn peer(&self) -> PeerIdentity {
        self.shared.peer
    }
}

#[cfg(test)]
mod tests {
    //! The async shell's wake-up shortcuts: the consumer's own acks and the writer left
    //! asleep behind a full window. Paused tokio clock, current-thread runtime: nothing but
    //! the test runs until it yields.
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use std::time::Duration;

    use crate::memory::{PeerCall, scripted};
    use crate::reason::{CloseReason, Failure};

    const PEER: u32 = 10_123;

    /// Lets the writer task run until it is idle (virtual time does not move).
    async fn settle() {
        for _ in 0..50 {
            tokio::task::yield_now().await;
        }
    }

    #[tokio::test(start_paused = true)]
    async fn ch31_recv_makes_the_due_ack_before_it_returns() {
        let (channel, peer) = scripted(PEER).unwrap();
        for i in 0..20 {
            peer.send(format!("{i}"));
        }
        // No yield between here and the asserts: the writer task cannot have run.
        for _ in 0..7 {
            channel.recv().await.unwrap();
        }
        assert_eq!(peer.last_ack(), None, "7 of 20 processed: no ack due yet");
        channel.recv().await.unwrap();
        assert_eq!(
            peer.last_ack(),
            Some(8),
            "the 8th message makes the ack due"
        );
        for _ in 8..20 {
            channel.recv().await.unwrap();
        }
        assert_eq!(peer.last_ack(), Some(20), "drained");
        let acks: Vec<i64> = peer
            .calls()
            .into_iter()
            .filter_map(|call| match call {
                PeerCall::Ack(count) => Some(count),
                _ => None,
            })
            .collect();
        assert_eq!(
            acks,
            vec![8, 16, 20],
            "one call per ack, none repeated by the writer"
        );
        settle().await;
        assert_eq!(
            channel.stats().acks_sent,
            3,
            "the writer found nothing left to ack"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn ch15_the_consumers_ack_and_the_writers_send_are_serialized() {
        // The writer has a send queued but has not run yet: the consumer's ack goes first,
        // and the send follows once the writer runs — one call at a time, each once. (With
        // the writer mid-call, the core offers the consumer no ack: see flow's unit tests.)
        let (channel, peer) = scripted(PEER).unwrap();
        channel.send("out").unwrap();
        peer.send("in");
        channel.recv().await.unwrap();
        assert_eq!(
            peer.last_ack(),
            Some(1),
            "writer idle so far: recv acked itself"
        );
        settle().await;
        assert_eq!(
            peer.calls(),
            vec![PeerCall::Ack(1), PeerCall::Send("out".into())]
        );
    }

    #[tokio::test(start_paused = true)]
    async fn ch20_a_message_queued_behind_a_full_window_goes_out_after_the_ack() {
        let (channel, peer) = scripted(PEER).unwrap();
        for i in 0..33 {
            channel.send(format!("{i}")).unwrap();
        }
        settle().await;
        assert_eq!(peer.sent().len(), 32, "the 33rd waits for the window");
        // Queued while the writer is blocked on the window: it is not woken for these.
        channel.send("33").unwrap();
        channel.send("34").unwrap();
        settle().await;
        assert_eq!(peer.sent().len(), 32);
        peer.ack(32);
        settle().await;
        assert_eq!(
            peer.sent().len(),
            35,
            "the ack wakes the writer for all three"
        );
        assert_eq!(peer.sent().last().map(String::as_str), Some("34"));
    }

    #[tokio::test(start_paused = true)]
    async fn ch23_queueing_behind_a_full_window_keeps_the_timer_from_the_first_block() {
        let (channel, peer) = scripted(PEER).unwrap();
        for i in 0..33 {
            channel.send(format!("{i}")).unwrap();
        }
        settle().await;
        let blocked_at = tokio::time::Instant::now();
        tokio::time::sleep(Duration::from_secs(20)).await;
        channel.send("late").unwrap();
        let reason = channel.closed().await;
        assert_eq!(reason, CloseReason::Failure(Failure::AckTimeout));
        assert_eq!(blocked_at.elapsed(), Duration::from_secs(30));
        settle().await;
        assert_eq!(
            peer.calls().last(),
            Some(&PeerCall::Close("failure".into()))
        );
    }
}
