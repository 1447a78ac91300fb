//! binder-channel-v1 over rsbinder RPC between two processes, beside a bare tokio Unix-socket
//! echo of the same payloads measured in the same run.
//!
//! Both rows are a pipelined echo: this process sends N messages of 100 or 16,000 characters
//! to a second process (`binder_channel_peer`), which sends each back; the time is from the
//! first send to the last echo received. Criterion reports messages/s (one element = one
//! message there and back); MB/s = messages/s × size. The channel row is flow-controlled both
//! ways (CH-20/CH-31), the baseline row is one `\n`-terminated line each way with no window.
//!
//! ```text
//! cargo bench -p binder-channel --bench binder_rpc
//! ```
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use binder_channel::Channel;
use binder_channel::binder::{ConnectOptions, ServiceKind, connect, rpc_uri};
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader as AsyncBufReader};
use tokio::net::UnixStream;
use tokio::runtime::Runtime;

/// Message sizes, in characters (ASCII, so UTF-16 units = bytes).
const SIZES: [usize; 2] = [100, 16_000];
/// Producer back-pressure mark (CH-24).
const WRITABLE_MARK: usize = 16_384;

/// A child process killed on drop.
struct Peer(Child);

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `binder_channel_peer args…` and waits for its `READY`.
fn spawn_peer(args: &[&str]) -> Peer {
    let mut child = Command::new(env!("CARGO_BIN_EXE_binder_channel_peer"))
        .args(args)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut lines = BufReader::new(stdout).lines();
    let ready = lines.next().unwrap().unwrap();
    assert_eq!(ready, "READY");
    // Keep draining so the child never blocks on a full pipe.
    std::thread::spawn(move || for _ in lines {});
    Peer(child)
}

/// An `echo` notification of exactly `size` characters.
fn echo_message(size: usize) -> String {
    let head = r#"{"jsonrpc":"2.0","method":"echo","params":{"pad":""#;
    let tail = r#""}}"#;
    format!("{head}{}{tail}", "x".repeat(size - head.len() - tail.len()))
}

async fn channel_echo(channel: &Channel, message: &str, count: u64) -> Duration {
    let start = Instant::now();
    let producer = {
        let channel = channel.clone();
        let message = message.to_owned();
        tokio::spawn(async move {
            for _ in 0..count {
                channel.await_writable(WRITABLE_MARK).await.unwrap();
                channel.send(message.clone()).unwrap();
            }
        })
    };
    for _ in 0..count {
        let echoed = channel.recv().await.unwrap();
        assert_eq!(echoed.len(), message.len());
    }
    producer.await.unwrap();
    start.elapsed()
}

async fn socket_echo(path: &Path, message: &str, count: u64) -> Duration {
    let stream = UnixStream::connect(path).await.unwrap();
    let (read, mut write) = stream.into_split();
    let start = Instant::now();
    let line = format!("{message}\n");
    let producer = tokio::spawn(async move {
        for _ in 0..count {
            write.write_all(line.as_bytes()).await.unwrap();
        }
        write
    });
    let mut lines = AsyncBufReader::new(read).lines();
    for _ in 0..count {
        let echoed = lines.next_line().await.unwrap().unwrap();
        assert_eq!(echoed.len(), message.len());
    }
    drop(producer.await.unwrap());
    start.elapsed()
}

fn bench(c: &mut Criterion) {
    let runtime = Runtime::new().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let binder_socket = dir.path().join("mcp.sock");
    let echo_socket = dir.path().join("echo.sock");
    let uri = format!(
        "unix://{}?profile=android13plus#mcp",
        binder_socket.display()
    );
    let _provider = spawn_peer(&["provide", &uri]);
    let _echo = spawn_peer(&["echo-socket", echo_socket.to_str().unwrap()]);
    let opened = runtime
        .block_on(connect(
            rpc_uri(&binder_socket, "mcp"),
            ServiceKind::Mcp,
            ConnectOptions::default(),
        ))
        .unwrap();
    let channel = opened.channel;

    let mut group = c.benchmark_group("two_process_echo");
    group.sample_size(10);
    group.warm_up_time(Duration::from_secs(1));
    group.measurement_time(Duration::from_secs(4));
    group.throughput(Throughput::Elements(1));
    for size in SIZES {
        let message = echo_message(size);
        group.bench_with_input(
            BenchmarkId::new("rsbinder_rpc_channel", size),
            &message,
            |b, message| {
                b.iter_custom(|iters| runtime.block_on(channel_echo(&channel, message, iters)));
            },
        );
        group.bench_with_input(
            BenchmarkId::new("tokio_unix_socket_baseline", size),
            &message,
            |b, message| {
                b.iter_custom(|iters| runtime.block_on(socket_echo(&echo_socket, message, iters)));
            },
        );
    }
    group.finish();
    runtime.block_on(channel.close());
}

criterion_group!(benches, bench);
criterion_main!(benches);
