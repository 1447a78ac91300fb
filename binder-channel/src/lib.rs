//! # binder-channel
//!
//! binder-channel-v1 (seed 000 §4.12, SPEC CH-01..CH-47): the message channel that carries
//! JSON-RPC between AgentOS callers, the agent and MCP plugins — one JSON-RPC message per
//! oneway `IChannel.send`, with a credit window, cumulative acks, violation detection, close
//! reasons and kernel-given peer identity.
//!
//! - [`flow`]: the sans-IO state machine (window, acks, violations, timers; injectable clock).
//! - [`Channel`]: the async API over any carrier — `send`, `recv`/`messages`, `close`,
//!   `peer`, `await_writable`.
//! - [`carrier`]: the [`Link`] / [`InboundSender`] pair a carrier implements (rsbinder lives in
//!   `binder`; see its docs).
//! - [`memory`]: the in-memory pair and a scripted peer for tests.
//! - [`lines`]: the line-delimited stream carrier (stdio, Unix socket, TCP loopback).
//! - [`jsonrpc`]: JSON-RPC 2.0 framing shared by the MCP and ACP layers (classification,
//!   rejection errors, CH-13 oversize handling).
//! - [`limits`]: every number of the protocol (GEN-01).
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use binder_channel::{memory, CloseReason};
//!
//! let (agent, plugin) = memory::pair(1_000, 10_123)?;
//! agent.send(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#)?;
//! let request = plugin.recv().await.ok_or("closed")?;
//! assert!(request.contains("tools/list"));
//! assert_eq!(agent.close().await, CloseReason::Local);
//! assert_eq!(plugin.closed().await, CloseReason::Remote);
//! # Ok(()) }
//! ```
#![deny(missing_docs)]

pub mod binder;
pub mod carrier;
mod channel;
pub mod flow;
pub mod jsonrpc;
pub mod limits;
pub mod lines;
pub mod memory;
mod reason;
pub mod text;

pub use carrier::{AttachError, InboundSender, Link, LinkError, PeerIdentity, PendingChannel};
pub use channel::Channel;
pub use flow::FlowStats;
pub use reason::{CloseClass, CloseReason, Failure, SendError, Violation};
