//! The `Permissions` shell over the SQLite store: caller decisions and "always allow" survive a
//! restart of the whole facade (AUT-02 "decisions persist", CNS-03).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::{entry, resolver, write_tool};
use permissions::consent::ScriptStep;
use permissions::pipeline::Allowance;
use permissions::{
    AgentosCode, CallerChoice, CatalogVerdict, Choice, Millis, Permissions, PermissionsConfig,
    Principal, ScriptedSurface, SqliteStore, TokioClock, ToolCall, ToolVerdict, Uid,
};

const T0: Millis = Millis(1_700_000_000_000);

fn facade(dir: &std::path::Path, surface: Arc<ScriptedSurface>) -> Permissions {
    let reg = resolver(vec![
        entry(10_001, "com.example.a", 1, &[]),
        entry(10_002, "com.example.b", 2, &[]),
    ]);
    Permissions::new(
        PermissionsConfig::default(),
        Box::new(SqliteStore::open(dir).unwrap()),
        Arc::new(reg),
        surface,
        Arc::new(TokioClock::anchored(T0)),
    )
}

#[tokio::test(start_paused = true)]
async fn decisions_and_always_allow_survive_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let tool = write_tool("note_add");
    let args = serde_json::Map::new();
    {
        let surface = Arc::new(ScriptedSurface::new());
        surface
            .push_caller(ScriptStep::Answer(Some(CallerChoice::Allow)))
            .push_caller(ScriptStep::Answer(Some(CallerChoice::Deny)))
            .push_tool(ScriptStep::Answer(Some(Choice::AlwaysAllow)));
        let p = facade(dir.path(), surface);
        assert_eq!(
            p.open(Uid(10_001)).unwrap_err().code,
            AgentosCode::AuthorizationPending
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
        assert_eq!(
            p.open(Uid(10_002)).unwrap_err().code,
            AgentosCode::AuthorizationPending
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
        let a = Principal::App(p.open(Uid(10_001)).unwrap());
        let call = ToolCall {
            principal: &a,
            session: "ses_1",
            capability: &tool,
            catalog: CatalogVerdict::Visible,
            session_has_scope: false,
        };
        assert_eq!(
            p.authorize_tool_call(&call, &args).await,
            ToolVerdict::Run(Allowance::User(Choice::AlwaysAllow))
        );
    } // the whole facade and its store are dropped

    let surface = Arc::new(ScriptedSurface::new());
    let p = facade(dir.path(), surface.clone());
    assert!(p.store_error().is_none());
    let a = Principal::App(p.open(Uid(10_001)).unwrap());
    let err = p.open(Uid(10_002)).unwrap_err();
    assert_eq!(err.code, AgentosCode::Denied, "the denial persisted");
    let call = ToolCall {
        principal: &a,
        session: "ses_2",
        capability: &tool,
        catalog: CatalogVerdict::Visible,
        session_has_scope: false,
    };
    assert_eq!(
        p.authorize_tool_call(&call, &args).await,
        ToolVerdict::Run(Allowance::AlwaysAllow)
    );
    assert!(surface.shown_callers().is_empty() && surface.shown_tools().is_empty());
}
