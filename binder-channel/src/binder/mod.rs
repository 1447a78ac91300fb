//! The rsbinder carrier: binder-channel-v1 over real Binder.
//!
//! - The AIDL of `aidl/org/agentos/channel/` (CH-01..CH-03) is compiled at build time by
//!   `rsbinder-aidl` ([`aidl`]).
//! - [`serve_channels`] / [`channel_service`] export an `IMcpService` or `IAcpService` whose
//!   `open(client)` binds the calling UID, links to the client's death and returns our
//!   receiving end (CH-05 step 3); refusals are `SecurityException`s (CH-06, [`Refusal`]).
//! - [`connect`] is the other side: our receiving end first, then `open`, then `linkToDeath` on
//!   the returned end and the peer UID binding (CH-05 steps 1, 2, 4).
//! - Every inbound `send`/`close`/`ack` is tagged with the kernel-given caller UID and checked
//!   by the channel core against the UID bound at `open`; a mismatch closes the channel as a
//!   `violation` (CH-08). A death notification closes it as `peer_died` (CH-42); a failed
//!   oneway call is never taken as death by itself (CH-43).
//!
//! The same code runs on two transports, chosen by the [`rsbinder::Uri`]:
//!
//! | | kernel Binder (`binder://name`) | rsbinder RPC (`unix:///path?profile=android13plus#name`) |
//! |---|---|---|
//! | where | `/dev/binder` (binder_linux, binderfs) with a service manager (`rsb_hub`) | any Linux host, Binder parcels over a Unix socket |
//! | caller UID | `getCallingUid` from the driver | `SO_PEERCRED` of the connection |
//! | death | `BR_DEAD_BINDER` | the session's connections dropping |
//! | expected peer UID on the client | [`ConnectOptions::expected_peer_uid`] | the socket file's owner |
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use binder_channel::binder::{AdmitAll, ConnectOptions, ServiceKind, connect, rpc_uri, serve_channels};
//!
//! // Provider process:
//! let uri = rpc_uri("/run/notes.sock", "notes");
//! let (_guard, mut incoming) = serve_channels(uri.clone(), ServiceKind::Mcp, AdmitAll)?;
//! // Client process:
//! let opened = connect(uri, ServiceKind::Mcp, ConnectOptions::default()).await?;
//! opened.channel.send(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#)?;
//! // Provider process again:
//! let channel = incoming.accept().await.ok_or("service gone")?;
//! let request = channel.recv().await;
//! # let _ = request;
//! # Ok(()) }
//! ```

pub mod aidl;
mod client;
mod error;
mod link;
mod receiving_end;
mod refusal;
mod service;

use std::path::Path;

pub use client::{BinderChannel, ConnectOptions, RPC_INCOMING_CONNECTIONS, connect};
pub use error::BinderCarrierError;
pub use refusal::{Refusal, RefusalReason, parse_refusal};
pub use service::{
    Admission, AdmitAll, IncomingChannels, ServiceKind, channel_service, serve_channels,
};

/// The rsbinder RPC URI for the service `name` on the Unix socket at `path`, speaking the
/// android-13+ wire (needed for the callback connections the peer's oneway calls use).
pub fn rpc_uri(path: impl AsRef<Path>, name: &str) -> rsbinder::Uri {
    rsbinder::Endpoint::unix(path.as_ref())
        .with_service(name)
        .with_wire(rsbinder::entry::WireProfile::Android13Plus(
            rsbinder::entry::WireVersion::MAX,
        ))
}

/// The kernel Binder URI for the service `name` (`binder://name`), on the default driver.
pub fn kernel_uri(name: &str) -> rsbinder::Uri {
    rsbinder::Uri::kernel().with_service(name)
}

/// Whether kernel Binder is available here (`/dev/binderfs/binder` or `/dev/binder`).
pub fn kernel_binder_available() -> bool {
    Path::new(rsbinder::DEFAULT_BINDER_PATH).exists()
        || Path::new(rsbinder::LEGACY_BINDER_PATH).exists()
}
