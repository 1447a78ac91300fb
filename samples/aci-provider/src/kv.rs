//! The file-backed key–value store: one JSON object in `DATA/kv.json`, rewritten atomically
//! (temporary file + rename) on every change, guarded by one lock.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use tokio::sync::Mutex;

/// Longest key, bytes (`[A-Za-z0-9_.-]`).
pub(crate) const KEY_MAX: usize = 128;
/// Largest value, UTF-8 bytes.
pub(crate) const VALUE_MAX: usize = 64 * 1024;
/// Most keys kept.
pub(crate) const KEYS_MAX: usize = 10_000;

/// Why a store operation failed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum KvError {
    /// The key is empty, too long or has characters outside `[A-Za-z0-9_.-]`.
    #[error("the key must be 1 to 128 characters of letters, digits, '_', '.' or '-'")]
    BadKey,
    /// The value is larger than [`VALUE_MAX`].
    #[error("the value is larger than 65536 bytes")]
    TooLarge,
    /// The store already holds [`KEYS_MAX`] keys.
    #[error("the store is full")]
    Full,
    /// The file could not be read or written.
    #[error("the store file could not be accessed")]
    Io(#[from] std::io::Error),
    /// The file is not a JSON object of strings.
    #[error("the store file is corrupt")]
    Corrupt,
}

/// The store.
#[derive(Debug)]
pub(crate) struct KvStore {
    path: PathBuf,
    lock: Mutex<()>,
}

fn check_key(key: &str) -> Result<(), KvError> {
    let ok = !key.is_empty()
        && key.len() <= KEY_MAX
        && key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'));
    if ok { Ok(()) } else { Err(KvError::BadKey) }
}

impl KvStore {
    /// A store in `dir`.
    pub(crate) fn new(dir: &Path) -> Self {
        Self {
            path: dir.join("kv.json"),
            lock: Mutex::new(()),
        }
    }

    async fn load(&self) -> Result<BTreeMap<String, String>, KvError> {
        match tokio::fs::read(&self.path).await {
            Ok(bytes) => serde_json::from_slice(&bytes).map_err(|_| KvError::Corrupt),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(BTreeMap::new()),
            Err(e) => Err(e.into()),
        }
    }

    async fn save(&self, map: &BTreeMap<String, String>) -> Result<(), KvError> {
        let tmp = self.path.with_extension("json.tmp");
        let bytes = serde_json::to_vec(map).map_err(|_| KvError::Corrupt)?;
        tokio::fs::write(&tmp, bytes).await?;
        tokio::fs::rename(&tmp, &self.path).await?;
        Ok(())
    }

    /// The value of `key`.
    pub(crate) async fn get(&self, key: &str) -> Result<Option<String>, KvError> {
        check_key(key)?;
        let _g = self.lock.lock().await;
        Ok(self.load().await?.get(key).cloned())
    }

    /// Sets `key`; `true` when it replaced a value.
    pub(crate) async fn put(&self, key: &str, value: &str) -> Result<bool, KvError> {
        check_key(key)?;
        if value.len() > VALUE_MAX {
            return Err(KvError::TooLarge);
        }
        let _g = self.lock.lock().await;
        let mut map = self.load().await?;
        if !map.contains_key(key) && map.len() >= KEYS_MAX {
            return Err(KvError::Full);
        }
        let replaced = map.insert(key.to_owned(), value.to_owned()).is_some();
        self.save(&map).await?;
        Ok(replaced)
    }

    /// Keys starting with `prefix`, sorted.
    pub(crate) async fn list(&self, prefix: &str) -> Result<Vec<String>, KvError> {
        let _g = self.lock.lock().await;
        Ok(self
            .load()
            .await?
            .into_keys()
            .filter(|k| k.starts_with(prefix))
            .collect())
    }

    /// Removes `key`; `true` when it existed.
    pub(crate) async fn delete(&self, key: &str) -> Result<bool, KvError> {
        check_key(key)?;
        let _g = self.lock.lock().await;
        let mut map = self.load().await?;
        let existed = map.remove(key).is_some();
        if existed {
            self.save(&map).await?;
        }
        Ok(existed)
    }
}
