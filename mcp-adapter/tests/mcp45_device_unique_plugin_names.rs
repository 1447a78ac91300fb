//! MCP-45: plugin names are unique on the device; the winner is bundled, then the original
//! owner, then the smaller id — independent of scan order (every permutation is checked).
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "fixtures/plugins/registry.rs"]
mod registry;
#[path = "fixtures/plugins/support.rs"]
mod support;

use mcp_adapter::PluginStatus;
use mcp_adapter::plugin::UnavailableReason;
use mcp_adapter::plugin::device::{NameClaim, name_winners};
use registry::*;
use serde_json::json;
use support::*;

fn claim(plugin: &str, package: &str, bundled: bool, owner: bool) -> NameClaim {
    NameClaim {
        plugin: plugin.into(),
        package: package.into(),
        bundled,
        original_owner: owner,
    }
}

fn permutations<T: Clone>(items: &[T]) -> Vec<Vec<T>> {
    if items.len() <= 1 {
        return vec![items.to_vec()];
    }
    let mut out = Vec::new();
    for i in 0..items.len() {
        let mut rest = items.to_vec();
        let first = rest.remove(i);
        for mut p in permutations(&rest) {
            p.insert(0, first.clone());
            out.push(p);
        }
    }
    out
}

#[test]
fn mcp45_winner_order_bundled_then_owner_then_smaller_id() {
    let claims = [
        claim("notes", "com.c", false, false),
        claim("notes", "com.a", false, false),
        claim("notes", "com.z", false, true),
        claim("notes", "com.y", true, false),
        claim("todo", "com.b", false, false),
        claim("todo", "com.a", false, false),
    ];
    let w = name_winners(&claims);
    assert_eq!(w["notes"], "com.y", "bundled wins");
    assert_eq!(w["todo"], "com.a", "smaller id wins");
    let w = name_winners(&claims[..3]);
    assert_eq!(w["notes"], "com.z", "original owner beats a smaller id");
    let w = name_winners(&claims[..2]);
    assert_eq!(w["notes"], "com.a");
}

#[test]
fn mcp45_the_result_is_independent_of_scan_order() {
    let claims = [
        claim("notes", "com.c", false, false),
        claim("notes", "com.a", false, false),
        claim("notes", "com.z", false, true),
        claim("todo", "com.b", false, false),
        claim("todo", "com.q", true, false),
        claim("memo", "com.m", false, false),
    ];
    let expected = name_winners(&claims);
    let all = permutations(&claims);
    assert_eq!(all.len(), 720);
    for p in all {
        assert_eq!(name_winners(&p), expected);
    }
}

#[test]
fn mcp45_discovery_marks_the_loser_unavailable_in_any_registry_order() {
    let a = package_dir(&manifest("notes", &["notes"]));
    let b = package_dir(&manifest("notes", &["notes"]));
    let sock = a.path().join("s.sock");
    let ea = entry(10_001, "com.example.a", DIGEST_A, a.path(), &sock);
    let eb = entry(10_000, "com.example.b", DIGEST_A, b.path(), &sock);
    // com.example.b is the original owner: it wins although its id is larger.
    let state = json!({"version": 1, "plugins": [
        {"package": "com.example.b", "signingCertSha256": DIGEST_A, "plugin": "notes"}]});
    for entries in [[ea.clone(), eb.clone()], [eb.clone(), ea.clone()]] {
        let plugins = discover_with(&entries, state.clone());
        assert_eq!(
            by_package(&plugins, "com.example.b").status(),
            PluginStatus::Ready
        );
        let loser = by_package(&plugins, "com.example.a");
        assert_eq!(
            loser.status(),
            PluginStatus::Unavailable(UnavailableReason::NameConflict {
                winner: "com.example.b".into()
            })
        );
        assert!(loser.sources(std::time::Duration::from_secs(1)).is_empty());
    }
    // Without an owner record, the smaller package name wins.
    let plugins = discover_with(&[ea, eb], json!({"version": 1}));
    assert_eq!(
        by_package(&plugins, "com.example.b").unavailable,
        Some(UnavailableReason::NameConflict {
            winner: "com.example.a".into()
        })
    );
}

/// A small deterministic generator (no extra dependency): xorshift64*.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

#[test]
fn mcp45_property_random_claim_sets_in_random_orders() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for _ in 0..300 {
        let n = 1 + rng.below(8) as usize;
        let mut claims: Vec<NameClaim> = Vec::new();
        for _ in 0..n {
            let package = format!("com.p{}", rng.below(6));
            if claims.iter().any(|c| c.package == package) {
                continue; // one plugin per package
            }
            claims.push(claim(
                ["notes", "todo", "memo"][rng.below(3) as usize],
                &package,
                rng.below(4) == 0,
                rng.below(3) == 0,
            ));
        }
        let expected = name_winners(&claims);
        // Oracle: for each name, the claim with the smallest (not bundled, not owner, id).
        for (name, winner) in &expected {
            let best = claims
                .iter()
                .filter(|c| &c.plugin == name)
                .min_by_key(|c| (!c.bundled, !c.original_owner, c.package.clone()))
                .unwrap();
            assert_eq!(&best.package, winner);
        }
        for _ in 0..20 {
            let mut shuffled = claims.clone();
            for i in (1..shuffled.len()).rev() {
                shuffled.swap(i, rng.below(i as u64 + 1) as usize);
            }
            assert_eq!(name_winners(&shuffled), expected);
        }
    }
}
