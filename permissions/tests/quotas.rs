//! QTA-01..05: third-party prompt quotas, with a fake clock.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use common::app;
use permissions::{AgentosCode, Millis, Principal, QuotaConfig, QuotaRefusal, Quotas};

const T0: Millis = Millis(1_700_000_000_000);

#[test]
fn qta01_self_and_desktop_are_exempt() {
    let mut q = Quotas::new(QuotaConfig::default());
    let huge = "x".repeat(100_000);
    let mut slots = Vec::new();
    for p in [Principal::SelfUi, Principal::Desktop] {
        for _ in 0..50 {
            slots.push(q.admit(&p, &huge, T0).unwrap());
        }
    }
    assert!(slots.iter().all(|s| s.app().is_none()));
}

#[test]
fn qta02_one_running_prompt_per_app_until_the_task_ends() {
    let mut q = Quotas::new(QuotaConfig::default());
    let a = app(10_001, "com.a", 1);
    let b = app(10_002, "com.b", 2);
    let slot = q.admit(&a, "hi", T0).unwrap();
    let r = q.admit(&a, "again", T0).unwrap_err();
    assert_eq!(r, QuotaRefusal::Busy);
    assert_eq!(r.code(), AgentosCode::QuotaExceeded);
    assert_eq!(r.code().json_rpc_code(), Some(-32048));
    assert_eq!(r.reason(), "busy");
    assert!(r.retryable());
    // Another app is not affected.
    let other = q.admit(&b, "hi", T0).unwrap();
    // The same app reconnecting (new UID lookup, same package) is still busy: the count is
    // per app and lasts until the task ends, not until disconnect.
    let reconnected = app(10_001, "com.a", 1);
    assert_eq!(
        q.admit(&reconnected, "hi", T0).unwrap_err(),
        QuotaRefusal::Busy
    );
    q.finish(slot);
    let again = q.admit(&a, "hi", T0).unwrap();
    q.finish(again);
    q.finish(other);
}

#[test]
fn qta03_prompt_size_in_utf16_units_checked_first() {
    let mut q = Quotas::new(QuotaConfig::default());
    let a = app(10_001, "com.a", 1);
    // 8,000 supplementary-plane chars = 16,000 UTF-16 units: at the limit.
    let at_limit = "😀".repeat(8_000);
    let s = q.admit(&a, &at_limit, T0).unwrap();
    q.finish(s);
    let over = format!("{at_limit}x");
    let busy_holder = q.admit(&a, "x", T0).unwrap();
    // Even while busy, the size error wins (checked first).
    let r = q.admit(&a, &over, T0).unwrap_err();
    assert_eq!(r, QuotaRefusal::TooLarge { limit: 16_000 });
    assert_eq!(r.code(), AgentosCode::InvalidParams);
    assert_eq!(r.reason(), "too_large");
    assert!(!r.retryable());
    // 16,000 ASCII characters pass, 16,001 do not.
    q.finish(busy_holder);
    let s = q.admit(&a, &"a".repeat(16_000), T0).unwrap();
    q.finish(s);
    assert!(q.admit(&a, &"a".repeat(16_001), T0).is_err());
}

#[test]
fn qta04_thirty_per_sliding_hour() {
    let mut q = Quotas::new(QuotaConfig::default());
    let a = app(10_001, "com.a", 1);
    for i in 0..30 {
        let s = q
            .admit(&a, "p", T0.plus(Duration::from_secs(60 * i)))
            .unwrap();
        q.finish(s);
    }
    let at = T0.plus(Duration::from_secs(60 * 30));
    let r = q.admit(&a, "p", at).unwrap_err();
    // The first prompt leaves the window at T0 + 3600 s: 1,800 s from now.
    assert_eq!(
        r,
        QuotaRefusal::Hourly {
            retry_after_secs: 1800,
            limit: 30
        }
    );
    assert_eq!(r.reason(), "hourly");
    assert_eq!(r.code(), AgentosCode::QuotaExceeded);
    // Sliding: one second before the oldest leaves, still refused; at that instant, admitted.
    assert!(
        q.admit(&a, "p", T0.plus(Duration::from_secs(3599)))
            .is_err()
    );
    let s = q
        .admit(&a, "p", T0.plus(Duration::from_secs(3600)))
        .unwrap();
    q.finish(s);
    // Refusals are not counted.
    let usage = q
        .usage("com.a", T0.plus(Duration::from_secs(3600)))
        .unwrap();
    assert_eq!(usage.in_window, 30);
    assert_eq!(usage.total, 31);
}

#[test]
fn qta05_config_and_reset_rules() {
    let cfg = QuotaConfig {
        max_concurrent: 2,
        per_window: 3,
        window: Duration::from_secs(60),
        prompt_max_u16: 10,
    };
    let mut q = Quotas::new(cfg);
    assert_eq!(q.config(), cfg);
    let a = app(10_001, "com.a", 1);
    let s1 = q.admit(&a, "p", T0).unwrap();
    let s2 = q.admit(&a, "p", T0).unwrap();
    assert_eq!(q.admit(&a, "p", T0).unwrap_err(), QuotaRefusal::Busy);
    q.finish(s1);
    q.finish(s2);
    let s3 = q.admit(&a, "p", T0).unwrap();
    q.finish(s3);
    assert!(matches!(
        q.admit(&a, "p", T0),
        Err(QuotaRefusal::Hourly { limit: 3, .. })
    ));
    assert!(matches!(
        q.admit(&a, "01234567890", T0),
        Err(QuotaRefusal::TooLarge { limit: 10 })
    ));
    // Uninstall resets; a fresh process (new Quotas) starts from zero.
    q.forget_app("com.a");
    assert!(q.usage("com.a", T0).is_none());
    let s = q.admit(&a, "p", T0).unwrap();
    q.finish(s);
    let mut fresh = Quotas::new(cfg);
    assert!(fresh.admit(&a, "p", T0).is_ok());
}

#[tokio::test]
async fn qta05_revoking_does_not_reset_counters() {
    use std::sync::Arc;
    let p = permissions::Permissions::new(
        permissions::PermissionsConfig::default(),
        Box::new(permissions::MemoryStore::new()),
        Arc::new(permissions::RegistryResolver::default()),
        Arc::new(permissions::FixedSurface::deny()),
        Arc::new(permissions::ManualClock::new(T0)),
    );
    let a = app(10_001, "com.a", 1);
    let slot = p.admit_prompt(&a, "p").unwrap();
    p.revoke_caller("com.a");
    assert_eq!(p.admit_prompt(&a, "p").unwrap_err(), QuotaRefusal::Busy);
    assert_eq!(p.usage("com.a").unwrap().total, 1);
    p.prompt_finished(slot);
    p.package_uninstalled("com.a");
    assert!(p.usage("com.a").is_none());
}
