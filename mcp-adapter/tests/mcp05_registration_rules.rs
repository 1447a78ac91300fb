//! MCP-05: tool names are 1–128 characters of `[A-Za-z0-9_.-]` and unique per server; the
//! input schema is an object schema; annotations default to unset.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use capability_model::{Annotations, ToolOutput};
use mcp_adapter::{McpToolRegistry, RegistryError};
use serde_json::{Value, json};

fn add(r: &mut McpToolRegistry, name: &str, schema: Value) -> Result<(), RegistryError> {
    r.tool(
        name,
        None,
        "A tool.",
        schema,
        Annotations::default(),
        |_, _| async { Ok(ToolOutput::text("ok")) },
    )
    .map(|_| ())
}

#[test]
fn mcp05_bad_names_are_refused_at_registration() {
    let mut r = McpToolRegistry::new("s");
    for bad in [
        "",
        "has space",
        "ünï",
        "slash/name",
        "a:b",
        &"x".repeat(129),
    ] {
        let e = add(&mut r, bad, json!({"type": "object"})).unwrap_err();
        assert!(
            matches!(e, RegistryError::InvalidName { .. }),
            "{bad:?}: {e:?}"
        );
    }
    assert!(r.is_empty());
}

#[test]
fn mcp05_boundary_names_are_accepted() {
    let mut r = McpToolRegistry::new("s");
    add(&mut r, "a", json!({"type": "object"})).unwrap();
    add(&mut r, &"y".repeat(128), json!({"type": "object"})).unwrap();
    add(&mut r, "A-z_0.9", json!({"type": "object"})).unwrap();
    assert_eq!(r.len(), 3);
}

#[test]
fn mcp05_non_object_schemas_are_refused() {
    let mut r = McpToolRegistry::new("s");
    for bad in [
        json!([]),
        json!("object"),
        json!({}),
        json!({"type": "string"}),
        json!({"type": "object", "properties": {"a": {"type": 5}}}),
    ] {
        let e = add(&mut r, "t", bad.clone()).unwrap_err();
        assert!(
            matches!(e, RegistryError::InvalidSchema { .. }),
            "{bad}: {e:?}"
        );
    }
    assert!(r.is_empty());
}

#[test]
fn mcp05_duplicate_name_fails_when_registered() {
    let mut r = McpToolRegistry::new("s");
    add(&mut r, "t", json!({"type": "object"})).unwrap();
    let e = add(&mut r, "t", json!({"type": "object"})).unwrap_err();
    assert_eq!(e, RegistryError::Duplicate { name: "t".into() });
    assert_eq!(r.names(), vec!["t"]);
}
