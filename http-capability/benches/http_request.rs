//! `http_request` against a loopback keep-alive server, side by side with bare reqwest in the
//! same run; and the cost of producing / rendering `response_body_gz` for a 150,000-character
//! body. Figures go to docs/PERFORMANCE.md.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::hint::black_box;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use http_capability::body::{decode_body, gzip_text, gzip_text_at, truncate_body};
use http_capability::{
    GzipMode, HttpConfig, HttpExecutor, NetworkPolicy, StaticResolver, render_http_result,
};
use serde_json::{Map, Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// A keep-alive HTTP/1.1 server answering every GET with `body`.
async fn keep_alive_server(body: Arc<Vec<u8>>) -> SocketAddr {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        loop {
            let Ok((mut s, _)) = listener.accept().await else {
                return;
            };
            let body = body.clone();
            tokio::spawn(async move {
                let mut head = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\n\r\n",
                    body.len()
                )
                .into_bytes();
                head.extend_from_slice(&body);
                let mut buf = vec![0u8; 16 * 1024];
                let mut pending = Vec::new();
                loop {
                    let Ok(n) = s.read(&mut buf).await else {
                        return;
                    };
                    if n == 0 {
                        return;
                    }
                    pending.extend_from_slice(&buf[..n]);
                    while let Some(i) = pending.windows(4).position(|w| w == b"\r\n\r\n") {
                        pending.drain(..i + 4);
                        if s.write_all(&head).await.is_err() {
                            return;
                        }
                    }
                }
            });
        }
    });
    addr
}

/// Pseudo-text: words from a small vocabulary, so gzip sees realistic redundancy.
fn text_body(units: usize) -> String {
    const WORDS: [&str; 16] = [
        "router",
        "status",
        "<div>",
        "</div>",
        "temperature",
        "21.5",
        "online",
        "device",
        "firmware",
        "1.0.14",
        "uptime",
        "lan",
        "wifi",
        "signal",
        "-47dBm",
        "ok",
    ];
    let mut x: u32 = 0x9e37_79b9;
    let mut s = String::with_capacity(units + 16);
    while s.len() < units {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        s.push_str(WORDS[(x % 16) as usize]);
        s.push(if x.is_multiple_of(7) { '\n' } else { ' ' });
    }
    s.truncate(units);
    s
}

fn loopback(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    for (label, size) in [("small", 64usize), ("16KiB", 16 * 1024)] {
        let body = Arc::new(text_body(size).into_bytes());
        let addr = rt.block_on(keep_alive_server(body));
        let url = format!("http://127.0.0.1:{}/status", addr.port());

        let bare = reqwest::Client::builder().no_proxy().build().unwrap();
        let exec = |mode| {
            HttpExecutor::with_resolver(
                HttpConfig {
                    policy: NetworkPolicy::local_network(),
                    gzip_mode: mode,
                    ..HttpConfig::default()
                },
                Arc::new(StaticResolver::new()),
            )
            .unwrap()
        };
        let exec_gz = exec(GzipMode::Always);
        let exec_plain = exec(GzipMode::Never);
        let args: Map<String, Value> = json!({"url": url, "method": "GET"})
            .as_object()
            .unwrap()
            .clone();

        let mut g = c.benchmark_group(format!("loopback_get_{label}"));
        g.measurement_time(Duration::from_secs(4));
        g.sample_size(40);
        g.bench_function("bare_reqwest", |b| {
            b.to_async(&rt).iter(|| async {
                let r = bare.get(&url).send().await.unwrap();
                black_box(r.bytes().await.unwrap());
            })
        });
        g.bench_function("http_request_gz_never", |b| {
            b.to_async(&rt)
                .iter(|| async { black_box(exec_plain.execute(&args).await.unwrap()) })
        });
        g.bench_function("http_request_gz_always", |b| {
            b.to_async(&rt)
                .iter(|| async { black_box(exec_gz.execute(&args).await.unwrap()) })
        });
        g.finish();
    }
}

fn body_gz(c: &mut Criterion) {
    let ascii = text_body(150_000);
    let cjk: String = "路由器状态在线设备固件"
        .chars()
        .cycle()
        .take(150_000)
        .collect();
    let mut g = c.benchmark_group("body_150k");
    g.measurement_time(Duration::from_secs(4));
    g.sample_size(30);
    // Baseline: what every call pays anyway (decode + truncate of the body).
    g.bench_function("decode_truncate_ascii", |b| {
        b.iter(|| {
            let d = decode_body(
                black_box(ascii.as_bytes()),
                Some("text/plain; charset=utf-8"),
            );
            black_box(truncate_body(&d.text, 150_000))
        })
    });
    for level in [1u32, 6] {
        g.bench_function(format!("gzip_ascii_level{level}"), |b| {
            b.iter(|| black_box(gzip_text_at(black_box(&ascii), 900 * 1024, level)))
        });
        eprintln!(
            "body_150k: level {level}: ascii gz {} B",
            gzip_text_at(&ascii, 900 * 1024, level).unwrap().len()
        );
    }
    g.bench_function("gzip_cjk", |b| {
        b.iter(|| black_box(gzip_text(black_box(&cjk), 900 * 1024)))
    });
    let gz = gzip_text(&ascii, 900 * 1024).unwrap();
    eprintln!(
        "body_150k: ascii {} B -> gz {} B; cjk {} B -> gz {} B",
        ascii.len(),
        gz.len(),
        cjk.len(),
        gzip_text(&cjk, 900 * 1024).unwrap().len()
    );
    let with_gz = json!({"status_code": 200, "response_headers": {},
        "response_body_gz": base64_of(&gz)});
    let plain = json!({"status_code": 200, "response_headers": {}, "response_body": ascii});
    g.bench_function("render_from_response_body", |b| {
        let m = plain.as_object().unwrap();
        b.iter(|| black_box(render_http_result(m).unwrap()))
    });
    g.bench_function("render_from_response_body_gz", |b| {
        let m = with_gz.as_object().unwrap();
        b.iter(|| black_box(render_http_result(m).unwrap()))
    });
    g.finish();
}

fn base64_of(b: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(b)
}

criterion_group!(benches, loopback, body_gz);
criterion_main!(benches);
