//! # capability-model
//!
//! The one record every capbridge crate speaks: a [`Capability`] from any source (AgentOS MCP
//! plugins, ACI providers, per-session MCP servers, built-ins), the model-facing naming rules,
//! and the [`Catalog`] that names, filters (toolScope, session modes) and validates them.
//!
//! Pure: no I/O, no async runtime, no protocol SDK. Adapters map their SDK types onto these.
#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod capability;
pub mod id;
pub mod issues;
pub mod limits;
pub mod output;
pub mod risk;
pub mod source;

pub use capability::{AciFlag, AciInfo, AciParam, AciResultField, AciType, Capability};
pub use id::{CapabilityId, Source};
pub use issues::{IssueKind, ProviderIssue};
pub use output::{ContentBlock, ToolOutput};
pub use risk::{Annotations, Risk};
pub use source::{CallError, CancelToken, CapabilitySource, ListError, Listing};
