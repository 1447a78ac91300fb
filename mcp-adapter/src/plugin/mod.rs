//! Agent Plugins 1.0 packages (seed 000 §5.2, SPEC MCP-40..MCP-52).
//!
//! [`PluginPackage::read`] reads one package directory (the APK's `assets/agent-plugin/`, or a
//! folder on a Linux host) and never fails: whatever is wrong ends up as typed
//! [`PackageIssue`]s and, when it makes the plugin unusable, an [`UnavailableReason`]. A plugin
//! that cannot be used stays visible with its reason and the full issue list (MCP-47).
//!
//! - Only the root `plugin.json` is recognised (MCP-40); `.codex-plugin/plugin.json` and
//!   `.claude-plugin/plugin.json` are ignored and reported.
//! - The manifest is read with a size cap ([`MANIFEST_MAX_BYTES`]; a larger file is refused
//!   without being read whole), parsed refusing duplicate keys, and validated offline against
//!   the pinned schema ([`PLUGIN_SCHEMA`]); the top level is closed (MCP-41/42).
//! - `extensions."org.agentos".mcpServers` gives the Binder servers (MCP-43); server names
//!   are unique across `plugin.json` and `mcp.json` (MCP-44); `user.` is reserved (MCP-46).
//! - `mcp.json` servers are never started and each is reported unsupported (MCP-49).
//! - Hooks are never executed, only reported (MCP-52).
//! - `skills/<name>/SKILL.md` are read by [`crate::skills`] (MCP-60).
//!
//! Device-level rules live in [`device`]: unique plugin names (MCP-45), identity and signature
//! changes (MCP-51), enablement (MCP-50). Issue messages name the field or the file, never
//! the file's contents.
//!
//! ```
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use mcp_adapter::plugin::PluginPackage;
//! let dir = tempfile::tempdir()?;
//! std::fs::write(dir.path().join("plugin.json"), r#"{
//!   "$schema": "https://agent-plugins.org/schemas/1.0.0/plugin.schema.json",
//!   "name": "notes",
//!   "extensions": {"org.agentos": {"mcpServers": {
//!     "notes": {"service": "org.example.notes.NotesMcpService"}}}}
//! }"#)?;
//! let package = PluginPackage::read(dir.path());
//! assert!(package.is_ready());
//! assert_eq!(package.name(), Some("notes"));
//! assert_eq!(package.manifest().map(|m| m.servers.len()), Some(1));
//! # Ok(()) }
//! ```

pub mod device;
mod files;
pub mod manifest;
mod strict_json;

use std::collections::BTreeSet;
use std::fmt;
use std::path::{Path, PathBuf};

pub use device::{Enablement, IdentityAction, IdentityChange, NameClaim, PluginIdentity};
pub use files::{PACKAGE_MAX_DEPTH, PACKAGE_MAX_ENTRIES};
pub use manifest::{
    Manifest, PLUGIN_SCHEMA, PLUGIN_SCHEMA_ID, RESERVED_PREFIX, RemoteServer, ServerDecl,
    ServerProblem,
};

pub(crate) use files::read_capped as read_capped_in;

use crate::skills::{PackageSkill, SkillProblem};

/// Largest `plugin.json` read (local choice; SPEC sets no figure). A larger file is refused
/// after reading at most one byte more than this.
pub const MANIFEST_MAX_BYTES: usize = 256 * 1024;

/// Largest `mcp.json` read (local choice).
pub const MCP_JSON_MAX_BYTES: usize = 256 * 1024;

/// The manifest file, at the package root (MCP-40).
pub const MANIFEST_FILE: &str = "plugin.json";

/// Legacy manifests that are never read (MCP-40).
pub const IGNORED_MANIFESTS: [&str; 2] =
    [".codex-plugin/plugin.json", ".claude-plugin/plugin.json"];

/// Why a plugin cannot be used (MCP-47, MCP-48).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum UnavailableReason {
    /// The package directory is missing or unreadable.
    AssetsMissing,
    /// There is no root `plugin.json`.
    ManifestMissing,
    /// `plugin.json` was refused (size, JSON, schema, MCP-43/44/46); see the issues.
    ManifestRejected,
    /// Another package won this plugin name (MCP-45).
    NameConflict {
        /// The package that holds the name.
        winner: String,
    },
    /// Servers are declared, none is usable, and there are no Skills (MCP-48).
    NoUsableServer,
}

impl UnavailableReason {
    /// The stable reason code: `ASSETS_MISSING`, `MANIFEST_MISSING`, `MANIFEST_REJECTED`,
    /// `NAME_CONFLICT`, `NO_USABLE_SERVER`.
    pub fn code(&self) -> &'static str {
        match self {
            UnavailableReason::AssetsMissing => "ASSETS_MISSING",
            UnavailableReason::ManifestMissing => "MANIFEST_MISSING",
            UnavailableReason::ManifestRejected => "MANIFEST_REJECTED",
            UnavailableReason::NameConflict { .. } => "NAME_CONFLICT",
            UnavailableReason::NoUsableServer => "NO_USABLE_SERVER",
        }
    }
}

impl fmt::Display for UnavailableReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UnavailableReason::NameConflict { winner } => {
                write!(f, "NAME_CONFLICT (the name belongs to {winner})")
            }
            other => f.write_str(other.code()),
        }
    }
}

/// One problem found in a package. The message names the field or file, never its contents.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PackageIssue {
    /// The package directory does not exist or is not a directory.
    #[error("the plugin directory is missing or not a directory")]
    DirectoryMissing,
    /// There is no root `plugin.json`.
    #[error("plugin.json is missing at the package root")]
    ManifestMissing,
    /// A legacy manifest was found and ignored (MCP-40).
    #[error("{path} is ignored: only the root plugin.json is read")]
    LegacyManifestIgnored {
        /// The legacy file.
        path: String,
    },
    /// `plugin.json` is larger than [`MANIFEST_MAX_BYTES`].
    #[error("plugin.json is larger than {max} bytes")]
    ManifestTooLarge {
        /// The limit.
        max: usize,
    },
    /// `plugin.json` (or `mcp.json`) is not JSON.
    #[error("{file} is not valid JSON (line {line}, column {column})")]
    NotJson {
        /// The file.
        file: &'static str,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
    },
    /// A key appears twice in one object.
    #[error("{file} repeats a key (line {line}, column {column})")]
    DuplicateKey {
        /// The file.
        file: &'static str,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
    },
    /// The manifest fails the pinned Agent Plugins 1.0 schema (MCP-41/42).
    #[error("plugin.json fails the Agent Plugins 1.0 schema at {field} ({keyword})")]
    SchemaViolation {
        /// JSON pointer of the failing value (with the names of unexpected fields).
        field: String,
        /// The schema keyword that failed (`additionalProperties`, `pattern`, …).
        keyword: String,
    },
    /// The pinned schema could not be compiled (a build defect; fails closed).
    #[error("the pinned Agent Plugins schema is unusable")]
    SchemaUnavailable,
    /// The plugin name uses the reserved `user.` prefix (MCP-46).
    #[error("/name uses the reserved prefix \"user.\"")]
    ReservedName,
    /// An extension has the wrong shape.
    #[error("{field} has the wrong shape")]
    BadExtension {
        /// JSON pointer.
        field: String,
    },
    /// One declared Binder server was rejected; the others stay usable.
    #[error("server {server} rejected: {problem}")]
    ServerRejected {
        /// The server name.
        server: String,
        /// Why.
        problem: ServerProblem,
    },
    /// The same server name appears twice across `plugin.json` and `mcp.json` (MCP-44).
    #[error("server name {server} is declared more than once across plugin.json and mcp.json")]
    DuplicateServer {
        /// The server name.
        server: String,
    },
    /// `mcp.json` is too large or not `{"mcpServers": {…}}`.
    #[error("mcp.json is invalid at {field}")]
    McpJsonInvalid {
        /// What was wrong (a JSON pointer or `size`).
        field: String,
    },
    /// An `mcp.json` server: remote/stdio MCP is not implemented and never started (MCP-49).
    #[error("mcp.json server {server} ({transport}) is unsupported: remote MCP is not implemented")]
    RemoteServerUnsupported {
        /// The server name.
        server: String,
        /// Its transport.
        transport: &'static str,
    },
    /// Hooks are present; they are never executed (MCP-52).
    #[error("{path}: Hooks are not implemented and are never executed")]
    HooksNotExecuted {
        /// The hooks file or directory.
        path: String,
    },
    /// A Skill was disabled or changed (MCP-60).
    #[error("skill {dir}: {problem}")]
    Skill {
        /// `skills/<dir>`.
        dir: String,
        /// What is wrong.
        problem: SkillProblem,
    },
    /// A symbolic link inside the package is not followed and not listed.
    #[error("{path} is a symbolic link and is ignored")]
    SymlinkIgnored {
        /// Relative path.
        path: String,
    },
    /// A directory nested deeper than [`PACKAGE_MAX_DEPTH`] is not walked.
    #[error("{path} is nested deeper than {max} levels and is ignored")]
    TooDeep {
        /// Relative path.
        path: String,
        /// The limit.
        max: usize,
    },
    /// The package has more than [`PACKAGE_MAX_ENTRIES`] entries; the rest is not listed.
    #[error("the package has more than {max} entries; the rest is not listed")]
    FileListTruncated {
        /// The limit.
        max: usize,
    },
    /// A file or directory could not be read.
    #[error("{path} cannot be read")]
    Unreadable {
        /// Relative path.
        path: String,
    },
    /// A file name that is not UTF-8 is skipped.
    #[error("a file name in {dir} is not UTF-8 and is ignored")]
    NonUtf8Name {
        /// The directory.
        dir: String,
    },
}

/// A plugin package as read from its directory.
#[derive(Debug, Clone)]
pub struct PluginPackage {
    root: PathBuf,
    manifest: Option<Manifest>,
    remote_servers: Vec<RemoteServer>,
    files: BTreeSet<String>,
    skills: Vec<PackageSkill>,
    issues: Vec<PackageIssue>,
    unavailable: Option<UnavailableReason>,
}

impl PluginPackage {
    /// Reads the package at `dir`. Never fails; see [`PluginPackage::unavailable`] and
    /// [`PluginPackage::issues`]. Nothing in the package is executed.
    pub fn read(dir: &Path) -> PluginPackage {
        let mut package = PluginPackage {
            root: dir.to_path_buf(),
            manifest: None,
            remote_servers: Vec::new(),
            files: BTreeSet::new(),
            skills: Vec::new(),
            issues: Vec::new(),
            unavailable: None,
        };
        let root = match dir.canonicalize() {
            Ok(r) if r.is_dir() => r,
            _ => {
                package.issues.push(PackageIssue::DirectoryMissing);
                package.unavailable = Some(UnavailableReason::AssetsMissing);
                return package;
            }
        };
        package.root = root;
        let (files, walk_issues) = files::list_files(&package.root);
        package.files = files;
        package.issues.extend(walk_issues);
        package.read_manifest();
        package.read_extras();
        let (skills, skill_issues) = crate::skills::scan_package(&package.root, &package.files);
        package.skills = skills;
        package.issues.extend(skill_issues);
        if package.unavailable.is_none()
            && let Some(m) = &package.manifest
            && m.declared_servers > 0
            && m.servers.is_empty()
            && package.skills.is_empty()
        {
            package.unavailable = Some(UnavailableReason::NoUsableServer);
        }
        tracing::debug!(
            plugin = package.name().unwrap_or("-"),
            files = package.files.len(),
            skills = package.skills.len(),
            issues = package.issues.len(),
            ready = package.is_ready(),
            "plugin package read"
        );
        package
    }

    fn reject(&mut self, issue: PackageIssue) {
        self.issues.push(issue);
        self.unavailable = Some(UnavailableReason::ManifestRejected);
    }

    fn read_manifest(&mut self) {
        for legacy in IGNORED_MANIFESTS {
            if self.files.contains(legacy) {
                self.issues.push(PackageIssue::LegacyManifestIgnored {
                    path: legacy.to_owned(),
                });
            }
        }
        if !self.files.contains(MANIFEST_FILE) {
            self.issues.push(PackageIssue::ManifestMissing);
            self.unavailable = Some(UnavailableReason::ManifestMissing);
            return;
        }
        let capped = match files::read_capped(&self.root, MANIFEST_FILE, MANIFEST_MAX_BYTES) {
            Ok(c) => c,
            Err(_) => {
                return self.reject(PackageIssue::Unreadable {
                    path: MANIFEST_FILE.to_owned(),
                });
            }
        };
        if capped.longer {
            return self.reject(PackageIssue::ManifestTooLarge {
                max: MANIFEST_MAX_BYTES,
            });
        }
        let value = match strict_json::parse(&capped.bytes) {
            Ok(v) => v,
            Err(e) => {
                return self.reject(json_issue("plugin.json", e));
            }
        };
        let violations = manifest::schema_violations(&value);
        if !violations.is_empty() {
            self.issues.extend(violations);
            self.unavailable = Some(UnavailableReason::ManifestRejected);
            return;
        }
        let remote = self.read_mcp_json();
        let names: Vec<String> = remote.iter().map(|r| r.name.clone()).collect();
        self.remote_servers = remote;
        match manifest::interpret(&value, &names, &mut self.issues) {
            Some(m) => self.manifest = Some(m),
            None => self.unavailable = Some(UnavailableReason::ManifestRejected),
        }
    }

    /// `mcp.json`: every server is reported unsupported (MCP-49). A malformed file rejects
    /// the plugin, since the MCP-44 uniqueness check cannot be made without it.
    fn read_mcp_json(&mut self) -> Vec<RemoteServer> {
        const FILE: &str = "mcp.json";
        if !self.files.contains(FILE) {
            return Vec::new();
        }
        let parsed = match files::read_capped(&self.root, FILE, MCP_JSON_MAX_BYTES) {
            Ok(c) if c.longer => Err(PackageIssue::McpJsonInvalid {
                field: "size".to_owned(),
            }),
            Ok(c) => strict_json::parse(&c.bytes).map_err(|e| json_issue("mcp.json", e)),
            Err(_) => Err(PackageIssue::Unreadable {
                path: FILE.to_owned(),
            }),
        };
        let servers = parsed.and_then(|v| {
            manifest::remote_servers(&v).map_err(|field| PackageIssue::McpJsonInvalid {
                field: field.to_owned(),
            })
        });
        match servers {
            Ok(mut servers) => {
                // Name order, whatever serde_json's map order is in this build (feature
                // unification can turn `preserve_order` on): reports are deterministic.
                servers.sort_by(|a, b| a.name.cmp(&b.name));
                for s in &servers {
                    self.issues.push(PackageIssue::RemoteServerUnsupported {
                        server: manifest::short_name(&s.name),
                        transport: s.transport,
                    });
                }
                servers
            }
            Err(issue) => {
                self.reject(issue);
                Vec::new()
            }
        }
    }

    /// Hooks are reported, never run (MCP-52).
    fn read_extras(&mut self) {
        let hook_paths: BTreeSet<String> = self
            .files
            .iter()
            .filter_map(|f| {
                if f == "hooks.json" {
                    Some(f.clone())
                } else if f.starts_with("hooks/") {
                    Some("hooks/".to_owned())
                } else {
                    None
                }
            })
            .collect();
        for path in hook_paths {
            self.issues.push(PackageIssue::HooksNotExecuted { path });
        }
    }

    /// The canonical package root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The accepted manifest, if any.
    pub fn manifest(&self) -> Option<&Manifest> {
        self.manifest.as_ref()
    }

    /// The plugin name (from an accepted manifest).
    pub fn name(&self) -> Option<&str> {
        self.manifest.as_ref().map(|m| m.name.as_str())
    }

    /// `mcp.json` servers, all unsupported (MCP-49).
    pub fn remote_servers(&self) -> &[RemoteServer] {
        &self.remote_servers
    }

    /// The package's file list: relative `/`-separated paths of regular files.
    pub fn files(&self) -> &BTreeSet<String> {
        &self.files
    }

    /// The Skills that parsed (MCP-60); broken ones are issues instead.
    pub fn skills(&self) -> &[PackageSkill] {
        &self.skills
    }

    /// Every issue found, fatal or not.
    pub fn issues(&self) -> &[PackageIssue] {
        &self.issues
    }

    /// Why the package cannot be used, if it cannot (package-level only; the device-level
    /// name rule is applied by [`crate::discovery`]).
    pub fn unavailable(&self) -> Option<&UnavailableReason> {
        self.unavailable.as_ref()
    }

    /// `true` when the package itself is usable.
    pub fn is_ready(&self) -> bool {
        self.unavailable.is_none()
    }
}

fn json_issue(file: &'static str, e: strict_json::StrictError) -> PackageIssue {
    if e.duplicate_key {
        PackageIssue::DuplicateKey {
            file,
            line: e.line,
            column: e.column,
        }
    } else {
        PackageIssue::NotJson {
            file,
            line: e.line,
            column: e.column,
        }
    }
}
