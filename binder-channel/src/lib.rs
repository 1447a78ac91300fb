//! capbridge `binder-channel` crate (see DESIGN.md). Under construction.
#![deny(missing_docs)]
