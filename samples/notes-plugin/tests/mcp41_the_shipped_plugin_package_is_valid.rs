//! The shipped `agent-plugin/` package passes the host's own reader (MCP-40..MCP-43: root
//! plugin.json, pinned Agent Plugins 1.0 schema, closed top level, the `org.agentos` server
//! declaration) with no issue, and its SKILL.md parses (MCP-60..). The server name in
//! plugin.json is the one the binary serves.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use mcp_adapter::plugin::PluginPackage;

#[test]
fn mcp41_the_shipped_plugin_package_has_no_issues() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("agent-plugin");
    let package = PluginPackage::read(&dir);
    assert!(package.issues().is_empty(), "{:?}", package.issues());
    assert!(package.is_ready(), "{:?}", package.unavailable());
    let manifest = package.manifest().unwrap();
    assert_eq!(manifest.name, "notes");
    assert_eq!(manifest.display_name.as_deref(), Some("Notes"));
    let servers: Vec<_> = manifest.servers.keys().map(String::as_str).collect();
    assert_eq!(servers, ["notes"]);
    assert_eq!(
        manifest.servers["notes"].service,
        "org.capbridge.sample.notes.NotesMcpService"
    );
    let skills: Vec<_> = package.skills().iter().map(|s| s.name.as_str()).collect();
    assert_eq!(skills, ["notes"]);
    assert!(
        package.skills()[0]
            .description
            .starts_with("How to use the Notes tools")
    );
}
