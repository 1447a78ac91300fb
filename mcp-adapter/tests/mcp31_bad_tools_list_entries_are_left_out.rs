//! MCP-31: a provider that lies in `tools/list` — bad names, non-object schemas, duplicates,
//! non-objects — loses only those entries (each recorded as an issue); its valid tools stay.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use capability_model::IssueKind;
use common::connect_fake;
use mcp_adapter::ClientError;
use serde_json::json;

#[tokio::test]
async fn mcp31_only_valid_tools_reach_the_catalog() {
    let (client, fake) = connect_fake().await;
    let list = client.list_capabilities("notes", "notes");
    let script = async {
        let req = fake.next().await;
        assert_eq!(req["method"], "tools/list");
        fake.answer(
            &req["id"],
            json!({"tools": [
                {"name": "good", "description": "Fine.", "inputSchema": {"type": "object"}},
                {"name": "bad name", "inputSchema": {"type": "object"}},
                {"name": "", "inputSchema": {"type": "object"}},
                {"name": "arr", "inputSchema": []},
                {"name": "str", "inputSchema": {"type": "string"}},
                {"name": "dup", "inputSchema": {"type": "object"}},
                {"name": "dup", "inputSchema": {"type": "object"}},
                42,
            ]}),
        );
    };
    let (listing, ()) = tokio::join!(list, script);
    let listing = listing.unwrap();
    let names: Vec<_> = listing
        .capabilities
        .iter()
        .map(|c| c.id.name.as_str())
        .collect();
    assert_eq!(names, ["good"]);
    let kinds: Vec<_> = listing.issues.iter().map(|i| i.kind.clone()).collect();
    assert_eq!(
        kinds
            .iter()
            .filter(|k| **k == IssueKind::InvalidName)
            .count(),
        2
    );
    assert_eq!(
        kinds
            .iter()
            .filter(|k| **k == IssueKind::InvalidSchema)
            .count(),
        2
    );
    assert_eq!(
        kinds
            .iter()
            .filter(|k| **k == IssueKind::DuplicateName)
            .count(),
        2
    );
    assert_eq!(
        kinds
            .iter()
            .filter(|k| **k == IssueKind::MalformedEntry)
            .count(),
        1
    );
}

#[tokio::test]
async fn a_tools_list_result_without_tools_is_invalid() {
    let (client, fake) = connect_fake().await;
    let list = client.list_capabilities("notes", "notes");
    let script = async {
        let req = fake.next().await;
        fake.answer(&req["id"], json!({"tools": {"not": "an array"}}));
    };
    let (listing, ()) = tokio::join!(list, script);
    assert_eq!(
        listing.unwrap_err(),
        ClientError::InvalidResponse("tools/list")
    );
}
