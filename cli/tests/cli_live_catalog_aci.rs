//! `capbridge catalog` lists ACI providers beside MCP plugins (issue 7 item 3, ACI-40): the
//! sample ACI provider runs as its own process on an rsbinder RPC socket; the live catalog shows
//! its capabilities under the virtual plugin `aci.<package>`, and shows it `not running` (without
//! waking it) once it is gone.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// The sample ACI provider binary next to `capbridge` (built on demand).
fn aci_provider() -> PathBuf {
    let dir = Path::new(env!("CARGO_BIN_EXE_capbridge")).parent().unwrap();
    let bin = dir.join("aci-provider");
    if !bin.is_file() {
        let status = Command::new(env!("CARGO"))
            .args(["build", "-q", "-p", "aci-provider"])
            .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap())
            .status()
            .unwrap();
        assert!(status.success());
    }
    bin
}

struct Provider(Child);

impl Drop for Provider {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn catalog(registry: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_capbridge"))
        .args(["catalog", "--json", "--registry"])
        .arg(registry)
        .env("RUST_LOG", "warn")
        .output()
        .unwrap()
}

#[test]
fn the_live_catalog_lists_a_running_aci_provider_and_never_wakes_one() {
    let dir = tempfile::tempdir().unwrap();
    let digest = "ab".repeat(32);
    let uid = std::fs::metadata(dir.path()).unwrap().uid();
    let sock = dir.path().join("aci.sock");
    // The provider's own registry: who may call it (the controller runs as the same UID here).
    let callers = dir.path().join("callers.json");
    std::fs::write(
        &callers,
        json!({"version": 1, "packages": [{"uid": uid, "package": "org.agentos.app",
            "signingCertSha256": digest, "permissions": ["ai.aci.permission.CALL"]}]})
        .to_string(),
    )
    .unwrap();
    // The host registry capbridge reads: the provider's export (and a launch command that the
    // catalog must NOT run).
    let marker = dir.path().join("woken");
    let registry = dir.path().join("registry.json");
    std::fs::write(
        &registry,
        json!({"version": 1, "packages": [{"uid": uid, "package": "com.example.acidemo",
            "signingCertSha256": digest, "versionCode": 1,
            "exports": {"aci": {"actions": ["com.ai.assistance.aci.ACTION_BIND"], "socket": sock}},
            "launch": ["/usr/bin/touch", marker]}]})
        .to_string(),
    )
    .unwrap();

    let provider = Provider(
        Command::new(aci_provider())
            .args(["--socket", sock.to_str().unwrap(), "--data"])
            .arg(dir.path().join("data"))
            .arg("--registry")
            .arg(&callers)
            .env("RUST_LOG", "warn")
            .spawn()
            .unwrap(),
    );
    let t = Instant::now();
    while !sock.exists() {
        assert!(
            t.elapsed() < Duration::from_secs(30),
            "the provider never made its socket"
        );
        std::thread::sleep(Duration::from_millis(20));
    }

    let out = catalog(&registry);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let plugin = v["plugins"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["package"] == "com.example.acidemo")
        .expect("the ACI provider has a status line");
    assert_eq!(plugin["plugin"], "aci.com.example.acidemo");
    assert_eq!(plugin["status"], "ready");
    let tools = v["tools"].as_array().unwrap();
    let names: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
    assert!(
        names.contains(&"mcp__aci_com_example_acidemo__aciservice__device_info"),
        "{names:?}"
    );
    assert_eq!(plugin["tools"].as_u64().unwrap() as usize, names.len());

    drop(provider);
    let _ = std::fs::remove_file(&sock);
    let out = catalog(&registry);
    assert!(out.status.success());
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let plugin = &v["plugins"][0];
    assert_eq!(plugin["status"], "not_running", "{v}");
    assert!(v["tools"].as_array().unwrap().is_empty());
    assert!(
        !marker.exists(),
        "the catalog ran the provider's launch command"
    );
}
