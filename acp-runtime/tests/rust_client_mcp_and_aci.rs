//! The Rust `agent-client-protocol` client: one turn that uses an MCP tool and an ACI
//! capability side by side, under one consent policy (issue 8 "Real clients", the core
//! scenario "a tool call across MCP and ACI with consent").
//!
//! MCP: the shared notes provider (`McpServer` + `McpSource` over `binder_channel::memory`).
//! ACI: a real `AciServer` serving `IACIService` over rsbinder RPC on a Unix socket, reached
//! through aci-adapter's controller (`BinderConnector`, peer credentials, ping, capability
//! list) and `AciSource` — the same path `capbridge serve` takes. A denying consent surface
//! keeps both providers untouched.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "common/mod.rs"]
mod common;

use std::os::unix::fs::MetadataExt;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use aci_adapter::controller::{BINDER_SERVICE_NAME, NoWaker};
use aci_adapter::provider::{AciService, CapabilitySpec, ProviderError};
use aci_adapter::{AciRequest, AciResponse, AciServer, AciSource, BinderConnector, Controller};
use aci_adapter::{ControllerConfig, source::shared};
use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    ContentBlock, InitializeRequest, NewSessionRequest, PromptRequest, SessionNotification,
    SessionUpdate, StopReason, TextContent, ToolCallStatus,
};
use agent_client_protocol::{Agent, Client, Lines};
use capability_model::CapabilitySource;
use common::{Harness, NotesBehaviour, directive, fake_model, notes_source};
use permissions::{
    AciExport, AciPermissionGate, AciPolicy, ConsentSurface, Exports, FixedSurface, Principal,
    RegistryEntry, RegistryResolver,
};
use serde_json::json;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

/// An ACI provider with one capability; counts the calls it runs.
struct Greeter(Arc<AtomicUsize>);

#[async_trait::async_trait]
impl AciService for Greeter {
    fn capabilities(&self) -> Result<Vec<CapabilitySpec>, ProviderError> {
        Ok(vec![
            CapabilitySpec::create("greet", "Greets someone by name.")
                .add_param("name", "string", true, "Who to greet")
                .add_result("greeting", "string", "The greeting"),
        ])
    }

    async fn on_call(&self, request: &AciRequest) -> Result<AciResponse, ProviderError> {
        self.0.fetch_add(1, Ordering::SeqCst);
        let name = request.get_string("name").unwrap_or_default();
        Ok(AciResponse::success().put_string("greeting", format!("hello, {name}")))
    }
}

fn entry(uid: u32, package: &str, perms: &[&str], exports: Exports) -> RegistryEntry {
    RegistryEntry {
        uid,
        package: package.to_owned(),
        signing_cert_sha256: permissions::CertDigest([7; 32]),
        version_code: 1,
        label: None,
        permissions: perms.iter().map(|p| (*p).to_owned()).collect(),
        exports,
        launch: None,
    }
}

/// Serves the greeter on a socket in `dir`; returns the ACI source the runtime gets.
fn aci_source(
    dir: &std::path::Path,
    calls: Arc<AtomicUsize>,
) -> (Arc<dyn CapabilitySource>, AciServer, rsbinder::ServerGuard) {
    let uid = std::fs::metadata(dir).unwrap().uid();
    let socket = dir.join("aci.sock");
    // The provider's view: this process (the controller) is `org.agentos.app` holding CALL.
    let callers = RegistryResolver::from_entries([entry(
        uid,
        "org.agentos.app",
        &["ai.aci.permission.CALL"],
        Exports::default(),
    )]);
    let gate = AciPermissionGate::new(Arc::new(callers), AciPolicy::allow_all());
    let server = AciServer::new(Arc::new(Greeter(calls)), gate, None).unwrap();
    let guard = server.serve_unix(&socket, BINDER_SERVICE_NAME).unwrap();
    // The host registry: the provider's export.
    let host = RegistryResolver::from_entries([entry(
        uid,
        "com.example.greeter",
        &[],
        Exports {
            mcp: None,
            aci: Some(AciExport {
                actions: vec!["ai.aci.core.ACTION_BIND".to_owned()],
                socket,
            }),
        },
    )]);
    let controller = Controller::new(
        Arc::new(BinderConnector::rpc()),
        Arc::new(NoWaker),
        ControllerConfig {
            enabled_by_default: true,
            ..ControllerConfig::default()
        },
    );
    controller.discover_from(&host);
    (shared(AciSource::new(controller)), server, guard)
}

/// Runs one prompt through the crate's client; returns the stop reason and the updates.
async fn one_turn(h: &Harness, prompt: String) -> (StopReason, Vec<SessionNotification>) {
    let (ours, theirs) = tokio::io::duplex(1 << 20);
    let (r, w) = tokio::io::split(theirs);
    let rt = Arc::clone(&h.rt);
    tokio::spawn(async move {
        let _ = rt.serve_lines(r, w, Principal::Desktop).await;
    });
    let (cr, cw) = tokio::io::split(ours);
    let outgoing = futures::sink::unfold(cw, |mut w, line: String| async move {
        w.write_all(line.as_bytes()).await?;
        w.write_all(b"\n").await?;
        w.flush().await?;
        Ok::<_, std::io::Error>(w)
    });
    let incoming = futures::stream::unfold(BufReader::new(cr).lines(), |mut lines| async move {
        match lines.next_line().await {
            Ok(Some(l)) => Some((Ok(l), lines)),
            Ok(None) => None,
            Err(e) => Some((Err(e), lines)),
        }
    });
    let seen: Arc<std::sync::Mutex<Vec<SessionNotification>>> = Arc::default();
    let sink = Arc::clone(&seen);
    let stop = tokio::time::timeout(
        std::time::Duration::from_secs(60),
        Client
            .v1()
            .name("capbridge-rust-client-test")
            .on_receive_notification(
                async move |n: SessionNotification, _cx| {
                    sink.lock().unwrap().push(n);
                    Ok(())
                },
                agent_client_protocol::on_receive_notification!(),
            )
            .connect_with(
                Lines::new(Box::pin(outgoing), Box::pin(incoming)),
                async move |cx: ConnectionTo<Agent>| {
                    cx.send_request(InitializeRequest::new(ProtocolVersion::V1))
                        .block_task()
                        .await?;
                    let s = cx
                        .send_request(NewSessionRequest::new(std::env::temp_dir()))
                        .block_task()
                        .await?;
                    let text = vec![ContentBlock::Text(TextContent::new(prompt))];
                    let r = cx
                        .send_request(PromptRequest::new(s.session_id, text))
                        .block_task()
                        .await?;
                    Ok(r.stop_reason)
                },
            ),
    )
    .await
    .expect("the turn finished in time")
    .expect("the client connection worked");
    let seen = seen.lock().unwrap().clone();
    (stop, seen)
}

/// (title, final status, last text) of every tool call, in order.
fn tool_calls(seen: &[SessionNotification]) -> Vec<(String, ToolCallStatus, String)> {
    let mut out: Vec<(String, String, ToolCallStatus, String)> = Vec::new();
    for n in seen {
        match &n.update {
            SessionUpdate::ToolCall(c) => out.push((
                c.tool_call_id.to_string(),
                c.title.clone(),
                c.status,
                String::new(),
            )),
            SessionUpdate::ToolCallUpdate(u) => {
                if let Some(slot) = out.iter_mut().find(|s| s.0 == u.tool_call_id.to_string()) {
                    if let Some(st) = u.fields.status {
                        slot.2 = st;
                    }
                    if let Some(content) = &u.fields.content {
                        slot.3 = format!("{content:?}");
                    }
                }
            }
            _ => {}
        }
    }
    out.into_iter().map(|(_, t, s, x)| (t, s, x)).collect()
}

async fn run(
    consent: Arc<dyn ConsentSurface>,
) -> (
    StopReason,
    Vec<(String, ToolCallStatus, String)>,
    usize,
    usize,
) {
    let dir = tempfile::tempdir().unwrap();
    let (_server_model, model) = fake_model().await;
    let greets = Arc::new(AtomicUsize::new(0));
    let (aci, _server, _guard) = aci_source(dir.path(), greets.clone());
    let notes = NotesBehaviour::default();
    let note_calls = notes.calls.clone();
    let mcp: Arc<dyn CapabilitySource> = notes_source(notes);
    let h = Harness::start(model, vec![mcp, aci], consent).await;
    let prompt = directive(json!({"tools": [
        {"name": "com.example.notes/note_add", "arguments": {"text": "from the rust client"}},
        {"name": "aci.com.example.greeter/greet", "arguments": {"name": "capbridge"}},
    ]}));
    let (stop, seen) = one_turn(&h, prompt).await;
    (
        stop,
        tool_calls(&seen),
        note_calls.load(Ordering::SeqCst),
        greets.load(Ordering::SeqCst),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn one_turn_uses_an_mcp_tool_and_an_aci_capability_after_consent() {
    let (stop, calls, notes, greets) = run(Arc::new(FixedSurface::allow())).await;
    assert_eq!(stop, StopReason::EndTurn);
    assert_eq!(calls.len(), 2, "{calls:?}");
    assert!(calls[0].0.ends_with("note_add"), "{calls:?}");
    assert!(calls[1].0.ends_with("greet"), "{calls:?}");
    assert!(
        calls.iter().all(|c| c.1 == ToolCallStatus::Completed),
        "{calls:?}"
    );
    assert!(calls[1].2.contains("hello, capbridge"), "{calls:?}");
    assert_eq!((notes, greets), (1, 1));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn denied_consent_reaches_neither_provider() {
    let (stop, calls, notes, greets) = run(Arc::new(FixedSurface::deny())).await;
    assert_eq!(stop, StopReason::EndTurn);
    assert_eq!(calls.len(), 2, "{calls:?}");
    for c in &calls {
        assert_eq!(c.1, ToolCallStatus::Failed, "{calls:?}");
        assert!(c.2.contains("tool_denied"), "{calls:?}");
    }
    assert_eq!((notes, greets), (0, 0), "a denied call was dispatched");
}
