//! Time as the state machines see it: an injectable clock (GEN-03).
//!
//! Every sans-IO core in this crate takes `now` as an argument; the thin async shells read it
//! from a [`Clock`]. Timestamps are wall-clock milliseconds since the Unix epoch because some of
//! them are persisted (the start of a denial cooldown must survive a restart).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

/// A point in time: milliseconds since the Unix epoch.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize,
)]
pub struct Millis(pub u64);

impl Millis {
    /// `self + d`, saturating.
    pub fn plus(self, d: Duration) -> Millis {
        Millis(self.0.saturating_add(duration_ms(d)))
    }

    /// Time from `earlier` to `self`, zero when `earlier` is later.
    pub fn since(self, earlier: Millis) -> Duration {
        Duration::from_millis(self.0.saturating_sub(earlier.0))
    }

    /// Time from `self` until `later`, zero when `later` has passed.
    pub fn until(self, later: Millis) -> Duration {
        later.since(self)
    }
}

fn duration_ms(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// A source of the current time.
pub trait Clock: Send + Sync + std::fmt::Debug {
    /// Now.
    fn now(&self) -> Millis;
}

/// The system's wall clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Millis {
        let d = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or(Duration::ZERO);
        Millis(duration_ms(d))
    }
}

/// A clock that moves only when told to (tests, replays).
#[derive(Debug, Clone, Default)]
pub struct ManualClock {
    now: Arc<AtomicU64>,
}

impl ManualClock {
    /// A clock standing at `start`.
    pub fn new(start: Millis) -> Self {
        Self {
            now: Arc::new(AtomicU64::new(start.0)),
        }
    }

    /// Moves the clock forward.
    pub fn advance(&self, d: Duration) {
        self.now.fetch_add(duration_ms(d), Ordering::SeqCst);
    }

    /// Sets the clock.
    pub fn set(&self, t: Millis) {
        self.now.store(t.0, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Millis {
        Millis(self.now.load(Ordering::SeqCst))
    }
}

/// A clock driven by tokio's timer: wall-clock time at creation plus tokio's monotonic elapsed
/// time. Under `tokio::time::pause()` it advances exactly with tokio's virtual time, so the
/// async shells (consent broker) run deterministically in tests without sleeping.
#[derive(Debug, Clone)]
pub struct TokioClock {
    base_wall: Millis,
    base: tokio::time::Instant,
}

impl TokioClock {
    /// Anchors the clock at the current wall-clock time.
    pub fn new() -> Self {
        Self::anchored(SystemClock.now())
    }

    /// Anchors the clock at `wall` (tests use a fixed value).
    pub fn anchored(wall: Millis) -> Self {
        Self {
            base_wall: wall,
            base: tokio::time::Instant::now(),
        }
    }

    /// The tokio instant corresponding to `t` (for `sleep_until`).
    pub fn instant_at(&self, t: Millis) -> tokio::time::Instant {
        self.base + t.since(self.base_wall)
    }
}

impl Default for TokioClock {
    fn default() -> Self {
        Self::new()
    }
}

impl Clock for TokioClock {
    fn now(&self) -> Millis {
        self.base_wall.plus(self.base.elapsed())
    }
}
