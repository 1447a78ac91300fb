//! Per-session MCP servers through ACP (SMS-01..SMS-03, SMS-07, SMS-09, CAT-39): `mcpServers`
//! of type http on `session/new` become `ses__…` tools of that session only; a bad batch is
//! `invalid_params` and creates no session; an unreachable server does not fail the session;
//! session tools always ask for consent and ignore toolScope. The server is mcp-adapter's
//! hand-written Streamable HTTP test server on 127.0.0.1 (shared through `#[path]`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
#[path = "../../mcp-adapter/tests/sms_support/mod.rs"]
#[allow(unreachable_pub)]
mod sms_support;

use std::sync::Arc;

use common::*;
use mcp_adapter::session_http::SessionUrlPolicy;
use permissions::consent::ScriptStep;
use permissions::{Choice, Principal, ScriptedSurface};
use serde_json::json;
use sms_support::{Behaviour, FakeServer};

async fn harness(consent: Arc<ScriptedSurface>) -> (Harness, acp_runtime::model::FakeModelServer) {
    let (server, model) = fake_model().await;
    let dir = Arc::new(tempfile::tempdir().unwrap());
    let h = Harness::start_with(
        dir,
        model,
        vec![notes_source(NotesBehaviour::default())],
        consent,
        |cfg| {
            cfg.session_mcp_policy = SessionUrlPolicy::loopback_for_tests();
        },
    )
    .await;
    (h, server)
}

#[tokio::test]
async fn sms01_session_server_tools_run_with_consent_and_ignore_tool_scope() {
    let mcp = FakeServer::start(Behaviour::default()).await;
    let consent = Arc::new(ScriptedSurface::new());
    consent.push_tool(ScriptStep::Answer(Some(Choice::AllowOnce)));
    let (h, model) = harness(consent.clone()).await;
    let mut c = h.connect(Principal::Desktop);
    let init = c.initialize().await;
    assert_eq!(
        init["result"]["agentCapabilities"]["mcpCapabilities"]["http"],
        true
    );
    let url = format!("http://{}/mcp", mcp.addr);
    let (_, r) = c
        .request(
            "session/new",
            json!({"cwd":"/","mcpServers":[{"type":"http","name":"s","url": url,"headers":[]}],
                   "_meta":{"org.agentos":{"toolScope":[]}}}),
        )
        .await;
    let s = r["result"]["sessionId"]
        .as_str()
        .unwrap_or_else(|| panic!("{r}"))
        .to_owned();
    let d = directive(json!({"tools":[{"name":"s/echo","arguments":{"text":"hi"}}]}));
    let (notes, r) = c.prompt(&s, &d).await;
    assert_eq!(r["result"]["stopReason"], "end_turn", "{r}");
    let ups = updates(&notes);
    assert_eq!(ups[0]["title"], "ses__s__echo");
    assert_eq!(
        kinds(&ups),
        [
            "tool_call:pending",
            "tool_call_update:in_progress",
            "tool_call_update:completed",
            "agent_message_chunk"
        ]
    );
    // Offered despite the empty toolScope (CAT-39); plugin tools are not.
    let offered: Vec<String> = model.requests()[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(offered, ["ses__s__echo"]);
    // A READ-annotated session tool is still asked about (SMS-09).
    assert_eq!(consent.shown_tools().len(), 1);

    // Another session does not see it (SMS-01).
    let other = c.new_session(None).await;
    let (notes, _) = c
        .prompt(
            &other,
            &directive(json!({"tools":[{"name":"ses__s__echo"}]})),
        )
        .await;
    let text = updates(&notes)[1]["content"][0]["content"]["text"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(text.starts_with("[agentos:tool_not_in_catalog] "), "{text}");
    // The URL never reaches the event log (SMS-05).
    let db = std::fs::read(h.rt.data_dir().join("runtime.db")).unwrap();
    let needle = mcp.addr.to_string();
    assert!(!db.windows(needle.len()).any(|w| w == needle.as_bytes()));
}

#[tokio::test]
async fn sms02_a_bad_batch_is_invalid_params_and_creates_no_session() {
    let (h, _model) = harness(Arc::new(ScriptedSurface::new())).await;
    let mut c = h.connect(Principal::Desktop);
    let secret = "https://user:pw@example.com/mcp";
    for servers in [
        json!([{"type":"http","name":"a","url": secret,"headers":[]}]),
        json!([{"type":"http","name":"bad name!","url":"https://example.com/mcp","headers":[]}]),
        json!([{"type":"stdio","name":"x","command":"/bin/sh","args":[],"env":[]}]),
    ] {
        let (_, r) = c
            .request("session/new", json!({"cwd":"/","mcpServers": servers}))
            .await;
        assert_eq!(r["error"]["code"], -32602, "{r}");
        assert!(!r.to_string().contains("pw@"), "no echo: {r}");
    }
    let (_, l) = c.request("session/list", json!({})).await;
    assert!(l["result"]["sessions"].as_array().unwrap().is_empty());
}

#[tokio::test]
async fn sms07_an_unreachable_server_does_not_fail_the_session() {
    // Bind and drop: nothing listens on this port any more.
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let (h, _model) = harness(Arc::new(ScriptedSurface::new())).await;
    let mut c = h.connect(Principal::Desktop);
    let (_, r) = c
        .request(
            "session/new",
            json!({"cwd":"/","mcpServers":[{"type":"http","name":"gone","url": format!("http://127.0.0.1:{port}/mcp"),"headers":[]}]}),
        )
        .await;
    let s = r["result"]["sessionId"]
        .as_str()
        .unwrap_or_else(|| panic!("{r}"))
        .to_owned();
    let (_, r) = c.prompt(&s, "hello").await;
    assert_eq!(r["result"]["stopReason"], "end_turn");
}
