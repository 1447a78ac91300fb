//! capbridge.toml (issue 8 item 4): lookup, precedence, and clear errors from the real binary.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::{Command, Output};

fn capbridge(dir: &std::path::Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_capbridge"))
        .args(args)
        .current_dir(dir)
        .env_remove("CAPBRIDGE_REGISTRY")
        .env_remove("CAPBRIDGE_CONSENT")
        .env("XDG_CONFIG_HOME", dir.join("xdg"))
        .output()
        .unwrap()
}

#[test]
fn an_unknown_key_is_a_clear_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("capbridge.toml"),
        "registry = \"r.json\"\nregsitry_typo = \"secret-value\"\n",
    )
    .unwrap();
    let o = capbridge(dir.path(), &["call", "notes/note_list"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("unknown key `regsitry_typo`"), "{err}");
    assert!(!err.contains("secret-value"), "{err}");
}

#[test]
fn a_model_key_in_the_file_is_refused_without_echoing_it() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("other.toml");
    std::fs::write(
        &f,
        "[model]\nurl = \"http://127.0.0.1:9\"\nkey = \"sk-do-not-print\"\n",
    )
    .unwrap();
    let o = capbridge(dir.path(), &["demo", "--config", f.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("CAPBRIDGE_MODEL_KEY"), "{err}");
    assert!(!err.contains("sk-do-not-print"), "{err}");
}

#[test]
fn registry_comes_from_the_file_and_the_flag_overrides_it() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("capbridge.toml"),
        "registry = \"from-file.json\"\n",
    )
    .unwrap();
    // The file's registry is used (and reported missing by name).
    let o = capbridge(dir.path(), &["call", "x/y"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("from-file.json"), "{err}");
    // The flag wins over the file.
    let o = capbridge(dir.path(), &["call", "--registry", "from-flag.json", "x/y"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("from-flag.json") && !err.contains("from-file.json"),
        "{err}"
    );
    // No config anywhere and no registry: one clear line.
    let empty = tempfile::tempdir().unwrap();
    let o = capbridge(empty.path(), &["call", "x/y"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("no host registry"), "{err}");
}
