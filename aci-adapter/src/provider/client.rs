//! [`AciClient`]: the controller's proxy to one provider's `IACIService`, over rsbinder RPC or
//! kernel Binder. Blocking Binder work runs on tokio's blocking pool. Timeouts are the
//! caller's (wrap the futures in `tokio::time::timeout`); dropping a pending `call_async`
//! future is safe: a late `onResult` is then ignored.

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rsbinder::{
    BinderResult, DeathRecipient, Interface, SIBinder, StatusCode, Strong, Uri, WIBinder,
};
use tokio::sync::oneshot;

use crate::wire::{AciRequest, AciResponse, BnACICallback, IACICallback, IACIService};

/// Incoming (callback) connections the client opens on rsbinder RPC, so the provider can call
/// our `IACICallback` back.
pub const CLIENT_INCOMING_CONNECTIONS: u32 = 1;

/// Why a call through the proxy failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AciClientError {
    /// The URI names no service.
    #[error("the URI names no service")]
    MissingServiceName,
    /// The provider could not be reached at all (no socket, no such service, handshake
    /// failed): nothing was sent. On Linux hosts this is when the controller wakes it.
    #[error("cannot reach the provider: {0:?}")]
    Connect(StatusCode),
    /// The provider's process (or its Binder connection) is gone.
    #[error("the provider's binder is dead")]
    DeadBinder,
    /// The transaction failed in the Binder layer (too large, bad parcel, unknown code …).
    #[error("binder transaction failed: {0:?}")]
    Transaction(StatusCode),
    /// The provider threw (a Java exception, or a status from a Rust provider).
    #[error("the provider threw {exception:?}")]
    Remote {
        /// The exception code.
        exception: rsbinder::ExceptionCode,
        /// Its message, when any (bounded, untrusted).
        message: Option<String>,
    },
    /// The blocking Binder task did not complete.
    #[error("the binder task failed")]
    Task,
}

impl AciClientError {
    fn from_status(status: &rsbinder::Status) -> Self {
        match status.exception_code() {
            rsbinder::ExceptionCode::None | rsbinder::ExceptionCode::TransactionFailed => {
                Self::from_code(status.transaction_error())
            }
            exception => AciClientError::Remote {
                exception,
                message: status
                    .message()
                    .map(|m| m.chars().take(200).collect::<String>()),
            },
        }
    }

    fn from_code(code: StatusCode) -> Self {
        match code {
            StatusCode::DeadObject => AciClientError::DeadBinder,
            other => AciClientError::Transaction(other),
        }
    }

    /// Whether the failure happened before anything reached the provider's code for sure
    /// (a dead binder at send time, a parcel we could not build). Everything else may have run.
    pub fn is_dead_binder(&self) -> bool {
        matches!(self, AciClientError::DeadBinder)
    }
}

/// The callback object we host for one `callAsync` (E.1, `IACICallback`).
struct CallbackEnd {
    result: Mutex<Option<oneshot::Sender<AciResponse>>>,
    on_progress: Box<dyn Fn(i32, Option<String>) + Send + Sync>,
    capability: String,
}

impl Interface for CallbackEnd {}

impl IACICallback for CallbackEnd {
    fn r#onResult(&self, response: &AciResponse) -> BinderResult<()> {
        let sender = match self.result.lock() {
            Ok(mut slot) => slot.take(),
            Err(poisoned) => poisoned.into_inner().take(),
        };
        match sender {
            Some(tx) => {
                let _ = tx.send(response.clone());
            }
            None => tracing::warn!(
                capability = %self.capability,
                "ACI provider called onResult again; ignored"
            ),
        }
        Ok(())
    }

    fn r#onProgress(&self, progress: i32, message: Option<&str>) -> BinderResult<()> {
        let pending = self.result.lock().map(|s| s.is_some()).unwrap_or(false);
        if pending {
            (self.on_progress)(progress.clamp(0, 100), message.map(str::to_owned));
        } else {
            tracing::debug!(capability = %self.capability, "ACI onProgress after the result; ignored");
        }
        Ok(())
    }
}

/// Resolves a pending `call_async` when the provider's binder dies.
struct DeathSignal(Mutex<Option<oneshot::Sender<()>>>);

impl DeathRecipient for DeathSignal {
    fn binder_died(&self, _who: &WIBinder) {
        let tx = match self.0.lock() {
            Ok(mut slot) => slot.take(),
            Err(poisoned) => poisoned.into_inner().take(),
        };
        if let Some(tx) = tx {
            let _ = tx.send(());
        }
    }
}

/// A connected `IACIService` proxy.
#[derive(Clone)]
pub struct AciClient {
    service: Strong<dyn IACIService>,
    session: Arc<SessionHold>,
}

/// Keeps the RPC session open while any clone of the client lives.
struct SessionHold(Option<rsbinder::rpc::RpcSession>);

impl Drop for SessionHold {
    fn drop(&mut self) {
        if let Some(s) = &self.0 {
            s.close_session();
        }
    }
}

impl std::fmt::Debug for AciClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AciClient").finish_non_exhaustive()
    }
}

impl AciClient {
    /// Connects to the `IACIService` named by `uri` (`binder://name`, or an rsbinder RPC URI
    /// such as [`binder_channel::binder::rpc_uri`]). `timeout` bounds how long the peer may take
    /// to answer on RPC before the session counts as broken. Must run inside a tokio runtime.
    pub async fn connect(uri: Uri, timeout: Option<Duration>) -> Result<Self, AciClientError> {
        tokio::task::spawn_blocking(move || Self::connect_blocking(uri, timeout))
            .await
            .map_err(|_| AciClientError::Task)?
    }

    /// Connects over rsbinder RPC to the socket at `path`, service `name`.
    pub async fn connect_unix(path: impl AsRef<Path>, name: &str) -> Result<Self, AciClientError> {
        Self::connect(binder_channel::binder::rpc_uri(path, name), None).await
    }

    fn connect_blocking(uri: Uri, timeout: Option<Duration>) -> Result<Self, AciClientError> {
        let name = uri
            .service()
            .ok_or(AciClientError::MissingServiceName)?
            .to_owned();
        let resolver_uri = Uri::new(uri.endpoint().clone()).with_wire(uri.wire());
        let client = rsbinder::Client::open_with(resolver_uri, |options, endpoint| {
            if !endpoint.is_kernel() {
                options.incoming_connections = Some(CLIENT_INCOMING_CONNECTIONS);
                options.timeout = timeout;
            }
        })
        .map_err(AciClientError::Connect)?;
        let service = client
            .get::<dyn IACIService>(&name)
            .map_err(AciClientError::Connect)?;
        let session = SessionHold(client.session().cloned());
        Ok(Self {
            service,
            session: Arc::new(session),
        })
    }

    /// The provider's binder (for `linkToDeath`).
    pub fn binder(&self) -> SIBinder {
        self.service.as_binder()
    }

    async fn blocking<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Strong<dyn IACIService>) -> BinderResult<T> + Send + 'static,
    ) -> Result<T, AciClientError> {
        let service = self.service.clone();
        let hold = self.session.clone();
        let out = tokio::task::spawn_blocking(move || {
            let r = f(&service);
            drop(hold);
            r
        })
        .await
        .map_err(|_| AciClientError::Task)?;
        out.map_err(|s| AciClientError::from_status(&s))
    }

    /// `call(request)`: the provider's answer (an error answer is still `Ok`).
    pub async fn call(&self, request: &AciRequest) -> Result<AciResponse, AciClientError> {
        let request = request.clone();
        self.blocking(move |s| s.r#call(&request)).await
    }

    /// `callAsync(request, callback)` with a callback we host: `on_progress` gets each
    /// `onProgress` (0..=100) until the result; the future resolves at the first `onResult`
    /// (a second one is ignored and logged), or with [`AciClientError::DeadBinder`] when the
    /// provider's binder dies first. If a live provider never answers, this never resolves:
    /// bound it with a timeout.
    pub async fn call_async(
        &self,
        request: &AciRequest,
        on_progress: impl Fn(i32, Option<String>) + Send + Sync + 'static,
    ) -> Result<AciResponse, AciClientError> {
        let (tx, mut rx) = oneshot::channel();
        let end = CallbackEnd {
            result: Mutex::new(Some(tx)),
            on_progress: Box::new(on_progress),
            capability: request.capability.clone(),
        };
        let callback: Strong<dyn IACICallback> = BnACICallback::new_binder(end);
        let (dead_tx, mut dead_rx) = oneshot::channel();
        let death = Arc::new(DeathSignal(Mutex::new(Some(dead_tx))));
        let request = request.clone();
        let keep = callback.clone();
        let watch = death.clone();
        self.blocking(move |s| {
            let binder = s.as_binder();
            // A local (same-process) binder cannot die without us; only a dead one refuses.
            if let Err(StatusCode::DeadObject) = binder.link_to_death_arc(&watch) {
                return Err(StatusCode::DeadObject.into());
            }
            s.r#callAsync(&request, &callback)
        })
        .await?;
        let outcome = tokio::select! {
            r = &mut rx => r.map_err(|_| AciClientError::Task),
            Ok(()) = &mut dead_rx => {
                // The result may have raced the death notice: prefer it when it is there.
                rx.try_recv().map_err(|_| AciClientError::DeadBinder)
            }
        };
        let _ = self.service.as_binder().unlink_to_death_arc(&death);
        drop(keep);
        outcome
    }

    /// `getCapabilities()`: one E.3 JSON object per entry.
    pub async fn get_capabilities(&self) -> Result<Vec<String>, AciClientError> {
        self.blocking(|s| s.r#getCapabilities()).await
    }

    /// `ping()`.
    pub async fn ping(&self) -> Result<bool, AciClientError> {
        self.blocking(|s| s.r#ping()).await
    }
}
