//! An MCP `tools/list` result (name, title, description, inputSchema, outputSchema,
//! annotations) → [`Capability`] (CAT-02, CAT-66, MCP-05).
//!
//! ```
//! use serde_json::json;
//! use capability_model::{mcp, Source};
//! let listing = mcp::capabilities_from_tools_list(Source::Mcp, "com.example.notes", "main", &json!({
//!     "tools": [{"name": "list", "description": "List notes.",
//!                "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": true}}]
//! }));
//! assert_eq!(listing.capabilities.len(), 1);
//! assert_eq!(listing.capabilities[0].annotations.read_only_hint, Some(true));
//! ```

use serde_json::Value;

use crate::capability::Capability;
use crate::id::{CapabilityId, Source};
use crate::issues::{IssueKind, ProviderIssue};
use crate::risk::Annotations;
use crate::source::Listing;
use crate::validate::{input_schema_problem, tool_name_problem};

/// Converts a `tools/list` result (`{"tools":[…]}`) or a bare array of tools. Broken entries
/// become issues; entries sharing a name within the server are all left out (MCP-05).
pub fn capabilities_from_tools_list(
    source: Source,
    plugin: &str,
    server: &str,
    value: &Value,
) -> Listing {
    let tools = match value {
        Value::Array(a) => a,
        Value::Object(o) => match o.get("tools") {
            Some(Value::Array(a)) => a,
            _ => {
                return Listing {
                    capabilities: vec![],
                    issues: vec![ProviderIssue::new(
                        IssueKind::MalformedEntry,
                        "the tools/list result has no \"tools\" array",
                    )],
                };
            }
        },
        _ => {
            return Listing {
                capabilities: vec![],
                issues: vec![ProviderIssue::new(
                    IssueKind::MalformedEntry,
                    "the tools/list result is not a JSON object",
                )],
            };
        }
    };
    let mut listing = Listing::default();
    let mut ok: Vec<(usize, Capability)> = Vec::with_capacity(tools.len());
    for (i, t) in tools.iter().enumerate() {
        match capability_from_tool(source, plugin, server, t) {
            Ok(c) => ok.push((i, c)),
            Err(issue) => listing.issues.push(issue.at(i)),
        }
    }
    listing.push_unique(ok, "tools of this server");
    listing
}

/// Converts one `tools/list` entry.
pub fn capability_from_tool(
    source: Source,
    plugin: &str,
    server: &str,
    tool: &Value,
) -> Result<Capability, ProviderIssue> {
    let malformed = |m: &str| ProviderIssue::new(IssueKind::MalformedEntry, m.to_owned());
    let obj = tool
        .as_object()
        .ok_or_else(|| malformed("the tool is not a JSON object"))?;
    let name = obj
        .get("name")
        .and_then(Value::as_str)
        .ok_or_else(|| malformed("the tool has no string \"name\""))?;
    if let Some(p) = tool_name_problem(name) {
        return Err(ProviderIssue::new(IssueKind::InvalidName, p).entry(name));
    }
    let opt_str = |key: &str| -> Result<Option<String>, ProviderIssue> {
        match obj.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(malformed(&format!("the tool's \"{key}\" is not a string")).entry(name)),
        }
    };
    let title = opt_str("title")?;
    let description = opt_str("description")?.unwrap_or_default();
    let input_schema = obj.get("inputSchema").ok_or_else(|| {
        ProviderIssue::new(IssueKind::InvalidSchema, "the tool has no inputSchema").entry(name)
    })?;
    if let Some(p) = input_schema_problem(input_schema) {
        return Err(ProviderIssue::new(IssueKind::InvalidSchema, p).entry(name));
    }
    let output_schema = match obj.get("outputSchema") {
        None | Some(Value::Null) => None,
        Some(s) => {
            if let Some(p) = input_schema_problem(s) {
                return Err(ProviderIssue::new(
                    IssueKind::InvalidSchema,
                    p.replace("input schema", "output schema"),
                )
                .entry(name));
            }
            Some(s.clone())
        }
    };
    let annotations = match obj.get("annotations") {
        None | Some(Value::Null) => Annotations::default(),
        Some(Value::Object(a)) => {
            let hint = |k: &str| a.get(k).and_then(Value::as_bool);
            Annotations {
                read_only_hint: hint("readOnlyHint"),
                destructive_hint: hint("destructiveHint"),
                idempotent_hint: hint("idempotentHint"),
                open_world_hint: hint("openWorldHint"),
            }
        }
        Some(_) => return Err(malformed("the tool's \"annotations\" is not an object").entry(name)),
    };
    let mut cap = Capability::new(CapabilityId::new(source, plugin, server, name), description);
    cap.title = title;
    cap.input_schema = input_schema.clone();
    cap.output_schema = output_schema;
    cap.annotations = annotations;
    Ok(cap)
}
