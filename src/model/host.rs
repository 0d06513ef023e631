//! The machine a result came from: kernel, CPU, cores, memory.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct HostInfo {
    pub hostname: String,
    /// `uname -r` and `uname -v`.
    pub kernel: String,
    pub kernel_version: String,
    pub arch: String,
    pub cpu_model: String,
    pub cores: usize,
    pub memory_bytes: u64,
}

impl HostInfo {
    pub fn read() -> Self {
        let u = rustix::system::uname();
        let s = |c: &std::ffi::CStr| c.to_string_lossy().into_owned();
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
        HostInfo {
            hostname: s(u.nodename()),
            kernel: s(u.release()),
            kernel_version: s(u.version()),
            arch: s(u.machine()),
            cpu_model: cpuinfo
                .lines()
                .find_map(|l| {
                    l.strip_prefix("model name")
                        .and_then(|r| r.split_once(':'))
                        .map(|(_, v)| v.trim().to_string())
                })
                .unwrap_or_default(),
            cores: std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
            memory_bytes: meminfo
                .lines()
                .find_map(|l| l.strip_prefix("MemTotal:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
                .map(|kb| kb * 1024)
                .unwrap_or(0),
        }
    }
}
