//! The SQLite policy store: survives restarts, 0600 file in a 0700 directory, WAL, refuses a
//! newer schema and reports corruption without touching the data.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::os::unix::fs::PermissionsExt;

use capability_model::{CapabilityId, Source};
use permissions::store::{
    CallerRecord, CallerState, PolicyTarget, SCHEMA_VERSION, STORE_FILE_NAME,
};
use permissions::{CertDigest, Millis, PolicyStore, SqliteStore, StoreError};

fn record(pkg: &str, state: CallerState) -> CallerRecord {
    CallerRecord {
        package: pkg.into(),
        cert: CertDigest([7; 32]),
        state,
        decided_at: Millis(1_700_000_000_123),
        label: Some("Label 「x」".into()),
    }
}

#[test]
fn survives_restart() {
    let dir = tempfile::tempdir().unwrap();
    let store_dir = dir.path().join("perm");
    let tool = CapabilityId::mcp("notes", "notes", "note_add");
    let aci = CapabilityId::new(Source::Aci, "aci.com.x", "svc", "cap");
    {
        let mut s = SqliteStore::open(&store_dir).unwrap();
        s.put_caller(&record("com.a", CallerState::Allowed))
            .unwrap();
        s.put_caller(&record("com.b", CallerState::Denied)).unwrap();
        s.put_caller(&record("com.b", CallerState::Revoked))
            .unwrap(); // replaces
        s.put_caller(&record("com.c", CallerState::Allowed))
            .unwrap();
        s.remove_caller("com.c").unwrap();
        s.set_always_allow(&tool, true).unwrap();
        s.set_always_allow(&aci, true).unwrap();
        s.set_always_allow(&aci, false).unwrap();
        s.set_disabled(
            &PolicyTarget::Plugin {
                source: Source::Mcp,
                provider: "p".into(),
            },
            true,
        )
        .unwrap();
        s.set_disabled(
            &PolicyTarget::Server {
                source: Source::Mcp,
                provider: "p".into(),
                server: "s".into(),
            },
            true,
        )
        .unwrap();
        s.set_disabled(&PolicyTarget::Tool(aci.clone()), true)
            .unwrap();
    } // dropped: closed
    let s = SqliteStore::open(&store_dir).unwrap();
    let loaded = s.load().unwrap();
    assert_eq!(loaded.callers.len(), 2);
    assert_eq!(
        loaded.callers["com.a"],
        record("com.a", CallerState::Allowed)
    );
    assert_eq!(loaded.callers["com.b"].state, CallerState::Revoked);
    assert_eq!(loaded.always_allow.iter().collect::<Vec<_>>(), vec![&tool]);
    assert_eq!(loaded.disabled.len(), 3);
    assert!(loaded.disabled.contains(&PolicyTarget::Tool(aci.clone())));
    drop(s);
    // CAT-05: forgetting a triple deletes its policies.
    let mut s = SqliteStore::open(&store_dir).unwrap();
    s.forget_tool(&aci).unwrap();
    s.forget_tool(&tool).unwrap();
    drop(s);
    let loaded = SqliteStore::open(&store_dir).unwrap().load().unwrap();
    assert!(loaded.always_allow.is_empty());
    assert_eq!(loaded.disabled.len(), 2);
}

#[test]
fn file_0600_directory_0700_wal() {
    let dir = tempfile::tempdir().unwrap();
    let store_dir = dir.path().join("a/b/perm");
    let s = SqliteStore::open(&store_dir).unwrap();
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&store_dir), 0o700);
    assert_eq!(mode(s.path()), 0o600);
    drop(s);
    // An existing, too-open directory is tightened.
    std::fs::set_permissions(&store_dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut s = SqliteStore::open(&store_dir).unwrap();
    assert_eq!(mode(&store_dir), 0o700);
    s.put_caller(&record("com.a", CallerState::Allowed))
        .unwrap();
    let wal = store_dir.join(format!("{STORE_FILE_NAME}-wal"));
    assert!(wal.exists(), "journal mode is WAL");
    assert_eq!(mode(&wal) & 0o077, 0, "WAL file is private too");
}

#[test]
fn newer_schema_is_refused_and_left_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(STORE_FILE_NAME);
    {
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch(
            "CREATE TABLE future (x TEXT); INSERT INTO future VALUES ('keep me');
             PRAGMA user_version = 99;",
        )
        .unwrap();
    }
    let before = std::fs::read(&path).unwrap();
    let err = SqliteStore::open(dir.path()).unwrap_err();
    match &err {
        StoreError::NewerSchema {
            found, supported, ..
        } => {
            assert_eq!(*found, 99);
            assert_eq!(*supported, SCHEMA_VERSION);
        }
        other => panic!("unexpected {other:?}"),
    }
    let msg = err.to_string();
    assert!(
        msg.contains("schema version 99") && msg.contains("left untouched"),
        "{msg}"
    );
    assert_eq!(std::fs::read(&path).unwrap(), before, "not a byte changed");
    let conn = rusqlite::Connection::open(&path).unwrap();
    let v: String = conn
        .query_row("SELECT x FROM future", [], |r| r.get(0))
        .unwrap();
    assert_eq!(v, "keep me");
}

#[test]
fn corrupt_file_is_reported_and_left_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(STORE_FILE_NAME);
    let garbage: Vec<u8> = (0..8192u32).map(|i| (i * 31 % 251) as u8).collect();
    std::fs::write(&path, &garbage).unwrap();
    let err = SqliteStore::open(dir.path()).unwrap_err();
    assert!(matches!(err, StoreError::Corrupt { .. }), "{err:?}");
    assert!(err.to_string().contains("corrupt"), "{err}");
    assert_eq!(std::fs::read(&path).unwrap(), garbage);
}

#[test]
fn damaged_database_pages_are_reported() {
    let dir = tempfile::tempdir().unwrap();
    {
        let mut s = SqliteStore::open(dir.path()).unwrap();
        for i in 0..200 {
            s.put_caller(&record(&format!("com.pkg{i}"), CallerState::Allowed))
                .unwrap();
        }
    }
    // Checkpoint the WAL into the main file, find the callers table's root page and
    // scribble over it.
    let (root, page_size) = {
        let conn = rusqlite::Connection::open(dir.path().join(STORE_FILE_NAME)).unwrap();
        conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE); PRAGMA journal_mode=DELETE;")
            .unwrap();
        let root: i64 = conn
            .query_row(
                "SELECT rootpage FROM sqlite_master WHERE name = 'callers'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        let page_size: i64 = conn
            .query_row("PRAGMA page_size", [], |r| r.get(0))
            .unwrap();
        (
            usize::try_from(root).unwrap(),
            usize::try_from(page_size).unwrap(),
        )
    };
    let path = dir.path().join(STORE_FILE_NAME);
    let mut bytes = std::fs::read(&path).unwrap();
    let start = (root - 1) * page_size;
    for b in &mut bytes[start..start + page_size] {
        *b = 0xA5;
    }
    std::fs::write(&path, &bytes).unwrap();
    let err = SqliteStore::open(dir.path()).unwrap_err();
    assert!(matches!(err, StoreError::Corrupt { .. }), "{err:?}");
    assert_eq!(std::fs::read(&path).unwrap(), bytes);
}
