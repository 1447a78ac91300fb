//! MCP-06..MCP-08: `text`, `json` (object → also structuredContent) and `error` (isError)
//! results exactly as they appear on the wire.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use capability_model::{Annotations, ToolOutput};
use common::{Raw, pair};
use mcp_adapter::McpServer;
use serde_json::{Value, json};

async fn call(tool: &str) -> Value {
    let server = McpServer::new("s", |r| {
        let schema = json!({"type": "object"});
        let none = Annotations::default;
        r.tool("text", None, "T.", schema.clone(), none(), |_, _| async {
            Ok(ToolOutput::text("hello"))
        })?;
        r.tool("obj", None, "O.", schema.clone(), none(), |_, _| async {
            Ok(ToolOutput::json(json!({"b": [1, 2], "a": "x y"})))
        })?;
        r.tool("arr", None, "A.", schema.clone(), none(), |_, _| async {
            Ok(ToolOutput::json(json!([1, {"k": null}])))
        })?;
        r.tool("err", None, "E.", schema, none(), |_, _| async {
            Ok(ToolOutput::error("The note does not exist."))
        })?;
        Ok(())
    })
    .unwrap();
    let (host, plugin) = pair();
    server.serve(plugin);
    let raw = Raw { ch: host };
    raw.initialize("2025-11-25").await;
    raw.request(3, "tools/call", json!({"name": tool, "arguments": {}}))
        .await["result"]
        .clone()
}

#[tokio::test]
async fn mcp06_text_has_one_text_block_and_no_is_error() {
    assert_eq!(
        call("text").await,
        json!({"content": [{"type": "text", "text": "hello"}]})
    );
}

#[tokio::test]
async fn mcp07_json_object_is_compact_text_and_structured_content() {
    let r = call("obj").await;
    let text = r["content"][0]["text"].as_str().unwrap();
    assert!(!text.contains(' ') || text.contains("x y"));
    assert!(!text.contains(": ") && !text.contains(", "));
    assert_eq!(
        serde_json::from_str::<Value>(text).unwrap(),
        json!({"b": [1, 2], "a": "x y"})
    );
    assert_eq!(r["structuredContent"], json!({"b": [1, 2], "a": "x y"}));
    assert!(r.get("isError").is_none());
}

#[tokio::test]
async fn mcp07_json_array_has_no_structured_content() {
    let r = call("arr").await;
    assert_eq!(r["content"][0]["text"], "[1,{\"k\":null}]");
    assert!(r.get("structuredContent").is_none());
}

#[tokio::test]
async fn mcp08_error_sets_is_error_with_the_sentence() {
    assert_eq!(
        call("err").await,
        json!({"content": [{"type": "text", "text": "The note does not exist."}], "isError": true})
    );
}
