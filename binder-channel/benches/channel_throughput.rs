//! Channel throughput: 100-char and 16,000-char messages over the in-memory pair and the line
//! carrier on a Unix socket pair, beside a bare tokio Unix-socket echo of the same payloads
//! measured in the same run (the baseline). Figures and ratios: docs/PERFORMANCE.md.

use std::hint::black_box;
use std::time::Duration;

use binder_channel::limits::PRODUCER_HIGH_WATER_CHARS;
use binder_channel::{Channel, lines, memory};
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, BufWriter};
use tokio::net::UnixStream;
use tokio::runtime::Runtime;

/// Messages per measured iteration.
const BATCH: usize = 1_000;
/// Payload sizes, in chars (ASCII, so chars = units = bytes).
const SIZES: [usize; 2] = [100, 16_000];

fn runtime() -> Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap_or_else(|err| panic!("tokio runtime: {err}"))
}

/// Sends `BATCH` payloads from `tx` and receives them on `rx`.
async fn stream_batch(tx: &Channel, rx: &Channel, payload: &str) {
    let receiver = rx.clone();
    let consumer = tokio::spawn(async move {
        let mut bytes = 0usize;
        for _ in 0..BATCH {
            match receiver.recv().await {
                Some(message) => bytes += message.len(),
                None => panic!("channel closed during the bench"),
            }
        }
        bytes
    });
    for _ in 0..BATCH {
        if tx.await_writable(PRODUCER_HIGH_WATER_CHARS).await.is_err()
            || tx.send(payload.to_owned()).is_err()
        {
            panic!("channel closed during the bench");
        }
    }
    black_box(
        consumer
            .await
            .unwrap_or_else(|err| panic!("consumer: {err}")),
    );
}

/// The baseline: a bare tokio echo over a Unix socket pair. The client writes `BATCH`
/// newline-terminated payloads, the server echoes each line, the client reads them back.
async fn echo_batch(client: &mut Option<(UnixStream, tokio::task::JoinHandle<()>)>, payload: &str) {
    let (stream, _server) = client.as_mut().unwrap_or_else(|| panic!("no echo client"));
    let (read_half, write_half) = stream.split();
    let mut line = payload.as_bytes().to_vec();
    line.push(b'\n');
    let writer = async {
        let mut writer = BufWriter::new(write_half);
        for _ in 0..BATCH {
            writer
                .write_all(&line)
                .await
                .unwrap_or_else(|err| panic!("{err}"));
        }
        writer.flush().await.unwrap_or_else(|err| panic!("{err}"));
    };
    let reader = async {
        let mut reader = BufReader::new(read_half);
        let mut buffer = Vec::with_capacity(line.len());
        for _ in 0..BATCH {
            buffer.clear();
            reader
                .read_until(b'\n', &mut buffer)
                .await
                .unwrap_or_else(|err| panic!("{err}"));
        }
        // The BufReader reads no further than the last echoed byte.
    };
    tokio::join!(writer, reader);
}

fn echo_server(stream: UnixStream) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let (read_half, write_half) = stream.into_split();
        let mut reader = BufReader::new(read_half);
        let mut writer = BufWriter::new(write_half);
        let mut buffer = Vec::new();
        loop {
            buffer.clear();
            match reader.read_until(b'\n', &mut buffer).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
            if writer.write_all(&buffer).await.is_err() {
                return;
            }
            // Flush when nothing more is buffered, like a line server would.
            if reader.buffer().is_empty() && writer.flush().await.is_err() {
                return;
            }
        }
    })
}

fn throughput(c: &mut Criterion) {
    let rt = runtime();
    let mut group = c.benchmark_group("channel_throughput");
    group
        .sample_size(20)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4));
    for size in SIZES {
        let payload = "p".repeat(size);
        group.throughput(Throughput::Elements(BATCH as u64));

        let (a, b) = rt
            .block_on(async { memory::pair(1_000, 10_123).unwrap_or_else(|err| panic!("{err}")) });
        group.bench_with_input(
            BenchmarkId::new("memory_pair", size),
            &payload,
            |bench, p| {
                bench.to_async(&rt).iter(|| stream_batch(&a, &b, p));
            },
        );

        let (la, lb) = rt.block_on(async {
            let (x, y) = UnixStream::pair().unwrap_or_else(|err| panic!("{err}"));
            (
                lines::unix(x).unwrap_or_else(|err| panic!("{err}")),
                lines::unix(y).unwrap_or_else(|err| panic!("{err}")),
            )
        });
        group.bench_with_input(
            BenchmarkId::new("lines_unix", size),
            &payload,
            |bench, p| {
                bench.to_async(&rt).iter(|| stream_batch(&la, &lb, p));
            },
        );

        let mut echo = rt.block_on(async {
            let (client, server) = UnixStream::pair().unwrap_or_else(|err| panic!("{err}"));
            Some((client, echo_server(server)))
        });
        group.bench_with_input(
            BenchmarkId::new("baseline_tokio_unix_echo", size),
            &payload,
            |bench, p| {
                bench.iter(|| rt.block_on(echo_batch(&mut echo, p)));
            },
        );
    }
    group.finish();
}

criterion_group!(benches, throughput);
criterion_main!(benches);
