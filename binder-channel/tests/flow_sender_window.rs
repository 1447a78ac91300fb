//! CH-20 sender window, CH-21 non-blocking enqueue, CH-22 backlog cap, CH-12 sender cap.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use binder_channel::flow::{Action, FlowCore};
use binder_channel::limits::MAX_BACKLOG_CHARS;
use binder_channel::{CloseClass, CloseReason, Failure, SendError};
use common::*;

/// Puts messages of the given lengths in flight (sent, not acked).
fn with_inflight(lengths: &[usize]) -> (FakeClock, FlowCore) {
    let clock = FakeClock::new();
    let mut core = credit_core();
    for &len in lengths {
        core.enqueue(text(len)).unwrap();
    }
    let sent = sends(&drain(&mut core, clock.at(0)));
    assert_eq!(sent.len(), lengths.len(), "setup must fit the window");
    (clock, core)
}

/// Whether a next message of `chars` is sent right away.
fn next_is_sent(core: &mut FlowCore, clock: &FakeClock, chars: usize) -> bool {
    core.enqueue(text(chars)).unwrap();
    matches!(core.poll_action(clock.at(1)), Some(Action::Send(m)) if m.len() == chars)
}

#[test]
fn ch20_nothing_in_flight_sends_a_full_size_message() {
    let (clock, mut core) = with_inflight(&[]);
    assert!(next_is_sent(&mut core, &clock, 65_536));
}

#[test]
fn ch20_one_message_of_40000_in_flight_makes_10_wait() {
    let (clock, mut core) = with_inflight(&[40_000]);
    assert!(!next_is_sent(&mut core, &clock, 10));
    assert_eq!(core.backlog_messages(), 1);
}

fn thirty_one_messages_of_32000_chars() -> Vec<usize> {
    let mut lengths = vec![1_000; 30];
    lengths.push(2_000);
    lengths
}

#[test]
fn ch20_31_in_flight_with_32000_chars_sends_768() {
    let (clock, mut core) = with_inflight(&thirty_one_messages_of_32000_chars());
    assert_eq!(
        (core.inflight_messages(), core.inflight_chars()),
        (31, 32_000)
    );
    assert!(next_is_sent(&mut core, &clock, 768));
}

#[test]
fn ch20_31_in_flight_with_32000_chars_makes_769_wait() {
    let (clock, mut core) = with_inflight(&thirty_one_messages_of_32000_chars());
    assert!(!next_is_sent(&mut core, &clock, 769));
}

#[test]
fn ch20_32_in_flight_makes_any_message_wait() {
    let (clock, mut core) = with_inflight(&[1; 32]);
    assert!(!next_is_sent(&mut core, &clock, 1));
    assert!(!next_is_sent(&mut core, &clock, 0));
}

#[test]
fn ch20_an_ack_opens_the_window_again() {
    let (clock, mut core) = with_inflight(&[1; 32]);
    core.enqueue(text(5)).unwrap();
    assert_eq!(core.poll_action(clock.at(1)), None);
    core.on_ack(PEER, 1, clock.at(2));
    assert_eq!(core.poll_action(clock.at(2)), Some(Action::Send(text(5))));
    assert_eq!(core.inflight_messages(), 32);
}

#[test]
fn ch21_enqueue_never_waits_for_the_window() {
    let (_clock, mut core) = with_inflight(&[1; 32]);
    for _ in 0..1_000 {
        core.enqueue(text(100)).unwrap();
    }
    assert_eq!(core.backlog_messages(), 1_000);
    assert_eq!(core.backlog_chars(), 100_000);
}

#[test]
fn ch15_messages_leave_in_enqueue_order() {
    let clock = FakeClock::new();
    let mut core = credit_core();
    let messages: Vec<String> = (0..100).map(|i| format!("m{i}")).collect();
    for m in &messages {
        core.enqueue(m.clone()).unwrap();
    }
    let mut sent = Vec::new();
    let mut acked = 0;
    while sent.len() < messages.len() {
        let batch = sends(&drain(&mut core, clock.at(0)));
        acked += batch.len() as i64;
        sent.extend(batch);
        core.on_ack(PEER, acked, clock.at(0));
    }
    assert_eq!(sent, messages);
}

#[test]
fn ch12_sender_accepts_65536_and_refuses_65537() {
    let mut core = credit_core();
    assert_eq!(core.enqueue(text(65_536)), Ok(()));
    assert_eq!(
        core.enqueue(text(65_537)),
        Err(SendError::TooLarge { chars: 65_537 })
    );
    assert!(
        !core.is_closed(),
        "an oversize send does not close the channel"
    );
}

#[test]
fn ch12_sender_counts_a_non_bmp_character_as_two_units() {
    let mut core = credit_core();
    // 65,534 + a surrogate pair = 65,536 units: allowed.
    assert_eq!(core.enqueue(format!("{}😀", text(65_534))), Ok(()));
    // 65,535 + a surrogate pair straddles the limit: 65,537 units.
    assert_eq!(
        core.enqueue(format!("{}😀", text(65_535))),
        Err(SendError::TooLarge { chars: 65_537 })
    );
}

#[test]
fn ch22_backlog_at_the_cap_is_kept_and_one_more_unit_closes_with_failure() {
    let clock = FakeClock::new();
    let mut core = credit_core();
    // Block the window so everything stays in the backlog.
    core.enqueue(text(1)).unwrap();
    drain(&mut core, clock.at(0));
    for _ in 0..MAX_BACKLOG_CHARS / 65_536 {
        core.enqueue(text(65_536)).unwrap();
    }
    assert_eq!(core.backlog_chars(), MAX_BACKLOG_CHARS);
    assert!(!core.is_closed());
    assert_eq!(core.enqueue(text(1)), Err(SendError::BacklogOverflow));
    assert_eq!(
        core.close_reason(),
        Some(&CloseReason::Failure(Failure::BacklogOverflow {
            chars: MAX_BACKLOG_CHARS + 1
        }))
    );
    assert_eq!(core.backlog_chars(), 0, "the backlog is released");
    assert_eq!(
        core.poll_action(clock.at(1)),
        Some(Action::Close("failure"))
    );
    assert_eq!(
        core.enqueue(text(1)),
        Err(SendError::Closed(CloseClass::Failure))
    );
}

#[test]
fn ch24_writable_tracks_the_backlog_against_the_mark() {
    let clock = FakeClock::new();
    let mut core = credit_core();
    core.enqueue(text(1)).unwrap();
    drain(&mut core, clock.at(0)); // window: 1 in flight, room for 32,767 more chars
    core.enqueue(text(40_000)).unwrap(); // does not fit: stays queued
    assert!(!core.is_writable(16_384));
    assert!(core.is_writable(40_001));
    core.on_ack(PEER, 1, clock.at(1));
    drain(&mut core, clock.at(1));
    assert_eq!(core.backlog_chars(), 0);
    assert!(core.is_writable(16_384));
}
