//! # permissions
//!
//! Who may make capbridge do what. One crate for both security models capbridge enforces
//! (SPEC §10 C-02, in this order):
//!
//! 1. **Caller authorization** ([`authorization`], AUT): an app's kernel UID is resolved to
//!    exactly one package + signing digest ([`identity`]); the user allows or denies it once;
//!    denials cool down for 10 minutes; a revocation closes the caller's channels.
//! 2. **Catalog ∩ toolScope ∩ mode**, then user disablement ([`pipeline`], CAT-69 step 1).
//! 3. **Risk and user policy** ([`policy`]): "always allow" (never for HIGH), "don't ask again".
//! 4. **Consent** ([`consent`], CNS): a FIFO broker (16 pending, 60 s from creation) over a
//!    [`consent::ConsentSurface`]; third-party text goes through [`sanitize`] (SEC-04).
//! 5. **ACI's five provider-side layers** ([`aci`], ACI-20) with `aci_permissions.xml`.
//!
//! Plus [`quota`] (QTA) for third-party prompts and [`store`] (SQLite) for decisions.
//!
//! The cores are sans-IO and take time from an injectable [`clock::Clock`]; [`Permissions`]
//! is the thin async shell the runtime holds.
//!
//! ```
//! # #![allow(clippy::unwrap_used)]
//! use std::sync::Arc;
//! use capability_model::{Capability, CapabilityId};
//! use permissions::{
//!     CatalogVerdict, FixedSurface, ManualClock, Millis, MemoryStore, Permissions,
//!     PermissionsConfig, Principal, RegistryResolver, ToolCall,
//! };
//!
//! # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
//! let perms = Permissions::new(
//!     PermissionsConfig::default(),
//!     Box::new(MemoryStore::new()),
//!     Arc::new(RegistryResolver::default()),
//!     Arc::new(FixedSurface::allow()),
//!     Arc::new(ManualClock::new(Millis(0))),
//! );
//! let cap = Capability::new(CapabilityId::mcp("notes", "notes", "note_add"), "Adds a note");
//! let call = ToolCall {
//!     principal: &Principal::SelfUi,
//!     session: "ses_1",
//!     capability: &cap,
//!     catalog: CatalogVerdict::Visible,
//!     session_has_scope: false,
//! };
//! // A WRITE tool: the user is asked; the fixed surface allows once.
//! let verdict = perms.authorize_tool_call(&call, &Default::default()).await;
//! assert!(verdict.may_run());
//!
//! // "Always allow" never bypasses step 1.
//! let hidden = ToolCall { catalog: CatalogVerdict::OutOfScope, ..call };
//! let verdict = perms.authorize_tool_call(&hidden, &Default::default()).await;
//! assert_eq!(verdict.code().map(|c| c.as_str()), Some("tool_not_in_catalog"));
//! # });
//! ```
#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod aci;
pub mod authorization;
pub mod clock;
pub mod consent;
pub mod gate;
pub mod identity;
pub mod limits;
pub mod outcome;
pub mod pipeline;
pub mod policy;
pub mod quota;
pub mod sanitize;
pub mod store;

pub use aci::{AciDenial, AciLayer, AciPermissionGate, AciPermissionHook, AciPolicy};
pub use authorization::{CallerAuthorization, OpenOutcome, RevokedCaller};
pub use clock::{Clock, ManualClock, Millis, SystemClock, TokioClock};
pub use consent::{
    CallerChoice, Choice, ConsentBroker, ConsentOutcome, ConsentSurface, FixedSurface,
    ScriptedSurface, TerminalSurface,
};
pub use gate::{OpenRefusal, Permissions, PermissionsConfig, PermissionsError, ToolCallStart};
pub use identity::{
    AciExport, CertDigest, Exports, Identity, IdentityResolver, McpExport, Principal,
    RegistryEntry, RegistryResolver, ResolvedCaller, Uid,
};
pub use outcome::{AciErrorCode, AgentosCode};
pub use pipeline::{CallerPolicy, CatalogVerdict, Decision, PolicyEngine, ToolCall, ToolVerdict};
pub use quota::{QuotaConfig, QuotaRefusal, Quotas};
pub use store::{MemoryStore, PolicyStore, SqliteStore, StoreError};
