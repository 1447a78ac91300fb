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

use std::collections::HashSet;

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

    /// A borrowed view of this key.
    pub fn borrowed(&self) -> NameKeyRef<'_> {
        NameKeyRef {
            family: self.family,
            plugin: &self.plugin,
            server: &self.server,
            tool: &self.tool,
        }
    }

    /// The untruncated sanitized name (`mcp__…` / `ses__…`).
    pub fn base(&self) -> String {
        self.borrowed().base()
    }

    /// Lowercase hex SHA-256 over the raw names joined by U+0000 (CAT-13, SMS-10).
    pub fn hash_hex(&self) -> String {
        self.borrowed().hash_hex()
    }
}

/// A [`NameKey`] borrowing its names (what the catalog names without copying).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NameKeyRef<'a> {
    /// Naming family.
    pub family: NameFamily,
    /// Raw plugin name (ignored for session tools).
    pub plugin: &'a str,
    /// Raw server name.
    pub server: &'a str,
    /// Raw tool name.
    pub tool: &'a str,
}

impl NameKeyRef<'_> {
    /// The untruncated sanitized name (`mcp__…` / `ses__…`).
    pub fn base(&self) -> String {
        let (prefix, extra) = match self.family {
            NameFamily::Plugin => (PLUGIN_PREFIX, self.plugin.len() + 2),
            NameFamily::Session => (SESSION_PREFIX, 0),
        };
        let mut s =
            String::with_capacity(prefix.len() + extra + self.server.len() + self.tool.len() + 2);
        s.push_str(prefix);
        if self.family == NameFamily::Plugin {
            push_sanitized(&mut s, self.plugin);
            s.push_str(SEPARATOR);
        }
        push_sanitized(&mut s, self.server);
        s.push_str(SEPARATOR);
        push_sanitized(&mut s, self.tool);
        s
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

    fn identity(&self) -> (NameFamily, &str, &str, &str) {
        match self.family {
            NameFamily::Plugin => (self.family, self.plugin, self.server, self.tool),
            NameFamily::Session => (self.family, "", self.server, self.tool),
        }
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
    single_name_ref(&key.borrowed()).0
}

/// The round-0 name, and the hash when it had to be computed.
fn single_name_ref(key: &NameKeyRef<'_>) -> (String, Option<String>) {
    let base = key.base();
    if base.len() <= TOOL_NAME_MAX {
        (base, None)
    } else {
        let h = key.hash_hex();
        (with_suffix(&base, &h, HASH_SUFFIX_DEFAULT), Some(h))
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
/// in input order and depends only on the set of keys. A repeated key is an error (CAT-16).
pub fn assign(keys: &[NameKey]) -> Result<Vec<String>, NamingError> {
    let refs: Vec<NameKeyRef<'_>> = keys.iter().map(NameKey::borrowed).collect();
    let a = assign_lenient(&refs);
    if let Some(&i) = a.duplicates.iter().min() {
        return Err(NamingError::DuplicateId {
            plugin: keys[i].plugin.clone(),
            server: keys[i].server.clone(),
            tool: keys[i].tool.clone(),
        });
    }
    if !a.unresolved.is_empty() {
        return Err(NamingError::Unresolvable(
            HASH_SUFFIX_ESCALATION[HASH_SUFFIX_ESCALATION.len() - 1],
        ));
    }
    Ok(a.names.into_iter().flatten().collect())
}

/// The outcome of naming a set of keys that may hold repeats.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Assignment {
    /// The final name of each key, in input order; `None` for repeated and unresolved keys.
    pub names: Vec<Option<String>>,
    /// Indices of keys that occur more than once: every copy is left unnamed (CAT-16), and the
    /// others are named as if the repeated key were absent.
    pub duplicates: Vec<usize>,
    /// Indices of keys still colliding after a 24-digit suffix (CAT-16).
    pub unresolved: Vec<usize>,
    /// Indices of the named keys, sorted by final name.
    pub sorted: Vec<usize>,
}

/// Names a catalog without failing on repeated keys (the catalog reports them as issues).
///
/// Works by sorting rather than hashing: one sort of the round-0 names finds the colliding
/// groups (and, inside a group, repeated keys), and each escalation round sorts only the
/// pending candidates.
pub fn assign_lenient(keys: &[NameKeyRef<'_>]) -> Assignment {
    let n = keys.len();
    let mut hashes: Vec<Option<String>> = Vec::with_capacity(n);
    let mut round0: Vec<String> = Vec::with_capacity(n);
    for k in keys {
        let (name, hash) = single_name_ref(k);
        round0.push(name);
        hashes.push(hash);
    }
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_unstable_by(|&a, &b| round0[a].cmp(&round0[b]));

    let mut duplicates = Vec::new();
    let mut finals: Vec<usize> = Vec::with_capacity(n); // round-0 finals, in name order
    let mut pending: Vec<usize> = Vec::new();
    let mut i = 0;
    while i < n {
        let mut j = i + 1;
        while j < n && round0[order[j]] == round0[order[i]] {
            j += 1;
        }
        if j - i == 1 {
            finals.push(order[i]);
        } else {
            let run = &mut order[i..j];
            run.sort_unstable_by(|&a, &b| keys[a].identity().cmp(&keys[b].identity()));
            let mut members = Vec::new();
            let mut k = 0;
            while k < run.len() {
                let mut l = k + 1;
                while l < run.len() && keys[run[l]].identity() == keys[run[k]].identity() {
                    l += 1;
                }
                if l - k > 1 {
                    duplicates.extend_from_slice(&run[k..l]);
                } else {
                    members.push(run[k]);
                }
                k = l;
            }
            match members.len() {
                0 => {}
                1 => finals.push(members[0]),
                _ => pending.extend(members),
            }
        }
        i = j;
    }
    // `finals` is in name order: a binary search tells whether a name is already taken.
    let is_final = |name: &str| {
        finals
            .binary_search_by(|&x| round0[x].as_str().cmp(name))
            .is_ok()
    };

    let mut names: Vec<Option<String>> = vec![None; n];
    let mut accepted: HashSet<String> = HashSet::new();
    let mut forced: Vec<usize> = Vec::new();
    // Forced suffixes for every member of a colliding group, escalating k (CAT-14).
    for &k in HASH_SUFFIX_ESCALATION.iter() {
        if pending.is_empty() {
            break;
        }
        let mut cands: Vec<(String, usize)> = pending
            .iter()
            .map(|&i| {
                let h = hashes[i].get_or_insert_with(|| keys[i].hash_hex());
                (with_suffix(&keys[i].base(), h, k), i)
            })
            .collect();
        cands.sort_unstable();
        let mut still = Vec::new();
        let mut round_accepted = Vec::new();
        let mut a = 0;
        while a < cands.len() {
            let mut b = a + 1;
            while b < cands.len() && cands[b].0 == cands[a].0 {
                b += 1;
            }
            let c = &cands[a].0;
            if b - a == 1 && !is_final(c) && !accepted.contains(c) {
                round_accepted.push(a);
            } else {
                still.extend(cands[a..b].iter().map(|&(_, i)| i));
            }
            a = b;
        }
        for a in round_accepted {
            let (c, i) = std::mem::take(&mut cands[a]);
            accepted.insert(c.clone());
            names[i] = Some(c);
            forced.push(i);
        }
        pending = still;
    }
    let mut taken_round0 = vec![false; n];
    for &f in &finals {
        taken_round0[f] = true;
    }
    for (i, name) in round0.into_iter().enumerate() {
        if taken_round0[i] {
            names[i] = Some(name);
        }
    }
    // Final order: the round-0 finals are sorted already; merge in the (few) forced names.
    let name_of = |i: usize| names[i].as_deref().unwrap_or_default();
    forced.sort_unstable_by(|&a, &b| name_of(a).cmp(name_of(b)));
    let mut sorted = Vec::with_capacity(finals.len() + forced.len());
    let (mut x, mut y) = (0, 0);
    while x < finals.len() || y < forced.len() {
        let take_final =
            y == forced.len() || (x < finals.len() && name_of(finals[x]) < name_of(forced[y]));
        if take_final {
            sorted.push(finals[x]);
            x += 1;
        } else {
            sorted.push(forced[y]);
            y += 1;
        }
    }
    duplicates.sort_unstable();
    pending.sort_unstable();
    Assignment {
        names,
        duplicates,
        unresolved: pending,
        sorted,
    }
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
