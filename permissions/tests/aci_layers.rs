//! ACI-20..23: the five provider-side layers, enforced before `onCall`; any denial is
//! `PERMISSION_DENIED` (403).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use common::{aci_cap, entry, resolver};
use permissions::aci::{
    AciCallContext, AciDenialReason, AciInboundCall, AciLayer, AciPermissionGate,
    AciPermissionHook, AciPolicy, AllowListHook, DefaultHook, PERMISSION_CALL,
    PERMISSION_CALL_DANGEROUS,
};
use permissions::consent::{Choice, DenyReason, ScriptStep};
use permissions::{AciErrorCode, ConsentBroker, Millis, ScriptedSurface, TokioClock, Uid};
use serde_json::Map;

const RUNTIME: u32 = 10_100;
const NO_PERM: u32 = 10_101;
const SHARED: u32 = 10_102;
const DANGER_OK: u32 = 10_103;

fn gate(policy: AciPolicy) -> AciPermissionGate {
    let reg = resolver(vec![
        entry(
            RUNTIME,
            "org.agentos.app",
            1,
            &[PERMISSION_CALL, "com.example.notes.permission.DELETE"],
        ),
        entry(NO_PERM, "com.example.noperm", 2, &[]),
        entry(SHARED, "com.example.shared1", 3, &[PERMISSION_CALL]),
        entry(SHARED, "com.example.shared2", 3, &[PERMISSION_CALL]),
        entry(
            DANGER_OK,
            "com.example.danger",
            4,
            &[PERMISSION_CALL, PERMISSION_CALL_DANGEROUS],
        ),
    ]);
    AciPermissionGate::new(Arc::new(reg), policy)
}

/// Counts how often layer 3 ran and records the callerPkg it saw.
#[derive(Default)]
struct RecordingHook {
    calls: AtomicUsize,
    answer: bool,
    seen: std::sync::Mutex<Vec<String>>,
}

impl AciPermissionHook for RecordingHook {
    fn on_check_permission(&self, ctx: &AciCallContext<'_>) -> bool {
        self.calls.fetch_add(1, Ordering::SeqCst);
        self.seen.lock().unwrap().push(ctx.caller_pkg.to_owned());
        self.answer
    }
}

fn hook(answer: bool) -> RecordingHook {
    RecordingHook {
        answer,
        ..RecordingHook::default()
    }
}

fn inbound<'a>(
    uid: u32,
    cap: &'a capability_model::Capability,
    args: &'a Map<String, serde_json::Value>,
) -> AciInboundCall<'a> {
    AciInboundCall {
        uid: Uid(uid),
        capability: cap,
        claimed_caller_pkg: None,
        arguments: args,
    }
}

#[test]
fn aci20_layer1_call_permission_required_and_later_layers_skipped() {
    let g = gate(AciPolicy::allow_all());
    let cap = aci_cap("notes_search", false);
    let args = Map::new();
    let h = hook(true);
    let d = g.check(&inbound(NO_PERM, &cap, &args), &h).unwrap_err();
    assert_eq!(d.layer, AciLayer::ManifestPermission);
    assert_eq!(d.reason, AciDenialReason::MissingCallPermission);
    assert_eq!(d.error_code(), AciErrorCode::PermissionDenied);
    assert_eq!(d.error_code().code(), 403);
    assert_eq!(
        h.calls.load(Ordering::SeqCst),
        0,
        "onCheckPermission never ran"
    );
}

#[test]
fn aci20_layer1_dangerous_action_needs_call_dangerous() {
    let g = gate(AciPolicy::allow_all());
    let cap = aci_cap("wipe", true);
    let args = Map::new();
    let d = g
        .check(&inbound(RUNTIME, &cap, &args), &DefaultHook)
        .unwrap_err();
    assert_eq!(d.reason, AciDenialReason::MissingDangerousPermission);
    assert!(
        g.check(&inbound(DANGER_OK, &cap, &args), &DefaultHook)
            .is_ok()
    );
}

#[test]
fn aci21_layer2_uid_must_resolve_to_one_package() {
    let g = gate(AciPolicy::allow_all());
    let cap = aci_cap("notes_search", false);
    let args = Map::new();
    let d = g
        .check(&inbound(SHARED, &cap, &args), &DefaultHook)
        .unwrap_err();
    assert_eq!(
        (d.layer, d.reason),
        (AciLayer::BinderUid, AciDenialReason::SharedUid)
    );
    let d = g
        .check(&inbound(55_555, &cap, &args), &DefaultHook)
        .unwrap_err();
    assert_eq!(
        (d.layer, d.reason),
        (AciLayer::BinderUid, AciDenialReason::UnknownCaller)
    );
    let closed = AciPermissionGate::new(
        Arc::new(permissions::RegistryResolver::fail_closed()),
        AciPolicy::allow_all(),
    );
    let d = closed
        .check(&inbound(RUNTIME, &cap, &args), &DefaultHook)
        .unwrap_err();
    assert_eq!(d.reason, AciDenialReason::RegistryUnavailable);
}

#[test]
fn aci21_spoofed_caller_pkg_is_overwritten_before_the_hook() {
    let g = gate(AciPolicy::allow_all());
    let cap = aci_cap("notes_search", false);
    let args = Map::new();
    let h = hook(true);
    let call = AciInboundCall {
        claimed_caller_pkg: Some("com.android.systemui"),
        ..inbound(RUNTIME, &cap, &args)
    };
    let admitted = g.check(&call, &h).unwrap();
    assert_eq!(admitted.caller_pkg(), "org.agentos.app");
    assert_eq!(*h.seen.lock().unwrap(), vec!["org.agentos.app".to_owned()]);
    // A hook trusting only the claimed name would have let a spoofer in; here it cannot.
    let only_system = AllowListHook::new(["com.android.systemui"]);
    let d = g.check(&call, &only_system).unwrap_err();
    assert_eq!(d.layer, AciLayer::CheckPermissionHook);
}

#[test]
fn aci20_layer3_hook_refusal_stops_before_layer4() {
    // A policy that would deny too: the reported layer must be 3 (order).
    let g = gate(AciPolicy::deny_all());
    let cap = aci_cap("notes_search", false);
    let args = Map::new();
    let d = g
        .check(&inbound(RUNTIME, &cap, &args), &hook(false))
        .unwrap_err();
    assert_eq!(
        (d.layer, d.reason),
        (AciLayer::CheckPermissionHook, AciDenialReason::HookRefused)
    );
}

#[test]
fn aci23_allow_list_hook_controller_or_self() {
    let g = gate(AciPolicy::allow_all());
    let cap = aci_cap("notes_search", false);
    let args = Map::new();
    let h = AllowListHook::new(["org.agentos.app", "com.example.notes"]);
    assert!(g.check(&inbound(RUNTIME, &cap, &args), &h).is_ok());
    let d = g.check(&inbound(DANGER_OK, &cap, &args), &h).unwrap_err();
    assert_eq!(d.layer, AciLayer::CheckPermissionHook);
}

#[test]
fn aci22_layer4_policy_file() {
    let xml = r#"<aci-permissions version="1" default="deny">
        <allow package="org.agentos.app"/>
    </aci-permissions>"#;
    let g = gate(AciPolicy::parse(xml).unwrap());
    let cap = aci_cap("notes_search", false);
    let args = Map::new();
    assert!(
        g.check(&inbound(RUNTIME, &cap, &args), &DefaultHook)
            .is_ok()
    );
    let d = g
        .check(&inbound(DANGER_OK, &cap, &args), &DefaultHook)
        .unwrap_err();
    assert_eq!(
        (d.layer, d.reason),
        (AciLayer::PolicyFile, AciDenialReason::PolicyDenied)
    );
}

#[test]
fn aci20_layer5_require_permission_from_capability_and_file() {
    let xml = r#"<aci-permissions version="1" default="allow">
        <capability id="notes_delete" requirePermission="com.example.notes.permission.DELETE"/>
        <capability id="notes_export" requirePermission="com.example.notes.permission.EXPORT"/>
    </aci-permissions>"#;
    let g = gate(AciPolicy::parse(xml).unwrap());
    let args = Map::new();
    let del = aci_cap("notes_delete", false);
    assert!(
        g.check(&inbound(RUNTIME, &del, &args), &DefaultHook)
            .is_ok()
    );
    let export = aci_cap("notes_export", false);
    let d = g
        .check(&inbound(RUNTIME, &export, &args), &DefaultHook)
        .unwrap_err();
    assert_eq!(
        (d.layer, d.reason),
        (
            AciLayer::Capability,
            AciDenialReason::MissingRequiredPermission
        )
    );
    // From the capability JSON's own requirePermission.
    let mut own = aci_cap("notes_share", false);
    own.require_permission = Some("com.example.notes.permission.SHARE".into());
    let d = g
        .check(&inbound(RUNTIME, &own, &args), &DefaultHook)
        .unwrap_err();
    assert_eq!(d.reason, AciDenialReason::MissingRequiredPermission);
}

fn broker(surface: Arc<ScriptedSurface>) -> ConsentBroker {
    ConsentBroker::new(
        surface,
        Arc::new(TokioClock::anchored(Millis(1_700_000_000_000))),
    )
}

#[tokio::test(start_paused = true)]
async fn aci20_layer5_require_user_confirm_goes_through_consent() {
    let xml = r#"<aci-permissions version="1" default="allow">
        <capability id="notes_delete" requireUserConfirm="true"/>
    </aci-permissions>"#;
    let g = gate(AciPolicy::parse(xml).unwrap());
    let del = aci_cap("notes_delete", false);
    let mut args = Map::new();
    args.insert("id".into(), serde_json::json!("n1"));
    let surface = Arc::new(ScriptedSurface::new());
    surface
        .push_tool(ScriptStep::Answer(Some(Choice::AllowOnce)))
        .push_tool(ScriptStep::Answer(Some(Choice::Deny)))
        .push_tool(ScriptStep::Never);
    let b = broker(surface.clone());
    let call = inbound(RUNTIME, &del, &args);
    assert!(g.authorize(&call, &DefaultHook, Some(&b)).await.is_ok());
    let d = g
        .authorize(&call, &DefaultHook, Some(&b))
        .await
        .unwrap_err();
    assert_eq!(d.reason, AciDenialReason::UserDeclined(DenyReason::User));
    let d = g
        .authorize(&call, &DefaultHook, Some(&b))
        .await
        .unwrap_err();
    assert_eq!(d.reason, AciDenialReason::UserDeclined(DenyReason::Timeout));
    // Only allow once / deny are offered, and the prompt names the resolved package.
    let shown = surface.shown_tools();
    assert_eq!(shown.len(), 3);
    assert_eq!(shown[0].choices, vec![Choice::AllowOnce, Choice::Deny]);
    assert!(shown[0].render().contains("(「org.agentos.app」)"));
    // No broker: fail closed.
    let d = g.authorize(&call, &DefaultHook, None).await.unwrap_err();
    assert_eq!(d.reason, AciDenialReason::ConsentUnavailable);
    // The capability's own flag works as well.
    let mut own = aci_cap("notes_wipe", false);
    own.require_user_confirm = true;
    let admitted = g
        .check(&inbound(RUNTIME, &own, &args), &DefaultHook)
        .unwrap();
    assert!(admitted.needs_user_confirm);
}

#[tokio::test(start_paused = true)]
async fn aci20_denial_means_no_dispatch() {
    // A tiny provider loop: onCall runs only after authorize succeeds.
    let g = gate(AciPolicy::deny_all());
    let cap = aci_cap("notes_search", false);
    let args = Map::new();
    let dispatched = AtomicUsize::new(0);
    for uid in [RUNTIME, NO_PERM, SHARED, 1] {
        if g.authorize(&inbound(uid, &cap, &args), &DefaultHook, None)
            .await
            .is_ok()
        {
            dispatched.fetch_add(1, Ordering::SeqCst);
        }
    }
    assert_eq!(dispatched.load(Ordering::SeqCst), 0);
}
