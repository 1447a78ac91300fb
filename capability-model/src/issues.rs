//! Provider issues: broken entries reported, never panicked on and never silently dropped.

use std::fmt;

use serde::{Deserialize, Serialize};

/// Why an entry (or a whole provider) was left out of the catalog.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum IssueKind {
    /// The entry is not valid JSON, or not of the expected shape.
    MalformedEntry,
    /// Tool name outside `[A-Za-z0-9_.-]{1,128}` (MCP-05, ACI-41).
    InvalidName,
    /// Input schema missing, not an object schema, or not a valid JSON Schema (MCP-05).
    InvalidSchema,
    /// Two entries of one server share a tool name (MCP-05).
    DuplicateName,
    /// ACI description empty or a version number (ACI-12).
    BadDescription,
    /// An ACI parameter type capbridge does not know (ACI-42); the parameter accepts any JSON.
    UnknownParamType,
    /// The provider as a whole failed (could not list, ACI-17).
    ProviderUnavailable,
    /// A per-server limit was exceeded (MCP-32 `too_many_tools`).
    TooManyTools,
}

impl IssueKind {
    /// Stable snake_case code.
    pub fn as_str(&self) -> &'static str {
        match self {
            IssueKind::MalformedEntry => "malformed_entry",
            IssueKind::InvalidName => "invalid_name",
            IssueKind::InvalidSchema => "invalid_schema",
            IssueKind::DuplicateName => "duplicate_name",
            IssueKind::BadDescription => "bad_description",
            IssueKind::UnknownParamType => "unknown_param_type",
            IssueKind::ProviderUnavailable => "provider_unavailable",
            IssueKind::TooManyTools => "too_many_tools",
        }
    }
}

/// One problem with a provider's capability list.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ProviderIssue {
    /// What is wrong.
    pub kind: IssueKind,
    /// The entry's position in the provider's list, when the issue is about one entry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index: Option<usize>,
    /// The entry's name as reported (truncated to 128 characters), when it had one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entry: Option<String>,
    /// One sentence saying what is wrong; never echoes argument values.
    pub message: String,
}

impl ProviderIssue {
    /// Builds an issue.
    pub fn new(kind: IssueKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            index: None,
            entry: None,
            message: message.into(),
        }
    }

    /// Sets the entry index.
    pub fn at(mut self, index: usize) -> Self {
        self.index = Some(index);
        self
    }

    /// Sets the entry name (kept to at most 128 characters).
    pub fn entry(mut self, name: &str) -> Self {
        self.entry = Some(name.chars().take(128).collect());
        self
    }
}

impl fmt::Display for ProviderIssue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.kind.as_str())?;
        if let Some(i) = self.index {
            write!(f, " [#{i}]")?;
        }
        if let Some(e) = &self.entry {
            write!(f, " {e:?}")?;
        }
        write!(f, ": {}", self.message)
    }
}
