//! `capbridge demo` (issue 8 item 4, the README's main job): the real binary, end to end — the
//! sample notes plugin (MCP) and the sample ACI provider as processes, the fake model, the
//! in-process runtime, one ACP turn using both, clean shutdown.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::Command;

#[test]
fn demo_uses_an_mcp_tool_and_an_aci_capability_in_one_turn_and_cleans_up() {
    let out = Command::new(env!("CARGO_BIN_EXE_capbridge"))
        .arg("demo")
        // No real model from the environment of whoever runs the tests.
        .env_remove("CAPBRIDGE_MODEL_URL")
        .env_remove("CAPBRIDGE_MODEL")
        .env_remove("CAPBRIDGE_MODEL_KEY")
        .env("XDG_CONFIG_HOME", "/nonexistent")
        .current_dir(std::env::temp_dir())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "status {:?}\nstdout:\n{stdout}\nstderr:\n{stderr}",
        out.status
    );

    // Both tools were called and completed in the one turn, which ended normally.
    let completed: Vec<&str> = stdout
        .lines()
        .filter(|l| l.contains("tool_call_update") && l.contains("completed"))
        .collect();
    assert_eq!(completed.len(), 2, "{stdout}");
    assert!(stdout.contains("mcp__notes__notes__note_add"), "{stdout}");
    assert!(stdout.contains("device_info"), "{stdout}");
    assert!(
        stdout.contains("\"hostname\""),
        "device info result shown: {stdout}"
    );
    assert!(stdout.contains("← stopReason: end_turn"), "{stdout}");
    assert!(
        stdout.contains("2 tool calls, 2 completed, 0 failed; stop reason end_turn"),
        "{stdout}"
    );
    // Consent prompts are shown and answered by the labelled scripted user.
    assert!(stdout.contains("consent prompt #1"), "{stdout}");
    assert!(
        stdout.contains("[demo's scripted user] → allow once"),
        "{stdout}"
    );

    // Children killed and reaped, temp dir removed.
    let mut pids = Vec::new();
    for line in stdout.lines() {
        let words: Vec<&str> = line.split_whitespace().collect();
        if let Some(i) = words.iter().position(|w| *w == "pid")
            && (words[0] == "notes-plugin" || words[0] == "aci-provider")
        {
            pids.push(words[i + 1].parse::<u32>().unwrap());
        }
    }
    assert_eq!(pids.len(), 2, "{stdout}");
    for pid in pids {
        assert!(
            !Path::new(&format!("/proc/{pid}")).exists(),
            "provider process {pid} is still there"
        );
        assert!(
            stdout.contains(&format!("(pid {pid})")),
            "stop line for {pid}"
        );
    }
    let removed = stdout
        .lines()
        .find_map(|l| l.trim().strip_prefix("removed "))
        .expect("temp dir removal line");
    assert!(!Path::new(removed).exists(), "{removed} still exists");
}
