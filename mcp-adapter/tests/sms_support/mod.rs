//! Hand-written Streamable HTTP MCP servers for the SMS tests: plain TCP on 127.0.0.1 and
//! HTTP/1.1 written by hand (one request per connection, JSON answers), so every failure mode
//! is a real socket doing something wrong.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

/// What the fake server does.
#[derive(Clone)]
pub(crate) struct Behaviour {
    /// Tools `tools/list` returns.
    pub(crate) tools: Vec<Value>,
    /// Answer `tools/list` with a JSON-RPC error.
    pub(crate) list_fails: bool,
    /// Accept connections but never answer anything.
    pub(crate) never_answer: bool,
    /// Never answer `tools/call` (keep the connection open).
    pub(crate) call_hangs: bool,
    /// Close the connection after reading a `tools/call`, without answering.
    pub(crate) call_dies: bool,
    /// Answer `tools/call` with a JSON-RPC error.
    pub(crate) call_rpc_error: bool,
    /// The protocol revision `initialize` answers.
    pub(crate) protocol_version: String,
    /// Hand out this `Mcp-Session-Id` on `initialize` and require it afterwards.
    pub(crate) session_id: Option<String>,
    /// `tools/call` adds a tool `extra` and answers as an SSE stream that carries
    /// `notifications/tools/list_changed` before the result.
    pub(crate) call_changes_tools: bool,
    /// Set once the tool `extra` was added.
    pub(crate) grown: Arc<std::sync::atomic::AtomicBool>,
}

impl Default for Behaviour {
    fn default() -> Self {
        Self {
            tools: vec![json!({
                "name": "echo",
                "description": "Echo the text.",
                "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}},
                "annotations": {"readOnlyHint": true}
            })],
            list_fails: false,
            never_answer: false,
            call_hangs: false,
            call_dies: false,
            call_rpc_error: false,
            protocol_version: "2025-06-18".into(),
            session_id: None,
            call_changes_tools: false,
            grown: Arc::default(),
        }
    }
}

/// One request the server saw.
#[derive(Debug, Clone)]
pub(crate) struct Seen {
    pub(crate) method: String,
    pub(crate) http_method: String,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) body: Value,
}

/// A running fake server.
pub(crate) struct FakeServer {
    pub(crate) addr: SocketAddr,
    pub(crate) seen: Arc<Mutex<Vec<Seen>>>,
    task: JoinHandle<()>,
}

impl FakeServer {
    pub(crate) async fn start(behaviour: Behaviour) -> FakeServer {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        Self::serve(listener, behaviour)
    }

    /// Serves on an existing listener (to come back on the same port).
    pub(crate) fn serve(listener: TcpListener, behaviour: Behaviour) -> FakeServer {
        let addr = listener.local_addr().unwrap();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let b = Arc::new(behaviour);
        let s = seen.clone();
        let task = tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    return;
                };
                tokio::spawn(handle(stream, b.clone(), s.clone()));
            }
        });
        FakeServer { addr, seen, task }
    }

    pub(crate) fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }

    pub(crate) fn methods(&self) -> Vec<String> {
        self.seen
            .lock()
            .unwrap()
            .iter()
            .map(|s| s.method.clone())
            .collect()
    }

    pub(crate) fn requests(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }

    /// Stops accepting (the port is closed; connections in progress keep running).
    pub(crate) fn stop(self) {
        self.task.abort();
    }
}

/// A 127.0.0.1 port nothing listens on (bound, then released).
pub(crate) async fn refused_url() -> String {
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    drop(l);
    format!("http://{addr}/mcp")
}

async fn read_request(stream: &mut TcpStream) -> Option<(String, Vec<(String, String)>, Vec<u8>)> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        if let Some(p) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break p;
        }
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_string();
    let mut lines = head.split("\r\n");
    let request_line = lines.next()?.to_string();
    let http_method = request_line.split(' ').next()?.to_string();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let len: usize = headers
        .iter()
        .find(|(k, _)| k == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = buf[head_end + 4..].to_vec();
    while body.len() < len {
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        body.extend_from_slice(&chunk[..n]);
    }
    Some((http_method, headers, body))
}

async fn respond(
    stream: &mut TcpStream,
    status: &str,
    extra: &[(&str, &str)],
    body: Option<&Value>,
) {
    let body = body.map(|b| b.to_string()).unwrap_or_default();
    let mut out = format!(
        "HTTP/1.1 {status}\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    if !body.is_empty() {
        out.push_str("Content-Type: application/json\r\n");
    }
    for (k, v) in extra {
        out.push_str(&format!("{k}: {v}\r\n"));
    }
    out.push_str("\r\n");
    out.push_str(&body);
    let _ = stream.write_all(out.as_bytes()).await;
    let _ = stream.shutdown().await;
}

async fn handle(mut stream: TcpStream, b: Arc<Behaviour>, seen: Arc<Mutex<Vec<Seen>>>) {
    let Some((http_method, headers, body)) = read_request(&mut stream).await else {
        return;
    };
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let method = body["method"].as_str().unwrap_or("").to_string();
    seen.lock().unwrap().push(Seen {
        method: method.clone(),
        http_method: http_method.clone(),
        headers: headers.clone(),
        body: body.clone(),
    });
    if b.never_answer {
        tokio::time::sleep(Duration::from_secs(3600)).await;
        return;
    }
    if http_method != "POST" {
        respond(&mut stream, "405 Method Not Allowed", &[], None).await;
        return;
    }
    if let Some(sid) = &b.session_id
        && method != "initialize"
    {
        let got = headers
            .iter()
            .find(|(k, _)| k == "mcp-session-id")
            .map(|(_, v)| v.as_str());
        if got != Some(sid.as_str()) {
            respond(&mut stream, "400 Bad Request", &[], None).await;
            return;
        }
    }
    let id = body.get("id").cloned();
    let Some(id) = id else {
        // A notification.
        respond(&mut stream, "202 Accepted", &[], None).await;
        return;
    };
    let result = match method.as_str() {
        "initialize" => json!({
            "protocolVersion": b.protocol_version,
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "fake", "version": "1.0.0"}
        }),
        "tools/list" => {
            if b.list_fails {
                let e = json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32603, "message": "broken"}});
                respond(&mut stream, "200 OK", &[], Some(&e)).await;
                return;
            }
            let mut tools = b.tools.clone();
            if b.grown.load(std::sync::atomic::Ordering::SeqCst) {
                tools.push(json!({"name": "extra", "inputSchema": {"type": "object"}}));
            }
            json!({"tools": tools})
        }
        "tools/call" => {
            if b.call_hangs {
                tokio::time::sleep(Duration::from_secs(3600)).await;
                return;
            }
            if b.call_dies {
                drop(stream);
                return;
            }
            if b.call_changes_tools {
                b.grown.store(true, std::sync::atomic::Ordering::SeqCst);
                let note = json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"});
                let answer = json!({"jsonrpc": "2.0", "id": id,
                    "result": {"content": [{"type": "text", "text": "grown"}]}});
                let out = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\nevent: message\ndata: {note}\n\nevent: message\ndata: {answer}\n\n"
                );
                let _ = stream.write_all(out.as_bytes()).await;
                let _ = stream.shutdown().await;
                return;
            }
            if b.call_rpc_error {
                let e = json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32602, "message": "no such\ntool"}});
                respond(&mut stream, "200 OK", &[], Some(&e)).await;
                return;
            }
            let args = &body["params"]["arguments"];
            json!({"content": [{"type": "text", "text": format!("echo: {}", args["text"].as_str().unwrap_or(""))}]})
        }
        "ping" => json!({}),
        _ => {
            let e = json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "unknown"}});
            respond(&mut stream, "200 OK", &[], Some(&e)).await;
            return;
        }
    };
    let answer = json!({"jsonrpc": "2.0", "id": id, "result": result});
    let sid_header;
    let mut extra: Vec<(&str, &str)> = Vec::new();
    if method == "initialize"
        && let Some(sid) = &b.session_id
    {
        sid_header = sid.clone();
        extra.push(("Mcp-Session-Id", sid_header.as_str()));
    }
    respond(&mut stream, "200 OK", &extra, Some(&answer)).await;
}

/// Tools named `t0`, `t1`, ….
pub(crate) fn many_tools(n: usize) -> Vec<Value> {
    (0..n)
        .map(|i| json!({"name": format!("t{i}"), "inputSchema": {"type": "object"}}))
        .collect()
}
