//! One ACP connection: line-delimited JSON-RPC 2.0 in, one message per line out.
//!
//! Malformed JSON gets `-32700`, anything that is not a JSON-RPC 2.0 request or notification
//! `-32600`, unknown methods `-32601` (ACP-61). Every outgoing line is one JSON-RPC message
//! of at most `Limits::line_max` UTF-16 units.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

use capability_model::CancelToken;
use permissions::Principal;
use serde_json::{Value, json};
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

use crate::errors::{RpcError, RuntimeError};
use crate::runtime::{Runtime, lock};
use crate::text::u16_len;

/// The write side and the caller of one connection, shared by its request handlers.
pub(crate) struct Peer {
    pub caller: Principal,
    out: mpsc::UnboundedSender<String>,
    line_max: usize,
    /// Extensions the client declared in `initialize` (ACP-05).
    pub declared: Mutex<BTreeSet<String>>,
}

impl Peer {
    fn send_line(&self, v: &Value) -> bool {
        let line = v.to_string();
        if u16_len(&line) > self.line_max {
            return false;
        }
        // A closed connection is not an error: the task keeps running (ACP-53).
        let _ = self.out.send(line);
        true
    }

    /// Sends a notification; one that would exceed the line limit is dropped and logged.
    pub(crate) fn notify(&self, method: &str, params: Value) {
        let msg = json!({"jsonrpc": "2.0", "method": method, "params": params});
        if !self.send_line(&msg) {
            tracing::warn!(method, "notification over the line limit was not sent");
        }
    }

    fn respond(&self, id: Value, result: Result<Value, RpcError>) {
        let msg = match result {
            Ok(v) => json!({"jsonrpc": "2.0", "id": id, "result": v}),
            Err(e) => json!({"jsonrpc": "2.0", "id": id, "error": e.to_json()}),
        };
        if !self.send_line(&msg) {
            let e = RpcError::internal().to_json();
            let _ = self.send_line(&json!({"jsonrpc": "2.0", "id": id, "error": e}));
        }
    }
}

pub(crate) struct Connection {
    rt: Arc<Runtime>,
    peer: Arc<Peer>,
    writer: tokio::task::JoinHandle<()>,
}

enum Line {
    Text(Vec<u8>),
    TooLong,
}

impl Connection {
    pub(crate) fn new<W>(rt: Arc<Runtime>, caller: Principal, mut writer: W) -> Self
    where
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let (tx, mut rx) = mpsc::unbounded_channel::<String>();
        let writer = tokio::spawn(async move {
            while let Some(mut line) = rx.recv().await {
                line.push('\n');
                if writer.write_all(line.as_bytes()).await.is_err() || writer.flush().await.is_err()
                {
                    break;
                }
            }
            let _ = writer.shutdown().await;
        });
        let peer = Arc::new(Peer {
            caller,
            out: tx,
            line_max: rt.cfg.limits.line_max,
            declared: Mutex::new(BTreeSet::new()),
        });
        Self { rt, peer, writer }
    }

    pub(crate) async fn run<R>(self, reader: R, close: CancelToken) -> Result<(), RuntimeError>
    where
        R: AsyncRead + Unpin + Send,
    {
        let mut reader = BufReader::new(reader);
        let max = self.rt.cfg.limits.incoming_line_max_bytes;
        let mut buf = Vec::new();
        let result = loop {
            let next = tokio::select! {
                _ = close.cancelled() => break Ok(()),
                _ = self.rt.closing.cancelled() => break Ok(()),
                r = next_line(&mut reader, max, &mut buf) => r,
            };
            match next {
                Ok(None) => break Ok(()),
                Ok(Some(Line::TooLong)) => {
                    self.peer
                        .respond(Value::Null, Err(RpcError::invalid_request()));
                }
                Ok(Some(Line::Text(bytes))) => self.handle(&bytes),
                Err(e) => break Err(RuntimeError::Io(e)),
            }
        };
        // Drop our sender; handlers still running keep theirs, so the writer lives until the
        // last one finishes, then ends.
        let Connection { peer, writer, .. } = self;
        drop(peer);
        if close.is_cancelled() {
            writer.abort();
        }
        result
    }

    fn handle(&self, bytes: &[u8]) {
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return;
        }
        let value: Value = match serde_json::from_slice(bytes) {
            Ok(v) => v,
            Err(_) => return self.peer.respond(Value::Null, Err(RpcError::parse_error())),
        };
        let Value::Object(mut obj) = value else {
            return self
                .peer
                .respond(Value::Null, Err(RpcError::invalid_request()));
        };
        let id = match obj.remove("id") {
            None => None,
            Some(v @ (Value::String(_) | Value::Number(_))) => Some(v),
            Some(_) => {
                return self
                    .peer
                    .respond(Value::Null, Err(RpcError::invalid_request()));
            }
        };
        if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
            return self
                .peer
                .respond(id.unwrap_or(Value::Null), Err(RpcError::invalid_request()));
        }
        let method = match obj.get("method") {
            Some(Value::String(m)) => m.clone(),
            None if id.is_some() && (obj.contains_key("result") || obj.contains_key("error")) => {
                // A response to a request of ours: none are outstanding; ignore.
                return;
            }
            _ => {
                return self
                    .peer
                    .respond(id.unwrap_or(Value::Null), Err(RpcError::invalid_request()));
            }
        };
        let params = match obj.remove("params") {
            None | Some(Value::Null) => Value::Object(Default::default()),
            Some(v @ Value::Object(_)) => v,
            Some(_) => {
                return self.peer.respond(
                    id.unwrap_or(Value::Null),
                    Err(RpcError::invalid_params("params must be an object")),
                );
            }
        };
        let rt = Arc::clone(&self.rt);
        let peer = Arc::clone(&self.peer);
        match id {
            None => crate::handlers::notification(&rt, &peer, &method, params),
            Some(id) => {
                if !crate::handlers::is_known(&method) {
                    return peer.respond(id, Err(RpcError::method_not_found()));
                }
                let task = tokio::spawn(async move {
                    let r = crate::handlers::request(&rt, &peer, &method, params).await;
                    peer.respond(id, r);
                });
                self.rt.track(task);
            }
        }
    }
}

async fn next_line<R: AsyncBufRead + Unpin>(
    r: &mut R,
    max: usize,
    buf: &mut Vec<u8>,
) -> std::io::Result<Option<Line>> {
    buf.clear();
    let mut overflow = false;
    loop {
        let avail = r.fill_buf().await?;
        if avail.is_empty() {
            return Ok(match (overflow, buf.is_empty()) {
                (true, _) => Some(Line::TooLong),
                (false, true) => None,
                (false, false) => Some(Line::Text(std::mem::take(buf))),
            });
        }
        match avail.iter().position(|&b| b == b'\n') {
            Some(i) => {
                if !overflow && buf.len() + i <= max {
                    buf.extend_from_slice(&avail[..i]);
                } else {
                    overflow = true;
                }
                r.consume(i + 1);
                return Ok(Some(if overflow {
                    Line::TooLong
                } else {
                    Line::Text(std::mem::take(buf))
                }));
            }
            None => {
                let n = avail.len();
                if !overflow && buf.len() + n <= max {
                    buf.extend_from_slice(avail);
                } else {
                    overflow = true;
                    buf.clear();
                }
                r.consume(n);
            }
        }
    }
}

/// The declared extension names, for ACP-05 checks.
pub(crate) fn declared(peer: &Peer, name: &str) -> bool {
    lock(&peer.declared).contains(name)
}
