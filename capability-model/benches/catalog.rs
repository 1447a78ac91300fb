//! Catalog build benchmark (issue: 256 plugins × 64 tools in well under 16 ms).
//!
//! `cargo bench -p capability-model --bench catalog`
//!
//! Baseline in the same run: building a plain `HashMap<String, Capability>` keyed by the
//! unsanitized `plugin/server/tool` string (the least any catalog must do).
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::collections::HashMap;
use std::hint::black_box;

use capability_model::naming::{NameKey, assign};
use capability_model::{Capability, CapabilityId, Catalog, ScopeEntry, SessionMode, ToolScope};
use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use serde_json::json;

const PLUGINS: usize = 256;
const TOOLS: usize = 64;

/// 16,384 tools. Every 16th plugin has a twin whose name differs only by `.` vs `_`, so their
/// 64 tools all collide; every 8th tool name is long enough to be truncated.
fn capabilities() -> Vec<Capability> {
    let mut v = Vec::with_capacity(PLUGINS * TOOLS);
    for p in 0..PLUGINS {
        let plugin = if p % 16 == 1 {
            format!("com.vendor_{}", p - 1)
        } else {
            format!("com.vendor.{p}")
        };
        for t in 0..TOOLS {
            let tool = if t % 8 == 0 {
                format!("tool_{t}_{}", "long".repeat(12))
            } else {
                format!("tool_{t}")
            };
            let mut c = Capability::new(CapabilityId::mcp(&plugin, "main", tool), "A tool.");
            c.input_schema = json!({"type": "object", "properties": {"q": {"type": "string"}}});
            v.push(c);
        }
    }
    v
}

fn bench(c: &mut Criterion) {
    let caps = capabilities();
    let keys: Vec<NameKey> = caps
        .iter()
        .map(|c| NameKey::plugin(&c.id.provider, &c.id.server, &c.id.name))
        .collect();
    let scope = ToolScope::restricted((0..32).map(|i| ScopeEntry {
        plugin: format!("com.vendor.{}", i * 7),
        tool: format!("tool_{}", i % 64),
    }));

    let mut g = c.benchmark_group("catalog_16384");
    g.sample_size(20);
    // Inputs are cloned and outputs dropped outside the timed part (iter_batched), so each
    // figure is the work of the catalog itself.
    g.bench_function("baseline_hashmap_insert", |b| {
        b.iter_batched(
            || caps.clone(),
            |caps| {
                let m: HashMap<String, Capability> = caps
                    .into_iter()
                    .map(|c| {
                        (
                            format!("{}/{}/{}", c.id.provider, c.id.server, c.id.name),
                            c,
                        )
                    })
                    .collect();
                black_box(m)
            },
            BatchSize::LargeInput,
        )
    });
    g.bench_function("assign_names", |b| {
        b.iter(|| black_box(assign(&keys).unwrap()))
    });
    g.bench_function("build_catalog", |b| {
        b.iter_batched(
            || caps.clone(),
            |caps| black_box(Catalog::build(caps)),
            BatchSize::LargeInput,
        )
    });
    g.bench_function("build_and_filter_scope_32", |b| {
        b.iter_batched(
            || caps.clone(),
            |caps| {
                let cat = Catalog::build(caps);
                let n = cat.visible(&scope, SessionMode::Default).count();
                black_box((cat, n))
            },
            BatchSize::LargeInput,
        )
    });
    let catalog = Catalog::build(caps.clone());
    assert_eq!(catalog.len(), PLUGINS * TOOLS);
    g.bench_function("filter_scope_32", |b| {
        b.iter(|| black_box(catalog.visible(&scope, SessionMode::Default).count()))
    });
    g.bench_function("filter_unrestricted", |b| {
        b.iter(|| {
            black_box(
                catalog
                    .visible(&ToolScope::unrestricted(), SessionMode::Default)
                    .count(),
            )
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
