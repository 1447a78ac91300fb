//! # aci-adapter
//!
//! ACI (seed 003, SPEC ACI-01..ACI-51, Appendix E) on both sides, wire-compatible with aci-core:
//!
//! - [`bundle`], [`parcel`], [`wire`]: Android's Parcel/Bundle format and the hand-written
//!   `ACIRequest` / `ACIResponse` parcelables (E.2, E.2a).
//! - [`provider`]: the provider SDK core (`AciService`) and the server around it, enforcing the
//!   five permission layers with the kernel-given caller identity (E.6, ACI-20).
//! - [`controller`], [`convert`], [`source`]: what `QuroAciManager` does — discover, bind, ping,
//!   wake, pool, capability cache, call log — and the [`capability_model::CapabilitySource`]
//!   that puts each provider into the catalog as a virtual plugin (ACI-40).
#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod bundle;
pub mod controller;
pub mod convert;
pub mod parcel;
pub mod provider;
pub mod source;
pub mod wire;

pub use bundle::{Bundle, BundleValue};
pub use controller::{BinderConnector, CallMode, Controller, ControllerConfig, LaunchWaker};
pub use parcel::ParcelError;
pub use provider::{
    AciClient, AciClientError, AciServer, AciService, CapabilitySpec, ProviderError,
};
pub use source::AciSource;
pub use wire::{AciRequest, AciResponse};
