//! Costs of the per-call permission work, as ratios against baselines measured in the same run:
//! - `decide` (CAT-69 steps 0–3) vs `Capability::risk` alone;
//! - `sanitize_field` of a 300-character argument vs copying that string;
//! - one consent queue round trip (submit + answer) vs pushing/popping a `VecDeque`.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::collections::VecDeque;
use std::hint::black_box;

use capability_model::{Capability, CapabilityId};
use criterion::{Criterion, criterion_group, criterion_main};
use permissions::consent::{Choice, ConsentQueue};
use permissions::sanitize::{SanitizeConfig, sanitize_field};
use permissions::store::PolicyTarget;
use permissions::{CatalogVerdict, Millis, PolicyEngine, Principal, ToolCall};

fn decision(c: &mut Criterion) {
    let mut engine = PolicyEngine::default();
    // A realistic policy: 200 always-allowed tools, 50 disabled targets.
    for i in 0..200 {
        let cap = Capability::new(CapabilityId::mcp("p", "s", format!("t{i}")), "d");
        engine.user.set_always_allow(&cap, true).unwrap();
    }
    for i in 0..50 {
        engine.user.set_disabled(
            PolicyTarget::Tool(CapabilityId::mcp("q", "s", format!("t{i}"))),
            true,
        );
    }
    let cap = Capability::new(CapabilityId::mcp("p", "s", "t150"), "d");
    let principal = Principal::Desktop;
    let call = ToolCall {
        principal: &principal,
        session: "ses_1",
        capability: &cap,
        catalog: CatalogVerdict::Visible,
        session_has_scope: false,
    };
    let mut g = c.benchmark_group("decide");
    g.bench_function("baseline_capability_risk", |b| {
        b.iter(|| black_box(&cap).risk())
    });
    g.bench_function("decide", |b| {
        b.iter(|| engine.decide(black_box(&call), true))
    });
    g.finish();
}

fn sanitizer(c: &mut Criterion) {
    let text = "Meeting notes\u{202E} with\u{200B} zero width\n\n and bidi ".repeat(6);
    let cfg = SanitizeConfig::default();
    let mut g = c.benchmark_group("sanitize");
    g.bench_function("baseline_to_owned", |b| {
        b.iter(|| black_box(text.as_str()).to_owned())
    });
    g.bench_function("sanitize_field", |b| {
        b.iter(|| sanitize_field(black_box(&text), cfg))
    });
    g.finish();
}

fn queue(c: &mut Criterion) {
    let mut g = c.benchmark_group("consent_queue");
    let mut dq: VecDeque<(u64, Vec<Choice>)> = VecDeque::new();
    g.bench_function("baseline_vecdeque_push_pop", |b| {
        b.iter(|| {
            dq.push_back((1, Choice::offered(true)));
            black_box(dq.pop_front())
        })
    });
    let mut q = ConsentQueue::default();
    g.bench_function("submit_answer", |b| {
        b.iter(|| {
            let (id, _) = q.submit(Choice::offered(true), Millis(0)).unwrap();
            black_box(q.answer(id, Some(Choice::AllowOnce), Millis(1)))
        })
    });
    g.finish();
}

criterion_group!(benches, decision, sanitizer, queue);
criterion_main!(benches);
