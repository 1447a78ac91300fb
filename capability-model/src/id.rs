//! Capability identity: where a capability comes from and its raw names (CAT-01).

use std::fmt;

use serde::{Deserialize, Serialize};

/// The ecosystem a capability comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// An AgentOS MCP plugin served over Binder (`IMcpService`).
    Mcp,
    /// An ACI provider (`ai.aci.core.IACIService`), imported as a virtual plugin (ACI-40).
    Aci,
    /// A per-session MCP server the ACP client passed in `session/new` (SMS).
    SessionMcp,
    /// A tool built into capbridge itself (`read_skill`, `http_request`).
    Builtin,
}

impl Source {
    /// A short lowercase label (`mcp`, `aci`, `session_mcp`, `builtin`).
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Mcp => "mcp",
            Source::Aci => "aci",
            Source::SessionMcp => "session_mcp",
            Source::Builtin => "builtin",
        }
    }
}

/// A source label that is none of `mcp`, `aci`, `session_mcp`, `builtin`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown capability source")]
pub struct UnknownSource;

impl std::str::FromStr for Source {
    type Err = UnknownSource;

    /// Parses the label [`Source::as_str`] writes.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        [
            Source::Mcp,
            Source::Aci,
            Source::SessionMcp,
            Source::Builtin,
        ]
        .into_iter()
        .find(|src| src.as_str() == s)
        .ok_or(UnknownSource)
    }
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The identity of one catalog tool: the triple (plugin, server, raw tool name) plus its source.
///
/// All three names are **raw**: exactly what the plugin manifest, the MCP server or the ACI
/// provider reported, never sanitized. The model-facing name is derived from them by
/// [`crate::naming`] and is never used as a key (CAT-05, CAT-18).
///
/// For [`Source::SessionMcp`] the `provider` is empty (session servers have no plugin) and
/// `server` is the session server's name. For [`Source::Aci`], `provider` is the virtual plugin
/// name (`aci.<package>`, see [`crate::naming::aci_virtual_plugin`]) and `server` the service's
/// normalized class name.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct CapabilityId {
    /// Which ecosystem the tool comes from.
    pub source: Source,
    /// The plugin (`plugin.json` `name`), or the ACI virtual plugin name.
    pub provider: String,
    /// The server key under `mcpServers`, or the ACI service name.
    pub server: String,
    /// The tool name the server reported (the ACI capability id).
    pub name: String,
}

impl CapabilityId {
    /// Builds an id.
    pub fn new(
        source: Source,
        provider: impl Into<String>,
        server: impl Into<String>,
        name: impl Into<String>,
    ) -> Self {
        Self {
            source,
            provider: provider.into(),
            server: server.into(),
            name: name.into(),
        }
    }

    /// An MCP plugin tool id.
    pub fn mcp(
        plugin: impl Into<String>,
        server: impl Into<String>,
        tool: impl Into<String>,
    ) -> Self {
        Self::new(Source::Mcp, plugin, server, tool)
    }

    /// A per-session MCP server tool id (no plugin).
    pub fn session(server: impl Into<String>, tool: impl Into<String>) -> Self {
        Self::new(Source::SessionMcp, "", server, tool)
    }
}

impl fmt::Display for CapabilityId {
    /// `source:provider/server/name`, with the raw names (for logs; never a key).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}/{}/{}",
            self.source, self.provider, self.server, self.name
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn source_labels_round_trip() {
        for s in [
            Source::Mcp,
            Source::Aci,
            Source::SessionMcp,
            Source::Builtin,
        ] {
            assert_eq!(s.as_str().parse::<Source>(), Ok(s));
        }
        assert_eq!("MCP".parse::<Source>(), Err(UnknownSource));
    }
}
