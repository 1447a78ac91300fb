//! # acp-runtime
//!
//! The ACP v1 agent (seed 000 §1.4, §4; SPEC ACP-01..ACP-65, QTA, CNS, AUT, SMS, Appendix B):
//! one session serves MCP plugins, ACI providers, `http_request` and per-session servers side by
//! side through one [`capability_model::Catalog`], under the permissions crate's scope, risk,
//! consent and quota policy.
//!
//! - [`model`]: the model client (OpenAI-compatible Chat Completions, streamed) and the fake
//!   model server used by tests and the demo.
#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod model;
