//! The async Channel over the in-memory pair: ordering, streaming, close and death (CH-15,
//! CH-20/31 end to end, CH-40..CH-42, CH-45).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use binder_channel::limits::PRODUCER_HIGH_WATER_CHARS;
use binder_channel::{CloseClass, CloseReason, SendError, memory};
use futures::StreamExt;

const AGENT: u32 = 1_000;
const PLUGIN: u32 = 10_123;

#[tokio::test]
async fn peer_identity_is_the_uid_the_carrier_reported() {
    let (agent, plugin) = memory::pair(AGENT, PLUGIN).unwrap();
    assert_eq!(agent.peer().uid, PLUGIN);
    assert_eq!(plugin.peer().uid, AGENT);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ch15_ten_thousand_messages_stream_in_order_both_ways() {
    let (a, b) = memory::pair(AGENT, PLUGIN).unwrap();
    const N: usize = 10_000;
    let producer = |ch: binder_channel::Channel, tag: &'static str| {
        tokio::spawn(async move {
            for i in 0..N {
                ch.await_writable(PRODUCER_HIGH_WATER_CHARS).await.unwrap();
                ch.send(format!("{tag}{i}:{}", "y".repeat(i % 300)))
                    .unwrap();
            }
        })
    };
    let pa = producer(a.clone(), "a");
    let pb = producer(b.clone(), "b");
    let consumer = |ch: binder_channel::Channel, tag: &'static str| {
        tokio::spawn(async move {
            for i in 0..N {
                let m = ch.recv().await.unwrap();
                assert_eq!(m, format!("{tag}{i}:{}", "y".repeat(i % 300)));
            }
        })
    };
    let cb = consumer(b.clone(), "a");
    let ca = consumer(a.clone(), "b");
    for task in [pa, pb, ca, cb] {
        task.await.unwrap();
    }
    let stats = a.stats();
    assert_eq!(stats.sent, N as u64);
    assert_eq!(stats.received, N as u64);
    assert!(stats.acks_sent > 0);
    assert!(a.close_reason().is_none() && b.close_reason().is_none());
}

#[tokio::test]
async fn full_size_messages_pass_one_at_a_time() {
    let (a, b) = memory::pair(AGENT, PLUGIN).unwrap();
    for i in 0..20 {
        a.send(format!("{i:05}{}", "z".repeat(65_531))).unwrap();
    }
    for i in 0..20 {
        let m = b.recv().await.unwrap();
        assert_eq!(m.len(), 65_536);
        assert!(m.starts_with(&format!("{i:05}")));
    }
}

#[tokio::test]
async fn ch12_oversize_send_is_refused_and_the_channel_stays_open() {
    let (a, b) = memory::pair(AGENT, PLUGIN).unwrap();
    assert_eq!(
        a.send("x".repeat(65_537)),
        Err(SendError::TooLarge { chars: 65_537 })
    );
    a.send("after").unwrap();
    assert_eq!(b.recv().await.as_deref(), Some("after"));
}

#[tokio::test]
async fn ch41_every_send_before_close_arrives_then_the_stream_ends() {
    let (a, b) = memory::pair(AGENT, PLUGIN).unwrap();
    for i in 0..500 {
        a.send(format!("m{i}")).unwrap();
    }
    // The flush needs the receiver to keep consuming (and acking).
    let consumer = tokio::spawn(b.messages().collect::<Vec<String>>());
    let reason = a.close().await;
    assert_eq!(reason, CloseReason::Local);
    assert_eq!(a.send("late"), Err(SendError::Closed(CloseClass::Local)));
    let got = consumer.await.unwrap();
    let want: Vec<String> = (0..500).map(|i| format!("m{i}")).collect();
    assert_eq!(got, want);
    assert_eq!(b.closed().await, CloseReason::Remote);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ch41_close_racing_with_sends_delivers_exactly_the_accepted_prefix() {
    for round in 0..20 {
        let (a, b) = memory::pair(AGENT, PLUGIN).unwrap();
        let consumer = tokio::spawn(b.messages().collect::<Vec<String>>());
        let sender = a.clone();
        let producer = tokio::spawn(async move {
            let mut accepted = 0usize;
            for i in 0..5_000 {
                match sender.send(format!("{i}")) {
                    Ok(()) => accepted += 1,
                    Err(SendError::Closed(_)) => break,
                    Err(other) => panic!("unexpected {other:?}"),
                }
                if i % 64 == 0 {
                    tokio::task::yield_now().await;
                }
            }
            accepted
        });
        tokio::time::sleep(Duration::from_micros(50 * round)).await;
        a.close().await;
        let accepted = producer.await.unwrap();
        let got = consumer.await.unwrap();
        let want: Vec<String> = (0..accepted).map(|i| format!("{i}")).collect();
        assert_eq!(
            got, want,
            "round {round}: nothing lost, nothing after close"
        );
    }
}

#[tokio::test]
async fn ch42_peer_death_mid_stream_closes_the_survivor_as_peer_died() {
    let (a, b, death) = memory::pair_with_death(AGENT, PLUGIN).unwrap();
    for i in 0..100 {
        a.send(format!("{i}")).unwrap();
    }
    assert_eq!(b.recv().await.as_deref(), Some("0"));
    death.kill_second();
    assert_eq!(a.closed().await, CloseReason::PeerDied);
    assert_eq!(a.send("more"), Err(SendError::Closed(CloseClass::PeerDied)));
    assert!(a.await_writable(1).await.is_err());
}

#[tokio::test]
async fn dropping_the_last_handle_closes_locally() {
    let (a, b) = memory::pair(AGENT, PLUGIN).unwrap();
    a.send("bye").unwrap();
    drop(a);
    assert_eq!(b.recv().await.as_deref(), Some("bye"));
    assert_eq!(b.recv().await, None);
    assert_eq!(b.closed().await, CloseReason::Remote);
}
