//! `capbridge demo`: one ACP turn that uses an MCP plugin tool and an ACI capability.
//!
//! What it does, in order (every step is printed):
//!
//! 1. finds the sample binaries `notes-plugin` and `aci-provider` next to the `capbridge`
//!    executable (building them with `cargo build` when it runs from a workspace `target/`
//!    directory and they are missing);
//! 2. starts both as **separate processes** on Unix sockets in a fresh temporary directory (mode
//!    0700) and waits for their sockets;
//! 3. writes a temporary host registry (`registry.json`) describing them — with their real
//!    kernel UID (both run as the current user on a Linux host) and a stand-in
//!    signing-certificate digest (SHA-256 of each executable's path, size and mtime);
//! 4. builds the capability sources from that registry ([`crate::sources`]) and starts the fake
//!    model server on 127.0.0.1 (unless a real model is configured);
//! 5. starts the ACP runtime in-process, opens one ACP session over a line-delimited JSON-RPC
//!    pipe as a client would, sends one prompt and prints the event stream (message chunks,
//!    `tool_call`, `tool_call_update`) and the consent prompts — answered "allow once" by the
//!    demo's scripted user;
//! 6. shuts everything down: the runtime, the children (killed and reaped), the temporary
//!    directory. Ctrl-C at any point runs the same clean-up.
//!
//! With a real model configured (`CAPBRIDGE_MODEL_URL`, or `[model] url` in capbridge.toml),
//! `capbridge demo "<prompt>"` sends that prompt instead of the scripted one.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use permissions::consent::{CallerPrompt, ToolPrompt};
use permissions::{CallerChoice, Choice, ConsentSurface};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use tokio::process::{Child, Command};

use self::client::{AcpClient, Incoming};
use crate::config::Settings;

/// Sample binaries the demo starts.
const NOTES_BIN: &str = "notes-plugin";
const ACI_BIN: &str = "aci-provider";
/// Packages the demo registers them as.
pub(crate) const NOTES_PACKAGE: &str = "com.example.notes";
/// The ACI sample's package.
pub(crate) const ACI_PACKAGE: &str = "com.example.aciprovider";
/// How long a child may take to create its socket.
const SOCKET_WAIT: Duration = Duration::from_secs(20);
/// How long the whole turn may take before the demo gives up.
const TURN_TIMEOUT: Duration = Duration::from_secs(90);
/// How long a child gets to exit after SIGKILL before we stop waiting.
const REAP_WAIT: Duration = Duration::from_secs(5);
/// Longest tool result text printed per update.
const SHOWN_RESULT_CHARS: usize = 160;

/// Why the demo failed. Messages name files and steps, never prompts or results.
#[derive(Debug, thiserror::Error)]
pub(crate) enum DemoError {
    /// A sample binary is missing and could not be built.
    #[error(
        "cannot find the sample binary `{0}` next to capbridge; build it with `cargo build --workspace --bins`"
    )]
    MissingBinary(String),
    /// Building the samples failed.
    #[error("`cargo build` of the sample providers failed ({0})")]
    Build(String),
    /// An I/O step failed.
    #[error("{step}: {reason}")]
    Io {
        /// What was being done.
        step: &'static str,
        /// The OS error.
        reason: String,
    },
    /// A child exited before its socket appeared.
    #[error("{name} exited before serving its socket ({status})")]
    ChildExited {
        /// Binary name.
        name: &'static str,
        /// Its exit status.
        status: String,
    },
    /// A socket did not appear in time.
    #[error("{0} did not create its socket within {1:?}")]
    SocketTimeout(&'static str, Duration),
    /// Building the sources failed.
    #[error("building the capability sources failed: {0}")]
    Sources(String),
    /// The catalog lacks a tool the scripted prompt needs.
    #[error("the catalog has no {0}; the scripted prompt needs one")]
    MissingTool(&'static str),
    /// The model could not be set up.
    #[error("model: {0}")]
    Model(String),
    /// The runtime failed.
    #[error("runtime: {0}")]
    Runtime(String),
    /// The ACP exchange failed.
    #[error("ACP: {0}")]
    Acp(String),
    /// The turn did not end in time.
    #[error("the turn did not finish within {0:?}")]
    TurnTimeout(Duration),
    /// Ctrl-C.
    #[error("interrupted")]
    Interrupted,
}

fn io(step: &'static str) -> impl Fn(std::io::Error) -> DemoError {
    move |e| DemoError::Io {
        step,
        reason: e.to_string(),
    }
}

/// Options of `capbridge demo`.
#[derive(Debug, Clone)]
pub(crate) struct DemoOptions {
    /// The prompt (only used with a real model; the fake model gets the scripted one).
    pub(crate) prompt: Option<String>,
    /// Layered settings (model url/name/key, …).
    pub(crate) settings: Settings,
}

/// Runs the demo; prints to stdout; returns the exit code.
pub(crate) fn run(opts: DemoOptions) -> Result<ExitCode, DemoError> {
    // rsbinder's RPC carrier does blocking reads on some paths; enough workers keep the turn
    // moving while links wait.
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(8)
        .enable_all()
        .build()
        .map_err(io("starting the async runtime"))?;
    let result = rt.block_on(async move {
        let mut stage = Stage::new()?;
        let outcome = tokio::select! {
            r = drive(&mut stage, &opts) => r,
            _ = interrupted() => Err(DemoError::Interrupted),
        };
        if matches!(outcome, Err(DemoError::Interrupted)) {
            say("\n^C — cleaning up");
        }
        stage.shutdown().await;
        outcome
    });
    rt.shutdown_timeout(Duration::from_secs(2));
    result.map(|()| ExitCode::SUCCESS)
}

/// Ctrl-C or SIGTERM.
async fn interrupted() {
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = async {
            match term.as_mut() {
                Some(t) => { t.recv().await; }
                None => std::future::pending::<()>().await,
            }
        } => {}
    }
}

fn say(line: &str) {
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

/// Everything the demo started; [`Stage::shutdown`] undoes it.
struct Stage {
    dir: Option<tempfile::TempDir>,
    children: Vec<(&'static str, Child)>,
    runtime: Option<Arc<acp_runtime::Runtime>>,
    fake_model: Option<acp_runtime::model::fake::FakeModelServer>,
}

impl Stage {
    fn new() -> Result<Self, DemoError> {
        let dir = tempfile::Builder::new()
            .prefix("capbridge-demo-")
            .tempdir()
            .map_err(io("creating the temporary directory"))?;
        Ok(Self {
            dir: Some(dir),
            children: Vec::new(),
            runtime: None,
            fake_model: None,
        })
    }

    fn path(&self) -> &Path {
        match &self.dir {
            Some(d) => d.path(),
            None => Path::new("/nonexistent"),
        }
    }

    async fn shutdown(&mut self) {
        // Children first: nothing the runtime does on shutdown may keep them alive.
        if let Some(rt) = self.runtime.take()
            && tokio::time::timeout(REAP_WAIT, rt.shutdown())
                .await
                .is_err()
        {
            say("  the runtime did not stop in time; leaving it");
        }
        if let Some(fake) = self.fake_model.take() {
            let _ = tokio::time::timeout(REAP_WAIT, fake.shutdown()).await;
        }
        for (name, mut child) in self.children.drain(..) {
            let pid = child.id();
            let _ = child.start_kill();
            match tokio::time::timeout(REAP_WAIT, child.wait()).await {
                Ok(Ok(_)) => say(&format!(
                    "  stopped {name} (pid {})",
                    pid.map_or_else(|| "?".to_owned(), |p| p.to_string())
                )),
                _ => say(&format!("  could not reap {name}")),
            }
        }
        if let Some(dir) = self.dir.take() {
            let shown = dir.path().display().to_string();
            match dir.close() {
                Ok(()) => say(&format!("  removed {shown}")),
                Err(e) => say(&format!("  could not remove {shown}: {e}")),
            }
        }
    }
}

async fn drive(stage: &mut Stage, opts: &DemoOptions) -> Result<(), DemoError> {
    let real_model = opts.settings.model_url.is_some();
    say("capbridge demo — one ACP session using an MCP plugin tool and an ACI capability");
    let bins = sample_binaries().await?;
    let dir = stage.path().to_path_buf();
    set_mode(&dir, 0o700)?;
    let uid = dir_owner(&dir)?;

    // 1. The providers, as processes.
    let notes_sock = dir.join("notes.sock");
    let aci_sock = dir.join("aci.sock");
    let notes_data = dir.join("notes.json");
    let aci_data = dir.join("aci-data");
    std::fs::create_dir_all(&aci_data).map_err(io("creating the ACI data directory"))?;
    let notes_argv = vec![
        bins.notes.display().to_string(),
        "--socket".into(),
        notes_sock.display().to_string(),
        "--data".into(),
        notes_data.display().to_string(),
    ];
    // The ACI provider resolves its caller's kernel UID itself (ACI layer 2). On this host the
    // caller — this capbridge process — has the same UID as the providers, so the provider gets
    // its own registry naming that UID as capbridge (the host registry lists the UID twice, a
    // shared UID, which a resolver refuses by design, ACI-21).
    let callers = dir.join("aci-callers.json");
    std::fs::write(&callers, caller_registry_json(uid, &exe_sha256()?)?)
        .map_err(io("writing the ACI provider's caller registry"))?;
    let aci_argv = vec![
        bins.aci.display().to_string(),
        "--socket".into(),
        aci_sock.display().to_string(),
        "--data".into(),
        aci_data.display().to_string(),
        "--registry".into(),
        callers.display().to_string(),
    ];
    say("\n== providers (separate processes, Unix sockets in a private temp dir)");
    for (name, argv, sock) in [
        (NOTES_BIN, &notes_argv, &notes_sock),
        (ACI_BIN, &aci_argv, &aci_sock),
    ] {
        let child = spawn(argv, &dir)?;
        let pid = child.id().unwrap_or(0);
        stage.children.push((name, child));
        wait_for_socket(stage, name, sock).await?;
        say(&format!(
            "  {name:<13} pid {pid:<7} uid {uid:<6} socket {}",
            sock.display()
        ));
    }
    say(&format!(
        "  note: both providers run as your user (uid {uid}); on Android each app has its own \
         kernel UID. The registry records these real UIDs."
    ));

    // 2. The host registry.
    let registry = dir.join("registry.json");
    let plugin_dir = bins.plugin_dir.clone();
    let text = registry_json(
        uid,
        &bins,
        &plugin_dir,
        &notes_sock,
        &aci_sock,
        &notes_argv,
        &aci_argv,
    )?;
    std::fs::write(&registry, text).map_err(io("writing the host registry"))?;
    // The operator's enablement of the third-party plugin (MCP-50), beside the registry.
    let state = plugin_state_json(&file_sha256(&bins.notes)?)?;
    std::fs::write(dir.join("plugin-state.json"), state)
        .map_err(io("writing plugin-state.json"))?;
    say(&format!("\n== host registry {}", registry.display()));
    say(&format!(
        "  {NOTES_PACKAGE}  MCP plugin   ({})",
        plugin_dir.display()
    ));
    say(&format!("  {ACI_PACKAGE}  ACI provider"));
    say("  plugin-state.json enables the notes plugin (third-party plugins start disabled)");

    // 3. Sources and catalog.
    let sources =
        crate::sources::from_registry(&registry, crate::sources::SourceOptions { wake: false })
            .await
            .map_err(|e| DemoError::Sources(e.to_string()))?;
    for skipped in &sources.skipped {
        say(&format!(
            "  left out: {} ({})",
            skipped.package, skipped.reason
        ));
    }
    let listed = crate::sources::catalog(&sources).await;
    for (i, reason) in &listed.failures {
        say(&format!("  source {i} could not be listed: {reason}"));
    }
    let catalog = &listed.catalog;
    say(&format!(
        "\n== catalog: {} capabilities from {} sources",
        catalog.len(),
        sources.len()
    ));
    for entry in catalog.entries() {
        say(&format!("  {}", entry.name));
    }

    // 4. The model.
    let (model, model_name, prompt) = if real_model {
        let client = crate::config::real_model(&opts.settings)
            .map_err(|e| DemoError::Model(e.to_string()))?;
        let prompt = opts.prompt.clone().unwrap_or_else(|| {
            "Add a note titled 'capbridge demo' saying hello, and tell me this device's \
             hostname and OS. Use the tools."
                .to_owned()
        });
        say(&format!(
            "\n== model: {} (configured)",
            opts.settings.model_name.as_deref().unwrap_or("default")
        ));
        (
            client,
            opts.settings.model_name.clone().unwrap_or_default(),
            prompt,
        )
    } else {
        let fake = acp_runtime::model::fake::FakeModelServer::start_local()
            .await
            .map_err(|e| DemoError::Model(e.to_string()))?;
        let url = fake.url();
        say(&format!(
            "\n== model: the fake model server at {url} (offline)"
        ));
        stage.fake_model = Some(fake);
        let client = acp_runtime::model::openai::OpenAiClient::new(
            acp_runtime::model::openai::ModelConfig::new(url, "fake"),
        )
        .map_err(|e| DemoError::Model(e.to_string()))?;
        (
            Arc::new(client) as Arc<dyn acp_runtime::model::ModelClient>,
            "fake".to_owned(),
            scripted_prompt(catalog)?,
        )
    };
    if opts.prompt.is_some() && !real_model {
        say("  (a prompt argument is only used with a real model; running the scripted task)");
    }

    // 5. The runtime, in-process.
    let data_dir = dir.join("state");
    let resolver = permissions::RegistryResolver::load(&registry)
        .map_err(|e| DemoError::Runtime(e.to_string()))?;
    let mut config = acp_runtime::RuntimeConfig::new(
        data_dir,
        model,
        model_name,
        Arc::new(DemoUser),
        Arc::new(resolver),
    );
    config.sources = sources.list.clone();
    let runtime = acp_runtime::Runtime::start(config)
        .await
        .map_err(|e| DemoError::Runtime(e.to_string()))?;
    stage.runtime = Some(runtime.clone());

    // 6. One ACP session over a line-delimited JSON-RPC pipe.
    let (client_io, agent_io) = tokio::io::duplex(1 << 20);
    let (agent_r, agent_w) = tokio::io::split(agent_io);
    let serving = runtime.clone();
    tokio::spawn(async move {
        let _ = serving
            .serve_lines(agent_r, agent_w, permissions::Principal::SelfUi)
            .await;
    });
    let (client_r, client_w) = tokio::io::split(client_io);
    let mut client = AcpClient::new(client_r, client_w);

    say("\n== ACP session (JSON-RPC over a pipe; the demo is the client)");
    let init = client
        .request(
            "initialize",
            json!({"protocolVersion": 1, "clientCapabilities": {}}),
        )
        .await
        .map_err(DemoError::Acp)?;
    say(&format!(
        "  → initialize                 ← protocol v{}, agent {}",
        init.get("protocolVersion").unwrap_or(&Value::Null),
        init.pointer("/agentInfo/name")
            .and_then(Value::as_str)
            .unwrap_or("capbridge")
    ));
    let new = client
        .request(
            "session/new",
            json!({"cwd": dir.display().to_string(), "mcpServers": []}),
        )
        .await
        .map_err(DemoError::Acp)?;
    let session = new
        .get("sessionId")
        .and_then(Value::as_str)
        .ok_or_else(|| DemoError::Acp("session/new answered without a sessionId".into()))?
        .to_owned();
    say(&format!("  → session/new                ← {session}"));
    say(&format!(
        "  → session/prompt             \"{}\"",
        shorten(&prompt, 200)
    ));

    let id = client
        .send_request(
            "session/prompt",
            json!({"sessionId": session, "prompt": [{"type": "text", "text": prompt}]}),
        )
        .await
        .map_err(DemoError::Acp)?;
    let mut printer = EventPrinter::default();
    let stop = tokio::time::timeout(TURN_TIMEOUT, async {
        loop {
            match client.next().await {
                None => return Err(DemoError::Acp("the agent closed the connection".into())),
                Some(Incoming::Notification { method, params }) => {
                    if method == "session/update" {
                        printer.update(&params);
                    }
                }
                Some(Incoming::Request {
                    id: rid,
                    method,
                    params,
                }) => {
                    // The runtime may ask the client too (CNS-09); the client's "allow" is
                    // ignored by design, so the demo client answers with the first option.
                    let answer = permission_answer(&method, &params);
                    client.respond(rid, answer).await.map_err(DemoError::Acp)?;
                }
                Some(Incoming::Response { id: rid, result }) if rid == id => {
                    printer.flush();
                    return result
                        .map_err(|e| DemoError::Acp(format!("session/prompt failed: {e}")));
                }
                Some(Incoming::Response { .. }) => {}
            }
        }
    })
    .await
    .map_err(|_| DemoError::TurnTimeout(TURN_TIMEOUT))??;
    let reason = stop
        .get("stopReason")
        .and_then(Value::as_str)
        .unwrap_or("?")
        .to_owned();
    say(&format!("  ← stopReason: {reason}"));
    say(&format!(
        "\n== summary: {} tool calls, {} completed, {} failed; stop reason {reason}",
        printer.calls, printer.completed, printer.failed
    ));
    say("\n== shutting down");
    Ok(())
}

/// The scripted prompt for the fake model: one MCP tool (add a note) and one ACI capability
/// (device information) in the same turn, by their model-facing names.
fn scripted_prompt(catalog: &capability_model::Catalog) -> Result<String, DemoError> {
    use capability_model::Source;
    let mcp = catalog
        .entries()
        .iter()
        .find(|e| e.capability.id.source == Source::Mcp && e.capability.id.name.ends_with("add"))
        .ok_or(DemoError::MissingTool("MCP notes `add` tool"))?;
    let aci = catalog
        .entries()
        .iter()
        .find(|e| {
            e.capability.id.source == Source::Aci
                && (e.capability.id.name.contains("device")
                    || e.capability.id.name.contains("system"))
        })
        .ok_or(DemoError::MissingTool(
            "ACI device/system information capability",
        ))?;
    let note = json!({"title": "capbridge demo", "content": "Written by the demo through MCP over binder-channel.", "tags": ["demo"]});
    let directive = json!({"fake": {"tools": [
        {"name": mcp.name, "arguments": note},
        {"name": aci.name, "arguments": {}},
    ]}});
    Ok(format!(
        "Add a note about this demo and read the device information, both in one go. {directive}"
    ))
}

fn permission_answer(method: &str, params: &Value) -> Result<Value, (i64, String)> {
    if method != "session/request_permission" {
        return Err((-32601, "method not found".into()));
    }
    let option = params
        .get("options")
        .and_then(Value::as_array)
        .and_then(|o| {
            o.iter()
                .find(|x| x.get("kind").and_then(Value::as_str) == Some("allow_once"))
                .or_else(|| o.first())
        })
        .and_then(|o| o.get("optionId"))
        .cloned();
    say("  [client] session/request_permission → scripted client answers allow once");
    Ok(match option {
        Some(id) => json!({"outcome": {"outcome": "selected", "optionId": id}}),
        None => json!({"outcome": {"outcome": "cancelled"}}),
    })
}

/// Prints `session/update` notifications readably.
#[derive(Debug, Default)]
struct EventPrinter {
    message: String,
    calls: usize,
    completed: usize,
    failed: usize,
    titles: std::collections::BTreeMap<String, String>,
}

impl EventPrinter {
    fn flush(&mut self) {
        if !self.message.is_empty() {
            say(&format!("  agent: {}", self.message.trim_end()));
            self.message.clear();
        }
    }

    fn update(&mut self, params: &Value) {
        let Some(update) = params.get("update") else {
            return;
        };
        let kind = update
            .get("sessionUpdate")
            .and_then(Value::as_str)
            .unwrap_or("");
        match kind {
            "agent_message_chunk" => {
                if let Some(t) = update.pointer("/content/text").and_then(Value::as_str) {
                    self.message.push_str(t);
                }
            }
            "agent_thought_chunk" => {}
            "tool_call" => {
                self.flush();
                self.calls += 1;
                let id = str_at(update, "toolCallId");
                let title = str_at(update, "title");
                self.titles.insert(id.clone(), title.clone());
                say(&format!(
                    "  tool_call         {id}  {title}  [{}]",
                    str_at(update, "status")
                ));
            }
            "tool_call_update" => {
                self.flush();
                let id = str_at(update, "toolCallId");
                let status = str_at(update, "status");
                let text = update
                    .get("content")
                    .and_then(Value::as_array)
                    .map(|items| {
                        items
                            .iter()
                            .filter_map(|c| c.pointer("/content/text").and_then(Value::as_str))
                            .collect::<Vec<_>>()
                            .join(" ")
                    })
                    .unwrap_or_default();
                match status.as_str() {
                    "completed" => self.completed += 1,
                    "failed" => self.failed += 1,
                    _ => {}
                }
                let shown = if text.is_empty() {
                    String::new()
                } else {
                    format!(": {}", shorten(&text, SHOWN_RESULT_CHARS))
                };
                say(&format!("  tool_call_update  {id}  {status}{shown}"));
            }
            other => {
                self.flush();
                say(&format!("  ({other})"));
            }
        }
    }
}

fn str_at(v: &Value, key: &str) -> String {
    v.get(key).and_then(Value::as_str).unwrap_or("").to_owned()
}

/// One line, at most `max` characters, newlines shown as spaces.
fn shorten(s: &str, max: usize) -> String {
    let flat: String = s
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if flat.chars().count() <= max {
        return flat;
    }
    let mut out: String = flat.chars().take(max).collect();
    out.push('…');
    out
}

/// The demo's scripted user: prints every consent prompt and answers "allow once".
#[derive(Debug)]
struct DemoUser;

#[async_trait::async_trait]
impl ConsentSurface for DemoUser {
    async fn ask_tool(&self, prompt: &ToolPrompt) -> Option<Choice> {
        tracing::debug!(consent = %prompt.id, "demo user asked");
        let mut text = format!("  ┌ consent prompt #{}: {}\n", prompt.id, prompt.title);
        for line in &prompt.lines {
            text.push_str(&format!("  │ {line}\n"));
        }
        let offered: Vec<&str> = prompt.choices.iter().map(|c| c.label()).collect();
        text.push_str(&format!("  │ choices: {}\n", offered.join(" / ")));
        text.push_str("  └ [demo's scripted user] → allow once");
        say(&text);
        Some(Choice::AllowOnce)
    }

    async fn ask_caller(&self, prompt: &CallerPrompt) -> Option<CallerChoice> {
        say(&format!(
            "  ┌ caller authorization: {}\n  └ [demo's scripted user] → allow",
            prompt.title
        ));
        Some(CallerChoice::Allow)
    }
}

struct Binaries {
    notes: PathBuf,
    aci: PathBuf,
    plugin_dir: PathBuf,
}

/// The workspace root this binary was built from (the demo's sample files live there).
fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf)
}

async fn sample_binaries() -> Result<Binaries, DemoError> {
    let exe = std::env::current_exe().map_err(io("locating the capbridge executable"))?;
    let dir = exe
        .parent()
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
    let found = |name: &str| {
        let p = dir.join(name);
        p.is_file().then_some(p)
    };
    let root = workspace_root();
    let plugin_dir = root.join("samples/notes-plugin/agent-plugin");
    if let (Some(notes), Some(aci)) = (found(NOTES_BIN), found(ACI_BIN)) {
        return Ok(Binaries {
            notes,
            aci,
            plugin_dir,
        });
    }
    // Running from a workspace target dir (`cargo run -p capbridge -- demo`): build them.
    let profile = dir.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let in_target = dir
        .parent()
        .and_then(|p| p.file_name())
        .is_some_and(|n| n == "target");
    if !in_target || !root.join("Cargo.toml").is_file() {
        let missing = if found(NOTES_BIN).is_none() {
            NOTES_BIN
        } else {
            ACI_BIN
        };
        return Err(DemoError::MissingBinary(missing.to_owned()));
    }
    say("  building the sample providers (cargo build -p notes-plugin -p aci-provider) …");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(&root)
        .args(["build", "-q", "-p", NOTES_BIN, "-p", ACI_BIN])
        .stdin(std::process::Stdio::null());
    if profile == "release" {
        cmd.arg("--release");
    }
    let status = cmd
        .status()
        .await
        .map_err(|e| DemoError::Build(e.to_string()))?;
    if !status.success() {
        return Err(DemoError::Build(status.to_string()));
    }
    match (found(NOTES_BIN), found(ACI_BIN)) {
        (Some(notes), Some(aci)) => Ok(Binaries {
            notes,
            aci,
            plugin_dir,
        }),
        (None, _) => Err(DemoError::MissingBinary(NOTES_BIN.into())),
        (_, None) => Err(DemoError::MissingBinary(ACI_BIN.into())),
    }
}

fn spawn(argv: &[String], dir: &Path) -> Result<Child, DemoError> {
    let (program, args) = argv
        .split_first()
        .ok_or_else(|| DemoError::MissingBinary("(empty argv)".into()))?;
    Command::new(program)
        .args(args)
        .current_dir(dir)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::inherit())
        .env(
            "RUST_LOG",
            std::env::var("RUST_LOG").unwrap_or_else(|_| "warn".into()),
        )
        .kill_on_drop(true)
        .spawn()
        .map_err(io("starting a sample provider"))
}

async fn wait_for_socket(
    stage: &mut Stage,
    name: &'static str,
    sock: &Path,
) -> Result<(), DemoError> {
    let deadline = tokio::time::Instant::now() + SOCKET_WAIT;
    loop {
        if sock.exists() {
            return Ok(());
        }
        if let Some((_, child)) = stage.children.iter_mut().find(|(n, _)| *n == name)
            && let Ok(Some(status)) = child.try_wait()
        {
            return Err(DemoError::ChildExited {
                name,
                status: status.to_string(),
            });
        }
        if tokio::time::Instant::now() >= deadline {
            return Err(DemoError::SocketTimeout(name, SOCKET_WAIT));
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn set_mode(path: &Path, mode: u32) -> Result<(), DemoError> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
        .map_err(io("restricting the temporary directory"))
}

/// The current user's UID, as the kernel reports it for a directory we just created.
fn dir_owner(path: &Path) -> Result<u32, DemoError> {
    use std::os::unix::fs::MetadataExt;
    Ok(std::fs::metadata(path)
        .map_err(io("reading the temporary directory"))?
        .uid())
}

/// A stand-in signing digest: Linux hosts have no signing certificates, so the demo uses the
/// SHA-256 of the executable's path, size and modification time (cheap, and it changes when the
/// binary is rebuilt, like a re-signed app would).
fn file_sha256(path: &Path) -> Result<String, DemoError> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(path).map_err(io("reading a sample binary"))?;
    let mut h = Sha256::new();
    h.update(path.as_os_str().as_encoded_bytes());
    h.update(meta.size().to_le_bytes());
    h.update(meta.mtime().to_le_bytes());
    h.update(meta.mtime_nsec().to_le_bytes());
    Ok(hex(&h.finalize()))
}

fn exe_sha256() -> Result<String, DemoError> {
    let exe = std::env::current_exe().map_err(io("locating the capbridge executable"))?;
    file_sha256(&exe)
}

/// The ACI provider's view of its callers: this UID is capbridge (the controller package).
fn caller_registry_json(uid: u32, digest: &str) -> Result<String, DemoError> {
    let file = json!({
        "version": 1,
        "packages": [{
            "uid": uid,
            "package": aci_adapter::controller::CONTROLLER_PACKAGE,
            "signingCertSha256": digest,
            "versionCode": 1,
            "label": "capbridge",
            "permissions": [permissions::aci::PERMISSION_CALL],
        }],
    });
    serde_json::to_string_pretty(&file).map_err(|e| DemoError::Io {
        step: "writing the ACI provider's caller registry",
        reason: e.to_string(),
    })
}

/// `plugin-state.json`: the operator enables the notes plugin for its current digest.
fn plugin_state_json(digest: &str) -> Result<String, DemoError> {
    let file = json!({
        "version": 1,
        "plugins": [{"package": NOTES_PACKAGE, "signingCertSha256": digest, "enabled": true}],
    });
    serde_json::to_string_pretty(&file).map_err(|e| DemoError::Io {
        step: "writing plugin-state.json",
        reason: e.to_string(),
    })
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[allow(clippy::too_many_arguments)]
fn registry_json(
    uid: u32,
    bins: &Binaries,
    plugin_dir: &Path,
    notes_sock: &Path,
    aci_sock: &Path,
    notes_argv: &[String],
    aci_argv: &[String],
) -> Result<String, DemoError> {
    let file = json!({
        "version": 1,
        "packages": [
            {
                "uid": uid,
                "package": NOTES_PACKAGE,
                "signingCertSha256": file_sha256(&bins.notes)?,
                "versionCode": 1,
                "label": "Notes (sample MCP plugin)",
                "exports": {"mcp": {"pluginDir": plugin_dir, "socket": notes_sock}},
                "launch": notes_argv,
            },
            {
                "uid": uid,
                "package": ACI_PACKAGE,
                "signingCertSha256": file_sha256(&bins.aci)?,
                "versionCode": 1,
                "label": "ACI sample provider",
                "exports": {"aci": {"actions": ["ai.aci.core.ACTION_BIND"], "socket": aci_sock}},
                "launch": aci_argv,
            },
        ],
    });
    serde_json::to_string_pretty(&file).map_err(|e| DemoError::Io {
        step: "writing the host registry",
        reason: e.to_string(),
    })
}

/// A minimal line-delimited JSON-RPC 2.0 client: the demo's side of the ACP connection.
mod client {
    use std::collections::VecDeque;

    use serde_json::{Value, json};
    use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, Lines};

    /// One message from the agent.
    #[derive(Debug)]
    pub(super) enum Incoming {
        /// A notification (`session/update`).
        Notification { method: String, params: Value },
        /// A request to the client (`session/request_permission`).
        Request {
            id: Value,
            method: String,
            params: Value,
        },
        /// The answer to one of our requests.
        Response {
            id: i64,
            result: Result<Value, String>,
        },
    }

    pub(super) struct AcpClient<R, W> {
        lines: Lines<BufReader<R>>,
        writer: W,
        next_id: i64,
        backlog: VecDeque<Incoming>,
    }

    impl<R: AsyncRead + Unpin, W: AsyncWrite + Unpin> AcpClient<R, W> {
        pub(super) fn new(reader: R, writer: W) -> Self {
            Self {
                lines: BufReader::new(reader).lines(),
                writer,
                next_id: 1,
                backlog: VecDeque::new(),
            }
        }

        async fn write(&mut self, msg: &Value) -> Result<(), String> {
            let mut line = msg.to_string();
            line.push('\n');
            self.writer
                .write_all(line.as_bytes())
                .await
                .map_err(|e| format!("writing to the agent: {e}"))?;
            self.writer
                .flush()
                .await
                .map_err(|e| format!("writing to the agent: {e}"))
        }

        /// Sends a request and returns its id.
        pub(super) async fn send_request(
            &mut self,
            method: &str,
            params: Value,
        ) -> Result<i64, String> {
            let id = self.next_id;
            self.next_id += 1;
            self.write(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
                .await?;
            Ok(id)
        }

        /// Sends a request and waits for its answer; other messages are kept for [`next`].
        pub(super) async fn request(
            &mut self,
            method: &str,
            params: Value,
        ) -> Result<Value, String> {
            let id = self.send_request(method, params).await?;
            loop {
                match self.read().await {
                    None => return Err(format!("the agent closed the connection during {method}")),
                    Some(Incoming::Response { id: rid, result }) if rid == id => {
                        return result.map_err(|e| format!("{method} failed: {e}"));
                    }
                    Some(other) => self.backlog.push_back(other),
                }
            }
        }

        /// Answers a request from the agent.
        pub(super) async fn respond(
            &mut self,
            id: Value,
            answer: Result<Value, (i64, String)>,
        ) -> Result<(), String> {
            let msg = match answer {
                Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
                Err((code, message)) => {
                    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
                }
            };
            self.write(&msg).await
        }

        /// The next message (kept ones first).
        pub(super) async fn next(&mut self) -> Option<Incoming> {
            if let Some(m) = self.backlog.pop_front() {
                return Some(m);
            }
            self.read().await
        }

        async fn read(&mut self) -> Option<Incoming> {
            loop {
                let line = self.lines.next_line().await.ok()??;
                let Ok(msg) = serde_json::from_str::<Value>(&line) else {
                    continue;
                };
                let method = msg.get("method").and_then(Value::as_str).map(str::to_owned);
                let params = msg.get("params").cloned().unwrap_or(Value::Null);
                match (method, msg.get("id")) {
                    (Some(method), Some(id)) => {
                        return Some(Incoming::Request {
                            id: id.clone(),
                            method,
                            params,
                        });
                    }
                    (Some(method), None) => return Some(Incoming::Notification { method, params }),
                    (None, Some(id)) => {
                        let Some(id) = id.as_i64() else { continue };
                        let result = match msg.get("error") {
                            Some(e) => Err(format!(
                                "JSON-RPC error {}: {}{}",
                                e.get("code").unwrap_or(&Value::Null),
                                e.get("message").and_then(Value::as_str).unwrap_or(""),
                                e.pointer("/data/agentosCode")
                                    .and_then(Value::as_str)
                                    .map(|c| format!(" ({c})"))
                                    .unwrap_or_default()
                            )),
                            None => Ok(msg.get("result").cloned().unwrap_or(Value::Null)),
                        };
                        return Some(Incoming::Response { id, result });
                    }
                    (None, None) => continue,
                }
            }
        }
    }
}
