//! `aci_vm_client`: one ACI call round from a controller process over **kernel Binder**, for
//! the kernel-Binder VM run (`compat-tests/binder-vm/`). Finds the provider through the host
//! registry given with `--registry` (discovery, E.5), binds `ai.aci.core.IACIService` through
//! the service manager and runs:
//!
//! 1. `getCapabilities` (the listing holds `device_info` and `countdown`);
//! 2. a sync `call` of `device_info`;
//! 3. a `callAsync` of `countdown` (2 s) with progress through `IACICallback.onProgress`;
//! 4. `kv_delete`, which needs `ai.aci.permission.CALL_DANGEROUS` this caller lacks: denied.
//!
//! Prints one `PASS …` / `FAIL …` line per step and `RESULT ok` / `RESULT fail`; exit status 0
//! only when every step passed.
#![forbid(unsafe_code)]

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use aci_adapter::controller::{BinderConnector, CallMode, Controller, ControllerConfig, NoWaker};
use aci_adapter::source::AciSource;
use capability_model::{CallError, CancelToken, CapabilitySource};
use permissions::RegistryResolver;
use serde_json::{Map, Value};

fn main() -> std::process::ExitCode {
    let mut args = std::env::args().skip(1);
    let registry = match (args.next().as_deref(), args.next()) {
        (Some("--registry"), Some(p)) => PathBuf::from(p),
        _ => {
            println!("RESULT fail usage: aci_vm_client --registry FILE");
            return std::process::ExitCode::FAILURE;
        }
    };
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            println!("RESULT fail runtime: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    if rt.block_on(run(registry)) {
        println!("RESULT ok");
        std::process::ExitCode::SUCCESS
    } else {
        println!("RESULT fail");
        std::process::ExitCode::FAILURE
    }
}

fn report(ok: bool, what: String) -> bool {
    println!("{} {what}", if ok { "PASS" } else { "FAIL" });
    ok
}

async fn run(registry: PathBuf) -> bool {
    let registry = match RegistryResolver::load(&registry) {
        Ok(r) => r,
        Err(e) => return report(false, format!("registry: {e}")),
    };
    let controller = Controller::new(
        Arc::new(BinderConnector::kernel()),
        Arc::new(NoWaker),
        ControllerConfig {
            enabled_by_default: true,
            ..Default::default()
        },
    );
    controller.discover_from(&registry);
    let Some(info) = controller.providers().into_iter().next() else {
        return report(false, "discovery found no ACI provider".into());
    };
    let mut all = true;

    let source = AciSource::new(controller.clone()).with_mode(CallMode::Sync);
    let listing = match source.list().await {
        Ok(l) => l,
        Err(e) => return report(false, format!("list: {e}")),
    };
    let find = |name: &str| {
        listing
            .capabilities
            .iter()
            .find(|c| c.id.name == name)
            .map(|c| c.id.clone())
    };
    let (Some(device), Some(countdown), Some(delete)) =
        (find("device_info"), find("countdown"), find("kv_delete"))
    else {
        return report(
            false,
            format!(
                "getCapabilities over kernel Binder: {} capabilities, issues {:?}",
                listing.capabilities.len(),
                listing.issues
            ),
        );
    };
    all &= report(
        true,
        format!(
            "getCapabilities over kernel Binder: {} capabilities of {}, protocol {:?}",
            listing.capabilities.len(),
            info.plugin,
            controller.protocol(&info.package)
        ),
    );

    match source.call(&device, Map::new(), CancelToken::new()).await {
        Ok(out) if !out.is_error => {
            let host = out
                .structured_content
                .as_ref()
                .and_then(|s| s.get("hostname"))
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned();
            all &= report(true, format!("sync call device_info: hostname={host:?}"));
        }
        other => all &= report(false, format!("sync call device_info: {other:?}")),
    }

    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let async_source = AciSource::new(controller.clone()).with_progress(Arc::new(move |n, _| {
        if let Ok(mut v) = sink.lock() {
            v.push(n);
        }
    }));
    let mut args = Map::new();
    args.insert("seconds".into(), Value::from(2));
    let outcome = async_source
        .call(&countdown, args, CancelToken::new())
        .await;
    let progress = seen.lock().map(|v| v.clone()).unwrap_or_default();
    let ok = matches!(&outcome, Ok(out) if !out.is_error)
        && progress.len() >= 2
        && progress.last() == Some(&100);
    all &= report(
        ok,
        format!(
            "async callAsync countdown: progress {progress:?}, outcome ok={}",
            outcome.is_ok()
        ),
    );

    let mut args = Map::new();
    args.insert("key".into(), Value::from("anything"));
    let outcome = source.call(&delete, args, CancelToken::new()).await;
    all &= report(
        outcome == Err(CallError::ProviderDenied),
        format!("permission denial: kv_delete without CALL_DANGEROUS -> {outcome:?}"),
    );
    let log = controller.call_log();
    all &= report(
        log.len() >= 3,
        format!(
            "call log: {:?}",
            log.iter()
                .map(|r| format!("{}={}", r.capability, r.status))
                .collect::<Vec<_>>()
        ),
    );
    all
}
