//! [`McpToolRegistry`]: the tools one provider server offers, with the registration rules of
//! MCP-05 checked when a tool is registered.

use std::collections::HashSet;
use std::future::Future;
use std::sync::Arc;

use capability_model::validate::{input_schema_problem, tool_name_problem};
use capability_model::{
    Annotations, CancelToken, Capability, CapabilityId, Catalog, Source, ToolOutput,
};
use futures::future::BoxFuture;
use rmcp::model::{Tool, ToolAnnotations};
use serde_json::{Map, Value};

/// What a handler returns when it fails in a way it did not turn into
/// [`ToolOutput::error`] itself. The provider answers with a generic sentence; this error's
/// text never reaches the wire (MCP-09).
pub type HandlerError = Box<dyn std::error::Error + Send + Sync>;

/// The future a handler returns.
pub type ToolFuture = BoxFuture<'static, Result<ToolOutput, HandlerError>>;

/// A registered handler: validated arguments and the call's cancellation token in, a
/// [`ToolOutput`] out.
pub(crate) type Handler = Arc<dyn Fn(Map<String, Value>, CancelToken) -> ToolFuture + Send + Sync>;

/// Why a tool could not be registered (MCP-05). Registration errors are for the plugin's
/// developer, so they name the tool.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RegistryError {
    /// The name is not 1–128 characters of `[A-Za-z0-9_.-]`.
    #[error("invalid tool name: {reason}")]
    InvalidName {
        /// One sentence.
        reason: &'static str,
    },
    /// The input schema is not an object schema (`"type": "object"`) or not valid JSON Schema.
    #[error("tool `{name}`: {reason}")]
    InvalidSchema {
        /// The tool.
        name: String,
        /// One sentence.
        reason: String,
    },
    /// A tool of that name is already registered on this server.
    #[error("tool `{name}` is already registered on this server")]
    Duplicate {
        /// The tool.
        name: String,
    },
}

/// One registered tool.
pub(crate) struct RegisteredTool {
    pub(crate) tool: Tool,
    pub(crate) handler: Handler,
}

impl std::fmt::Debug for RegisteredTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RegisteredTool")
            .field("name", &self.tool.name)
            .finish_non_exhaustive()
    }
}

/// The tools of one provider server, in registration order.
///
/// ```
/// use capability_model::{Annotations, ToolOutput};
/// use mcp_adapter::McpToolRegistry;
/// use serde_json::json;
///
/// let mut registry = McpToolRegistry::new("notes");
/// registry.tool(
///     "note_add", Some("Add a note"), "Add a note with the given text.",
///     json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
///     Annotations::default(),
///     |args, _cancel| async move {
///         let text = args.get("text").and_then(|t| t.as_str()).unwrap_or_default().to_owned();
///         Ok(ToolOutput::json(json!({"id": 1, "text": text})))
///     },
/// )?;
/// assert!(registry.tool("note_add", None, "again", json!({"type": "object"}),
///     Annotations::default(), |_, _| async { Ok(ToolOutput::text("")) }).is_err());
/// assert!(registry.tool("bad name", None, "x", json!({"type": "object"}),
///     Annotations::default(), |_, _| async { Ok(ToolOutput::text("")) }).is_err());
/// # Ok::<(), mcp_adapter::RegistryError>(())
/// ```
#[derive(Debug)]
pub struct McpToolRegistry {
    server: String,
    tools: Vec<RegisteredTool>,
    names: HashSet<String>,
}

impl McpToolRegistry {
    /// An empty registry for the server `server_name`.
    pub fn new(server_name: impl Into<String>) -> McpToolRegistry {
        McpToolRegistry {
            server: server_name.into(),
            tools: Vec::new(),
            names: HashSet::new(),
        }
    }

    /// Registers a tool (MCP-05): `name` is 1–128 characters of `[A-Za-z0-9_.-]` and unique
    /// on this server, `input_schema` an object schema, `description` English text for the
    /// model, `annotations` hints (all unset by default). The handler receives arguments
    /// already validated against `input_schema` and a token that fires when the client
    /// cancels the call.
    pub fn tool<F, Fut>(
        &mut self,
        name: &str,
        title: Option<&str>,
        description: &str,
        input_schema: Value,
        annotations: Annotations,
        handler: F,
    ) -> Result<&mut McpToolRegistry, RegistryError>
    where
        F: Fn(Map<String, Value>, CancelToken) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ToolOutput, HandlerError>> + Send + 'static,
    {
        if let Some(reason) = tool_name_problem(name) {
            return Err(RegistryError::InvalidName { reason });
        }
        if let Some(reason) = input_schema_problem(&input_schema) {
            return Err(RegistryError::InvalidSchema {
                name: name.to_owned(),
                reason,
            });
        }
        let Value::Object(schema) = input_schema else {
            // input_schema_problem accepts objects only.
            return Err(RegistryError::InvalidSchema {
                name: name.to_owned(),
                reason: "the input schema is not a JSON object".to_owned(),
            });
        };
        if !self.names.insert(name.to_owned()) {
            return Err(RegistryError::Duplicate {
                name: name.to_owned(),
            });
        }
        let mut tool = Tool::new(name.to_owned(), description.to_owned(), schema);
        tool.title = title.map(str::to_owned);
        if annotations != Annotations::default() {
            tool.annotations = Some(ToolAnnotations::from_raw(
                None,
                annotations.read_only_hint,
                annotations.destructive_hint,
                annotations.idempotent_hint,
                annotations.open_world_hint,
            ));
        }
        let handler: Handler = Arc::new(move |args, cancel| Box::pin(handler(args, cancel)));
        self.tools.push(RegisteredTool { tool, handler });
        Ok(self)
    }

    /// The server this registry belongs to.
    pub fn server_name(&self) -> &str {
        &self.server
    }

    /// Registered tool names, in registration order.
    pub fn names(&self) -> Vec<&str> {
        self.tools.iter().map(|t| t.tool.name.as_ref()).collect()
    }

    /// Number of registered tools.
    pub fn len(&self) -> usize {
        self.tools.len()
    }

    /// No tool registered.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// Freezes the registry into the set a server serves.
    pub(crate) fn finish(self) -> ToolSet {
        let capabilities = self.tools.iter().map(|t| {
            let mut cap = Capability::new(
                CapabilityId::new(
                    Source::Mcp,
                    &self.server,
                    &self.server,
                    t.tool.name.as_ref(),
                ),
                t.tool.description.as_deref().unwrap_or_default(),
            );
            cap.input_schema = Value::Object((*t.tool.input_schema).clone());
            cap
        });
        let catalog = Catalog::build(capabilities.collect::<Vec<_>>());
        ToolSet {
            server: self.server,
            tools: self.tools,
            catalog,
        }
    }
}

/// A frozen registry: what `tools/list` returns and `tools/call` dispatches to.
#[derive(Debug)]
pub(crate) struct ToolSet {
    server: String,
    pub(crate) tools: Vec<RegisteredTool>,
    /// Argument validation reuses the catalog's validator and its value-free messages.
    catalog: Catalog,
}

/// Why a `tools/call` did not reach a handler.
pub(crate) enum Dispatch<'a> {
    /// Run this handler with these validated arguments.
    Run(&'a Handler, Map<String, Value>),
    /// No such tool.
    UnknownTool,
    /// The arguments do not match the schema: one sentence, no values.
    InvalidArguments(String),
}

impl ToolSet {
    pub(crate) fn empty(server: &str) -> ToolSet {
        McpToolRegistry::new(server).finish()
    }

    /// The `tools/list` entries.
    pub(crate) fn list(&self) -> Vec<Tool> {
        self.tools.iter().map(|t| t.tool.clone()).collect()
    }

    pub(crate) fn dispatch(&self, name: &str, arguments: &Value) -> Dispatch<'_> {
        let Some(tool) = self.tools.iter().find(|t| t.tool.name == name) else {
            return Dispatch::UnknownTool;
        };
        let id = CapabilityId::new(Source::Mcp, &self.server, &self.server, name);
        let Some(entry) = self.catalog.by_id(&id) else {
            return Dispatch::UnknownTool;
        };
        match entry.validate_arguments(arguments) {
            Ok(args) => Dispatch::Run(&tool.handler, args),
            Err(e) => Dispatch::InvalidArguments(e.0),
        }
    }
}
