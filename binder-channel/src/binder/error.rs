//! Errors of the rsbinder carrier.

use super::refusal::RefusalReason;

/// Why a Binder channel could not be served or opened.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BinderCarrierError {
    /// No tokio runtime is running here; channels need one for their writer task.
    #[error("no tokio runtime to run the channel on")]
    NoRuntime,
    /// The URI names no service (`…#name`, `binder://name`).
    #[error("the URI names no service")]
    MissingServiceName,
    /// The peer's UID cannot be learnt from the transport (kernel Binder, abstract sockets):
    /// pass it in [`super::ConnectOptions::expected_peer_uid`], as Android clients take it from
    /// `PackageManager.getPackageUid` (CH-05 step 4).
    #[error("the expected peer UID is unknown for this endpoint")]
    PeerUidUnknown,
    /// The socket's owner is not the UID the caller expected.
    #[error("the peer runs as UID {actual}, expected {expected}")]
    PeerUidMismatch {
        /// The UID the caller expected.
        expected: u32,
        /// The UID that owns the socket.
        actual: u32,
    },
    /// The socket path could not be inspected for its owner.
    #[error("cannot read the owner of the socket: {0}")]
    Socket(#[source] std::io::Error),
    /// `open` was refused with `SecurityException("agentos.acp.<reason>: …")` (CH-06). `reason`
    /// is `None` for an unknown or missing reason code, a generic failure (CH-07).
    #[error("open refused ({})", reason.map_or("unknown reason", RefusalReason::code))]
    Refused {
        /// The parsed reason code.
        reason: Option<RefusalReason>,
    },
    /// The peer died during establishment.
    #[error("the peer died while the channel was opened")]
    PeerDied,
    /// A Binder transport failure.
    #[error("binder: {0:?}")]
    Binder(rsbinder::StatusCode),
    /// The blocking Binder work could not run.
    #[error("the blocking binder task failed")]
    Task,
}

impl From<rsbinder::StatusCode> for BinderCarrierError {
    fn from(code: rsbinder::StatusCode) -> Self {
        BinderCarrierError::Binder(code)
    }
}
