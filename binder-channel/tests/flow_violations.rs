//! Violations detected by the receiver: CH-08 UID, CH-12 oversize, CH-32 window, CH-25 acks,
//! invalid UTF-16. Each closes the channel as `violation` and notifies the peer.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use binder_channel::flow::{Action, FlowCore};
use binder_channel::{CloseReason, Violation};
use common::*;

fn violation(core: &FlowCore) -> Option<Violation> {
    match core.close_reason() {
        Some(CloseReason::Violation(v)) => Some(v.clone()),
        _ => None,
    }
}

fn notifies_violation(core: &mut FlowCore) {
    let clock = FakeClock::new();
    assert_eq!(
        core.poll_action(clock.at(0)),
        Some(Action::Close("violation"))
    );
}

#[test]
fn ch32_32_unacked_messages_are_allowed_33_are_a_violation() {
    let mut core = credit_core();
    receive(&mut core, 32, 1);
    assert!(!core.is_closed());
    receive(&mut core, 1, 1);
    assert_eq!(
        violation(&core),
        Some(Violation::Window {
            unacked_messages: 33,
            unacked_chars: 33
        })
    );
    notifies_violation(&mut core);
}

#[test]
fn ch32_one_large_unacked_message_is_allowed() {
    let mut core = credit_core();
    receive(&mut core, 1, 65_536);
    assert!(!core.is_closed());
}

#[test]
fn ch32_more_than_one_message_over_32768_chars_is_a_violation() {
    let mut ok = credit_core();
    ok.on_send(PEER, text(20_000));
    ok.on_send(PEER, text(12_768));
    assert!(
        !ok.is_closed(),
        "32,768 chars in two messages is within the window"
    );

    let mut bad = credit_core();
    bad.on_send(PEER, text(20_000));
    bad.on_send(PEER, text(12_769));
    assert_eq!(
        violation(&bad),
        Some(Violation::Window {
            unacked_messages: 2,
            unacked_chars: 32_769
        })
    );
}

#[test]
fn ch32_unacked_counts_from_the_last_ack_sent() {
    let clock = FakeClock::new();
    let mut core = credit_core();
    receive(&mut core, 32, 1);
    take(&mut core, 32);
    assert_eq!(acks(&drain(&mut core, clock.at(0))), vec![32]);
    receive(&mut core, 32, 1);
    assert!(!core.is_closed());
    receive(&mut core, 1, 1);
    assert!(violation(&core).is_some());
}

#[test]
fn ch32_processed_but_unacked_messages_still_count() {
    let mut core = credit_core();
    receive(&mut core, 32, 1);
    take(&mut core, 32); // processed, but no ack was sent yet
    receive(&mut core, 1, 1);
    assert!(violation(&core).is_some());
}

#[test]
fn ch12_receiver_accepts_65536_and_closes_on_65537() {
    let mut ok = credit_core();
    ok.on_send(PEER, text(65_536));
    assert!(!ok.is_closed());
    assert_eq!(ok.take_message().map(|m| m.len()), Some(65_536));

    let mut bad = credit_core();
    bad.on_send(PEER, text(65_537));
    assert_eq!(violation(&bad), Some(Violation::Oversize { chars: 65_537 }));
    assert_eq!(
        bad.take_message(),
        None,
        "the oversize message is not delivered"
    );
    notifies_violation(&mut bad);
}

#[test]
fn ch12_receiver_counts_a_straddling_non_bmp_character_as_two_units() {
    let mut ok = credit_core();
    ok.on_send(PEER, format!("{}😀", text(65_534)));
    assert!(!ok.is_closed());

    let mut bad = credit_core();
    bad.on_send(PEER, format!("{}😀", text(65_535)));
    assert_eq!(violation(&bad), Some(Violation::Oversize { chars: 65_537 }));
}

#[test]
fn ch12_raw_utf16_is_checked_by_length_before_decoding() {
    let mut ok = credit_core();
    ok.on_send_utf16(PEER, &vec![0x78; 65_536]);
    assert!(!ok.is_closed());

    let mut bad = credit_core();
    bad.on_send_utf16(PEER, &vec![0x78; 65_537]);
    assert_eq!(violation(&bad), Some(Violation::Oversize { chars: 65_537 }));
}

#[test]
fn invalid_utf16_from_the_peer_is_a_violation() {
    let mut ok = credit_core();
    ok.on_send_utf16(PEER, &[0x7B, 0xD83D, 0xDE00, 0x7D]); // "{😀}"
    assert_eq!(ok.take_message().as_deref(), Some("{😀}"));

    let mut bad = credit_core();
    bad.on_send_utf16(PEER, &[0x7B, 0xD83D, 0x7D]); // lone high surrogate
    assert_eq!(violation(&bad), Some(Violation::InvalidText));
    notifies_violation(&mut bad);
}

#[test]
fn ch25_ack_for_more_than_sent_is_a_violation() {
    let clock = FakeClock::new();
    let mut core = credit_core();
    for _ in 0..3 {
        core.enqueue(text(1)).unwrap();
    }
    drain(&mut core, clock.at(0));
    core.on_ack(PEER, 3, clock.at(1));
    assert!(!core.is_closed());
    core.on_ack(PEER, 4, clock.at(2));
    assert_eq!(
        violation(&core),
        Some(Violation::AckBeyondSent { acked: 4, sent: 3 })
    );
}

#[test]
fn ch25_negative_ack_is_a_violation() {
    let clock = FakeClock::new();
    let mut core = credit_core();
    core.on_ack(PEER, -1, clock.at(0));
    assert_eq!(
        violation(&core),
        Some(Violation::AckBeyondSent { acked: -1, sent: 0 })
    );
}

#[test]
fn ch25_ack_lower_than_the_previous_is_a_violation() {
    let clock = FakeClock::new();
    let mut core = credit_core();
    for _ in 0..3 {
        core.enqueue(text(1)).unwrap();
    }
    drain(&mut core, clock.at(0));
    core.on_ack(PEER, 2, clock.at(1));
    core.on_ack(PEER, 2, clock.at(1));
    assert!(!core.is_closed(), "a repeated ack is harmless");
    core.on_ack(PEER, 1, clock.at(2));
    assert_eq!(
        violation(&core),
        Some(Violation::AckBackwards {
            acked: 1,
            previous: 2
        })
    );
}

fn wrong_uid() -> Option<Violation> {
    Some(Violation::WrongUid {
        expected: PEER,
        actual: STRANGER,
    })
}

#[test]
fn ch08_send_from_another_uid_is_a_violation() {
    let mut core = credit_core();
    core.on_send(STRANGER, text(1));
    assert_eq!(violation(&core), wrong_uid());
    assert_eq!(core.take_message(), None);
    notifies_violation(&mut core);
}

#[test]
fn ch08_ack_from_another_uid_is_a_violation() {
    let clock = FakeClock::new();
    let mut core = credit_core();
    core.enqueue(text(1)).unwrap();
    drain(&mut core, clock.at(0));
    core.on_ack(STRANGER, 1, clock.at(1));
    assert_eq!(violation(&core), wrong_uid());
    assert_eq!(
        core.inflight_messages(),
        1,
        "the stranger's ack was not applied"
    );
}

#[test]
fn ch08_close_from_another_uid_is_a_violation_not_a_remote_close() {
    let mut core = credit_core();
    core.on_close(STRANGER);
    assert_eq!(violation(&core), wrong_uid());
    notifies_violation(&mut core);
}

#[test]
fn violation_drops_the_backlog_but_keeps_earlier_received_messages() {
    let clock = FakeClock::new();
    let mut core = credit_core();
    receive(&mut core, 2, 5);
    for _ in 0..40 {
        core.enqueue(text(1)).unwrap();
    }
    core.on_send(STRANGER, text(1));
    assert_eq!(core.backlog_messages(), 0);
    let actions = drain(&mut core, clock.at(0));
    assert_eq!(actions, vec![Action::Close("violation")]);
    take(&mut core, 2);
    assert!(core.is_drained());
}
