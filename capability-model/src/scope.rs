//! toolScope (CAT-30..CAT-43) and session modes (CAT-50..CAT-55).

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::limits::{TOOL_SCOPE_MAX_ENTRIES, TOOL_SCOPE_STRING_MAX};

/// One toolScope entry: a plugin (`plugin.json` name) and a raw tool name (CAT-30).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ScopeEntry {
    /// Plugin name (for ACI, the virtual plugin name).
    pub plugin: String,
    /// Raw tool name.
    pub tool: String,
}

/// A session's toolScope: `None` = unrestricted, `Some(empty)` = no plugin tools (CAT-33).
/// Stored as a set: order and duplicates carry no meaning (CAT-43).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ToolScope(Option<BTreeSet<ScopeEntry>>);

/// Why a toolScope from the wire was refused (`invalid_params`, no session created; CAT-34/35).
/// Messages never echo the caller's values.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ScopeError {
    /// Not an array (and not null).
    #[error("toolScope must be an array of {{plugin, tool}} objects")]
    NotArray,
    /// More than 32 entries.
    #[error("toolScope has more than {TOOL_SCOPE_MAX_ENTRIES} entries")]
    TooManyEntries,
    /// An element that is not an object.
    #[error("toolScope entry {0} is not an object")]
    EntryNotObject(usize),
    /// A missing or non-string `plugin` / `tool`.
    #[error("toolScope entry {index} has no string \"{field}\"")]
    MissingField {
        /// Entry index.
        index: usize,
        /// `plugin` or `tool`.
        field: &'static str,
    },
    /// A string of 0 or more than 128 UTF-16 units.
    #[error(
        "toolScope entry {index} has a \"{field}\" that is empty or longer than {TOOL_SCOPE_STRING_MAX} characters"
    )]
    BadLength {
        /// Entry index.
        index: usize,
        /// `plugin` or `tool`.
        field: &'static str,
    },
}

impl ToolScope {
    /// The unrestricted scope, as a constant.
    pub const UNRESTRICTED: ToolScope = ToolScope(None);

    /// Unrestricted.
    pub fn unrestricted() -> Self {
        Self(None)
    }

    /// Restricted to exactly these entries (validated by [`ToolScope::from_json`] on the wire).
    pub fn restricted(entries: impl IntoIterator<Item = ScopeEntry>) -> Self {
        Self(Some(entries.into_iter().collect()))
    }

    /// Parses `_meta."org.agentos".toolScope`. `None` or JSON `null` → unrestricted (CAT-33).
    pub fn from_json(value: Option<&Value>) -> Result<Self, ScopeError> {
        let arr = match value {
            None | Some(Value::Null) => return Ok(Self(None)),
            Some(Value::Array(a)) => a,
            Some(_) => return Err(ScopeError::NotArray),
        };
        if arr.len() > TOOL_SCOPE_MAX_ENTRIES {
            return Err(ScopeError::TooManyEntries);
        }
        let mut set = BTreeSet::new();
        for (index, e) in arr.iter().enumerate() {
            let o = e.as_object().ok_or(ScopeError::EntryNotObject(index))?;
            let field = |field: &'static str| -> Result<String, ScopeError> {
                let s = o
                    .get(field)
                    .and_then(Value::as_str)
                    .ok_or(ScopeError::MissingField { index, field })?;
                let n = s.encode_utf16().count();
                if n == 0 || n > TOOL_SCOPE_STRING_MAX {
                    return Err(ScopeError::BadLength { index, field });
                }
                Ok(s.to_owned())
            };
            set.insert(ScopeEntry {
                plugin: field("plugin")?,
                tool: field("tool")?,
            });
        }
        Ok(Self(Some(set)))
    }

    /// Reads a stored scope; anything unreadable is `[]`, never unrestricted (CAT-40).
    pub fn from_stored(stored: &str) -> Self {
        match serde_json::from_str::<Value>(stored) {
            Ok(v) => Self::from_json(Some(&v)).unwrap_or_else(|_| Self(Some(BTreeSet::new()))),
            Err(_) => Self(Some(BTreeSet::new())),
        }
    }

    /// The form [`ToolScope::from_stored`] reads back (`null` or an array).
    pub fn to_stored(&self) -> String {
        self.to_json().to_string()
    }

    /// `null` or the array of entries.
    pub fn to_json(&self) -> Value {
        match &self.0 {
            None => Value::Null,
            Some(set) => Value::Array(
                set.iter()
                    .map(|e| serde_json::json!({"plugin": e.plugin, "tool": e.tool}))
                    .collect(),
            ),
        }
    }

    /// True when unrestricted.
    pub fn is_unrestricted(&self) -> bool {
        self.0.is_none()
    }

    /// The entries, when restricted.
    pub fn entries(&self) -> Option<&BTreeSet<ScopeEntry>> {
        self.0.as_ref()
    }

    /// Whether a plugin tool `(plugin, raw tool)` is inside the scope.
    pub fn allows(&self, plugin: &str, tool: &str) -> bool {
        match &self.0 {
            None => true,
            Some(set) => set.iter().any(|e| e.plugin == plugin && e.tool == tool),
        }
    }

    /// `session/fork`: old ∩ requested; no requested scope inherits the old one (CAT-36).
    pub fn fork(&self, requested: Option<&ToolScope>) -> ToolScope {
        match (requested.map(|r| &r.0), &self.0) {
            (None, _) | (Some(None), _) => self.clone(),
            (Some(Some(req)), None) => Self(Some(req.clone())),
            (Some(Some(req)), Some(old)) => Self(Some(old.intersection(req).cloned().collect())),
        }
    }
}

/// Session modes (CAT-50). Modes only narrow what the scope allows (CAT-51).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SessionMode {
    /// All tools the scope allows.
    #[default]
    Default,
    /// Only tools whose effective risk is READ (CAT-52).
    ReadOnly,
    /// No tools at all, `read_skill` included (CAT-52).
    Chat,
}

/// An unknown mode id in `session/set_mode` (`invalid_params`, CAT-55).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown session mode")]
pub struct UnknownMode;

impl SessionMode {
    /// Every mode, in order of decreasing breadth.
    pub const ALL: [SessionMode; 3] = [
        SessionMode::Default,
        SessionMode::ReadOnly,
        SessionMode::Chat,
    ];

    /// The ACP `SessionMode.id` (G-07): `default`, `read_only`, `chat`.
    pub fn wire_id(self) -> &'static str {
        match self {
            SessionMode::Default => "default",
            SessionMode::ReadOnly => "read_only",
            SessionMode::Chat => "chat",
        }
    }

    /// Parses a wire id from `session/set_mode`; unknown ids are an error (CAT-55).
    pub fn from_wire(id: &str) -> Result<Self, UnknownMode> {
        Self::ALL
            .into_iter()
            .find(|m| m.wire_id() == id)
            .ok_or(UnknownMode)
    }

    /// Reads a stored mode; anything unreadable is CHAT, the narrowest (CAT-54).
    pub fn from_stored(stored: &str) -> Self {
        Self::from_wire(stored.trim()).unwrap_or(SessionMode::Chat)
    }
}
