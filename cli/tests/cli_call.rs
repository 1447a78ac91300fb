//! `capbridge call` (issue 8 item 4): one tool call through the live catalog and the
//! permissions pipeline, against the real sample notes plugin running as its own process.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output};
use std::time::{Duration, Instant};

/// The sample notes plugin binary next to `capbridge` (built on demand).
fn notes_plugin() -> PathBuf {
    let dir = Path::new(env!("CARGO_BIN_EXE_capbridge")).parent().unwrap();
    let bin = dir.join("notes-plugin");
    if !bin.is_file() {
        let status = Command::new(env!("CARGO"))
            .args(["build", "-q", "-p", "notes-plugin"])
            .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap())
            .status()
            .unwrap();
        assert!(status.success());
    }
    bin
}

struct Plugin {
    child: Child,
    dir: tempfile::TempDir,
}

impl Drop for Plugin {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start() -> Plugin {
    let dir = tempfile::tempdir().unwrap();
    let sock = dir.path().join("notes.sock");
    let child = Command::new(notes_plugin())
        .args(["--socket", sock.to_str().unwrap(), "--data"])
        .arg(dir.path().join("notes.json"))
        .env("RUST_LOG", "warn")
        .spawn()
        .unwrap();
    let t = Instant::now();
    while !sock.exists() {
        assert!(t.elapsed() < Duration::from_secs(20), "no socket");
        std::thread::sleep(Duration::from_millis(20));
    }
    use std::os::unix::fs::MetadataExt;
    let uid = std::fs::metadata(dir.path()).unwrap().uid();
    let digest = "ab".repeat(32);
    let plugin_dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .join("samples/notes-plugin/agent-plugin");
    let registry = serde_json::json!({"version": 1, "packages": [{
        "uid": uid, "package": "com.example.notes", "signingCertSha256": digest, "versionCode": 1,
        "exports": {"mcp": {"pluginDir": plugin_dir, "socket": sock}}}]});
    std::fs::write(dir.path().join("registry.json"), registry.to_string()).unwrap();
    let state = serde_json::json!({"version": 1, "plugins": [
        {"package": "com.example.notes", "signingCertSha256": digest, "enabled": true}]});
    std::fs::write(dir.path().join("plugin-state.json"), state.to_string()).unwrap();
    Plugin { child, dir }
}

fn call(p: &Plugin, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_capbridge"))
        .arg("call")
        .arg("--registry")
        .arg(p.dir.path())
        .args(args)
        .env("XDG_CONFIG_HOME", p.dir.path().join("no-config"))
        .current_dir(p.dir.path())
        .env_remove("CAPBRIDGE_CONSENT")
        .output()
        .unwrap()
}

#[test]
fn call_runs_a_tool_after_consent_and_refuses_when_denied() {
    let p = start();
    // PLUGIN/TOOL with consent allowed: the WRITE tool runs and its result is printed.
    let o = call(
        &p,
        &[
            "--consent",
            "allow",
            "notes/note_add",
            r#"{"title":"t1","content":"from capbridge call"}"#,
        ],
    );
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{out}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(out.contains("from capbridge call"), "{out}");

    // The model-facing name works too, and the note is there (state lives in the provider).
    let o = call(
        &p,
        &[
            "--consent",
            "allow",
            "--json",
            "mcp__notes__notes__note_list",
            "{}",
        ],
    );
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{out}");
    assert!(
        out.contains("from capbridge call") && out.contains("structuredContent"),
        "{out}"
    );

    // Denied consent: exit 3 with the agentos code, and nothing was written.
    let o = call(
        &p,
        &[
            "--consent",
            "deny",
            "notes/note_add",
            r#"{"content":"must not exist"}"#,
        ],
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(3), "{err}");
    assert!(err.contains("[agentos:tool_denied]"), "{err}");
    let o = call(&p, &["--consent", "allow", "notes/note_list"]);
    assert!(!String::from_utf8_lossy(&o.stdout).contains("must not exist"));

    // Schema violations and unknown tools are usage errors, never sent.
    let o = call(
        &p,
        &["--consent", "allow", "notes/note_add", r#"{"nope":1}"#],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("invalid arguments"));
    let o = call(&p, &["--consent", "allow", "notes/no_such_tool"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no tool named"));
}
