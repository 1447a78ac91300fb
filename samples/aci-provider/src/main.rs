//! `aci-provider`: a real ACI provider process for Linux hosts (seed 003's controlled side),
//! built on capbridge's provider SDK core ([`aci_adapter::provider::AciService`] /
//! [`aci_adapter::provider::AciServer`]) and served as `ai.aci.core.IACIService` over rsbinder
//! RPC on a Unix socket (or kernel Binder with `--kernel`).
//!
//! ```text
//! aci-provider --socket PATH --data DIR [--permissions FILE] [--registry FILE]
//!              [--network strict|local] [--confirm deny|allow] [--kernel]
//! ```
//!
//! Capabilities: `http_request`, `device_info`, `kv_get` / `kv_put` / `kv_list` / `kv_delete`,
//! `hash_file` (progress through `callAsync`), `countdown` (progress), `aci_protocol`. See the
//! README next to this file.
#![forbid(unsafe_code)]

mod caps;
mod kv;
mod sysinfo;

use std::path::PathBuf;
use std::sync::Arc;

use aci_adapter::provider::AciServer;
use clap::Parser;
use permissions::{AciPermissionGate, AciPolicy, ConsentBroker, FixedSurface, RegistryResolver};

/// Command line.
#[derive(Debug, Parser)]
#[command(name = "aci-provider", about = "capbridge sample ACI provider")]
struct Args {
    /// Unix socket to serve `IACIService` on (rsbinder RPC).
    #[arg(long)]
    socket: Option<PathBuf>,
    /// Directory for the key-value store and the files `hash_file` may read.
    #[arg(long)]
    data: PathBuf,
    /// `aci_permissions.xml` (layer 4/5 policy). Without it ACI's permissive default applies to
    /// layer 4; an unreadable file refuses every call.
    #[arg(long)]
    permissions: Option<PathBuf>,
    /// Host registry mapping caller UIDs to packages (layer 2). Default:
    /// `$CAPBRIDGE_REGISTRY`; without either, every caller is refused.
    #[arg(long)]
    registry: Option<PathBuf>,
    /// `http_request` network policy: `strict` (public https only) or `local` (also loopback
    /// and private ranges, cleartext http to them).
    #[arg(long, default_value = "strict")]
    network: String,
    /// Answer to `requireUserConfirm` prompts on this headless host: `deny` (default) or
    /// `allow`.
    #[arg(long, default_value = "deny")]
    confirm: String,
    /// Serve on kernel Binder (`/dev/binder`) under the name `ai.aci.core.IACIService`
    /// instead of a socket.
    #[arg(long)]
    kernel: bool,
    /// Write this process's id to the file once serving (so whoever woke it can stop it).
    #[arg(long)]
    pid_file: Option<PathBuf>,
}

#[derive(Debug, thiserror::Error)]
enum StartError {
    #[error("{0}")]
    Usage(String),
    #[error("cannot prepare the data directory: {0}")]
    Data(std::io::Error),
    #[error("the HTTP client could not be built")]
    Http,
    #[error("cannot serve: {0}")]
    Serve(String),
}

fn main() -> std::process::ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .init();
    let args = Args::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("aci-provider: cannot start the runtime: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(args)) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("aci-provider: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

async fn run(args: Args) -> Result<(), StartError> {
    std::fs::create_dir_all(&args.data).map_err(StartError::Data)?;
    let registry = args
        .registry
        .clone()
        .or_else(|| std::env::var_os("CAPBRIDGE_REGISTRY").map(PathBuf::from));
    let resolver = match registry {
        Some(path) => {
            let (r, err) = RegistryResolver::load_or_fail_closed(&path);
            if let Some(e) = err {
                tracing::error!(error = %e, "registry unusable; every caller is refused");
            }
            r
        }
        None => {
            tracing::warn!("no registry given; every caller is refused");
            RegistryResolver::fail_closed()
        }
    };
    let policy = match &args.permissions {
        Some(path) => match AciPolicy::load(path) {
            Ok(p) => p,
            Err(e) => {
                tracing::error!(error = %e, "aci_permissions.xml unusable; every call is refused");
                AciPolicy::deny_all()
            }
        },
        None => AciPolicy::allow_all(),
    };
    let network = match args.network.as_str() {
        "strict" => http_capability::NetworkPolicy::default(),
        "local" => http_capability::NetworkPolicy::local_network(),
        other => {
            return Err(StartError::Usage(format!(
                "--network {other}: use strict or local"
            )));
        }
    };
    let surface = match args.confirm.as_str() {
        "deny" => FixedSurface::deny(),
        "allow" => FixedSurface::allow(),
        other => {
            return Err(StartError::Usage(format!(
                "--confirm {other}: use deny or allow"
            )));
        }
    };
    // Without TLS roots (a bare VM) the client cannot be built: serve everything else and
    // answer http_request with SERVICE_UNAVAILABLE rather than not starting at all.
    let executor = match http_capability::HttpExecutor::new(http_capability::HttpConfig {
        policy: network,
        ..Default::default()
    }) {
        Ok(e) => Some(e),
        Err(_) => {
            tracing::warn!("{}; http_request is unavailable", StartError::Http);
            None
        }
    };
    let service =
        caps::SampleService::new(args.data.clone(), executor).map_err(StartError::Data)?;
    let consent = Arc::new(ConsentBroker::new(
        Arc::new(surface),
        Arc::new(permissions::SystemClock),
    ));
    let gate = AciPermissionGate::new(Arc::new(resolver), policy);
    let server = AciServer::new(Arc::new(service), gate, Some(consent))
        .map_err(|e| StartError::Serve(e.to_string()))?;
    let name = aci_adapter::controller::BINDER_SERVICE_NAME;
    let _guard = if args.kernel {
        server
            .serve_kernel(name)
            .map_err(|e| StartError::Serve(e.to_string()))?
    } else {
        let socket = args
            .socket
            .clone()
            .ok_or_else(|| StartError::Usage("--socket PATH is required (or --kernel)".into()))?;
        // A stale socket from a killed run would make bind fail.
        if socket.exists() {
            let _ = std::fs::remove_file(&socket);
        }
        server
            .serve_unix(&socket, name)
            .map_err(|e| StartError::Serve(e.to_string()))?
    };
    tracing::info!(
        capabilities = server.capability_json().len(),
        broken = server.status().broken.is_some(),
        "aci-provider ready"
    );
    if let Some(pid_file) = &args.pid_file {
        std::fs::write(pid_file, std::process::id().to_string()).map_err(StartError::Data)?;
    }
    // Serve until SIGTERM / SIGINT.
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .map_err(|e| StartError::Serve(e.to_string()))?;
    tokio::select! {
        _ = term.recv() => {}
        _ = tokio::signal::ctrl_c() => {}
    }
    if let Some(socket) = &args.socket {
        let _ = std::fs::remove_file(socket);
    }
    tracing::info!("aci-provider stopped");
    Ok(())
}
