//! Shared test fixtures: a small provider server, a scripted fake provider, raw JSON-RPC
//! helpers. Every test file uses a subset, so unused items are allowed.
#![allow(dead_code, unreachable_pub, clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use binder_channel::{Channel, memory};
use capability_model::{Annotations, ToolOutput};
use mcp_adapter::{McpClient, McpServer};
use serde_json::{Map, Value, json};

pub const HOST_UID: u32 = 1_000;
pub const PLUGIN_UID: u32 = 10_123;

/// (host end, plugin end).
pub fn pair() -> (Channel, Channel) {
    memory::pair(HOST_UID, PLUGIN_UID).unwrap()
}

pub fn args(v: Value) -> Map<String, Value> {
    v.as_object().cloned().unwrap()
}

/// A server with `echo` (string `text` required), `fail` (returns an error), and a counter of
/// handler runs.
pub fn echo_server(runs: Arc<AtomicUsize>) -> McpServer {
    McpServer::new("notes", move |r| {
        let runs = runs.clone();
        r.tool(
            "echo",
            Some("Echo"),
            "Echo the text back.",
            json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
            Annotations { read_only_hint: Some(true), ..Annotations::default() },
            move |a, _| {
                runs.fetch_add(1, Ordering::SeqCst);
                async move { Ok(ToolOutput::text(a["text"].as_str().unwrap_or_default())) }
            },
        )?;
        Ok(())
    })
    .unwrap()
}

/// Serves `server` on a fresh pair and connects a client to it.
pub async fn connect(server: &McpServer) -> McpClient {
    let (host, plugin) = pair();
    server.serve(plugin);
    McpClient::connect(host).await.unwrap()
}

/// A raw JSON-RPC peer on one channel end.
pub struct Raw {
    pub ch: Channel,
}

impl Raw {
    pub fn send(&self, v: Value) {
        self.ch.send(v.to_string()).unwrap();
    }

    pub fn send_text(&self, t: &str) {
        self.ch.send(t.to_owned()).unwrap();
    }

    /// The next message as JSON; panics after 10 s of (virtual) silence.
    pub async fn next(&self) -> Value {
        let text = tokio::time::timeout(Duration::from_secs(10), self.ch.recv())
            .await
            .expect("no message within 10 s")
            .expect("channel closed");
        serde_json::from_str(&text).unwrap()
    }

    /// Sends a request and returns the response with that id.
    pub async fn request(&self, id: i64, method: &str, params: Value) -> Value {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let m = self.next().await;
            if m.get("id") == Some(&json!(id)) {
                return m;
            }
        }
    }

    /// Client side: initialize (offering `version`) and send `initialized`.
    pub async fn initialize(&self, version: &str) -> Value {
        let r = self
            .request(
                0,
                "initialize",
                json!({"protocolVersion": version, "capabilities": {},
                       "clientInfo": {"name": "test", "version": "0"}}),
            )
            .await;
        self.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        r
    }

    /// Provider side: answers `initialize` with `version`, then reads `initialized`.
    pub async fn accept(&self, version: &str) {
        let init = self.next().await;
        assert_eq!(init["method"], "initialize");
        assert_eq!(init["params"]["protocolVersion"], "2025-11-25");
        self.send(json!({"jsonrpc": "2.0", "id": init["id"], "result": {
            "protocolVersion": version, "capabilities": {"tools": {"listChanged": true}},
            "serverInfo": {"name": "fake", "version": "9"}}}));
        let note = self.next().await;
        assert_eq!(note["method"], "notifications/initialized");
    }

    pub fn answer(&self, id: &Value, result: Value) {
        self.send(json!({"jsonrpc": "2.0", "id": id, "result": result}));
    }
}

/// A client connected to a scripted fake provider (handshake done).
pub async fn connect_fake() -> (McpClient, Raw) {
    let (host, plugin) = pair();
    let fake = Raw { ch: plugin };
    let (client, ()) = tokio::join!(McpClient::connect(host), fake.accept("2025-11-25"));
    (client.unwrap(), fake)
}
