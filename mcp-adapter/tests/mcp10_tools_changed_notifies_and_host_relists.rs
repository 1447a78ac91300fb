//! MCP-10: `notify_tools_changed` re-runs registration and sends
//! `notifications/tools/list_changed`; the host source yields a change and re-lists
//! (MCP-27 step 3) instead of serving its cached list.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use capability_model::{Annotations, CapabilitySource, ToolOutput};
use common::pair;
use futures::StreamExt;
use mcp_adapter::{McpServer, McpSource, RegistryError};
use serde_json::json;

fn server(names: Arc<Mutex<Vec<String>>>) -> McpServer {
    McpServer::new("notes", move |r| {
        for name in names.lock().unwrap().iter() {
            r.tool(
                name,
                None,
                "A tool.",
                json!({"type": "object"}),
                Annotations::default(),
                |_, _| async { Ok(ToolOutput::text("")) },
            )?;
        }
        Ok(())
    })
    .unwrap()
}

#[tokio::test]
async fn mcp10_list_changed_reaches_the_host_which_relists() {
    let names = Arc::new(Mutex::new(vec!["a".to_owned()]));
    let srv = server(names.clone());
    let s2 = srv.clone();
    let source = McpSource::new(
        "notes",
        "notes",
        Arc::new(move || {
            let s = s2.clone();
            Box::pin(async move {
                let (host, plugin) = pair();
                s.serve(plugin);
                Ok(host)
            })
        }),
    );
    let mut changes = source.changes();
    let first = source.list().await.unwrap();
    assert_eq!(first.capabilities.len(), 1);
    names.lock().unwrap().push("b".to_owned());
    // Unchanged until the provider says so: the cached list is served.
    assert_eq!(source.list().await.unwrap().capabilities.len(), 1);
    srv.notify_tools_changed().unwrap();
    tokio::time::timeout(Duration::from_secs(5), changes.next())
        .await
        .unwrap()
        .unwrap();
    let after = source.list().await.unwrap();
    let mut got: Vec<_> = after
        .capabilities
        .iter()
        .map(|c| c.id.name.clone())
        .collect();
    got.sort();
    assert_eq!(got, ["a", "b"]);
}

#[tokio::test]
async fn mcp10_a_failing_reregistration_keeps_the_old_tools_and_sends_nothing() {
    let names = Arc::new(Mutex::new(vec!["a".to_owned()]));
    let srv = server(names.clone());
    names.lock().unwrap().push("bad name".to_owned());
    let e = srv.notify_tools_changed().unwrap_err();
    assert!(matches!(e, RegistryError::InvalidName { .. }));
    assert_eq!(srv.tool_names(), ["a"]);
}
