//! Model-facing tool names (CAT-10..CAT-19, SMS-10, ACI-40).
//!
//! A tool is named from its raw triple `(plugin, server, tool)`:
//!
//! 1. every UTF-16 unit of each segment outside `[A-Za-z0-9_-]` becomes one `_`; an empty
//!    segment becomes `_` (CAT-11);
//! 2. `mcp__<plugin>__<server>__<tool>` (CAT-10), or `ses__<server>__<tool>` for per-session
//!    servers (SMS-10);
//! 3. a name longer than 64 becomes its first 57 characters + `_` + the first 6 hex digits of
//!    SHA-256 over the raw `plugin NUL server NUL tool` (session: `server NUL tool`) (CAT-12/13);
//! 4. in a catalog, every member of a colliding group gets a forced suffix, escalating the hash
//!    length 6 → 8 → 12 → 16 → 24 until all names are unique (CAT-14). The result depends only on
//!    the set of triples (CAT-15).
//!
//! ```
//! use capability_model::naming::{name_of, NameKey, assign};
//! assert_eq!(name_of("com.example.notes", "main", "list"), "mcp__com_example_notes__main__list");
//! let keys = vec![NameKey::plugin("a.b", "s", "t"), NameKey::plugin("a_b", "s", "t")];
//! let names = assign(&keys).unwrap();
//! assert_ne!(names[0], names[1]); // `.`-vs-`_` collision: both get a suffix
//! ```

use std::collections::{HashMap, HashSet};

use sha2::{Digest, Sha256};

use crate::limits::{
    ACI_PLUGIN_NAME_KEEP, ACI_PLUGIN_NAME_MAX, HASH_SUFFIX_DEFAULT, HASH_SUFFIX_ESCALATION,
    TOOL_NAME_MAX,
};

/// Prefix of plugin (and ACI virtual plugin) tool names.
pub const PLUGIN_PREFIX: &str = "mcp__";
/// Prefix of per-session MCP server tool names.
pub const SESSION_PREFIX: &str = "ses__";
/// Separator between segments.
pub const SEPARATOR: &str = "__";
/// Names of the built-in tools; no catalog name may equal one of them (CAT-17).
pub const BUILTIN_TOOL_NAMES: [&str; 1] = ["read_skill"];
/// Prefix reserved for ACI virtual plugins (ACI-40).
pub const ACI_PLUGIN_PREFIX: &str = "aci.";

/// Which naming family a tool belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum NameFamily {
    /// `mcp__<plugin>__<server>__<tool>`: plugin tools and ACI virtual plugins.
    Plugin,
    /// `ses__<server>__<tool>`: per-session MCP servers (the plugin is ignored).
    Session,
}

/// The raw triple a name is computed from.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NameKey {
    /// Naming family.
    pub family: NameFamily,
    /// Raw plugin name (empty for session tools).
    pub plugin: String,
    /// Raw server name.
    pub server: String,
    /// Raw tool name.
    pub tool: String,
}

impl NameKey {
    /// A plugin tool.
    pub fn plugin(plugin: &str, server: &str, tool: &str) -> Self {
        Self {
            family: NameFamily::Plugin,
            plugin: plugin.to_owned(),
            server: server.to_owned(),
            tool: tool.to_owned(),
        }
    }

    /// A per-session server tool.
    pub fn session(server: &str, tool: &str) -> Self {
        Self {
            family: NameFamily::Session,
            plugin: String::new(),
            server: server.to_owned(),
            tool: tool.to_owned(),
        }
    }

    /// The untruncated sanitized name (`mcp__…` / `ses__…`).
    pub fn base(&self) -> String {
        match self.family {
            NameFamily::Plugin => {
                let mut s = String::with_capacity(
                    PLUGIN_PREFIX.len()
                        + self.plugin.len()
                        + self.server.len()
                        + self.tool.len()
                        + 4,
                );
                s.push_str(PLUGIN_PREFIX);
                push_sanitized(&mut s, &self.plugin);
                s.push_str(SEPARATOR);
                push_sanitized(&mut s, &self.server);
                s.push_str(SEPARATOR);
                push_sanitized(&mut s, &self.tool);
                s
            }
            NameFamily::Session => {
                let mut s = String::with_capacity(
                    SESSION_PREFIX.len() + self.server.len() + self.tool.len() + 2,
                );
                s.push_str(SESSION_PREFIX);
                push_sanitized(&mut s, &self.server);
                s.push_str(SEPARATOR);
                push_sanitized(&mut s, &self.tool);
                s
            }
        }
    }

    /// Lowercase hex SHA-256 over the raw names joined by U+0000 (CAT-13, SMS-10).
    pub fn hash_hex(&self) -> String {
        let mut h = Sha256::new();
        if self.family == NameFamily::Plugin {
            h.update(self.plugin.as_bytes());
            h.update([0u8]);
        }
        h.update(self.server.as_bytes());
        h.update([0u8]);
        h.update(self.tool.as_bytes());
        to_hex(&h.finalize())
    }
}

/// Why names could not be assigned.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum NamingError {
    /// The same triple appears twice (CAT-16).
    #[error("duplicate tool id: plugin {plugin:?}, server {server:?}, tool {tool:?}")]
    DuplicateId {
        /// Raw plugin name.
        plugin: String,
        /// Raw server name.
        server: String,
        /// Raw tool name.
        tool: String,
    },
    /// A collision survived every suffix length (CAT-16); practically a SHA-256 collision.
    #[error("tool names still collide after a {0}-digit hash suffix")]
    Unresolvable(usize),
}

/// Sanitizes one segment: each UTF-16 unit outside `[A-Za-z0-9_-]` becomes `_`; empty → `_`
/// (CAT-11).
pub fn sanitize(segment: &str) -> String {
    let mut s = String::with_capacity(segment.len());
    push_sanitized(&mut s, segment);
    s
}

fn push_sanitized(out: &mut String, segment: &str) {
    if segment.is_empty() {
        out.push('_');
        return;
    }
    for c in segment.chars() {
        if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
            out.push(c);
        } else {
            // One `_` per UTF-16 unit: a supplementary-plane character becomes `__`.
            for _ in 0..c.len_utf16() {
                out.push('_');
            }
        }
    }
}

/// `base` cut to `64 - 1 - k` characters (or whole, when shorter) + `_` + the first `k` hex
/// digits of `hash` (CAT-12, CAT-14). `base` is ASCII by construction.
fn with_suffix(base: &str, hash: &str, k: usize) -> String {
    let keep = base.len().min(TOOL_NAME_MAX - 1 - k);
    let mut s = String::with_capacity(keep + 1 + k);
    s.push_str(&base[..keep]);
    s.push('_');
    s.push_str(&hash[..k]);
    s
}

/// The single-tool name for a key: the base, or base truncated with a 6-digit suffix when it
/// is longer than 64 (CAT-10..CAT-13).
pub fn single_name(key: &NameKey) -> String {
    let base = key.base();
    if base.len() <= TOOL_NAME_MAX {
        base
    } else {
        with_suffix(&base, &key.hash_hex(), HASH_SUFFIX_DEFAULT)
    }
}

/// The model-facing name of one plugin tool, ignoring collisions (`nameOf`).
pub fn name_of(plugin: &str, server: &str, tool: &str) -> String {
    single_name(&NameKey::plugin(plugin, server, tool))
}

/// The model-facing name of one per-session server tool, ignoring collisions (SMS-10).
pub fn session_name_of(server: &str, tool: &str) -> String {
    single_name(&NameKey::session(server, tool))
}

/// Assigns final, pairwise-distinct names to a whole catalog (CAT-14..CAT-17). The result is
/// in input order and depends only on the set of keys.
pub fn assign(keys: &[NameKey]) -> Result<Vec<String>, NamingError> {
    let mut seen: HashSet<&NameKey> = HashSet::with_capacity(keys.len());
    for k in keys {
        if !seen.insert(k) {
            return Err(NamingError::DuplicateId {
                plugin: k.plugin.clone(),
                server: k.server.clone(),
                tool: k.tool.clone(),
            });
        }
    }

    // Round 0: the single-tool names.
    let bases: Vec<String> = keys.iter().map(NameKey::base).collect();
    let mut hashes: Vec<Option<String>> = vec![None; keys.len()];
    let mut names: Vec<String> = Vec::with_capacity(keys.len());
    for (i, base) in bases.iter().enumerate() {
        if base.len() <= TOOL_NAME_MAX {
            names.push(base.clone());
        } else {
            let h = keys[i].hash_hex();
            names.push(with_suffix(base, &h, HASH_SUFFIX_DEFAULT));
            hashes[i] = Some(h);
        }
    }
    // A name held by exactly one tool is final (CAT-14). Only those, and names accepted in
    // earlier rounds, count as taken: a colliding base is held by nobody.
    let mut round0: HashMap<&str, usize> = HashMap::with_capacity(names.len());
    for n in &names {
        *round0.entry(n.as_str()).or_insert(0) += 1;
    }
    let mut pending: Vec<usize> = (0..names.len())
        .filter(|&i| round0.get(names[i].as_str()).copied().unwrap_or(0) > 1)
        .collect();
    let mut accepted_earlier: HashSet<String> = HashSet::new();
    let mut updates: Vec<(usize, String)> = Vec::new();

    // Forced suffixes for every member of a colliding group, escalating k.
    for &k in HASH_SUFFIX_ESCALATION.iter() {
        if pending.is_empty() {
            break;
        }
        let candidates: Vec<String> = pending
            .iter()
            .map(|&i| {
                let h = hashes[i].get_or_insert_with(|| keys[i].hash_hex());
                with_suffix(&bases[i], h, k)
            })
            .collect();
        let mut round: HashMap<&str, usize> = HashMap::with_capacity(candidates.len());
        for c in &candidates {
            *round.entry(c.as_str()).or_insert(0) += 1;
        }
        let mut still = Vec::new();
        let mut accepted = Vec::new();
        for (&i, c) in pending.iter().zip(&candidates) {
            let taken = round0.get(c.as_str()).copied() == Some(1) || accepted_earlier.contains(c);
            if round.get(c.as_str()).copied().unwrap_or(0) == 1 && !taken {
                accepted.push((i, c.clone()));
            } else {
                still.push(i);
            }
        }
        for (i, c) in accepted {
            accepted_earlier.insert(c.clone());
            updates.push((i, c));
        }
        pending = still;
    }
    if !pending.is_empty() {
        return Err(NamingError::Unresolvable(
            HASH_SUFFIX_ESCALATION[HASH_SUFFIX_ESCALATION.len() - 1],
        ));
    }
    drop(round0);
    for (i, c) in updates {
        names[i] = c;
    }
    Ok(names)
}

/// True when `name` is a valid final name: `^[A-Za-z0-9_-]{1,64}$` (CAT-17).
pub fn is_valid_final_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= TOOL_NAME_MAX
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// Normalizes a package or class name for an ACI virtual plugin (ACI-40): lowercase, characters
/// outside `[a-z0-9.-]` → `-`, `--` and `..` collapsed, non-alphanumerics trimmed at both ends.
pub fn aci_normalize(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars().flat_map(char::to_lowercase) {
        let c = if c.is_ascii_lowercase() || c.is_ascii_digit() || c == '.' || c == '-' {
            c
        } else {
            '-'
        };
        if (c == '-' || c == '.') && out.ends_with(c) {
            continue;
        }
        out.push(c);
    }
    out.trim_matches(|c: char| !c.is_ascii_alphanumeric())
        .to_owned()
}

fn shorten_aci(normalized: String, raw: &str) -> String {
    if normalized.len() <= ACI_PLUGIN_NAME_MAX {
        return normalized;
    }
    let hash = to_hex(&Sha256::digest(raw.as_bytes()));
    let mut s = normalized[..ACI_PLUGIN_NAME_KEEP].to_owned();
    s.push('-');
    s.push_str(&hash[..6]);
    s
}

/// The virtual plugin name of an ACI provider package: `aci.` + normalized package, shortened
/// to 57 characters + `-` + hex6 of SHA-256(package) when longer than 64 (ACI-40).
pub fn aci_virtual_plugin(package: &str) -> String {
    let mut full = String::from(ACI_PLUGIN_PREFIX);
    full.push_str(&aci_normalize(package));
    shorten_aci(full, package)
}

/// The virtual server name of an ACI service: the simple class name, normalized (ACI-40).
pub fn aci_virtual_server(service_class: &str) -> String {
    let simple = service_class.rsplit('.').next().unwrap_or(service_class);
    shorten_aci(aci_normalize(simple), service_class)
}

fn to_hex(bytes: &[u8]) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(HEX[(b >> 4) as usize] as char);
        s.push(HEX[(b & 0xf) as usize] as char);
    }
    s
}
