//! MCP tools/list entries → Capability (MCP-05, CAT-66).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use capability_model::mcp::capabilities_from_tools_list;
use capability_model::{IssueKind, Source};
use serde_json::{Value, json};

fn list(tools: Value) -> capability_model::Listing {
    capabilities_from_tools_list(
        Source::Mcp,
        "com.example",
        "main",
        &json!({ "tools": tools }),
    )
}

#[test]
fn fields_are_carried_over() {
    let l = list(json!([{
        "name": "event_list", "title": "Events", "description": "List events.",
        "inputSchema": {"type": "object", "properties": {"from": {"type": "string"}}},
        "outputSchema": {"type": "object"},
        "annotations": {"readOnlyHint": true, "openWorldHint": false}
    }]));
    assert!(l.issues.is_empty());
    let c = &l.capabilities[0];
    assert_eq!(c.id.provider, "com.example");
    assert_eq!(c.id.server, "main");
    assert_eq!(c.id.name, "event_list");
    assert_eq!(c.title.as_deref(), Some("Events"));
    assert_eq!(c.description, "List events.");
    assert_eq!(c.input_schema["properties"]["from"]["type"], "string");
    assert!(c.output_schema.is_some());
}

#[test]
fn cat_66_absent_hints_differ_from_false() {
    let l = list(json!([
        {"name": "a", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": false}},
        {"name": "b", "inputSchema": {"type": "object"}}
    ]));
    assert_eq!(l.capabilities[0].annotations.read_only_hint, Some(false));
    assert_eq!(l.capabilities[1].annotations.read_only_hint, None);
}

#[test]
fn mcp_05_name_rules() {
    let ok128 = "a".repeat(128);
    let bad129 = "a".repeat(129);
    let l = list(json!([
        {"name": ok128, "inputSchema": {"type": "object"}},
        {"name": "", "inputSchema": {"type": "object"}},
        {"name": bad129, "inputSchema": {"type": "object"}},
        {"name": "has space", "inputSchema": {"type": "object"}},
        {"name": "dots.and-dashes_ok", "inputSchema": {"type": "object"}},
        {"name": 7, "inputSchema": {"type": "object"}}
    ]));
    assert_eq!(l.capabilities.len(), 2);
    let kinds: Vec<IssueKind> = l.issues.iter().map(|i| i.kind.clone()).collect();
    assert_eq!(
        kinds,
        [
            IssueKind::InvalidName,
            IssueKind::InvalidName,
            IssueKind::InvalidName,
            IssueKind::MalformedEntry
        ]
    );
}

#[test]
fn mcp_05_input_schema_must_be_an_object_schema() {
    let l = list(json!([
        {"name": "no_schema"},
        {"name": "array_schema", "inputSchema": []},
        {"name": "string_type", "inputSchema": {"type": "string"}},
        {"name": "no_type", "inputSchema": {"properties": {}}},
        {"name": "bad_keyword", "inputSchema": {"type": "object", "properties": {"x": {"type": "nonsense"}}}},
        {"name": "fine", "inputSchema": {"type": "object"}}
    ]));
    assert_eq!(l.capabilities.len(), 1);
    assert_eq!(l.issues.len(), 5);
    assert!(l.issues.iter().all(|i| i.kind == IssueKind::InvalidSchema));
}

#[test]
fn ref_cycles_do_not_hang_or_crash() {
    let l = list(json!([
        {"name": "self_ref", "inputSchema": {"type": "object", "properties": {"n": {"$ref": "#"}}}},
        {"name": "loop", "inputSchema": {"type": "object", "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}},
            "properties": {"x": {"$ref": "#/$defs/a"}}}},
        {"name": "remote", "inputSchema": {"type": "object", "properties": {"x": {"$ref": "https://example.invalid/s.json"}}}}
    ]));
    // The recursive schema is legal JSON Schema; the remote reference cannot be resolved
    // (no remote fetching) and is reported.
    assert!(l.capabilities.iter().any(|c| c.id.name == "self_ref"));
    assert!(
        l.issues
            .iter()
            .any(|i| i.entry.as_deref() == Some("remote"))
    );
}

#[test]
fn mcp_05_duplicates_within_a_server_are_all_left_out() {
    let l = list(json!([
        {"name": "x", "inputSchema": {"type": "object"}},
        {"name": "x", "inputSchema": {"type": "object"}},
        {"name": "y", "inputSchema": {"type": "object"}}
    ]));
    assert_eq!(l.capabilities.len(), 1);
    assert_eq!(
        l.issues
            .iter()
            .filter(|i| i.kind == IssueKind::DuplicateName)
            .count(),
        2
    );
}

#[test]
fn malformed_lists_are_issues() {
    for v in [json!(5), json!({"tools": 3}), json!({})] {
        let l = capabilities_from_tools_list(Source::Mcp, "p", "s", &v);
        assert!(l.capabilities.is_empty());
        assert_eq!(l.issues[0].kind, IssueKind::MalformedEntry);
    }
    let l = list(json!([{"name": "t", "inputSchema": {"type": "object"}, "annotations": []}, 5]));
    assert_eq!(l.issues.len(), 2);
}

#[test]
fn ten_thousand_tools_convert() {
    let tools: Vec<Value> = (0..10_000)
        .map(|i| json!({"name": format!("t{i}"), "inputSchema": {"type": "object"}}))
        .collect();
    let l = list(Value::Array(tools));
    assert_eq!(l.capabilities.len(), 10_000);
}
