//! `tools/call` round trips, one at a time: our host client → our provider over the in-memory
//! carrier and over rsbinder RPC (Unix socket), beside the baseline measured in the same run —
//! a bare JSON-RPC echo over the same in-memory binder-channel (framing + channel, no MCP).
//! Prints p50/p99 per case after the criterion figures. Results: docs/PERFORMANCE.md.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use binder_channel::binder::{AdmitAll, ServiceKind, rpc_uri, serve_channels};
use binder_channel::jsonrpc::{self, Message};
use binder_channel::{Channel, memory};
use capability_model::{Annotations, CancelToken, ToolOutput};
use criterion::{Criterion, criterion_group, criterion_main};
use mcp_adapter::{McpClient, McpServer};
use serde_json::{Map, Value, json};
use tokio::runtime::Runtime;

fn runtime() -> Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("runtime: {e}"))
}

fn echo_server() -> McpServer {
    McpServer::new("bench", |r| {
        r.tool(
            "echo",
            None,
            "Echo.",
            json!({"type": "object", "properties": {"text": {"type": "string"}}}),
            Annotations::default(),
            |a, _| async move { Ok(ToolOutput::text(a["text"].as_str().unwrap_or_default())) },
        )?;
        Ok(())
    })
    .unwrap_or_else(|e| panic!("server: {e}"))
}

fn arguments() -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("text".into(), Value::from("hello from the bench"));
    m
}

/// The baseline peer: answers every request with a fixed tools/call-shaped result.
fn spawn_raw_echo(channel: Channel) {
    tokio::spawn(async move {
        while let Some(text) = channel.recv().await {
            if let Ok(Message::Request { id, .. }) = jsonrpc::parse(&text) {
                let reply = Message::Response {
                    id: Some(id),
                    outcome: Ok(
                        json!({"content": [{"type": "text", "text": "hello from the bench"}]}),
                    ),
                };
                let _ = channel.send(reply.to_json());
            }
        }
    });
}

async fn raw_round_trip(channel: &Channel, id: i64) {
    let request = Message::Request {
        id: jsonrpc::Id::Number(id),
        method: "tools/call".into(),
        params: Some(json!({"name": "echo", "arguments": {"text": "hello from the bench"}})),
    };
    channel
        .send(request.to_json())
        .unwrap_or_else(|e| panic!("send: {e}"));
    let answer = channel.recv().await.unwrap_or_else(|| panic!("closed"));
    match jsonrpc::parse(&answer) {
        Ok(Message::Response { outcome: Ok(v), .. }) => {
            std::hint::black_box(v);
        }
        other => panic!("unexpected {other:?}"),
    }
}

async fn mcp_round_trip(client: &McpClient, cancel: &CancelToken) {
    let out = client
        .call_tool("echo", arguments(), Duration::from_secs(10), cancel)
        .await
        .unwrap_or_else(|e| panic!("call: {e}"));
    std::hint::black_box(out);
}

type Samples = Arc<Mutex<Vec<Duration>>>;

fn percentile(samples: &mut [Duration], p: f64) -> Duration {
    samples.sort();
    let i = ((samples.len() as f64 - 1.0) * p).round() as usize;
    samples[i]
}

fn bench(c: &mut Criterion) {
    let rt = runtime();
    let mut report: Vec<(&str, Samples)> = Vec::new();
    let mut group = c.benchmark_group("tools_call_round_trip");

    // Baseline: JSON-RPC echo over the in-memory binder-channel.
    let (client_end, peer_end) = rt
        .block_on(async { memory::pair(1_000, 10_123) })
        .unwrap_or_else(|e| panic!("pair: {e}"));
    rt.block_on(async { spawn_raw_echo(peer_end) });
    let samples: Samples = Arc::default();
    let s = samples.clone();
    group.bench_function("baseline_jsonrpc_echo_memory", |b| {
        b.iter_custom(|iters| {
            rt.block_on(async {
                let mut total = Duration::ZERO;
                for i in 0..iters {
                    let t = Instant::now();
                    raw_round_trip(&client_end, i as i64).await;
                    let d = t.elapsed();
                    total += d;
                    s.lock().unwrap_or_else(|e| e.into_inner()).push(d);
                }
                total
            })
        })
    });
    report.push(("baseline_jsonrpc_echo_memory", samples));

    // Our host client → our provider, in-memory carrier.
    let server = echo_server();
    let client = rt.block_on(async {
        let (host, plugin) = memory::pair(1_000, 10_123).unwrap_or_else(|e| panic!("{e}"));
        server.serve(plugin);
        McpClient::connect(host)
            .await
            .unwrap_or_else(|e| panic!("{e}"))
    });
    let cancel = CancelToken::new();
    let samples: Samples = Arc::default();
    let s = samples.clone();
    group.bench_function("mcp_adapter_memory", |b| {
        b.iter_custom(|iters| {
            rt.block_on(async {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let t = Instant::now();
                    mcp_round_trip(&client, &cancel).await;
                    let d = t.elapsed();
                    total += d;
                    s.lock().unwrap_or_else(|e| e.into_inner()).push(d);
                }
                total
            })
        })
    });
    report.push(("mcp_adapter_memory", samples));

    // Our host client → our provider, rsbinder RPC over a Unix socket.
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let path = dir.path().join("bench.sock");
    let (_guard, rpc_client) = rt.block_on(async {
        let (guard, incoming) = serve_channels(rpc_uri(&path, "bench"), ServiceKind::Mcp, AdmitAll)
            .unwrap_or_else(|e| panic!("{e}"));
        server.serve_incoming(incoming);
        let opened = binder_channel::binder::connect(
            rpc_uri(&path, "bench"),
            ServiceKind::Mcp,
            binder_channel::binder::ConnectOptions::default(),
        )
        .await
        .unwrap_or_else(|e| panic!("{e}"));
        let client = McpClient::connect(opened.channel)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        (guard, client)
    });
    let samples: Samples = Arc::default();
    let s = samples.clone();
    group.bench_function("mcp_adapter_rsbinder_rpc", |b| {
        b.iter_custom(|iters| {
            rt.block_on(async {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let t = Instant::now();
                    mcp_round_trip(&rpc_client, &cancel).await;
                    let d = t.elapsed();
                    total += d;
                    s.lock().unwrap_or_else(|e| e.into_inner()).push(d);
                }
                total
            })
        })
    });
    report.push(("mcp_adapter_rsbinder_rpc", samples));
    group.finish();

    let mut base_p50 = Duration::ZERO;
    for (name, samples) in report {
        let mut v = samples.lock().unwrap_or_else(|e| e.into_inner()).clone();
        if v.is_empty() {
            continue;
        }
        let (p50, p99) = (percentile(&mut v, 0.50), percentile(&mut v, 0.99));
        if base_p50.is_zero() {
            base_p50 = p50;
        }
        eprintln!(
            "{name}: n={} p50={:.1}us p99={:.1}us p50/baseline={:.2}",
            v.len(),
            p50.as_secs_f64() * 1e6,
            p99.as_secs_f64() * 1e6,
            p50.as_secs_f64() / base_p50.as_secs_f64()
        );
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(30).measurement_time(Duration::from_secs(4));
    targets = bench
}
criterion_main!(benches);
