//! The consent queue: sans-IO, FIFO, with a deadline per request counted from its creation
//! (CNS-04, CNS-05, CNS-06), and the caller's one-way influence (CNS-09).

use std::collections::VecDeque;
use std::time::Duration;

use super::{CallerVerdict, Choice, ConsentId, ConsentOutcome, DenyReason};
use crate::clock::Millis;
use crate::limits::{CONSENT_MAX_PENDING, CONSENT_TIMEOUT};

/// The queue already holds the maximum number of pending requests (CNS-06).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("too many consent requests are pending")]
pub struct QueueFull;

#[derive(Debug, Clone)]
struct Entry {
    id: ConsentId,
    deadline: Millis,
    choices: Vec<Choice>,
}

/// Pending consent requests in creation order. The head is the one shown.
#[derive(Debug, Clone)]
pub struct ConsentQueue {
    entries: VecDeque<Entry>,
    next_id: u64,
    max_pending: usize,
    timeout: Duration,
}

impl Default for ConsentQueue {
    fn default() -> Self {
        Self::new(CONSENT_MAX_PENDING, CONSENT_TIMEOUT)
    }
}

impl ConsentQueue {
    /// A queue with the given capacity and per-request timeout.
    pub fn new(max_pending: usize, timeout: Duration) -> Self {
        Self {
            entries: VecDeque::new(),
            next_id: 1,
            max_pending,
            timeout,
        }
    }

    /// Adds a request created `now`. Refused at once when `max_pending` are pending.
    pub fn submit(
        &mut self,
        choices: Vec<Choice>,
        now: Millis,
    ) -> Result<(ConsentId, Millis), QueueFull> {
        if self.entries.len() >= self.max_pending {
            return Err(QueueFull);
        }
        let id = ConsentId(self.next_id);
        self.next_id += 1;
        let deadline = now.plus(self.timeout);
        self.entries.push_back(Entry {
            id,
            deadline,
            choices,
        });
        Ok((id, deadline))
    }

    /// The request to show now (the oldest pending one).
    pub fn front(&self) -> Option<ConsentId> {
        self.entries.front().map(|e| e.id)
    }

    /// Pending requests.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether nothing is pending.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Whether `id` is pending.
    pub fn contains(&self, id: ConsentId) -> bool {
        self.entries.iter().any(|e| e.id == id)
    }

    /// The deadline of `id`.
    pub fn deadline(&self, id: ConsentId) -> Option<Millis> {
        self.entries.iter().find(|e| e.id == id).map(|e| e.deadline)
    }

    /// The earliest deadline of any pending request.
    pub fn next_deadline(&self) -> Option<Millis> {
        self.entries.iter().map(|e| e.deadline).min()
    }

    fn take(&mut self, id: ConsentId) -> Option<Entry> {
        let pos = self.entries.iter().position(|e| e.id == id)?;
        self.entries.remove(pos)
    }

    /// The user's answer through the surface. `None` = dismissed. An answer arriving at or after
    /// the deadline is a timeout; a choice that was not offered is a denial. Returns `None` when
    /// `id` is no longer pending.
    pub fn answer(
        &mut self,
        id: ConsentId,
        choice: Option<Choice>,
        now: Millis,
    ) -> Option<ConsentOutcome> {
        let entry = self.take(id)?;
        Some(if now >= entry.deadline {
            ConsentOutcome::Denied(DenyReason::Timeout)
        } else {
            match choice {
                None | Some(Choice::Deny) => ConsentOutcome::Denied(DenyReason::User),
                Some(c) if entry.choices.contains(&c) => ConsentOutcome::Allowed(c),
                Some(_) => ConsentOutcome::Denied(DenyReason::InvalidChoice),
            }
        })
    }

    /// The caller's answer (CNS-09): a reject denies; an allow is ignored and leaves the request
    /// pending (returns `None`).
    pub fn caller_answer(
        &mut self,
        id: ConsentId,
        verdict: CallerVerdict,
    ) -> Option<ConsentOutcome> {
        match verdict {
            CallerVerdict::Allow => None,
            CallerVerdict::Reject => self
                .take(id)
                .map(|_| ConsentOutcome::Denied(DenyReason::Caller)),
        }
    }

    /// Resolves every request whose deadline has passed at `now` as a timeout, queued ones
    /// included (CNS-04).
    pub fn expire(&mut self, now: Millis) -> Vec<(ConsentId, ConsentOutcome)> {
        let mut out = Vec::new();
        self.entries.retain(|e| {
            if now >= e.deadline {
                out.push((e.id, ConsentOutcome::Denied(DenyReason::Timeout)));
                false
            } else {
                true
            }
        });
        out
    }

    /// Removes `id` with the given outcome (used by the async shell for its own deadline and
    /// for withdrawn requests). Returns whether it was pending.
    pub fn remove(&mut self, id: ConsentId) -> bool {
        self.take(id).is_some()
    }
}
