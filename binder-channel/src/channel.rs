//! The async [`Channel`]: a thin tokio shell around [`FlowCore`] that works over any carrier.

use std::future::Future;
use std::pin::pin;
use std::sync::{Arc, Mutex, MutexGuard};
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

/// State shared by the channel handles, the writer task and the carrier's inbound side.
#[derive(Debug)]
pub(crate) struct Shared {
    core: Mutex<FlowCore>,
    peer: PeerIdentity,
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

    /// Applies an inbound event, then wakes whoever may now have work.
    pub(crate) fn inbound(&self, event: impl FnOnce(&mut FlowCore, Instant)) {
        let closed = {
            let mut core = self.lock();
            let was_closed = core.is_closed();
            event(&mut core, now());
            !was_closed && core.is_closed()
        };
        self.writer.notify_one();
        self.readable.notify_waiters();
        if closed {
            self.writable.notify_waiters();
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
            Action::Send(message) => self.0.send(&message),
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
        let result = shared.lock().enqueue(message.into());
        shared.writer.notify_one();
        if result.is_err() {
            shared.wake_all();
        }
        result
    }

    /// The next received message, or `None` once the channel has closed and everything
    /// received before the close has been delivered (CH-41).
    pub async fn recv(&self) -> Option<String> {
        let shared = self.shared();
        let message = shared
            .wait_until(&shared.readable, |core| match core.take_message() {
                Some(message) => Some(Some(message)),
                None if core.is_closed() => Some(None),
                None => None,
            })
            .await;
        if message.is_some() {
            shared.writer.notify_one();
            shared.taken.notify_waiters();
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
        Channel::start(self.shared, LinkOutbound(link))
    }

    /// The identity bound to this channel.
    pub fn peer(&self) -> PeerIdentity {
        self.shared.peer
    }
}
