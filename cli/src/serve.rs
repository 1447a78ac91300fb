//! `capbridge serve`: the ACP agent runtime as a process.
//!
//! `--stdio`: one ACP connection on stdin/stdout (line-delimited JSON-RPC 2.0). stdout carries
//! only JSON-RPC; logs go to stderr. The caller is the local user who started the process
//! (`DESKTOP`, SPEC ACP-11). When stdin ends, running prompts finish (ACP-53) and the process
//! exits. `--binder PATH`: `IAcpService` on an rsbinder RPC socket until Ctrl-C; callers are
//! identified by their kernel UID (SO_PEERCRED) through the host registry.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use acp_runtime::model::{ChatRequest, ModelClient, ModelError, ModelStream};
use acp_runtime::{Runtime, RuntimeConfig};
use capability_model::{CancelToken, CapabilitySource};
use permissions::{ConsentSurface, FixedSurface, Principal, RegistryResolver, TerminalSurface};

use crate::config::{ConsentMode, Settings};

/// Why `serve` could not run.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ServeError {
    /// Neither `--stdio` nor `--binder` was given.
    #[error("choose a transport: --stdio or --binder PATH")]
    NoTransport,
    /// No data directory could be chosen.
    #[error("no state directory: pass --data DIR or set HOME")]
    NoDataDir,
    /// The async runtime could not start.
    #[error("cannot start the async runtime: {0}")]
    Tokio(std::io::Error),
    /// The fake model server could not start.
    #[error("cannot start the fake model: {0}")]
    FakeModel(std::io::Error),
    /// The model client could not be built.
    #[error("model: {0}")]
    Model(ModelError),
    /// Building the sources failed.
    #[error("registry: {0}")]
    Sources(String),
    /// The runtime failed.
    #[error(transparent)]
    Runtime(#[from] acp_runtime::RuntimeError),
}

/// `capbridge serve` options.
#[derive(Debug)]
pub(crate) struct ServeOptions {
    /// Serve one connection on stdin/stdout.
    pub(crate) stdio: bool,
    /// Serve `IAcpService` on this rsbinder RPC socket.
    pub(crate) binder: Option<PathBuf>,
    /// `fake` (in-process fake model server) or a model base URL.
    pub(crate) model: Option<String>,
    /// Layered settings (registry, data dir, consent, model).
    pub(crate) settings: Settings,
}

/// A model that is not configured: every prompt fails with `model_not_configured`.
#[derive(Debug)]
struct Unconfigured;

#[async_trait::async_trait]
impl ModelClient for Unconfigured {
    async fn stream(&self, _: ChatRequest, _: CancelToken) -> Result<ModelStream, ModelError> {
        Err(ModelError::NotConfigured)
    }
}

/// The default state directory: `$XDG_STATE_HOME/capbridge` or `~/.local/state/capbridge`.
pub(crate) fn default_data_dir(
    xdg_state_home: Option<String>,
    home: Option<String>,
) -> Option<PathBuf> {
    match xdg_state_home.filter(|v| !v.is_empty()) {
        Some(x) => Some(Path::new(&x).join("capbridge")),
        None => home
            .filter(|h| !h.is_empty())
            .map(|h| Path::new(&h).join(".local/state/capbridge")),
    }
}

fn surface(mode: ConsentMode) -> Arc<dyn ConsentSurface> {
    match mode {
        ConsentMode::Allow => Arc::new(FixedSurface::allow()),
        ConsentMode::Deny => Arc::new(FixedSurface::deny()),
        ConsentMode::Ask => {
            let tty_in = std::fs::File::open("/dev/tty");
            let tty_out = std::fs::OpenOptions::new().write(true).open("/dev/tty");
            match (tty_in, tty_out) {
                (Ok(i), Ok(o)) => Arc::new(TerminalSurface::new(i, o)),
                _ => {
                    tracing::warn!("no terminal to ask on; calls that need consent are denied");
                    Arc::new(FixedSurface::deny())
                }
            }
        }
    }
}

/// Runs `serve` until the transport ends.
pub(crate) fn run(opts: ServeOptions) -> Result<ExitCode, ServeError> {
    if !opts.stdio && opts.binder.is_none() {
        return Err(ServeError::NoTransport);
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(ServeError::Tokio)?;
    rt.block_on(serve(opts))
}

async fn serve(opts: ServeOptions) -> Result<ExitCode, ServeError> {
    let settings = opts.settings;
    let data_dir = match settings.data_dir.clone() {
        Some(d) => d,
        None => default_data_dir(
            std::env::var("XDG_STATE_HOME").ok(),
            std::env::var("HOME").ok(),
        )
        .ok_or(ServeError::NoDataDir)?,
    };
    // The model: the in-process fake, a URL, the configured one, or none.
    let mut fake = None;
    let (model, model_name): (Arc<dyn ModelClient>, String) = match opts.model.as_deref() {
        Some("fake") => {
            let server = acp_runtime::model::FakeModelServer::start_local()
                .await
                .map_err(ServeError::FakeModel)?;
            let cfg = acp_runtime::model::ModelConfig::new(server.url(), "fake-model");
            let client = acp_runtime::model::OpenAiClient::new(cfg).map_err(ServeError::Model)?;
            fake = Some(server);
            (Arc::new(client), "fake-model".to_owned())
        }
        Some(url) => {
            let mut s = settings.clone();
            s.model_url = Some(url.to_owned());
            let name = s.model_name.clone().unwrap_or_else(|| "default".to_owned());
            s.model_name = Some(name.clone());
            (
                crate::config::real_model(&s).map_err(ServeError::Model)?,
                name,
            )
        }
        None => match crate::config::real_model(&settings) {
            Ok(m) => (m, settings.model_name.clone().unwrap_or_default()),
            Err(_) => (Arc::new(Unconfigured), String::new()),
        },
    };
    // Sources and identities from the host registry (the seam: crate::sources builds MCP
    // plugins through mcp_adapter::discovery and ACI providers through aci-adapter).
    let mut skills: Option<Arc<dyn acp_runtime::SkillsProvider>> = None;
    let (sources, resolver): (Vec<Arc<dyn CapabilitySource>>, Arc<RegistryResolver>) =
        match &settings.registry {
            Some(path) => {
                let built = crate::sources::from_registry(path, Default::default())
                    .await
                    .map_err(|e| ServeError::Sources(e.to_string()))?;
                for s in &built.skipped {
                    tracing::warn!(package = %s.package, reason = %s.reason, "provider left out");
                }
                let file = crate::sources::registry_file(path);
                // The Skills of usable plugins (MCP-61): section + read_skill.
                match mcp_adapter::discovery::Discovery::load(&file) {
                    Ok(d) => {
                        let catalog = d.skill_catalog();
                        if !catalog.is_empty() {
                            skills =
                                Some(Arc::new(acp_runtime::skills::CatalogSkills::new(catalog)));
                        }
                    }
                    Err(e) => tracing::warn!(error = %e, "no skills: discovery failed"),
                }
                let (resolver, err) = RegistryResolver::load_or_fail_closed(&file);
                if let Some(e) = err {
                    tracing::error!(error = %e, "registry unreadable; every app caller is refused");
                }
                (built.list, Arc::new(resolver))
            }
            None => (Vec::new(), Arc::new(RegistryResolver::default())),
        };
    let mut cfg = RuntimeConfig::new(
        data_dir,
        model,
        model_name,
        surface(settings.consent.unwrap_or(ConsentMode::Ask)),
        resolver,
    );
    cfg.sources = sources;
    cfg.skills = skills;
    // ACP-21: the fake model is the one model on offer, so the model selector has a real
    // choice list; a user-defined endpoint (a URL, or the configured one) offers none.
    if fake.is_some() {
        cfg.available_models = vec![cfg.model_name.clone()];
    }
    // The built-in `http_request` (HTTP-01): the default network policy of http-capability.
    // Without TLS roots the client cannot be built; the catalog then simply lacks the tool.
    cfg.http_request = match http_capability::HttpExecutor::new(
        http_capability::HttpConfig::default(),
    ) {
        Ok(executor) => Some(Arc::new(http_capability::HttpCapabilitySource::new(
            executor,
        ))),
        Err(e) => {
            tracing::warn!(error = %e, "http_request unavailable: the HTTP client could not be built");
            None
        }
    };
    let runtime = Runtime::start(cfg).await?;
    let _binder = match &opts.binder {
        Some(path) => Some(runtime.serve_binder(path).await?),
        None => None,
    };
    if opts.stdio {
        // `main` holds the std stdout lock for its whole run; write JSON-RPC through a
        // duplicate of fd 1 instead of `tokio::io::stdout()` (which would wait for that lock).
        let out = {
            use std::os::fd::AsFd;
            let fd = std::io::stdout()
                .as_fd()
                .try_clone_to_owned()
                .map_err(ServeError::Tokio)?;
            tokio::fs::File::from_std(std::fs::File::from(fd))
        };
        runtime
            .serve_lines(tokio::io::stdin(), out, Principal::Desktop)
            .await?;
        // The client went away: running prompts still finish and are stored (ACP-53).
        runtime.wait_idle().await;
    } else {
        let _ = tokio::signal::ctrl_c().await;
    }
    runtime.shutdown().await;
    if let Some(server) = fake {
        server.shutdown().await;
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_dir_prefers_xdg_state_home() {
        assert_eq!(
            default_data_dir(Some("/x".into()), Some("/home/u".into())),
            Some(PathBuf::from("/x/capbridge"))
        );
        assert_eq!(
            default_data_dir(None, Some("/home/u".into())),
            Some(PathBuf::from("/home/u/.local/state/capbridge"))
        );
        assert_eq!(default_data_dir(Some(String::new()), None), None);
    }
}
