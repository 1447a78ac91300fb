//! The consent broker: the async shell around [`ConsentQueue`].
//!
//! Each request waits for its turn (FIFO), is shown on the [`ConsentSurface`] while it is the
//! head, and ends at the first of: the user's answer, a caller's denial (CNS-09), or its
//! deadline — 60 s after **creation**, so time spent queued counts (CNS-04). A request that
//! arrives while 16 are pending is refused at once without UI (CNS-06).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use tokio::sync::oneshot;

use super::queue::ConsentQueue;
use super::text::{ConsentRequest, ToolPrompt};
use super::{CallerVerdict, ConsentId, ConsentOutcome, ConsentSurface, DenyReason};
use crate::clock::{Clock, Millis};
use crate::sanitize::SanitizeConfig;

#[derive(Debug)]
struct Waiter {
    result_tx: Option<oneshot::Sender<ConsentOutcome>>,
    turn_tx: Option<oneshot::Sender<()>>,
}

#[derive(Debug)]
struct State {
    queue: ConsentQueue,
    waiters: HashMap<ConsentId, Waiter>,
}

struct Inner {
    state: Mutex<State>,
    surface: Arc<dyn ConsentSurface>,
    clock: Arc<dyn Clock>,
    sanitize: SanitizeConfig,
}

impl Inner {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Removes `id` and hands the turn to the new head if `id` was the head.
    fn finish_locked(st: &mut State, id: ConsentId) {
        let was_front = st.queue.front() == Some(id);
        st.queue.remove(id);
        st.waiters.remove(&id);
        if was_front {
            Self::give_turn(st);
        }
    }

    /// Resolves every request past its deadline (their waiters may not be polling), so a
    /// stale entry never holds one of the 16 slots.
    fn expire_locked(st: &mut State, now: Millis) {
        let front_before = st.queue.front();
        for (id, outcome) in st.queue.expire(now) {
            if let Some(mut w) = st.waiters.remove(&id)
                && let Some(tx) = w.result_tx.take()
            {
                let _ = tx.send(outcome);
            }
        }
        if st.queue.front() != front_before {
            Self::give_turn(st);
        }
    }

    fn give_turn(st: &mut State) {
        if let Some(front) = st.queue.front()
            && let Some(tx) = st.waiters.get_mut(&front).and_then(|w| w.turn_tx.take())
        {
            let _ = tx.send(());
        }
    }
}

/// Serialises consent prompts onto one surface. Cheap to clone.
#[derive(Clone)]
pub struct ConsentBroker {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for ConsentBroker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConsentBroker")
            .field("pending", &self.pending())
            .finish()
    }
}

impl ConsentBroker {
    /// A broker with the SPEC defaults (16 pending, 60 s).
    pub fn new(surface: Arc<dyn ConsentSurface>, clock: Arc<dyn Clock>) -> Self {
        Self::with_queue(
            surface,
            clock,
            ConsentQueue::default(),
            SanitizeConfig::default(),
        )
    }

    /// A broker over a configured queue.
    pub fn with_queue(
        surface: Arc<dyn ConsentSurface>,
        clock: Arc<dyn Clock>,
        queue: ConsentQueue,
        sanitize: SanitizeConfig,
    ) -> Self {
        Self {
            inner: Arc::new(Inner {
                state: Mutex::new(State {
                    queue,
                    waiters: HashMap::new(),
                }),
                surface,
                clock,
                sanitize,
            }),
        }
    }

    /// Requests currently pending (shown or queued).
    pub fn pending(&self) -> usize {
        self.inner.lock().queue.len()
    }

    /// Enqueues a request. `Err(ConsentOutcome::Unavailable)` when the queue is full: no UI was
    /// shown (CNS-06). The request is withdrawn if the ticket is dropped before it ends.
    pub fn submit(&self, req: &ConsentRequest) -> Result<ConsentTicket, ConsentOutcome> {
        let now = self.inner.clock.now();
        let mut st = self.inner.lock();
        Inner::expire_locked(&mut st, now);
        let (id, deadline) = match st.queue.submit(req.choices.clone(), now) {
            Ok(v) => v,
            Err(_) => {
                tracing::warn!(
                    capability = %req.capability,
                    pending = st.queue.len(),
                    "consent queue full; request refused without UI"
                );
                return Err(ConsentOutcome::Unavailable);
            }
        };
        let (result_tx, result_rx) = oneshot::channel();
        let (turn_tx, turn_rx) = oneshot::channel();
        st.waiters.insert(
            id,
            Waiter {
                result_tx: Some(result_tx),
                turn_tx: Some(turn_tx),
            },
        );
        if st.queue.front() == Some(id) {
            Inner::give_turn(&mut st);
        }
        drop(st);
        tracing::debug!(consent = %id, capability = %req.capability, "consent request queued");
        Ok(ConsentTicket {
            inner: Arc::clone(&self.inner),
            id,
            deadline,
            prompt: ToolPrompt::build(id, req, self.inner.sanitize),
            result_rx: Some(result_rx),
            turn_rx: Some(turn_rx),
            done: false,
        })
    }

    /// Submits and waits: the one-call form of [`submit`](Self::submit) +
    /// [`ConsentTicket::wait`].
    pub async fn request(&self, req: &ConsentRequest) -> ConsentOutcome {
        match self.submit(req) {
            Ok(ticket) => ticket.wait().await,
            Err(outcome) => outcome,
        }
    }

    /// The caller's answer to `session/request_permission` for request `id` (CNS-09): a reject
    /// denies it; an allow is ignored. Returns whether it changed anything.
    pub fn caller_answer(&self, id: ConsentId, verdict: CallerVerdict) -> bool {
        let mut st = self.inner.lock();
        let was_front = st.queue.front() == Some(id);
        let Some(outcome) = st.queue.caller_answer(id, verdict) else {
            return false;
        };
        if let Some(mut w) = st.waiters.remove(&id)
            && let Some(tx) = w.result_tx.take()
        {
            let _ = tx.send(outcome);
        }
        if was_front {
            Inner::give_turn(&mut st);
        }
        true
    }
}

/// One pending consent request. Dropping it withdraws the request; a ticket that is neither
/// waited on nor dropped still times out 60 s after creation (expired on the next submit).
pub struct ConsentTicket {
    inner: Arc<Inner>,
    id: ConsentId,
    deadline: Millis,
    prompt: ToolPrompt,
    result_rx: Option<oneshot::Receiver<ConsentOutcome>>,
    turn_rx: Option<oneshot::Receiver<()>>,
    done: bool,
}

impl std::fmt::Debug for ConsentTicket {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConsentTicket")
            .field("id", &self.id)
            .field("deadline", &self.deadline)
            .finish()
    }
}

impl ConsentTicket {
    /// The request id (to route a caller's `session/request_permission` answer).
    pub fn id(&self) -> ConsentId {
        self.id
    }

    /// When the request times out.
    pub fn deadline(&self) -> Millis {
        self.deadline
    }

    /// The prompt that is (or will be) shown.
    pub fn prompt(&self) -> &ToolPrompt {
        &self.prompt
    }

    fn resolve_self(&mut self, outcome: ConsentOutcome) -> ConsentOutcome {
        let mut st = self.inner.lock();
        Inner::finish_locked(&mut st, self.id);
        self.done = true;
        outcome
    }

    /// Waits for the request to end.
    pub async fn wait(mut self) -> ConsentOutcome {
        let (Some(mut result_rx), Some(mut turn_rx)) = (self.result_rx.take(), self.turn_rx.take())
        else {
            return ConsentOutcome::Denied(DenyReason::Cancelled);
        };
        let remaining = self.inner.clock.now().until(self.deadline);
        let sleep = tokio::time::sleep(remaining);
        tokio::pin!(sleep);

        // Phase 1: queued behind others. The deadline runs from creation (CNS-04).
        tokio::select! {
            biased;
            r = &mut result_rx => {
                self.done = true;
                return r.unwrap_or(ConsentOutcome::Denied(DenyReason::Cancelled));
            }
            _ = &mut sleep => {
                tracing::debug!(consent = %self.id, "consent timed out while queued");
                return self.resolve_self(ConsentOutcome::Denied(DenyReason::Timeout));
            }
            _ = &mut turn_rx => {}
        }

        // Phase 2: shown.
        let surface = Arc::clone(&self.inner.surface);
        let outcome = {
            let ask = surface.ask_tool(&self.prompt);
            tokio::select! {
                biased;
                r = &mut result_rx => {
                    self.done = true;
                    let outcome = r.unwrap_or(ConsentOutcome::Denied(DenyReason::Cancelled));
                    if let ConsentOutcome::Denied(reason) = outcome {
                        surface.withdrawn(self.id, reason);
                    }
                    return outcome;
                }
                _ = &mut sleep => None,
                answer = ask => Some(answer),
            }
        };
        match outcome {
            None => {
                surface.withdrawn(self.id, DenyReason::Timeout);
                self.resolve_self(ConsentOutcome::Denied(DenyReason::Timeout))
            }
            Some(answer) => {
                let now = self.inner.clock.now();
                let mut st = self.inner.lock();
                let was_front = st.queue.front() == Some(self.id);
                let result = st
                    .queue
                    .answer(self.id, answer, now)
                    .unwrap_or(ConsentOutcome::Denied(DenyReason::Cancelled));
                st.waiters.remove(&self.id);
                if was_front {
                    Inner::give_turn(&mut st);
                }
                self.done = true;
                result
            }
        }
    }
}

impl Drop for ConsentTicket {
    fn drop(&mut self) {
        if !self.done {
            let mut st = self.inner.lock();
            Inner::finish_locked(&mut st, self.id);
        }
    }
}
