//! Rust stubs generated from `aidl/org/agentos/channel/*.aidl` by `rsbinder-aidl` at build time.
#![allow(
    missing_docs,
    missing_debug_implementations,
    unreachable_pub,
    clippy::all,
    clippy::unwrap_used,
    clippy::expect_used,
    non_snake_case,
    non_camel_case_types,
    unused_imports,
    unused_qualifications,
    dead_code
)]

rsbinder::include_aidl!("binder_channel_aidl");
