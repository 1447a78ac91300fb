//! Generates the Rust stubs for the binder-channel-v1 AIDL (SPEC CH-01..CH-03) with
//! `rsbinder-aidl`. The `.aidl` files live in the workspace's top-level `aidl/` folder, the single
//! source shared with `aidl --lang=java`.

use std::path::PathBuf;

/// The AIDL files, in the order the generator reads them.
const AIDL_FILES: [&str; 3] = [
    "org/agentos/channel/IChannel.aidl",
    "org/agentos/channel/IAcpService.aidl",
    "org/agentos/channel/IMcpService.aidl",
];

fn main() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("aidl");
    let mut builder = rsbinder_aidl::Builder::new()
        .include_dir(&root)
        .output(PathBuf::from("binder_channel_aidl.rs"))
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
