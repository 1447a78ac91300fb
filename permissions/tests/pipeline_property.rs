//! Property test: no sequence of events lets a call run that the pipeline should refuse
//! (CAT-69, CNS-01..03, CAT-68, AUT-02/09). A small independent model says what must happen;
//! the real sans-IO cores (CallerAuthorization, PolicyEngine, ConsentQueue) are driven with the
//! same events and must agree on every call, in both directions.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::HashSet;
use std::time::Duration;

use capability_model::{Capability, CapabilityId, Risk, Source};
use permissions::authorization::CallerAuthorization;
use permissions::consent::{CallerChoice, Choice, ConsentOutcome, ConsentQueue};
use permissions::store::PolicyTarget;
use permissions::{CatalogVerdict, Decision, Millis, PolicyEngine, Principal, ToolCall};
use proptest::prelude::*;

fn tools() -> Vec<Capability> {
    let mut confirm = common::write_tool("confirm_every_time");
    confirm.require_user_confirm = true;
    let mut other_plugin =
        Capability::new(CapabilityId::mcp("calendar", "cal", "event_create"), "x");
    other_plugin.base_risk = Risk::Write;
    vec![
        common::read_tool("read_skill"),
        common::write_tool("note_add"),
        common::write_tool("note_update"),
        common::high_tool("note_delete"),
        common::session_tool("fetch"),
        confirm,
        common::aci_cap("open_url", false),
        common::aci_cap("wipe", true),
        other_plugin,
    ]
}

#[derive(Debug, Clone)]
enum Event {
    SetAlways {
        tool: usize,
        on: bool,
    },
    Disable {
        tool: usize,
        level: u8,
        on: bool,
    },
    AuthAllow,
    AuthDeny,
    AuthRevoke,
    AuthSettingsAllow,
    Call {
        tool: usize,
        principal: u8,
        session: u8,
        verdict: u8,
        answer: Option<u8>,
    },
}

fn event() -> impl Strategy<Value = Event> {
    let n = tools().len();
    prop_oneof![
        (0..n, any::<bool>()).prop_map(|(tool, on)| Event::SetAlways { tool, on }),
        (0..n, 0u8..3, any::<bool>()).prop_map(|(tool, level, on)| Event::Disable {
            tool,
            level,
            on
        }),
        Just(Event::AuthAllow),
        Just(Event::AuthDeny),
        Just(Event::AuthRevoke),
        Just(Event::AuthSettingsAllow),
        (0..n, 0u8..3, 0u8..2, 0u8..4, proptest::option::of(0u8..4)).prop_map(
            |(tool, principal, session, verdict, answer)| Event::Call {
                tool,
                principal,
                session,
                verdict,
                answer
            }
        ),
        (0..n, 0u8..3, 0u8..2, proptest::option::of(0u8..4)).prop_map(
            |(tool, principal, session, answer)| {
                Event::Call {
                    tool,
                    principal,
                    session,
                    verdict: 0,
                    answer,
                }
            }
        ),
    ]
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum AuthModel {
    None,
    Allowed,
    Denied,
    Revoked,
}

fn target(cap: &Capability, level: u8) -> PolicyTarget {
    let id = &cap.id;
    match level {
        0 => PolicyTarget::Plugin {
            source: id.source,
            provider: id.provider.clone(),
        },
        1 => PolicyTarget::Server {
            source: id.source,
            provider: id.provider.clone(),
            server: id.server.clone(),
        },
        _ => PolicyTarget::Tool(id.clone()),
    }
}

/// The model's own notion of "may be remembered" (CAT-68, CAT-64, SMS-09).
fn model_rememberable(cap: &Capability) -> bool {
    let high = cap.annotations.destructive_hint == Some(true)
        || cap.aci.as_ref().is_some_and(|a| {
            a.flags
                .contains(&capability_model::AciFlag::DangerousAction)
        });
    !high
        && cap.id.source != Source::SessionMcp
        && !cap.require_user_confirm
        && cap.base_risk == Risk::Write
}

fn choice(i: u8) -> Choice {
    [
        Choice::AllowOnce,
        Choice::DontAskAgainThisSession,
        Choice::AlwaysAllow,
        Choice::Deny,
    ][usize::from(i)]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, .. ProptestConfig::default() })]

    #[test]
    fn no_event_sequence_runs_a_call_that_must_be_refused(events in proptest::collection::vec(event(), 1..60)) {
        let tools = tools();
        let app = common::caller(10_001, "com.example.app", 1);
        let principals = [Principal::App(app.clone()), Principal::SelfUi, Principal::Desktop];
        let sessions = ["ses_A", "ses_B"];

        let mut engine = PolicyEngine::default();
        let mut auth = CallerAuthorization::default();
        let mut queue = ConsentQueue::default();
        let mut now = Millis(1_700_000_000_000);

        // The model.
        let mut always: HashSet<CapabilityId> = HashSet::new();
        let mut disabled: HashSet<PolicyTarget> = HashSet::new();
        let mut grants: HashSet<(usize, CapabilityId)> = HashSet::new();
        let mut auth_model = AuthModel::None;

        for ev in events {
            // Past every cooldown and pending timeout between events.
            now = now.plus(Duration::from_secs(11 * 60));
            match ev {
                Event::SetAlways { tool, on } => {
                    let cap = &tools[tool];
                    let r = engine.user.set_always_allow(cap, on);
                    if on && !model_rememberable(cap) {
                        prop_assert!(r.is_err(), "always allow accepted for {}", cap.id);
                    } else {
                        prop_assert!(r.is_ok());
                        if on { always.insert(cap.id.clone()); } else { always.remove(&cap.id); }
                    }
                }
                Event::Disable { tool, level, on } => {
                    let t = target(&tools[tool], level);
                    engine.user.set_disabled(t.clone(), on);
                    if on { disabled.insert(t); } else { disabled.remove(&t); }
                }
                Event::AuthAllow | Event::AuthDeny => {
                    let (_, _) = auth.on_open(&app, now);
                    let c = if matches!(ev, Event::AuthAllow) { CallerChoice::Allow } else { CallerChoice::Deny };
                    auth.on_answer("com.example.app", app.identity.signing_cert_sha256, c, None, now);
                    auth_model = match (auth_model, c) {
                        (AuthModel::Revoked, _) => AuthModel::Revoked,
                        (AuthModel::Allowed, _) => AuthModel::Allowed,
                        (_, CallerChoice::Allow) => AuthModel::Allowed,
                        (_, CallerChoice::Deny) => AuthModel::Denied,
                    };
                }
                Event::AuthRevoke => {
                    auth.revoke("com.example.app", now);
                    if auth_model != AuthModel::None { auth_model = AuthModel::Revoked; }
                }
                Event::AuthSettingsAllow => {
                    auth.allow("com.example.app", now);
                    if auth_model != AuthModel::None { auth_model = AuthModel::Allowed; }
                }
                Event::Call { tool, principal, session, verdict, answer } => {
                    let cap = &tools[tool];
                    let p = &principals[usize::from(principal)];
                    let catalog = [CatalogVerdict::Visible, CatalogVerdict::NotInCatalog,
                        CatalogVerdict::OutOfScope, CatalogVerdict::HiddenByMode][usize::from(verdict)];
                    let call = ToolCall {
                        principal: p,
                        session: sessions[usize::from(session)],
                        capability: cap,
                        catalog,
                        session_has_scope: false,
                    };
                    let authorized = match p {
                        Principal::App(c) => auth.is_allowed(&c.identity),
                        _ => true,
                    };
                    let decision = engine.decide(&call, authorized);
                    let (runs, prompted) = match &decision {
                        Decision::Refuse(_) => (false, false),
                        Decision::Allow(_) => (true, false),
                        Decision::Ask { choices, .. } => {
                            let (id, _) = queue.submit(choices.clone(), now).unwrap();
                            let outcome = queue.answer(id, answer.map(choice), now).unwrap();
                            let (v, _) = engine.apply_consent(&call, outcome);
                            prop_assert_eq!(v.may_run(), outcome.is_allowed());
                            (v.may_run(), true)
                        }
                    };

                    // What the model says.
                    let model_authorized = !matches!(p, Principal::App(_)) || auth_model == AuthModel::Allowed;
                    let is_disabled = disabled.iter().any(|t| t.covers(&cap.id));
                    let step1 = model_authorized && catalog == CatalogVerdict::Visible && !is_disabled;
                    let is_read = cap.base_risk == Risk::Read && cap.annotations.destructive_hint != Some(true);
                    let silent = is_read && !cap.require_user_confirm
                        || (model_rememberable(cap) && always.contains(&cap.id))
                        || (model_rememberable(cap) && grants.contains(&(usize::from(session), cap.id.clone())));
                    let offered_allow = answer.map(choice).is_some_and(|c| match c {
                        Choice::AllowOnce => true,
                        Choice::Deny => false,
                        _ => model_rememberable(cap),
                    });
                    let expected = step1 && (silent || offered_allow);

                    prop_assert_eq!(runs, expected, "call {:?} by {} decided {:?}", cap.id, p.log_name(), decision);
                    // Step-1 refusals never prompt (CAT-37, CAT-53, CAT-69).
                    if !step1 { prop_assert!(!prompted); }
                    // HIGH tools always prompt (never remembered).
                    if step1 && cap.risk() == Risk::High { prop_assert!(prompted); }

                    if step1 && !silent && runs {
                        match answer.map(choice) {
                            Some(Choice::AlwaysAllow) => { always.insert(cap.id.clone()); }
                            Some(Choice::DontAskAgainThisSession) => {
                                grants.insert((usize::from(session), cap.id.clone()));
                            }
                            _ => {}
                        }
                    }
                }
            }
            prop_assert!(queue.is_empty());
        }
        // "Always allow" never sticks to a HIGH or session tool.
        for cap in &tools {
            if !model_rememberable(cap) {
                prop_assert!(!engine.user.always_allows(cap));
            }
        }
        let _ = ConsentOutcome::Unavailable;
    }
}
