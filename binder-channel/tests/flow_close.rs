//! CH-40..CH-45: local close flush, ordering, remote close, peer death, close retry, reasons.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use binder_channel::flow::{Action, FlowCore};
use binder_channel::{CloseClass, CloseReason, LinkError, SendError};
use common::*;

/// A core with `n` one-char messages queued behind a full window (32 in flight).
fn with_blocked_backlog(clock: &FakeClock, n: usize) -> FlowCore {
    let mut core = credit_core();
    for i in 0..32 + n {
        core.enqueue(format!("{i}")).unwrap();
    }
    drain(&mut core, clock.at(0));
    assert_eq!(core.backlog_messages(), n);
    core
}

#[test]
fn ch40_local_close_flushes_the_backlog_then_calls_close() {
    let clock = FakeClock::new();
    let mut core = with_blocked_backlog(&clock, 5);
    core.close(clock.at(100));
    assert!(!core.is_closed(), "still flushing");
    assert_eq!(drain(&mut core, clock.at(100)), vec![]);
    core.on_ack(PEER, 32, clock.at(1_000));
    let actions = drain(&mut core, clock.at(1_000));
    let mut expected: Vec<Action> = (32..37).map(|i| Action::Send(format!("{i}"))).collect();
    expected.push(Action::Close("local"));
    assert_eq!(
        actions, expected,
        "every send before close goes first (CH-41)"
    );
    assert_eq!(core.close_reason(), Some(&CloseReason::Local));
    assert!(core.is_finished());
}

#[test]
fn ch40_flush_gives_up_after_2s_and_closes_anyway() {
    let clock = FakeClock::new();
    let mut core = with_blocked_backlog(&clock, 5);
    core.close(clock.at(0));
    assert_eq!(core.poll_timeout(), Some(clock.at(2_000)));
    core.handle_timeout(clock.at(1_999));
    assert!(!core.is_closed());
    core.handle_timeout(clock.at(2_000));
    assert_eq!(
        core.backlog_messages(),
        0,
        "the rest of the backlog is dropped"
    );
    assert_eq!(
        drain(&mut core, clock.at(2_000)),
        vec![Action::Close("local")]
    );
}

#[test]
fn ch41_nothing_is_accepted_after_close() {
    let clock = FakeClock::new();
    let mut core = credit_core();
    core.enqueue(text(1)).unwrap();
    core.close(clock.at(0));
    assert_eq!(
        core.enqueue(text(1)),
        Err(SendError::Closed(CloseClass::Local))
    );
    assert_eq!(
        drain(&mut core, clock.at(0)),
        vec![Action::Send(text(1)), Action::Close("local")]
    );
}

#[test]
fn ch41_the_closing_side_still_receives_and_acks_while_flushing() {
    let clock = FakeClock::new();
    let mut core = with_blocked_backlog(&clock, 1);
    core.close(clock.at(0));
    receive(&mut core, 1, 3);
    take(&mut core, 1);
    assert_eq!(acks(&drain(&mut core, clock.at(1))), vec![1]);
}

#[test]
fn ch41_remote_close_stops_sending_and_delivers_what_arrived() {
    let clock = FakeClock::new();
    let mut core = with_blocked_backlog(&clock, 3);
    receive(&mut core, 2, 4);
    core.on_close(PEER);
    assert_eq!(core.close_reason(), Some(&CloseReason::Remote));
    assert_eq!(core.backlog_messages(), 0);
    assert_eq!(
        drain(&mut core, clock.at(1)),
        vec![],
        "no close is sent back"
    );
    assert!(!core.is_drained(), "two messages still to deliver");
    take(&mut core, 2);
    assert!(core.is_drained());
    // Calls after the close are ignored.
    core.on_send(PEER, text(1));
    assert_eq!(core.take_message(), None);
}

#[test]
fn ch42_peer_death_closes_without_notifying_and_releases_the_writer() {
    let clock = FakeClock::new();
    let mut core = with_blocked_backlog(&clock, 3);
    core.on_peer_died();
    assert_eq!(core.close_reason(), Some(&CloseReason::PeerDied));
    assert_eq!(core.backlog_messages(), 0);
    assert_eq!(drain(&mut core, clock.at(1)), vec![]);
    assert_eq!(core.poll_timeout(), None);
    assert!(core.is_finished());
}

#[test]
fn ch42_peer_death_during_a_close_retry_stops_the_retry() {
    let clock = FakeClock::new();
    let mut core = credit_core();
    core.close(clock.at(0));
    assert_eq!(core.poll_action(clock.at(0)), Some(Action::Close("local")));
    core.on_action_result(Err(LinkError::DeadObject), true, clock.at(0));
    core.on_peer_died();
    assert_eq!(
        core.close_reason(),
        Some(&CloseReason::Local),
        "the reason stays"
    );
    assert_eq!(core.poll_action(clock.at(10_000)), None);
    assert!(core.is_finished());
}

#[test]
fn ch44_failed_close_is_retried_with_backoff_until_it_succeeds() {
    let clock = FakeClock::new();
    let mut core = credit_core();
    core.close(clock.at(0));
    let mut t = 0;
    assert_eq!(core.poll_action(clock.at(t)), Some(Action::Close("local")));
    core.on_action_result(Err(LinkError::DeadObject), true, clock.at(t));
    for delay in [10, 50, 200, 1_000, 3_000] {
        assert_eq!(core.poll_action(clock.at(t + delay - 1)), None);
        t += delay;
        assert_eq!(core.poll_action(clock.at(t)), Some(Action::Close("local")));
        core.on_action_result(Err(LinkError::DeadObject), true, clock.at(t));
    }
    t += 3_000;
    assert_eq!(core.poll_action(clock.at(t)), Some(Action::Close("local")));
    core.on_action_result(Ok(()), true, clock.at(t));
    assert!(core.is_finished());
    assert_eq!(core.stats().close_failures, 6);
}

#[test]
fn ch44_failed_close_to_a_dead_peer_is_not_retried() {
    let clock = FakeClock::new();
    let mut core = credit_core();
    core.close(clock.at(0));
    assert_eq!(core.poll_action(clock.at(0)), Some(Action::Close("local")));
    core.on_action_result(Err(LinkError::DeadObject), false, clock.at(0));
    assert!(core.is_finished());
}

#[test]
fn ch43_failed_send_to_a_live_peer_is_a_failure_not_a_death() {
    let clock = FakeClock::new();
    let mut core = credit_core();
    core.enqueue(text(1)).unwrap();
    assert!(matches!(
        core.poll_action(clock.at(0)),
        Some(Action::Send(_))
    ));
    core.on_action_result(Err(LinkError::DeadObject), true, clock.at(0));
    assert_eq!(
        core.close_reason().map(CloseReason::class),
        Some(CloseClass::Failure)
    );
    assert_eq!(
        core.poll_action(clock.at(0)),
        Some(Action::Close("failure"))
    );
}

#[test]
fn ch43_failed_send_to_a_dead_peer_is_a_death() {
    let clock = FakeClock::new();
    let mut core = credit_core();
    core.enqueue(text(1)).unwrap();
    assert!(matches!(
        core.poll_action(clock.at(0)),
        Some(Action::Send(_))
    ));
    core.on_action_result(Err(LinkError::DeadObject), false, clock.at(0));
    assert_eq!(core.close_reason(), Some(&CloseReason::PeerDied));
    assert_eq!(core.poll_action(clock.at(0)), None);
}

#[test]
fn ch45_reasons_map_to_the_five_classes() {
    use binder_channel::{Failure, Violation};
    let cases = [
        (CloseReason::Local, "local"),
        (CloseReason::Remote, "remote"),
        (CloseReason::PeerDied, "peer_died"),
        (
            CloseReason::Violation(Violation::Oversize { chars: 1 }),
            "violation",
        ),
        (CloseReason::Violation(Violation::EndlessLine), "violation"),
        (CloseReason::Failure(Failure::AckTimeout), "failure"),
        (CloseReason::Failure(Failure::SendFailed), "failure"),
    ];
    for (reason, class) in cases {
        assert_eq!(reason.class().as_str(), class);
        assert_eq!(reason.to_string(), class);
    }
}
