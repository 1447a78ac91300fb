//! `capbridge fake-model --listen 127.0.0.1:PORT`: the fake model server as a standalone process
//! (`docs/fake-model.md` lists its directives). Runs until Ctrl-C or SIGTERM.
//!
//! Only loopback addresses are accepted: the fake model is a test aid, never a service.

use std::net::SocketAddr;
use std::process::ExitCode;

use acp_runtime::model::fake::FakeModelServer;

/// Why the server could not run.
#[derive(Debug, thiserror::Error)]
pub(crate) enum FakeModelCmdError {
    /// Not a loopback address.
    #[error("--listen must be a loopback address (127.0.0.1:PORT or [::1]:PORT)")]
    NotLoopback,
    /// The async runtime could not start.
    #[error("cannot start the async runtime: {0}")]
    Runtime(String),
    /// The server could not start (address in use, …).
    #[error("cannot start the fake model server on {addr}: {reason}")]
    Start {
        /// The address.
        addr: SocketAddr,
        /// Why.
        reason: String,
    },
}

/// Serves until interrupted; prints the base URL on stdout once listening.
pub(crate) fn run(listen: SocketAddr) -> Result<ExitCode, FakeModelCmdError> {
    if !listen.ip().is_loopback() {
        return Err(FakeModelCmdError::NotLoopback);
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| FakeModelCmdError::Runtime(e.to_string()))?;
    rt.block_on(async move {
        let server =
            FakeModelServer::start(listen)
                .await
                .map_err(|e| FakeModelCmdError::Start {
                    addr: listen,
                    reason: e.to_string(),
                })?;
        {
            use std::io::Write;
            let stdout = std::io::stdout();
            let mut out = stdout.lock();
            let _ = writeln!(
                out,
                "fake model listening on {} (Ctrl-C to stop)",
                server.url()
            );
            let _ = out.flush();
        }
        wait_for_stop().await;
        server.shutdown().await;
        eprintln!("fake model stopped");
        Ok(ExitCode::SUCCESS)
    })
}

async fn wait_for_stop() {
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = async {
            match term.as_mut() {
                Some(t) => { t.recv().await; }
                None => std::future::pending::<()>().await,
            }
        } => {}
    }
}
