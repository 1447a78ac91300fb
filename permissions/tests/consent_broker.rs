//! The async consent broker (CNS-04..07, CNS-09) on tokio's paused clock: deterministic, no
//! real sleeping.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;
use std::time::Duration;

use capability_model::Risk;
use permissions::consent::{
    CallerVerdict, Choice, ConsentOutcome, ConsentRequest, DenyReason, Initiator, ScriptStep,
};
use permissions::{ConsentBroker, Millis, ScriptedSurface, TokioClock};
use tokio::time::Instant;

const T0: Millis = Millis(1_700_000_000_000);

fn request(tool: &str) -> ConsentRequest {
    ConsentRequest {
        capability: common::write_tool(tool).id,
        title: None,
        risk: Risk::Write,
        arguments: serde_json::Map::new(),
        initiator: Initiator::App {
            package: "com.example.caller".into(),
            label: Some("Caller".into()),
        },
        choices: Choice::offered(true),
    }
}

fn broker(surface: Arc<ScriptedSurface>) -> ConsentBroker {
    ConsentBroker::new(surface, Arc::new(TokioClock::anchored(T0)))
}

#[tokio::test(start_paused = true)]
async fn cns05_prompts_are_shown_one_at_a_time_in_fifo_order() {
    let surface = Arc::new(ScriptedSurface::new());
    surface
        .push_tool(ScriptStep::After(
            Duration::from_secs(2),
            Some(Choice::AllowOnce),
        ))
        .push_tool(ScriptStep::After(
            Duration::from_secs(2),
            Some(Choice::Deny),
        ))
        .push_tool(ScriptStep::After(
            Duration::from_secs(2),
            Some(Choice::AlwaysAllow),
        ));
    let b = broker(surface.clone());
    let t1 = b.submit(&request("one")).unwrap();
    let t2 = b.submit(&request("two")).unwrap();
    let t3 = b.submit(&request("three")).unwrap();
    // Wait on them in reverse: order of display must still be FIFO.
    let h3 = tokio::spawn(t3.wait());
    let h2 = tokio::spawn(t2.wait());
    let h1 = tokio::spawn(t1.wait());
    assert_eq!(
        h1.await.unwrap(),
        ConsentOutcome::Allowed(Choice::AllowOnce)
    );
    assert_eq!(h2.await.unwrap(), ConsentOutcome::Denied(DenyReason::User));
    assert_eq!(
        h3.await.unwrap(),
        ConsentOutcome::Allowed(Choice::AlwaysAllow)
    );
    let shown: Vec<String> = surface
        .shown_tools()
        .iter()
        .map(|p| p.title.clone())
        .collect();
    assert_eq!(
        shown,
        vec![
            "Allow tool 「one」 to run?",
            "Allow tool 「two」 to run?",
            "Allow tool 「three」 to run?"
        ]
    );
    assert_eq!(b.pending(), 0);
}

#[tokio::test(start_paused = true)]
async fn cns04_queue_time_counts_toward_the_60s() {
    let surface = Arc::new(ScriptedSurface::new());
    // The first prompt is answered after 50 s; the second is shown at 50 s and never answered.
    surface
        .push_tool(ScriptStep::After(
            Duration::from_secs(50),
            Some(Choice::AllowOnce),
        ))
        .push_tool(ScriptStep::Never);
    let b = broker(surface.clone());
    let start = Instant::now();
    let t1 = b.submit(&request("one")).unwrap();
    let t2 = b.submit(&request("two")).unwrap();
    let h1 = tokio::spawn(t1.wait());
    let h2 = tokio::spawn(async move {
        let o = t2.wait().await;
        (o, Instant::now())
    });
    assert_eq!(
        h1.await.unwrap(),
        ConsentOutcome::Allowed(Choice::AllowOnce)
    );
    let (o2, at) = h2.await.unwrap();
    assert_eq!(o2, ConsentOutcome::Denied(DenyReason::Timeout));
    // 60 s after creation, i.e. only 10 s after it was shown.
    assert_eq!(at - start, Duration::from_secs(60));
    assert_eq!(surface.withdrawn().len(), 1);
}

#[tokio::test(start_paused = true)]
async fn cns06_a_thousand_concurrent_requests() {
    let surface = Arc::new(ScriptedSurface::new()); // never answers
    let b = broker(surface.clone());
    let start = Instant::now();
    let mut handles = Vec::new();
    for i in 0..1000 {
        let b = b.clone();
        handles.push(tokio::spawn(async move {
            let o = b.request(&request(&format!("t{i}"))).await;
            (o, Instant::now())
        }));
    }
    let mut unavailable = 0;
    let mut timed_out = 0;
    for h in handles {
        let (o, at) = h.await.unwrap();
        match o {
            ConsentOutcome::Unavailable => {
                unavailable += 1;
                assert_eq!(at, start, "refused immediately, at t=0");
            }
            ConsentOutcome::Denied(DenyReason::Timeout) => {
                timed_out += 1;
                assert_eq!(at - start, Duration::from_secs(60));
            }
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(timed_out, 16);
    assert_eq!(unavailable, 984);
    // The refused ones never reached the surface (no UI, CNS-06); of the 16 accepted, only
    // heads of the queue were shown.
    let shown = surface.shown_tools().len();
    assert!((1..=16).contains(&shown), "{shown} prompts shown");
    assert_eq!(b.pending(), 0);
}

#[tokio::test(start_paused = true)]
async fn cns06_seventeenth_refused_first_times_out_while_queued() {
    let surface = Arc::new(ScriptedSurface::new());
    let b = broker(surface.clone());
    let tickets: Vec<_> = (0..16)
        .map(|i| b.submit(&request(&format!("t{i}"))).unwrap())
        .collect();
    assert_eq!(
        b.submit(&request("seventeenth")).unwrap_err(),
        ConsentOutcome::Unavailable
    );
    let start = Instant::now();
    let mut hs = Vec::new();
    for t in tickets {
        hs.push(tokio::spawn(
            async move { (t.wait().await, Instant::now()) },
        ));
    }
    for h in hs {
        let (o, at) = h.await.unwrap();
        assert_eq!(o, ConsentOutcome::Denied(DenyReason::Timeout));
        assert_eq!(at - start, Duration::from_secs(60));
    }
}

#[tokio::test(start_paused = true)]
async fn cns09_caller_reject_denies_caller_allow_is_ignored() {
    let surface = Arc::new(ScriptedSurface::new());
    surface.push_tool(ScriptStep::Never);
    surface.push_tool(ScriptStep::After(
        Duration::from_secs(5),
        Some(Choice::Deny),
    ));
    let b = broker(surface.clone());
    let t1 = b.submit(&request("one")).unwrap();
    let t2 = b.submit(&request("two")).unwrap();
    let (id1, id2) = (t1.id(), t2.id());
    let h1 = tokio::spawn(t1.wait());
    let h2 = tokio::spawn(t2.wait());
    tokio::time::sleep(Duration::from_secs(1)).await;
    // The caller "approves" the shown one: nothing happens.
    assert!(!b.caller_answer(id1, CallerVerdict::Allow));
    assert_eq!(b.pending(), 2);
    // The caller rejects it: denied, and the next one is shown.
    assert!(b.caller_answer(id1, CallerVerdict::Reject));
    assert_eq!(
        h1.await.unwrap(),
        ConsentOutcome::Denied(DenyReason::Caller)
    );
    assert_eq!(h2.await.unwrap(), ConsentOutcome::Denied(DenyReason::User));
    assert!(
        !b.caller_answer(id2, CallerVerdict::Reject),
        "already resolved"
    );
    assert_eq!(
        surface.withdrawn().first().map(|w| w.1),
        Some(DenyReason::Caller)
    );
}

#[tokio::test(start_paused = true)]
async fn dropping_a_ticket_withdraws_it_and_passes_the_turn() {
    let surface = Arc::new(ScriptedSurface::new());
    surface.push_tool(ScriptStep::Answer(Some(Choice::AllowOnce)));
    let b = broker(surface.clone());
    let first = b.submit(&request("first")).unwrap();
    let second = b.submit(&request("second")).unwrap();
    drop(first);
    assert_eq!(b.pending(), 1);
    assert_eq!(
        second.wait().await,
        ConsentOutcome::Allowed(Choice::AllowOnce)
    );
    assert_eq!(surface.shown_tools().len(), 1);
    assert_eq!(
        surface.shown_tools()[0].title,
        "Allow tool 「second」 to run?"
    );
}

#[tokio::test(start_paused = true)]
async fn cns04_an_unwatched_ticket_still_frees_its_slot_after_60s() {
    let surface = Arc::new(ScriptedSurface::new());
    surface.push_tool(ScriptStep::Answer(Some(Choice::AllowOnce)));
    let b = broker(surface.clone());
    // Sixteen tickets held but never waited on.
    let held: Vec<_> = (0..16)
        .map(|i| b.submit(&request(&format!("held{i}"))).unwrap())
        .collect();
    assert_eq!(
        b.submit(&request("late")).unwrap_err(),
        ConsentOutcome::Unavailable
    );
    tokio::time::sleep(Duration::from_secs(60)).await;
    // Their deadlines passed: a new request is accepted, shown, and answered.
    let t = b.submit(&request("fresh")).unwrap();
    assert_eq!(t.wait().await, ConsentOutcome::Allowed(Choice::AllowOnce));
    // The held ones report the timeout when finally asked.
    for h in held {
        assert_eq!(h.wait().await, ConsentOutcome::Denied(DenyReason::Timeout));
    }
}
