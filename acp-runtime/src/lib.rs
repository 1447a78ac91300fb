//! # acp-runtime
//!
//! The ACP v1 agent (seed 000 §1.4, §4; SPEC ACP-01..ACP-65, QTA, CNS, AUT, SMS, Appendix B):
//! one session serves MCP plugins, ACI providers, `http_request` and per-session servers side by
//! side through one [`capability_model::Catalog`], under the permissions crate's scope, risk,
//! consent and quota policy.
//!
//! - [`Runtime`]: sessions, the task queue, storage; [`Runtime::serve_lines`] speaks ACP as
//!   line-delimited JSON-RPC 2.0 (stdio, Unix sockets, test pipes).
//! - [`RuntimeConfig`]: the model, the capability sources, the consent surface, the resolver.
//! - [`errors`]: the wire error registry (SPEC Appendix B) and [`RuntimeError`].
//! - [`model`]: the model client (OpenAI-compatible Chat Completions, streamed) and the fake
//!   model server used by tests and the demo.
//!
//! ACP messages are built from the `agent-client-protocol` schema types; the JSON-RPC layer is
//! our own so that error codes (`-32040..-32059`, `data.agentosCode`, `retryable`) and the
//! 65,536-character line limit are exact.
#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod binder;
pub mod config;
mod connection;
pub mod errors;
mod handlers;
pub mod ids;
pub mod model;
mod runtime;
pub mod skills;
pub mod store;
pub mod text;
mod tools;
mod turn;

pub use binder::BinderServer;
pub use config::{Limits, RuntimeConfig, SkillsProvider};
pub use errors::{RpcError, RuntimeError};
pub use runtime::{Runtime, may_see, owner_key};
pub use turn::call_error_text;
