//! Session and task ids: `ses_` / `tsk_` + a 26-character ULID (ACP-10, ACP-52).
//!
//! A ULID is 48 bits of milliseconds since the Unix epoch and 80 random bits, written as 26
//! Crockford base32 digits (uppercase, no I, L, O, U). Within one millisecond the random part
//! is incremented, so ids from this process are strictly increasing (monotonic ULID).

use std::sync::{Mutex, PoisonError};
use std::time::{SystemTime, UNIX_EPOCH};

const CROCKFORD: &[u8; 32] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/// The session id prefix.
pub const SESSION_PREFIX: &str = "ses_";
/// The task id prefix.
pub const TASK_PREFIX: &str = "tsk_";

static LAST: Mutex<(u64, u128)> = Mutex::new((0, 0));

fn random80() -> u128 {
    // std's RandomState is seeded from the OS once per process and varies per instance:
    // enough for ids that are unique and unguessable-ish but never a secret (ownership is
    // checked on every use, ACP-12).
    use std::hash::{BuildHasher, Hasher};
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    let word = |salt: u64| {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u128(nanos);
        h.write_u64(salt);
        h.finish()
    };
    let hi = word(1) as u128;
    let lo = word(2) as u128;
    ((hi << 64) | lo) & ((1u128 << 80) - 1)
}

/// A new ULID, strictly greater than every earlier one from this process.
pub fn ulid() -> String {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or_default()
        & ((1u64 << 48) - 1);
    let mut last = LAST.lock().unwrap_or_else(PoisonError::into_inner);
    let (ms, rand) = if now > last.0 {
        (now, random80())
    } else {
        // Same (or earlier) millisecond: keep the last time, increment the random part.
        let next = (last.1 + 1) & ((1u128 << 80) - 1);
        if next == 0 {
            (last.0 + 1, random80())
        } else {
            (last.0, next)
        }
    };
    *last = (ms, rand);
    drop(last);
    let value: u128 = ((ms as u128) << 80) | rand;
    let mut out = [0u8; 26];
    for (i, slot) in out.iter_mut().enumerate() {
        let shift = 5 * (25 - i);
        *slot = CROCKFORD[((value >> shift) & 31) as usize];
    }
    out.iter().map(|&b| b as char).collect()
}

/// A new session id, `ses_` + ULID.
pub fn new_session_id() -> String {
    format!("{SESSION_PREFIX}{}", ulid())
}

/// A new task id, `tsk_` + ULID.
pub fn new_task_id() -> String {
    format!("{TASK_PREFIX}{}", ulid())
}

/// Whether `id` matches `^ses_[0-9A-Z]{26}$` (ACP-10); anything else is answered like an
/// unknown session.
pub fn is_session_id(id: &str) -> bool {
    has_shape(id, SESSION_PREFIX)
}

/// Whether `id` matches `^tsk_[0-9A-Z]{26}$`.
pub fn is_task_id(id: &str) -> bool {
    has_shape(id, TASK_PREFIX)
}

fn has_shape(id: &str, prefix: &str) -> bool {
    id.strip_prefix(prefix).is_some_and(|rest| {
        rest.len() == 26
            && rest
                .bytes()
                .all(|b| b.is_ascii_digit() || b.is_ascii_uppercase())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn acp10_ids_are_crockford_and_increasing() {
        let ids: Vec<String> = (0..2000).map(|_| new_session_id()).collect();
        for id in &ids {
            assert!(is_session_id(id), "{id}");
            assert!(id[4..].bytes().all(|b| CROCKFORD.contains(&b)), "{id}");
        }
        for w in ids.windows(2) {
            assert!(w[0] < w[1], "{} !< {}", w[0], w[1]);
        }
        assert!(is_task_id(&new_task_id()));
        assert!(!is_session_id("ses_01j9z6q9k2"));
        assert!(!is_session_id("tsk_00000000000000000000000000"));
    }
}
