//! # http-capability
//!
//! The ACI `http_request` capability (SPEC §5 HTTP-01..HTTP-14, seed 003 §4.1): the one tool
//! that lets an agent reach web APIs and devices on the user's local network (routers, NAS,
//! home automation) — and, for the same reason, the most dangerous tool in the catalog.
//!
//! - [`http_request_capability`] is the catalog record (risk HIGH, `openWorldHint`, HTTP-09),
//!   with the exact ACI params/result contract in its [`capability_model::AciInfo`].
//! - [`HttpExecutor`] runs calls: reqwest with rustls and gzip, no cookie store, no proxy, a
//!   connect and a total timeout, a byte cap, manual redirects (at most 5) and charset-aware
//!   decoding. Its result is an [`HttpResult`] that serializes to the ACI result map and
//!   converts into a model-bound [`capability_model::ToolOutput`].
//! - [`NetworkPolicy`] decides where requests may go. It is checked on the **resolved** IP of
//!   every connection, redirect hops included, inside the client's resolver, so DNS rebinding
//!   cannot bypass it. Link-local and cloud metadata addresses are always refused; cleartext
//!   `http` is allowed only to loopback and private ranges and only when enabled.
//! - [`render_http_result`] is the controller side (seed 003 `renderHttpResult`): it renders a
//!   result from capbridge or from a real ACI provider, decompressing `response_body_gz` with a
//!   hard bound so a gzip bomb cannot expand past 150,000 characters.
//! - [`ConsentSummary`] is what the "allow once / deny" card shows (HTTP-10).
//! - [`HttpCapabilitySource`] offers the capability as a
//!   [`capability_model::CapabilitySource`] of built-ins.
//!
//! Redirects: issue 5 asks for up to 5 redirects followed by hand (the default); SPEC HTTP-12
//! proposes returning every 3xx as-is, which `HttpConfig { max_redirects: 0, .. }` gives.
//! The executor runs on Tokio (reqwest): call it from inside a Tokio runtime.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use http_capability::{HttpConfig, HttpExecutor, NetworkPolicy, render_http_result};
//! use serde_json::json;
//!
//! let executor = HttpExecutor::new(HttpConfig {
//!     policy: NetworkPolicy::local_network(), // LAN devices over plain http
//!     ..HttpConfig::default()
//! })?;
//! let args = json!({"url": "http://192.168.1.1/status", "method": "GET"});
//! let result = executor.execute(args.as_object().ok_or("object")?).await?;
//! let aci_map = result.to_aci_result(); // what an ACI provider returns
//! println!("{}", render_http_result(&aci_map)?); // what the model sees
//! # Ok(()) }
//! ```
#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod body;
pub mod capability;
pub mod client;
pub mod consent;
pub mod error;
pub mod limits;
pub mod policy;
pub mod render;
pub mod request;
pub mod resolver;
pub mod result;
pub mod source;
pub mod text;

pub use body::BodyEncoding;
pub use capability::{CAPABILITY_ID, capability_id, http_request_capability};
pub use client::{BuildError, GzipMode, HttpConfig, HttpExecutor};
pub use consent::ConsentSummary;
pub use error::{HttpError, InvalidParameter};
pub use policy::{AddressClass, Cidr, HostPattern, NetworkPolicy, PolicyViolation, Scheme};
pub use render::{RenderError, render_http_result, render_tool_output};
pub use request::HttpRequest;
pub use resolver::{HostResolver, StaticResolver, SystemResolver};
pub use result::HttpResult;
pub use source::HttpCapabilitySource;
