//! The notes and their file: a JSON document replaced atomically (write a temporary file in
//! the same directory, flush it to disk, rename it over the old one), so a crash at any point
//! leaves either the old state or the new one, never a torn file.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

/// One note.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Note {
    pub(crate) id: u64,
    pub(crate) title: String,
    pub(crate) content: String,
    pub(crate) tags: Vec<String>,
    pub(crate) archived: bool,
    /// In the trash: hidden from list and search, restorable with `note_restore`.
    pub(crate) trashed: bool,
    /// RFC 3339, UTC, second precision.
    pub(crate) created_at: String,
    pub(crate) updated_at: String,
}

/// Everything the plugin keeps.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Notes {
    /// Format version of the file.
    pub(crate) version: u32,
    pub(crate) next_id: u64,
    pub(crate) notes: Vec<Note>,
}

impl Default for Notes {
    fn default() -> Notes {
        Notes {
            version: 1,
            next_id: 1,
            notes: Vec::new(),
        }
    }
}

/// Why the data file could not be read or written.
#[derive(Debug, thiserror::Error)]
pub(crate) enum StoreError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path} is not a notes file: {source}")]
    Parse {
        path: PathBuf,
        source: serde_json::Error,
    },
    #[error("cannot write {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// The notes file.
#[derive(Debug, Clone)]
pub(crate) struct NotesFile {
    path: PathBuf,
}

impl NotesFile {
    pub(crate) fn new(path: impl Into<PathBuf>) -> NotesFile {
        NotesFile { path: path.into() }
    }

    /// The notes in the file; an absent file is an empty notebook.
    pub(crate) fn load(&self) -> Result<Notes, StoreError> {
        let text = match fs::read_to_string(&self.path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Notes::default()),
            Err(source) => {
                return Err(StoreError::Read {
                    path: self.path.clone(),
                    source,
                });
            }
        };
        serde_json::from_str(&text).map_err(|source| StoreError::Parse {
            path: self.path.clone(),
            source,
        })
    }

    /// Replaces the file with `notes`: temporary file, fsync, rename, fsync of the directory.
    pub(crate) fn save(&self, notes: &Notes) -> Result<(), StoreError> {
        let write_error = |source| StoreError::Write {
            path: self.path.clone(),
            source,
        };
        let dir = match self.path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let name = self
            .path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "notes.json".to_owned());
        let temp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
        let text = serde_json::to_vec_pretty(notes).map_err(|e| write_error(e.into()))?;
        let result = (|| {
            let mut file = fs::File::create(&temp)?;
            file.write_all(&text)?;
            file.sync_all()?;
            fs::rename(&temp, &self.path)?;
            sync_dir(&dir)
        })();
        if result.is_err() {
            let _ = fs::remove_file(&temp);
        }
        result.map_err(write_error)
    }
}

fn sync_dir(dir: &Path) -> std::io::Result<()> {
    fs::File::open(dir)?.sync_all()
}

/// Now as RFC 3339 UTC (`2026-11-29T14:05:09Z`).
pub(crate) fn now_rfc3339() -> String {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    rfc3339(secs)
}

/// Seconds since the Unix epoch as RFC 3339 UTC (the proleptic Gregorian calendar).
pub(crate) fn rfc3339(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3_600,
        rem % 3_600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn rfc3339_known_instants() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339(1_798_552_509), "2026-12-29T13:55:09Z");
    }

    #[test]
    fn save_then_load_round_trips_and_leaves_no_temp_file() {
        let dir = tempfile::tempdir().unwrap();
        let file = NotesFile::new(dir.path().join("notes.json"));
        assert_eq!(file.load().unwrap(), Notes::default());
        let mut notes = Notes::default();
        notes.notes.push(Note {
            id: 1,
            title: "Shopping".into(),
            content: "milk".into(),
            tags: vec!["home".into()],
            archived: false,
            trashed: false,
            created_at: rfc3339(0),
            updated_at: rfc3339(0),
        });
        notes.next_id = 2;
        file.save(&notes).unwrap();
        assert_eq!(file.load().unwrap(), notes);
        let entries: Vec<_> = fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(entries.len(), 1, "only notes.json remains");
    }

    #[test]
    fn a_corrupt_file_is_an_error_not_an_empty_notebook() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("notes.json");
        fs::write(&path, "{not json").unwrap();
        assert!(matches!(
            NotesFile::new(&path).load(),
            Err(StoreError::Parse { .. })
        ));
    }
}
