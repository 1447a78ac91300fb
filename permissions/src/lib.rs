//! capbridge `permissions` crate (see DESIGN.md). Under construction.
#![deny(missing_docs)]
