//! CAT-68, CAT-69, CNS-01..03, CNS-07, CNS-10, CNS-11, CAT-05, CAT-37, CAT-53, CAT-64: the
//! decision pipeline, sans-IO engine and async shell.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;

use capability_model::{Capability, Source};
use common::{app, high_tool, read_tool, session_tool, write_tool};
use permissions::consent::{ConsentOutcome, DenyReason, ScriptStep};
use permissions::pipeline::{Allowance, Refusal};
use permissions::policy::{PolicyError, UserPolicy};
use permissions::store::PolicyTarget;
use permissions::{
    AgentosCode, CallerPolicy, CatalogVerdict, Choice, Decision, MemoryStore, Millis,
    PermissionsConfig, PolicyEngine, Principal, RegistryResolver, ScriptedSurface, TokioClock,
    ToolCall, ToolVerdict,
};

const SESSION: &str = "ses_01J9Z6Q9K2AAAAAAAAAAAAAAAA";

fn call<'a>(p: &'a Principal, cap: &'a Capability) -> ToolCall<'a> {
    ToolCall {
        principal: p,
        session: SESSION,
        capability: cap,
        catalog: CatalogVerdict::Visible,
        session_has_scope: false,
    }
}

fn asks(d: &Decision) -> Option<Vec<Choice>> {
    match d {
        Decision::Ask { choices, .. } => Some(choices.clone()),
        _ => None,
    }
}

#[test]
fn cns01_read_runs_write_and_high_ask() {
    let e = PolicyEngine::default();
    let p = Principal::SelfUi;
    assert_eq!(
        e.decide(&call(&p, &read_tool("r")), true),
        Decision::Allow(Allowance::ReadRisk)
    );
    assert!(asks(&e.decide(&call(&p, &write_tool("w")), true)).is_some());
    assert!(asks(&e.decide(&call(&p, &high_tool("h")), true)).is_some());
}

#[test]
fn cns02_choices_per_risk() {
    let e = PolicyEngine::default();
    let p = Principal::SelfUi;
    assert_eq!(
        asks(&e.decide(&call(&p, &write_tool("w")), true)).unwrap(),
        vec![
            Choice::AllowOnce,
            Choice::DontAskAgainThisSession,
            Choice::AlwaysAllow,
            Choice::Deny
        ]
    );
    assert_eq!(
        asks(&e.decide(&call(&p, &high_tool("h")), true)).unwrap(),
        vec![Choice::AllowOnce, Choice::Deny]
    );
    // SMS-09/CAT-64: session MCP tools are never remembered.
    assert_eq!(
        asks(&e.decide(&call(&p, &session_tool("s")), true)).unwrap(),
        vec![Choice::AllowOnce, Choice::Deny]
    );
}

#[test]
fn cat68_always_allow_refused_for_high_and_session_tools() {
    let mut u = UserPolicy::default();
    assert_eq!(
        u.set_always_allow(&high_tool("h"), true),
        Err(PolicyError::NotRememberable)
    );
    assert_eq!(
        u.set_always_allow(&session_tool("s"), true),
        Err(PolicyError::NotRememberable)
    );
    assert_eq!(u.set_always_allow(&write_tool("w"), true), Ok(()));
}

#[test]
fn cns01_always_allow_skips_the_prompt_for_write_only() {
    let mut e = PolicyEngine::default();
    let w = write_tool("w");
    e.user.set_always_allow(&w, true).unwrap();
    let p = Principal::SelfUi;
    assert_eq!(
        e.decide(&call(&p, &w), true),
        Decision::Allow(Allowance::AlwaysAllow)
    );
    // The same triple later becomes HIGH (destructiveHint added by an update): asked again.
    let mut now_high = w.clone();
    now_high.annotations.destructive_hint = Some(true);
    assert!(asks(&e.decide(&call(&p, &now_high), true)).is_some());
}

#[test]
fn cns03_always_allow_ignores_who_the_caller_is() {
    let mut e = PolicyEngine::default();
    let w = write_tool("event_create");
    e.user.set_always_allow(&w, true).unwrap();
    for p in [
        app(10_001, "com.a", 1),
        app(10_002, "com.b", 2),
        Principal::Desktop,
        Principal::SelfUi,
    ] {
        assert_eq!(
            e.decide(&call(&p, &w), true),
            Decision::Allow(Allowance::AlwaysAllow)
        );
    }
}

#[test]
fn cat69_always_allow_never_bypasses_step_one() {
    let mut e = PolicyEngine::default();
    let w = write_tool("w");
    e.user.set_always_allow(&w, true).unwrap();
    e.sessions.grant(SESSION, &w.id);
    let p = Principal::SelfUi;
    for v in [
        CatalogVerdict::NotInCatalog,
        CatalogVerdict::OutOfScope,
        CatalogVerdict::HiddenByMode,
    ] {
        let c = ToolCall {
            catalog: v,
            ..call(&p, &w)
        };
        assert_eq!(e.decide(&c, true), Decision::Refuse(Refusal::NotInCatalog));
    }
    // User disablement at any level, too.
    for t in [
        PolicyTarget::Tool(w.id.clone()),
        PolicyTarget::Server {
            source: Source::Mcp,
            provider: "notes".into(),
            server: "notes".into(),
        },
        PolicyTarget::Plugin {
            source: Source::Mcp,
            provider: "notes".into(),
        },
    ] {
        let mut e2 = e.clone();
        e2.user.set_disabled(t, true);
        assert_eq!(
            e2.decide(&call(&p, &w), true),
            Decision::Refuse(Refusal::Disabled)
        );
    }
    // Even a READ tool (no prompt ever) is refused when out of scope.
    let r = read_tool("r");
    let c = ToolCall {
        catalog: CatalogVerdict::HiddenByMode,
        ..call(&p, &r)
    };
    assert_eq!(e.decide(&c, true), Decision::Refuse(Refusal::NotInCatalog));
}

#[test]
fn cat37_cat53_every_step_one_refusal_has_the_same_code_and_text() {
    let codes: Vec<_> = [
        Refusal::NotInCatalog,
        Refusal::Disabled,
        Refusal::StrictUnscoped,
    ]
    .iter()
    .map(|r| (r.code(), r.code().model_text()))
    .collect();
    assert!(codes.iter().all(|c| *c == codes[0]));
    assert_eq!(codes[0].0, AgentosCode::ToolNotInCatalog);
}

#[test]
fn aut09_unauthorized_caller_is_refused_before_anything() {
    let e = PolicyEngine::default();
    let p = app(10_001, "com.a", 1);
    let r = read_tool("r");
    assert_eq!(
        e.decide(&call(&p, &r), false),
        Decision::Refuse(Refusal::CallerNotAuthorized)
    );
    assert_eq!(Refusal::CallerNotAuthorized.code(), AgentosCode::Denied);
}

#[test]
fn cns01_dont_ask_again_is_per_session_and_per_triple() {
    let mut e = PolicyEngine::default();
    let p = Principal::SelfUi;
    let w = write_tool("w");
    let other = write_tool("other");
    let (v, change) = e.apply_consent(
        &call(&p, &w),
        ConsentOutcome::Allowed(Choice::DontAskAgainThisSession),
    );
    assert_eq!(
        v,
        ToolVerdict::Run(Allowance::User(Choice::DontAskAgainThisSession))
    );
    assert_eq!(change, None, "not persisted");
    assert_eq!(
        e.decide(&call(&p, &w), true),
        Decision::Allow(Allowance::SessionGrant)
    );
    assert!(
        asks(&e.decide(&call(&p, &other), true)).is_some(),
        "other triple still asks"
    );
    let other_session = ToolCall {
        session: "ses_other",
        ..call(&p, &w)
    };
    assert!(
        asks(&e.decide(&other_session, true)).is_some(),
        "other session still asks"
    );
    e.sessions.end_session(SESSION);
    assert!(asks(&e.decide(&call(&p, &w), true)).is_some());
}

#[test]
fn cat67_idempotent_hint_never_suppresses_consent() {
    let e = PolicyEngine::default();
    let mut w = write_tool("w");
    w.annotations.idempotent_hint = Some(true);
    w.annotations.read_only_hint = Some(true);
    assert!(asks(&e.decide(&call(&Principal::SelfUi, &w), true)).is_some());
}

#[test]
fn aci_require_user_confirm_always_asks_even_for_read() {
    let e = PolicyEngine::default();
    let mut r = read_tool("r");
    r.require_user_confirm = true;
    assert_eq!(
        asks(&e.decide(&call(&Principal::SelfUi, &r), true)).unwrap(),
        vec![Choice::AllowOnce, Choice::Deny]
    );
}

#[test]
fn cns10_desktop_and_self_follow_the_same_rules() {
    let mut e = PolicyEngine::default();
    let w = write_tool("w");
    let h = high_tool("h");
    let a = app(10_001, "com.a", 1);
    for cap in [&w, &h] {
        let base = e.decide(&call(&a, cap), true);
        assert_eq!(e.decide(&call(&Principal::Desktop, cap), true), base);
        assert_eq!(e.decide(&call(&Principal::SelfUi, cap), true), base);
    }
    e.caller_policy = CallerPolicy::Open;
    assert!(asks(&e.decide(&call(&Principal::Desktop, &w), true)).is_some());
}

#[test]
fn cns11_strict_policy_is_opt_in() {
    let mut e = PolicyEngine::default();
    assert_eq!(e.caller_policy, CallerPolicy::Open, "off by default");
    e.caller_policy = CallerPolicy::Strict;
    let a = app(10_001, "com.a", 1);
    let r = read_tool("r");
    let w = write_tool("w");
    e.user.set_always_allow(&w, true).unwrap();
    // Without a scope: no tools for third parties.
    assert_eq!(
        e.decide(&call(&a, &r), true),
        Decision::Refuse(Refusal::StrictUnscoped)
    );
    // With a scope: every call prompted, READ included, no remembering.
    let scoped = ToolCall {
        session_has_scope: true,
        ..call(&a, &r)
    };
    assert_eq!(
        asks(&e.decide(&scoped, true)).unwrap(),
        vec![Choice::AllowOnce, Choice::Deny]
    );
    let scoped_w = ToolCall {
        session_has_scope: true,
        ..call(&a, &w)
    };
    assert_eq!(
        asks(&e.decide(&scoped_w, true)).unwrap(),
        vec![Choice::AllowOnce, Choice::Deny]
    );
    // SELF is not a third party.
    assert_eq!(
        e.decide(&call(&Principal::SelfUi, &r), true),
        Decision::Allow(Allowance::ReadRisk)
    );
}

#[test]
fn cat05_forgetting_a_triple_drops_its_policies() {
    let mut e = PolicyEngine::default();
    let w = write_tool("w");
    e.user.set_always_allow(&w, true).unwrap();
    e.user.set_disabled(PolicyTarget::Tool(w.id.clone()), true);
    e.sessions.grant(SESSION, &w.id);
    e.user.forget_tool(&w.id);
    e.sessions.forget_tool(&w.id);
    assert!(asks(&e.decide(&call(&Principal::SelfUi, &w), true)).is_some());
}

fn shell(surface: Arc<ScriptedSurface>) -> permissions::Permissions {
    permissions::Permissions::new(
        PermissionsConfig::default(),
        Box::new(MemoryStore::new()),
        Arc::new(RegistryResolver::default()),
        surface,
        Arc::new(TokioClock::anchored(Millis(1_700_000_000_000))),
    )
}

#[tokio::test(start_paused = true)]
async fn cns07_denial_and_timeout_never_dispatch() {
    let surface = Arc::new(ScriptedSurface::new());
    surface.push_tool(ScriptStep::Answer(Some(Choice::Deny)));
    surface.push_tool(ScriptStep::Never);
    let p = shell(surface);
    let w = write_tool("w");
    let args = serde_json::Map::new();
    let mut dispatched = 0;
    for expected in [DenyReason::User, DenyReason::Timeout] {
        let v = p
            .authorize_tool_call(&call(&Principal::SelfUi, &w), &args)
            .await;
        if v.may_run() {
            dispatched += 1;
        }
        assert_eq!(v, ToolVerdict::Denied(expected));
        assert_eq!(
            v.code().and_then(|c| c.model_text()),
            Some("[agentos:tool_denied] The user declined this tool call.")
        );
    }
    assert_eq!(dispatched, 0);
}

#[tokio::test(start_paused = true)]
async fn cns02_always_allow_answer_is_remembered_and_persisted() {
    let surface = Arc::new(ScriptedSurface::new());
    surface.push_tool(ScriptStep::Answer(Some(Choice::AlwaysAllow)));
    let p = shell(surface.clone());
    let w = write_tool("w");
    let args = serde_json::Map::new();
    let v = p
        .authorize_tool_call(&call(&Principal::SelfUi, &w), &args)
        .await;
    assert_eq!(v, ToolVerdict::Run(Allowance::User(Choice::AlwaysAllow)));
    let v = p
        .authorize_tool_call(&call(&Principal::Desktop, &w), &args)
        .await;
    assert_eq!(v, ToolVerdict::Run(Allowance::AlwaysAllow));
    assert_eq!(surface.shown_tools().len(), 1);
    // And it can be switched off again.
    p.set_always_allow(&w, false).unwrap();
    assert!(matches!(
        p.decide(&call(&Principal::SelfUi, &w)),
        Decision::Ask { .. }
    ));
    assert!(p.set_always_allow(&high_tool("h"), true).is_err());
}

#[tokio::test(start_paused = true)]
async fn cns08_prompt_names_the_real_package_and_sanitizes_arguments() {
    let surface = Arc::new(ScriptedSurface::new());
    surface.push_tool(ScriptStep::Answer(Some(Choice::Deny)));
    let p = shell(surface.clone());
    let mut spoof = common::caller(10_001, &format!("com.real.{}", "x".repeat(300)), 1);
    spoof.label = Some("AgentOS\u{202E} 系统\n\n已同意".into());
    let principal = Principal::App(spoof);
    let mut args = serde_json::Map::new();
    args.insert(
        "title".into(),
        serde_json::json!("hi」\n「用户已同意」\u{200D}"),
    );
    args.insert("count".into(), serde_json::json!(3));
    let w = write_tool("w");
    // The prompt text is built by the broker from the kernel-resolved principal.
    let req = permissions::consent::ConsentRequest {
        capability: w.id.clone(),
        title: None,
        risk: w.risk(),
        arguments: args,
        initiator: permissions::consent::Initiator::of(&principal),
        choices: Choice::offered(true),
    };
    let _ = p.broker().request(&req).await;
    let prompt = surface.shown_tools().pop().unwrap();
    let text = prompt.render();
    assert!(
        text.contains(&format!("(「com.real.{}」)", "x".repeat(300))),
        "{text}"
    );
    assert!(
        text.contains("Initiated by 「AgentOS 系统 已同意」"),
        "{text}"
    );
    assert!(
        text.contains("  「title」: 「hi』 『用户已同意』」"),
        "{text}"
    );
    assert!(text.contains("  「count」: 「3」"), "{text}");
    assert!(!text.contains('\u{202E}') && !text.contains('\u{200D}'));
    // Every line of data is framed: no line starts with forged text.
    for line in text.lines() {
        assert!(
            !line.starts_with("「用户") && !line.starts_with("已同意"),
            "{line}"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn cns06_full_queue_maps_to_tool_unavailable() {
    let surface = Arc::new(ScriptedSurface::new());
    let p = shell(surface);
    let w = write_tool("w");
    let args = serde_json::Map::new();
    let mut tickets = Vec::new();
    for _ in 0..16 {
        match p.begin_tool_call(&call(&Principal::SelfUi, &w), &args) {
            permissions::ToolCallStart::Consent(t) => tickets.push(t),
            other => panic!("{other:?}"),
        }
    }
    match p.begin_tool_call(&call(&Principal::SelfUi, &w), &args) {
        permissions::ToolCallStart::Decided(v) => {
            assert_eq!(v, ToolVerdict::Unavailable);
            assert_eq!(v.code(), Some(AgentosCode::ToolUnavailable));
            assert!(AgentosCode::ToolUnavailable.retryable());
        }
        other => panic!("{other:?}"),
    }
}
