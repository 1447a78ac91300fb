//! Shared test support: a runtime on a temp dir driven over a duplex pipe with raw JSON-RPC
//! lines, a real MCP notes provider (mcp-adapter `McpServer` + `McpSource` over
//! `binder_channel::memory::pair`), and a scripted `ModelClient` for loop-level tests.
#![allow(dead_code, unreachable_pub, clippy::unwrap_used, clippy::expect_used)]

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use acp_runtime::model::{
    ChatRequest, ModelClient, ModelError, ModelEvent, ModelStream, ToolCallRequest,
};
use acp_runtime::{Runtime, RuntimeConfig};
use async_trait::async_trait;
use capability_model::{Annotations, CancelToken, CapabilitySource, ToolOutput};
use mcp_adapter::{Connector, McpServer, McpSource};
use permissions::{
    CertDigest, ConsentSurface, FixedSurface, Principal, RegistryEntry, RegistryResolver,
};
use serde_json::{Value, json};
use tokio::io::{
    AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines, ReadHalf, WriteHalf,
};

pub const APP_UID: u32 = 10_123;
pub const OTHER_APP_UID: u32 = 10_456;

pub fn registry() -> Arc<RegistryResolver> {
    let entry = |uid: u32, package: &str, digest: char| RegistryEntry {
        uid,
        package: package.into(),
        signing_cert_sha256: CertDigest::parse(&digest.to_string().repeat(64)).unwrap(),
        version_code: 1,
        label: Some(package.into()),
        permissions: Default::default(),
        exports: Default::default(),
        launch: None,
    };
    Arc::new(RegistryResolver::from_entries([
        entry(APP_UID, "com.example.caller", 'a'),
        entry(OTHER_APP_UID, "com.example.other", 'b'),
    ]))
}

pub fn app_principal(uid: u32) -> Principal {
    use permissions::IdentityResolver;
    Principal::App(registry().resolve(permissions::Uid(uid)).unwrap())
}

/// How the notes tool behaves.
#[derive(Clone, Default)]
pub struct NotesBehaviour {
    /// Calls seen by the provider.
    pub calls: Arc<AtomicUsize>,
    /// Result text of `note_read` (default "note one").
    pub read_text: Option<String>,
    /// `note_slow` waits this long (cancel ends it earlier).
    pub slow: Option<Duration>,
}

/// A real MCP provider "com.example.notes"/"notes" with `note_add`, `note_read`, `note_slow`,
/// reached through a fresh `memory::pair` on every connect.
pub fn notes_source(b: NotesBehaviour) -> Arc<McpSource> {
    notes_source_with_death(b, Arc::new(Mutex::new(None)))
}

/// Like [`notes_source`]; the death switch of the latest connection is stored in `death`.
pub fn notes_source_with_death(
    b: NotesBehaviour,
    death: Arc<Mutex<Option<binder_channel::memory::DeathSwitch>>>,
) -> Arc<McpSource> {
    let server = Arc::new(
        McpServer::new("notes", move |r| {
            let calls = b.calls.clone();
            r.tool(
                "note_add",
                None,
                "Add a note.",
                json!({"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}),
                Annotations::default(),
                move |args, _| {
                    calls.fetch_add(1, Ordering::SeqCst);
                    let text = args.get("text").and_then(Value::as_str).unwrap_or("").to_owned();
                    async move { Ok(ToolOutput::text(format!("added: {text}"))) }
                },
            )?;
            let calls = b.calls.clone();
            let read_text = b.read_text.clone().unwrap_or_else(|| "note one".into());
            r.tool(
                "note_read",
                None,
                "Read the notes.",
                json!({"type":"object"}),
                Annotations { read_only_hint: Some(true), ..Annotations::default() },
                move |_, _| {
                    calls.fetch_add(1, Ordering::SeqCst);
                    let t = read_text.clone();
                    async move { Ok(ToolOutput::text(t)) }
                },
            )?;
            let calls = b.calls.clone();
            let slow = b.slow.unwrap_or(Duration::from_secs(30));
            r.tool(
                "note_slow",
                None,
                "A slow tool.",
                json!({"type":"object"}),
                Annotations::default(),
                move |_, cancel: CancelToken| {
                    calls.fetch_add(1, Ordering::SeqCst);
                    async move {
                        tokio::select! {
                            _ = tokio::time::sleep(slow) => {}
                            _ = cancel.cancelled() => {}
                        }
                        Ok(ToolOutput::text("slow done"))
                    }
                },
            )?;
            Ok(())
        })
        .unwrap(),
    );
    let connector: Connector = Arc::new(move || {
        let server = Arc::clone(&server);
        let death = Arc::clone(&death);
        Box::pin(async move {
            let (host, plugin, switch) = binder_channel::memory::pair_with_death(1_000, 10_999)
                .map_err(|_| "pair".to_owned())?;
            *death.lock().unwrap() = Some(switch);
            server.serve(plugin);
            Ok(host)
        })
    });
    Arc::new(McpSource::new("com.example.notes", "notes", connector))
}

pub const ADD: &str = "mcp__com_example_notes__notes__note_add";
pub const READ: &str = "mcp__com_example_notes__notes__note_read";
pub const SLOW: &str = "mcp__com_example_notes__notes__note_slow";

/// One scripted model reply.
#[derive(Clone)]
pub enum Reply {
    /// These events, in order.
    Events(Vec<Result<ModelEvent, ModelError>>),
    /// Some text, then nothing until cancelled.
    Hang(String),
    /// `stream()` itself fails.
    Fail(ModelError),
}

/// A `ModelClient` test double replaying scripted replies (loop-level tests only).
#[derive(Debug, Default)]
pub struct ScriptModel {
    replies: Mutex<VecDeque<ReplyBox>>,
    pub requests: Mutex<Vec<ChatRequest>>,
}

#[derive(Clone)]
pub struct ReplyBox(pub Reply);
impl std::fmt::Debug for ReplyBox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Reply")
    }
}

impl ScriptModel {
    pub fn new(replies: Vec<Reply>) -> Arc<Self> {
        Arc::new(Self {
            replies: Mutex::new(replies.into_iter().map(ReplyBox).collect()),
            requests: Mutex::new(Vec::new()),
        })
    }
}

pub fn text_reply(t: &str) -> Reply {
    Reply::Events(vec![
        Ok(ModelEvent::TextDelta(t.into())),
        Ok(ModelEvent::Finished(acp_runtime::model::FinishReason::Stop)),
    ])
}

pub fn tool_reply(name: &str, args: &str) -> Reply {
    Reply::Events(vec![
        Ok(ModelEvent::ToolCall(ToolCallRequest {
            id: "m1".into(),
            name: name.into(),
            arguments: args.into(),
        })),
        Ok(ModelEvent::Finished(
            acp_runtime::model::FinishReason::ToolCalls,
        )),
    ])
}

#[async_trait]
impl ModelClient for ScriptModel {
    async fn stream(
        &self,
        request: ChatRequest,
        cancel: CancelToken,
    ) -> Result<ModelStream, ModelError> {
        self.requests.lock().unwrap().push(request);
        let reply = self
            .replies
            .lock()
            .unwrap()
            .pop_front()
            .map(|r| r.0)
            .unwrap_or_else(|| text_reply("(no more script)"));
        match reply {
            Reply::Fail(e) => Err(e),
            Reply::Events(ev) => Ok(Box::pin(futures::stream::iter(ev))),
            Reply::Hang(t) => {
                let head = futures::stream::iter(vec![Ok(ModelEvent::TextDelta(t))]);
                let tail = futures::stream::once(async move {
                    cancel.cancelled().await;
                    Err(ModelError::Cancelled)
                });
                Ok(Box::pin(futures::StreamExt::chain(head, tail)))
            }
        }
    }
}

pub struct Harness {
    pub rt: Arc<Runtime>,
    pub dir: Arc<tempfile::TempDir>,
}

/// F's fake model server (a real HTTP server on 127.0.0.1) and an `OpenAiClient` for it.
pub async fn fake_model() -> (acp_runtime::model::FakeModelServer, Arc<dyn ModelClient>) {
    let server = acp_runtime::model::FakeModelServer::start_local()
        .await
        .unwrap();
    let client = acp_runtime::model::OpenAiClient::new(acp_runtime::model::ModelConfig::new(
        server.url(),
        "fake-model",
    ))
    .unwrap();
    (server, Arc::new(client))
}

/// `{"fake": directive}` as prompt text.
pub fn directive(d: Value) -> String {
    json!({ "fake": d }).to_string()
}

impl Harness {
    pub async fn start(
        model: Arc<dyn ModelClient>,
        sources: Vec<Arc<dyn CapabilitySource>>,
        consent: Arc<dyn ConsentSurface>,
    ) -> Harness {
        let dir = Arc::new(tempfile::tempdir().unwrap());
        Self::start_in(dir, model, sources, consent).await
    }

    pub async fn start_in(
        dir: Arc<tempfile::TempDir>,
        model: Arc<dyn ModelClient>,
        sources: Vec<Arc<dyn CapabilitySource>>,
        consent: Arc<dyn ConsentSurface>,
    ) -> Harness {
        Self::start_with(dir, model, sources, consent, |_| {}).await
    }

    /// Like [`Harness::start_in`], with a last say on the configuration.
    pub async fn start_with(
        dir: Arc<tempfile::TempDir>,
        model: Arc<dyn ModelClient>,
        sources: Vec<Arc<dyn CapabilitySource>>,
        consent: Arc<dyn ConsentSurface>,
        tweak: impl FnOnce(&mut RuntimeConfig),
    ) -> Harness {
        let mut cfg = RuntimeConfig::new(
            dir.path().join("state"),
            model,
            "fake-model",
            consent,
            registry(),
        );
        cfg.sources = sources;
        tweak(&mut cfg);
        let rt = Runtime::start(cfg).await.unwrap();
        Harness { rt, dir }
    }

    pub async fn simple(model: Arc<dyn ModelClient>) -> Harness {
        Self::start(model, vec![], Arc::new(FixedSurface::allow())).await
    }

    pub fn connect(&self, caller: Principal) -> Client {
        let (ours, theirs) = tokio::io::duplex(1 << 20);
        let (r, w) = tokio::io::split(theirs);
        let rt = Arc::clone(&self.rt);
        let serve = tokio::spawn(async move {
            let _ = rt.serve_lines(r, w, caller).await;
        });
        let (cr, cw) = tokio::io::split(ours);
        Client {
            w: cw,
            lines: BufReader::new(cr).lines(),
            next_id: 1,
            serve,
            raw: Vec::new(),
        }
    }
}

pub struct Client {
    pub w: WriteHalf<DuplexStream>,
    pub lines: Lines<BufReader<ReadHalf<DuplexStream>>>,
    next_id: u64,
    pub serve: tokio::task::JoinHandle<()>,
    /// Every raw line received.
    pub raw: Vec<String>,
}

impl Client {
    pub async fn send_raw(&mut self, line: &str) {
        self.w.write_all(line.as_bytes()).await.unwrap();
        self.w.write_all(b"\n").await.unwrap();
    }

    pub async fn next(&mut self) -> Value {
        let line = tokio::time::timeout(Duration::from_secs(20), self.lines.next_line())
            .await
            .expect("timed out waiting for a line")
            .unwrap()
            .expect("connection closed");
        self.raw.push(line.clone());
        serde_json::from_str(&line).unwrap()
    }

    pub async fn start_request(&mut self, method: &str, params: Value) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        let msg = json!({"jsonrpc":"2.0","id":id,"method":method,"params":params});
        self.send_raw(&msg.to_string()).await;
        id
    }

    /// Sends a request; returns (notifications before the response, response).
    pub async fn request(&mut self, method: &str, params: Value) -> (Vec<Value>, Value) {
        let id = self.start_request(method, params).await;
        self.wait_response(id).await
    }

    pub async fn wait_response(&mut self, id: u64) -> (Vec<Value>, Value) {
        let mut notes = Vec::new();
        loop {
            let v = self.next().await;
            if v.get("id") == Some(&json!(id)) {
                return (notes, v);
            }
            notes.push(v);
        }
    }

    pub async fn notify(&mut self, method: &str, params: Value) {
        let msg = json!({"jsonrpc":"2.0","method":method,"params":params});
        self.send_raw(&msg.to_string()).await;
    }

    pub async fn initialize(&mut self) -> Value {
        self.request(
            "initialize",
            json!({"protocolVersion":1,"clientCapabilities":{}}),
        )
        .await
        .1
    }

    pub async fn new_session(&mut self, meta: Option<Value>) -> String {
        let mut p = json!({"cwd":"/","mcpServers":[]});
        if let Some(m) = meta {
            p["_meta"] = json!({"org.agentos": m});
        }
        let (_, r) = self.request("session/new", p).await;
        r["result"]["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("{r}"))
            .to_owned()
    }

    pub async fn prompt(&mut self, session: &str, text: &str) -> (Vec<Value>, Value) {
        self.request(
            "session/prompt",
            json!({"sessionId": session, "prompt":[{"type":"text","text":text}]}),
        )
        .await
    }
}

/// The `update` objects of `session/update` notifications.
pub fn updates(notes: &[Value]) -> Vec<Value> {
    notes
        .iter()
        .filter(|n| n["method"] == "session/update")
        .map(|n| n["params"]["update"].clone())
        .collect()
}

/// `sessionUpdate` kinds with the tool status, e.g. `tool_call:pending`.
pub fn kinds(updates: &[Value]) -> Vec<String> {
    updates
        .iter()
        .map(|u| {
            let k = u["sessionUpdate"].as_str().unwrap_or("?").to_owned();
            match u.get("status").and_then(Value::as_str) {
                Some(s) => format!("{k}:{s}"),
                None => k,
            }
        })
        .collect()
}

pub fn agent_text(updates: &[Value]) -> String {
    updates
        .iter()
        .filter(|u| u["sessionUpdate"] == "agent_message_chunk")
        .map(|u| u["content"]["text"].as_str().unwrap_or("").to_owned())
        .collect()
}
