//! `capbridge call NAME 'JSON'`: one tool call through the catalog and the permissions
//! pipeline, without a model.
//!
//! The path is the runtime's: the host registry → capability sources ([`crate::sources`]) → the
//! unified [`capability_model::Catalog`] → argument validation against the input schema →
//! [`permissions::Permissions::authorize_tool_call`] (risk, user policy, consent on the chosen
//! surface) → the source's `call`. NAME is a model-facing name (`mcp__…`, `aci__…`) or
//! `PLUGIN/TOOL` (the plugin name, or the ACI package or virtual plugin name, and the raw tool
//! name). The caller is capbridge's own user (`Principal::SelfUi`).
//!
//! Exit status: 0 the tool ran and succeeded; 1 the tool ran and reported an error (`isError`)
//! or the provider failed; 3 the call was refused or denied (the `agentosCode` is printed);
//! 2 bad usage, configuration or arguments; 130 interrupted.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use capability_model::{CancelToken, Catalog, ContentBlock, ToolOutput};
use permissions::pipeline::{CatalogVerdict, ToolCall};
use permissions::{
    ConsentSurface, FixedSurface, MemoryStore, Permissions, PermissionsConfig, Principal,
    RegistryResolver, TerminalSurface, TokioClock,
};
use serde_json::Value;

use crate::config::{ConsentMode, Settings};
use crate::sources;

/// Why `call` could not run the tool. Messages never contain argument values or results.
#[derive(Debug, thiserror::Error)]
pub(crate) enum CallCmdError {
    /// No registry configured.
    #[error(
        "no host registry: pass --registry PATH, set CAPBRIDGE_REGISTRY, or set `registry` in capbridge.toml"
    )]
    NoRegistry,
    /// The arguments are not a JSON object.
    #[error("the arguments must be one JSON object (e.g. '{{}}'); {0}")]
    BadJson(String),
    /// Building the sources failed.
    #[error("{0}")]
    Sources(String),
    /// The name matches nothing.
    #[error("no tool named `{0}` in the catalog (see `capbridge catalog`)")]
    Unknown(String),
    /// `PLUGIN/TOOL` matches several tools.
    #[error("`{0}` matches several tools; use one of: {1}")]
    Ambiguous(String, String),
    /// Schema validation failed.
    #[error("invalid arguments: {0}")]
    Arguments(String),
    /// The store could not be opened.
    #[error("permissions store: {0}")]
    Store(String),
    /// The async runtime could not start.
    #[error("cannot start the async runtime: {0}")]
    Runtime(String),
}

/// Options of `capbridge call`.
#[derive(Debug, Clone)]
pub(crate) struct CallOptions {
    /// Model-facing name or `PLUGIN/TOOL`.
    pub(crate) name: String,
    /// Arguments (JSON object text).
    pub(crate) arguments: String,
    /// Print the whole result as JSON.
    pub(crate) json: bool,
    /// Layered settings.
    pub(crate) settings: Settings,
}

/// Runs one call; prints the result on stdout.
pub(crate) fn run(opts: CallOptions) -> Result<ExitCode, CallCmdError> {
    let args: Value = serde_json::from_str(&opts.arguments).map_err(|e| {
        CallCmdError::BadJson(format!(
            "JSON error at line {}, column {}",
            e.line(),
            e.column()
        ))
    })?;
    if !args.is_object() {
        return Err(CallCmdError::BadJson("got another JSON value".into()));
    }
    let registry = opts
        .settings
        .registry
        .clone()
        .ok_or(CallCmdError::NoRegistry)?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| CallCmdError::Runtime(e.to_string()))?;
    let result = rt.block_on(call(opts, registry, args));
    rt.shutdown_timeout(std::time::Duration::from_secs(1));
    result
}

async fn call(opts: CallOptions, registry: PathBuf, args: Value) -> Result<ExitCode, CallCmdError> {
    let registry_file = sources::registry_file(&registry);
    let srcs = sources::from_registry(&registry_file, sources::SourceOptions::default())
        .await
        .map_err(|e| CallCmdError::Sources(e.to_string()))?;
    for skipped in &srcs.skipped {
        eprintln!(
            "capbridge: {} left out: {}",
            skipped.package, skipped.reason
        );
    }
    let listed = sources::catalog(&srcs).await;
    for (i, reason) in &listed.failures {
        eprintln!("capbridge: source {i} could not be listed: {reason}");
    }
    let catalog = &listed.catalog;
    let name = resolve_name(catalog, &opts.name)?;
    let Some(entry) = catalog.get(&name) else {
        return Err(CallCmdError::Unknown(opts.name));
    };
    let arguments = entry
        .validate_arguments(&args)
        .map_err(|e| CallCmdError::Arguments(e.0))?;

    let (resolver, _) = RegistryResolver::load_or_fail_closed(&registry_file);
    let store: Box<dyn permissions::store::PolicyStore> = match &opts.settings.data_dir {
        Some(dir) => Box::new(
            permissions::store::SqliteStore::open(dir)
                .map_err(|e| CallCmdError::Store(e.to_string()))?,
        ),
        None => Box::new(MemoryStore::new()),
    };
    let perms = Permissions::new(
        PermissionsConfig::default(),
        store,
        Arc::new(resolver),
        surface(opts.settings.consent.unwrap_or(ConsentMode::Ask)),
        Arc::new(TokioClock::default()),
    );
    let principal = Principal::SelfUi;
    let ticket = ToolCall {
        principal: &principal,
        session: "capbridge-call",
        capability: &entry.capability,
        catalog: CatalogVerdict::Visible,
        session_has_scope: false,
    };
    let verdict = perms.authorize_tool_call(&ticket, &arguments).await;
    if let Some(code) = verdict.code() {
        eprintln!(
            "capbridge: [agentos:{}] {} was not run",
            code.as_str(),
            entry.name
        );
        return Ok(ExitCode::from(3));
    }
    let Some(source) = listed.owner(&srcs, &entry.capability.id) else {
        return Err(CallCmdError::Unknown(opts.name));
    };
    let cancel = CancelToken::new();
    let started = std::time::Instant::now();
    let outcome = tokio::select! {
        r = source.call(&entry.capability.id, arguments, cancel.clone()) => r,
        _ = tokio::signal::ctrl_c() => {
            cancel.cancel();
            eprintln!("capbridge: interrupted; the call was cancelled");
            return Ok(ExitCode::from(130));
        }
    };
    tracing::info!(
        capability = %entry.capability.id,
        ms = started.elapsed().as_millis() as u64,
        ok = outcome.is_ok(),
        "capbridge call finished"
    );
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    match outcome {
        Ok(output) => {
            print_output(&mut out, &output, opts.json);
            Ok(if output.is_error {
                ExitCode::from(1)
            } else {
                ExitCode::SUCCESS
            })
        }
        Err(e) => {
            eprintln!("capbridge: {} failed: {e}", entry.name);
            Ok(ExitCode::from(1))
        }
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
                    eprintln!(
                        "capbridge: no terminal to ask on; calls that need consent are denied \
                         (use --consent allow to allow them)"
                    );
                    Arc::new(FixedSurface::deny())
                }
            }
        }
    }
}

/// A model-facing name as is; `PLUGIN/TOOL` looked up by provider and raw tool name.
fn resolve_name(catalog: &Catalog, name: &str) -> Result<String, CallCmdError> {
    if catalog.get(name).is_some() {
        return Ok(name.to_owned());
    }
    let Some((plugin, tool)) = name.rsplit_once('/') else {
        return Err(CallCmdError::Unknown(name.to_owned()));
    };
    let aci_plugin = capability_model::naming::aci_virtual_plugin(plugin);
    let matches: Vec<&str> = catalog
        .entries()
        .iter()
        .filter(|e| {
            let id = &e.capability.id;
            id.name == tool && (id.provider == plugin || id.provider == aci_plugin)
        })
        .map(|e| e.name.as_str())
        .collect();
    match matches.as_slice() {
        [] => Err(CallCmdError::Unknown(name.to_owned())),
        [one] => Ok((*one).to_owned()),
        many => Err(CallCmdError::Ambiguous(name.to_owned(), many.join(", "))),
    }
}

fn print_output(out: &mut impl Write, output: &ToolOutput, json: bool) {
    if json {
        let text = serde_json::to_string_pretty(output).unwrap_or_else(|_| "{}".into());
        let _ = writeln!(out, "{text}");
        return;
    }
    for block in &output.content {
        match block {
            ContentBlock::Text { text } => {
                let _ = writeln!(out, "{text}");
            }
            other => {
                let shown = serde_json::to_string(other).unwrap_or_default();
                let _ = writeln!(out, "{shown}");
            }
        }
    }
    if output.content.is_empty()
        && let Some(s) = &output.structured_content
    {
        let _ = writeln!(out, "{s}");
    }
}
