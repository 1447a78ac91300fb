//! End-to-end overhead of the ACP runtime (issue 8 Benchmark), a plain bench binary.
//!
//! In one run, on one Tokio runtime:
//! - **bare**: `McpSource::call(note_read)` on the real in-memory MCP notes provider (the
//!   provider call alone: the baseline);
//! - **model only**: one ACP prompt turn whose fake-model reply is plain text (prompt → fake
//!   model over HTTP on 127.0.0.1 → end_turn);
//! - **tool round**: one ACP prompt turn in which the fake model asks for `note_read`, the
//!   runtime runs it through catalog + permissions + `McpSource`, sends the result back to the
//!   model and ends the turn (prompt → model → tool → result → model → end_turn);
//! - **sessions/s**: `session/new` round trips;
//! - **memory per idle session**: VmRSS delta over N idle sessions.
//!
//! Run: `cargo bench -p acp-runtime --bench e2e` (optional arg: iterations, default 300).
//! The ACI source is not in this bench (an ACI provider needs rsbinder RPC; see
//! `cargo bench -p aci-adapter` for ACI call figures).
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

#[path = "../tests/common/mod.rs"]
mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use capability_model::{CancelToken, CapabilityId, CapabilitySource};
use common::{Harness, NotesBehaviour, directive, fake_model, notes_source};
use permissions::{FixedSurface, Principal};
use serde_json::json;

fn pct(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn report(name: &str, mut v: Vec<Duration>) -> (Duration, Duration) {
    v.sort();
    let (p50, p99) = (pct(&v, 0.50), pct(&v, 0.99));
    println!(
        "{name:<12} n={:<5} p50={:>9.1} µs  p99={:>9.1} µs",
        v.len(),
        us(p50),
        us(p99)
    );
    (p50, p99)
}

fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1).and_then(|n| n.parse().ok()))
        })
        .unwrap_or(0)
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --all-targets` runs this binary without it:
    // then a short smoke run checks that every path still works.
    let measuring = std::env::args().any(|a| a == "--bench");
    let n: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(if measuring { 300 } else { 3 });
    let idle: usize = if measuring { 2000 } else { 20 };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async move {
        let (_server, model) = fake_model().await;
        let source = notes_source(NotesBehaviour::default());
        let h = Harness::start(
            model,
            vec![source.clone() as Arc<dyn CapabilitySource>],
            Arc::new(FixedSurface::allow()),
        )
        .await;
        let id = CapabilityId::mcp("com.example.notes", "notes", "note_read");

        // Warm up every path.
        let mut c = h.connect(Principal::Desktop);
        c.initialize().await;
        let sid = c.new_session(None).await;
        let tool_prompt = directive(json!({"tools":[{"name":"com.example.notes/note_read","arguments":{}}]}));
        for _ in 0..n.min(20) {
            source.call(&id, Default::default(), CancelToken::new()).await.unwrap();
            c.prompt(&sid, "warm up").await;
            let (_, r) = c.prompt(&sid, &tool_prompt).await;
            assert_eq!(r["result"]["stopReason"], "end_turn", "{r}");
        }

        let mut bare = Vec::with_capacity(n);
        for _ in 0..n {
            let t = Instant::now();
            source.call(&id, Default::default(), CancelToken::new()).await.unwrap();
            bare.push(t.elapsed());
        }
        // Fresh sessions keep the conversation (and the model request) the same size.
        let mut model_only = Vec::with_capacity(n);
        let mut tool_round = Vec::with_capacity(n);
        for _ in 0..n {
            let s = c.new_session(None).await;
            let t = Instant::now();
            let (_, r) = c.prompt(&s, "hello").await;
            model_only.push(t.elapsed());
            assert_eq!(r["result"]["stopReason"], "end_turn");
            let s = c.new_session(None).await;
            let t = Instant::now();
            let (notes, r) = c.prompt(&s, &tool_prompt).await;
            tool_round.push(t.elapsed());
            assert_eq!(r["result"]["stopReason"], "end_turn");
            assert!(notes.iter().any(|v| v.to_string().contains("\"completed\"")));
            c.raw.clear();
        }
        println!("acp-runtime e2e bench, {n} iterations, load average {}", 
            std::fs::read_to_string("/proc/loadavg").unwrap_or_default().trim());
        let (b50, b99) = report("bare call", bare);
        let (m50, m99) = report("model only", model_only);
        let (t50, t99) = report("tool round", tool_round);
        println!(
            "tool round / bare: p50 {:.1}x  p99 {:.1}x;  tool round - model only (runtime's tool path incl. 2nd model request): p50 {:.1} µs",
            us(t50) / us(b50),
            us(t99) / us(b99),
            us(t50) - us(m50)
        );
        let _ = m99;

        // Sessions per second.
        let sessions = n * 3;
        let t = Instant::now();
        for _ in 0..sessions {
            c.new_session(None).await;
        }
        let el = t.elapsed();
        println!("session/new  {:.0} sessions/s ({sessions} in {:.2} s)", sessions as f64 / el.as_secs_f64(), el.as_secs_f64());
        c.raw.clear();

        // Memory per idle session.
        let before = rss_kib();
        for _ in 0..idle {
            c.new_session(None).await;
        }
        c.raw.clear();
        let after = rss_kib();
        println!(
            "idle sessions {idle}: VmRSS {before} KiB -> {after} KiB, {:.2} KiB per session",
            (after.saturating_sub(before)) as f64 / idle as f64
        );
    });
}
