//! CH-23: with the window full, 30 s without an advancing ack closes the channel (`failure`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use binder_channel::flow::{Action, FlowCore};
use binder_channel::{CloseReason, Failure};
use common::*;

/// 32 messages in flight and one more waiting, the window blocked at t = 0.
fn blocked() -> (FakeClock, FlowCore) {
    let clock = FakeClock::new();
    let mut core = credit_core();
    for _ in 0..40 {
        core.enqueue(text(1)).unwrap();
    }
    assert_eq!(sends(&drain(&mut core, clock.at(0))).len(), 32);
    (clock, core)
}

#[test]
fn ch23_full_window_without_ack_for_30s_closes_with_failure() {
    let (clock, mut core) = blocked();
    assert_eq!(core.poll_timeout(), Some(clock.at(30_000)));
    core.handle_timeout(clock.at(29_999));
    assert!(!core.is_closed());
    core.handle_timeout(clock.at(30_000));
    assert_eq!(
        core.close_reason(),
        Some(&CloseReason::Failure(Failure::AckTimeout))
    );
    assert_eq!(
        core.poll_action(clock.at(30_000)),
        Some(Action::Close("failure"))
    );
}

#[test]
fn ch23_an_advancing_ack_restarts_the_timer() {
    let (clock, mut core) = blocked();
    core.on_ack(PEER, 1, clock.at(20_000));
    // The freed slot takes the next queued message; the window is blocked again.
    assert_eq!(sends(&drain(&mut core, clock.at(20_000))).len(), 1);
    core.handle_timeout(clock.at(30_000));
    assert!(!core.is_closed(), "the ack at 20 s restarted the timer");
    assert_eq!(core.poll_timeout(), Some(clock.at(50_000)));
    core.handle_timeout(clock.at(50_000));
    assert_eq!(
        core.close_reason(),
        Some(&CloseReason::Failure(Failure::AckTimeout))
    );
}

#[test]
fn ch23_a_repeated_ack_does_not_restart_the_timer() {
    let (clock, mut core) = blocked();
    core.on_ack(PEER, 0, clock.at(10_000));
    core.handle_timeout(clock.at(30_000));
    assert!(core.is_closed());
}

#[test]
fn ch23_no_timer_while_nothing_waits_for_the_window() {
    let clock = FakeClock::new();
    let mut core = credit_core();
    for _ in 0..32 {
        core.enqueue(text(1)).unwrap();
    }
    drain(&mut core, clock.at(0));
    // 32 in flight and unacked, but no message is waiting: nothing can time out.
    assert_eq!(core.poll_timeout(), None);
    core.handle_timeout(clock.at(3_600_000));
    assert!(!core.is_closed());
}

#[test]
fn ch23_timer_starts_when_the_window_first_blocks() {
    let clock = FakeClock::new();
    let mut core = credit_core();
    for _ in 0..32 {
        core.enqueue(text(1)).unwrap();
    }
    drain(&mut core, clock.at(0));
    core.enqueue(text(1)).unwrap();
    assert_eq!(core.poll_action(clock.at(5_000)), None); // blocks now
    assert_eq!(core.poll_timeout(), Some(clock.at(35_000)));
}
