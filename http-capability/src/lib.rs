//! capbridge `http-capability` crate (see DESIGN.md). Under construction.
#![deny(missing_docs)]
