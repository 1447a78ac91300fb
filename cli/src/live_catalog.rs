//! `capbridge catalog [--registry PATH] [--json]` (and `catalog show` without files): the
//! live catalog of a Linux host.
//!
//! The registry (`--registry`, a file or a directory holding `registry.json`; else
//! `$CAPBRIDGE_REGISTRY`) is read with `mcp_adapter::discovery`: every MCP plugin with its
//! package status and plugin-level enablement (`plugin-state.json` beside the registry). Each
//! ready and enabled plugin's servers are reached over rsbinder RPC on the plugin's socket
//! (peer UID checked, short timeouts), listed with `tools/list`, and the tools go into one
//! `capability_model::Catalog`, printed like `catalog show`. Every plugin also gets a status
//! line — `ready`, `disabled`, `needs re-confirmation`, `unavailable: REASON` or
//! `not running` — with its issues; nothing is hidden.
//!
//! ACI providers (registry entries with `exports.aci`) are listed too, through
//! `aci_adapter`'s controller (each provider a virtual plugin `aci.<package>`, ACI-40). The
//! catalog never wakes a provider: one that is not running is shown as `not running`.
//!
//! Exit status: 0 when the catalog was built (whatever the plugins' status), 2 when there is
//! no registry or it cannot be read.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use capability_model::{Capability, CapabilitySource, Catalog};
use mcp_adapter::discovery::{self, DiscoveredPlugin, Discovery, PluginStatus};
use mcp_adapter::plugin::Enablement;
use serde_json::{Value, json};

use crate::catalog_files::{entry_json, print_table};
use crate::naming_cmd::CliError;

/// Deadline to open a channel to one plugin server.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);
/// Deadline for one server's `initialize` + `tools/list`, connecting included.
const LIST_TIMEOUT: Duration = Duration::from_secs(6);

/// The options of the live catalog.
#[derive(Debug, Clone, Default, clap::Args)]
pub(crate) struct LiveArgs {
    /// Host registry: a file, or a directory holding registry.json (default:
    /// $CAPBRIDGE_REGISTRY).
    #[arg(long, value_name = "PATH")]
    pub(crate) registry: Option<PathBuf>,
    /// Print JSON ({"plugins": [...], "tools": [...]}) instead of a table.
    #[arg(long)]
    pub(crate) json: bool,
}

/// What happened to one plugin.
struct PluginReport {
    name: String,
    package: String,
    /// `ready`, `disabled`, `needs_reconfirmation`, `unavailable`, `not_running`.
    state: &'static str,
    /// Reason code / detail, when not ready.
    reason: Option<String>,
    tools: usize,
    skills: usize,
    issues: Vec<String>,
}

/// Runs the live catalog.
pub(crate) fn run(
    args: &LiveArgs,
    out: &mut impl Write,
    err: &mut impl Write,
) -> Result<ExitCode, CliError> {
    let Some(registry) = discovery::registry_path(args.registry.as_deref()) else {
        writeln!(
            err,
            "capbridge: no registry: pass --registry PATH or set {}",
            discovery::REGISTRY_ENV
        )?;
        return Ok(ExitCode::from(2));
    };
    let found = match Discovery::load(&registry) {
        Ok(d) => d,
        Err(e) => {
            writeln!(err, "capbridge: {e}")?;
            return Ok(ExitCode::from(2));
        }
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| CliError::Io(e.kind().to_string()))?;
    let (mut reports, mut caps) = runtime.block_on(list_all(&found));
    let (aci_reports, mut aci_caps) = runtime.block_on(list_aci(&registry));
    reports.extend(aci_reports);
    caps.append(&mut aci_caps);
    // The sources' background tasks (idle timers) end with the runtime.
    runtime.shutdown_timeout(Duration::from_millis(200));
    let catalog = Catalog::build(caps);
    for i in catalog.issues() {
        writeln!(err, "capbridge: {}: {}", i.id, i.issue)?;
    }
    if args.json {
        let plugins: Vec<Value> = reports.iter().map(report_json).collect();
        let tools: Vec<Value> = catalog.entries().iter().map(entry_json).collect();
        writeln!(
            out,
            "{}",
            json!({"registry": shown(&registry), "plugins": plugins, "tools": tools})
        )?;
    } else {
        for r in &reports {
            write_status(r, out)?;
        }
        print_table(&catalog, catalog.issues().len(), out)?;
    }
    Ok(ExitCode::SUCCESS)
}

fn shown(p: &Path) -> String {
    p.display().to_string()
}

async fn list_all(found: &Discovery) -> (Vec<PluginReport>, Vec<Capability>) {
    let mut reports = Vec::new();
    let mut caps = Vec::new();
    for plugin in &found.plugins {
        let (report, mut listed) = list_plugin(plugin).await;
        reports.push(report);
        caps.append(&mut listed);
    }
    (reports, caps)
}

/// Every ACI provider of the registry: one report per provider, its capabilities listed
/// through one controller without waking anything.
async fn list_aci(registry: &Path) -> (Vec<PluginReport>, Vec<Capability>) {
    let file = crate::sources::registry_file(registry);
    let Ok(resolver) = permissions::RegistryResolver::load(&file) else {
        // Discovery already read this file; an unreadable registry was reported there.
        return (Vec::new(), Vec::new());
    };
    let mut list = Vec::new();
    let mut skipped = Vec::new();
    let opts = crate::sources::SourceOptions { wake: false };
    if crate::sources::aci_sources(&opts, &resolver, &mut list, &mut skipped)
        .await
        .is_err()
    {
        return (Vec::new(), Vec::new());
    }
    let mut reports: Vec<PluginReport> = skipped
        .into_iter()
        .map(|s| PluginReport {
            name: "-".to_owned(),
            package: s.package,
            state: "unavailable",
            reason: Some(s.reason),
            tools: 0,
            skills: 0,
            issues: Vec::new(),
        })
        .collect();
    let mut caps = Vec::new();
    let mut listing_issues = Vec::new();
    let mut failure = None;
    for source in &list {
        match tokio::time::timeout(LIST_TIMEOUT, source.list()).await {
            Ok(Ok(listing)) => {
                caps.extend(listing.capabilities);
                listing_issues.extend(listing.issues.iter().map(ToString::to_string));
            }
            Ok(Err(e)) => failure = Some(e.to_string()),
            Err(_) => failure = Some("timeout".to_owned()),
        }
    }
    for entry in resolver.entries().filter(|e| e.exports.aci.is_some()) {
        if reports.iter().any(|r| r.package == entry.package) {
            continue;
        }
        let plugin = capability_model::naming::aci_virtual_plugin(&entry.package);
        let tools = caps.iter().filter(|c| c.id.provider == plugin).count();
        let (state, reason) = match (&failure, tools) {
            (_, n) if n > 0 => ("ready", None),
            (Some(f), _) => ("not_running", Some(f.clone())),
            (None, _) => (
                "not_running",
                Some("it answered no capabilities".to_owned()),
            ),
        };
        reports.push(PluginReport {
            name: plugin,
            package: entry.package.clone(),
            state,
            reason,
            tools,
            skills: 0,
            issues: Vec::new(),
        });
    }
    // Provider-level issues (unreachable, broken entries) name their virtual plugin in the
    // text; one that names none goes under the last ACI report rather than be dropped.
    for issue in listing_issues {
        let owner = reports
            .iter()
            .rposition(|r| r.name != "-" && issue.contains(r.name.as_str()))
            .or(reports.len().checked_sub(1));
        if let Some(i) = owner {
            reports[i].issues.push(issue);
        }
    }
    (reports, caps)
}

async fn list_plugin(p: &DiscoveredPlugin) -> (PluginReport, Vec<Capability>) {
    let mut report = PluginReport {
        name: p.name().unwrap_or("-").to_owned(),
        package: p.identity.package.clone(),
        state: "ready",
        reason: None,
        tools: 0,
        skills: p.package.skills().len(),
        issues: p.package.issues().iter().map(ToString::to_string).collect(),
    };
    match p.status() {
        PluginStatus::Unavailable(reason) => {
            report.state = "unavailable";
            report.reason = Some(reason.to_string());
            return (report, Vec::new());
        }
        PluginStatus::Disabled(Enablement::NeedsReconfirmation) => {
            report.state = "needs_reconfirmation";
            report.reason = Some("the signing certificate changed; enable it again".to_owned());
            return (report, Vec::new());
        }
        PluginStatus::Disabled(_) => {
            report.state = "disabled";
            report.reason = Some("enable it in plugin-state.json to view its tools".to_owned());
            return (report, Vec::new());
        }
        PluginStatus::Ready => {}
    }
    if !p.socket.exists() {
        report.state = "not_running";
        report.reason = Some("no socket".to_owned());
        return (report, Vec::new());
    }
    let mut caps = Vec::new();
    let mut failures = Vec::new();
    for source in p.sources(CONNECT_TIMEOUT) {
        match tokio::time::timeout(LIST_TIMEOUT, source.list()).await {
            Ok(Ok(listing)) => {
                for issue in &listing.issues {
                    report.issues.push(issue.to_string());
                }
                caps.extend(listing.capabilities);
            }
            Ok(Err(e)) => failures.push(e.to_string()),
            Err(_) => failures.push("timeout".to_owned()),
        }
    }
    report.tools = caps.len();
    if !failures.is_empty() && caps.is_empty() {
        report.state = "not_running";
        report.reason = Some(failures.join("; "));
    } else if !failures.is_empty() {
        report.issues.extend(failures);
    }
    (report, caps)
}

fn write_status(r: &PluginReport, out: &mut impl Write) -> std::io::Result<()> {
    let head = format!("plugin {} ({})", r.name, r.package);
    match (r.state, &r.reason) {
        ("ready", _) => writeln!(out, "{head}: ready, {} tools, {} skills", r.tools, r.skills)?,
        ("not_running", Some(reason)) => writeln!(out, "{head}: not running ({reason})")?,
        ("needs_reconfirmation", _) => writeln!(out, "{head}: disabled, needs re-confirmation")?,
        (state, Some(reason)) => writeln!(out, "{head}: {state}: {reason}")?,
        (state, None) => writeln!(out, "{head}: {state}")?,
    }
    for issue in &r.issues {
        writeln!(out, "  - {issue}")?;
    }
    Ok(())
}

fn report_json(r: &PluginReport) -> Value {
    json!({
        "plugin": r.name,
        "package": r.package,
        "status": r.state,
        "reason": r.reason,
        "tools": r.tools,
        "skills": r.skills,
        "issues": r.issues,
    })
}
