//! The sample's capabilities and their handlers.

use std::path::{Path, PathBuf};

use aci_adapter::bundle::BundleValue;
use aci_adapter::provider::{AciService, CapabilitySpec, Progress, ProviderError};
use aci_adapter::wire::{AciRequest, AciResponse, error_code};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde_json::{Map, Value};
use sha2::{Digest as _, Sha256};
use tokio::io::AsyncReadExt as _;

use crate::kv::{KvError, KvStore};

/// Permission a caller needs for `http_request` (layer 5), on top of `CALL_DANGEROUS`.
pub(crate) const PERMISSION_NETWORK: &str = "capbridge.sample.permission.NETWORK";
/// Callers `onCheckPermission` admits (ACI-23: the controller only).
pub(crate) const ALLOWED_CALLERS: [&str; 1] = [aci_adapter::controller::CONTROLLER_PACKAGE];
/// The protocol version (E.5).
pub(crate) const PROTOCOL_VERSION: &str = "aci-protocol-v1";
/// Longest countdown, seconds.
pub(crate) const COUNTDOWN_MAX_S: i32 = 600;
/// Bytes hashed between two progress reports.
const HASH_CHUNK: usize = 256 * 1024;

/// The sample provider.
pub(crate) struct SampleService {
    data: PathBuf,
    kv: KvStore,
    http: Option<http_capability::HttpExecutor>,
}

fn bad(message: &str) -> AciResponse {
    AciResponse::error(error_code::BAD_REQUEST, message)
}

fn kv_failure(e: KvError) -> AciResponse {
    match e {
        KvError::BadKey | KvError::TooLarge => bad(&e.to_string()),
        KvError::Full => AciResponse::error(error_code::SERVICE_UNAVAILABLE, e.to_string()),
        KvError::Io(_) | KvError::Corrupt => {
            AciResponse::error(error_code::INTERNAL_ERROR, e.to_string())
        }
    }
}

/// A JSON result value as a Bundle value: integers in range → int, other numbers → double,
/// `*_gz` base64 text → byte[] (E.7), objects and arrays → compact JSON text.
fn bundle_value(key: &str, v: &Value) -> BundleValue {
    match v {
        Value::Null => BundleValue::Null,
        Value::Bool(b) => BundleValue::Boolean(*b),
        Value::Number(n) => match n.as_i64().and_then(|i| i32::try_from(i).ok()) {
            Some(i) => BundleValue::Int(i),
            None => BundleValue::Double(n.as_f64().unwrap_or(0.0)),
        },
        Value::String(s) if key.ends_with("_gz") => match BASE64.decode(s) {
            Ok(b) => BundleValue::ByteArray(Some(b)),
            Err(_) => BundleValue::String(Some(s.clone())),
        },
        Value::String(s) => BundleValue::String(Some(s.clone())),
        other => BundleValue::String(Some(other.to_string())),
    }
}

fn file_name_ok(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 128
        && name != "."
        && name != ".."
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
}

impl SampleService {
    /// The service over `data` (created if needed; `files/` inside it is what `hash_file`
    /// reads).
    pub(crate) fn new(
        data: PathBuf,
        http: Option<http_capability::HttpExecutor>,
    ) -> std::io::Result<Self> {
        std::fs::create_dir_all(data.join("files"))?;
        Ok(Self {
            kv: KvStore::new(&data),
            data,
            http,
        })
    }

    fn files(&self) -> &Path {
        &self.data
    }

    fn device_info() -> AciResponse {
        let i = crate::sysinfo::read();
        let mut r = AciResponse::success()
            .put_string("hostname", i.hostname)
            .put_string("os", i.os)
            .put_string("kernel", i.kernel)
            .put_string("arch", i.arch)
            .put_double("uptime_seconds", i.uptime_seconds)
            .put_int("cpu_count", i32::try_from(i.cpu_count).unwrap_or(i32::MAX));
        if let Some(t) = i.memory_total_kib {
            r = r.put_double("memory_total_kib", t as f64);
        }
        if let Some(a) = i.memory_available_kib {
            r = r.put_double("memory_available_kib", a as f64);
        }
        r
    }

    async fn http(&self, request: &AciRequest) -> AciResponse {
        let mut args = Map::new();
        for (k, v) in request.params.iter() {
            if let BundleValue::String(Some(s)) = v {
                args.insert(k.to_owned(), Value::String(s.clone()));
            }
        }
        let Some(http) = &self.http else {
            return AciResponse::error(
                error_code::SERVICE_UNAVAILABLE,
                "the HTTP client is unavailable on this host",
            );
        };
        match http.execute(&args).await {
            Ok(result) => {
                let mut r = AciResponse::success();
                for (k, v) in result.to_aci_result() {
                    let value = bundle_value(&k, &v);
                    r = r.put_result(k, value);
                }
                r
            }
            Err(e) => AciResponse::error(e.aci_error_code(), e.to_string()),
        }
    }

    async fn hash_file(&self, request: &AciRequest, progress: &Progress) -> AciResponse {
        let Some(name) = request.get_string("name").filter(|n| file_name_ok(n)) else {
            return bad("name must be a plain file name inside the provider's files directory");
        };
        let path = self.files().join("files").join(name);
        let mut file = match tokio::fs::File::open(&path).await {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return bad("no such file in the provider's files directory");
            }
            Err(_) => {
                return AciResponse::error(
                    error_code::INTERNAL_ERROR,
                    "the file could not be read",
                );
            }
        };
        let total = file.metadata().await.map(|m| m.len()).unwrap_or(0);
        let mut hasher = Sha256::new();
        let mut buf = vec![0u8; HASH_CHUNK];
        let mut done: u64 = 0;
        progress.report(0, Some("hashing"));
        loop {
            let n = match file.read(&mut buf).await {
                Ok(0) => break,
                Ok(n) => n,
                Err(_) => {
                    return AciResponse::error(
                        error_code::INTERNAL_ERROR,
                        "the file could not be read",
                    );
                }
            };
            hasher.update(&buf[..n]);
            done += n as u64;
            if let Some(pct) = (done.min(total) * 100).checked_div(total) {
                progress.report((pct as i32).min(99), Some("hashing"));
            }
        }
        progress.report(100, Some("done"));
        let digest = hasher.finalize();
        let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
        AciResponse::success()
            .put_string("sha256", hex)
            .put_double("bytes", done as f64)
    }

    async fn countdown(request: &AciRequest, progress: &Progress) -> AciResponse {
        let Some(seconds) = request
            .get_int("seconds")
            .filter(|s| (1..=COUNTDOWN_MAX_S).contains(s))
        else {
            return bad("seconds must be an integer from 1 to 600");
        };
        for left in (1..=seconds).rev() {
            let pct = ((seconds - left) * 100) / seconds;
            progress.report(pct, Some(&format!("{left} s left")));
            tokio::time::sleep(std::time::Duration::from_secs(1)).await;
        }
        progress.report(100, Some("done"));
        AciResponse::success()
            .put_bool("finished", true)
            .put_int("seconds", seconds)
    }

    async fn dispatch(&self, request: &AciRequest, progress: &Progress) -> AciResponse {
        let key = || request.get_string("key").unwrap_or("");
        match request.capability.as_str() {
            "aci_protocol" => {
                AciResponse::success().put_string("protocol_version", PROTOCOL_VERSION)
            }
            "device_info" => Self::device_info(),
            "kv_get" => match self.kv.get(key()).await {
                Ok(Some(v)) => AciResponse::success()
                    .put_bool("found", true)
                    .put_string("value", v),
                Ok(None) => AciResponse::success().put_bool("found", false),
                Err(e) => kv_failure(e),
            },
            "kv_put" => {
                let value = request.get_string("value").unwrap_or("");
                match self.kv.put(key(), value).await {
                    Ok(replaced) => AciResponse::success().put_bool("replaced", replaced),
                    Err(e) => kv_failure(e),
                }
            }
            "kv_list" => match self
                .kv
                .list(request.get_string("prefix").unwrap_or(""))
                .await
            {
                Ok(keys) => AciResponse::success()
                    .put_int("count", i32::try_from(keys.len()).unwrap_or(i32::MAX))
                    .put_string("keys", Value::from(keys).to_string()),
                Err(e) => kv_failure(e),
            },
            "kv_delete" => match self.kv.delete(key()).await {
                Ok(existed) => AciResponse::success().put_bool("deleted", existed),
                Err(e) => kv_failure(e),
            },
            "hash_file" => self.hash_file(request, progress).await,
            "countdown" => Self::countdown(request, progress).await,
            "http_request" => self.http(request).await,
            other => AciResponse::error(
                error_code::CAPABILITY_NOT_FOUND,
                format!("unknown capability: {other}"),
            ),
        }
    }
}

/// The capability list (E.3) with honest flags.
pub(crate) fn specs() -> Vec<CapabilitySpec> {
    let bg = CapabilitySpec::FLAG_BACKGROUND;
    let no_ui = CapabilitySpec::FLAG_NO_UI_REQUIRED;
    let http_info = http_capability::capability::aci_info();
    let mut http = CapabilitySpec::create(
        http_capability::CAPABILITY_ID,
        http_capability::capability::DESCRIPTION,
    )
    .require_permission(PERMISSION_NETWORK);
    for p in &http_info.params {
        http = http.add_param(
            p.name.clone(),
            p.ty.as_str(),
            p.required,
            p.description.clone(),
        );
    }
    for r in &http_info.result {
        http = http.add_result(r.name.clone(), r.ty.as_str(), r.description.clone());
    }
    for f in &http_info.flags {
        http = http.add_flag(f.as_str());
    }
    vec![
        CapabilitySpec::create("aci_protocol", "Reports the ACI protocol version this provider speaks.")
            .add_result("protocol_version", "string", "Protocol version, aci-protocol-v1")
            .add_flag(bg)
            .add_flag(no_ui),
        CapabilitySpec::create(
            "device_info",
            "Read-only facts about the host this provider runs on: host name, OS, kernel, CPU count, uptime and memory.",
        )
        .add_result("hostname", "string", "Host name")
        .add_result("os", "string", "Operating system name")
        .add_result("kernel", "string", "Kernel release")
        .add_result("arch", "string", "CPU architecture")
        .add_result("uptime_seconds", "double", "Seconds since boot")
        .add_result("cpu_count", "int", "Logical CPUs available")
        .add_result("memory_total_kib", "double", "Total memory in KiB")
        .add_result("memory_available_kib", "double", "Available memory in KiB")
        .add_flag(bg)
        .add_flag(no_ui),
        CapabilitySpec::create("kv_get", "Reads the value stored under a key in the provider's key-value store.")
            .add_param("key", "string", true, "Key: letters, digits, '_', '.', '-'")
            .add_result("found", "boolean", "Whether the key exists")
            .add_result("value", "string", "The stored value, when found")
            .add_flag(bg)
            .add_flag(no_ui),
        CapabilitySpec::create("kv_put", "Stores a text value under a key, replacing any earlier value.")
            .add_param("key", "string", true, "Key: letters, digits, '_', '.', '-'")
            .add_param("value", "string", true, "Text value, at most 65536 bytes")
            .add_result("replaced", "boolean", "Whether an earlier value was replaced")
            .add_flag(bg)
            .add_flag(no_ui),
        CapabilitySpec::create("kv_list", "Lists the keys of the key-value store, optionally only those starting with a prefix.")
            .add_param("prefix", "string", false, "Only keys starting with this text")
            .add_result("keys", "json", "JSON array of keys, sorted")
            .add_result("count", "int", "Number of keys")
            .add_flag(bg)
            .add_flag(no_ui),
        CapabilitySpec::create("kv_delete", "Deletes a key and its value from the key-value store. This cannot be undone.")
            .add_param("key", "string", true, "Key to delete")
            .add_result("deleted", "boolean", "Whether the key existed")
            .add_flag(CapabilitySpec::FLAG_DANGEROUS_ACTION)
            .require_user_confirm(true),
        CapabilitySpec::create(
            "hash_file",
            "Computes the SHA-256 of a file in the provider's files directory, reporting progress while it reads.",
        )
        .add_param("name", "string", true, "File name inside the provider's files directory")
        .add_result("sha256", "string", "Hex SHA-256 digest")
        .add_result("bytes", "double", "Bytes hashed")
        .add_flag(bg)
        .add_flag(no_ui),
        CapabilitySpec::create("countdown", "Waits the given number of seconds, reporting progress every second.")
            .add_param("seconds", "int", true, "Seconds to wait, 1 to 600")
            .add_result("finished", "boolean", "Always true when it completes")
            .add_result("seconds", "int", "Seconds waited")
            .add_flag(bg)
            .add_flag(no_ui),
        http,
    ]
}

#[async_trait::async_trait]
impl AciService for SampleService {
    fn capabilities(&self) -> Result<Vec<CapabilitySpec>, ProviderError> {
        Ok(specs())
    }

    async fn on_call(&self, request: &AciRequest) -> Result<AciResponse, ProviderError> {
        Ok(self.dispatch(request, &Progress::discard()).await)
    }

    async fn on_call_async(
        &self,
        request: &AciRequest,
        progress: &Progress,
    ) -> Result<AciResponse, ProviderError> {
        Ok(self.dispatch(request, progress).await)
    }

    /// ACI-23: only the controller (resolved from the kernel UID) may call.
    fn on_check_permission(&self, _request: &AciRequest, caller_pkg: &str) -> bool {
        ALLOWED_CALLERS.contains(&caller_pkg)
    }
}
