//! The line-delimited carrier over Unix sockets and TCP loopback (BR-02 framing, bounded
//! read buffer, SO_PEERCRED identity).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use binder_channel::limits::MAX_LINE_BYTES;
use binder_channel::{CloseReason, SendError, Violation, lines};
use futures::StreamExt;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream, UnixStream};

/// A line channel on one end of a socket pair, and the raw other end.
fn channel_and_raw() -> (binder_channel::Channel, UnixStream) {
    let (a, b) = UnixStream::pair().unwrap();
    (lines::unix(a).unwrap(), b)
}

#[tokio::test]
async fn unix_socket_peer_identity_comes_from_so_peercred() {
    let (channel, _raw) = channel_and_raw();
    let me = lines::local_uid().unwrap();
    assert_eq!(channel.peer().uid, me);
    assert_eq!(channel.peer().pid, Some(std::process::id() as i32));
}

#[tokio::test]
async fn br02_each_message_is_one_newline_terminated_line() {
    let (channel, raw) = channel_and_raw();
    channel.send(r#"{"jsonrpc":"2.0","method":"a"}"#).unwrap();
    channel.send(r#"{"jsonrpc":"2.0","method":"b"}"#).unwrap();
    let mut reader = BufReader::new(raw);
    let mut line = String::new();
    reader.read_line(&mut line).await.unwrap();
    assert_eq!(line, "{\"jsonrpc\":\"2.0\",\"method\":\"a\"}\n");
    line.clear();
    reader.read_line(&mut line).await.unwrap();
    assert_eq!(line, "{\"jsonrpc\":\"2.0\",\"method\":\"b\"}\n");
}

#[tokio::test]
async fn br02_lf_and_crlf_lines_are_read_blank_lines_skipped() {
    let (channel, mut raw) = channel_and_raw();
    raw.write_all(b"one\n\r\ntwo\r\n\nthree\n").await.unwrap();
    let got: Vec<String> = channel.messages().take(3).collect().await;
    assert_eq!(got, ["one", "two", "three"]);
}

#[tokio::test]
async fn a_message_with_a_line_break_is_refused() {
    let (channel, _raw) = channel_and_raw();
    assert_eq!(channel.send("a\nb"), Err(SendError::LineBreak));
    assert_eq!(channel.send("a\rb"), Err(SendError::LineBreak));
    assert!(channel.close_reason().is_none());
}

#[tokio::test]
async fn br02_line_of_65536_units_is_accepted_65537_closes() {
    let (channel, mut raw) = channel_and_raw();
    let ok = "x".repeat(65_536);
    raw.write_all(format!("{ok}\n").as_bytes()).await.unwrap();
    assert_eq!(channel.recv().await.map(|m| m.len()), Some(65_536));
    raw.write_all(format!("{}\n", "x".repeat(65_537)).as_bytes())
        .await
        .unwrap();
    assert_eq!(
        channel.closed().await,
        CloseReason::Violation(Violation::Oversize { chars: 65_537 })
    );
}

#[tokio::test]
async fn br02_multi_byte_lines_are_measured_in_utf16_units() {
    let (channel, mut raw) = channel_and_raw();
    // 65,536 three-byte characters: 196,608 bytes but 65,536 units — accepted.
    let cjk = "中".repeat(65_536);
    raw.write_all(format!("{cjk}\n").as_bytes()).await.unwrap();
    assert_eq!(
        channel.recv().await.map(|m| m.chars().count()),
        Some(65_536)
    );
    // 65,535 units + a surrogate pair straddling the limit: 65,537 units.
    let straddle = format!("{}😀", "x".repeat(65_535));
    raw.write_all(format!("{straddle}\n").as_bytes())
        .await
        .unwrap();
    assert_eq!(
        channel.closed().await,
        CloseReason::Violation(Violation::Oversize { chars: 65_537 })
    );
}

#[tokio::test]
async fn an_endless_line_closes_the_channel_without_buffering_it() {
    let (channel, raw) = channel_and_raw();
    let (_read_half, mut write_half) = raw.into_split();
    let flood = tokio::spawn(async move {
        let chunk = vec![b'x'; 64 * 1024];
        let mut written = 0usize;
        // Far more than the bounded buffer; stops when the channel hangs up.
        while written < 64 * 1024 * 1024 {
            if write_half.write_all(&chunk).await.is_err() {
                break;
            }
            written += chunk.len();
        }
        written
    });
    assert_eq!(
        channel.closed().await,
        CloseReason::Violation(Violation::EndlessLine)
    );
    drop(channel);
    let written = tokio::time::timeout(Duration::from_secs(10), flood)
        .await
        .unwrap()
        .unwrap();
    // The reader stopped after the bound (plus what the socket buffers held).
    assert!(
        written < 64 * 1024 * 1024,
        "reader kept consuming: {written}"
    );
    // ... and not before it had read up to the bound (the last chunk may be cut short).
    assert!(written + 64 * 1024 > MAX_LINE_BYTES, "{written}");
}

#[tokio::test]
async fn invalid_utf8_on_a_line_is_a_violation() {
    let (channel, mut raw) = channel_and_raw();
    raw.write_all(b"{\"a\":\"\xff\"}\n").await.unwrap();
    assert_eq!(
        channel.closed().await,
        CloseReason::Violation(Violation::InvalidText)
    );
}

#[tokio::test]
async fn end_of_stream_is_a_remote_close_after_the_complete_lines() {
    let (channel, mut raw) = channel_and_raw();
    raw.write_all(b"first\nsecond\npartial").await.unwrap();
    raw.shutdown().await.unwrap();
    let got: Vec<String> = channel.messages().collect().await;
    assert_eq!(
        got,
        ["first", "second"],
        "an unterminated last line is dropped"
    );
    assert_eq!(channel.closed().await, CloseReason::Remote);
}

#[tokio::test]
async fn ch40_local_close_flushes_then_ends_the_stream() {
    let (channel, mut raw) = channel_and_raw();
    for i in 0..1_000 {
        channel.send(format!("{i}")).unwrap();
    }
    assert_eq!(channel.close().await, CloseReason::Local);
    let mut all = String::new();
    raw.read_to_string(&mut all).await.unwrap();
    let lines: Vec<&str> = all.lines().collect();
    let want: Vec<String> = (0..1_000).map(|i| format!("{i}")).collect();
    assert_eq!(lines, want);
}

#[tokio::test]
async fn two_line_channels_stream_both_ways() {
    let (a, b) = UnixStream::pair().unwrap();
    let (a, b) = (lines::unix(a).unwrap(), lines::unix(b).unwrap());
    const N: usize = 5_000;
    let sender = a.clone();
    let producer = tokio::spawn(async move {
        for i in 0..N {
            sender.await_writable(16_384).await.unwrap();
            sender.send(format!("{i}:{}", "p".repeat(i % 500))).unwrap();
        }
    });
    for i in 0..N {
        assert_eq!(
            b.recv().await.unwrap(),
            format!("{i}:{}", "p".repeat(i % 500))
        );
    }
    producer.await.unwrap();
    a.close().await;
    assert_eq!(b.recv().await, None);
}

#[tokio::test]
async fn tcp_loopback_carries_lines_and_names_the_local_user() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let client = TcpStream::connect(address).await.unwrap();
    let (server, _) = listener.accept().await.unwrap();
    let (client, server) = (
        lines::tcp_loopback(client).unwrap(),
        lines::tcp_loopback(server).unwrap(),
    );
    assert_eq!(server.peer().uid, lines::local_uid().unwrap());
    client.send("hello").unwrap();
    assert_eq!(server.recv().await.as_deref(), Some("hello"));
}

#[tokio::test]
async fn reading_pauses_while_the_consumer_is_behind() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    let (channel, raw) = channel_and_raw();
    let (_read_half, mut write_half) = raw.into_split();
    let written = Arc::new(AtomicUsize::new(0));
    let counter = written.clone();
    let line = format!("{}\n", "w".repeat(60_000));
    let writer = tokio::spawn(async move {
        while write_half.write_all(line.as_bytes()).await.is_ok() {
            counter.fetch_add(1, Ordering::Relaxed);
        }
    });
    // Nobody consumes: the reader stops after its read-ahead, the socket fills, the peer
    // blocks. Without the pause it would write thousands of lines meanwhile.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let held = written.load(Ordering::Relaxed);
    assert!(
        held < 32 + 16,
        "peer wrote {held} lines with nobody reading"
    );
    // The consumer catches up and reading resumes.
    for _ in 0..200 {
        assert_eq!(channel.recv().await.map(|m| m.len()), Some(60_000));
    }
    assert!(written.load(Ordering::Relaxed) >= 200);
    drop(channel);
    writer.abort();
}
