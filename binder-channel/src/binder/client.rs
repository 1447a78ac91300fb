//! The opening side: create our receiving end, call `open`, wrap the returned end (CH-05).

use std::os::unix::fs::MetadataExt;
use std::sync::Arc;
use std::time::Duration;

use rsbinder::{Endpoint, SIBinder, StatusCode, Strong, Uri};

use super::aidl::org::agentos::channel::IAcpService::IAcpService;
use super::aidl::org::agentos::channel::IChannel::IChannel;
use super::aidl::org::agentos::channel::IMcpService::IMcpService;
use super::error::BinderCarrierError;
use super::link::{BinderLink, DeathForward};
use super::receiving_end::{LocalEnd, ReceivingEnd};
use super::refusal::parse_refusal;
use super::service::ServiceKind;
use crate::{Channel, PeerIdentity};

/// Incoming (callback) connections a client opens on rsbinder RPC: the peer's oneway calls on
/// our receiving end and the session's death detection travel on them.
pub const RPC_INCOMING_CONNECTIONS: u32 = 1;

/// How to open a channel.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct ConnectOptions {
    /// The UID the peer must have (CH-05 step 4; on Android, `PackageManager.getPackageUid`).
    /// Required on kernel Binder. On a `unix://` endpoint it defaults to the owner of the socket
    /// file, which the kernel set to the UID that bound it; when given there, it must match.
    pub expected_peer_uid: Option<u32>,
    /// rsbinder RPC only: how long the peer may take to answer before the session counts as
    /// broken (connect, handshake and `open`). `None` waits forever.
    pub timeout: Option<Duration>,
}

impl ConnectOptions {
    /// Options that require the peer to run as `uid`.
    pub fn expecting_uid(uid: u32) -> ConnectOptions {
        ConnectOptions {
            expected_peer_uid: Some(uid),
            ..ConnectOptions::default()
        }
    }
}

/// An opened channel and the peer's receiving end it sends to.
#[derive(Debug)]
pub struct BinderChannel {
    /// The channel.
    pub channel: Channel,
    peer: SIBinder,
}

impl BinderChannel {
    /// The peer's receiving end (`IChannel` proxy), for liveness checks.
    pub fn peer_binder(&self) -> &SIBinder {
        &self.peer
    }
}

/// The peer UID a client binds for `uri`.
fn expected_uid(uri: &Uri, options: &ConnectOptions) -> Result<u32, BinderCarrierError> {
    match (uri.endpoint(), options.expected_peer_uid) {
        (Endpoint::Unix(path), expected) => {
            let owner = std::fs::metadata(path)
                .map_err(BinderCarrierError::Socket)?
                .uid();
            match expected {
                Some(expected) if expected != owner => Err(BinderCarrierError::PeerUidMismatch {
                    expected,
                    actual: owner,
                }),
                _ => Ok(owner),
            }
        }
        (_, Some(uid)) => Ok(uid),
        (_, None) => Err(BinderCarrierError::PeerUidUnknown),
    }
}

/// Maps a failed `open` to a refusal (CH-07) or a transport failure.
fn open_error(status: &rsbinder::Status) -> BinderCarrierError {
    match status.exception_code() {
        rsbinder::ExceptionCode::Security => BinderCarrierError::Refused {
            reason: status.message().and_then(parse_refusal),
        },
        _ => match status.transaction_error() {
            StatusCode::DeadObject => BinderCarrierError::PeerDied,
            code => BinderCarrierError::Binder(code),
        },
    }
}

/// The blocking part of establishment: look the service up and call `open(local)`.
fn open_blocking(
    uri: Uri,
    kind: ServiceKind,
    timeout: Option<Duration>,
    local: SIBinder,
) -> Result<(Strong<dyn IChannel>, rsbinder::Client), BinderCarrierError> {
    let name = uri
        .service()
        .ok_or(BinderCarrierError::MissingServiceName)?
        .to_owned();
    let resolver_uri = Uri::new(uri.endpoint().clone()).with_wire(uri.wire());
    let client = rsbinder::Client::open_with(resolver_uri, |options, endpoint| {
        if !endpoint.is_kernel() {
            options.incoming_connections = Some(RPC_INCOMING_CONNECTIONS);
            options.timeout = timeout;
        }
    })?;
    let ours = LocalEnd::strong(local);
    let peer = match kind {
        ServiceKind::Mcp => client
            .get::<dyn IMcpService>(&name)?
            .r#open(&ours)
            .map_err(|e| open_error(&e))?,
        ServiceKind::Acp => client
            .get::<dyn IAcpService>(&name)?
            .r#open(&ours)
            .map_err(|e| open_error(&e))?,
    };
    Ok((peer, client))
}

/// Opens a channel on the `IMcpService` / `IAcpService` named by `uri` (CH-05):
///
/// 1. creates our receiving end first, so it can already receive;
/// 2. calls `open(ours)` (blocking work runs on tokio's blocking pool);
/// 3. links to the death of the returned end;
/// 4. binds the peer UID (see [`ConnectOptions::expected_peer_uid`]): every inbound call is
///    checked against it (CH-08).
///
/// `uri` is `binder://name` for kernel Binder or an rsbinder RPC URI (see
/// [`super::rpc_uri`]). Must run inside a tokio runtime.
pub async fn connect(
    uri: Uri,
    kind: ServiceKind,
    options: ConnectOptions,
) -> Result<BinderChannel, BinderCarrierError> {
    let uid = expected_uid(&uri, &options)?;
    let (inbound, pending) = Channel::prepare(PeerIdentity::uid(uid));
    let local = ReceivingEnd::new_binder(inbound.clone());
    let (peer, client) = {
        let local = local.clone();
        let timeout = options.timeout;
        tokio::task::spawn_blocking(move || open_blocking(uri, kind, timeout, local))
            .await
            .map_err(|_| BinderCarrierError::Task)??
    };
    let session = client.session().cloned();
    let close_session = move || {
        if let Some(session) = &session {
            session.close_session();
        }
    };
    let peer_binder = peer.as_binder();
    let death = DeathForward::new(inbound);
    if let Err(code) = peer_binder.link_to_death_arc(&death) {
        close_session();
        return Err(match code {
            StatusCode::DeadObject => BinderCarrierError::PeerDied,
            other => BinderCarrierError::Binder(other),
        });
    }
    let link = BinderLink::new(peer, death, local, Some(Box::new(close_session)));
    let channel = pending
        .attach(Arc::new(link))
        .map_err(|_| BinderCarrierError::NoRuntime)?;
    tracing::info!(peer_uid = uid, kind = ?kind, "binder-channel: channel opened");
    drop(client);
    Ok(BinderChannel {
        channel,
        peer: peer_binder,
    })
}
