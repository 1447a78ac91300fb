//! [`FakeModelServer`]: a real HTTP/1.1 server on loopback speaking the OpenAI-compatible Chat
//! Completions API (streamed SSE and plain JSON), whose replies follow directives written in
//! the last user message — `{"fake":{…}}`. Every directive and its exact reply is documented
//! in `docs/fake-model.md`.
//!
//! ```no_run
//! # async fn demo() -> std::io::Result<()> {
//! use acp_runtime::model::fake::FakeModelServer;
//! let server = FakeModelServer::start("127.0.0.1:0".parse().unwrap()).await?;
//! println!("model URL: {}", server.url()); // http://127.0.0.1:PORT/v1
//! server.shutdown().await;
//! # Ok(()) }
//! ```

mod directive;
mod http;

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use capability_model::CancelToken;
use serde_json::{Value, json};
use tokio::io::AsyncReadExt;
use tokio::net::{TcpListener, TcpStream};
use tokio::task::{JoinHandle, JoinSet};

use directive::{Plan, PlannedCall};
use http::{ReadError, Request};

/// How many request bodies [`FakeModelServer::requests`] keeps.
const KEEP_REQUESTS: usize = 64;
/// Size of the argument fragments tool calls are streamed in.
const ARGUMENT_FRAGMENT: usize = 7;

struct Shared {
    key: Option<String>,
    next_call: AtomicU64,
    requests: Mutex<VecDeque<Value>>,
}

/// A running fake model server. Dropping it stops it too (without waiting).
pub struct FakeModelServer {
    addr: SocketAddr,
    stop: CancelToken,
    task: Option<JoinHandle<()>>,
    shared: Arc<Shared>,
}

impl std::fmt::Debug for FakeModelServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FakeModelServer")
            .field("addr", &self.addr)
            .field("key", &self.shared.key.as_ref().map(|_| "<redacted>"))
            .finish()
    }
}

impl FakeModelServer {
    /// Binds `addr` (use `127.0.0.1:0` for any free port) and serves until
    /// [`shutdown`](Self::shutdown). No key is checked.
    pub async fn start(addr: SocketAddr) -> std::io::Result<Self> {
        Self::start_inner(addr, None).await
    }

    /// Like [`start`](Self::start), but every request must carry `Authorization: Bearer
    /// <key>`; others get 401.
    pub async fn start_with_key(addr: SocketAddr, key: impl Into<String>) -> std::io::Result<Self> {
        Self::start_inner(addr, Some(key.into())).await
    }

    /// [`start`](Self::start) on `127.0.0.1` and a free port.
    pub async fn start_local() -> std::io::Result<Self> {
        Self::start(SocketAddr::from(([127, 0, 0, 1], 0))).await
    }

    async fn start_inner(addr: SocketAddr, key: Option<String>) -> std::io::Result<Self> {
        let listener = TcpListener::bind(addr).await?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared {
            key,
            next_call: AtomicU64::new(1),
            requests: Mutex::new(VecDeque::new()),
        });
        let stop = CancelToken::new();
        let task = tokio::spawn(accept_loop(listener, shared.clone(), stop.clone()));
        tracing::info!(%addr, "fake model server listening");
        Ok(Self {
            addr,
            stop,
            task: Some(task),
            shared,
        })
    }

    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The API base URL to configure a client with: `http://<addr>/v1`.
    pub fn url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// The last (up to 64) chat request bodies received, oldest first.
    pub fn requests(&self) -> Vec<Value> {
        self.shared
            .requests
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .cloned()
            .collect()
    }

    /// Stops accepting, closes every open connection and waits for the server task.
    pub async fn shutdown(mut self) {
        self.stop.cancel();
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }

    /// A token that fires when [`shutdown`](Self::shutdown) is called or the server is dropped
    /// (await `stop_token().cancelled()` to serve until then).
    pub fn stop_token(&self) -> CancelToken {
        self.stop.clone()
    }
}

impl Drop for FakeModelServer {
    fn drop(&mut self) {
        self.stop.cancel();
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }
}

async fn accept_loop(listener: TcpListener, shared: Arc<Shared>, stop: CancelToken) {
    let mut connections = JoinSet::new();
    loop {
        let accepted = tokio::select! {
            () = stop.cancelled() => break,
            a = listener.accept() => a,
            Some(_) = connections.join_next(), if !connections.is_empty() => continue,
        };
        match accepted {
            Ok((stream, peer)) => {
                let shared = shared.clone();
                let stop = stop.clone();
                connections.spawn(async move {
                    tokio::select! {
                        () = stop.cancelled() => {}
                        () = serve_connection(stream, peer, &shared) => {}
                    }
                });
            }
            Err(e) => {
                tracing::debug!(error = %e, "fake model server: accept failed");
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        }
    }
    connections.shutdown().await;
}

async fn serve_connection(mut stream: TcpStream, peer: SocketAddr, shared: &Shared) {
    let _ = stream.set_nodelay(true);
    let request = match http::read_request(&mut stream).await {
        Ok(r) => r,
        Err(ReadError::Closed) => return,
        Err(ReadError::Malformed) => {
            let _ = send_error(
                &mut stream,
                400,
                "invalid_request_error",
                "Malformed HTTP request.",
                None,
            )
            .await;
            return;
        }
        Err(ReadError::TooLarge) => {
            let _ = send_error(
                &mut stream,
                413,
                "request_too_large",
                "Request too large.",
                None,
            )
            .await;
            return;
        }
        Err(ReadError::LengthRequired) => {
            let _ = send_error(
                &mut stream,
                411,
                "invalid_request_error",
                "Content-Length required.",
                None,
            )
            .await;
            return;
        }
    };
    tracing::debug!(%peer, method = %request.method, path = %request.path, body_bytes = request.body.len(), "fake model request");
    if let Err(e) = route(&mut stream, &request, shared).await {
        tracing::debug!(%peer, error = %e, "fake model: connection ended early");
    }
}

async fn route(stream: &mut TcpStream, request: &Request, shared: &Shared) -> std::io::Result<()> {
    if let Some(key) = &shared.key {
        let expected = format!("Bearer {key}");
        if request.header("authorization") != Some(expected.as_str()) {
            return send_error(
                stream,
                401,
                "invalid_api_key",
                "Incorrect API key provided.",
                None,
            )
            .await;
        }
    }
    let path = request.path.trim_end_matches('/');
    match (request.method.as_str(), path) {
        ("GET", "/v1/models" | "/models") => {
            let body = json!({"object":"list","data":[{"id":"fake","object":"model","owned_by":"capbridge"}]});
            http::write_full(
                stream,
                200,
                "application/json",
                &[],
                body.to_string().as_bytes(),
            )
            .await
        }
        ("POST", p) if p.ends_with("/chat/completions") => chat(stream, request, shared).await,
        (_, p) if p.ends_with("/chat/completions") => {
            send_error(stream, 405, "invalid_request_error", "Use POST.", None).await
        }
        _ => send_error(stream, 404, "invalid_request_error", "Unknown path.", None).await,
    }
}

async fn chat(stream: &mut TcpStream, request: &Request, shared: &Shared) -> std::io::Result<()> {
    let body: Value = match serde_json::from_slice(&request.body) {
        Ok(v @ Value::Object(_)) => v,
        _ => {
            return send_error(
                stream,
                400,
                "invalid_request_error",
                "The body is not a JSON object.",
                None,
            )
            .await;
        }
    };
    {
        let mut kept = shared
            .requests
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if kept.len() == KEEP_REQUESTS {
            kept.pop_front();
        }
        kept.push_back(body.clone());
    }
    let streamed = body.get("stream").and_then(Value::as_bool).unwrap_or(false);
    let model = body
        .get("model")
        .and_then(Value::as_str)
        .unwrap_or("fake")
        .to_owned();
    match directive::plan(&body) {
        Plan::Fail {
            status,
            retry_after,
            kind,
            message,
        } => send_error(stream, status, kind, message, retry_after).await,
        Plan::BadDirective(reason) => {
            let body = error_body("invalid_request_error", &reason);
            http::write_full(
                stream,
                400,
                "application/json",
                &[],
                body.to_string().as_bytes(),
            )
            .await
        }
        Plan::Drop => Ok(()),
        Plan::Garbage => {
            let content_type = if streamed {
                "text/event-stream"
            } else {
                "application/json"
            };
            http::write_full(
                stream,
                200,
                content_type,
                &[],
                b"data: <this is not json>\n\n",
            )
            .await
        }
        Plan::Interrupt { chunks } => {
            if streamed {
                http::start_sse(stream).await?;
                for c in &chunks {
                    http::write_event(stream, &chunk_json(&model, json!({"content": c}), None))
                        .await?;
                }
            } else {
                let head = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 4096\r\nConnection: close\r\n\r\n{\"id\":";
                tokio::io::AsyncWriteExt::write_all(stream, head.as_bytes()).await?;
            }
            Ok(()) // dropping the stream cuts the body
        }
        Plan::Reply {
            thought,
            chunks,
            calls,
            finish,
            hold,
            delay_ms,
        } => {
            let calls: Vec<(String, PlannedCall)> = calls
                .into_iter()
                .map(|c| {
                    let id = c.id.clone().unwrap_or_else(|| {
                        format!(
                            "call_fake_{}",
                            shared.next_call.fetch_add(1, Ordering::Relaxed)
                        )
                    });
                    (id, c)
                })
                .collect();
            let delay = Duration::from_millis(delay_ms);
            if streamed {
                stream_reply(
                    stream,
                    &model,
                    thought.as_deref(),
                    &chunks,
                    &calls,
                    finish,
                    delay,
                )
                .await?;
            } else if !hold {
                let body = completion_json(&model, thought.as_deref(), &chunks, &calls, finish);
                http::write_full(
                    stream,
                    200,
                    "application/json",
                    &[],
                    body.to_string().as_bytes(),
                )
                .await?;
            }
            if hold {
                hold_until_gone(stream).await;
            }
            Ok(())
        }
    }
}

async fn stream_reply(
    stream: &mut TcpStream,
    model: &str,
    thought: Option<&str>,
    chunks: &[String],
    calls: &[(String, PlannedCall)],
    finish: Option<&str>,
    delay: Duration,
) -> std::io::Result<()> {
    http::start_sse(stream).await?;
    http::write_event(
        stream,
        &chunk_json(model, json!({"role": "assistant", "content": ""}), None),
    )
    .await?;
    if let Some(t) = thought {
        http::write_event(
            stream,
            &chunk_json(model, json!({"reasoning_content": t}), None),
        )
        .await?;
    }
    for c in chunks {
        if !delay.is_zero() {
            tokio::time::sleep(delay).await;
        }
        http::write_event(stream, &chunk_json(model, json!({"content": c}), None)).await?;
    }
    for (index, (id, call)) in calls.iter().enumerate() {
        let first = json!({"tool_calls": [{
            "index": index, "id": id, "type": "function",
            "function": {"name": call.name, "arguments": ""}
        }]});
        http::write_event(stream, &chunk_json(model, first, None)).await?;
        for piece in char_pieces(&call.arguments, ARGUMENT_FRAGMENT) {
            let more = json!({"tool_calls": [{"index": index, "function": {"arguments": piece}}]});
            http::write_event(stream, &chunk_json(model, more, None)).await?;
        }
    }
    if let Some(reason) = finish {
        http::write_event(stream, &chunk_json(model, json!({}), Some(reason))).await?;
        http::write_event(stream, "[DONE]").await?;
        http::end_chunks(stream).await?;
    }
    Ok(())
}

/// Splits at character boundaries into pieces of at most `size` characters.
fn char_pieces(s: &str, size: usize) -> Vec<String> {
    let chars: Vec<char> = s.chars().collect();
    chars.chunks(size).map(|c| c.iter().collect()).collect()
}

fn chunk_json(model: &str, delta: Value, finish: Option<&str>) -> String {
    json!({
        "id": "chatcmpl-fake",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    })
    .to_string()
}

fn completion_json(
    model: &str,
    thought: Option<&str>,
    chunks: &[String],
    calls: &[(String, PlannedCall)],
    finish: Option<&str>,
) -> Value {
    let mut message = json!({"role": "assistant", "content": chunks.concat()});
    if let Some(t) = thought {
        message["reasoning_content"] = Value::String(t.to_owned());
    }
    if !calls.is_empty() {
        message["tool_calls"] = calls
            .iter()
            .map(|(id, c)| {
                json!({"id": id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}})
            })
            .collect();
    }
    json!({
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish.unwrap_or("stop")}],
    })
}

fn error_body(kind: &str, message: &str) -> Value {
    json!({"error": {"message": message, "type": kind, "param": null, "code": kind}})
}

async fn send_error(
    stream: &mut TcpStream,
    status: u16,
    kind: &str,
    message: &str,
    retry_after: Option<u64>,
) -> std::io::Result<()> {
    let headers: Vec<(&str, String)> = retry_after
        .map(|s| vec![("Retry-After", s.to_string())])
        .unwrap_or_default();
    let body = error_body(kind, message);
    http::write_full(
        stream,
        status,
        "application/json",
        &headers,
        body.to_string().as_bytes(),
    )
    .await
}

/// Waits until the client closes (or resets) the connection.
async fn hold_until_gone(stream: &mut TcpStream) {
    let mut buf = [0u8; 1024];
    loop {
        match stream.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
    }
}
