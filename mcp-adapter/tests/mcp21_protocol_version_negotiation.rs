//! MCP-21: the client offers its newest revision; the server echoes a supported one or
//! falls back to its newest; a client facing an unsupported answer closes the connection
//! with reason `protocol_version`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{Raw, pair};
use mcp_adapter::{ClientError, McpClient, McpServer};
use serde_json::json;

#[tokio::test]
async fn mcp21_server_echoes_each_supported_revision() {
    let server = McpServer::new("notes", |_| Ok(())).unwrap();
    for v in ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"] {
        let (host, plugin) = pair();
        server.serve(plugin);
        let raw = Raw { ch: host };
        let r = raw.initialize(v).await;
        assert_eq!(r["result"]["protocolVersion"], v);
    }
}

#[tokio::test]
async fn mcp21_server_answers_an_unknown_revision_with_its_newest() {
    let server = McpServer::new("notes", |_| Ok(())).unwrap();
    let (host, plugin) = pair();
    server.serve(plugin);
    let raw = Raw { ch: host };
    let r = raw.initialize("1999-01-01").await;
    assert_eq!(r["result"]["protocolVersion"], "2025-11-25");
}

#[tokio::test]
async fn mcp21_client_accepts_an_older_supported_revision() {
    let (host, plugin) = pair();
    let fake = Raw { ch: plugin };
    let (client, ()) = tokio::join!(McpClient::connect(host), fake.accept("2024-11-05"));
    let client = client.unwrap();
    assert_eq!(client.protocol_version(), "2024-11-05");
    assert_eq!(client.server_info().name, "fake");
}

#[tokio::test]
async fn mcp21_client_closes_on_an_unsupported_revision() {
    let (host, plugin) = pair();
    let fake = Raw { ch: plugin };
    let connect = McpClient::connect(host);
    let script = async {
        let init = fake.next().await;
        fake.send(json!({"jsonrpc": "2.0", "id": init["id"], "result": {
            "protocolVersion": "2030-01-01", "capabilities": {},
            "serverInfo": {"name": "future", "version": "1"}}}));
    };
    let (result, ()) = tokio::join!(connect, script);
    assert_eq!(result.unwrap_err(), ClientError::ProtocolVersion);
    // The connection was closed, not left half-open.
    assert_eq!(fake.ch.recv().await, None);
}
