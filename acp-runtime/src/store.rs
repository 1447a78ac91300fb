//! Embedded SQLite storage: sessions, the session event log (what `session/load` replays,
//! ACP-14/ACP-42), the model-facing history, and tasks (ACP-53, ACP-56).
//!
//! The directory is created 0700 and the database file 0600. URLs and headers of per-session
//! MCP servers are never written here (SMS-05).

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{SystemTime, UNIX_EPOCH};

use rusqlite::{Connection, OptionalExtension, params};
use serde_json::Value;

use crate::errors::RuntimeError;

/// The database file name inside the data directory.
pub const DB_FILE_NAME: &str = "runtime.db";

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or_default()
}

/// A stored session row.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionRow {
    /// `ses_…`.
    pub id: String,
    /// Owner key (`app:<uid>`, `self`, `desktop`).
    pub owner: String,
    /// The `cwd` label.
    pub cwd: String,
    /// Stored toolScope (`ToolScope::to_stored`).
    pub scope: String,
    /// Stored mode wire id.
    pub mode: String,
    /// Model id.
    pub model: String,
    /// Title (first prompt line), if any.
    pub title: Option<String>,
    /// Last update, ms since epoch.
    pub updated_ms: i64,
}

/// A stored task: (state, stop reason, error code).
pub type TaskRow = (String, Option<String>, Option<String>);

/// Task states as stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskState {
    /// Admitted, waiting for the session's earlier task.
    Queued,
    /// Running.
    Running,
    /// Ended with a stop reason.
    Done,
    /// Ended with an error (`error_code`).
    Failed,
}

impl TaskState {
    fn as_str(self) -> &'static str {
        match self {
            TaskState::Queued => "queued",
            TaskState::Running => "running",
            TaskState::Done => "done",
            TaskState::Failed => "failed",
        }
    }
}

/// The store. Operations are short and synchronous behind one mutex.
#[derive(Debug)]
pub struct Store {
    conn: Mutex<Connection>,
    path: PathBuf,
}

fn lock(m: &Mutex<Connection>) -> MutexGuard<'_, Connection> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Creates `dir` with mode 0700 (tightening it if it exists).
pub fn prepare_private_dir(dir: &Path) -> Result<(), std::io::Error> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
        if !dir.exists() {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(dir)?;
        }
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
    }
    #[cfg(not(unix))]
    std::fs::create_dir_all(dir)?;
    Ok(())
}

impl Store {
    /// Opens (or creates) `runtime.db` in `dir`. Tasks left queued or running by an earlier
    /// process become failed with `abandoned`; they are never replayed (ACP-56).
    pub fn open(dir: &Path) -> Result<Self, RuntimeError> {
        prepare_private_dir(dir)?;
        let path = dir.join(DB_FILE_NAME);
        #[cfg(unix)]
        if !path.exists() {
            use std::os::unix::fs::OpenOptionsExt;
            std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(&path)?;
        }
        let conn = Connection::open(&path)?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600))?;
        }
        // WAL + synchronous=NORMAL: one fsync per checkpoint instead of several per write.
        // A process crash loses nothing; a power cut may lose the last few events, and tasks
        // that were running become `abandoned` at the next start anyway (ACP-56). The -wal and
        // -shm files get the database file's mode (0600) from SQLite.
        let _mode: String =
            conn.pragma_update_and_check(None, "journal_mode", "WAL", |row| row.get(0))?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        conn.execute_batch(
            "PRAGMA foreign_keys = ON;
             CREATE TABLE IF NOT EXISTS sessions (
                id TEXT PRIMARY KEY, owner TEXT NOT NULL, cwd TEXT NOT NULL,
                scope TEXT NOT NULL, mode TEXT NOT NULL, model TEXT NOT NULL,
                title TEXT, created_ms INTEGER NOT NULL, updated_ms INTEGER NOT NULL);
             CREATE TABLE IF NOT EXISTS events (
                session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
                seq INTEGER PRIMARY KEY AUTOINCREMENT, turn INTEGER NOT NULL, body TEXT NOT NULL);
             CREATE INDEX IF NOT EXISTS events_by_session ON events(session_id, seq);
             CREATE TABLE IF NOT EXISTS history (
                session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
                seq INTEGER PRIMARY KEY AUTOINCREMENT, body TEXT NOT NULL);
             CREATE INDEX IF NOT EXISTS history_by_session ON history(session_id, seq);
             CREATE TABLE IF NOT EXISTS tasks (
                id TEXT PRIMARY KEY,
                session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
                state TEXT NOT NULL, stop_reason TEXT, error_code TEXT,
                created_ms INTEGER NOT NULL, updated_ms INTEGER NOT NULL);",
        )?;
        let abandoned = conn.execute(
            "UPDATE tasks SET state = 'failed', error_code = 'abandoned', updated_ms = ?1
             WHERE state IN ('queued', 'running')",
            params![now_ms()],
        )?;
        if abandoned > 0 {
            tracing::warn!(
                tasks = abandoned,
                "unfinished tasks from an earlier run marked abandoned"
            );
        }
        Ok(Self {
            conn: Mutex::new(conn),
            path,
        })
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Inserts a session.
    pub fn insert_session(&self, row: &SessionRow) -> Result<(), rusqlite::Error> {
        lock(&self.conn).execute(
            "INSERT INTO sessions (id, owner, cwd, scope, mode, model, title, created_ms, updated_ms)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?8)",
            params![
                row.id, row.owner, row.cwd, row.scope, row.mode, row.model, row.title,
                row.updated_ms
            ],
        )?;
        Ok(())
    }

    /// Reads a session.
    pub fn session(&self, id: &str) -> Result<Option<SessionRow>, rusqlite::Error> {
        lock(&self.conn)
            .query_row(
                "SELECT id, owner, cwd, scope, mode, model, title, updated_ms
                 FROM sessions WHERE id = ?1",
                params![id],
                row_to_session,
            )
            .optional()
    }

    /// Sessions, newest first; `owner = None` lists every session (SELF, ACP-11).
    pub fn sessions(&self, owner: Option<&str>) -> Result<Vec<SessionRow>, rusqlite::Error> {
        let conn = lock(&self.conn);
        let mut stmt = conn.prepare(
            "SELECT id, owner, cwd, scope, mode, model, title, updated_ms FROM sessions
             WHERE ?1 IS NULL OR owner = ?1 ORDER BY updated_ms DESC, id DESC",
        )?;
        let rows = stmt.query_map(params![owner], row_to_session)?;
        rows.collect()
    }

    /// Updates mode, model or title.
    pub fn update_session(
        &self,
        id: &str,
        mode: Option<&str>,
        model: Option<&str>,
        title: Option<&str>,
    ) -> Result<(), rusqlite::Error> {
        lock(&self.conn).execute(
            "UPDATE sessions SET mode = COALESCE(?2, mode), model = COALESCE(?3, model),
             title = COALESCE(title, ?4), updated_ms = ?5 WHERE id = ?1",
            params![id, mode, model, title, now_ms()],
        )?;
        Ok(())
    }

    /// Deletes a session with its events, history and tasks (ACP-18).
    pub fn delete_session(&self, id: &str) -> Result<(), rusqlite::Error> {
        lock(&self.conn).execute("DELETE FROM sessions WHERE id = ?1", params![id])?;
        Ok(())
    }

    /// Appends one `session/update` body to the event log (before it is sent, ACP-42).
    pub fn append_event(
        &self,
        session: &str,
        turn: i64,
        body: &Value,
    ) -> Result<(), rusqlite::Error> {
        lock(&self.conn).execute(
            "INSERT INTO events (session_id, turn, body) VALUES (?1, ?2, ?3)",
            params![session, turn, body.to_string()],
        )?;
        Ok(())
    }

    /// Events of the most recent `max_turns` turns, in order (ACP-14).
    pub fn events(&self, session: &str, max_turns: usize) -> Result<Vec<Value>, rusqlite::Error> {
        let conn = lock(&self.conn);
        let mut stmt = conn.prepare(
            "SELECT body FROM events WHERE session_id = ?1 AND turn IN
               (SELECT DISTINCT turn FROM events WHERE session_id = ?1 ORDER BY turn DESC LIMIT ?2)
             ORDER BY seq",
        )?;
        let rows = stmt.query_map(params![session, max_turns as i64], |r| {
            r.get::<_, String>(0)
        })?;
        let mut out = Vec::new();
        for body in rows {
            if let Ok(v) = serde_json::from_str(&body?) {
                out.push(v);
            }
        }
        Ok(out)
    }

    /// Copies events and history of `from` into `to` (fork).
    pub fn copy_log(&self, from: &str, to: &str) -> Result<(), rusqlite::Error> {
        let conn = lock(&self.conn);
        conn.execute(
            "INSERT INTO events (session_id, turn, body)
             SELECT ?2, turn, body FROM events WHERE session_id = ?1 ORDER BY seq",
            params![from, to],
        )?;
        conn.execute(
            "INSERT INTO history (session_id, body)
             SELECT ?2, body FROM history WHERE session_id = ?1 ORDER BY seq",
            params![from, to],
        )?;
        Ok(())
    }

    /// The next turn number of a session.
    pub fn next_turn(&self, session: &str) -> Result<i64, rusqlite::Error> {
        lock(&self.conn).query_row(
            "SELECT COALESCE(MAX(turn), 0) + 1 FROM events WHERE session_id = ?1",
            params![session],
            |r| r.get(0),
        )
    }

    /// Appends model-facing history entries.
    pub fn append_history(&self, session: &str, entries: &[Value]) -> Result<(), rusqlite::Error> {
        let mut conn = lock(&self.conn);
        let tx = conn.transaction()?;
        for e in entries {
            tx.execute(
                "INSERT INTO history (session_id, body) VALUES (?1, ?2)",
                params![session, e.to_string()],
            )?;
        }
        tx.commit()
    }

    /// The model-facing history.
    pub fn history(&self, session: &str) -> Result<Vec<Value>, rusqlite::Error> {
        let conn = lock(&self.conn);
        let mut stmt =
            conn.prepare("SELECT body FROM history WHERE session_id = ?1 ORDER BY seq")?;
        let rows = stmt.query_map(params![session], |r| r.get::<_, String>(0))?;
        let mut out = Vec::new();
        for body in rows {
            if let Ok(v) = serde_json::from_str(&body?) {
                out.push(v);
            }
        }
        Ok(out)
    }

    /// Records a new task.
    pub fn insert_task(
        &self,
        id: &str,
        session: &str,
        state: TaskState,
    ) -> Result<(), rusqlite::Error> {
        let now = now_ms();
        lock(&self.conn).execute(
            "INSERT INTO tasks (id, session_id, state, created_ms, updated_ms) VALUES (?1, ?2, ?3, ?4, ?4)",
            params![id, session, state.as_str(), now],
        )?;
        Ok(())
    }

    /// Updates a task's state.
    pub fn set_task(
        &self,
        id: &str,
        state: TaskState,
        stop_reason: Option<&str>,
        error_code: Option<&str>,
    ) -> Result<(), rusqlite::Error> {
        lock(&self.conn).execute(
            "UPDATE tasks SET state = ?2, stop_reason = ?3, error_code = ?4, updated_ms = ?5 WHERE id = ?1",
            params![id, state.as_str(), stop_reason, error_code, now_ms()],
        )?;
        Ok(())
    }

    /// A task's (state, stop reason, error code).
    pub fn task(&self, id: &str) -> Result<Option<TaskRow>, rusqlite::Error> {
        lock(&self.conn)
            .query_row(
                "SELECT state, stop_reason, error_code FROM tasks WHERE id = ?1",
                params![id],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .optional()
    }
}

fn row_to_session(r: &rusqlite::Row<'_>) -> Result<SessionRow, rusqlite::Error> {
    Ok(SessionRow {
        id: r.get(0)?,
        owner: r.get(1)?,
        cwd: r.get(2)?,
        scope: r.get(3)?,
        mode: r.get(4)?,
        model: r.get(5)?,
        title: r.get(6)?,
        updated_ms: r.get(7)?,
    })
}
