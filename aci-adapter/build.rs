//! Generates the Rust stubs for `ai.aci.core.IACIService` / `IACICallback` (SPEC Appendix E.1,
//! ACI-02) with `rsbinder-aidl`. The `.aidl` files live in the workspace's top-level `aidl/`
//! folder, the single source shared with `aidl --lang=java`. `ACIRequest` / `ACIResponse` are
//! unstructured parcelables (`rust_type`) whose (de)serialization is hand-written in
//! `src/wire.rs` (E.2, E.2a).

use std::path::PathBuf;

/// The AIDL files, in the order the generator reads them.
const AIDL_FILES: [&str; 4] = [
    "ai/aci/core/ACIRequest.aidl",
    "ai/aci/core/ACIResponse.aidl",
    "ai/aci/core/IACICallback.aidl",
    "ai/aci/core/IACIService.aidl",
];

fn main() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("aidl");
    let mut builder = rsbinder_aidl::Builder::new()
        .include_dir(&root)
        .output(PathBuf::from("aci_aidl.rs"))
        .set_async_support(false);
    for file in AIDL_FILES {
        let path = root.join(file);
        println!("cargo:rerun-if-changed={}", path.display());
        builder = builder.source(path);
    }
    if let Err(err) = builder.generate() {
        // A build script reports failure by exiting non-zero; the message goes to cargo.
        eprintln!("rsbinder-aidl failed on {}: {err}", root.display());
        std::process::exit(1);
    }
}
