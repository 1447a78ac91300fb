//! CNS-04, CNS-05, CNS-06, CNS-09 on the sans-IO queue, with a fake clock.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use permissions::Millis;
use permissions::consent::{
    CallerVerdict, Choice, ConsentOutcome, ConsentQueue, DenyReason, QueueFull,
};

const T0: Millis = Millis(1_000_000);

fn write_choices() -> Vec<Choice> {
    Choice::offered(true)
}

#[test]
fn cns06_seventeenth_is_refused_at_t0() {
    let mut q = ConsentQueue::default();
    for _ in 0..16 {
        q.submit(write_choices(), T0).unwrap();
    }
    assert_eq!(q.submit(write_choices(), T0), Err(QueueFull));
    assert_eq!(q.len(), 16);
}

#[test]
fn cns04_cns06_first_times_out_at_60s_while_queued_behind_a_displayed_one() {
    let mut q = ConsentQueue::default();
    let (displayed, _) = q.submit(write_choices(), T0).unwrap();
    // Created 10 s later, queued behind the displayed one.
    let (queued, deadline) = q
        .submit(write_choices(), T0.plus(Duration::from_secs(10)))
        .unwrap();
    assert_eq!(q.front(), Some(displayed));
    assert_eq!(deadline, T0.plus(Duration::from_secs(70)));
    assert!(q.expire(T0.plus(Duration::from_millis(59_999))).is_empty());
    let expired = q.expire(T0.plus(Duration::from_secs(60)));
    assert_eq!(
        expired,
        vec![(displayed, ConsentOutcome::Denied(DenyReason::Timeout))]
    );
    assert_eq!(q.front(), Some(queued));
    // The queued one's 60 s run from its own creation, not from when it is shown.
    assert!(q.expire(T0.plus(Duration::from_millis(69_999))).is_empty());
    assert_eq!(
        q.expire(T0.plus(Duration::from_secs(70))),
        vec![(queued, ConsentOutcome::Denied(DenyReason::Timeout))]
    );
    assert!(q.is_empty());
}

#[test]
fn cns04_queued_requests_expire_even_if_never_shown() {
    let mut q = ConsentQueue::default();
    let ids: Vec<_> = (0..16)
        .map(|_| q.submit(write_choices(), T0).unwrap().0)
        .collect();
    let expired = q.expire(T0.plus(Duration::from_secs(60)));
    assert_eq!(expired.len(), 16);
    assert_eq!(expired.iter().map(|(id, _)| *id).collect::<Vec<_>>(), ids);
    // Room again.
    assert!(
        q.submit(write_choices(), T0.plus(Duration::from_secs(60)))
            .is_ok()
    );
}

#[test]
fn cns05_fifo_order() {
    let mut q = ConsentQueue::default();
    let a = q.submit(write_choices(), T0).unwrap().0;
    let b = q.submit(write_choices(), T0).unwrap().0;
    let c = q.submit(write_choices(), T0).unwrap().0;
    assert_eq!(q.front(), Some(a));
    q.answer(a, Some(Choice::AllowOnce), T0).unwrap();
    assert_eq!(q.front(), Some(b));
    q.answer(b, Some(Choice::Deny), T0).unwrap();
    assert_eq!(q.front(), Some(c));
}

#[test]
fn cns04_late_answer_is_a_timeout() {
    let mut q = ConsentQueue::default();
    let (id, _) = q.submit(write_choices(), T0).unwrap();
    assert_eq!(
        q.answer(
            id,
            Some(Choice::AllowOnce),
            T0.plus(Duration::from_secs(60))
        ),
        Some(ConsentOutcome::Denied(DenyReason::Timeout))
    );
}

#[test]
fn cns02_choice_not_offered_is_a_denial() {
    let mut q = ConsentQueue::default();
    let (id, _) = q.submit(Choice::offered(false), T0).unwrap();
    assert_eq!(
        q.answer(id, Some(Choice::AlwaysAllow), T0),
        Some(ConsentOutcome::Denied(DenyReason::InvalidChoice))
    );
    let (id, _) = q.submit(Choice::offered(false), T0).unwrap();
    assert_eq!(
        q.answer(id, None, T0),
        Some(ConsentOutcome::Denied(DenyReason::User))
    );
}

#[test]
fn cns09_caller_can_only_add_a_denial() {
    let mut q = ConsentQueue::default();
    let (id, _) = q.submit(write_choices(), T0).unwrap();
    assert_eq!(q.caller_answer(id, CallerVerdict::Allow), None);
    assert!(q.contains(id), "an allow from the caller changes nothing");
    assert_eq!(
        q.caller_answer(id, CallerVerdict::Reject),
        Some(ConsentOutcome::Denied(DenyReason::Caller))
    );
    assert!(!q.contains(id));
    // After resolution, a late user answer is ignored.
    assert_eq!(q.answer(id, Some(Choice::AllowOnce), T0), None);
}
