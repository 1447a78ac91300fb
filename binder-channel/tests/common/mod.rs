//! Helpers shared by the flow-core tests: a fixed fake clock origin and action draining.
#![allow(dead_code, unreachable_pub)]

use std::time::{Duration, Instant};

use binder_channel::flow::{Action, FlowCore, FlowMode};

/// The UID bound at `open` in these tests.
pub const PEER: u32 = 10_123;
/// Some other UID.
pub const STRANGER: u32 = 10_999;

/// The fake clock: a fixed origin plus an offset the test chooses. Nothing sleeps.
pub struct FakeClock {
    origin: Instant,
}

impl FakeClock {
    pub fn new() -> FakeClock {
        FakeClock {
            origin: Instant::now(),
        }
    }

    pub fn at(&self, millis: u64) -> Instant {
        self.origin + Duration::from_millis(millis)
    }
}

pub fn credit_core() -> FlowCore {
    FlowCore::new(FlowMode::Credit, PEER)
}

/// A message of `chars` UTF-16 units.
pub fn text(chars: usize) -> String {
    "x".repeat(chars)
}

/// Performs every action the core offers at `now`, reporting success, and returns them.
pub fn drain(core: &mut FlowCore, now: Instant) -> Vec<Action> {
    let mut actions = Vec::new();
    while let Some(action) = core.poll_action(now) {
        core.on_action_result(Ok(()), true, now);
        actions.push(action);
    }
    actions
}

/// The messages among `actions`.
pub fn sends(actions: &[Action]) -> Vec<String> {
    actions
        .iter()
        .filter_map(|a| match a {
            Action::Send(m) => Some(m.clone()),
            _ => None,
        })
        .collect()
}

/// The ack counts among `actions`.
pub fn acks(actions: &[Action]) -> Vec<i64> {
    actions
        .iter()
        .filter_map(|a| match a {
            Action::Ack(n) => Some(*n),
            _ => None,
        })
        .collect()
}

/// Receives `n` messages of `chars` each from the bound peer.
pub fn receive(core: &mut FlowCore, n: usize, chars: usize) {
    for _ in 0..n {
        core.on_send(PEER, text(chars));
    }
}

/// Takes (processes) `n` messages.
pub fn take(core: &mut FlowCore, n: usize) {
    for _ in 0..n {
        assert!(core.take_message().is_some(), "expected a queued message");
    }
}
