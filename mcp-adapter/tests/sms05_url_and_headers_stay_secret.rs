//! SMS-05: URL and headers stay in memory. `Debug`/`Display` of the server print the name
//! only; statuses, listings, errors and every log line (ours and rmcp's, at TRACE) carry
//! neither the URL nor a header — through a connect, a call, a failing server and a refused
//! one. The headers do reach the server (they are for it).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod sms_support;

use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use capability_model::{CancelToken, CapabilityId, CapabilitySource};
use mcp_adapter::session_http::{
    McpHttpServer, SessionHttpConfig, SessionMcpServers, SessionUrlPolicy,
};
use serde_json::json;
use sms_support::{Behaviour, FakeServer, refused_url};

const URL_SECRET: &str = "pathSECRET7781";
const HEADER_SECRET: &str = "tokenSECRET4410";

#[derive(Clone, Default)]
struct Capture(Arc<Mutex<Vec<u8>>>);

impl Write for Capture {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn with_secrets(name: &str, base: &str) -> McpHttpServer {
    McpHttpServer::new(
        name,
        format!("{}?k={URL_SECRET}", base),
        vec![
            ("Authorization".into(), format!("Bearer {HEADER_SECRET}")),
            ("X-Api-Key".into(), HEADER_SECRET.into()),
        ],
    )
}

#[test]
fn sms05_debug_and_display_print_the_name_only() {
    let s = with_secrets("orders", "https://mcp.example.com/mcp");
    assert_eq!(s.to_string(), "orders");
    let debug = format!("{s:?} {s:#?}");
    assert!(debug.contains("orders"));
    for secret in [URL_SECRET, HEADER_SECRET, "example", "Authorization"] {
        assert!(!debug.contains(secret), "{debug}");
    }
}

#[test]
fn sms05_nothing_leaks_into_logs_statuses_or_errors() {
    let capture = Capture::default();
    let writer = capture.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_ansi(false)
        .with_writer(move || writer.clone())
        .finish();
    // A current-thread runtime: every task (rmcp's workers too) logs through this thread's
    // default subscriber.
    let _guard = tracing::subscriber::set_default(subscriber);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let shown = rt.block_on(async {
        let good = FakeServer::start(Behaviour::default()).await;
        let dies = FakeServer::start(Behaviour {
            call_dies: true,
            ..Behaviour::default()
        })
        .await;
        let set = SessionMcpServers::start(
            vec![
                with_secrets("good", &good.url()),
                with_secrets("dies", &dies.url()),
                with_secrets("refused", &refused_url().await),
            ],
            SessionHttpConfig {
                policy: SessionUrlPolicy::loopback_for_tests(),
                handshake_timeout: Duration::from_secs(5),
                ..SessionHttpConfig::default()
            },
        )
        .await
        .unwrap();
        let args = json!({"text": "hello"}).as_object().unwrap().clone();
        let ok = set
            .call(
                &CapabilityId::session("good", "echo"),
                args.clone(),
                CancelToken::new(),
            )
            .await;
        let died = set
            .call(
                &CapabilityId::session("dies", "echo"),
                args.clone(),
                CancelToken::new(),
            )
            .await;
        let refused = set
            .call(
                &CapabilityId::session("refused", "echo"),
                args,
                CancelToken::new(),
            )
            .await;
        assert!(ok.is_ok());
        assert!(died.is_err());
        assert!(refused.is_err());
        set.refresh_before_task().await;
        // The headers were sent to the server they are meant for.
        let init = good
            .requests()
            .into_iter()
            .find(|r| r.method == "initialize")
            .unwrap();
        assert!(
            init.headers
                .contains(&("x-api-key".into(), HEADER_SECRET.into()))
        );
        assert!(
            init.headers
                .contains(&("authorization".into(), format!("Bearer {HEADER_SECRET}")))
        );
        let shown = format!(
            "{:?}\n{}\n{:?}\n{:?}\n{:?}\n{:?}",
            set,
            serde_json::to_string(&set.statuses()).unwrap(),
            rt_list(&set).await,
            ok,
            died,
            refused
        );
        set.close().await;
        tokio::time::sleep(Duration::from_millis(100)).await;
        shown
    });
    drop(rt);
    let logs = String::from_utf8(capture.0.lock().unwrap().clone()).unwrap();
    assert!(logs.contains("session MCP server connected"), "{logs}");
    assert!(logs.contains("session MCP tools/call"), "{logs}");
    for secret in [URL_SECRET, HEADER_SECRET, "127.0.0.1"] {
        assert!(!shown.contains(secret), "{secret} in:\n{shown}");
    }
    for secret in [URL_SECRET, HEADER_SECRET] {
        assert!(!logs.contains(secret), "{secret} in logs:\n{logs}");
    }
    // The host: hyper's connector logs `host:port` at DEBUG/TRACE under its own target
    // (`hyper_util::…`), which a deployment must keep at INFO or above; no other line may.
    for line in logs.lines().filter(|l| !l.contains("hyper_util::")) {
        assert!(!line.contains("127.0.0.1"), "host in log line: {line}");
    }
}

async fn rt_list(set: &SessionMcpServers) -> String {
    format!("{:?}", set.list().await.unwrap())
}
