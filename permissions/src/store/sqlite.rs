//! The SQLite [`PolicyStore`]: one file, mode 0600, in a directory of mode 0700; WAL; schema
//! versioned with `PRAGMA user_version`.
//!
//! Opening never modifies a file it cannot use: the file is first probed through a read-only
//! connection, and a corrupt file or one from a newer schema is reported and left untouched.

use std::fs;
use std::path::{Path, PathBuf};

use capability_model::{CapabilityId, Source};
use rusqlite::{Connection, ErrorCode, OpenFlags, params};

use super::{CallerRecord, CallerState, PolicyStore, PolicyTarget, StoreError, StoredPolicy};
use crate::clock::Millis;
use crate::identity::CertDigest;

/// The schema version this build writes and reads.
pub const SCHEMA_VERSION: i64 = 1;
/// The database file name inside the store directory.
pub const STORE_FILE_NAME: &str = "permissions.sqlite3";

const SCHEMA_V1: &str = "
CREATE TABLE callers (
    package     TEXT PRIMARY KEY NOT NULL,
    cert_sha256 TEXT NOT NULL,
    state       TEXT NOT NULL,
    decided_at  INTEGER NOT NULL,
    label       TEXT
);
CREATE TABLE disabled (
    kind     TEXT NOT NULL,
    source   TEXT NOT NULL,
    provider TEXT NOT NULL,
    server   TEXT NOT NULL,
    tool     TEXT NOT NULL,
    PRIMARY KEY (kind, source, provider, server, tool)
);
CREATE TABLE always_allow (
    source   TEXT NOT NULL,
    provider TEXT NOT NULL,
    server   TEXT NOT NULL,
    tool     TEXT NOT NULL,
    PRIMARY KEY (source, provider, server, tool)
);
";

/// A [`PolicyStore`] in an SQLite file.
#[derive(Debug)]
pub struct SqliteStore {
    conn: Connection,
    path: PathBuf,
}

impl SqliteStore {
    /// Opens (or creates) the store in `dir`, which is created with mode 0700 (and tightened to
    /// 0700 if it exists: the directory belongs to the store). The file is
    /// [`STORE_FILE_NAME`], mode 0600.
    pub fn open(dir: &Path) -> Result<Self, StoreError> {
        prepare_dir(dir)?;
        let path = dir.join(STORE_FILE_NAME);
        let shown = path.display().to_string();
        if path.exists() {
            probe_existing(&path, &shown)?;
        } else {
            create_private_file(&path, &shown)?;
        }
        set_mode(&path, 0o600, &shown)?;
        let conn = Connection::open(&path).map_err(|e| classify(e, &shown))?;
        let store = Self { conn, path };
        store.init(&shown)?;
        Ok(store)
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn init(&self, shown: &str) -> Result<(), StoreError> {
        let mode: String = self
            .conn
            .query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))
            .map_err(|e| classify(e, shown))?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(StoreError::Database(format!(
                "journal mode is {mode}, expected wal"
            )));
        }
        self.conn
            .execute_batch("PRAGMA synchronous=FULL; PRAGMA busy_timeout=5000;")
            .map_err(|e| classify(e, shown))?;
        let version = user_version(&self.conn).map_err(|e| classify(e, shown))?;
        match version {
            0 => {
                let tx = self
                    .conn
                    .unchecked_transaction()
                    .map_err(|e| classify(e, shown))?;
                tx.execute_batch(SCHEMA_V1)
                    .map_err(|e| classify(e, shown))?;
                tx.execute_batch(&format!("PRAGMA user_version = {SCHEMA_VERSION}"))
                    .map_err(|e| classify(e, shown))?;
                tx.commit().map_err(|e| classify(e, shown))?;
                Ok(())
            }
            SCHEMA_VERSION => Ok(()),
            found if found > SCHEMA_VERSION => Err(StoreError::NewerSchema {
                path: shown.to_owned(),
                found,
                supported: SCHEMA_VERSION,
            }),
            found => Err(StoreError::Corrupt {
                path: shown.to_owned(),
                detail: format!("invalid schema version {found}"),
            }),
        }
    }

    fn db_err(&self, e: rusqlite::Error) -> StoreError {
        classify(e, &self.path.display().to_string())
    }
}

fn user_version(conn: &Connection) -> rusqlite::Result<i64> {
    conn.query_row("PRAGMA user_version", [], |r| r.get(0))
}

/// Checks an existing file through a read-only connection: readable, intact, not newer.
fn probe_existing(path: &Path, shown: &str) -> Result<(), StoreError> {
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|e| classify(e, shown))?;
    let version = user_version(&conn).map_err(|e| classify(e, shown))?;
    if version > SCHEMA_VERSION {
        return Err(StoreError::NewerSchema {
            path: shown.to_owned(),
            found: version,
            supported: SCHEMA_VERSION,
        });
    }
    let check: String = conn
        .query_row("PRAGMA quick_check", [], |r| r.get(0))
        .map_err(|e| classify(e, shown))?;
    if check != "ok" {
        return Err(StoreError::Corrupt {
            path: shown.to_owned(),
            detail: "integrity check failed".to_owned(),
        });
    }
    Ok(())
}

fn classify(e: rusqlite::Error, shown: &str) -> StoreError {
    match e.sqlite_error_code() {
        Some(ErrorCode::NotADatabase) | Some(ErrorCode::DatabaseCorrupt) => StoreError::Corrupt {
            path: shown.to_owned(),
            detail: e.to_string(),
        },
        _ => StoreError::Database(e.to_string()),
    }
}

#[cfg(unix)]
fn prepare_dir(dir: &Path) -> Result<(), StoreError> {
    use std::os::unix::fs::DirBuilderExt;
    let shown = dir.display().to_string();
    if !dir.exists() {
        fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(|source| StoreError::Io {
                path: shown.clone(),
                source,
            })?;
    }
    set_mode(dir, 0o700, &shown)
}

#[cfg(not(unix))]
fn prepare_dir(dir: &Path) -> Result<(), StoreError> {
    fs::create_dir_all(dir).map_err(|source| StoreError::Io {
        path: dir.display().to_string(),
        source,
    })
}

#[cfg(unix)]
fn create_private_file(path: &Path, shown: &str) -> Result<(), StoreError> {
    use std::os::unix::fs::OpenOptionsExt;
    fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .map(drop)
        .map_err(|source| StoreError::Io {
            path: shown.to_owned(),
            source,
        })
}

#[cfg(not(unix))]
fn create_private_file(path: &Path, shown: &str) -> Result<(), StoreError> {
    fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .map(drop)
        .map_err(|source| StoreError::Io {
            path: shown.to_owned(),
            source,
        })
}

#[cfg(unix)]
fn set_mode(path: &Path, mode: u32, shown: &str) -> Result<(), StoreError> {
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(path, fs::Permissions::from_mode(mode)).map_err(|source| StoreError::Io {
        path: shown.to_owned(),
        source,
    })
}

#[cfg(not(unix))]
fn set_mode(_path: &Path, _mode: u32, _shown: &str) -> Result<(), StoreError> {
    Ok(())
}

fn target_row(t: &PolicyTarget) -> (&'static str, &'static str, &str, &str, &str) {
    match t {
        PolicyTarget::Plugin { source, provider } => ("plugin", source.as_str(), provider, "", ""),
        PolicyTarget::Server {
            source,
            provider,
            server,
        } => ("server", source.as_str(), provider, server, ""),
        PolicyTarget::Tool(id) => (
            "tool",
            id.source.as_str(),
            &id.provider,
            &id.server,
            &id.name,
        ),
    }
}

fn corrupt_row(path: &Path, what: &str) -> StoreError {
    StoreError::Corrupt {
        path: path.display().to_string(),
        detail: format!("unreadable {what} row"),
    }
}

impl PolicyStore for SqliteStore {
    fn load(&self) -> Result<StoredPolicy, StoreError> {
        let mut out = StoredPolicy::default();
        let mut stmt = self
            .conn
            .prepare("SELECT package, cert_sha256, state, decided_at, label FROM callers")
            .map_err(|e| self.db_err(e))?;
        let rows = stmt
            .query_map([], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, i64>(3)?,
                    r.get::<_, Option<String>>(4)?,
                ))
            })
            .map_err(|e| self.db_err(e))?;
        for row in rows {
            let (package, cert, state, at, label) = row.map_err(|e| self.db_err(e))?;
            let cert = CertDigest::parse(&cert).map_err(|_| corrupt_row(&self.path, "caller"))?;
            let state =
                CallerState::parse(&state).ok_or_else(|| corrupt_row(&self.path, "caller"))?;
            let at = u64::try_from(at).map_err(|_| corrupt_row(&self.path, "caller"))?;
            out.callers.insert(
                package.clone(),
                CallerRecord {
                    package,
                    cert,
                    state,
                    decided_at: Millis(at),
                    label,
                },
            );
        }

        let mut stmt = self
            .conn
            .prepare("SELECT kind, source, provider, server, tool FROM disabled")
            .map_err(|e| self.db_err(e))?;
        let rows = stmt
            .query_map([], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, String>(3)?,
                    r.get::<_, String>(4)?,
                ))
            })
            .map_err(|e| self.db_err(e))?;
        for row in rows {
            let (kind, source, provider, server, tool) = row.map_err(|e| self.db_err(e))?;
            let source = source
                .parse::<Source>()
                .map_err(|_| corrupt_row(&self.path, "disabled"))?;
            let target = match kind.as_str() {
                "plugin" => PolicyTarget::Plugin { source, provider },
                "server" => PolicyTarget::Server {
                    source,
                    provider,
                    server,
                },
                "tool" => PolicyTarget::Tool(CapabilityId::new(source, provider, server, tool)),
                _ => return Err(corrupt_row(&self.path, "disabled")),
            };
            out.disabled.insert(target);
        }

        let mut stmt = self
            .conn
            .prepare("SELECT source, provider, server, tool FROM always_allow")
            .map_err(|e| self.db_err(e))?;
        let rows = stmt
            .query_map([], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, String>(3)?,
                ))
            })
            .map_err(|e| self.db_err(e))?;
        for row in rows {
            let (source, provider, server, tool) = row.map_err(|e| self.db_err(e))?;
            let source = source
                .parse::<Source>()
                .map_err(|_| corrupt_row(&self.path, "always_allow"))?;
            out.always_allow
                .insert(CapabilityId::new(source, provider, server, tool));
        }
        Ok(out)
    }

    fn put_caller(&mut self, record: &CallerRecord) -> Result<(), StoreError> {
        let at = i64::try_from(record.decided_at.0).unwrap_or(i64::MAX);
        self.conn
            .execute(
                "INSERT INTO callers (package, cert_sha256, state, decided_at, label)
                 VALUES (?1, ?2, ?3, ?4, ?5)
                 ON CONFLICT(package) DO UPDATE SET cert_sha256 = excluded.cert_sha256,
                   state = excluded.state, decided_at = excluded.decided_at, label = excluded.label",
                params![
                    record.package,
                    record.cert.to_hex(),
                    record.state.as_str(),
                    at,
                    record.label
                ],
            )
            .map(drop)
            .map_err(|e| self.db_err(e))
    }

    fn remove_caller(&mut self, package: &str) -> Result<(), StoreError> {
        self.conn
            .execute("DELETE FROM callers WHERE package = ?1", params![package])
            .map(drop)
            .map_err(|e| self.db_err(e))
    }

    fn set_disabled(&mut self, target: &PolicyTarget, disabled: bool) -> Result<(), StoreError> {
        let (kind, source, provider, server, tool) = target_row(target);
        let sql = if disabled {
            "INSERT OR IGNORE INTO disabled (kind, source, provider, server, tool)
             VALUES (?1, ?2, ?3, ?4, ?5)"
        } else {
            "DELETE FROM disabled WHERE kind = ?1 AND source = ?2 AND provider = ?3
             AND server = ?4 AND tool = ?5"
        };
        self.conn
            .execute(sql, params![kind, source, provider, server, tool])
            .map(drop)
            .map_err(|e| self.db_err(e))
    }

    fn set_always_allow(&mut self, id: &CapabilityId, on: bool) -> Result<(), StoreError> {
        let sql = if on {
            "INSERT OR IGNORE INTO always_allow (source, provider, server, tool)
             VALUES (?1, ?2, ?3, ?4)"
        } else {
            "DELETE FROM always_allow WHERE source = ?1 AND provider = ?2 AND server = ?3
             AND tool = ?4"
        };
        self.conn
            .execute(
                sql,
                params![id.source.as_str(), id.provider, id.server, id.name],
            )
            .map(drop)
            .map_err(|e| self.db_err(e))
    }

    fn forget_tool(&mut self, id: &CapabilityId) -> Result<(), StoreError> {
        let tx = self
            .conn
            .unchecked_transaction()
            .map_err(|e| self.db_err(e))?;
        tx.execute(
            "DELETE FROM always_allow WHERE source = ?1 AND provider = ?2 AND server = ?3
             AND tool = ?4",
            params![id.source.as_str(), id.provider, id.server, id.name],
        )
        .map_err(|e| self.db_err(e))?;
        tx.execute(
            "DELETE FROM disabled WHERE kind = 'tool' AND source = ?1 AND provider = ?2
             AND server = ?3 AND tool = ?4",
            params![id.source.as_str(), id.provider, id.server, id.name],
        )
        .map_err(|e| self.db_err(e))?;
        tx.commit().map_err(|e| self.db_err(e))
    }
}
