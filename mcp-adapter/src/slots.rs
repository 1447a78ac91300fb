//! [`CallSlots`]: at most N calls in flight, the rest served strictly in arrival order
//! (MCP-24). A place in the queue is taken synchronously by [`CallSlots::enqueue`], so the
//! order is the order of the calls, not the order in which tasks happen to be polled.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use tokio::sync::oneshot;

/// A counting gate with a FIFO queue.
#[derive(Debug, Clone)]
pub struct CallSlots {
    inner: Arc<Mutex<SlotsState>>,
}

#[derive(Debug)]
struct SlotsState {
    capacity: usize,
    free: usize,
    queue: VecDeque<oneshot::Sender<()>>,
}

fn lock(inner: &Mutex<SlotsState>) -> MutexGuard<'_, SlotsState> {
    inner.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Hands a freed slot to the oldest live waiter, or returns it to the pool.
fn release(inner: &Mutex<SlotsState>) {
    let mut st = lock(inner);
    while let Some(waiter) = st.queue.pop_front() {
        if waiter.send(()).is_ok() {
            return;
        }
    }
    st.free = (st.free + 1).min(st.capacity);
}

impl CallSlots {
    /// A gate letting `capacity` calls through at once.
    pub fn new(capacity: usize) -> CallSlots {
        CallSlots {
            inner: Arc::new(Mutex::new(SlotsState {
                capacity,
                free: capacity,
                queue: VecDeque::new(),
            })),
        }
    }

    /// Takes a place: a slot at once when one is free and nobody is waiting, else the end of
    /// the queue.
    pub fn enqueue(&self) -> SlotTicket {
        let mut st = lock(&self.inner);
        if st.free > 0 && st.queue.is_empty() {
            st.free -= 1;
            return SlotTicket {
                inner: Some(self.inner.clone()),
                waiting: None,
            };
        }
        let (tx, rx) = oneshot::channel();
        st.queue.push_back(tx);
        SlotTicket {
            inner: Some(self.inner.clone()),
            waiting: Some(rx),
        }
    }

    /// Slots held now.
    pub fn in_use(&self) -> usize {
        let st = lock(&self.inner);
        st.capacity - st.free
    }
}

/// A place in the queue (or an already granted slot). Dropping it leaves the queue.
#[derive(Debug)]
pub struct SlotTicket {
    /// `None` once the slot moved into a [`SlotGuard`].
    inner: Option<Arc<Mutex<SlotsState>>>,
    waiting: Option<oneshot::Receiver<()>>,
}

impl SlotTicket {
    /// Waits for the slot. Cancel-safe: dropping the future gives the place (or a slot
    /// handed over meanwhile) back.
    pub async fn ready(mut self) -> SlotGuard {
        if let Some(rx) = self.waiting.as_mut() {
            // The sender lives in the queue until it is handed a slot; it is only dropped by
            // `release`, which sends first, so an error cannot happen while we wait.
            let _ = rx.await;
            self.waiting = None;
        }
        // The slot moves into the guard; the ticket's drop then has nothing to give back.
        SlotGuard {
            inner: self.inner.take(),
        }
    }
}

impl Drop for SlotTicket {
    fn drop(&mut self) {
        let Some(inner) = self.inner.take() else {
            return;
        };
        match self.waiting.take() {
            // A granted slot that never became a guard.
            None => release(&inner),
            Some(mut rx) => {
                rx.close();
                if rx.try_recv().is_ok() {
                    // A slot was handed over just before we left the queue: pass it on.
                    release(&inner);
                }
            }
        }
    }
}

/// A held slot; dropping it frees the slot for the next in line.
#[derive(Debug)]
pub struct SlotGuard {
    inner: Option<Arc<Mutex<SlotsState>>>,
}

impl Drop for SlotGuard {
    fn drop(&mut self) {
        if let Some(inner) = self.inner.take() {
            release(&inner);
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[tokio::test]
    async fn mcp24_slots_are_granted_in_arrival_order() {
        let slots = CallSlots::new(2);
        let a = slots.enqueue().ready().await;
        let b = slots.enqueue().ready().await;
        assert_eq!(slots.in_use(), 2);
        let order = Arc::new(Mutex::new(Vec::new()));
        let mut tasks = Vec::new();
        for i in 0..4 {
            let ticket = slots.enqueue();
            let order = order.clone();
            tasks.push(tokio::spawn(async move {
                let guard = ticket.ready().await;
                order.lock().unwrap().push(i);
                guard
            }));
        }
        tokio::task::yield_now().await;
        assert!(order.lock().unwrap().is_empty());
        drop(a);
        drop(b);
        let mut guards = Vec::new();
        for t in tasks.drain(..2) {
            guards.push(t.await.unwrap());
        }
        assert_eq!(*order.lock().unwrap(), vec![0, 1]);
        guards.clear();
        for t in tasks {
            drop(t.await.unwrap());
        }
        assert_eq!(*order.lock().unwrap(), vec![0, 1, 2, 3]);
        assert_eq!(slots.in_use(), 0);
    }

    #[tokio::test]
    async fn a_waiter_that_leaves_the_queue_gives_its_place_away() {
        let slots = CallSlots::new(1);
        let held = slots.enqueue().ready().await;
        let leaving = slots.enqueue();
        let staying = slots.enqueue();
        let got = Arc::new(AtomicUsize::new(0));
        let g = got.clone();
        let task = tokio::spawn(async move {
            let guard = staying.ready().await;
            g.store(1, Ordering::SeqCst);
            guard
        });
        drop(leaving);
        drop(held);
        let guard = task.await.unwrap();
        assert_eq!(got.load(Ordering::SeqCst), 1);
        assert_eq!(slots.in_use(), 1);
        drop(guard);
        assert_eq!(slots.in_use(), 0);
    }
}
