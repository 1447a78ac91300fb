//! AUT-02, AUT-04..09, ACP-55: the caller authorization state machine (fake clock) and the
//! `Permissions` shell around it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{caller, digest, entry, resolver};
use permissions::authorization::{AuthEffect, CallerAuthorization, OpenOutcome};
use permissions::consent::ScriptStep;
use permissions::store::{CallerState, PolicyTarget};
use permissions::{
    AgentosCode, CallerChoice, ManualClock, MemoryStore, Millis, Permissions, PermissionsConfig,
    ScriptedSurface, TokioClock, Uid,
};

const T0: Millis = Millis(1_700_000_000_000);

fn prompts(effects: &[AuthEffect]) -> usize {
    effects
        .iter()
        .filter(|e| matches!(e, AuthEffect::ShowPrompt { .. }))
        .count()
}

#[test]
fn aut02_unknown_caller_gets_one_prompt_and_pending() {
    let mut m = CallerAuthorization::default();
    let c = caller(10_001, "com.example.a", 1);
    let (o, fx) = m.on_open(&c, T0);
    assert_eq!(o, OpenOutcome::Pending);
    assert_eq!(o.code(), Some(AgentosCode::AuthorizationPending));
    assert_eq!(prompts(&fx), 1);
    // Retried every second (AUT-03): still pending, no second prompt.
    for s in 1..60 {
        let (o, fx) = m.on_open(&c, T0.plus(Duration::from_secs(s)));
        assert_eq!(o, OpenOutcome::Pending);
        assert_eq!(prompts(&fx), 0);
    }
}

#[test]
fn aut02_allow_opens_the_channel() {
    let mut m = CallerAuthorization::default();
    let c = caller(10_001, "com.example.a", 1);
    m.on_open(&c, T0);
    let fx = m.on_answer(
        "com.example.a",
        digest(1),
        CallerChoice::Allow,
        None,
        T0.plus(Duration::from_secs(3)),
    );
    assert!(matches!(&fx[..], [AuthEffect::Persist(r)] if r.state == CallerState::Allowed));
    assert_eq!(
        m.on_open(&c, T0.plus(Duration::from_secs(4))).0,
        OpenOutcome::Allowed
    );
    assert!(m.is_allowed(&c.identity));
}

#[test]
fn aut02_denied_within_ten_minutes_then_asked_again() {
    let mut m = CallerAuthorization::default();
    let c = caller(10_001, "com.example.a", 1);
    m.on_open(&c, T0);
    m.on_answer("com.example.a", digest(1), CallerChoice::Deny, None, T0);
    let just_before = T0.plus(Duration::from_secs(10 * 60) - Duration::from_millis(1));
    let (o, fx) = m.on_open(&c, just_before);
    assert_eq!(
        o,
        OpenOutcome::Denied {
            retry_after: Some(Duration::from_millis(1))
        }
    );
    assert_eq!(o.code(), Some(AgentosCode::Denied));
    assert_eq!(prompts(&fx), 0);
    // At 10 min: treated as none → a fresh prompt (G-21).
    let (o, fx) = m.on_open(&c, T0.plus(Duration::from_secs(10 * 60)));
    assert_eq!(o, OpenOutcome::Pending);
    assert_eq!(prompts(&fx), 1);
}

#[test]
fn aut02_unanswered_pending_becomes_denial_after_90s() {
    let mut m = CallerAuthorization::default();
    let c = caller(10_001, "com.example.a", 1);
    m.on_open(&c, T0);
    let fx = m.on_tick(T0.plus(Duration::from_millis(89_999)));
    assert!(fx.is_empty());
    let fx = m.on_tick(T0.plus(Duration::from_secs(90)));
    assert!(matches!(&fx[..], [AuthEffect::Persist(r)]
        if r.state == CallerState::Denied && r.decided_at == T0.plus(Duration::from_secs(90))));
    // The cooldown starts at expiry.
    let (o, _) = m.on_open(&c, T0.plus(Duration::from_secs(90 + 599)));
    assert!(matches!(o, OpenOutcome::Denied { .. }));
    // A late answer to the expired prompt changes nothing.
    m.on_answer(
        "com.example.a",
        digest(1),
        CallerChoice::Allow,
        None,
        T0.plus(Duration::from_secs(91)),
    );
    assert!(!m.is_allowed(&c.identity));
}

#[test]
fn aut02_signing_certificate_change_asks_again() {
    let mut m = CallerAuthorization::default();
    let genuine = caller(10_001, "com.example.a", 1);
    m.on_open(&genuine, T0);
    m.on_answer("com.example.a", digest(1), CallerChoice::Allow, None, T0);
    // Same package, another signer (reinstalled by someone else).
    let impostor = caller(10_001, "com.example.a", 2);
    assert!(!m.is_allowed(&impostor.identity));
    let (o, fx) = m.on_open(&impostor, T0.plus(Duration::from_secs(1)));
    assert_eq!(o, OpenOutcome::Pending);
    assert_eq!(prompts(&fx), 1);
    // Answering the old digest's prompt would not count; the new one is what is pending.
    m.on_answer(
        "com.example.a",
        digest(1),
        CallerChoice::Allow,
        None,
        T0.plus(Duration::from_secs(2)),
    );
    assert!(!m.is_allowed(&impostor.identity));
}

#[test]
fn aut05_label_is_display_only() {
    let mut m = CallerAuthorization::default();
    let mut c = caller(10_001, "com.example.a", 1);
    m.on_open(&c, T0);
    m.on_answer("com.example.a", digest(1), CallerChoice::Allow, None, T0);
    c.label = Some("AgentOS System".into());
    assert!(m.is_allowed(&c.identity));
    let mut other = caller(10_002, "com.example.b", 1);
    other.label = c.label.clone();
    assert!(
        !m.is_allowed(&other.identity),
        "same label, other package: not allowed"
    );
}

#[test]
fn aut06_settings_list_revoke_allow_remove() {
    let mut m = CallerAuthorization::default();
    let a = caller(10_001, "com.example.a", 1);
    let b = caller(10_002, "com.example.b", 2);
    m.on_open(&a, T0);
    m.on_open(&b, T0);
    m.on_answer(
        "com.example.a",
        digest(1),
        CallerChoice::Allow,
        Some("A".into()),
        T0,
    );
    m.on_answer(
        "com.example.b",
        digest(2),
        CallerChoice::Deny,
        Some("B".into()),
        T0,
    );
    let list = m.statuses(T0.plus(Duration::from_secs(60)));
    assert_eq!(list.len(), 2);
    assert_eq!(list[0].state, CallerState::Allowed);
    assert_eq!(list[0].cooldown_left, None);
    assert_eq!(list[1].state, CallerState::Denied);
    assert_eq!(list[1].cooldown_left, Some(Duration::from_secs(9 * 60)));

    // Revoke: `denied` on open, no prompt, no expiry.
    let fx = m.revoke("com.example.a", T0);
    assert!(
        fx.iter()
            .any(|e| matches!(e, AuthEffect::Revoked(r) if r.package == "com.example.a"))
    );
    let (o, fx) = m.on_open(&a, T0.plus(Duration::from_secs(24 * 3600)));
    assert_eq!(o, OpenOutcome::Denied { retry_after: None });
    assert_eq!(prompts(&fx), 0);
    // Switch back to allowed.
    m.allow("com.example.a", T0);
    assert!(m.is_allowed(&a.identity));
    // Remove: asked again on next open.
    let fx = m.remove("com.example.a");
    assert!(
        fx.iter()
            .any(|e| matches!(e, AuthEffect::Forget(p) if p == "com.example.a"))
    );
    let (o, fx) = m.on_open(&a, T0);
    assert_eq!(o, OpenOutcome::Pending);
    assert_eq!(prompts(&fx), 1);
}

#[test]
fn aut08_fail_closed_admits_nobody() {
    let mut m = CallerAuthorization::fail_closed();
    let c = caller(10_001, "com.example.a", 1);
    let (o, fx) = m.on_open(&c, T0);
    assert_eq!(o, OpenOutcome::NotOpen);
    assert_eq!(o.code(), Some(AgentosCode::NotOpen));
    assert!(fx.is_empty());
    assert!(!m.is_allowed(&c.identity));
}

/// A store whose load always fails (corrupt file).
#[derive(Debug)]
struct BrokenStore;

impl permissions::PolicyStore for BrokenStore {
    fn load(&self) -> Result<permissions::store::StoredPolicy, permissions::StoreError> {
        Err(permissions::StoreError::Corrupt {
            path: "x".into(),
            detail: "test".into(),
        })
    }
    fn put_caller(
        &mut self,
        _: &permissions::store::CallerRecord,
    ) -> Result<(), permissions::StoreError> {
        Ok(())
    }
    fn remove_caller(&mut self, _: &str) -> Result<(), permissions::StoreError> {
        Ok(())
    }
    fn set_disabled(&mut self, _: &PolicyTarget, _: bool) -> Result<(), permissions::StoreError> {
        Ok(())
    }
    fn set_always_allow(
        &mut self,
        _: &capability_model::CapabilityId,
        _: bool,
    ) -> Result<(), permissions::StoreError> {
        Ok(())
    }
    fn forget_tool(
        &mut self,
        _: &capability_model::CapabilityId,
    ) -> Result<(), permissions::StoreError> {
        Ok(())
    }
}

fn perms(
    store: Box<dyn permissions::PolicyStore>,
    surface: Arc<ScriptedSurface>,
    clock: Arc<dyn permissions::Clock>,
) -> Permissions {
    let reg = resolver(vec![
        entry(10_001, "com.example.a", 1, &[]),
        entry(10_002, "com.example.b", 2, &[]),
    ]);
    Permissions::new(
        PermissionsConfig::default(),
        store,
        Arc::new(reg),
        surface,
        clock,
    )
}

#[tokio::test(start_paused = true)]
async fn aut08_corrupt_store_fails_closed_in_the_shell() {
    let surface = Arc::new(ScriptedSurface::new());
    let p = perms(
        Box::new(BrokenStore),
        surface.clone(),
        Arc::new(TokioClock::anchored(T0)),
    );
    assert!(p.store_error().is_some());
    let err = p.open(Uid(10_001)).unwrap_err();
    assert_eq!(err.code, AgentosCode::NotOpen);
    assert!(
        surface.shown_callers().is_empty(),
        "no prompt when failing closed"
    );
}

#[tokio::test(start_paused = true)]
async fn aut01_aut04_prompt_is_shown_once_with_real_identity() {
    let surface = Arc::new(ScriptedSurface::new());
    surface.push_caller(ScriptStep::After(
        Duration::from_secs(5),
        Some(CallerChoice::Allow),
    ));
    let clock = Arc::new(TokioClock::anchored(T0));
    let p = perms(Box::new(MemoryStore::new()), surface.clone(), clock);
    // First open: pending, prompt raised.
    assert_eq!(
        p.open(Uid(10_001)).unwrap_err().code,
        AgentosCode::AuthorizationPending
    );
    // SDK retries every second; no second prompt.
    for _ in 0..3 {
        tokio::time::sleep(Duration::from_secs(1)).await;
        assert_eq!(
            p.open(Uid(10_001)).unwrap_err().code,
            AgentosCode::AuthorizationPending
        );
    }
    tokio::time::sleep(Duration::from_secs(3)).await;
    let c = p.open(Uid(10_001)).unwrap();
    assert_eq!(c.identity.package, "com.example.a");
    let shown = surface.shown_callers();
    assert_eq!(shown.len(), 1);
    let prompt = &shown[0];
    assert_eq!(prompt.package, "com.example.a");
    assert_eq!(prompt.title, "允许「com.example.a label」使用 AgentOS 吗？");
    assert!(prompt.render().contains(&digest(1).to_hex()[..12]));
    assert!(
        !prompt.render().contains(&digest(1).to_hex()[..13]),
        "only the first 12 digits"
    );
    assert_eq!(prompt.default_choice, CallerChoice::Deny);
    assert_eq!(prompt.choices, [CallerChoice::Allow, CallerChoice::Deny]);
}

#[tokio::test(start_paused = true)]
async fn aut02_unknown_uid_and_unanswered_prompt_in_the_shell() {
    let surface = Arc::new(ScriptedSurface::new()); // never answers
    let p = perms(
        Box::new(MemoryStore::new()),
        surface.clone(),
        Arc::new(TokioClock::anchored(T0)),
    );
    assert_eq!(p.open(Uid(4242)).unwrap_err().code, AgentosCode::NotOpen);
    assert_eq!(
        p.open(Uid(10_002)).unwrap_err().code,
        AgentosCode::AuthorizationPending
    );
    tokio::time::sleep(Duration::from_secs(91)).await;
    let err = p.open(Uid(10_002)).unwrap_err();
    assert_eq!(err.code, AgentosCode::Denied);
    assert_eq!(err.retry_after, Some(Duration::from_secs(599)));
    assert_eq!(err.to_string(), "agentos.acp.denied");
}

#[tokio::test(start_paused = true)]
async fn aut09_acp55_revocation_is_immediate_and_notifies_the_runtime() {
    let surface = Arc::new(ScriptedSurface::new());
    surface.push_caller(ScriptStep::Answer(Some(CallerChoice::Allow)));
    surface.push_caller(ScriptStep::Answer(Some(CallerChoice::Allow)));
    let p = perms(
        Box::new(MemoryStore::new()),
        surface.clone(),
        Arc::new(TokioClock::anchored(T0)),
    );
    let revoked = Arc::new(Mutex::new(Vec::new()));
    let sink = revoked.clone();
    p.on_revoked(Arc::new(move |r| {
        sink.lock().unwrap().push(r.package.clone())
    }));

    let _ = p.open(Uid(10_001));
    let _ = p.open(Uid(10_002));
    tokio::task::yield_now().await;
    tokio::task::yield_now().await;
    let a = p.open(Uid(10_001)).unwrap();
    let b = p.open(Uid(10_002)).unwrap();
    assert!(p.is_caller_allowed(&a.identity));

    p.revoke_caller("com.example.a");
    assert_eq!(*revoked.lock().unwrap(), vec!["com.example.a".to_owned()]);
    // AUT-09: the very next request is refused; other callers are untouched.
    assert!(!p.is_caller_allowed(&a.identity));
    assert!(p.is_caller_allowed(&b.identity));
    assert_eq!(p.open(Uid(10_001)).unwrap_err().code, AgentosCode::Denied);
}

#[tokio::test(start_paused = true)]
async fn aut07_authorization_and_enablement_are_independent() {
    let surface = Arc::new(ScriptedSurface::new());
    surface.push_caller(ScriptStep::Answer(Some(CallerChoice::Allow)));
    let p = perms(
        Box::new(MemoryStore::new()),
        surface,
        Arc::new(TokioClock::anchored(T0)),
    );
    let _ = p.open(Uid(10_001));
    tokio::task::yield_now().await;
    let a = p.open(Uid(10_001)).unwrap();
    let tool = capability_model::CapabilityId::mcp("notes", "notes", "note_add");
    p.set_disabled(
        PolicyTarget::Plugin {
            source: capability_model::Source::Mcp,
            provider: "notes".into(),
        },
        true,
    )
    .unwrap();
    assert!(p.is_disabled(&tool));
    assert!(
        p.is_caller_allowed(&a.identity),
        "disabling a plugin does not touch callers"
    );
    p.revoke_caller("com.example.a");
    assert!(
        p.is_disabled(&tool),
        "revoking a caller does not touch plugins"
    );
    p.set_disabled(
        PolicyTarget::Plugin {
            source: capability_model::Source::Mcp,
            provider: "notes".into(),
        },
        false,
    )
    .unwrap();
    assert!(!p.is_disabled(&tool));
    assert!(!p.is_caller_allowed(&a.identity));
}

#[test]
fn aut02_decisions_persist_across_restart() {
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::new(T0);
    {
        let mut store = permissions::SqliteStore::open(dir.path()).unwrap();
        let mut m = CallerAuthorization::default();
        let c = caller(10_001, "com.example.a", 1);
        m.on_open(&c, permissions::Clock::now(&clock));
        let fx = m.on_answer("com.example.a", digest(1), CallerChoice::Deny, None, T0);
        for e in fx {
            if let AuthEffect::Persist(r) = e {
                permissions::PolicyStore::put_caller(&mut store, &r).unwrap();
            }
        }
    }
    let store = permissions::SqliteStore::open(dir.path()).unwrap();
    let loaded = permissions::PolicyStore::load(&store).unwrap();
    let mut m = CallerAuthorization::new(loaded.callers.into_values());
    let c = caller(10_001, "com.example.a", 1);
    let (o, fx) = m.on_open(&c, T0.plus(Duration::from_secs(60)));
    assert!(
        matches!(o, OpenOutcome::Denied { .. }),
        "the denial survived the restart"
    );
    assert_eq!(prompts(&fx), 0);
}
