//! `capbridge catalog` with no files: the live catalog of a host registry. A real provider (an
//! `McpServer` served as `IMcpService` over rsbinder RPC on a Unix socket) runs in this test
//! process; the `capbridge` binary discovers it through a temp registry, connects (peer UID
//! checked), lists its tools and prints them, with one status line per plugin: ready,
//! disabled, needs re-confirmation, unavailable (with reason and issues), not running.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::process::{Command, Output};

use binder_channel::binder::{AdmitAll, ServiceKind, rpc_uri, serve_channels};
use capability_model::{Annotations, ToolOutput};
use mcp_adapter::McpServer;
use serde_json::{Value, json};

const DIGEST_A: &str = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
const DIGEST_B: &str = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";

fn write_plugin(dir: &Path, name: &str, server: &str) {
    std::fs::create_dir_all(dir.join("skills/notes-howto")).unwrap();
    std::fs::write(
        dir.join("plugin.json"),
        json!({
            "$schema": "https://agent-plugins.org/schemas/1.0.0/plugin.schema.json",
            "name": name,
            "version": "1.0.0",
            "extensions": {"org.agentos": {"mcpServers": {
                server: {"service": "org.example.notes.NotesMcpService"}}}}
        })
        .to_string(),
    )
    .unwrap();
    std::fs::write(
        dir.join("skills/notes-howto/SKILL.md"),
        "---\nname: notes-howto\ndescription: Search before adding.\n---\nBody\n",
    )
    .unwrap();
}

fn entry(uid: u32, package: &str, digest: &str, plugin_dir: &Path, socket: &Path) -> Value {
    json!({
        "uid": uid, "package": package, "signingCertSha256": digest, "versionCode": 1,
        "exports": {"mcp": {"pluginDir": plugin_dir, "socket": socket}}
    })
}

fn capbridge(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_capbridge"))
        .args(args)
        .env_remove("CAPBRIDGE_REGISTRY")
        .output()
        .unwrap()
}

fn notes_server() -> McpServer {
    McpServer::new("notes", |r| {
        r.tool(
            "note_add",
            Some("Add a note"),
            "Add a note.",
            json!({"type": "object", "properties": {"text": {"type": "string"}}}),
            Annotations::default(),
            |_, _| async { Ok(ToolOutput::text("ok")) },
        )?;
        r.tool(
            "note_search",
            Some("Search notes"),
            "Search notes.",
            json!({"type": "object"}),
            Annotations {
                read_only_hint: Some(true),
                ..Annotations::default()
            },
            |_, _| async { Ok(ToolOutput::text("[]")) },
        )?;
        Ok(())
    })
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_catalog_lists_a_running_plugin_and_reports_the_others() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let uid = std::fs::metadata(root).unwrap().uid();

    // 1. notes: enabled, running.
    let notes_dir = root.join("notes/agent-plugin");
    write_plugin(&notes_dir, "notes", "notes");
    let notes_sock = root.join("notes.sock");
    let (_guard, incoming) =
        serve_channels(rpc_uri(&notes_sock, "notes"), ServiceKind::Mcp, AdmitAll).unwrap();
    notes_server().serve_incoming(incoming);

    // 2. memo: valid but never enabled (third-party → disabled, MCP-50).
    let memo_dir = root.join("memo");
    write_plugin(&memo_dir, "memo", "memo");
    // 3. broken: an extra top-level field (MCP-41) → unavailable with the issue.
    let broken_dir = root.join("broken");
    std::fs::create_dir_all(&broken_dir).unwrap();
    std::fs::write(
        broken_dir.join("plugin.json"),
        r#"{"$schema":"https://agent-plugins.org/schemas/1.0.0/plugin.schema.json","name":"broken","extra":1}"#,
    )
    .unwrap();
    // 4. todo: enabled but not running (no socket).
    let todo_dir = root.join("todo");
    write_plugin(&todo_dir, "todo", "todo");
    // 5. resigned: enabled for another signing digest (MCP-51).
    let resigned_dir = root.join("resigned");
    write_plugin(&resigned_dir, "resigned", "resigned");

    let registry = json!({"version": 1, "packages": [
        entry(uid, "com.example.notes", DIGEST_A, &notes_dir, &notes_sock),
        entry(uid, "com.example.memo", DIGEST_A, &memo_dir, &root.join("memo.sock")),
        entry(uid, "com.example.broken", DIGEST_A, &broken_dir, &root.join("broken.sock")),
        entry(uid, "com.example.todo", DIGEST_A, &todo_dir, &root.join("todo.sock")),
        entry(uid, "com.example.resigned", DIGEST_B, &resigned_dir, &root.join("r.sock")),
    ]});
    std::fs::write(root.join("registry.json"), registry.to_string()).unwrap();
    std::fs::write(
        root.join("plugin-state.json"),
        json!({"version": 1, "plugins": [
            {"package": "com.example.notes", "signingCertSha256": DIGEST_A, "plugin": "notes"},
            {"package": "com.example.todo", "signingCertSha256": DIGEST_A},
            {"package": "com.example.resigned", "signingCertSha256": DIGEST_A},
        ]})
        .to_string(),
    )
    .unwrap();

    let dir_arg = root.to_str().unwrap().to_owned();
    let o = tokio::task::spawn_blocking(move || {
        capbridge(&["catalog", "--registry", &dir_arg, "--json"])
    })
    .await
    .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let names: Vec<&str> = v["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "mcp__notes__notes__note_add",
            "mcp__notes__notes__note_search"
        ]
    );
    let status = |plugin: &str| -> Value {
        v["plugins"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["package"] == plugin)
            .cloned()
            .unwrap_or_else(|| panic!("no status for {plugin}: {v}"))
    };
    let notes = status("com.example.notes");
    assert_eq!(notes["status"], "ready");
    assert_eq!(notes["tools"], 2);
    assert_eq!(notes["skills"], 1);
    assert_eq!(status("com.example.memo")["status"], "disabled");
    let broken = status("com.example.broken");
    assert_eq!(broken["status"], "unavailable");
    assert_eq!(broken["reason"], "MANIFEST_REJECTED");
    assert!(
        broken["issues"][0]
            .as_str()
            .unwrap()
            .contains("additionalProperties"),
        "{broken}"
    );
    assert_eq!(status("com.example.todo")["status"], "not_running");
    assert_eq!(
        status("com.example.resigned")["status"],
        "needs_reconfirmation"
    );

    // The table form, through `catalog show` without files and the environment variable.
    let file_arg = root.join("registry.json");
    let o = tokio::task::spawn_blocking(move || {
        Command::new(env!("CARGO_BIN_EXE_capbridge"))
            .args(["catalog", "show"])
            .env("CAPBRIDGE_REGISTRY", file_arg)
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(
        text.contains("plugin notes (com.example.notes): ready, 2 tools, 1 skills"),
        "{text}"
    );
    assert!(
        text.contains("plugin memo (com.example.memo): disabled"),
        "{text}"
    );
    assert!(
        text.contains("plugin todo (com.example.todo): not running"),
        "{text}"
    );
    assert!(text.contains("mcp__notes__notes__note_search"), "{text}");
    assert!(text.contains("2 tools, 0 left out"), "{text}");
}

#[test]
fn no_registry_is_exit_2_with_one_line() {
    let o = capbridge(&["catalog"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8(o.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("no registry"), "{err}");
    assert!(o.stdout.is_empty());
}

#[test]
fn unreadable_registry_is_exit_2() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("registry.json"), "{not json").unwrap();
    let o = capbridge(&["catalog", "--registry", tmp.path().to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8(o.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("malformed"), "{err}");
}

#[test]
fn a_socket_owned_by_another_uid_is_not_trusted() {
    // The registry says the plugin runs as another UID than the socket's owner: the client
    // refuses the peer (identity from the kernel, SO_PEERCRED), so the plugin is not running.
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let uid = std::fs::metadata(root).unwrap().uid();
    let dir = root.join("notes");
    write_plugin(&dir, "notes", "notes");
    let sock = root.join("notes.sock");
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let _guard = rt.block_on(async {
        let (guard, incoming) =
            serve_channels(rpc_uri(&sock, "notes"), ServiceKind::Mcp, AdmitAll).unwrap();
        notes_server().serve_incoming(incoming);
        guard
    });
    let other = uid.wrapping_add(4242);
    std::fs::write(
        root.join("registry.json"),
        json!({"version": 1, "packages": [entry(other, "com.example.notes", DIGEST_A, &dir, &sock)]})
            .to_string(),
    )
    .unwrap();
    std::fs::write(
        root.join("plugin-state.json"),
        json!({"version": 1, "bundled": ["com.example.notes"]}).to_string(),
    )
    .unwrap();
    let o = capbridge(&["catalog", "--registry", root.to_str().unwrap(), "--json"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["tools"], json!([]));
    assert_eq!(v["plugins"][0]["status"], "not_running", "{v}");
}
