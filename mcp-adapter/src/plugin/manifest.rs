//! `plugin.json` (MCP-41..MCP-46) and `mcp.json` (MCP-44, MCP-49).
//!
//! The manifest is validated offline against the pinned Agent Plugins 1.0 schema
//! ([`PLUGIN_SCHEMA`], `mcp-adapter/schemas/plugin.schema.json`); nothing is ever fetched.
//! Then the AgentOS extension is read: `extensions."org.agentos".mcpServers.<server>.service`
//! and `extensions."com.openai".interface.displayName` (MCP-43).

use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde_json::Value;

use super::PackageIssue;

/// The `$schema` every manifest carries (MCP-42).
pub const PLUGIN_SCHEMA_ID: &str = "https://agent-plugins.org/schemas/1.0.0/plugin.schema.json";

/// The pinned Agent Plugins 1.0 schema (draft-07 JSON Schema), compiled into the binary.
pub const PLUGIN_SCHEMA: &str = include_str!("../../schemas/plugin.schema.json");

/// Prefix reserved for MCP servers the user configures; app plugins may not use it (MCP-46).
pub const RESERVED_PREFIX: &str = "user.";

/// Longest server name accepted under `mcpServers` (local choice, the same bound as a plugin
/// name).
pub const SERVER_NAME_MAX: usize = 64;

/// An accepted manifest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Manifest {
    /// `name`: the plugin name (MCP-42), unique on the device (MCP-45).
    pub name: String,
    /// `version`, when given.
    pub version: Option<String>,
    /// `description`, when given.
    pub description: Option<String>,
    /// The name shown to people: `extensions."com.openai".interface.displayName`, else the
    /// top-level `displayName` (MCP-43).
    pub display_name: Option<String>,
    /// The Binder servers declared under `extensions."org.agentos".mcpServers` that passed the
    /// checks, by server name.
    pub servers: BTreeMap<String, ServerDecl>,
    /// Servers declared (Binder and `mcp.json`), usable or not; used for MCP-48.
    pub declared_servers: usize,
}

/// One Binder MCP server of the plugin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerDecl {
    /// The key under `mcpServers`; equals the provider's `serverInfo.name` (MCP-03).
    pub name: String,
    /// The fully qualified Service class (`service`). On Linux hosts it is informational: the
    /// registry's socket serves the server under the rsbinder service name [`Self::name`].
    pub service: String,
}

fn validator() -> Option<&'static jsonschema::Validator> {
    static VALIDATOR: OnceLock<Option<jsonschema::Validator>> = OnceLock::new();
    VALIDATOR
        .get_or_init(|| {
            let schema: Value = serde_json::from_str(PLUGIN_SCHEMA).ok()?;
            jsonschema::options()
                .with_draft(jsonschema::Draft::Draft7)
                .build(&schema)
                .ok()
        })
        .as_ref()
}

/// Validates `value` against the pinned schema; every violation becomes one
/// [`PackageIssue::SchemaViolation`] naming the JSON pointer and the keyword, never the value.
pub fn schema_violations(value: &Value) -> Vec<PackageIssue> {
    let Some(v) = validator() else {
        return vec![PackageIssue::SchemaUnavailable];
    };
    v.iter_errors(value)
        .map(|e| {
            let pointer = e.instance_path().to_string();
            let mut field = if pointer.is_empty() {
                "/".to_owned()
            } else {
                pointer
            };
            if let jsonschema::error::ValidationErrorKind::AdditionalProperties { unexpected } =
                e.kind()
            {
                // Name the extra fields (field names, not values), shortened.
                let names: Vec<String> = unexpected.iter().map(|n| short_name(n)).collect();
                field = format!("{field} ({})", names.join(", "));
            }
            PackageIssue::SchemaViolation {
                field,
                keyword: e.kind().keyword().to_owned(),
            }
        })
        .collect()
}

/// A field name from the file, for an issue: control characters escaped, at most 64 chars.
pub(crate) fn short_name(name: &str) -> String {
    let cut: String = name.chars().take(64).collect();
    let escaped = format!("{cut:?}");
    if name.chars().count() > 64 {
        format!("{escaped}…")
    } else {
        escaped
    }
}

/// Reads an already schema-valid manifest into [`Manifest`], checking MCP-43/44/46.
/// `remote` are the server names found in `mcp.json` (for the MCP-44 uniqueness check).
/// Returns the manifest (possibly with no usable server) and whether it is rejected.
pub(crate) fn interpret(
    value: &Value,
    remote: &[String],
    issues: &mut Vec<PackageIssue>,
) -> Option<Manifest> {
    let name = value.get("name")?.as_str()?.to_owned();
    let mut rejected = false;
    if name.starts_with(RESERVED_PREFIX) {
        issues.push(PackageIssue::ReservedName);
        rejected = true;
    }
    let text = |k: &str| value.get(k).and_then(Value::as_str).map(str::to_owned);
    let display_name = value
        .pointer("/extensions/com.openai/interface/displayName")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .or_else(|| text("displayName"));

    let mut servers = BTreeMap::new();
    let mut declared = 0usize;
    match value.pointer("/extensions/org.agentos/mcpServers") {
        None => {}
        Some(Value::Object(map)) => {
            for (server, decl) in map {
                declared += 1;
                if let Some(problem) = server_name_problem(server) {
                    issues.push(PackageIssue::ServerRejected {
                        server: short_name(server),
                        problem,
                    });
                    continue;
                }
                match decl.get("service").and_then(Value::as_str) {
                    Some(service) if is_class_name(service) => {
                        servers.insert(
                            server.clone(),
                            ServerDecl {
                                name: server.clone(),
                                service: service.to_owned(),
                            },
                        );
                    }
                    Some(_) => issues.push(PackageIssue::ServerRejected {
                        server: short_name(server),
                        problem: ServerProblem::ServiceNotAClassName,
                    }),
                    None => issues.push(PackageIssue::ServerRejected {
                        server: short_name(server),
                        problem: ServerProblem::ServiceMissing,
                    }),
                }
            }
        }
        Some(_) => {
            issues.push(PackageIssue::BadExtension {
                field: "/extensions/org.agentos/mcpServers".to_owned(),
            });
            rejected = true;
        }
    }
    // MCP-44: unique across plugin.json and mcp.json combined.
    let binder_names = value
        .pointer("/extensions/org.agentos/mcpServers")
        .and_then(Value::as_object)
        .map(|m| m.keys().cloned().collect::<Vec<_>>())
        .unwrap_or_default();
    let mut seen = std::collections::BTreeSet::new();
    for n in binder_names.iter().chain(remote) {
        if !seen.insert(n.as_str()) {
            issues.push(PackageIssue::DuplicateServer {
                server: short_name(n),
            });
            rejected = true;
        }
    }
    declared += remote.len();
    if rejected {
        return None;
    }
    Some(Manifest {
        name,
        version: text("version"),
        description: text("description"),
        display_name,
        servers,
        declared_servers: declared,
    })
}

/// Why one declared server was rejected (MCP-48's host counterpart).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ServerProblem {
    /// The server name is empty, longer than [`SERVER_NAME_MAX`] or has characters outside
    /// `[A-Za-z0-9_.-]`.
    BadName,
    /// The server name uses the reserved `user.` prefix (MCP-46).
    ReservedName,
    /// No `service` string.
    ServiceMissing,
    /// `service` is not a fully qualified class name.
    ServiceNotAClassName,
}

impl std::fmt::Display for ServerProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ServerProblem::BadName => "the server name must be 1-64 characters of [A-Za-z0-9_.-]",
            ServerProblem::ReservedName => "the prefix \"user.\" is reserved",
            ServerProblem::ServiceMissing => "\"service\" is missing",
            ServerProblem::ServiceNotAClassName => {
                "\"service\" is not a fully qualified class name"
            }
        })
    }
}

fn server_name_problem(name: &str) -> Option<ServerProblem> {
    if name.is_empty()
        || name.len() > SERVER_NAME_MAX
        || !name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
    {
        Some(ServerProblem::BadName)
    } else if name.starts_with(RESERVED_PREFIX) {
        Some(ServerProblem::ReservedName)
    } else {
        None
    }
}

/// `a.b.C`: at least two dot-separated Java identifiers (ASCII subset).
fn is_class_name(s: &str) -> bool {
    let parts: Vec<&str> = s.split('.').collect();
    s.len() <= 256
        && parts.len() >= 2
        && parts.iter().all(|p| {
            let mut chars = p.chars();
            chars
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == '$')
                && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
        })
}

/// One `mcp.json` server: never started, always reported unsupported (MCP-49).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteServer {
    /// The key under `mcpServers`.
    pub name: String,
    /// `stdio`, `streamable-http`, `sse`, or `unknown`.
    pub transport: &'static str,
}

/// Reads `mcp.json`: `{"mcpServers": {<name>: {…}}}`. `Err` when it is not that shape.
pub(crate) fn remote_servers(value: &Value) -> Result<Vec<RemoteServer>, &'static str> {
    let map = value
        .get("mcpServers")
        .and_then(Value::as_object)
        .ok_or("/mcpServers")?;
    Ok(map
        .iter()
        .map(|(name, decl)| {
            let ty = decl.get("type").and_then(Value::as_str);
            let transport = match ty {
                Some("stdio") => "stdio",
                Some("http" | "streamable-http" | "streamableHttp") => "streamable-http",
                Some("sse") => "sse",
                Some(_) => "unknown",
                None if decl.get("command").is_some() => "stdio",
                None if decl.get("url").is_some() => "streamable-http",
                None => "unknown",
            };
            RemoteServer {
                name: name.clone(),
                transport,
            }
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pinned_schema_compiles() {
        assert!(validator().is_some());
    }

    #[test]
    fn class_names() {
        assert!(is_class_name(
            "org.agentos.sample.notes.agent.NotesMcpService"
        ));
        assert!(!is_class_name("NotesMcpService"));
        assert!(!is_class_name("org..Notes"));
        assert!(!is_class_name("org.9notes.X"));
    }
}
