//! `capbridge catalog show`: ACI and MCP descriptions in one catalog.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::process::Command;

fn samples() -> Vec<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../samples/catalog");
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    v.sort();
    v
}

#[test]
fn sample_catalog_mixes_aci_and_mcp() {
    let o = Command::new(env!("CARGO_BIN_EXE_capbridge"))
        .args(["catalog", "show", "--json"])
        .args(samples())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        o.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let entries = v.as_array().unwrap();
    let sources: std::collections::HashSet<&str> = entries
        .iter()
        .map(|e| e["source"].as_str().unwrap())
        .collect();
    assert!(sources.contains("aci") && sources.contains("mcp"));
    let http = entries
        .iter()
        .find(|e| e["name"] == "mcp__aci_com_example_netkit__netkitservice__http_request")
        .unwrap();
    assert_eq!(http["risk"], "high");
    assert_eq!(http["annotations"]["openWorldHint"], true);
    let list = entries
        .iter()
        .find(|e| e["name"] == "mcp__com_example_notes__main__list")
        .unwrap();
    assert_eq!(list["risk"], "write"); // CAT-61: readOnlyHint does not lower a third-party tool
    assert!(
        entries
            .iter()
            .any(|e| e["name"] == "mcp__org_example_calendar__calendar__event_list")
    );
}

#[test]
fn table_lists_every_tool() {
    let o = Command::new(env!("CARGO_BIN_EXE_capbridge"))
        .args(["catalog", "show"])
        .args(samples())
        .output()
        .unwrap();
    assert!(o.status.success());
    let out = String::from_utf8(o.stdout).unwrap();
    assert!(out.starts_with("NAME"));
    assert!(out.contains("mcp__com_example_notes__main__empty_trash"));
    assert!(out.lines().last().unwrap().ends_with("0 left out"));
}

#[test]
fn bad_files_are_reported_and_the_rest_still_builds() {
    let dir = tempfile::tempdir().unwrap();
    let bad_json = dir.path().join("broken@x.json");
    std::fs::write(&bad_json, "{ nope").unwrap();
    let deep = dir.path().join("deep.json");
    std::fs::write(
        &deep,
        format!("{}{}", "[".repeat(10_000), "]".repeat(10_000)),
    )
    .unwrap();
    let mixed = dir.path().join("com.mixed@Svc.json");
    std::fs::write(
        &mixed,
        r#"[{"id":"ok","description":"Fine."},{},{"id":"x","description":"1.0"},{"id":"ok2","description":"Also fine.","params":[{"name":"a","type":"int"}]}]"#,
    )
    .unwrap();
    let dup = dir.path().join("dup.json");
    std::fs::write(
        &dup,
        r#"{"plugin":"com.example.notes","server":"main","tools":[{"name":"list","inputSchema":{"type":"object"}}]}"#,
    )
    .unwrap();
    let missing = dir.path().join("missing.json");
    let o = Command::new(env!("CARGO_BIN_EXE_capbridge"))
        .args(["catalog", "show", "--json"])
        .args(samples())
        .args([&bad_json, &deep, &mixed, &dup, &missing])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8(o.stderr).unwrap();
    assert!(err.contains("broken@x.json: malformed JSON"), "{err}");
    assert!(err.contains("deep.json: malformed JSON"), "{err}");
    assert!(err.contains("missing.json: cannot read"), "{err}");
    assert!(err.contains("malformed_entry [#1]"), "{err}");
    assert!(err.contains("bad_description [#2]"), "{err}");
    assert!(err.contains("duplicate_name"), "{err}");
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let names: Vec<&str> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"mcp__aci_com_mixed__svc__ok"));
    assert!(names.contains(&"mcp__aci_com_mixed__svc__ok2"));
    // The duplicated notes `list` is left out everywhere; the other notes tools stay.
    assert!(!names.contains(&"mcp__com_example_notes__main__list"));
    assert!(names.contains(&"mcp__com_example_notes__main__add"));
}
