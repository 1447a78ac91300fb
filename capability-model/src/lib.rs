//! # capability-model
//!
//! The one record every capbridge crate speaks: a [`Capability`] from any source (AgentOS MCP
//! plugins, ACI providers, per-session MCP servers, built-ins), the model-facing naming rules
//! ([`naming`]), and the [`Catalog`] that names, filters (toolScope, session modes) and
//! validates them.
//!
//! Pure: no I/O, no async runtime, no protocol SDK. Adapters map their SDK types onto these
//! records ([`aci`] for ACI capability JSON, [`mcp`] for MCP `tools/list` entries) and implement
//! [`CapabilitySource`].
//!
//! ```
//! use capability_model::{naming, Catalog, SessionMode, ToolScope, aci, Risk};
//! let listing = aci::capabilities_from_strings("aci.com.example.net", "netservice", &[
//!     r#"{"id":"http_request","description":"Send an HTTP request.",
//!         "params":[{"name":"url","type":"string","required":true,"description":"URL"}]}"#.into(),
//! ]);
//! let catalog = Catalog::build(listing.capabilities);
//! let entry = &catalog.entries()[0];
//! assert_eq!(entry.name, "mcp__aci_com_example_net__netservice__http_request");
//! assert_eq!(entry.capability.risk(), Risk::High);
//! assert!(entry.validate_arguments(&serde_json::json!({})).is_err());
//! ```
#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod aci;
pub mod capability;
pub mod catalog;
pub mod id;
pub mod issues;
pub mod limits;
pub mod mcp;
pub mod naming;
pub mod output;
pub mod risk;
pub mod scope;
pub mod source;
pub mod validate;

pub use capability::{AciFlag, AciInfo, AciParam, AciResultField, AciType, Capability};
pub use catalog::{ArgumentError, Catalog, CatalogIssue, Entry, NotInCatalog};
pub use id::{CapabilityId, Source, UnknownSource};
pub use issues::{IssueKind, ProviderIssue};
pub use output::{ContentBlock, ToolOutput};
pub use risk::{Annotations, Risk};
pub use scope::{ScopeEntry, ScopeError, SessionMode, ToolScope};
pub use source::{CallError, CancelToken, CapabilitySource, ListError, Listing};
