//! MCP-03: `serverInfo.name` is the server name, `serverInfo.version` defaults to "1.0.0".
//! MCP-04: only the `tools` capability (with `listChanged`); no resources or prompts.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{Raw, pair};
use mcp_adapter::McpServer;
use serde_json::json;

#[tokio::test]
async fn mcp03_server_info_defaults_to_version_1_0_0() {
    let server = McpServer::new("notes", |_| Ok(())).unwrap();
    let (host, plugin) = pair();
    server.serve(plugin);
    let raw = Raw { ch: host };
    let r = raw.initialize("2025-11-25").await;
    assert_eq!(
        r["result"]["serverInfo"],
        json!({"name": "notes", "version": "1.0.0"})
    );
}

#[tokio::test]
async fn mcp03_server_info_carries_an_explicit_version() {
    let server = McpServer::with_version("calendar", "2.3.4", |_| Ok(())).unwrap();
    let (host, plugin) = pair();
    server.serve(plugin);
    let raw = Raw { ch: host };
    let r = raw.initialize("2025-06-18").await;
    assert_eq!(r["result"]["serverInfo"]["name"], "calendar");
    assert_eq!(r["result"]["serverInfo"]["version"], "2.3.4");
}

#[tokio::test]
async fn mcp04_only_the_tools_capability_is_advertised_and_served() {
    let server = McpServer::new("notes", |_| Ok(())).unwrap();
    let (host, plugin) = pair();
    server.serve(plugin);
    let raw = Raw { ch: host };
    let r = raw.initialize("2025-11-25").await;
    assert_eq!(
        r["result"]["capabilities"],
        json!({"tools": {"listChanged": true}})
    );
    for method in ["resources/list", "prompts/list", "completion/complete"] {
        let e = raw.request(7, method, json!({})).await;
        assert_eq!(e["error"]["code"], -32601, "{method}");
    }
}
