//! ACI call round trips over rsbinder RPC (Unix socket, one process for both ends), one at a
//! time, beside an MCP `tools/call` carrying the same payload over the same carrier, in one run:
//!
//! - `mcp_tools_call_rsbinder_rpc` — mcp-adapter's `McpClient` → `McpServer` over
//!   binder-channel-v1 on rsbinder RPC (the baseline of the ratios);
//! - `aci_client_call_sync` / `aci_client_call_async` — D's `AciClient` → `AciServer`
//!   (`call`, and `callAsync` with the result coming back on our `IACICallback`), five
//!   permission layers included;
//! - `aci_controller_sync` / `aci_controller_async` — the same through the controller (pool,
//!   FIFO gate, deadline, call log);
//! - `aci_source_async` — the whole adapter path a runtime uses: JSON arguments → Bundle →
//!   controller → `callAsync` → `ToolOutput`.
//!
//! Prints n, round trips per second (1/mean), p50, p99 and p50 / MCP p50 after the criterion
//! figures. Results: docs/PERFORMANCE.md, section "aci-adapter".
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::os::unix::fs::MetadataExt as _;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use aci_adapter::bundle::BundleValue;
use aci_adapter::controller::{
    BinderConnector, CallMode, CallRequest, Controller, ControllerConfig, NoWaker, ProviderInfo,
};
use aci_adapter::provider::{AciClient, AciServer, AciService, CapabilitySpec, ProviderError};
use aci_adapter::source::AciSource;
use aci_adapter::wire::{AciRequest, AciResponse};
use binder_channel::binder::{AdmitAll, ServiceKind, rpc_uri, serve_channels};
use capability_model::{
    Annotations, CancelToken, CapabilityId, CapabilitySource, Source, ToolOutput,
};
use criterion::{Criterion, criterion_group, criterion_main};
use mcp_adapter::{McpClient, McpServer};
use permissions::{AciPermissionGate, AciPolicy, RegistryResolver};
use serde_json::{Map, Value, json};
use tokio::runtime::Runtime;

const PAYLOAD: &str = "hello from the bench";

struct Echo;

#[async_trait::async_trait]
impl AciService for Echo {
    fn capabilities(&self) -> Result<Vec<CapabilitySpec>, ProviderError> {
        Ok(vec![
            CapabilitySpec::create("echo", "Echo a text back.")
                .add_param("text", "string", true, "Text")
                .add_result("text", "string", "The same text"),
        ])
    }
    async fn on_call(&self, request: &AciRequest) -> Result<AciResponse, ProviderError> {
        Ok(AciResponse::success().put_string("text", request.get_string("text").unwrap_or("")))
    }
}

fn mcp_echo() -> McpServer {
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
    .unwrap()
}

fn arguments() -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("text".into(), Value::from(PAYLOAD));
    m
}

fn request() -> AciRequest {
    AciRequest::new("echo").param("text", BundleValue::String(Some(PAYLOAD.into())))
}

type Samples = Arc<Mutex<Vec<Duration>>>;

async fn timed<F, Fut>(iters: u64, samples: &Samples, mut one: F) -> Duration
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    let mut total = Duration::ZERO;
    let mut local = Vec::with_capacity(iters as usize);
    for _ in 0..iters {
        let t = Instant::now();
        one().await;
        let d = t.elapsed();
        total += d;
        local.push(d);
    }
    samples.lock().unwrap().extend(local);
    total
}

fn percentile(samples: &mut [Duration], p: f64) -> Duration {
    samples.sort();
    samples[((samples.len() as f64 - 1.0) * p).round() as usize]
}

fn bench(c: &mut Criterion) {
    let rt: Runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let uid = std::fs::metadata(dir.path()).unwrap().uid();
    let digest = "AB00000000000000000000000000000000000000000000000000000000000001";
    let mut report: Vec<(&str, Samples)> = Vec::new();
    let mut group = c.benchmark_group("aci_call_round_trip");
    let cancel = CancelToken::new();

    // Baseline: MCP tools/call over binder-channel-v1 on rsbinder RPC.
    let mcp_path = dir.path().join("mcp.sock");
    let (_mcp_guard, mcp) = rt.block_on(async {
        let (guard, incoming) =
            serve_channels(rpc_uri(&mcp_path, "bench"), ServiceKind::Mcp, AdmitAll).unwrap();
        mcp_echo().serve_incoming(incoming);
        let opened = binder_channel::binder::connect(
            rpc_uri(&mcp_path, "bench"),
            ServiceKind::Mcp,
            binder_channel::binder::ConnectOptions::default(),
        )
        .await
        .unwrap();
        (guard, McpClient::connect(opened.channel).await.unwrap())
    });
    let samples: Samples = Arc::default();
    group.bench_function("mcp_tools_call_rsbinder_rpc", |b| {
        b.iter_custom(|iters| {
            rt.block_on(timed(iters, &samples, || async {
                let out = mcp
                    .call_tool("echo", arguments(), Duration::from_secs(10), &cancel)
                    .await
                    .unwrap();
                std::hint::black_box(out);
            }))
        })
    });
    report.push(("mcp_tools_call_rsbinder_rpc", samples));

    // ACI provider over rsbinder RPC; the caller (this process's UID) is the controller.
    let aci_path = dir.path().join("aci.sock");
    let registry = RegistryResolver::from_json(
        &format!(
            r#"{{"version":1,"packages":[{{"uid":{uid},"package":"org.agentos.app","signingCertSha256":"{digest}","permissions":["ai.aci.permission.CALL"]}}]}}"#
        ),
        "bench",
    )
    .unwrap();
    let (_aci_guard, client) = rt.block_on(async {
        let gate = AciPermissionGate::new(Arc::new(registry), AciPolicy::allow_all());
        let server = AciServer::new(Arc::new(Echo), gate, None).unwrap();
        let guard = server
            .serve_unix(&aci_path, aci_adapter::controller::BINDER_SERVICE_NAME)
            .unwrap();
        let client =
            AciClient::connect_unix(&aci_path, aci_adapter::controller::BINDER_SERVICE_NAME)
                .await
                .unwrap();
        assert!(client.ping().await.unwrap());
        (guard, client)
    });
    let samples: Samples = Arc::default();
    group.bench_function("aci_client_call_sync", |b| {
        b.iter_custom(|iters| {
            rt.block_on(timed(iters, &samples, || async {
                let r = client.call(&request()).await.unwrap();
                assert!(r.success);
                std::hint::black_box(r);
            }))
        })
    });
    report.push(("aci_client_call_sync", samples));
    let samples: Samples = Arc::default();
    group.bench_function("aci_client_call_async", |b| {
        b.iter_custom(|iters| {
            rt.block_on(timed(iters, &samples, || async {
                let r = client.call_async(&request(), |_, _| {}).await.unwrap();
                assert!(r.success);
                std::hint::black_box(r);
            }))
        })
    });
    report.push(("aci_client_call_async", samples));

    // Through the controller.
    let controller = Controller::new(
        Arc::new(BinderConnector::rpc()),
        Arc::new(NoWaker),
        ControllerConfig {
            enabled_by_default: true,
            ..Default::default()
        },
    );
    controller.update_providers(vec![ProviderInfo {
        package: "com.example.bench".into(),
        uid,
        signing_cert_sha256: permissions::CertDigest::parse(digest).unwrap(),
        version_code: 1,
        socket: aci_path.clone(),
        launch: None,
        plugin: "aci.com.example.bench".into(),
        server: "aciservice".into(),
    }]);
    rt.block_on(controller.bind("com.example.bench")).unwrap();
    for (name, mode) in [
        ("aci_controller_sync", CallMode::Sync),
        ("aci_controller_async", CallMode::Async),
    ] {
        let samples: Samples = Arc::default();
        group.bench_function(name, |b| {
            b.iter_custom(|iters| {
                rt.block_on(timed(iters, &samples, || async {
                    let req = CallRequest::new("echo", request().params);
                    let r = controller
                        .call("com.example.bench", req, mode, None)
                        .await
                        .unwrap();
                    assert!(r.success);
                    std::hint::black_box(r);
                }))
            })
        });
        report.push((name, samples));
    }

    // The whole adapter path.
    let source = AciSource::new(controller.clone());
    let id = CapabilityId::new(Source::Aci, "aci.com.example.bench", "aciservice", "echo");
    rt.block_on(source.list()).unwrap();
    let samples: Samples = Arc::default();
    group.bench_function("aci_source_async", |b| {
        b.iter_custom(|iters| {
            rt.block_on(timed(iters, &samples, || async {
                let out = source
                    .call(&id, arguments(), CancelToken::new())
                    .await
                    .unwrap();
                std::hint::black_box(out);
            }))
        })
    });
    report.push(("aci_source_async", samples));
    group.finish();

    let mut reference = Duration::ZERO;
    eprintln!("case: n, round trips/s (1/mean), p50, p99, p50 / MCP tools/call p50");
    for (name, samples) in report {
        let mut v = samples.lock().unwrap().clone();
        if v.is_empty() {
            continue;
        }
        let mean = v.iter().sum::<Duration>().as_secs_f64() / v.len() as f64;
        let (p50, p99) = (percentile(&mut v, 0.50), percentile(&mut v, 0.99));
        if reference.is_zero() {
            reference = p50;
        }
        eprintln!(
            "{name}: n={} rt/s={:.0} p50={:.1}us p99={:.1}us p50/mcp={:.2}",
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
    config = Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));
    targets = bench
}
criterion_main!(benches);
