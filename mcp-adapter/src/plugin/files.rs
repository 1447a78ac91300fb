//! The plugin package's file list and bounded reads.
//!
//! The file list is taken once, when the package is read: every **regular** file under the
//! package root, as a `/`-separated relative path. Symbolic links are never followed and
//! never listed (a link could point outside the package); each one is reported. The walk is
//! bounded in depth and in the number of entries, so a hostile directory tree cannot make
//! discovery walk forever.

use std::collections::BTreeSet;
use std::io::Read;
use std::path::{Path, PathBuf};

use super::PackageIssue;

/// Deepest directory level walked below the package root (local choice).
pub const PACKAGE_MAX_DEPTH: usize = 16;

/// Most directory entries looked at in one package (local choice). Beyond it the walk stops
/// and [`PackageIssue::FileListTruncated`] is recorded.
pub const PACKAGE_MAX_ENTRIES: usize = 8_192;

/// Walks `root` and returns the relative paths of its regular files, with the issues met.
pub(crate) fn list_files(root: &Path) -> (BTreeSet<String>, Vec<PackageIssue>) {
    let mut files = BTreeSet::new();
    let mut issues = Vec::new();
    let mut seen = 0usize;
    // (directory, its relative path, depth)
    let mut stack: Vec<(PathBuf, String, usize)> = vec![(root.to_path_buf(), String::new(), 0)];
    while let Some((dir, rel, depth)) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            issues.push(PackageIssue::Unreadable { path: shown(&rel) });
            continue;
        };
        for entry in entries {
            seen += 1;
            if seen > PACKAGE_MAX_ENTRIES {
                issues.push(PackageIssue::FileListTruncated {
                    max: PACKAGE_MAX_ENTRIES,
                });
                return (files, issues);
            }
            let Ok(entry) = entry else { continue };
            let Some(name) = entry.file_name().to_str().map(str::to_owned) else {
                issues.push(PackageIssue::NonUtf8Name { dir: shown(&rel) });
                continue;
            };
            let child_rel = if rel.is_empty() {
                name
            } else {
                format!("{rel}/{name}")
            };
            // `DirEntry::file_type` does not follow symbolic links.
            let Ok(kind) = entry.file_type() else {
                issues.push(PackageIssue::Unreadable { path: child_rel });
                continue;
            };
            if kind.is_symlink() {
                issues.push(PackageIssue::SymlinkIgnored { path: child_rel });
            } else if kind.is_dir() {
                if depth + 1 > PACKAGE_MAX_DEPTH {
                    issues.push(PackageIssue::TooDeep {
                        path: child_rel,
                        max: PACKAGE_MAX_DEPTH,
                    });
                } else {
                    stack.push((entry.path(), child_rel, depth + 1));
                }
            } else if kind.is_file() {
                files.insert(child_rel);
            }
        }
    }
    (files, issues)
}

fn shown(rel: &str) -> String {
    if rel.is_empty() {
        ".".to_owned()
    } else {
        rel.to_owned()
    }
}

/// What a bounded read found.
#[derive(Debug)]
pub(crate) struct Capped {
    /// At most `max` bytes.
    pub(crate) bytes: Vec<u8>,
    /// `true` when the file has more than `max` bytes.
    pub(crate) longer: bool,
}

/// Reads at most `max` bytes of the regular file `root/rel`, refusing symbolic links and
/// anything that resolves outside `root` (which must be canonical). Never reads more than
/// `max + 1` bytes, whatever the file's size.
pub(crate) fn read_capped(root: &Path, rel: &str, max: usize) -> std::io::Result<Capped> {
    let path = root.join(rel);
    let meta = std::fs::symlink_metadata(&path)?;
    if !meta.file_type().is_file() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a regular file",
        ));
    }
    let resolved = path.canonicalize()?;
    if !resolved.starts_with(root) {
        return Err(std::io::Error::new(
            std::io::ErrorKind::PermissionDenied,
            "outside the package",
        ));
    }
    let file = std::fs::File::open(&resolved)?;
    let mut bytes = Vec::with_capacity(max.min(64 * 1024) + 1);
    file.take(max as u64 + 1).read_to_end(&mut bytes)?;
    let longer = bytes.len() > max;
    bytes.truncate(max);
    Ok(Capped { bytes, longer })
}
