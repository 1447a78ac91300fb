//! Quotas for third-party callers (QTA-01..05): prompt size, one running prompt, a sliding
//! hourly count. Sans-IO, in memory: counters reset when the process restarts (QTA-05).
//!
//! Checks run in this order: size (`invalid_params`, reason `too_large`, QTA-03), concurrency
//! (`quota_exceeded`, reason `busy`, QTA-02), rate (`quota_exceeded`, reason `hourly`, QTA-04).
//! A refused prompt is not counted.

use std::collections::{BTreeSet, HashMap, VecDeque};
use std::time::Duration;

use crate::clock::Millis;
use crate::identity::Principal;
use crate::limits::{
    CONCURRENT_PROMPTS_PER_APP, PROMPT_RATE_WINDOW, PROMPT_TEXT_MAX_U16, PROMPTS_PER_HOUR,
};
use crate::outcome::AgentosCode;

/// `CallerQuotaConfig` (CFG): the SPEC values are the defaults.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QuotaConfig {
    /// Prompts per app from admission until the task ends (QTA-02).
    pub max_concurrent: usize,
    /// Prompts per app per sliding window (QTA-04).
    pub per_window: usize,
    /// The sliding window.
    pub window: Duration,
    /// Prompt text limit in UTF-16 units (QTA-03).
    pub prompt_max_u16: usize,
}

impl Default for QuotaConfig {
    fn default() -> Self {
        Self {
            max_concurrent: CONCURRENT_PROMPTS_PER_APP,
            per_window: PROMPTS_PER_HOUR,
            window: PROMPT_RATE_WINDOW,
            prompt_max_u16: PROMPT_TEXT_MAX_U16,
        }
    }
}

/// Why a prompt was not admitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum QuotaRefusal {
    /// Prompt text over the limit: `invalid_params`, `details.reason = "too_large"`.
    TooLarge {
        /// The limit in UTF-16 units.
        limit: usize,
    },
    /// Another prompt of this app is still running: `quota_exceeded`, reason `busy`.
    Busy,
    /// The hourly count is used up: `quota_exceeded`, reason `hourly`.
    Hourly {
        /// Seconds until the oldest counted prompt leaves the window.
        retry_after_secs: u64,
        /// The limit.
        limit: usize,
    },
}

impl QuotaRefusal {
    /// The `agentosCode`.
    pub fn code(self) -> AgentosCode {
        match self {
            QuotaRefusal::TooLarge { .. } => AgentosCode::InvalidParams,
            QuotaRefusal::Busy | QuotaRefusal::Hourly { .. } => AgentosCode::QuotaExceeded,
        }
    }

    /// `details.reason`.
    pub fn reason(self) -> &'static str {
        match self {
            QuotaRefusal::TooLarge { .. } => "too_large",
            QuotaRefusal::Busy => "busy",
            QuotaRefusal::Hourly { .. } => "hourly",
        }
    }

    /// `retryable` (QTA-02, QTA-04: quota errors are; too large is not).
    pub fn retryable(self) -> bool {
        self.code().retryable()
    }
}

/// An admitted prompt. Hand it back to [`Quotas::finish`] when the **task** ends (not when the
/// client disconnects, QTA-02).
#[derive(Debug, PartialEq, Eq, Hash)]
#[must_use = "a prompt slot must be returned when its task ends"]
pub struct PromptSlot {
    app: Option<String>,
    id: u64,
}

impl PromptSlot {
    /// The app the slot counts against (`None` for exempt principals).
    pub fn app(&self) -> Option<&str> {
        self.app.as_deref()
    }
}

/// Usage of one app (QTA-06: settings show usage and last use).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppUsage {
    /// Prompts running now.
    pub running: usize,
    /// Prompts admitted in the current window.
    pub in_window: usize,
    /// Prompts admitted since the process started.
    pub total: u64,
    /// Last admission.
    pub last_used: Option<Millis>,
}

#[derive(Debug, Default)]
struct AppCounters {
    running: BTreeSet<u64>,
    admitted: VecDeque<Millis>,
    total: u64,
    last_used: Option<Millis>,
}

/// Per-app counters.
#[derive(Debug, Default)]
pub struct Quotas {
    cfg: QuotaConfig,
    apps: HashMap<String, AppCounters>,
    next_id: u64,
}

impl Quotas {
    /// Counters with a configuration.
    pub fn new(cfg: QuotaConfig) -> Self {
        Self {
            cfg,
            apps: HashMap::new(),
            next_id: 1,
        }
    }

    /// The configuration.
    pub fn config(&self) -> QuotaConfig {
        self.cfg
    }

    /// Admits a prompt or refuses it. SELF and DESKTOP principals are exempt (QTA-01).
    pub fn admit(
        &mut self,
        principal: &Principal,
        prompt: &str,
        now: Millis,
    ) -> Result<PromptSlot, QuotaRefusal> {
        let id = self.next_id;
        self.next_id += 1;
        let Principal::App(caller) = principal else {
            return Ok(PromptSlot { app: None, id });
        };
        // QTA-03: UTF-16 units, before anything else.
        if prompt.encode_utf16().count() > self.cfg.prompt_max_u16 {
            return Err(QuotaRefusal::TooLarge {
                limit: self.cfg.prompt_max_u16,
            });
        }
        let cfg = self.cfg;
        let app = self
            .apps
            .entry(caller.identity.package.clone())
            .or_default();
        if app.running.len() >= cfg.max_concurrent {
            return Err(QuotaRefusal::Busy);
        }
        while app
            .admitted
            .front()
            .is_some_and(|t| now >= t.plus(cfg.window))
        {
            app.admitted.pop_front();
        }
        if app.admitted.len() >= cfg.per_window {
            let oldest = app.admitted.front().copied().unwrap_or(now);
            let wait = now.until(oldest.plus(cfg.window));
            return Err(QuotaRefusal::Hourly {
                retry_after_secs: wait
                    .as_millis()
                    .div_ceil(1000)
                    .try_into()
                    .unwrap_or(u64::MAX),
                limit: cfg.per_window,
            });
        }
        app.running.insert(id);
        app.admitted.push_back(now);
        app.total += 1;
        app.last_used = Some(now);
        tracing::debug!(package = %caller.identity.package, uid = %caller.identity.uid, "prompt admitted");
        Ok(PromptSlot {
            app: Some(caller.identity.package.clone()),
            id,
        })
    }

    /// The task of `slot` ended.
    pub fn finish(&mut self, slot: PromptSlot) {
        if let Some(app) = slot.app.and_then(|a| self.apps.get_mut(&a)) {
            app.running.remove(&slot.id);
        }
    }

    /// The app was uninstalled: its counters go (QTA-05). Revoking does **not** call this.
    pub fn forget_app(&mut self, package: &str) {
        self.apps.remove(package);
    }

    /// Usage of an app.
    pub fn usage(&self, package: &str, now: Millis) -> Option<AppUsage> {
        let app = self.apps.get(package)?;
        Some(AppUsage {
            running: app.running.len(),
            in_window: app
                .admitted
                .iter()
                .filter(|t| now < t.plus(self.cfg.window))
                .count(),
            total: app.total,
            last_used: app.last_used,
        })
    }
}
