//! The async Channel against a misbehaving scripted peer, with tokio's paused clock (no real
//! waiting): ack timeout, flooding, wrong UID, oversize, ack/close retry, back-pressure.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use binder_channel::memory::{PeerCall, scripted};
use binder_channel::{CloseReason, Failure, Violation};

const PEER: u32 = 10_123;
const SECOND_PROCESS: u32 = 10_456;

/// Lets the writer task run until it is idle (virtual time does not move).
async fn settle() {
    for _ in 0..50 {
        tokio::task::yield_now().await;
    }
}

#[tokio::test(start_paused = true)]
async fn ch23_peer_that_never_acks_times_out_after_30s() {
    let (channel, peer) = scripted(PEER).unwrap();
    for i in 0..40 {
        channel.send(format!("{i}")).unwrap();
    }
    settle().await;
    assert_eq!(peer.sent().len(), 32, "the window holds the rest back");
    let start = tokio::time::Instant::now();
    let reason = channel.closed().await;
    assert_eq!(reason, CloseReason::Failure(Failure::AckTimeout));
    assert_eq!(start.elapsed(), Duration::from_secs(30));
    settle().await;
    assert_eq!(
        peer.calls().last(),
        Some(&PeerCall::Close("failure".into()))
    );
}

#[tokio::test(start_paused = true)]
async fn ch20_acks_release_the_window() {
    let (channel, peer) = scripted(PEER).unwrap();
    for i in 0..40 {
        channel.send(format!("{i}")).unwrap();
    }
    settle().await;
    peer.ack(32);
    settle().await;
    assert_eq!(peer.sent().len(), 40);
    assert!(channel.close_reason().is_none());
}

#[tokio::test(start_paused = true)]
async fn ch32_peer_flooding_past_the_window_is_a_violation() {
    let (channel, peer) = scripted(PEER).unwrap();
    for i in 0..33 {
        peer.send(format!("{i}"));
    }
    assert_eq!(
        channel.closed().await,
        CloseReason::Violation(Violation::Window {
            unacked_messages: 33,
            unacked_chars: 33 + 23
        })
    );
    settle().await;
    assert_eq!(peer.calls(), vec![PeerCall::Close("violation".into())]);
    // The 32 in-window messages received before the violation are still delivered.
    let mut delivered = 0;
    while channel.recv().await.is_some() {
        delivered += 1;
    }
    assert_eq!(delivered, 32);
}

#[tokio::test(start_paused = true)]
async fn ch08_a_second_process_on_the_channel_is_a_violation() {
    let (channel, peer) = scripted(PEER).unwrap();
    peer.send("from the bound peer");
    peer.inbound()
        .send(SECOND_PROCESS, "from another uid".into());
    assert_eq!(
        channel.closed().await,
        CloseReason::Violation(Violation::WrongUid {
            expected: PEER,
            actual: SECOND_PROCESS
        })
    );
    assert_eq!(channel.recv().await.as_deref(), Some("from the bound peer"));
    assert_eq!(channel.recv().await, None);
}

#[tokio::test(start_paused = true)]
async fn ch12_peer_message_of_65537_is_a_violation_65536_is_not() {
    let (channel, peer) = scripted(PEER).unwrap();
    peer.send("x".repeat(65_536));
    assert_eq!(channel.recv().await.map(|m| m.len()), Some(65_536));
    peer.send("x".repeat(65_537));
    assert_eq!(
        channel.closed().await,
        CloseReason::Violation(Violation::Oversize { chars: 65_537 })
    );
}

#[tokio::test(start_paused = true)]
async fn ch25_ack_beyond_sent_is_a_violation() {
    let (channel, peer) = scripted(PEER).unwrap();
    channel.send("one").unwrap();
    settle().await;
    peer.ack(2);
    assert_eq!(
        channel.closed().await,
        CloseReason::Violation(Violation::AckBeyondSent { acked: 2, sent: 1 })
    );
}

#[tokio::test(start_paused = true)]
async fn ch31_consumer_processing_drives_the_acks() {
    let (channel, peer) = scripted(PEER).unwrap();
    for i in 0..20 {
        peer.send(format!("{i}"));
    }
    settle().await;
    assert_eq!(peer.last_ack(), None, "nothing processed yet");
    for _ in 0..8 {
        channel.recv().await.unwrap();
    }
    settle().await;
    assert_eq!(peer.last_ack(), Some(8));
    for _ in 0..12 {
        channel.recv().await.unwrap();
    }
    settle().await;
    assert_eq!(peer.last_ack(), Some(20), "drained: everything acked");
}

#[tokio::test(start_paused = true)]
async fn ch33_failed_acks_are_retried_after_10_50_200_ms() {
    let (channel, peer) = scripted(PEER).unwrap();
    peer.send("m");
    peer.fail_next_calls(3);
    let start = tokio::time::Instant::now();
    channel.recv().await.unwrap();
    while peer.last_ack().is_none() {
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    assert_eq!(peer.last_ack(), Some(1));
    let waited = start.elapsed();
    assert!(
        waited >= Duration::from_millis(260) && waited < Duration::from_millis(270),
        "{waited:?}"
    );
    assert!(channel.close_reason().is_none());
}

#[tokio::test(start_paused = true)]
async fn ch44_failed_close_is_retried_until_delivered() {
    let (channel, peer) = scripted(PEER).unwrap();
    peer.fail_next_calls(4);
    assert_eq!(channel.close().await, CloseReason::Local);
    tokio::time::sleep(Duration::from_millis(10 + 50 + 200 + 1_000 + 1)).await;
    assert_eq!(peer.calls(), vec![PeerCall::Close("local".into())]);
}

#[tokio::test(start_paused = true)]
async fn ch40_close_gives_up_flushing_after_2s() {
    let (channel, peer) = scripted(PEER).unwrap();
    for i in 0..40 {
        channel.send(format!("{i}")).unwrap();
    }
    let start = tokio::time::Instant::now();
    assert_eq!(channel.close().await, CloseReason::Local);
    assert_eq!(start.elapsed(), Duration::from_secs(2));
    settle().await;
    assert_eq!(peer.sent().len(), 32);
    assert_eq!(peer.calls().last(), Some(&PeerCall::Close("local".into())));
}

#[tokio::test(start_paused = true)]
async fn ch24_await_writable_waits_for_the_backlog_to_drain() {
    let (channel, peer) = scripted(PEER).unwrap();
    channel.send("x".repeat(30_000)).unwrap();
    channel.send("x".repeat(20_000)).unwrap(); // held back by the window
    settle().await;
    assert_eq!(channel.backlog_chars(), 20_000);
    let writer = channel.clone();
    let gate = tokio::spawn(async move { writer.await_writable(16_384).await });
    settle().await;
    assert!(
        !gate.is_finished(),
        "20,000 queued is above the 16,384 mark"
    );
    peer.ack(1);
    assert_eq!(gate.await.unwrap(), Ok(()));
    assert_eq!(channel.backlog_chars(), 0);
}

#[tokio::test(start_paused = true)]
async fn ch42_peer_death_ends_the_stream_after_what_arrived() {
    let (channel, peer) = scripted(PEER).unwrap();
    peer.send("last words");
    peer.die();
    assert_eq!(channel.closed().await, CloseReason::PeerDied);
    assert_eq!(channel.recv().await.as_deref(), Some("last words"));
    assert_eq!(channel.recv().await, None);
    settle().await;
    assert!(peer.calls().is_empty(), "no close is sent to a dead peer");
}

#[tokio::test(start_paused = true)]
async fn inbound_calls_before_attach_are_kept() {
    use binder_channel::{Channel, PeerIdentity};
    let (inbound, pending) = Channel::prepare(PeerIdentity::uid(PEER));
    inbound.send(PEER, "early".into());
    struct Sink;
    impl binder_channel::Link for Sink {
        fn send(&self, _: &str) -> Result<(), binder_channel::LinkError> {
            Ok(())
        }
        fn close(&self, _: &str) -> Result<(), binder_channel::LinkError> {
            Ok(())
        }
        fn ack(&self, _: i64) -> Result<(), binder_channel::LinkError> {
            Ok(())
        }
    }
    let channel = pending.attach(std::sync::Arc::new(Sink)).unwrap();
    assert_eq!(channel.recv().await.as_deref(), Some("early"));
}
