//! Read-only host facts for `device_info`, read from `/proc` and `/etc/os-release`.

use std::fs;

/// What `device_info` reports.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SystemInfo {
    /// Host name.
    pub(crate) hostname: String,
    /// OS name (`PRETTY_NAME` of os-release, else `linux`).
    pub(crate) os: String,
    /// Kernel release.
    pub(crate) kernel: String,
    /// CPU architecture this binary was built for.
    pub(crate) arch: &'static str,
    /// Seconds since boot.
    pub(crate) uptime_seconds: f64,
    /// Logical CPUs available to this process.
    pub(crate) cpu_count: usize,
    /// Total memory, KiB.
    pub(crate) memory_total_kib: Option<u64>,
    /// Available memory, KiB.
    pub(crate) memory_available_kib: Option<u64>,
}

fn first_line(path: &str) -> Option<String> {
    let s = fs::read_to_string(path).ok()?;
    Some(s.lines().next().unwrap_or("").trim().to_owned())
}

fn os_name() -> String {
    let text = fs::read_to_string("/etc/os-release").unwrap_or_default();
    text.lines()
        .find_map(|l| l.strip_prefix("PRETTY_NAME="))
        .map(|v| v.trim_matches('"').to_owned())
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| std::env::consts::OS.to_owned())
}

fn meminfo(field: &str) -> Option<u64> {
    let text = fs::read_to_string("/proc/meminfo").ok()?;
    text.lines().find_map(|l| {
        let rest = l.strip_prefix(field)?.strip_prefix(':')?;
        rest.split_whitespace().next()?.parse().ok()
    })
}

/// Reads the facts now.
pub(crate) fn read() -> SystemInfo {
    SystemInfo {
        hostname: first_line("/proc/sys/kernel/hostname").unwrap_or_default(),
        os: os_name(),
        kernel: first_line("/proc/sys/kernel/osrelease").unwrap_or_default(),
        arch: std::env::consts::ARCH,
        uptime_seconds: first_line("/proc/uptime")
            .and_then(|l| l.split_whitespace().next().and_then(|v| v.parse().ok()))
            .unwrap_or(0.0),
        cpu_count: std::thread::available_parallelism().map_or(1, |n| n.get()),
        memory_total_kib: meminfo("MemTotal"),
        memory_available_kib: meminfo("MemAvailable"),
    }
}
