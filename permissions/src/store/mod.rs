//! Persisted decisions and user policy behind the [`PolicyStore`] trait.
//!
//! What persists: caller authorization decisions (AUT-02 "Decisions persist"), per-target
//! enable/disable and per-triple "always allow" (CAT-05, CAT-68, CNS-03). What does not: pending
//! prompts, per-session "don't ask again" grants, quota counters (QTA-05).

mod sqlite;

use std::collections::{BTreeMap, BTreeSet};

use capability_model::{CapabilityId, Source};
use serde::{Deserialize, Serialize};

use crate::clock::Millis;
use crate::identity::CertDigest;

pub use sqlite::{SCHEMA_VERSION, STORE_FILE_NAME, SqliteStore};

/// The persisted state of one caller (keyed by package; the digest is part of the decision).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CallerState {
    /// The user allowed this (package, digest).
    Allowed,
    /// The user denied it (or nobody answered within 90 s); cooldown from `decided_at`.
    Denied,
    /// The user revoked a previous allow in settings; `open` answers `denied` until the user
    /// allows or removes it again.
    Revoked,
}

impl CallerState {
    /// Stable storage label.
    pub fn as_str(self) -> &'static str {
        match self {
            CallerState::Allowed => "allowed",
            CallerState::Denied => "denied",
            CallerState::Revoked => "revoked",
        }
    }

    /// Parses a storage label.
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "allowed" => CallerState::Allowed,
            "denied" => CallerState::Denied,
            "revoked" => CallerState::Revoked,
            _ => return None,
        })
    }
}

/// One caller authorization decision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallerRecord {
    /// The package.
    pub package: String,
    /// The signing digest the decision was made for (a different digest asks again).
    pub cert: CertDigest,
    /// The decision.
    pub state: CallerState,
    /// When it was made.
    pub decided_at: Millis,
    /// The label shown when it was made (display only).
    pub label: Option<String>,
}

/// What a user can enable or disable: a whole plugin, one server of it, or one tool (CAT-68).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum PolicyTarget {
    /// Every tool of a plugin.
    Plugin {
        /// Source ecosystem.
        source: Source,
        /// Plugin (or ACI virtual plugin) name.
        provider: String,
    },
    /// Every tool of one server of a plugin.
    Server {
        /// Source ecosystem.
        source: Source,
        /// Plugin name.
        provider: String,
        /// Server name.
        server: String,
    },
    /// One tool, by its raw triple.
    Tool(CapabilityId),
}

impl PolicyTarget {
    /// Whether this target covers `id`.
    pub fn covers(&self, id: &CapabilityId) -> bool {
        match self {
            PolicyTarget::Plugin { source, provider } => {
                *source == id.source && *provider == id.provider
            }
            PolicyTarget::Server {
                source,
                provider,
                server,
            } => *source == id.source && *provider == id.provider && *server == id.server,
            PolicyTarget::Tool(t) => t == id,
        }
    }
}

/// Everything a store holds, as loaded at start.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StoredPolicy {
    /// Caller decisions by package.
    pub callers: BTreeMap<String, CallerRecord>,
    /// Disabled targets.
    pub disabled: BTreeSet<PolicyTarget>,
    /// Triples the user set to "always allow".
    pub always_allow: BTreeSet<CapabilityId>,
}

/// Why a store operation failed. Messages carry paths and versions, never stored values.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// File-system error (creating the directory, permissions).
    #[error("policy store {path}: {source}")]
    Io {
        /// The path.
        path: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// The file is not a readable policy database. It was left untouched.
    #[error("policy store {path} is corrupt ({detail}); it was left untouched")]
    Corrupt {
        /// The file.
        path: String,
        /// What SQLite reported.
        detail: String,
    },
    /// The file was written by a newer capbridge. It was left untouched.
    #[error(
        "policy store {path} has schema version {found}, newer than the {supported} this build \
         supports; it was left untouched (upgrade capbridge or point it at another directory)"
    )]
    NewerSchema {
        /// The file.
        path: String,
        /// The version in the file.
        found: i64,
        /// The newest version this build reads.
        supported: i64,
    },
    /// Any other database error.
    #[error("policy store database error: {0}")]
    Database(String),
}

/// Storage of decisions and user policy. Implementations must make each call durable before
/// returning `Ok`.
pub trait PolicyStore: Send {
    /// Loads everything.
    fn load(&self) -> Result<StoredPolicy, StoreError>;
    /// Inserts or replaces the decision for `record.package`.
    fn put_caller(&mut self, record: &CallerRecord) -> Result<(), StoreError>;
    /// Forgets a caller ("remove" in settings, uninstall).
    fn remove_caller(&mut self, package: &str) -> Result<(), StoreError>;
    /// Disables or re-enables a target.
    fn set_disabled(&mut self, target: &PolicyTarget, disabled: bool) -> Result<(), StoreError>;
    /// Sets or clears "always allow" for a triple.
    fn set_always_allow(&mut self, id: &CapabilityId, on: bool) -> Result<(), StoreError>;
    /// Deletes every policy of a triple (CAT-05: a renamed tool loses its old policies).
    fn forget_tool(&mut self, id: &CapabilityId) -> Result<(), StoreError>;
}

/// An in-memory [`PolicyStore`] (tests, ephemeral runs).
#[derive(Debug, Clone, Default)]
pub struct MemoryStore {
    state: StoredPolicy,
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }
}

impl PolicyStore for MemoryStore {
    fn load(&self) -> Result<StoredPolicy, StoreError> {
        Ok(self.state.clone())
    }

    fn put_caller(&mut self, record: &CallerRecord) -> Result<(), StoreError> {
        self.state
            .callers
            .insert(record.package.clone(), record.clone());
        Ok(())
    }

    fn remove_caller(&mut self, package: &str) -> Result<(), StoreError> {
        self.state.callers.remove(package);
        Ok(())
    }

    fn set_disabled(&mut self, target: &PolicyTarget, disabled: bool) -> Result<(), StoreError> {
        if disabled {
            self.state.disabled.insert(target.clone());
        } else {
            self.state.disabled.remove(target);
        }
        Ok(())
    }

    fn set_always_allow(&mut self, id: &CapabilityId, on: bool) -> Result<(), StoreError> {
        if on {
            self.state.always_allow.insert(id.clone());
        } else {
            self.state.always_allow.remove(id);
        }
        Ok(())
    }

    fn forget_tool(&mut self, id: &CapabilityId) -> Result<(), StoreError> {
        self.state.always_allow.remove(id);
        self.state.disabled.remove(&PolicyTarget::Tool(id.clone()));
        Ok(())
    }
}
