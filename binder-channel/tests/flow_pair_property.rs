//! Property: two correct cores connected by in-order, arbitrarily delayed oneway pipes never
//! see a violation, and every message arrives once, in order (CH-15, CH-20 vs CH-32).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::VecDeque;

use binder_channel::flow::{Action, FlowCore, FlowMode};
use common::FakeClock;
use proptest::prelude::*;

const UID_A: u32 = 1_000;
const UID_B: u32 = 10_123;

#[derive(Debug, Clone)]
enum Step {
    /// A queues a message of this many units.
    Enqueue(usize),
    /// A's writer performs its next action into the pipe.
    PollA,
    /// B's writer performs its next action into the pipe.
    PollB,
    /// The oldest call in flight A → B arrives.
    DeliverToB,
    /// The oldest call in flight B → A arrives.
    DeliverToA,
    /// B's consumer takes one message.
    TakeB,
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        2 => prop_oneof![1usize..200, 1usize..20_000, Just(65_536usize), Just(32_768usize)]
            .prop_map(Step::Enqueue),
        4 => Just(Step::PollA),
        2 => Just(Step::PollB),
        4 => Just(Step::DeliverToB),
        2 => Just(Step::DeliverToA),
        3 => Just(Step::TakeB),
    ]
}

fn deliver(to: &mut FlowCore, from_uid: u32, call: Action, clock: &FakeClock) {
    match call {
        Action::Send(m) => to.on_send(from_uid, m),
        Action::Ack(n) => to.on_ack(from_uid, n, clock.at(0)),
        Action::Close(_) => to.on_close(from_uid),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn correct_peers_never_violate_and_deliver_in_order(steps in prop::collection::vec(step(), 1..300)) {
        let clock = FakeClock::new();
        let now = clock.at(0);
        let mut a = FlowCore::new(FlowMode::Credit, UID_B);
        let mut b = FlowCore::new(FlowMode::Credit, UID_A);
        let mut to_b: VecDeque<Action> = VecDeque::new();
        let mut to_a: VecDeque<Action> = VecDeque::new();
        let mut queued: Vec<usize> = Vec::new();
        let mut taken: Vec<usize> = Vec::new();
        for step in steps {
            match step {
                Step::Enqueue(len) => {
                    // Tag each message with its sequence number to check order.
                    let seq = queued.len();
                    let tag = format!("{seq}:");
                    let body = "x".repeat(len.saturating_sub(tag.len()));
                    a.enqueue(format!("{tag}{body}")).unwrap();
                    queued.push(seq);
                }
                Step::PollA => if let Some(action) = a.poll_action(now) {
                    a.on_action_result(Ok(()), true, now);
                    to_b.push_back(action);
                },
                Step::PollB => if let Some(action) = b.poll_action(now) {
                    b.on_action_result(Ok(()), true, now);
                    to_a.push_back(action);
                },
                Step::DeliverToB => if let Some(call) = to_b.pop_front() {
                    deliver(&mut b, UID_A, call, &clock);
                },
                Step::DeliverToA => if let Some(call) = to_a.pop_front() {
                    deliver(&mut a, UID_B, call, &clock);
                },
                Step::TakeB => if let Some(m) = b.take_message() {
                    let seq: usize = m.split(':').next().unwrap().parse().unwrap();
                    taken.push(seq);
                },
            }
            prop_assert!(!a.is_closed(), "A closed: {:?}", a.close_reason());
            prop_assert!(!b.is_closed(), "B closed: {:?}", b.close_reason());
            prop_assert!(a.inflight_messages() <= 32);
        }
        // Run everything to completion: all queued messages must arrive, in order.
        for _ in 0..1_000_000 {
            let mut progressed = false;
            while let Some(action) = a.poll_action(now) {
                a.on_action_result(Ok(()), true, now);
                to_b.push_back(action);
                progressed = true;
            }
            while let Some(call) = to_b.pop_front() {
                deliver(&mut b, UID_A, call, &clock);
                progressed = true;
            }
            while let Some(m) = b.take_message() {
                taken.push(m.split(':').next().unwrap().parse().unwrap());
                progressed = true;
            }
            while let Some(action) = b.poll_action(now) {
                b.on_action_result(Ok(()), true, now);
                to_a.push_back(action);
                progressed = true;
            }
            while let Some(call) = to_a.pop_front() {
                deliver(&mut a, UID_B, call, &clock);
                progressed = true;
            }
            if !progressed {
                break;
            }
        }
        prop_assert!(!a.is_closed() && !b.is_closed());
        prop_assert_eq!(taken, queued);
        prop_assert_eq!(a.backlog_messages(), 0);
        prop_assert_eq!(a.inflight_messages(), 0, "everything was acked");
    }
}
