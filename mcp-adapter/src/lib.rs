//! # mcp-adapter
//!
//! AgentOS MCP plugins over binder-channel-v1, both sides (seed 000 §5, SPEC MCP-03..MCP-32):
//!
//! - **Provider** ([`McpServer`], [`McpToolRegistry`]): what `McpBinderService` does — tools
//!   registered under the MCP-05 rules, `initialize` with revision negotiation, `tools/list`,
//!   `tools/call` with argument validation before the handler, cancellation reaching the
//!   handler, `notifications/tools/list_changed`, at most 8 calls in flight per server.
//! - **Host** ([`McpClient`], [`McpSource`]): what the Extension Host's client does —
//!   `initialize`, `tools/list` → [`capability_model::Capability`] records, `tools/call` with
//!   timeout and cancellation, the four failure kinds of seed 000 §5.12 as [`ClientError`],
//!   reconnect after the provider died, and [`capability_model::CapabilitySource`].
//! - **Per-session servers** ([`SessionMcpServers`], [`McpHttpServer`], module
//!   [`session_http`]): the Streamable HTTP MCP servers an ACP client passes in `session/new`
//!   (SMS-01..SMS-11) — batch validation, `ses__` tools, connection status and retry hold-off.
//!
//! - **Plugin packages** ([`plugin`]): Agent Plugins 1.0 `plugin.json` validated offline
//!   against a pinned schema, servers, unavailable-with-reasons, device-level name and
//!   identity rules (MCP-40..MCP-52).
//! - **Skills** ([`skills`]): the Skill catalog, its system-prompt section and the built-in
//!   tool `read_skill` for the ACP runtime (MCP-60..MCP-70).
//! - **Discovery** ([`discovery`]): plugins of a Linux host registry → [`McpSource`]s.
//!
//! The MCP shapes are rmcp's protocol model types (`rmcp::model`); JSON-RPC framing is
//! binder-channel's [`binder_channel::jsonrpc`].
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use capability_model::{Annotations, ToolOutput};
//! use mcp_adapter::{McpClient, McpServer};
//! use serde_json::json;
//!
//! let server = McpServer::new("notes", |r| {
//!     r.tool("note_count", None, "Count the notes.", json!({"type": "object"}),
//!         Annotations { read_only_hint: Some(true), ..Annotations::default() },
//!         |_, _| async { Ok(ToolOutput::json(json!({"count": 3}))) })?;
//!     Ok(())
//! })?;
//! let (host_end, plugin_end) = binder_channel::memory::pair(1_000, 10_123)?;
//! server.serve(plugin_end);
//! let client = McpClient::connect(host_end).await?;
//! let listing = client.list_capabilities("notes", "notes").await?;
//! assert_eq!(listing.capabilities[0].id.name, "note_count");
//! assert_eq!(listing.capabilities[0].annotations.read_only_hint, Some(true));
//! # Ok(()) }
//! ```
#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod client;
pub mod discovery;
pub mod error;
pub mod limits;
pub mod plugin;
pub mod protocol;
pub mod provider;
pub mod registry;
pub mod rmcp_transport;
pub mod session_http;
pub mod skills;
pub mod slots;
pub mod source;

pub use client::McpClient;
pub use discovery::{DiscoveredPlugin, Discovery, PluginStatus};
pub use error::ClientError;
pub use plugin::{PackageIssue, PluginPackage, UnavailableReason};
pub use provider::{GENERIC_FAILURE, McpServer};
pub use registry::{HandlerError, McpToolRegistry, RegistryError, ToolFuture};
pub use rmcp_transport::ChannelTransport;
pub use session_http::{McpHttpServer, ServerStatus, SessionMcpServers, StatusReason};
pub use skills::{SkillCatalog, SkillError};
pub use source::{Connector, McpSource, binder_connector};
