//! Test servers on 127.0.0.1, written on raw TCP so each fault (slow headers, short bodies,
//! fake gzip, huge bodies) is exactly what the test says. Every loop is bounded and ends by
//! itself; servers also stop when the test's runtime shuts down.
#![allow(clippy::unwrap_used, clippy::expect_used, dead_code, unreachable_pub)]

use std::future::Future;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use http_capability::{HttpConfig, HttpExecutor, NetworkPolicy, StaticResolver};
use serde_json::{Map, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

pub const LOCALHOST: IpAddr = IpAddr::V4(Ipv4Addr::LOCALHOST);

/// One request as the server saw it.
#[derive(Debug, Clone, Default)]
pub struct RawRequest {
    pub method: String,
    pub target: String,
    /// (lowercased name, value) in arrival order.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl RawRequest {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

pub struct TestServer {
    pub addr: SocketAddr,
    accepted: Arc<AtomicUsize>,
    requests: Arc<Mutex<Vec<RawRequest>>>,
    task: tokio::task::JoinHandle<()>,
}

impl TestServer {
    pub fn port(&self) -> u16 {
        self.addr.port()
    }
    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{}", self.addr.port(), path)
    }
    /// Connections accepted so far.
    pub fn accepted(&self) -> usize {
        self.accepted.load(Ordering::SeqCst)
    }
    pub fn requests(&self) -> Vec<RawRequest> {
        self.requests.lock().unwrap().clone()
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Max connections one test server accepts before its accept loop ends.
const MAX_CONNECTIONS: usize = 64;

/// Serves each connection: reads one request (headers, then `Content-Length` bytes of body),
/// records it, then hands the stream to `handler`, which writes whatever it wants. The stream
/// is closed when `handler` returns.
pub async fn serve<F, Fut>(handler: F) -> TestServer
where
    F: Fn(RawRequest, TcpStream) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = ()> + Send + 'static,
{
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await.unwrap();
    let addr = listener.local_addr().unwrap();
    let accepted = Arc::new(AtomicUsize::new(0));
    let requests = Arc::new(Mutex::new(Vec::new()));
    let handler = Arc::new(handler);
    let (acc, reqs) = (accepted.clone(), requests.clone());
    let task = tokio::spawn(async move {
        for _ in 0..MAX_CONNECTIONS {
            let Ok((mut stream, _)) = listener.accept().await else {
                return;
            };
            acc.fetch_add(1, Ordering::SeqCst);
            let (handler, reqs) = (handler.clone(), reqs.clone());
            tokio::spawn(async move {
                let Some(req) = read_request(&mut stream).await else {
                    return;
                };
                reqs.lock().unwrap().push(req.clone());
                handler(req, stream).await;
            });
        }
    });
    TestServer {
        addr,
        accepted,
        requests,
        task,
    }
}

/// A server that answers every request with the same bytes.
pub async fn serve_fixed(response: Vec<u8>) -> TestServer {
    let response = Arc::new(response);
    serve(move |_req, mut stream| {
        let response = response.clone();
        async move {
            let _ = stream.write_all(&response).await;
            let _ = stream.shutdown().await;
        }
    })
    .await
}

async fn read_request(stream: &mut TcpStream) -> Option<RawRequest> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        if let Some(i) = find(&buf, b"\r\n\r\n") {
            break i;
        }
        if buf.len() > 64 * 1024 {
            return None;
        }
        let n = tokio::time::timeout(Duration::from_secs(10), stream.read(&mut chunk))
            .await
            .ok()?
            .ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let mut first = lines.next()?.split(' ');
    let method = first.next()?.to_owned();
    let target = first.next()?.to_owned();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let len: usize = headers
        .iter()
        .find(|(n, _)| n == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0)
        .min(4 * 1024 * 1024);
    let mut body = buf[head_end + 4..].to_vec();
    while body.len() < len {
        let n = tokio::time::timeout(Duration::from_secs(10), stream.read(&mut chunk))
            .await
            .ok()?
            .ok()?;
        if n == 0 {
            break;
        }
        body.extend_from_slice(&chunk[..n]);
    }
    Some(RawRequest {
        method,
        target,
        headers,
        body,
    })
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// A complete `HTTP/1.1` response with `Content-Length` and `Connection: close`.
pub fn response(status: &str, headers: &[(&str, &str)], body: &[u8]) -> Vec<u8> {
    let mut out = format!("HTTP/1.1 {status}\r\n");
    for (n, v) in headers {
        out.push_str(&format!("{n}: {v}\r\n"));
    }
    out.push_str(&format!(
        "Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    ));
    let mut bytes = out.into_bytes();
    bytes.extend_from_slice(body);
    bytes
}

/// Short timeouts so failing paths end quickly.
pub fn config(policy: NetworkPolicy) -> HttpConfig {
    HttpConfig {
        policy,
        connect_timeout: Duration::from_secs(2),
        total_timeout: Duration::from_secs(10),
        ..HttpConfig::default()
    }
}

/// An executor with the LAN policy (private + cleartext) and a static resolver.
pub fn lan_executor(resolver: StaticResolver) -> HttpExecutor {
    HttpExecutor::with_resolver(config(NetworkPolicy::local_network()), Arc::new(resolver)).unwrap()
}

pub fn executor(config: HttpConfig, resolver: StaticResolver) -> HttpExecutor {
    HttpExecutor::with_resolver(config, Arc::new(resolver)).unwrap()
}

/// `serde_json::json!` object → argument map.
pub fn args(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => panic!("arguments must be an object"),
    }
}
