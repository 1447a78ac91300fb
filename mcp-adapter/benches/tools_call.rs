//! `tools/call` round trips, one at a time: our host client → our provider over the in-memory
//! carrier and over rsbinder RPC (Unix socket), side by side in the same run with
//! - rmcp client ↔ rmcp server over an in-process `tokio::io::duplex` (the issue 6 reference:
//!   the same MCP exchange done entirely by rmcp, line-delimited JSON over a byte pipe), and
//! - a bare JSON-RPC echo over the same in-memory binder-channel (framing + channel, no MCP);
//!
//! plus the two interop pairings over the in-memory binder-channel (rmcp client → our
//! provider, our client → rmcp server, through `ChannelTransport`).
//!
//! Prints n, round trips per second, p50/p99 and the p50 ratio against the rmcp duplex case
//! after the criterion figures. Results: docs/PERFORMANCE.md.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use binder_channel::binder::{AdmitAll, ServiceKind, rpc_uri, serve_channels};
use binder_channel::jsonrpc::{self, Message};
use binder_channel::{Channel, memory};
use capability_model::{Annotations, CancelToken, ToolOutput};
use criterion::{Criterion, criterion_group, criterion_main};
use mcp_adapter::{ChannelTransport, McpClient, McpServer};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{RequestContext, RunningService};
use rmcp::{ErrorData, RoleClient, RoleServer, ServerHandler, ServiceExt};
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

/// rmcp's side of the comparison: the same `echo` tool as an rmcp `ServerHandler`.
struct RmcpEcho;

impl ServerHandler for RmcpEcho {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let schema = json!({"type": "object", "properties": {"text": {"type": "string"}}});
        let schema = Arc::new(schema.as_object().cloned().unwrap_or_default());
        Ok(ListToolsResult::with_all_items(vec![Tool::new(
            "echo", "Echo.", schema,
        )]))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let text = request
            .arguments
            .as_ref()
            .and_then(|a| a.get("text"))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        Ok(CallToolResult::success(vec![ContentBlock::text(text)]).into())
    }
}

type RmcpClient = RunningService<RoleClient, ()>;

async fn rmcp_round_trip(client: &RmcpClient) {
    let params = CallToolRequestParams::new("echo").with_arguments(arguments());
    let out = client
        .peer()
        .call_tool(params)
        .await
        .unwrap_or_else(|e| panic!("rmcp call: {e}"));
    std::hint::black_box(out);
}

type Samples = Arc<Mutex<Vec<Duration>>>;

/// Times `iters` sequential round trips of `one`, recording each.
async fn timed<F, Fut>(iters: u64, samples: &Samples, mut one: F) -> Duration
where
    F: FnMut(u64) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    let mut total = Duration::ZERO;
    let mut local = Vec::with_capacity(iters as usize);
    for i in 0..iters {
        let t = Instant::now();
        one(i).await;
        let d = t.elapsed();
        total += d;
        local.push(d);
    }
    samples
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .extend(local);
    total
}

fn percentile(samples: &mut [Duration], p: f64) -> Duration {
    samples.sort();
    let i = ((samples.len() as f64 - 1.0) * p).round() as usize;
    samples[i]
}

fn bench(c: &mut Criterion) {
    let rt = runtime();
    let mut report: Vec<(&str, Samples)> = Vec::new();
    let mut group = c.benchmark_group("tools_call_round_trip");
    let cancel = CancelToken::new();

    // Reference: rmcp client ↔ rmcp server over an in-process duplex.
    let rmcp_duplex = rt.block_on(async {
        let (server_io, client_io) = tokio::io::duplex(64 * 1024);
        tokio::spawn(async move {
            if let Ok(running) = RmcpEcho.serve(server_io).await {
                let _ = running.waiting().await;
            }
        });
        ().serve(client_io)
            .await
            .unwrap_or_else(|e| panic!("rmcp client: {e}"))
    });
    let samples: Samples = Arc::default();
    group.bench_function("rmcp_client_rmcp_server_duplex", |b| {
        b.iter_custom(|iters| {
            rt.block_on(timed(iters, &samples, |_| rmcp_round_trip(&rmcp_duplex)))
        })
    });
    report.push(("rmcp_client_rmcp_server_duplex", samples));

    // Baseline: JSON-RPC echo over the in-memory binder-channel.
    let (client_end, peer_end) = rt
        .block_on(async { memory::pair(1_000, 10_123) })
        .unwrap_or_else(|e| panic!("pair: {e}"));
    rt.block_on(async { spawn_raw_echo(peer_end) });
    let samples: Samples = Arc::default();
    group.bench_function("jsonrpc_echo_memory", |b| {
        b.iter_custom(|iters| {
            rt.block_on(timed(iters, &samples, |i| {
                raw_round_trip(&client_end, i as i64)
            }))
        })
    });
    report.push(("jsonrpc_echo_memory", samples));

    // Our host client → our provider, in-memory carrier.
    let server = echo_server();
    let client = rt.block_on(async {
        let (host, plugin) = memory::pair(1_000, 10_123).unwrap_or_else(|e| panic!("{e}"));
        server.serve(plugin);
        McpClient::connect(host)
            .await
            .unwrap_or_else(|e| panic!("{e}"))
    });
    let samples: Samples = Arc::default();
    group.bench_function("mcp_adapter_memory", |b| {
        b.iter_custom(|iters| {
            rt.block_on(timed(iters, &samples, |_| mcp_round_trip(&client, &cancel)))
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
    group.bench_function("mcp_adapter_rsbinder_rpc", |b| {
        b.iter_custom(|iters| {
            rt.block_on(timed(iters, &samples, |_| {
                mcp_round_trip(&rpc_client, &cancel)
            }))
        })
    });
    report.push(("mcp_adapter_rsbinder_rpc", samples));

    // Interop: rmcp client → our provider, in-memory binder-channel (ChannelTransport).
    let rmcp_to_ours = rt.block_on(async {
        let (host, plugin) = memory::pair(1_000, 10_123).unwrap_or_else(|e| panic!("{e}"));
        server.serve(plugin);
        ().serve(ChannelTransport::new(host))
            .await
            .unwrap_or_else(|e| panic!("rmcp client: {e}"))
    });
    let samples: Samples = Arc::default();
    group.bench_function("rmcp_client_our_provider_memory", |b| {
        b.iter_custom(|iters| {
            rt.block_on(timed(iters, &samples, |_| rmcp_round_trip(&rmcp_to_ours)))
        })
    });
    report.push(("rmcp_client_our_provider_memory", samples));

    // Interop: our host client → rmcp server, in-memory binder-channel (ChannelTransport).
    let ours_to_rmcp = rt.block_on(async {
        let (host, plugin) = memory::pair(1_000, 10_123).unwrap_or_else(|e| panic!("{e}"));
        tokio::spawn(async move {
            if let Ok(running) = RmcpEcho
                .serve(ChannelTransport::<RoleServer>::new(plugin))
                .await
            {
                let _ = running.waiting().await;
            }
        });
        McpClient::connect(host)
            .await
            .unwrap_or_else(|e| panic!("{e}"))
    });
    let samples: Samples = Arc::default();
    group.bench_function("our_client_rmcp_server_memory", |b| {
        b.iter_custom(|iters| {
            rt.block_on(timed(iters, &samples, |_| {
                mcp_round_trip(&ours_to_rmcp, &cancel)
            }))
        })
    });
    report.push(("our_client_rmcp_server_memory", samples));
    group.finish();

    // The first case (rmcp over a duplex) is the reference for the ratios.
    let mut reference = Duration::ZERO;
    eprintln!("case: n, round trips/s (1/mean), p50, p99, p50 / rmcp duplex p50");
    for (name, samples) in report {
        let mut v = samples.lock().unwrap_or_else(|e| e.into_inner()).clone();
        if v.is_empty() {
            continue;
        }
        let mean = v.iter().sum::<Duration>().as_secs_f64() / v.len() as f64;
        let (p50, p99) = (percentile(&mut v, 0.50), percentile(&mut v, 0.99));
        if reference.is_zero() {
            reference = p50;
        }
        eprintln!(
            "{name}: n={} rt/s={:.0} p50={:.1}us p99={:.1}us p50/rmcp_duplex={:.2}",
            v.len(),
            1.0 / mean,
            p50.as_secs_f64() * 1e6,
            p99.as_secs_f64() * 1e6,
            p50.as_secs_f64() / reference.as_secs_f64()
        );
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(30).measurement_time(Duration::from_secs(4));
    targets = bench
}
criterion_main!(benches);
