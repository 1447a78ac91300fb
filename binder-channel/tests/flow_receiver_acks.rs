//! CH-31 receiver ack policy and CH-33 ack retry backoff.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use binder_channel::LinkError;
use binder_channel::flow::Action;
use common::*;

#[test]
fn ch31_nothing_is_acked_before_it_is_processed() {
    let clock = FakeClock::new();
    let mut core = credit_core();
    receive(&mut core, 5, 10);
    assert_eq!(drain(&mut core, clock.at(0)), vec![]);
}

#[test]
fn ch31_acks_after_8_processed_messages() {
    let clock = FakeClock::new();
    let mut core = credit_core();
    receive(&mut core, 20, 10);
    take(&mut core, 7);
    assert_eq!(acks(&drain(&mut core, clock.at(0))), Vec::<i64>::new());
    take(&mut core, 1);
    assert_eq!(acks(&drain(&mut core, clock.at(0))), vec![8]);
}

#[test]
fn ch31_acks_after_8192_processed_chars() {
    let clock = FakeClock::new();
    let mut core = credit_core();
    receive(&mut core, 3, 4_096);
    take(&mut core, 1);
    assert_eq!(acks(&drain(&mut core, clock.at(0))), Vec::<i64>::new());
    take(&mut core, 1);
    assert_eq!(acks(&drain(&mut core, clock.at(0))), vec![2]);
}

#[test]
fn ch31_acks_when_everything_received_is_processed() {
    let clock = FakeClock::new();
    let mut core = credit_core();
    receive(&mut core, 3, 10);
    take(&mut core, 2);
    assert_eq!(acks(&drain(&mut core, clock.at(0))), Vec::<i64>::new());
    take(&mut core, 1);
    assert_eq!(acks(&drain(&mut core, clock.at(0))), vec![3]);
}

#[test]
fn ch31_ack_values_are_cumulative() {
    let clock = FakeClock::new();
    let mut core = credit_core();
    let mut seen = Vec::new();
    for _ in 0..3 {
        receive(&mut core, 8, 10);
        take(&mut core, 8);
        seen.extend(acks(&drain(&mut core, clock.at(0))));
    }
    assert_eq!(seen, vec![8, 16, 24]);
    assert_eq!(core.unacked(), (0, 0));
}

#[test]
fn ch33_failed_ack_keeps_the_channel_and_retries_with_backoff() {
    let clock = FakeClock::new();
    let mut core = credit_core();
    receive(&mut core, 1, 10);
    take(&mut core, 1);
    let mut t = 0;
    assert_eq!(core.poll_action(clock.at(t)), Some(Action::Ack(1)));
    core.on_action_result(Err(LinkError::DeadObject), true, clock.at(t));
    for delay in [10, 50, 200, 1_000, 3_000, 3_000] {
        assert_eq!(core.poll_timeout(), Some(clock.at(t + delay)));
        assert_eq!(
            core.poll_action(clock.at(t + delay - 1)),
            None,
            "not before {delay} ms"
        );
        t += delay;
        assert_eq!(core.poll_action(clock.at(t)), Some(Action::Ack(1)));
        core.on_action_result(Err(LinkError::DeadObject), true, clock.at(t));
    }
    assert!(
        !core.is_closed(),
        "CH-33: a failed ack never closes the channel"
    );
    assert_eq!(core.stats().ack_failures, 7);
}

#[test]
fn ch33_the_retry_carries_the_latest_cumulative_count() {
    let clock = FakeClock::new();
    let mut core = credit_core();
    receive(&mut core, 1, 10);
    take(&mut core, 1);
    assert_eq!(core.poll_action(clock.at(0)), Some(Action::Ack(1)));
    core.on_action_result(Err(LinkError::DeadObject), true, clock.at(0));
    receive(&mut core, 2, 10);
    take(&mut core, 2);
    assert_eq!(core.poll_action(clock.at(10)), Some(Action::Ack(3)));
    core.on_action_result(Ok(()), true, clock.at(10));
    assert_eq!(core.unacked(), (0, 0));
    // Success resets the backoff: the next failure waits 10 ms again.
    receive(&mut core, 1, 10);
    take(&mut core, 1);
    assert_eq!(core.poll_action(clock.at(20)), Some(Action::Ack(4)));
    core.on_action_result(Err(LinkError::DeadObject), true, clock.at(20));
    assert_eq!(core.poll_timeout(), Some(clock.at(30)));
}

#[test]
fn ch43_failed_ack_to_a_dead_peer_closes_as_peer_died() {
    let clock = FakeClock::new();
    let mut core = credit_core();
    receive(&mut core, 1, 10);
    take(&mut core, 1);
    assert_eq!(core.poll_action(clock.at(0)), Some(Action::Ack(1)));
    core.on_action_result(Err(LinkError::DeadObject), false, clock.at(0));
    assert_eq!(
        core.close_reason(),
        Some(&binder_channel::CloseReason::PeerDied)
    );
}

#[test]
fn ch16_an_ack_being_handed_over_already_counts_for_the_window_check() {
    // Same-process Binder makes oneway calls synchronous: the peer may receive our ack and
    // send 32 more messages before our ack call returns. That is not a violation.
    let clock = FakeClock::new();
    let mut core = credit_core();
    receive(&mut core, 32, 1);
    take(&mut core, 32);
    assert_eq!(core.poll_action(clock.at(0)), Some(Action::Ack(32)));
    receive(&mut core, 32, 1); // arrives during the ack call
    assert!(!core.is_closed(), "{:?}", core.close_reason());
    core.on_action_result(Ok(()), true, clock.at(0));
    assert_eq!(core.unacked(), (32, 32));
    receive(&mut core, 1, 1);
    assert!(
        core.is_closed(),
        "33 past the last ack is still a violation"
    );
}
