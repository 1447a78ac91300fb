//! Property tests: names are valid, unique and independent of input order (CAT-15, CAT-17).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashSet;

use capability_model::naming::{NameKey, assign, is_valid_final_name};
use proptest::prelude::*;

/// Segments drawn from a tiny alphabet so sanitized names collide often (`.` vs `_`, `é` vs
/// `_`), with lengths that cross the 64-character limit.
fn segment() -> impl Strategy<Value = String> {
    prop_oneof!["[ab._é😀]{0,4}", "[ab._]{20,40}", Just("x".repeat(60)),]
}

fn key() -> impl Strategy<Value = NameKey> {
    (any::<bool>(), segment(), segment(), segment()).prop_map(|(session, p, s, t)| {
        if session {
            NameKey::session(&s, &t)
        } else {
            NameKey::plugin(&p, &s, &t)
        }
    })
}

fn key_set() -> impl Strategy<Value = Vec<NameKey>> {
    proptest::collection::hash_set(key(), 1..60).prop_map(|s| s.into_iter().collect())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, .. ProptestConfig::default() })]

    #[test]
    fn names_are_valid_and_pairwise_distinct(keys in key_set()) {
        let names = assign(&keys).unwrap();
        prop_assert_eq!(names.len(), keys.len());
        let unique: HashSet<&String> = names.iter().collect();
        prop_assert_eq!(unique.len(), names.len());
        for n in &names {
            prop_assert!(is_valid_final_name(n), "invalid name {n}");
            prop_assert_ne!(n.as_str(), "read_skill");
        }
    }

    #[test]
    fn assignment_depends_only_on_the_set(keys in key_set(), seeds in proptest::collection::vec(any::<u64>(), 5)) {
        let reference: std::collections::HashMap<NameKey, String> =
            keys.iter().cloned().zip(assign(&keys).unwrap()).collect();
        for seed in seeds {
            let mut shuffled = keys.clone();
            shuffle(&mut shuffled, seed);
            let names = assign(&shuffled).unwrap();
            for (k, n) in shuffled.iter().zip(&names) {
                prop_assert_eq!(&reference[k], n);
            }
        }
    }
}

/// CAT-15 asks for ≥ 1,000 permutations of one set: one set with forced collisions, 1,000
/// shuffles.
#[test]
fn cat_15_a_thousand_permutations_give_one_mapping() {
    let mut keys = Vec::new();
    for p in ["a.b", "a_b", "a-b", "a😀", "a__"] {
        for t in ["t", "t.x", "t_x", &"y".repeat(50)] {
            keys.push(NameKey::plugin(p, "s", t));
            keys.push(NameKey::plugin(p, "s.1", t));
        }
    }
    keys.push(NameKey::plugin("a_b", "s", "t_0b737e"));
    let reference: std::collections::HashMap<NameKey, String> =
        keys.iter().cloned().zip(assign(&keys).unwrap()).collect();
    for seed in 0..1000u64 {
        let mut shuffled = keys.clone();
        shuffle(
            &mut shuffled,
            seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0xDEAD_BEEF,
        );
        let names = assign(&shuffled).unwrap();
        for (k, n) in shuffled.iter().zip(&names) {
            assert_eq!(&reference[k], n);
        }
    }
}

/// Fisher–Yates with a xorshift generator (deterministic, no extra dependency).
fn shuffle<T>(v: &mut [T], mut seed: u64) {
    seed |= 1;
    for i in (1..v.len()).rev() {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let j = (seed % (i as u64 + 1)) as usize;
        v.swap(i, j);
    }
}
